#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault injection on rv's allocation sites: rv_fault_sweep
# (userspace/tests/vm/fault) with rv.ko loaded on the debug kernel
# (tools/testing/kernel: failslab, fail_page_alloc, KASAN, lockdep,
# kmemleak). For each operation (ATTACH, mmap of the ring, REG_MEM,
# CONN_CREATE, CONN_CONNECT, POST, release) and n = 1, 2, ... the n-th
# allocation of the calling task fails (/proc/thread-self/fail-nth); the
# call must fail with a known errno and leave nothing behind. Then: no
# rv object left in `rdma resource show`, `rmmod rv` works, and kmemleak
# finds nothing. TAP output; one point per operation. Runs as root inside
# the test VM with two rxe nodes:
#
#   vm-run --kernel-dir "$RV_DEBUG_DIR" --rxe 2 -- tools/testing/selftests/rv/fault.sh
#
# On a kernel without fault injection (Debian's) it prints a skip.
#
# Environment: RV_KO (rv.ko), RV_FAULT_SWEEP (the program), RV_FAULT_ARGS
# (extra options for every run, e.g. "--skip CONN_CONNECT:5"),
# RV_FAULT_BURST_OPS (the operations of the second run, with --burst 2;
# empty: no second run), RV_FAULT_VERBOSE
# (failslab/fail_page_alloc verbose, default 2: each failed allocation
# is named from its stack), RV_FAULT_TIMEOUT (seconds per run, default
# 1200). The JSON reports go to $RV_OUT/fault-sweep.json and
# fault-sweep-burst2.json, the kernel log of the test to
# $RV_OUT/fault-kmsg.txt, what kmemleak found to fault-kmemleak.txt.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../vm/lib.sh
. "$top/tools/testing/vm/lib.sh"

ko=${RV_KO:?vm-run sets RV_KO: the rv.ko of the kernel it boots}
sweep=${RV_FAULT_SWEEP:-${RV_BUILD_DIR:-$top/build}/userspace/tests/vm/fault/rv_fault_sweep}
verbose=${RV_FAULT_VERBOSE:-2}
limit=${RV_FAULT_TIMEOUT:-1200}
burst_ops=${RV_FAULT_BURST_OPS-ATTACH,ATTACH_2ND_JOB,ATTACH_JOIN,MMAP,CONN_CREATE,CONN_CREATE_JOIN,REG_MEM,POST,CLOSE}
out=${RV_OUT:-/tmp}
dbg=/sys/kernel/debug
leak=$dbg/kmemleak
knobs=(
	failslab/ignore-gfp-wait
	failslab/verbose
	failslab/probability
	failslab/task-filter
	failslab/times
	fail_page_alloc/ignore-gfp-wait
	fail_page_alloc/ignore-gfp-highmem
	fail_page_alloc/min-order
	fail_page_alloc/verbose
	fail_page_alloc/probability
	fail_page_alloc/task-filter
	fail_page_alloc/times
)
declare -A saved=()
kmsg_pid=

# shellcheck disable=SC2317  # called through the trap
cleanup() {
	local k
	for k in "${!saved[@]}"; do
		echo "${saved[$k]}" >"$dbg/$k" 2>/dev/null
	done
	[ -z "$kmsg_pid" ] || kill "$kmsg_pid" 2>/dev/null
}
trap cleanup EXIT

t0=$SECONDS
elapsed() { echo "$((SECONDS - t0)) s"; }

if [ -z "$(ls -A "$dbg" 2>/dev/null)" ]; then
	mount -t debugfs none "$dbg" 2>/dev/null
fi
if [ ! -d "$dbg/failslab" ] || [ ! -d "$dbg/fail_page_alloc" ] ||
   [ ! -e /proc/self/fail-nth ]; then
	tap_skip "fault injection sweep" \
		"kernel $(uname -r) has no failslab/fail_page_alloc/fail-nth (use the debug kernel)"
	tap_done
	exit 0
fi
[ -x "$sweep" ] || tap_bail "$sweep not built (cmake --build ... --target rv_fault_sweep)"
[ -r "$ko" ] || tap_bail "no $ko"
if [ -z "$(rv_node 1)" ]; then
	tap_diag "only one RDMA node: the operations that connect are skipped (vm-run --rxe 2)"
fi

# rv.ko's dependencies come from the running kernel's modules, soft-RoCE's
# are vm-guest's RV_RXE_MODULES (rxe-setup.sh has loaded them already with
# --rxe).
IFS=, read -r -a deps <<<"$(modinfo -F depends "$ko" 2>/dev/null)"
# shellcheck disable=SC2086 # a list of modules
modprobe -a ${RV_RXE_MODULES:?} ib_uverbs ib_cm "${deps[@]}" 2>/dev/null
# shellcheck disable=SC2086 # a list of module parameters
if insmod "$ko" ${RV_INSMOD_ARGS:-}; then
	tap_ok "insmod $(basename "$ko")"
else
	tap_bail "insmod $ko"
fi

# fail-nth reaches only the allocations the knobs leave in: GFP_KERNEL
# ones need ignore-gfp-wait N (and for pages ignore-gfp-highmem N,
# min-order 0). probability 0: nothing fails but what fail-nth picks
# (the --burst run raises it for its own task only, with task-filter and
# make-it-fail, and puts it back). verbose 2 dumps the stack of each injected failure, from which
# the sweep names the allocation.
for k in "${knobs[@]}"; do
	saved[$k]=$(cat "$dbg/$k")
