#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The soak of rv (userspace/tests/vm/soak/rv_soak) between two VMs
# (vm-run --two-vm; the same script runs in both, RV_VM_ROLE a or b), as
# root: RV_SOAK_PROCS (16) processes per VM, one job, each sending
# verified writes of mixed sizes to random processes of the other VM and
# receiving them, with receive and source buffers withdrawn and replaced
# at random, while VM b takes its link down and up every RV_SOAK_FLAP (8)
# seconds of traffic (RV_SOAK_FLAP_MODE=drop: the link stays up and VM b
# drops every packet instead), for RV_SOAK_SECONDS (30). Each VM runs one
# rv_soak --two-vm controller; they talk over TCP (VM a listens on
# RV_SOAK_PORT, 18730; VM b connects to RV_PEER_IP), across the link
# that goes down (the drops spare it). TAP output, on each VM:
#   - rv_soak ran to the end and every invariant held, over both VMs'
#     numbers (the summary as diagnostics)
#   - no completion lost, no byte corrupted
#   - the link flaps happened and were recovered from
#   - VM a: its rxe's rcvd_pkts rose by at least the pages it received
#     (the writes crossed from VM b)
#   - the link is up and the port ACTIVE again
#   - no rv object left in `rdma res show` once the processes are gone
#   - rmmod rv
#
#   RV_KO          the module (vm-run sets it: the rv.ko of its kernel)
#   RV_SOAK        the program (default $RV_BUILD_DIR/userspace/tests/vm/soak/rv_soak)
#   RV_SOAK_ARGS   more rv_soak options, the same on both VMs (e.g. --seed 7)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../vm/lib.sh
. "$top/tools/testing/vm/lib.sh"

port=${RV_SOAK_PORT:-18730}
role=${RV_VM_ROLE:-}
# shellcheck source-path=SCRIPTDIR source=soak-lib.sh
. "$here/soak-lib.sh"

case "$role" in
a | b) ;;
*) tap_bail "needs two VMs (vm-run --two-vm sets RV_VM_ROLE)" ;;
esac
d0=$(rv_node 0) || tap_bail "no rxe node (RV_NODES)"
netdev=$(rv_netdev 0) || tap_bail "no netdev (RV_NETDEVS)"
[ -n "${RV_PEER_IP:-}" ] || tap_bail "no RV_PEER_IP (vm-run --two-vm)"
[ -x "$soak" ] || tap_bail "$soak not built (cmake --build ... --target rv_soak)"
modprobe -a ib_uverbs ib_cm 2>/dev/null
# (drop: netem for all but the controllers' TCP, which prio and u32 spare)
[ "$mode" != drop ] || modprobe -a sch_netem sch_prio cls_u32 2>/dev/null
insmod "$ko" || tap_bail "insmod $ko"
before=$(rdma_objects)
rx0=$(rxe_rcvd_pkts "$d0")

if [ "$mode" = drop ]; then
	what="VM b dropping every packet for seconds every $flap s"
else
	what="VM b's link flapping every $flap s"
fi
name="soak, two VMs ($role): $procs processes per VM, $secs s, $what"
tap_step "$name"
soak_run --two-vm "$role" --peer-ip "$RV_PEER_IP" --control-port "$port"
rx1=$(rxe_rcvd_pkts "$d0")
soak_checks "soak ($role)" "$name" ", both VMs' numbers" "link flaps of VM b"

# VM a's device received VM b's writes: at least a packet per page that
# its processes verified ("rcvd_pkts_delta: a:rxe0 N (>= P pages received)").
if [ "$role" = a ]; then
	pages=$(sed -n 's/^rcvd_pkts_delta: a:[^ ]* [0-9]* (>= \([0-9]*\) pages.*/\1/p' "$tmp/out")
	drx=$((rx1 - rx0))
	if [ -n "$pages" ] && [ "$pages" -gt 0 ] && [ "$drx" -ge "$pages" ]; then
		tap_ok "soak (a): $d0 rcvd_pkts rose by $drx (>= the $pages pages received from VM b)"
	else
		tap_not_ok "soak (a): $d0 rcvd_pkts rose by $drx (>= the ${pages:-?} pages received from VM b)"
	fi
fi

tap_check "soak ($role): $netdev up and $d0 ACTIVE after the soak" links_up

soak_objects_gone "soak ($role)" "$before"

tap_check "soak ($role): rmmod rv after the soak" rv_unload
tap_diag "soak-2vm.sh ($role): $(elapsed)"
tap_done
