#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A bounded soak of rv (userspace/tests/vm/soak/rv_soak) between the two
# rxe nodes of the test VM (vm-run --rxe 2), as root: RV_SOAK_PROCS (16)
# processes per node, one job per node, each sending verified writes of
# mixed sizes to random processes of the other node and receiving them,
# with receive and source buffers withdrawn and replaced at random, while
# the link of node 1 goes down and up every RV_SOAK_FLAP (8) seconds of
# traffic (RV_SOAK_FLAP_MODE=drop: the links stay up and every packet is
# dropped instead), for RV_SOAK_SECONDS (30). TAP output:
#   - rv_soak ran to the end and every invariant held (the summary as
#     diagnostics): no completion lost, no byte corrupted, the link flaps
#     happened and were recovered from
#   - the links are up and the ports ACTIVE again
#   - no rv object left in `rdma res show` once the processes are gone
#   - rmmod rv
#
#   RV_KO          the module (vm-run sets it: the rv.ko of its kernel)
#   RV_SOAK        the program (default $RV_BUILD_DIR/userspace/tests/vm/soak/rv_soak)
#   RV_SOAK_ARGS   more rv_soak options (e.g. --seed 7)
#   RV_SOAK_THP=1  transparent huge pages "always" and khugepaged scanning
#                  without pause, buffers starting in small pages
#                  (rv_soak --small-pages): its collapses race with the
#                  soak's registrations, and every MR held across one
#                  must keep working (the VM keeps these settings)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../vm/lib.sh
. "$top/tools/testing/vm/lib.sh"

# shellcheck source-path=SCRIPTDIR source=soak-lib.sh
. "$here/soak-lib.sh"

rv_node 1 >/dev/null || tap_bail "needs two rxe nodes (vm-run --rxe 2)"
[ -x "$soak" ] || tap_bail "$soak not built (cmake --build ... --target rv_soak)"
modprobe -a ib_uverbs ib_cm 2>/dev/null
# (loaded on demand, the first flap would wait seconds for modprobe)
[ "$mode" != drop ] || modprobe sch_netem 2>/dev/null
insmod "$ko" || tap_bail "insmod $ko"
before=$(rdma_objects)

thp=/sys/kernel/mm/transparent_hugepage
if [ "${RV_SOAK_THP:-0}" = 1 ]; then
	[ -w "$thp/enabled" ] || tap_bail "RV_SOAK_THP=1: no $thp"
	echo always >"$thp/enabled"
	echo 0 >"$thp/khugepaged/scan_sleep_millisecs"
	echo 0 >"$thp/khugepaged/alloc_sleep_millisecs"
	echo 4096 >"$thp/khugepaged/pages_to_scan"
	thp_scans=$(cat "$thp/khugepaged/full_scans")
	thp_collapsed=$(cat "$thp/khugepaged/pages_collapsed")
fi

if [ "$flap" = 0 ]; then
	name="soak: $procs processes per node, $secs s, no link flaps"
elif [ "$mode" = drop ]; then
	name="soak: $procs processes per node, $secs s, all packets dropped for seconds every $flap s"
else
	name="soak: $procs processes per node, $secs s, link $(rv_netdev 1) flapping every $flap s"
fi
[ "${RV_SOAK_THP:-0}" != 1 ] || name+=", THP always, khugepaged without pause"
tap_step "$name"
if [ "${RV_SOAK_THP:-0}" = 1 ]; then
	soak_run --small-pages
else
	soak_run
fi
[ "${RV_SOAK_THP:-0}" != 1 ] ||
	tap_diag "khugepaged: $(($(cat "$thp/khugepaged/full_scans") - thp_scans)) full scans, $(($(cat "$thp/khugepaged/pages_collapsed") - thp_collapsed)) huge pages collapsed" 
soak_checks soak "$name" "" "link flaps"
tap_check "links up and ports ACTIVE after the soak" links_up
soak_objects_gone soak "$before"
tap_check "rmmod rv after the soak" rv_unload
tap_diag "soak.sh: $(elapsed)"
tap_done