done
set_knob() {
	echo "$2" >"$dbg/$1" || tap_bail "cannot set $dbg/$1 to $2"
}
set_knob failslab/probability 0
set_knob fail_page_alloc/probability 0
set_knob failslab/ignore-gfp-wait N
set_knob failslab/verbose "$verbose"
set_knob fail_page_alloc/ignore-gfp-wait N
set_knob fail_page_alloc/ignore-gfp-highmem N
set_knob fail_page_alloc/min-order 0
set_knob fail_page_alloc/verbose "$verbose"

# The whole kernel log of the sweep, as it is written: the ring buffer is
# too small for the stacks of every injected failure, and the run's
# dmesg.txt would lose its start.
cat /dev/kmsg >"$out/fault-kmsg.txt" 2>/dev/null &
kmsg_pid=$!

# run_sweep NAME ARGS...: one run of the sweep; '# ' lines are
# diagnostics, 'result OP STATUS SUMMARY' lines test points. Its JSON
# report goes to $out/NAME.json.
run_sweep() {
	local name=$1 line op status summary results=0 rc=125
	shift
	tap_step "$name: rv_fault_sweep $*"
	echo "<5>rv-fault: $name start" >/dev/kmsg
	# shellcheck disable=SC2086  # RV_FAULT_ARGS: words on purpose
	while IFS= read -r line; do
		case $line in
		"# "*) echo "$line" ;;
		"result "*)
			read -r _ op status summary <<<"$line"
			results=$((results + 1))
			case $status in
			ok) tap_ok "$op: $summary" ;;
			skip) tap_skip "$op" "$summary" ;;
			*) tap_not_ok "$op: $summary" ;;
			esac
			;;
		"rv-fault-exit "*) rc=${line#rv-fault-exit } ;;
		"") ;;
		*) echo "# $line" ;;
		esac
	done < <(timeout --kill-after=20 "$limit" "$sweep" --json-file "$out/$name.json" \
			 "$@" ${RV_FAULT_ARGS:-} 2>&1
		 echo "rv-fault-exit $?")
	echo "<5>rv-fault: $name end ($rc)" >/dev/kmsg
	case $rc in
	0 | 1) [ "$results" -gt 0 ] || tap_not_ok "$name: rv_fault_sweep reported no operation" "exit $rc" ;;
	77) ;;
	124 | 137) tap_not_ok "$name: rv_fault_sweep finished within $limit s" "timed out" ;;
	*) tap_not_ok "$name: rv_fault_sweep exited $rc" ;;
	esac
	tap_diag "$name: $(elapsed); report in $out/$name.json"
}

# Every allocation check of each call, one at a time.
run_sweep fault-sweep
# Then the nth check and the one after it: the error paths behind a
# fallback allocation (the xarray allocates a node with GFP_NOWAIT, then
# with GFP_KERNEL), for the operations that are quick to set up.
if [ -n "$burst_ops" ]; then
	run_sweep fault-sweep-burst2 --burst 2 --only "$burst_ops"
fi

# Every process of the sweep has exited: nothing of rv may be left once
# its workqueues are done.
left=
for ((i = 0; i < 300; i++)); do
	left=$(for t in pd cq qp mr; do rdma resource show "$t" 2>/dev/null; done |
		       grep '\[rv\]')
	[ -z "$left" ] && break
	sleep 0.1
done
if [ -z "$left" ]; then
	tap_ok "no rv objects left in rdma resource show"
else
	tap_not_ok "no rv objects left in rdma resource show" "$left"
fi
if rv_unload; then
	tap_ok "rmmod rv after the sweep"
else
	tap_not_ok "rmmod rv after the sweep" "$(lsmod | grep -w rv)"
fi

# kmemleak reports only objects older than 5 s, and only after a second
# scan has seen them unchanged (as tools/testing/kernel/kunit-guest.sh).
if [ -w "$leak" ]; then
	sleep 6
	echo scan >"$leak"
	echo scan >"$leak"
	cat "$leak" >"$out/fault-kmemleak.txt"
	# As kmemleak.sh: what comes next starts with a clean list.
	echo clear >"$leak"
	if [ -s "$out/fault-kmemleak.txt" ]; then
		tap_not_ok "kmemleak: no leaks after the sweep" \
			"$(grep -c 'unreferenced object' "$out/fault-kmemleak.txt") objects, see $out/fault-kmemleak.txt
$(head -n 60 "$out/fault-kmemleak.txt")"
	else
		tap_ok "kmemleak: no leaks after the sweep"
	fi
else
	tap_skip "kmemleak: no leaks after the sweep" "no $leak"
fi

sleep 0.5
kill "$kmsg_pid" 2>/dev/null
wait "$kmsg_pid" 2>/dev/null
kmsg_pid=
if bad=$("$top/tools/testing/vm/dmesg-check" "$out/fault-kmsg.txt" "rv-fault: fault-sweep start" 2>&1); then
	tap_ok "kernel log clean from the sweep's start to the end of the test"
else
	tap_not_ok "kernel log clean from the sweep's start to the end of the test" \
		"$(head -n 40 <<<"$bad")"
fi

tap_diag "fault.sh: $(elapsed)"
tap_done
