#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# latency-breakdown.sh: where the time of one RDMA write with immediate
# goes, step by step. Inside the test VM (vm-run --rxe 2; `make bench
# BENCH_ARGS=breakdown` runs it):
#
#   latency-breakdown.sh [--size B] [--iters N] [--rv-params 'P=V ...']
#
# Loads rv, traces an `rvbench lat` ping-pong between the two rxe nodes
# (default 8 B, 2000 round trips) with tracefs, and prints, for each
# message, the medians of:
#   ioctl entry (syscalls:sys_enter_ioctl of the posting process)
#   -> ib_post_send returned (rdma_rv:rv_post_write)
#   -> the receiving QP's CQ handler (kprobe ib_cq_completion_workqueue
#      or _softirq, as rv's cq_poll says)
#   -> rv's receive callback (rdma_rv:rv_recv_cmpl)
#   -> the event written to the receiver's ring (kretprobe rv_ring_post)
#   -> the receiving process posts its answer (its next ioctl entry)
# and on the sending side ib_post_send returned -> rv's send completion
# (rdma_rv:rv_send_cmpl) -> its ring event. On rxe, kprobes on rxe_post_send,
# rxe_rcv and rxe_cq_post split the driver's part. --rv-params: rv's
# module parameters. The trace clock is `mono`, so
# steps on different CPUs compare. Tracing itself adds a few
# microseconds per step: the totals are printed beside rvbench's own
# untraced median from the same boot.
#
# Prints numbers and asserts nothing about them; fails only when a tool
# fails or the trace holds no complete message.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
ko=${RV_KO:?vm-run sets RV_KO: the rv.ko of the kernel it boots}
rvbench=$build/userspace/tools/rvbench
out=${RV_OUT:-$(mktemp -d /tmp/breakdown.XXXXXX)}

size=8
iters=2000
rv_params=
while [ $# -gt 0 ]; do
	case "$1" in
	--size) size=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--rv-params) rv_params=$2; shift 2 ;;
	-h|--help) sed -n '4,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "latency-breakdown: unknown option $1" >&2; exit 2 ;;
	esac
done

read -ra nodes <<<"${RV_NODES:-}"
[ ${#nodes[@]} -ge 2 ] ||
	{ echo "latency-breakdown: needs two rxe nodes (vm-run --rxe 2)" >&2; exit 2; }

T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs nodev "$T"

cleanup() {
	echo 0 >"$T/tracing_on"
	echo 0 >"$T/events/enable"
	echo >"$T/kprobe_events" 2>/dev/null || true
	echo local >"$T/trace_clock"
	rmmod rv 2>/dev/null || true
}
trap cleanup EXIT

IFS=, read -ra deps <<<"$(modinfo -F depends "$ko")"
[ ${#deps[@]} -eq 0 ] || modprobe -a "${deps[@]}"
# shellcheck disable=SC2086 # a list of module parameters
insmod "$ko" $rv_params

lat() {
	"$rvbench" lat --loopback-nodes "${nodes[0]},${nodes[1]}" --sizes "$size" \
		--iters "$iters" --json
}

# Untraced first: the figure the traced steps are read against.
lat >"$out/untraced.json"

echo 0 >"$T/tracing_on"
echo >"$T/trace"
echo mono >"$T/trace_clock"
echo 8192 >"$T/buffer_size_kb"
echo 'p:rvbd/cq_wq ib_cq_completion_workqueue' >>"$T/kprobe_events"
echo 'p:rvbd/cq_sirq ib_cq_completion_softirq' >>"$T/kprobe_events"
echo 'r:rvbd/ring_posted rv_ring_post' >>"$T/kprobe_events"
for e in rvbd/cq_wq rvbd/cq_sirq rvbd/ring_posted rdma_rv/rv_post_write \
	rdma_rv/rv_recv_cmpl rdma_rv/rv_send_cmpl syscalls/sys_enter_ioctl; do
	echo 1 >"$T/events/$e/enable"
done
# The driver's steps, on rxe: its post_send, a packet's arrival, a CQE.
for p in drv_post:rxe_post_send rxe_rcv:rxe_rcv cq_post:rxe_cq_post; do
	if echo "p:rvbd/${p%%:*} ${p#*:}" >>"$T/kprobe_events" 2>/dev/null; then
		echo 1 >"$T/events/rvbd/${p%%:*}/enable"
	fi
done
echo 1 >"$T/tracing_on"
lat >"$out/traced.json"
echo 0 >"$T/tracing_on"
cp "$T/trace" "$out/trace.txt"
lost=$(awk '/^# entries-in-buffer/ { print $0 }' "$out/trace.txt")

echo "== $(uname -r): rvbench lat, ${nodes[0]} <-> ${nodes[1]}, $size B x $iters"
echo "# $lost"
python3 "$top/tools/testing/latency-breakdown.py" "$out/trace.txt" \
	"$out/untraced.json" "$out/traced.json"
