#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Faults of VM b's network under a live rv connection between two VMs
# (vm-run --two-vm; the same script runs in both, RV_VM_ROLE a or b).
# TAP output. Runs as root inside the test VMs.
#
#   conn-2vm-fault.sh FAULT
#
# VM b sends a verified transfer (rv_conn_peer send --tolerate, 64 MiB) to
# VM a through rv; once some of it is done, VM b injects FAULT:
#   addr-short  its IPv4 address is deleted for 5 s (reconnect_timeout
#               30 s), then added back
#   addr-long   the same for 15 s, longer than reconnect_timeout (5 s)
#   link-flap   ip link set eth0 down, 5 s, up (reconnect_timeout 30 s)
# Passes if the transfer recovers (every post completed exactly once,
# every byte verified by the receiver; writes that completed in error are
# re-posted) or fails cleanly with EIO (posts and CONN_CONNECTED answer
# EIO on both sides, every post completed exactly once, no bad byte); for
# addr-long only the clean EIO failure passes, and rmmod rv then works on
# both VMs. No step hangs. VM a's rxe rcvd_pkts rises by at least the
# bytes it verified / 4096. Afterwards a new job connects and moves 8 MiB,
# verified; rmmod rv at the end.
#
# The VMs share no files: the TCP connections of rv_conn_peer --oob (fixed
# ports on VM a, retried by VM b) are what keeps them in step.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../vm/lib.sh
. "$top/tools/testing/vm/lib.sh"

fault=${1:-}
case "$fault" in
addr-short) rto=30 down=5 ;;
addr-long) rto=5 down=15 ;;
link-flap) rto=30 down=5 ;;
*) tap_bail "usage: conn-2vm-fault.sh addr-short|addr-long|link-flap" ;;
esac
[ -n "${RV_VM_ROLE:-}" ] || tap_bail "needs two VMs (vm-run --two-vm)"

# shellcheck source-path=SCRIPTDIR source=conn-lib.sh
. "$here/conn-lib.sh"

# For a failure's diagnosis: rv's connection state changes and CM events
# (tracefs), unless RV_FAULT_TRACE=0.
tracing=
trace_on() {
	local t
	[ "${RV_FAULT_TRACE:-1}" = 1 ] || return 0
	[ -d /sys/kernel/tracing/events ] ||
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		[ -d "$t/events" ] && { tracing=$t; break; }
	done
	[ -n "$tracing" ] || return 0
	echo 4096 >"$tracing/buffer_size_kb"
	echo 1 >"$tracing/events/rdma_rv/rv_sconn_state/enable" &&
		echo 1 >"$tracing/events/rdma_rv/rv_cm_event/enable" || tracing=
	[ -n "$tracing" ] || tap_diag "no tracefs: rv's tracepoints are not recorded"
}

# node_diag: what a failure report needs from this VM (few execs: each
# costs ~0.1 s under TCG).
node_diag() {
	local dir=/sys/class/infiniband/$d0/ports/1
	tap_diag "--- $RV_VM_ROLE: $(ip -br addr show dev "$netdev" 2>&1), $d0 $(rxe_port_state "$d0")"
	tap_diag "gids: $(timeout 10 grep -H . "$dir"/gids/* 2>&1 | sed -n 's|.*/||; /:0000:0000:0000:0000:0000:0000:0000:0000$/!p' | tr '\n' ' ')"
	tap_diag "hw_counters: $(timeout 10 grep -H . "$dir"/hw_counters/* 2>&1 | sed -n 's|.*/||; /:0$/!p' | tr '\n' ' ')"
	tap_diag "$(timeout 10 rdma res show qp link "$d0/1" 2>&1 | grep -v ' type UD ')"
	[ -r /sys/kernel/debug/rv/conns ] && tap_diag "$(timeout 10 cat /sys/kernel/debug/rv/conns)"
	save_trace
	[ -s "$tmp/trace" ] && tap_diag "$(tail -n 150 "$tmp/trace")"
}

# save_trace: keeps what was traced (unloading rv empties the buffer).
save_trace() {
	[ -z "$tracing" ] || timeout 10 grep -v '^#' "$tracing/trace" >>"$tmp/trace"
	[ -z "$tracing" ] || echo >"$tracing/trace"
}

# unload: rmmod rv, keeping the trace.
unload() {
	save_trace
	rv_unload
}

[ -x "$peer" ] || tap_bail "$peer not built (make userspace)"
command -v timeout >/dev/null || tap_bail "no timeout(1)"

