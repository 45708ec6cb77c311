#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In-VM part of selftest.sh (TAP output).  Usage, inside vm-run:
#   selftest-guest.sh rxe2   (vm-run --rxe 2)   ib_write_bw rxe1 -> rxe0
#   selftest-guest.sh twovm  (vm-run --two-vm)  ib_write_bw VM b -> VM a
# Without an argument the mode follows RV_VM_ROLE (set: twovm, else rxe2),
# so that tap-run can run it.
#
# The assertions use the rxe hw counters: the receiving (peer) device's
# rcvd_pkts must rise by at least the number of data packets, and the
# sender's own rcvd_pkts must rise by less than that (it only gets ACKs).  If
# traffic were looped back inside the sending node, it would be the other way
# round.

set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

ITERS=${SELFTEST_ITERS:-50}
SIZE=65536
MTU=1024
DATA_PKTS=$((ITERS * SIZE / MTU))
PORT=18515
LOGDIR=/tmp/selftest-guest
mkdir -p "$LOGDIR"

perftest_args() {
	# $1 = device, $2 = GID index of its RoCE v2 IPv4 GID.  -u 17: ~0.5 s
	# ACK timeout (default ~65 ms), as TCG on a loaded host is slow enough
	# to exhaust the retries otherwise.
	echo "-d $1 -x $2 -F -n $ITERS -s $SIZE -m $MTU -p $PORT -u 17"
}

# run_client LOG DEV GIDX SERVER_IP: retries while the server is not up yet.
run_client() {
	local log=$1 dev=$2 gidx=$3 ip=$4 i
	for ((i = 0; i < 60; i++)); do
		# shellcheck disable=SC2046
		if timeout 60 ib_write_bw $(perftest_args "$dev" "$gidx") "$ip" >"$log" 2>&1; then
			return 0
		fi
		grep -qiE "couldn't connect|connection refused|unable to" "$log" || return 1
		sleep 0.5
	done
	return 1
}

show_log() {
	tap_diag "--- $1"
	tap_diag "$(tail -n 25 "$1")"
}

check_counters() {
	# check_counters ROLE_TEXT PEER_DELTA SELF_DELTA
	if [ "$2" -ge "$DATA_PKTS" ]; then
		tap_ok "$1: peer rcvd_pkts rose by $2 (>= $DATA_PKTS data packets)"
	else
		tap_not_ok "$1: peer rcvd_pkts rose by $2 (< $DATA_PKTS data packets)"
	fi
	if [ "$3" -lt "$DATA_PKTS" ]; then
		tap_ok "$1: sender rcvd_pkts rose by only $3 (no loopback)"
	else
		tap_not_ok "$1: sender rcvd_pkts rose by $3: traffic looped back to the sender"
	fi
}

mode_rxe2() {
	local a b ia ib ga gb ra0 rb0 ra1 rb1 spid rc=0 src=0
	tap_plan 5
	read -r a b _ <<<"${RV_NODES:-}"
	read -r ia ib _ <<<"${RV_NODE_IPS:-}"
	if [ -n "${a:-}" ] && [ -n "${b:-}" ]; then
		tap_ok "two rxe nodes: $RV_NODES ($RV_NETDEVS, $RV_NODE_IPS)"
	else
		tap_not_ok "two rxe nodes" "RV_NODES='${RV_NODES:-}'"
		exit 1
	fi
	if [ "$(rxe_port_state "$a")" = ACTIVE ] && [ "$(rxe_port_state "$b")" = ACTIVE ]; then
		tap_ok "$a and $b ports ACTIVE"
	else
		tap_not_ok "$a and $b ports ACTIVE" "$a: $(rxe_port_state "$a"), $b: $(rxe_port_state "$b")"
	fi
	ga=$(rxe_gid_index "$a" "$ia")
	gb=$(rxe_gid_index "$b" "$ib")
	ra0=$(rxe_rcvd_pkts "$a")
	rb0=$(rxe_rcvd_pkts "$b")

	# Server on node A (bound to A's IP for the TCP exchange), client on
	# node B connecting to A's IP.
	# shellcheck disable=SC2046
	timeout 90 ib_write_bw $(perftest_args "$a" "$ga") --source_ip "$ia" \
		>"$LOGDIR/server.log" 2>&1 &
	spid=$!
	run_client "$LOGDIR/client.log" "$b" "$gb" "$ia" || rc=$?
	wait "$spid" || src=$?
	ra1=$(rxe_rcvd_pkts "$a")
	rb1=$(rxe_rcvd_pkts "$b")
	if [ "$rc" = 0 ] && [ "$src" = 0 ]; then
		tap_ok "ib_write_bw $b -> $a ($ITERS x $SIZE bytes, RC, no rdma_cm)"
		tap_diag "$(grep -A1 'BW average' "$LOGDIR/client.log" | tail -n1)"
	else
		tap_not_ok "ib_write_bw $b -> $a (client $rc, server $src)"
		show_log "$LOGDIR/server.log"
		show_log "$LOGDIR/client.log"
	fi
	tap_diag "rcvd_pkts $a: $ra0 -> $ra1, $b: $rb0 -> $rb1"
	check_counters "$b -> $a" "$((ra1 - ra0))" "$((rb1 - rb0))"
}

