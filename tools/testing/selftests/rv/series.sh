#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The ioctl tests (ioctl.sh) against rv in the form make upstream proposes:
# build/upstream/rv.ko, which tools/upstream/check-series.sh builds from
# the series for the newest kernel, with none of the out-of-tree module's
# older uAPI forms (docs/uapi-upstream.md). RV_MODULE_FORM=upstream tells
# the tests which answers to expect (userspace/tests/vm/vm_env.hpp).
# Runs as root inside the test VM of that kernel; on another kernel the
# module cannot load, and the group says so and skips.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
ko=${RV_SERIES_KO:-${RV_BUILD_DIR:-$top/build}/upstream/rv.ko}
# shellcheck source-path=SCRIPTDIR source=../../vm/lib.sh
. "$top/tools/testing/vm/lib.sh"

if [ ! -f "$ko" ]; then
	echo "Bail out! no $ko: run make upstream, then tools/upstream/check-series.sh --last"
	exit 1
fi
ko_skip_other_kernel "$ko" "$ko is"
# The tracepoint tests need a bed of one vCPU (check-vm.sh).
RV_KO=$ko RV_MODULE_FORM=upstream \
	GTEST_FILTER=${GTEST_FILTER:--Observability.Trace*} exec "$here/ioctl.sh"
