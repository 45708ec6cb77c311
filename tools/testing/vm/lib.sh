# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for shell tests run under vm-run.  Source it:
#   . "${RV_BENCH_DIR:-$(dirname "$0")/../../tools/testing/vm}/lib.sh"
#
# rxe helpers (read sysfs of the rdma devices):
#   rxe_rcvd_pkts DEV        packets received by DEV (hw_counters/rcvd_pkts)
#   rxe_sent_pkts DEV        packets sent by DEV (hw_counters/sent_pkts)
#   rxe_counter DEV NAME     any hw counter of port 1
#   rxe_port_state DEV       e.g. "ACTIVE"
#   rv_unload                rmmod rv, retrying for up to 10 s
#   rxe_wait_active DEV [S]  wait up to S (default 10) seconds for ACTIVE
#   rxe_gid_index DEV IP     GID index of DEV's RoCE v2 GID for IPv4 IP
#   rv_node N                Nth (0-based) word of RV_NODES; rv_netdev N and
#   rv_node_ip N             rv_node_ip N likewise for RV_NETDEVS/RV_NODE_IPS
#
# TAP helpers (one test program = one TAP stream):
#   tap_plan N               print "1..N" (optional: tap_done prints the plan
#                            at the end if none was printed)
#   tap_ok NAME              "ok N - NAME"
#   tap_not_ok NAME [DIAG]   "not ok N - NAME" plus "# DIAG"
#   tap_skip NAME REASON     "ok N - NAME # SKIP REASON"
#   tap_check NAME CMD...    run CMD, ok if it exits 0
#   tap_is NAME GOT WANT     ok if the strings are equal
#   tap_diag TEXT...         "# TEXT"
#   tap_step TEXT...         "# [+N s] TEXT", N the seconds since lib.sh was
#                            sourced: a long step about to start
#   tap_bail REASON          "Bail out! REASON", exit 1
#   tap_done                 plan if needed, summary "N passed, N failed[,
#                            N skipped]", returns 0 iff nothing failed
#   (tap_summary prints the summary line only.)

: "${TAP_N:=0}"
: "${TAP_PASS:=0}"
: "${TAP_FAIL:=0}"
: "${TAP_SKIP:=0}"
: "${TAP_PLANNED:=}"
TAP_T0=$SECONDS

# The core caches hw counters for "lifespan" ms after a sysfs read; wait
# that out (plus rounding) so that every read is a fresh one.
rxe_counter() {
	local dir="/sys/class/infiniband/$1/ports/1/hw_counters" ms
	ms=$(cat "$dir/lifespan")
	sleep "$((ms + 20))e-3"
	cat "$dir/$2"
}

# rv_unload: rmmod rv, trying again for up to 10 s while the last files
# of exiting processes are closed.
rv_unload() {
	local i
	for ((i = 0; i < 50; i++)); do
		rmmod rv 2>/dev/null && return 0
		sleep 0.2
	done
	rmmod rv
}

rxe_rcvd_pkts() {
	rxe_counter "$1" rcvd_pkts
}

rxe_sent_pkts() {
	rxe_counter "$1" sent_pkts
}

rxe_port_state() {
	local s
	s=$(cat "/sys/class/infiniband/$1/ports/1/state") || return 1
	echo "${s#*: }"
}

rxe_wait_active() {
	local dev=$1 secs=${2:-10} i
	for ((i = 0; i < secs * 10; i++)); do
		[ "$(rxe_port_state "$dev" 2>/dev/null)" = ACTIVE ] && return 0
		sleep 0.1
	done
	return 1
}

rxe_gid_index() {
	local dev=$1 ip=$2 want f idx a b c d
	IFS=. read -r a b c d <<<"$ip"
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
	for f in "/sys/class/infiniband/$dev/ports/1/gids/"*; do
		idx=${f##*/}
		[ "$(cat "$f" 2>/dev/null)" = "$want" ] || continue
		case "$(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$idx" 2>/dev/null)" in
		*v2*) echo "$idx"; return 0 ;;
		esac
	done
	return 1
}

_rv_word() {
	local -a w
	read -r -a w <<<"$1"
	[ "$2" -lt "${#w[@]}" ] || return 1
	echo "${w[$2]}"
}

rv_node() { _rv_word "${RV_NODES:-}" "$1"; }
rv_netdev() { _rv_word "${RV_NETDEVS:-}" "$1"; }
rv_node_ip() { _rv_word "${RV_NODE_IPS:-}" "$1"; }

tap_plan() {
	TAP_PLANNED=$1
	echo "1..$1"
}

tap_diag() {
	local line
	while IFS= read -r line; do
		echo "# $line"
	done <<<"$*"
}

tap_step() {
	echo "# [+$((SECONDS - TAP_T0)) s] $*"
}

tap_ok() {
	TAP_N=$((TAP_N + 1))
	TAP_PASS=$((TAP_PASS + 1))
	echo "ok $TAP_N - $1"
}

tap_not_ok() {
	TAP_N=$((TAP_N + 1))
	TAP_FAIL=$((TAP_FAIL + 1))
	echo "not ok $TAP_N - $1"
	[ "$#" -lt 2 ] || tap_diag "$2"
}

tap_skip() {
	TAP_N=$((TAP_N + 1))
	TAP_SKIP=$((TAP_SKIP + 1))
	echo "ok $TAP_N - $1 # SKIP ${2:-}"
}

tap_check() {
	local name=$1
	shift
	if "$@"; then
		tap_ok "$name"
	else
		tap_not_ok "$name" "command failed: $*"
	fi
}

tap_is() {
	if [ "$2" = "$3" ]; then
		tap_ok "$1"
	else
		tap_not_ok "$1" "got '$2', want '$3'"
	fi
}

tap_bail() {
	echo "Bail out! $*"
	exit 1
}

tap_summary() {
	local s="$TAP_PASS passed, $TAP_FAIL failed"
	[ "$TAP_SKIP" = 0 ] || s+=", $TAP_SKIP skipped"
	echo "$s"
}

tap_done() {
	[ -n "$TAP_PLANNED" ] || echo "1..$TAP_N"
	tap_summary
	[ "$TAP_FAIL" = 0 ] && { [ -z "$TAP_PLANNED" ] || [ "$TAP_PLANNED" = "$TAP_N" ]; }
}

# ko_skip_other_kernel KO WHAT: when the module KO is built for another
# kernel than the one running, skip the whole group (TAP) and exit.
ko_skip_other_kernel() {
	local built_for
	built_for=$(modinfo -F vermagic "$1" | cut -d' ' -f1)
	[ "$built_for" = "$(uname -r)" ] && return 0
	echo "1..0 # SKIP $2 built for $built_for, this kernel is $(uname -r)"
	exit 0
}
