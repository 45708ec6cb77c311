#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared per-node-pair connections, from the shell: with rv.ko loaded,
# rv_conn_peer (userspace/tests/vm) processes on the rxe nodes of the VM.
# TAP output. Runs as root inside the test VM.
#
# One VM with two rxe nodes (vm-run --rxe 2):
#   - N = 1, 4, 16 processes per node of one job connect to the other node:
#     on each node they share one connection, and `rdma res show qp` shows
#     num_conn kernel RC QPs per device (4, the module default; 2 with
#     num_conn 2) whatever N is; they go away with the processes
#   - verified transfers both ways; the receiving device's rcvd_pkts rises
#     by the data packets, the sender's by less (the packets crossed the
#     veth instead of looping back)
#   - rmmod once every process is gone
#   (What changes the nodes runs on beds of its own: conn-fault.sh in one
#   VM, conn-2vm-fault.sh in two.)
# Two VMs (vm-run --two-vm, RV_VM_ROLE a or b; the same script in both):
#   VM b sends a verified transfer of 128 MiB to VM a; then VM a removes the module
#   and VM b watches its connection fail (EIO) or keep recovering, posts
#   failing with EAGAIN/EIO only.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../vm/lib.sh
. "$top/tools/testing/vm/lib.sh"

# shellcheck source-path=SCRIPTDIR source=conn-lib.sh
. "$here/conn-lib.sh"

random_key() {
	od -An -tx1 -N16 /dev/urandom | tr -d ' \n'
}

wait_qps() {
	local want=$1 secs=$2 i
	for ((i = 0; i < secs * 10; i++)); do
		[ "$(rc_qps "$d0")" = "$want" ] && [ "$(rc_qps "$d1")" = "$want" ] && return 0
		sleep 0.1
	done
	return 1
}

[ -x "$peer" ] || tap_bail "$peer not built (make userspace)"

# ---------------------------------------------------------------- two VMs

if [ -n "${RV_VM_ROLE:-}" ]; then
	load_rv
	key=72760000636f6e6e0000747776d00001	# the same job in both VMs
	port=18700
	# At least 128 MiB between the two kernels (RV_CONN_2VM_BYTES).
	bytes=${RV_CONN_2VM_BYTES:-$((128 << 20))}
	d0=$(rv_node 0)
	if [ "$RV_VM_ROLE" = a ]; then
		tap_step "two VMs: receiving $((bytes >> 20)) MiB from VM b"
		rx=$(rxe_rcvd_pkts "$d0")
		"$peer" --node 0 --peer-ip "$RV_PEER_IP" --job-key "$key" \
			--bytes "$bytes" --oob "$port" --timeout 180 recv >"$tmp/recv" 2>&1
		rc=$?
		drx=$(($(rxe_rcvd_pkts "$d0") - rx))
		tap_diag "$(cat "$tmp/recv")"
		if [ "$rc" = 0 ] && grep -q '^result: ok' "$tmp/recv"; then
			tap_ok "two VMs: $((bytes >> 20)) MiB from VM b, every byte verified"
		else
			tap_not_ok "two VMs: $((bytes >> 20)) MiB from VM b, every byte verified" "exit $rc"
		fi
		if [ "$drx" -ge $((bytes / 4096)) ]; then
			tap_ok "two VMs: $d0 rcvd_pkts rose by $drx (>= $((bytes / 4096)))"
		else
			tap_not_ok "two VMs: $d0 rcvd_pkts rose by $drx (>= $((bytes / 4096)))"
		fi
		# The peer node loses its module while VM b's connection is up.
		tap_check "two VMs: rmmod rv on VM a after the transfer" rv_unload
	else
		tap_step "two VMs: sending $((bytes >> 20)) MiB to VM a, which then unloads rv"
		"$peer" --node 0 --peer-ip "$RV_PEER_IP" --job-key "$key" \
			--bytes "$bytes" --oob "$RV_PEER_IP:$port" --timeout 180 \
			--reconnect-timeout 10 --expect-loss 90 send >"$tmp/send" 2>&1
		rc=$?
		tap_diag "$(cat "$tmp/send")"
		if grep -q '^send: result 0 ' "$tmp/send" && grep -q '^recv: result 0 ' "$tmp/send"; then
			tap_ok "two VMs: $((bytes >> 20)) MiB to VM a, every write completed once"
		else
			tap_not_ok "two VMs: $((bytes >> 20)) MiB to VM a, every write completed once"
		fi
		if [ "$rc" = 0 ] && grep -q '^result: ok' "$tmp/send"; then
			tap_ok "two VMs: VM a's module gone: the connection fails ($(kv "$tmp/send" loss_seen)), posts EAGAIN/EIO only, no hang"
		else
			tap_not_ok "two VMs: VM a's module gone: the connection fails, posts EAGAIN/EIO only, no hang" "exit $rc"
		fi
		tap_check "two VMs: rmmod rv on VM b" rv_unload
	fi
	tap_diag "conn.sh ($RV_VM_ROLE): $(elapsed)"
	tap_done
	exit
