# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the rv_soak scripts (soak.sh: one VM; soak-2vm.sh: two VMs) share.
# Source it after tools/testing/vm/lib.sh, with $top set. It reads the
# RV_SOAK_* settings into ko, soak, secs, flap, mode and procs, makes tmp
# (removed at exit, when every netdev of RV_NETDEVS is set up again with
# no qdisc), sets t0 and defines:
#   elapsed                  "N s" since it was sourced
#   val KEY                  the value of the summary's "KEY: value" line
#   rdma_objects             the per-device object counts of `rdma res show`
#   soak_run ARGS...         run rv_soak with the settings and ARGS (summary
#                            in $tmp/out), show its output; sets soak_rc
#   soak_checks LABEL NAME HELD FLAPS
#                            the results: "NAME: every invariant held HELD",
#                            no completion lost and no byte corrupted, the
#                            link flaps ("FLAPS", e.g. "link flaps")
#                            recovered from; LABEL starts each test name
#   links_up                 the netdevs of RV_NETDEVS up with no qdisc,
#                            every rxe node's port ACTIVE (as the bed began)
#   soak_objects_gone LABEL BEFORE
#                            no rv object left in `rdma res show` (BEFORE:
#                            rdma_objects before rv was loaded)

# shellcheck disable=SC2034 # used by the scripts that source it
ko=${RV_KO:?vm-run sets RV_KO: the rv.ko of the kernel it boots}
soak=${RV_SOAK:-${RV_BUILD_DIR:-$top/build}/userspace/tests/vm/soak/rv_soak}
secs=${RV_SOAK_SECONDS:-30}
flap=${RV_SOAK_FLAP:-8}
mode=${RV_SOAK_FLAP_MODE:-link}
procs=${RV_SOAK_PROCS:-16}
tmp=$(mktemp -d)

# shellcheck disable=SC2317  # called through the trap
soak_cleanup() {
	local n
	for n in ${RV_NETDEVS:-}; do
		tc qdisc del dev "$n" root 2>/dev/null
		ip link set "$n" up 2>/dev/null
	done
	rm -rf "$tmp"
}
trap soak_cleanup EXIT

t0=$SECONDS
elapsed() { echo "$((SECONDS - t0)) s"; }

val() {
	sed -n "s/^$1: //p" "$tmp/out" | head -n1
}

# ("rxe0: pd 1 qp 1 cm_id 0 mr 0 ctx 0 srq 0", from "0: rxe0: pd 1 cq 2
# ..."), then each device's CQ users ("rxe0 cq users 4"): CQs are counted
# by the queues on them, as ib_core's pool keeps the CQs it made for rv's
# QPs, which give their room back when they go.
rdma_objects() {
	rdma res show 2>/dev/null | sed -E 's/^[0-9]*: //; s/ cq [0-9]+//'
	rdma res show cq 2>/dev/null | awk '
		{ for (i = 1; i < NF; i++) if ($i == "users") u[$2] += $(i + 1) }
		END { for (d in u) if (u[d]) print d, "cq users", u[d] }' | sort
}

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

# shellcheck disable=SC2120  # soak.sh passes no arguments
soak_run() {
	soak_rc=0
	# shellcheck disable=SC2086  # RV_SOAK_ARGS is a list of options
	timeout -k 10 $((${secs%.*} + 900)) "$soak" --seconds "$secs" \
		--procs-per-node "$procs" --flap-interval "$flap" \
		--flap-mode "$mode" "$@" ${RV_SOAK_ARGS:-} \
		>"$tmp/out" 2>"$tmp/err" || soak_rc=$?
	tap_diag "$(grep -v '^failure: ' "$tmp/out")"
	tap_diag "$(tail -n 100 "$tmp/err")"
}

soak_checks() {
	local label=$1 name=$2 held=$3 what=$4 lost corrupt flaps rec

	if [ "$soak_rc" = 0 ] && grep -q '^result: ok' "$tmp/out"; then
		tap_ok "$name: every invariant held$held ($(elapsed))"
	else
		tap_not_ok "$name: every invariant held$held" "rv_soak exit $soak_rc"
		tap_diag "$(grep '^failure: ' "$tmp/out")"
	fi
	lost=$(val lost_completions) corrupt=$(val corrupt_bytes)
	if [ "${lost:-x}" = 0 ] && [ "${corrupt:-x}" = 0 ] &&
	   [ "$(val messages_sent)" != 0 ]; then
		tap_ok "$label: $(val messages_sent) messages, $(val bytes_verified) bytes verified: no completion lost, no byte corrupted"
	else
		tap_not_ok "$label: no completion lost, no byte corrupted" \
			"lost_completions ${lost:-?}, corrupt_bytes ${corrupt:-?}"
	fi
	if [ "$flap" = 0 ]; then
		tap_skip "$label: link flaps recovered from" "RV_SOAK_FLAP=0"
		return
	fi
	flaps=$(val link_flaps) rec=$(val recoveries)
	if [ "${flaps:-0}" -gt 0 ] && [ "${rec%% *}" -gt 0 ] 2>/dev/null &&
	   ! grep -qE '^failure: .*(flap|for good|recovered)' "$tmp/out"; then
		tap_ok "$label: $flaps $what, $rec connection recoveries, traffic went on"
	else
		tap_not_ok "$label: link flaps recovered from" \
			"link_flaps ${flaps:-?}, recoveries ${rec:-?}"
	fi
}

# The processes are gone: their QPs, CQs, MRs and PDs go (QPs drain
# first, so wait a little).
soak_objects_gone() {
	local label=$1 before=$2 after='' mine i

	for ((i = 0; i < 60; i++)); do
		after=$(rdma_objects)
		[ "$after" = "$before" ] && break
		sleep 0.5
	done
	mine=$(for t in pd cq qp mr; do rdma res show "$t" 2>&1; done | grep '\[rv\]')
	if [ "$after" = "$before" ] && [ -z "$mine" ]; then
		tap_ok "$label: no rv object left in rdma res show after the processes exit"
	else
		tap_not_ok "$label: no rv object left in rdma res show after the processes exit" \
			"before: $before
after: $after
$mine"
	fi
}
