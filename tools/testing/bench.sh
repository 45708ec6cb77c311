#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`, inside the test VM: load rv and run rvbench with the given
# arguments (default: `reg`). Prints numbers; asserts nothing about them.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}

insmod "${RV_KO:-$top/drivers/infiniband/ulp/rv/rv.ko}"
trap 'rmmod rv' EXIT
"$build/userspace/tools/rvbench" "${@:-reg}"
