#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The ioctl/mmap fuzzer (userspace/tests/vm/fuzz, rv_fuzz) against rv.ko: a
# campaign with a fixed seed, then no rv verbs object left in "rdma
# resource show" once every fuzz process is gone, rmmod, and no kmemleak
# report. Runs as root inside the test VM (tools/testing/vm/vm-run
# --rxe 2), prints TAP.
#
#   RV_KO            rv.ko (default: the one built in the tree)
#   RV_FUZZ          rv_fuzz (default: RV_BUILD_DIR/userspace/tests/vm/fuzz/rv_fuzz)
#   RV_FUZZ_CALLS    calls of the campaign (default 100000)
#   RV_FUZZ_SEED     its seed (default 1)
#   RV_FUZZ_SECONDS  its time bound (default 1800)
#   RV_FUZZ_PROCS, RV_FUZZ_THREADS   processes, threads each (4, 2)
#   RV_FUZZ_ARGS     more rv_fuzz options (e.g. --skip fork)
#
# Files in RV_OUT: fuzz-summary.json (rv_fuzz --json), fuzz-stderr.txt
# (its failures and progress), fuzz-kmsg.txt (the kernel log, followed
# during the campaign so that nothing is lost to the ring buffer),
# fuzz-kmemleak.txt.
set -uo pipefail

top=$(cd "$(dirname "$0")/../../../.." && pwd)
bench=${RV_BENCH_DIR:-$top/tools/testing/vm}
# shellcheck source=tools/testing/vm/lib.sh
. "$bench/lib.sh"

ko=${RV_KO:?vm-run sets RV_KO: the rv.ko of the kernel it boots}
fuzz=${RV_FUZZ:-${RV_BUILD_DIR:-$top/build}/userspace/tests/vm/fuzz/rv_fuzz}
calls=${RV_FUZZ_CALLS:-100000}
seed=${RV_FUZZ_SEED:-1}
seconds=${RV_FUZZ_SECONDS:-1800}
procs=${RV_FUZZ_PROCS:-4}
threads=${RV_FUZZ_THREADS:-2}
out=${RV_OUT:-/tmp}
leak=/sys/kernel/debug/kmemleak
json=$out/fuzz-summary.json
errlog=$out/fuzz-stderr.txt
kmsg=$out/fuzz-kmsg.txt
marker="rv-fuzz: campaign start seed $seed"

tap_plan 6

[ -x "$fuzz" ] || tap_bail "no rv_fuzz at $fuzz (build userspace first)"

# rv.ko's dependencies: insmod does not load them.
IFS=, read -r -a deps <<<"$(modinfo -F depends "$ko" 2>/dev/null)"
modprobe -a ib_cm "${deps[@]}" 2>/dev/null || true
# shellcheck disable=SC2086 # a list of module parameters
if insmod "$ko" ${RV_INSMOD_ARGS:-}; then
	tap_ok "insmod rv.ko"
else
	tap_bail "insmod $ko failed"
fi

# kmemleak's own scans take minutes of the debug kernel's CPU under TCG:
# it scans when asked to, at the end.
[ -w "$leak" ] && echo scan=off >"$leak"

# Follow the kernel log during the campaign: a busy run can overwrite
# the ring buffer before vm-run saves it. Into the guest's tmpfs first:
# every write to RV_OUT is a 9p round trip.
kmsg_tmp=$(mktemp)
dmesg --follow >"$kmsg_tmp" 2>/dev/null &
follower=$!
echo "<5>$marker" >/dev/kmsg

# rxe warns about every registration it cannot pin; the UART would make
# that the bottleneck. The log keeps everything.
read -r console_level _ </proc/sys/kernel/printk
dmesg -n 4 2>/dev/null || true

tap_step "campaign: $calls calls, seed $seed, at most $seconds s (its progress: $errlog)"
# shellcheck disable=SC2086  # RV_FUZZ_ARGS is a list of options
"$fuzz" --seed "$seed" --calls "$calls" --seconds "$seconds" \
	--procs "$procs" --threads "$threads" --json --progress 30 \
	${RV_FUZZ_ARGS:-} >"$json" 2>"$errlog"
rc=$?
dmesg -n "$console_level" 2>/dev/null || true
sed 's/^/# /' "$errlog" | head -200

made=$(sed -n 's/^  "calls": \([0-9]*\),$/\1/p' "$json")
failures=$(sed -n 's/^  "failures": \([0-9]*\),$/\1/p' "$json")
elapsed=$(sed -n 's/^  "elapsed_s": \([0-9.]*\),$/\1/p' "$json")
tap_diag "seed $seed: ${made:-?} calls in ${elapsed:-?} s, ${failures:-?} failures (exit status $rc)"
tap_diag "errno: $(sed -n '/^  "errno": {/,/^  }/p' "$json" | tr -d ' \n' | sed 's/"errno"://')"
if [ "$rc" = 0 ] && [ "${made:-0}" -ge "$calls" ]; then
	tap_ok "campaign of $calls calls, seed $seed"
else
	tap_not_ok "campaign of $calls calls, seed $seed" \
		"rv_fuzz exit status $rc, ${made:-?} calls, ${failures:-?} failures; see $errlog"
fi

# Every fuzz process is gone (rv_fuzz reaps them); what they held is torn
# down from rv's workqueue. Kernel objects show as comm "[rv]".
left=""
for _ in $(seq 120); do
	left=$(for r in qp cq mr pd; do rdma resource show "$r" 2>/dev/null; done |
		grep -F '[rv]')
	[ -z "$left" ] && break
	sleep 0.5
done
if [ -z "$left" ]; then
	tap_ok "no rv object left in rdma resource show"
else
	tap_not_ok "no rv object left in rdma resource show" "$left"
fi

sleep 1
kill "$follower" 2>/dev/null
wait "$follower" 2>/dev/null
cp "$kmsg_tmp" "$kmsg" && rm -f "$kmsg_tmp"
if reports=$("$bench/dmesg-check" "$kmsg" "$marker" 2>&1); then
	tap_ok "no kernel report during the campaign"
else
	tap_not_ok "no kernel report during the campaign" "$(echo "$reports" | head -20)"
fi

if rmmod rv; then
	tap_ok "rmmod rv"
else
	tap_not_ok "rmmod rv" "$(lsmod | grep '^rv ')"
fi

# kmemleak reports objects older than 5 s, and only after a second scan
# has seen them unreferenced (tools/testing/kernel/kunit-guest.sh).
if [ -w "$leak" ]; then
	sleep 6
	echo scan >"$leak"
	echo scan >"$leak"
	cat "$leak" >"$out/fuzz-kmemleak.txt"
	echo scan=on >"$leak"
	if [ -s "$out/fuzz-kmemleak.txt" ]; then
		tap_not_ok "no kmemleak report after rmmod" \
			"$(grep -c 'unreferenced object' "$out/fuzz-kmemleak.txt") objects:
$(head -40 "$out/fuzz-kmemleak.txt")"
	else
		tap_ok "no kmemleak report after rmmod"
	fi
else
	tap_skip "no kmemleak report after rmmod" "no $leak (not the debug kernel)"
fi

tap_done
