#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Module tier: boot the test VM with two rxe nodes and run every test that
# needs rv.ko (tools/testing/selftests/rv/vm-suite.sh). TAP output.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
cd "$top"

make -s modules >/dev/null
exec tools/testing/vm/vm-run --rxe 2 --timeout 900 --out "$build/vm/suite" \
	-- tools/testing/selftests/rv/vm-suite.sh
