#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kmemleak.sh GROUP: one TAP point, "nothing leaked during GROUP". Has
# kmemleak scan (it reports objects unreferenced for 5 s that a second scan
# sees unchanged), prints what it found, then clears the list so that the
# next group starts clean. Without kmemleak (Debian's kernel): skipped.
# Runs as root inside the test VM, between the groups of debug-suite.sh.
set -uo pipefail

group=${1:?usage: kmemleak.sh GROUP}
leak=/sys/kernel/debug/kmemleak

if [ ! -w "$leak" ]; then
	echo "1..0 # SKIP no $leak in this kernel"
	exit 0
fi
echo 1..1
sleep 6
echo scan >"$leak"
echo scan >"$leak"
found=$(cat "$leak")
echo clear >"$leak"
if [ -z "$found" ]; then
	echo "ok 1 - kmemleak: nothing leaked during $group"
else
	echo "not ok 1 - kmemleak: $(grep -c 'unreferenced object' <<<"$found") objects leaked during $group"
	head -n 60 <<<"$found" | sed 's/^/# /'
fi