d0=$(rv_node 0) || tap_bail "no rxe node (RV_NODES)"
netdev=$(rv_netdev 0) || tap_bail "no netdev (RV_NETDEVS)"
# RV_FAULT_BYTES: bytes of the transfer the fault hits (default 64 MiB).
bytes=${RV_FAULT_BYTES:-$((64 << 20))}
small=$((8 << 20))
port=18710		# the faulted transfer's --oob port on VM a
port2=18711		# the new job's
key1=7276326d6661756c7400000000000001	# the same jobs in both VMs
key2=7276326d6661756c7400000000000002
# Every rv_conn_peer run is bounded by timeout(1) too.
run_limit=600
mib() { echo "$(($1 >> 20)) MiB"; }

# bed_check: soft RoCE itself works between the VMs (the RDMA CM and RC
# verbs of rping, without rv), so that a failure of the new job is rv's.
# A broken bed is one failure, VM b's, that names it (VM a's view of the
# same rping is a diagnostic); bed_ok=0 then skips the new job.
# The VMs come to it at different times: VM b only once its sender has
# finished, and the sender's out-of-band TCP connection can sit in
# retransmission backoff for a minute or more after the fault. So VM a
# serves for as long as VM b can be late (its sender's --timeout 180 and
# the 90 s to repair the node), plus VM b's 90 s to ping.
bed_ok=1
bed_check() {
	local out name="$fault: soft RoCE works between the VMs after the fault"
	local -a opt=(-t 90)
	[ "$RV_VM_ROLE" = b ] || opt+=(-w 420)
	tap_step "$fault: bed-check (rping between the VMs, no rv)"
	# Only its own "works" line counts: its failure paths can exit 0.
	if out=$(timeout -k 10 480 "$top/tools/testing/vm/bed-check" "${opt[@]}" 2>&1) &&
	   grep -q '^bed: .* works' <<<"$out"; then
		tap_ok "$name ($(tail -n 1 <<<"$out"))"
		return
	fi
	bed_ok=0
	if [ "$RV_VM_ROLE" = b ]; then
		tap_not_ok "$name" "$out"
	else
		tap_skip "$name" "broken; VM b reports it"
		tap_diag "$out"
	fi
}

# bed_skip NAME: skip a step that needs the bed when bed_check failed.
bed_skip() {
	[ "$bed_ok" = 0 ] || return 1
	tap_skip "$1" "the bed is broken (bed-check above), not rv"
}

# ---------------------------------------------------------------- VM b

# Routes on the netdev that the kernel does not make by itself, put back
# after the fault (the two-VM bed has none today).
saved_routes=()
save_routes() {
	local line
	saved_routes=()
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		case "$line" in *"proto kernel"*) continue ;; esac
		saved_routes+=("$line")
	done < <(ip -4 route show dev "$netdev" 2>/dev/null)
}
restore_routes() {
	local line
	local -a w
	for line in "${saved_routes[@]}"; do
		read -r -a w <<<"$line"
		ip route replace "${w[@]}" dev "$netdev" || return 1
	done
}

# wait_gid SECS: until the node has its RoCE v2 GID for RV_LOCAL_IP again.
wait_gid() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		rxe_gid_index "$d0" "$RV_LOCAL_IP" >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_ping SECS: until VM a answers.
wait_ping() {
	local i
	for ((i = 0; i < $1; i++)); do
		busybox ping -q -c 1 -W 1 "$RV_PEER_IP" >/dev/null 2>&1 && return 0
	done
	return 1
}

# watch_moving: in the background from when the address or link came back
# (t_up, progress p_up): writes the seconds until the sender's progress
# rises to $tmp/t_rec.
watch_moving() {
	local i
	for ((i = 0; i < 3000; i++)); do
		if [ "$(progress)" -gt "$p_up" ]; then
			echo "$((SECONDS - t_up))" >"$tmp/t_rec"
			return
		fi
		sleep 0.1
	done
}

# inject: the fault, then the node put back in working order. Prints what
# it did on failure. Sets t_up and p_up: the time and the sender's
# progress when the address or link came back, starts watch_moving then,
# and sets t_ready: the seconds from then until the node worked again.
t_up=0 p_up=0 t_ready=
inject() {
	save_routes
	case "$fault" in
	addr-*)
		ip addr del "$RV_LOCAL_IP/24" dev "$netdev" || return 1
		sleep "$down"
		ip addr add "$RV_LOCAL_IP/24" dev "$netdev" || return 1
		;;
	link-flap)
		ip link set "$netdev" down || return 1
		sleep "$down"
		ip link set "$netdev" up || return 1
		;;
	esac
	t_up=$SECONDS p_up=$(progress)
	watch_moving </dev/null >/dev/null 2>&1 &
	pids+=("$!")
	restore_routes || return 1
	rxe_wait_active "$d0" 30 || { echo "$d0 not ACTIVE: $(rxe_port_state "$d0")"; return 1; }
	wait_gid 30 || { echo "$d0 has no RoCE v2 GID for $RV_LOCAL_IP"; return 1; }
	wait_ping 30 || { echo "VM a does not answer a ping"; return 1; }
	t_ready=$((SECONDS - t_up))
}

