#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A job of four nodes: vm-run --nodes 4, one rxe in each VM, the same
# script in all four (RV_VM_ROLE a, b, c, d; RV_VM_IPS their addresses).
# TAP output. Runs as root inside the test VMs.
#
#   1. hold: on every node, 2 processes of one job per other node connect
#      to it (rv_conn_peer hold --procs 2, three of them): on each node
#      the job's processes share one connection per remote node (one
#      conn_handle), and `rdma resource show qp` shows exactly num_conn x 3
#      connection QPs of rv (plus the job-device's registration QP).
#   2. all-to-all: every node sends a verified transfer to each of the
#      three others and receives one from each (one job; a sender and a
#      receiver process per peer), every byte checked; each node's rxe
#      rcvd_pkts rises by at least the bytes it received / 4096.
#   3. link flap: d holds connections with a, b and c, and they with it;
#      while a, b and c send transfers to each other (the three pairs),
#      d's link goes down for 5 s and up. The three pairs complete every
#      write once, with no recovery (no write completed in error, each
#      QP's conn_count unchanged).
#   4. unload: a, b and c hold connections among themselves and send to
#      d, which unloads rv once it received them. Their connections to d
#      fail cleanly (posts EAGAIN/EIO only, no hang, then EIO for good or
#      recovering), and afterwards the three pairs still carry verified
#      transfers over the connections they held, with no recovery.
#
# The VMs keep in step through rv_conn_peer's TCP connections (--oob) and
# barriers: files in RV_OUT (the host directory every VM mounts), named
# with RV_RUN_ID. RV_CONN_4VM_BYTES: each transfer (default 8 MiB).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../vm/lib.sh
. "$top/tools/testing/vm/lib.sh"

if [ -z "${RV_VM_ROLE:-}" ] || [ -z "${RV_VM_IPS:-}" ] || [ -z "${RV_RUN_ID:-}" ]; then
	tap_bail "needs four VMs (vm-run --nodes 4)"
fi

# shellcheck source-path=SCRIPTDIR source=conn-lib.sh
. "$here/conn-lib.sh"

[ -x "$peer" ] || tap_bail "$peer not built (make userspace)"

read -r -a ips <<<"$RV_VM_IPS"
[ "${#ips[@]}" = 4 ] || tap_bail "needs four VMs, RV_VM_IPS has ${#ips[@]}"
roles=(a b c d)
me=0
for i in 0 1 2 3; do [ "${roles[$i]}" = "$RV_VM_ROLE" ] && me=$i; done
bytes=${RV_CONN_4VM_BYTES:-$((8 << 20))}
# The link flap's transfers: long enough to span the flap.
flap_bytes=${RV_CONN_4VM_FLAP_BYTES:-$((16 << 20))}
d0=$(rv_node 0)
port=18800

# barrier NAME [SECS]: wait until every VM reached NAME (default 600 s).
barrier() {
	local name=$1 secs=${2:-600} i n
	touch "$RV_OUT/.barrier-$RV_RUN_ID-$name-$RV_VM_ROLE"
	for ((i = 0; i < secs * 5; i++)); do
		n=$(find "$RV_OUT" -maxdepth 1 -name ".barrier-$RV_RUN_ID-$name-*" | wc -l)
		[ "$n" -lt 4 ] || return 0
		sleep 0.2
	done
	tap_diag "barrier $name: $n of 4 VMs after $secs s"
	return 1
}

# job KEY-SUFFIX: the key of one phase's job, the same on every node.
job() { echo "72760000346e6f6465000000000000$1"; }

# hold_to KEY OUT IP...: a hold of 2 processes per peer IP, in the
# background; their PIDs are added to pids and holds.
holds=()
hold_to() {
	local key=$1 out=$2 ip
	shift 2
	for ip in "$@"; do
		"$peer" --node 0 --peer-ip "$ip" --job-key "$key" --procs 2 \
			--reconnect-timeout 10 --timeout 240 hold >"$out-$ip" 2>&1 &
		pids+=($!)
		holds+=("$!:$out-$ip")
	done
}

# holds_connected: every hold printed "connected"; diagnostics otherwise.
holds_connected() {
	local h ok=0
	for h in "${holds[@]}"; do
		wait_line "${h#*:}" '^connected' "${h%%:*}" 300 || { ok=1; show "${h#*:}"; }
	done
	return "$ok"
}

# holds_end: SIGTERM to the holds; each must say "done".
holds_end() {
	local h ok=0
	for h in "${holds[@]}"; do kill -TERM "${h%%:*}" 2>/dev/null; done
	for h in "${holds[@]}"; do
		wait "${h%%:*}" 2>/dev/null || { ok=1; show "${h#*:}"; }
	done
	holds=()
	return "$ok"
}

