#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The connection tests that change the test bed's nodes, from
# rv_vm_tests (which runs them only when RV_CONN_LINK_TESTS=1), one TAP
# point each. Runs as root inside a VM with two rxe nodes (vm-run --rxe 2);
# each case leaves the bed as it found it and proves it, but a failure can
# leave it broken, so make check gives each case a VM of its own.
#
#   conn-fault.sh [CASE...]
#
# CASE (default: DeviceRemovedMidTraffic DriverUnloadedMidTraffic):
#   DeviceRemovedMidTraffic   node 1's RDMA device is removed with writes
#                             in flight, then added again and used by a new
#                             job
#   DriverUnloadedMidTraffic  rmmod rdma_rxe mid-traffic, then the driver
#                             and the devices come back and a new job
#                             uses them
#   LinkDownUpMidTransfer     node 1's link goes down for 5 s and up in
#                             the middle of a transfer. Not in make check:
#                             with two rxe devices in one kernel, soft
#                             RoCE of 6.1 can lose its management QP over
#                             the flap for good (tools/testing/README.md,
#                             "The test beds");
#                             conn-2vm-fault.sh link-flap tests it in two
#                             VMs.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../vm/lib.sh
. "$top/tools/testing/vm/lib.sh"

tests=${RV_VM_TESTS:-${RV_BUILD_DIR:-$top/build}/userspace/tests/vm/rv_vm_tests}
[ "$#" -gt 0 ] || set -- DeviceRemovedMidTraffic DriverUnloadedMidTraffic

declare -A what=(
	[DeviceRemovedMidTraffic]="$(rv_node 1) removed mid-traffic: no hang, every write completed once, EIO and ENODEV after, device re-added and used by a new job"
	[DriverUnloadedMidTraffic]="rmmod rdma_rxe mid-traffic: no hang, every write completed once, EIO and ENODEV after, driver and devices back and used by a new job"
	[LinkDownUpMidTransfer]="link $(rv_netdev 1) down 5 s and up mid-transfer: recovered, every write completed once, data verified"
)

[ -x "$tests" ] || tap_bail "$tests not built (make userspace)"
modprobe -a ib_uverbs ib_cm || tap_bail "modprobe ib_uverbs ib_cm"
# shellcheck disable=SC2086 # a list of module parameters
insmod "${RV_KO:?vm-run sets RV_KO}" ${RV_INSMOD_ARGS:-} || tap_bail "insmod $RV_KO"

for c in "$@"; do
	[ -n "${what[$c]:-}" ] || tap_bail "unknown case $c"
	tap_step "ConnFault.$c (rv_vm_tests)"
	out=$(RV_CONN_LINK_TESTS=1 "$tests" --gtest_filter="ConnFault.$c" 2>&1)
	rc=$?
	tap_diag "$(grep -v '^1\.\.' <<<"$out" | sed 's/^# \{0,1\}//')"
	if [ "$rc" = 0 ] && grep -q "^ok 1 - ConnFault.$c\$" <<<"$out"; then
		tap_ok "${what[$c]}"
	elif [ "$rc" = 0 ] && grep -q "^ok 1 - ConnFault.$c # SKIP" <<<"$out"; then
		tap_skip "${what[$c]}" "$(sed -n "s/^ok 1 - ConnFault.$c # SKIP //p" <<<"$out")"
	else
		tap_not_ok "${what[$c]}" "rv_vm_tests exit $rc"
	fi
done

tap_check "rmmod rv once every process is gone" rv_unload
tap_done