# progress: bytes the sender has finished (0 before the first).
progress() {
	local v=0
	{ read -r v <"$tmp/progress"; } 2>/dev/null || v=0
	echo "${v:-0}"
}

role_b() {
	local ps rc name p_at ok t_rec i outcome gid0
	gid0=$(rxe_gid_index "$d0" "$RV_LOCAL_IP")
	name="$fault: $(mib "$bytes") to VM a"
	tap_step "$name: sending, fault after 4 MiB"
	timeout -k 10 "$run_limit" "$peer" --node 0 --peer-ip "$RV_PEER_IP" --job-key "$key1" \
		--bytes "$bytes" --oob "$RV_PEER_IP:$port" --timeout 180 \
		--reconnect-timeout "$rto" --tolerate --accept-eio \
		--progress-file "$tmp/progress" send >"$tmp/send" 2>&1 &
	ps=$!
	pids+=("$ps")
	# The fault lands once 4 MiB are done (at most 300 s).
	for ((i = 0; i < 3000; i++)); do
		[ "$(progress)" -ge $((4 << 20)) ] && break
		kill -0 "$ps" 2>/dev/null || break
		sleep 0.1
	done
	p_at=$(progress)
	if kill -0 "$ps" 2>/dev/null && [ "$p_at" -ge $((4 << 20)) ] && [ "$p_at" -lt "$bytes" ]; then
		tap_ok "$name: the fault lands mid-transfer ($(mib "$p_at") of $(mib "$bytes") done, $(elapsed))"
	else
		tap_not_ok "$name: the fault lands mid-transfer" "$p_at bytes done, sender $(kill -0 "$ps" 2>/dev/null && echo running || echo gone)"
		show "$tmp/send"
	fi

	case "$fault" in
	addr-*) tap_step "$fault: ip addr del $RV_LOCAL_IP/24 dev $netdev for $down s (reconnect_timeout $rto s)" ;;
	link-flap) tap_step "$fault: ip link set $netdev down for $down s (reconnect_timeout $rto s)" ;;
	esac
	if inject >"$tmp/inject" 2>&1; then
		tap_ok "$fault: $netdev and $d0 work again ($RV_LOCAL_IP back, $d0 ACTIVE, VM a answers, ${t_ready} s after the $([ "$fault" = link-flap ] && echo link || echo address) came back)"
	else
		tap_not_ok "$fault: $netdev and $d0 work again" "$(cat "$tmp/inject"); $(ip addr show dev "$netdev" 2>&1)"
	fi
	tap_diag "$d0's RoCE v2 GID index for $RV_LOCAL_IP: $gid0 before the fault, $(rxe_gid_index "$d0" "$RV_LOCAL_IP") after"
	tap_diag "after the fault: $(timeout 10 rdma res show qp link "$d0/1" lqpn 1 2>&1)"

	wait "$ps"
	rc=$?
	# Time from the address or link coming back until the transfer moved
	# again (watch_moving).
	t_rec=
	[ -s "$tmp/t_rec" ] && read -r t_rec <"$tmp/t_rec"
	for i in "${pids[@]}"; do kill "$i" 2>/dev/null; done
	pids=()
	tap_diag "$(cat "$tmp/send")"
	outcome=$(kv "$tmp/send" outcome)
	ok=0
	if [ "$rc" = 0 ] && grep -q '^result: ok' "$tmp/send"; then
		case "$fault:$outcome" in
		addr-long:eio | addr-short:* | link-flap:*) ok=1 ;;
		esac
	fi
	if [ "$outcome" = complete ]; then
		name="$fault: the transfer recovered, every write completed once, every byte verified"
		name+=" ($(kv "$tmp/send" reposts) re-posted, conn_count $(kv "$tmp/send" conn_count_first) -> $(kv "$tmp/send" conn_count_last)"
		name+=", moving again ${t_rec:-?} s after the $([ "$fault" = link-flap ] && echo link || echo address) came back, $(elapsed))"
	elif [ "$outcome" = eio ]; then
		name="$fault: the connection failed cleanly: posts and CONN_CONNECTED EIO, every write completed once ($(elapsed))"
	else
		name="$fault: the transfer recovers or fails cleanly with EIO"
	fi
	[ "$fault" != addr-long ] || name+=" [must fail: the address was away longer than reconnect_timeout]"
	if [ "$ok" = 1 ]; then
		tap_ok "$name"
	else
		tap_not_ok "$name" "exit $rc, outcome '${outcome:-none}'"
	fi

	if [ "$fault" = addr-long ]; then
		tap_check "$fault: rmmod rv on VM b after the failed job" unload
		load_rv
	fi

	bed_check
	# A new job, through the repaired node.
	name="$fault: afterwards a new job connects and sends $(mib "$small") to VM a"
	if bed_skip "$name"; then
		node_diag
		tap_check "$fault: rmmod rv on VM b" unload
		return
	fi
	tap_step "$name"
	timeout -k 10 "$run_limit" "$peer" --node 0 --peer-ip "$RV_PEER_IP" --job-key "$key2" \
		--bytes "$small" --oob "$RV_PEER_IP:$port2" --timeout 240 \
		--seed 2 send >"$tmp/send2" 2>&1
	rc=$?
	tap_diag "$(cat "$tmp/send2")"
	if [ "$rc" = 0 ] && grep -q '^result: ok' "$tmp/send2"; then
		tap_ok "$name, every write completed once ($(kv "$tmp/send2" mbps) MB/s, $(elapsed))"
	else
		tap_not_ok "$name, every write completed once" "exit $rc"
	fi
	[ "$TAP_FAIL" = 0 ] || node_diag
	tap_check "$fault: rmmod rv on VM b" unload
}