fi

# ---------------------------------------------------------------- one VM

if ! d0=$(rv_node 0) || ! d1=$(rv_node 1); then
	tap_bail "needs two rxe nodes (vm-run --rxe 2)"
fi
load_rv
num_conn=$(cat /sys/module/rv/parameters/num_conn)

# hold N NUM_CONN: N processes per node of a new job connect; counts.
hold() {
	local n=$1 nc=$2 key want wantq name i ok p0 p1 rx0 rx1 q0 q1
	key=$(random_key)
	want=$nc
	[ "$nc" != 0 ] || want=$num_conn
	name="N=$n per node, num_conn ${nc/#0/default}"
	tap_step "$name: connecting"
	rx0=$(rxe_rcvd_pkts "$d0") rx1=$(rxe_rcvd_pkts "$d1")
	# They meet on --oob before connecting: on the debug kernel a start
	# of rv_conn_peer can take longer than the connect deadline.
	"$peer" --node 0 --peer-node 1 --job-key "$key" --procs "$n" --num-conn "$nc" \
		--oob 127.0.0.1:18700 --timeout 180 hold >"$tmp/h0" 2>&1 &
	p0=$!
	"$peer" --node 1 --peer-node 0 --job-key "$key" --procs "$n" --num-conn "$nc" \
		--oob 127.0.0.1:18700 --timeout 180 hold >"$tmp/h1" 2>&1 &
	p1=$!
	pids+=("$p0" "$p1")
	ok=1
	wait_line "$tmp/h0" '^connected' "$p0" 240 || ok=0
	wait_line "$tmp/h1" '^connected' "$p1" 240 || ok=0
	if [ "$ok" = 1 ]; then
		tap_ok "$name: every process connected ($(elapsed))"
		tap_diag "$(rv_node 0): $(grep '^connected' "$tmp/h0")"
		tap_diag "$(rv_node 1): $(grep '^connected' "$tmp/h1")"
	else
		tap_not_ok "$name: every process connected"
		show "$tmp/h0"
		show "$tmp/h1"
	fi
	for i in 0 1; do
		if [ "$(kv "$tmp/h$i" conn_handles)" = 1 ] && [ "$(kv "$tmp/h$i" rv_indexes)" = "$n" ] &&
		   [ "$(kv "$tmp/h$i" num_conn)" = "$want" ]; then
			tap_ok "$name: the $n processes on $(rv_node $i) share one connection of $want QPs"
		else
			tap_not_ok "$name: the $n processes on $(rv_node $i) share one connection of $want QPs" \
				"$(grep '^connected' "$tmp/h$i")"
		fi
	done
	# The connection's QPs and the job-device's registration QP.
	wantq=$((want + 1))
	wait_qps "$wantq" 10
	q0=$(rc_qps "$d0") q1=$(rc_qps "$d1")
	if [ "$q0" = "$wantq" ] && [ "$q1" = "$wantq" ]; then
		tap_ok "$name: rdma res show qp: $want + 1 (registration) kernel RC QPs on $d0 and on $d1"
	else
		tap_not_ok "$name: rdma res show qp: $want + 1 (registration) kernel RC QPs on $d0 and on $d1" \
			"$d0: $q0, $d1: $q1; $(rdma res show qp 2>&1)"
	fi
	if [ $(($(rxe_rcvd_pkts "$d0") - rx0)) -gt 0 ] && [ $(($(rxe_rcvd_pkts "$d1") - rx1)) -gt 0 ]; then
		tap_ok "$name: the CM exchange crossed the veth (rcvd_pkts of both rose)"
	else
		tap_not_ok "$name: the CM exchange crossed the veth (rcvd_pkts of both rose)"
	fi
	kill -TERM "$p0" "$p1" 2>/dev/null
	ok=1
	wait "$p0" || ok=0
	wait "$p1" || ok=0
	pids=()
	grep -q '^done' "$tmp/h0" && grep -q '^done' "$tmp/h1" || ok=0
	wait_qps 0 30 || ok=0
	if [ "$ok" = 1 ]; then
		tap_ok "$name: the processes exit cleanly, the QPs go with them"
	else
		tap_not_ok "$name: the processes exit cleanly, the QPs go with them" \
			"$d0: $(rc_qps "$d0") QPs, $d1: $(rc_qps "$d1")"
		show "$tmp/h0" 5
		show "$tmp/h1" 5
	fi
}