mode_twovm() {
	local dev ip peer gidx r0 r1 rc=0
	dev=${RV_NODES:-}
	ip=${RV_LOCAL_IP:-}
	peer=${RV_PEER_IP:-}
	tap_plan 3
	if [ -n "$dev" ] && [ "$(rxe_port_state "$dev")" = ACTIVE ]; then
		tap_ok "role ${RV_VM_ROLE:-?}: $dev ACTIVE on $RV_NETDEVS ($ip, peer $peer)"
	else
		tap_not_ok "role ${RV_VM_ROLE:-?}: rxe ACTIVE" "RV_NODES='$dev'"
		exit 1
	fi
	gidx=$(rxe_gid_index "$dev" "$ip")
	r0=$(rxe_rcvd_pkts "$dev")
	case "${RV_VM_ROLE:-}" in
	a)
		# shellcheck disable=SC2046
		timeout 90 ib_write_bw $(perftest_args "$dev" "$gidx") --source_ip "$ip" \
			>"$LOGDIR/server.log" 2>&1 || rc=$?
		r1=$(rxe_rcvd_pkts "$dev")
		if [ "$rc" = 0 ]; then
			tap_ok "ib_write_bw server on $dev ($ITERS x $SIZE bytes)"
		else
			tap_not_ok "ib_write_bw server on $dev (status $rc)"
			show_log "$LOGDIR/server.log"
		fi
		tap_diag "rcvd_pkts $dev: $r0 -> $r1"
		if [ "$((r1 - r0))" -ge "$DATA_PKTS" ]; then
			tap_ok "receiver (peer) rcvd_pkts rose by $((r1 - r0)) (>= $DATA_PKTS)"
		else
			tap_not_ok "receiver (peer) rcvd_pkts rose by $((r1 - r0)) (< $DATA_PKTS)"
		fi
		;;
	b)
		run_client "$LOGDIR/client.log" "$dev" "$gidx" "$peer" || rc=$?
		r1=$(rxe_rcvd_pkts "$dev")
		if [ "$rc" = 0 ]; then
			tap_ok "ib_write_bw client $dev -> $peer ($ITERS x $SIZE bytes)"
			tap_diag "$(grep -A1 'BW average' "$LOGDIR/client.log" | tail -n1)"
		else
			tap_not_ok "ib_write_bw client $dev -> $peer (status $rc)"
			show_log "$LOGDIR/client.log"
		fi
		tap_diag "rcvd_pkts $dev: $r0 -> $r1"
		if [ "$((r1 - r0))" -lt "$DATA_PKTS" ]; then
			tap_ok "sender rcvd_pkts rose by only $((r1 - r0)) (no loopback)"
		else
			tap_not_ok "sender rcvd_pkts rose by $((r1 - r0)): looped back"
		fi
		;;
	*) tap_bail "RV_VM_ROLE not set (run under vm-run --two-vm)" ;;
	esac
}

mode=${1:-}
if [ -z "$mode" ]; then
	if [ -n "${RV_VM_ROLE:-}" ]; then mode=twovm; else mode=rxe2; fi
fi
case "$mode" in
rxe2) mode_rxe2 ;;
twovm) mode_twovm ;;
*) echo "usage: $0 rxe2|twovm" >&2; exit 2 ;;
esac
tap_done
