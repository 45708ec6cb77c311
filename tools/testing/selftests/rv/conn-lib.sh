# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the rv_conn_peer scripts (conn.sh, conn-2vm-fault.sh) share. Source
# it after tools/testing/vm/lib.sh, with $top set. It sets ko, build, peer
# (rv_conn_peer), tmp (removed at exit, when the processes in pids are
# killed) and t0, and defines:
#   elapsed             "N s" since it was sourced
#   kv FILE KEY         the value of KEY=value in the last line that has it
#   show FILE [N]       the last N (30) lines of FILE as TAP diagnostics
#   load_rv             modprobe what rv needs, insmod rv.ko, or bail out
#   wait_line FILE PATTERN PID SECS
#                       until FILE has a line matching PATTERN; fails if
#                       PID exits first or after SECS
#   rc_qps DEV          kernel RC QPs of rv on DEV: the connections' and
#                       each job-device's registration QP

# shellcheck disable=SC2034 # used by the scripts that source it
ko=${RV_KO:?vm-run sets RV_KO: the rv.ko of the kernel it boots}
build=${RV_BUILD_DIR:-$top/build}
peer=${RV_CONN_PEER:-$build/userspace/tests/vm/rv_conn_peer}
tmp=$(mktemp -d)
pids=()

# shellcheck disable=SC2317  # called through the trap
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

t0=$SECONDS
elapsed() { echo "$((SECONDS - t0)) s"; }

kv() {
	sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" "$1" | tail -n1
}

show() {
	tap_diag "--- $1"
	tap_diag "$(tail -n "${2:-30}" "$1")"
}

load_rv() {
	modprobe -a ib_uverbs ib_cm 2>/dev/null
	# shellcheck disable=SC2086 # a list of module parameters
	insmod "$ko" ${RV_INSMOD_ARGS:-} || tap_bail "insmod $ko"
}

wait_line() {
	local file=$1 pat=$2 pid=$3 secs=$4 i
	for ((i = 0; i < secs * 10; i++)); do
		grep -q -- "$pat" "$file" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || { grep -q -- "$pat" "$file" 2>/dev/null; return; }
		sleep 0.1
	done
	return 1
}

rc_qps() {
	rdma res show qp 2>/dev/null | grep -c "link $1/.* type RC .*\\[rv\\]"
}