if ! wait_qps 0 30; then
	tap_diag "RC QPs before the start: $(rdma res show qp 2>&1)"
fi
# RV_CONN_SH_HOLDS: the phases, N:NUM_CONN (0: the module's default).
for h in ${RV_CONN_SH_HOLDS:-1:0 4:0 16:0 4:2}; do
	hold "${h%%:*}" "${h#*:}"
done

# transfer FROM TO BYTES: a verified transfer; rcvd_pkts of both.
transfer() {
	local from=$1 to=$2 bytes=$3 key port name ps pr rcs rcr dfrom dto rxf rxt
	key=$(random_key)
	port=$((18600 + from))
	name="transfer $(rv_node "$from") -> $(rv_node "$to"), $((bytes >> 20)) MiB"
	tap_step "$name"
	rxf=$(rxe_rcvd_pkts "$(rv_node "$from")") rxt=$(rxe_rcvd_pkts "$(rv_node "$to")")
	"$peer" --node "$to" --peer-node "$from" --job-key "$key" --bytes "$bytes" \
		--oob "127.0.0.1:$port" --timeout 120 recv >"$tmp/recv" 2>&1 &
	pr=$!
	"$peer" --node "$from" --peer-node "$to" --job-key "$key" --bytes "$bytes" \
		--oob "127.0.0.1:$port" --timeout 120 send >"$tmp/send" 2>&1 &
	ps=$!
	pids+=("$pr" "$ps")
	wait "$ps"; rcs=$?
	wait "$pr"; rcr=$?
	pids=()
	dfrom=$(($(rxe_rcvd_pkts "$(rv_node "$from")") - rxf))
	dto=$(($(rxe_rcvd_pkts "$(rv_node "$to")") - rxt))
	if [ "$rcs" = 0 ] && [ "$rcr" = 0 ]; then
		tap_ok "$name: every byte verified, one completion per write ($(kv "$tmp/send" mbps) MB/s)"
	else
		tap_not_ok "$name: every byte verified, one completion per write" "sender $rcs, receiver $rcr"
		show "$tmp/send"
		show "$tmp/recv"
	fi
	if [ "$dto" -ge $((bytes / 4096)) ] && [ "$dfrom" -lt "$dto" ]; then
		tap_ok "$name: rcvd_pkts +$dto on $(rv_node "$to"), +$dfrom on $(rv_node "$from") (crossed the veth)"
	else
		tap_not_ok "$name: rcvd_pkts +$dto on $(rv_node "$to"), +$dfrom on $(rv_node "$from") (crossed the veth)" \
			"want >= $((bytes / 4096)) on the receiver and less on the sender"
	fi
}

# RV_CONN_SH_BYTES: bytes of each transfer (default 32 MiB; the debug
# kernel's tier moves less, as rxe is ~30x slower there).
transfer 0 1 "${RV_CONN_SH_BYTES:-$((32 << 20))}"
transfer 1 0 "${RV_CONN_SH_BYTES:-$((32 << 20))}"

tap_check "rmmod rv once every process is gone" rv_unload
tap_diag "conn.sh: $(elapsed)"
tap_done
