#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`, inside the test VM: load rv next to two soft-RoCE devices
# and ask /dev/rv what it is.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}

echo "== RDMA devices"
rdma link show
echo "== loading rv"
insmod "${RV_KO:-$top/drivers/infiniband/ulp/rv/rv.ko}"
ls -l /dev/rv
echo "== rvinfo"
"$build/userspace/tools/rvinfo"
"$build/userspace/tools/rvinfo" --json
rmmod rv