# ---------------------------------------------------------------- VM a

# recv_step NAME KEY PORT BYTES SEED RTO [OPTIONS...]: one verified
# transfer from VM b; checks the result and rcvd_pkts.
recv_step() {
	local name=$1 key=$2 p=$3 n=$4 seed=$5 r=$6 rx rc drx got
	shift 6
	rx=$(rxe_rcvd_pkts "$d0")
	timeout -k 10 "$run_limit" "$peer" --node 0 --peer-ip "$RV_PEER_IP" --job-key "$key" \
		--bytes "$n" --oob "$p" --timeout 240 --reconnect-timeout "$r" \
		--seed "$seed" "$@" recv >"$tmp/recv" 2>&1
	rc=$?
	drx=$(($(rxe_rcvd_pkts "$d0") - rx))
	tap_diag "$(cat "$tmp/recv")"
	outcome=$(kv "$tmp/recv" outcome)
	recv_ok=0
	if [ "$rc" = 0 ] && grep -q '^result: ok' "$tmp/recv"; then
		recv_ok=1
	fi
	got=$(kv "$tmp/recv" bytes)
	got=${got:-0}
	# Of what was verified, also when the transfer failed.
	if [ "$got" -gt 0 ] && [ "$drx" -ge $((got / 4096)) ]; then
		tap_ok "$name: $d0 rcvd_pkts rose by $drx (>= $got verified bytes / 4096)"
	else
		tap_not_ok "$name: $d0 rcvd_pkts rose by $drx (>= $got verified bytes / 4096)" "receiver exit $rc"
	fi
}

role_a() {
	local name ok
	name="$fault: $(mib "$bytes") from VM b"
	tap_step "$name: receiving (VM b injects the fault)"
	recv_step "$name" "$key1" "$port" "$bytes" 1 "$rto" --tolerate --accept-eio
	ok=0
	if [ "$recv_ok" = 1 ]; then
		case "$fault:$outcome" in
		addr-long:eio | addr-short:complete | addr-short:eio | link-flap:complete | link-flap:eio) ok=1 ;;
		esac
	fi
	case "$outcome" in
	complete) name+=": every byte verified, duplicates of re-posted writes only ($(sed -n 's/^recv: .* duplicates \([0-9]*\) .*/\1/p' "$tmp/recv") duplicates)" ;;
	eio) name+=": cut short cleanly, no bad byte, this side's connection failed too (EIO, $(elapsed))" ;;
	*) name+=": verified, or cut short cleanly with EIO" ;;
	esac
	[ "$fault" != addr-long ] || name+=" [must fail: the address was away longer than reconnect_timeout]"
	if [ "$ok" = 1 ]; then
		tap_ok "$name"
	else
		tap_not_ok "$name" "outcome '${outcome:-none}'"
	fi

	if [ "$fault" = addr-long ]; then
		tap_check "$fault: rmmod rv on VM a after the failed job" unload
		load_rv
	fi

	bed_check
	name="$fault: afterwards a new job connects, $(mib "$small") from VM b"
	if bed_skip "$name"; then
		node_diag
		tap_check "$fault: rmmod rv on VM a" unload
		return
	fi
	tap_step "$name"
	recv_step "$name" "$key2" "$port2" "$small" 2 30
	if [ "$recv_ok" = 1 ]; then
		tap_ok "$name, every byte verified ($(elapsed))"
	else
		tap_not_ok "$name, every byte verified"
	fi
	[ "$TAP_FAIL" = 0 ] || node_diag
	tap_check "$fault: rmmod rv on VM a" unload
}

load_rv
trace_on
case "$RV_VM_ROLE" in
a) role_a ;;
b) role_b ;;
*) tap_bail "RV_VM_ROLE must be a or b" ;;
esac
tap_diag "conn-2vm-fault.sh $fault ($RV_VM_ROLE): $(elapsed)"
tap_done
