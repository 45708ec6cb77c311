#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of kunit.sh; runs inside a vm-run VM booted with the debug
# kernel. Loads RV_KO (rv.ko) and RV_KUNIT_KO (rv_kunit.ko, the KUnit
# suites, which run while it loads), saves the suites' results, unloads
# both and saves what kmemleak finds. Everything goes to files in RV_OUT; kunit.sh
# reads them on the host:
#   kunit-results-SUITE.txt  /sys/kernel/debug/kunit/SUITE/results (KTAP),
#                       for each of RV_KUNIT_SUITES (default: every
#                       rv_* suite in /sys/kernel/debug/kunit)
#   kmemleak.txt        /sys/kernel/debug/kmemleak after rmmod and scans
#   kunit-guest.status  "insmod N", "rmmod N" (exit statuses)
#   dmesg-guest.txt     the kernel log at the end
# (vm-run also saves the log at power-off, to RV_OUT/dmesg.txt.)

set -u

rv_ko=${RV_KO:?}
ko=${RV_KUNIT_KO:?}
suites=${RV_KUNIT_SUITES:-}
out=${RV_OUT:?}
leak=/sys/kernel/debug/kmemleak
status=$out/kunit-guest.status

rm -f "$out"/kunit-results*.txt "$out/kmemleak.txt" "$out/dmesg-guest.txt"
: >"$status"
echo "<5>rv-kunit: start" >/dev/kmsg

# rv.ko's dependencies (ib_core, ...) come from the debug kernel's modules.
IFS=, read -r -a deps <<<"$(modinfo -F depends "$rv_ko")"
if [ "${#deps[@]}" -gt 0 ]; then
	modprobe -a "${deps[@]}" || echo "modprobe ${deps[*]} failed"
fi

rc=0
insmod "$rv_ko" || rc=$?
[ "$rc" != 0 ] || insmod "$ko" || rc=$?
echo "insmod $rc" >>"$status"
# Without a list: every rv suite the module registered.
if [ -z "$suites" ]; then
	for d in /sys/kernel/debug/kunit/rv_*; do
		[ -d "$d" ] && suites+=" ${d##*/}"
	done
fi
for suite in $suites; do
	results=/sys/kernel/debug/kunit/$suite/results
	if [ -r "$results" ]; then
		cat "$results" >"$out/kunit-results-$suite.txt"
	else
		echo "no $results"
	fi
done
if [ "$rc" = 0 ]; then
	rc=0
	rmmod rv_kunit || rc=$?
	[ "$rc" != 0 ] || rmmod rv || rc=$?
	echo "rmmod $rc" >>"$status"
fi

# kmemleak reports only objects older than 5 s, and only after a second
# scan has seen them unchanged.
if [ -w "$leak" ]; then
	sleep 6
	echo scan >"$leak"
	echo scan >"$leak"
	cat "$leak" >"$out/kmemleak.txt"
	# What comes after (the debug tier's groups) reports its own.
	echo clear >"$leak"
else
	echo "no $leak" | tee "$out/kmemleak.txt"
fi
echo "<5>rv-kunit: end" >/dev/kmsg
# The kernel log now: in the debug tier's long boot the ring buffer loses
# the start before vm-run saves it.
dmesg >"$out/dmesg-guest.txt"
exit 0
