#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Every rv test that needs the module, run inside the test VM by
# tools/testing/check-vm.sh: vm-run --rxe 2 -- vm-suite.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)

modprobe crc32_generic
modprobe rdma_rxe
modprobe ib_uverbs
# rv needs the IB CM; insmod does not load dependencies
modprobe ib_cm

# The soak's link losses: packets dropped with the links up. Real link
# flaps (ip link down/up) can leave soft RoCE's management QP dead for good
# (see userspace/tests/vm/soak/README.md); `make soak` runs them on demand.
export RV_SOAK_FLAP_MODE=${RV_SOAK_FLAP_MODE:-drop}

exec "$top/tools/testing/vm/tap-run" \
	"$here/module_load.sh" \
	"$here/ioctl.sh" \
	"$here/conn.sh" \
	"$here/soak.sh"
