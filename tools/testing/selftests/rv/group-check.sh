#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# group-check.sh GROUP [kmemleak]: what the kernel says about a test group
# that just ran, as TAP. Runs as root inside the test VM, between the
# groups of debug-suite.sh.
#   - "kernel log clean during GROUP": no BUG, WARNING, KASAN, lockdep,
#     refcount or kmemleak report (tools/testing/vm/dmesg-check) since the
#     line "rv-debug-suite: start", or since the last group's check. The
#     log is saved to $RV_OUT/dmesg-GROUP.txt, then cleared, so that a
#     group that logs a lot (the fault sweep names each failed allocation)
#     cannot push another group's reports out of the kernel's buffer.
#   - with "kmemleak" (vm-suite.sh asks for it after the last group):
#     "kmemleak: nothing leaked up to GROUP": kmemleak scans (it reports
#     objects unreferenced for 5 s that a second scan sees unchanged),
#     its list must be empty; then the list is cleared. Skipped without
#     kmemleak (Debian's kernel). One scan for the whole suite, not one
#     per group: a scan takes tens of seconds of the debug kernel under
#     TCG, and a report's backtrace names what leaked (the fault sweep
#     and the fuzzer scan after themselves too).
set -uo pipefail

group=${1:?usage: group-check.sh GROUP [kmemleak]}
scan=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
leak=/sys/kernel/debug/kmemleak
log=${RV_OUT:-/tmp}/dmesg-$group.txt

if [ "$scan" = kmemleak ]; then echo 1..2; else echo 1..1; fi
# The scan first: what it reports lands in the log checked below.
found=
if [ "$scan" = kmemleak ] && [ -w "$leak" ]; then
	sleep 6
	echo scan >"$leak"
	echo scan >"$leak"
	found=$(cat "$leak")
	echo clear >"$leak"
fi

dmesg >"$log"
if problems=$("$top/tools/testing/vm/dmesg-check" -e 'DEBUG_LOCKS_WARN_ON' \
	"$log" 'rv-debug-suite: start' 2>&1); then
	echo "ok 1 - kernel log clean during $group"
else
	echo "not ok 1 - kernel log clean during $group"
	head -n 40 <<<"$problems" | sed 's/^/# /'
fi
dmesg -C

if [ "$scan" != kmemleak ]; then
	:
elif [ ! -w "$leak" ]; then
	echo "ok 2 - kmemleak: nothing leaked up to $group # SKIP no $leak in this kernel"
elif [ -z "$found" ]; then
	echo "ok 2 - kmemleak: nothing leaked up to $group"
else
	echo "not ok 2 - kmemleak: $(grep -c 'unreferenced object' <<<"$found") objects leaked up to $group"
	head -n 60 <<<"$found" | sed 's/^/# /'
fi