# recv_from KEY I OUT: receive a transfer from node I, in the background.
recv_from() {
	"$peer" --node 0 --peer-ip "${ips[$2]}" --job-key "$1" --bytes "$bytes" \
		--oob "${ips[$me]}:$((port + $2))" --reconnect-timeout 10 --timeout 300 \
		recv >"$3" 2>&1 &
	pids+=($!)
}

# send_to KEY J OUT [OPTION...]: send a transfer to node J, in the
# background.
send_to() {
	local key=$1 j=$2 out=$3
	shift 3
	"$peer" --node 0 --peer-ip "${ips[$j]}" --job-key "$key" --bytes "$bytes" \
		--oob "${ips[$j]}:$((port + me))" --reconnect-timeout 10 --timeout 300 \
		"$@" send >"$out" 2>&1 &
	pids+=($!)
}

# finished PID FILE: the process exited 0 and said "result: ok".
finished() {
	wait "$1" 2>/dev/null && grep -q '^result: ok' "$2" && return 0
	show "$2"
	return 1
}

# no_recovery FILE: the sender saw no write complete in error and no QP
# reconnect (conn_count the same at the end as at the start).
no_recovery() {
	[ "$(kv "$1" cqe_err)" = 0 ] &&
		[ -n "$(kv "$1" conn_count_first)" ] &&
		[ "$(kv "$1" conn_count_first)" = "$(kv "$1" conn_count_last)" ]
}

# kernel_all: the metric of docs/sizing.md, in bytes (rv_sizing
# --snapshot: settled, per-CPU counters folded, per-CPU free lists out).
sizing=${RV_SIZING:-$build/userspace/tests/vm/sizing/rv_sizing}
kernel_all() {
	"$sizing" --snapshot | sed -n 's/^kernel_all=\([-0-9]*\) .*/\1/p'
}

# pairs_start KEY NAME: transfers to and from the two other nodes among a,
# b and c (d excluded), in the background, into $tmp/NAME-{recv,send}-I.
pairs_start() {
	local i
	rpids=() spids=()
	for i in 0 1 2; do
		[ "$i" = "$me" ] && continue
		recv_from "$1" "$i" "$tmp/$2-recv-$i"
		rpids[i]=$!
		send_to "$1" "$i" "$tmp/$2-send-$i"
		spids[i]=$!
	done
}

# pairs_end NAME: waits for pairs_start's transfers; ok=1 if all passed,
# calm=1 if no sender saw a recovery.
pairs_end() {
	local i
	ok=1 calm=1
	for i in 0 1 2; do
		[ "$i" = "$me" ] && continue
		finished "${rpids[i]}" "$tmp/$1-recv-$i" || ok=0
		finished "${spids[i]}" "$tmp/$1-send-$i" || ok=0
		no_recovery "$tmp/$1-send-$i" || { calm=0; show "$tmp/$1-send-$i" 5; }
	done
}

load_rv
num_conn=$(cat /sys/module/rv/parameters/num_conn)
others=()
for i in 0 1 2 3; do [ "$i" = "$me" ] || others+=("${ips[$i]}"); done

# ---------------------------------------------------------------- 1. hold

tap_step "hold: 2 processes per peer, to each of the 3 other nodes"
barrier start
k0=$(kernel_all)
hold_to "$(job 01)" "$tmp/hold" "${others[@]}"
if holds_connected; then
	tap_ok "hold: connected to the 3 other nodes, 2 processes each"
else
	tap_not_ok "hold: connected to the 3 other nodes, 2 processes each"
fi
shared=1
for ip in "${others[@]}"; do
	[ "$(kv "$tmp/hold-$ip" conn_handles)" = 1 ] &&
		[ "$(kv "$tmp/hold-$ip" num_conn)" = "$num_conn" ] || shared=0
done
tap_is "hold: per remote node one connection handle and num_conn $num_conn QPs, shared by its processes" "$shared" 1
# Every node connected before any counts: the peers' QPs are up.
barrier held
qps=$(rc_qps "$d0")
k1=$(kernel_all)
# For docs/sizing.md's row at N = 4 (P = 6: 2 processes per peer).
echo "N=4 P=6 num_conn=$num_conn kernel $(uname -r) kernel_all_delta=$((k1 - k0))" |
	tee "$RV_OUT/sizing-4vm-$RV_VM_ROLE.txt" | tap_diag "sizing: $(cat)"
tap_is "hold: rdma resource show: num_conn x 3 connection QPs of rv (+1 registration QP)" \
	"$qps" "$((num_conn * 3 + 1))"
barrier counted
tap_check "hold: the holds end cleanly" holds_end
barrier hold-done

# ---------------------------------------------------------------- 2. all-to-all

tap_step "all-to-all: $((bytes >> 20)) MiB to and from each of the 3 other nodes"
key=$(job 02)
rx=$(rxe_rcvd_pkts "$d0")
rpids=() spids=()
for i in 0 1 2 3; do
	[ "$i" = "$me" ] && continue
	recv_from "$key" "$i" "$tmp/recv-$i"
	rpids[i]=$!
