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
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../vm/lib.sh
. "$top/tools/testing/vm/lib.sh"

ko=${RV_KO:?vm-run sets RV_KO: the rv.ko of the kernel it boots}
soak=${RV_SOAK:-${RV_BUILD_DIR:-$top/build}/userspace/tests/vm/soak/rv_soak}
secs=${RV_SOAK_SECONDS:-30}
flap=${RV_SOAK_FLAP:-8}
mode=${RV_SOAK_FLAP_MODE:-link}
procs=${RV_SOAK_PROCS:-16}
tmp=$(mktemp -d)

# shellcheck disable=SC2317  # called through the trap
cleanup() {
	local n
	for n in ${RV_NETDEVS:-}; do
		tc qdisc del dev "$n" root 2>/dev/null
		ip link set "$n" up 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

t0=$SECONDS
elapsed() { echo "$((SECONDS - t0)) s"; }

# val KEY: the value of the "KEY: value" line of the summary.
val() {
	sed -n "s/^$1: //p" "$tmp/out" | head -n1
}

# rdma_objects: the per-device object counts of `rdma res show`
# ("0: rxe0: pd 1 cq 2 qp 1 cm_id 0 mr 0 ctx 0 srq 0").
rdma_objects() {
	rdma res show 2>/dev/null | sed 's/^[0-9]*: //'
}

# The links as rxe-setup.sh left them: up, ports ACTIVE.
links_up() {
	local i n ok=0
	for n in ${RV_NETDEVS:-}; do
		tc qdisc del dev "$n" root 2>/dev/null
		ip link set "$n" up || ok=1
	done
	for ((i = 0; ; i++)); do
		n=$(rv_node "$i") || break
		rxe_wait_active "$n" 30 || ok=1
	done
	return "$ok"
}

rv_node 1 >/dev/null || tap_bail "needs two rxe nodes (vm-run --rxe 2)"
[ -x "$soak" ] || tap_bail "$soak not built (cmake --build ... --target rv_soak)"
modprobe -a ib_uverbs ib_cm 2>/dev/null
# (loaded on demand, the first flap would wait seconds for modprobe)
[ "$mode" != drop ] || modprobe sch_netem 2>/dev/null
insmod "$ko" || tap_bail "insmod $ko"
before=$(rdma_objects)

if [ "$mode" = drop ]; then
	name="soak: $procs processes per node, $secs s, all packets dropped for seconds every $flap s"
else
	name="soak: $procs processes per node, $secs s, link $(rv_netdev 1) flapping every $flap s"
fi
tap_step "$name"
# shellcheck disable=SC2086  # RV_SOAK_ARGS is a list of options
timeout -k 10 $((${secs%.*} + 600)) "$soak" --seconds "$secs" --procs-per-node "$procs" \
	--flap-interval "$flap" --flap-mode "$mode" ${RV_SOAK_ARGS:-} >"$tmp/out" 2>"$tmp/err"
rc=$?
tap_diag "$(grep -v '^failure: ' "$tmp/out")"
tap_diag "$(tail -n 100 "$tmp/err")"
if [ "$rc" = 0 ] && grep -q '^result: ok' "$tmp/out"; then
	tap_ok "$name: every invariant held ($(elapsed))"
else
	tap_not_ok "$name: every invariant held" "rv_soak exit $rc"
	tap_diag "$(grep '^failure: ' "$tmp/out")"
fi
lost=$(val lost_completions) corrupt=$(val corrupt_bytes)
if [ "${lost:-x}" = 0 ] && [ "${corrupt:-x}" = 0 ] && [ "$(val messages_sent)" != 0 ]; then
	tap_ok "soak: $(val messages_sent) messages, $(val bytes_verified) bytes verified: no completion lost, no byte corrupted"
else
	tap_not_ok "soak: no completion lost, no byte corrupted" \
		"lost_completions ${lost:-?}, corrupt_bytes ${corrupt:-?}"
fi
if [ "$flap" = 0 ]; then
	tap_skip "soak: link flaps recovered from" "RV_SOAK_FLAP=0"
else
	flaps=$(val link_flaps) rec=$(val recoveries)
	if [ "${flaps:-0}" -gt 0 ] && [ "${rec%% *}" -gt 0 ] 2>/dev/null &&
	   ! grep -qE '^failure: .*(flap|for good|recovered)' "$tmp/out"; then
		tap_ok "soak: $flaps link flaps, $rec connection recoveries, traffic went on"
	else
		tap_not_ok "soak: link flaps recovered from" "link_flaps ${flaps:-?}, recoveries ${rec:-?}"
	fi
fi

tap_check "links up and ports ACTIVE after the soak" links_up

# The processes are gone: their QPs, CQs, MRs and PDs go (QPs drain
# first, so wait a little).
after=
for ((i = 0; i < 60; i++)); do
	after=$(rdma_objects)
	[ "$after" = "$before" ] && break
	sleep 0.5
done
if [ "$after" = "$before" ] && ! rdma res show qp 2>/dev/null | grep -q '\[rv\]'; then
	tap_ok "no rv object left in rdma res show after the processes exit"
else
	tap_not_ok "no rv object left in rdma res show after the processes exit" \
		"before: $before
after: $after
$(rdma res show qp 2>&1 | grep '\[rv\]')"
fi

tap_check "rmmod rv after the soak" rv_unload
tap_diag "soak.sh: $(elapsed)"
tap_done