done
for j in 0 1 2 3; do
	[ "$j" = "$me" ] && continue
	send_to "$key" "$j" "$tmp/send-$j"
	spids[j]=$!
done
ok=1
for i in 0 1 2 3; do
	[ "$i" = "$me" ] && continue
	finished "${rpids[i]}" "$tmp/recv-$i" || ok=0
	finished "${spids[i]}" "$tmp/send-$i" || ok=0
done
tap_is "all-to-all: every transfer to and from the 3 other nodes complete, every byte verified" "$ok" 1
drx=$(($(rxe_rcvd_pkts "$d0") - rx))
if [ "$drx" -ge $((3 * bytes / 4096)) ]; then
	tap_ok "all-to-all: $d0 rcvd_pkts rose by $drx (>= $((3 * bytes / 4096)))"
else
	tap_not_ok "all-to-all: $d0 rcvd_pkts rose by $drx (>= $((3 * bytes / 4096)))"
fi
barrier mesh-done

# ---------------------------------------------------------------- 3. link flap

key=$(job 03)
if [ "$me" = 3 ]; then
	tap_step "link flap: d holds connections with a, b and c, and flaps its link"
	hold_to "$key" "$tmp/fhold" "${others[@]}"
	holds_connected || tap_diag "d: a hold did not connect"
	barrier flap-held
	barrier flap-sending
	dev=$(rv_netdev 0) || tap_bail "no netdev (RV_NETDEVS)"
	ip link set "$dev" down
	sleep 5
	ip link set "$dev" up
	rxe_wait_active "$d0" 30 || tap_diag "$d0 not ACTIVE 30 s after the link came back"
	barrier flap-sent
	holds_end || tap_diag "d: a hold ended badly after the flap (not asserted)"
	tap_ok "link flap: d's link down 5 s and up while the three other pairs sent"
else
	tap_step "link flap: the pairs among a, b and c send while d's link flaps"
	hold_to "$key" "$tmp/fhold" "${ips[3]}"
	holds_connected || tap_diag "${roles[$me]}: its hold to d did not connect"
	barrier flap-held
	bytes=$flap_bytes pairs_start "$key" flap
	barrier flap-sending
	t_flap=$SECONDS
	pairs_end flap
	tap_diag "link flap: the transfers took $((SECONDS - t_flap)) s from d's cue (its link is down 5 s)"
	barrier flap-sent
	holds_end || tap_diag "${roles[$me]}: its hold to d ended badly after the flap (not asserted)"
	tap_is "link flap: ${roles[$me]}'s transfers with the two other nodes besides d complete, every byte verified" "$ok" 1
	tap_is "link flap: ... with no recovery (no write completed in error, conn_count unchanged)" "$calm" 1
fi
barrier flap-done

# ---------------------------------------------------------------- 4. unload

key=$(job 04)
if [ "$me" = 3 ]; then
	tap_step "unload: d receives from a, b and c, then unloads rv"
	rpids=()
	for i in 0 1 2; do
		recv_from "$key" "$i" "$tmp/urecv-$i"
		rpids[i]=$!
	done
	ok=1
	for i in 0 1 2; do finished "${rpids[i]}" "$tmp/urecv-$i" || ok=0; done
	tap_is "unload: d received from a, b and c, every byte verified" "$ok" 1
	tap_check "unload: rmmod rv on d while a, b and c hold their connections to it" rv_unload
	barrier unloaded
	barrier loss-watched 900
	barrier unload-done 900
else
	tap_step "unload: a, b and c hold their pairs, send to d, and d unloads rv"
	pair=()
	for i in 0 1 2; do [ "$i" = "$me" ] || pair+=("${ips[$i]}"); done
	hold_to "$key" "$tmp/uhold" "${pair[@]}"
	holds_connected || tap_diag "${roles[$me]}: a hold did not connect"
	send_to "$key" 3 "$tmp/usend" --expect-loss 40
	upid=$!
	barrier unloaded
	if finished "$upid" "$tmp/usend"; then
		tap_ok "unload: d's module gone: ${roles[$me]}'s connection to it fails cleanly ($(kv "$tmp/usend" loss_seen)), posts EAGAIN/EIO only, no hang"
	else
		tap_not_ok "unload: d's module gone: ${roles[$me]}'s connection to it fails cleanly"
	fi
	barrier loss-watched 900
	pairs_start "$key" after
	pairs_end after
	tap_is "unload: afterwards ${roles[$me]}'s transfers with the two other nodes complete over the held connections, every byte verified" "$ok" 1
	tap_is "unload: ... with no recovery" "$calm" 1
	tap_check "unload: ${roles[$me]}'s holds end cleanly" holds_end
	barrier unload-done 900
	tap_check "unload: rmmod rv on ${roles[$me]}" rv_unload
fi

tap_diag "conn-4vm.sh ($RV_VM_ROLE): $(elapsed)"
tap_done
