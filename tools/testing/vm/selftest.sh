#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-test of the VM test bench (run on the host, as root).  Checks tap-run
# (counting, progress lines, only TAP on stdout) and dmesg-check on the host,
# then boots VMs with vm-run and checks: a command runs as root in the
# caller's directory, its exit status is propagated, its progress lines are
# timed, dmesg-check flags a WARNING: after the marker but
# not before it, --rxe 2 gives two ACTIVE rxe devices that really exchange
# packets (ib_write_bw, peer rcvd_pkts), and --two-vm does the same between
# two VMs.  TAP output; the last line is "N passed, N failed".
#
# Environment: KVER (kernel version for vm-run), RV_BUILD_DIR (cache/output
# root, default build/vm).  Logs go to $RV_BUILD_DIR/selftest/.

set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
REPO_DIR=$(cd "$BENCH_DIR/../../.." && pwd)
BUILD_DIR=${RV_BUILD_DIR:-$REPO_DIR/build/vm}
LOG=$BUILD_DIR/selftest
VM_RUN=$BENCH_DIR/vm-run

# shellcheck source=lib.sh
. "$BENCH_DIR/lib.sh"

T_START=$EPOCHREALTIME

since() {
	awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}

rm -rf "$LOG"
mkdir -p "$LOG"

# vmrun NAME [vm-run args...]: run vm-run, keep stdout/stderr in $LOG/NAME.*,
# set VM_RC and VM_SECS.
vmrun() {
	local name=$1 t0
	shift
	tap_diag "running: vm-run $*"
	t0=$EPOCHREALTIME
	VM_RC=0
	"$VM_RUN" "$@" >"$LOG/$name.out" 2>"$LOG/$name.err" </dev/null || VM_RC=$?
	VM_SECS=$(since "$t0")
	tap_diag "vm-run $name: exit status $VM_RC, ${VM_SECS}s"
}

show() {
	tap_diag "--- $1"
	tap_diag "$(tail -n "${2:-30}" "$1")"
}

# import_tap FILE: turn the TAP lines a VM printed into our own results.
import_tap() {
	local line prefix rest
	while IFS= read -r line; do
		prefix=
		if [[ "$line" =~ ^(\[[ab]\]\ )(.*)$ ]]; then
			prefix=${BASH_REMATCH[1]}
			line=${BASH_REMATCH[2]}
		fi
		if [[ "$line" =~ ^(not\ )?ok(\ [0-9]+)?(\ -)?\ ?(.*)$ ]]; then
			rest=${BASH_REMATCH[4]}
			if [ -n "${BASH_REMATCH[1]}" ]; then
				tap_not_ok "$prefix$rest"
			elif [[ "$rest" =~ \#\ *[Ss][Kk][Ii][Pp] ]]; then
				tap_skip "$prefix${rest%%#*}" "${rest#*#}"
			else
				tap_ok "$prefix$rest"
			fi
		elif [[ "$line" =~ ^[0-9]+\ passed, ]] || [[ "$line" =~ ^1\.\. ]]; then
			tap_diag "$prefix(vm) $line"
		else
			tap_diag "$prefix$line"
		fi
	done <"$1"
}

# --------------------------------------------------------------- host-only

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '#!/bin/sh\necho 1..3\necho "ok 1 - a"\necho "not ok 2 - b"\necho "ok 3 - c # SKIP x"\n' >"$tmp/t1"
printf '#!/bin/sh\necho "ok 1 - a"\nexit 4\n' >"$tmp/t2"
printf '#!/bin/sh\necho "ok 1 - a"\necho "1..1"\n' >"$tmp/t3"
chmod +x "$tmp/t1" "$tmp/t2" "$tmp/t3"
rc=0
"$BENCH_DIR/tap-run" "$tmp/t1" "$tmp/t2" "$tmp/t3" >"$LOG/tap-run.out" 2>&1 || rc=$?
# t1: 1 pass 1 fail 1 skip; t2: 1 pass + exit status + no plan; t3: 1 pass.
if [ "$rc" = 1 ] && [ "$(tail -n1 "$LOG/tap-run.out")" = "3 passed, 3 failed, 1 skipped" ]; then
	tap_ok "tap-run counts ok/not ok/SKIP, exit status and missing plan"
else
	tap_not_ok "tap-run counts ok/not ok/SKIP, exit status and missing plan" "exit $rc"
	show "$LOG/tap-run.out"
fi
# t5 reports its failure and exits 1: one failure, not two.
printf '#!/bin/sh\necho 1..2\necho "ok 1 - a"\necho "not ok 2 - b"\nexit 1\n' >"$tmp/t5"
chmod +x "$tmp/t5"
rc=0
"$BENCH_DIR/tap-run" "$tmp/t5" >"$LOG/tap-run5.out" 2>&1 || rc=$?
tap_is "tap-run counts a failing program's exit status only when it reported no failure" \
	"$rc $(tail -n1 "$LOG/tap-run5.out") $(grep -c '^not ok' "$LOG/tap-run5.out")" "1 1 passed, 1 failed 1"
# The end of a long run names what failed.
tap_is "tap-run names each failure at the end" \
	"$(grep '^# tap-run: failed: ' "$LOG/tap-run.out" | tr '\n' '|')" \
	"# tap-run: failed: b|# tap-run: failed: $tmp/t2: exit status 4|# tap-run: failed: $tmp/t2: no plan (1..N)|"
rc=0
"$BENCH_DIR/tap-run" "$tmp/t3" >"$LOG/tap-run2.out" 2>&1 || rc=$?
tap_is "tap-run exits 0 when nothing failed" "$rc $(tail -n1 "$LOG/tap-run2.out")" "0 1 passed, 0 failed"

# Progress: each program's start and end with the time, the total; a
# program's stderr and other lines that are not TAP become comments; a
# silent program gets "still running" lines.
printf '#!/bin/sh\necho 1..1\necho "progress on stderr" >&2\nsleep 2.5\necho "ok 1 - slow"\n' >"$tmp/t4"
chmod +x "$tmp/t4"
rc=0
RV_TAP_HEARTBEAT=1 "$BENCH_DIR/tap-run" "$tmp/t1" "$tmp/t4" >"$LOG/tap-run3.out" 2>"$LOG/tap-run3.err" || rc=$?
bad=$(grep -vE '^(ok|not ok)( |$)|^1\.\.[0-9]+$|^#|^[0-9]+ passed, [0-9]+ failed' "$LOG/tap-run3.out" || true)
n=0
grep -qE "^# tap-run: \[\+[0-9]+\.[0-9]s\] start $tmp/t1\$" "$LOG/tap-run3.out" && n=$((n + 1))
grep -qE "^# tap-run: \[\+[0-9]+\.[0-9]s\] done $tmp/t1: 1 passed, 1 failed, 1 skipped \([0-9]+\.[0-9] s\)\$" "$LOG/tap-run3.out" && n=$((n + 1))
grep -qxF "# progress on stderr" "$LOG/tap-run3.out" && n=$((n + 1))
grep -qE "^# tap-run: \[\+[0-9.]+s\] $tmp/t4: still running, no output for [0-9]+ s\$" "$LOG/tap-run3.out" && n=$((n + 1))
grep -qE '^# tap-run: total [0-9]+\.[0-9] s, 2 programs$' "$LOG/tap-run3.out" && n=$((n + 1))
if [ "$rc" = 1 ] && [ -z "$bad" ] && [ "$n" = 5 ] && [ ! -s "$LOG/tap-run3.err" ] &&
   [ "$(tail -n1 "$LOG/tap-run3.out")" = "2 passed, 1 failed, 1 skipped" ]; then
	tap_ok "tap-run: timed start/done lines, a total, still-running lines, only TAP on stdout"
else
	tap_not_ok "tap-run: timed start/done lines, a total, still-running lines, only TAP on stdout" \
		"exit $rc, $n of 5 progress lines, not TAP: '$bad'"
	show "$LOG/tap-run3.out"
fi

printf '%s\n' '[    1.0] WARNING: CPU: 0 PID: 1 at boot' '[    2.0] vm-run: command start X1' \
	'[    3.0] all fine' >"$tmp/d1"
printf '%s\n' '[    1.0] fine' '[    2.0] vm-run: command start X1' \
	'[    3.0] BUG: kernel NULL pointer dereference' >"$tmp/d2"
rc=0
"$BENCH_DIR/dmesg-check" -q "$tmp/d1" "vm-run: command start X1" >/dev/null || rc=$?
tap_is "dmesg-check ignores lines before the marker" "$rc" 0
rc=0
out=$("$BENCH_DIR/dmesg-check" -q "$tmp/d2" "vm-run: command start X1") || rc=$?
tap_is "dmesg-check flags BUG: after the marker, naming the line" "$rc ${out#*:3: }" \
	"1 [    3.0] BUG: kernel NULL pointer dereference"

# A listening CM id destroyed while a REQ is handled on it: 7.x prints
# the wait at once (0 ms), once per tick. A short wait passes, as do two
# (the same address again much later, and another's after a ratelimit's
# few suppressed lines); 11 lines of one wait fail, as do a long wait's
# many suppressed lines and a wait in any other state.
lw='cm_destroy_id_wait_timeout: cm_id=0000000012f2ccb2 timed out. state'
lw2='cm_destroy_id_wait_timeout: cm_id=00000000ddd34f5d timed out. state'
sup='cm_destroy_id_wait_timeout:'
printf '%s\n' "[ 1.0] $lw 1 -> 0, refcnt=1" "[ 1.1] $lw 1 -> 0, refcnt=1" >"$tmp/d3"
for i in $(seq 10 20); do echo "[ 2.$i] $lw 1 -> 0, refcnt=1"; done >"$tmp/d4"
echo "[ 3.0] $lw 9 -> 0, refcnt=1" >"$tmp/d5"
{
	for i in $(seq 10 19); do echo "[ 4.0$i] $lw 1 -> 0, refcnt=1"; done
	echo "[ 9.5] $lw 1 -> 0, refcnt=0"
	echo "[ 14.0] $sup 1 callbacks suppressed"
	for i in $(seq 10 19); do echo "[ 14.0$i] $lw2 1 -> 0, refcnt=1"; done
} >"$tmp/d6"
{
	echo "[ 5.0] $lw 1 -> 0, refcnt=1"
	echo "[ 10.0] $sup 4990 callbacks suppressed"
	echo "[ 10.0] $lw 1 -> 0, refcnt=1"
} >"$tmp/d7"
rcs=
for d in d3 d4 d5 d6 d7; do
	rc=0
	"$BENCH_DIR/dmesg-check" -q "$tmp/$d" >/dev/null || rc=$?
	rcs="$rcs $rc"
done
tap_is "dmesg-check: short waits on a listening CM id pass; 11 lines of one wait, \
a long one (4990 suppressed), one in another state fail" \
	"$rcs" " 0 1 1 0 1"

# --------------------------------------------------------------- one VM

# shellcheck disable=SC2016  # expanded in the VM
vmrun boot --out "$LOG/boot" -- sh -c 'echo "hello from $(hostname) uid=$(id -u) cwd=$(pwd) RV_VM=$RV_VM"; exit 3'
BOOT_SECS=$(sed -n 's/.*\[+\([0-9.]*\)s\] booted.*/\1/p' "$LOG/boot.err" | head -n1)
RUN1_SECS=$VM_SECS
want="hello from rv-vm uid=0 cwd=$(pwd -P) RV_VM=1"
if grep -qxF "$want" "$LOG/boot.out"; then
	tap_ok "VM boots and runs the command as root in the caller's directory"
else
	tap_not_ok "VM boots and runs the command as root in the caller's directory" "want: $want"
	show "$LOG/boot.out"
	show "$LOG/boot.err"
fi
tap_is "exit status 3 of the command is vm-run's exit status" "$VM_RC" 3
if [ -s "$LOG/boot/dmesg.txt" ] && [ -s "$LOG/boot/console.log" ] &&
   ! grep -q 'kernel log check failed' "$LOG/boot.err"; then
	tap_ok "dmesg.txt and console.log saved, boot log passes dmesg-check"
else
	tap_not_ok "dmesg.txt and console.log saved, boot log passes dmesg-check"
	show "$LOG/boot.err"
fi
# The crng's "init done" patches kernel text (a static key); under TCG that
# must happen while one CPU runs (vm-run's CPU has rdrand), not later.
crng=$(grep -n 'random: crng init done' "$LOG/boot/console.log" | head -n1 | cut -d: -f1)
smp=$(grep -n 'smp: Bringing up secondary CPUs' "$LOG/boot/console.log" | head -n1 | cut -d: -f1)
if [ -n "$crng" ] && [ -n "$smp" ] && [ "$crng" -lt "$smp" ]; then
	tap_ok "the guest's crng is ready before its second CPU starts"
else
	tap_not_ok "the guest's crng is ready before its second CPU starts" \
		"crng init done at console line ${crng:-none}, secondary CPUs at ${smp:-none}"
fi
# So must every static key the boot flips (sched_clock's at late_initcall):
# the kernel boots on one CPU (maxcpus=1) and stage 1 brings the second
# online, after the kernel ran /init.
log=$LOG/boot/console.log
init=$(grep -n 'Run /init as init process' "$log" | head -n1 | cut -d: -f1)
cpu1=$(grep -n 'smpboot: Booting Node 0 Processor 1 ' "$log" | head -n1 | cut -d: -f1)
clock=$(grep -n 'sched_clock: Marking stable' "$log" | head -n1 | cut -d: -f1)
if grep -q 'smp: Brought up 1 node, 1 CPU' "$log" && [ -n "$init" ] &&
   [ -n "$cpu1" ] && [ "$init" -lt "$cpu1" ] && [ "${clock:-0}" -lt "$cpu1" ]; then
	tap_ok "the guest boots on one CPU and brings its second online from /init"
else
	tap_not_ok "the guest boots on one CPU and brings its second online from /init" \
		"/init at console line ${init:-none}, CPU 1 online at ${cpu1:-none}, sched_clock stable at ${clock:-none}"
fi
tap_diag "boot time (vm-run start to guest userspace): ${BOOT_SECS:-?}s, whole run ${RUN1_SECS}s"
# The accelerator: what the probe chose (kvm, or tcg and why) is what the
# run says it used and what the guest's kernel saw (only a KVM guest logs
# "Hypervisor detected: KVM").
accel=$("$VM_RUN" --print-accel 2>"$LOG/accel.err") || accel="error: $(tail -n1 "$LOG/accel.err")"
tap_diag "accelerator on this host: $accel"
used=$(sed -n 's/^vm-run: \[+[0-9.]*s\] booting kernel [^ ]* (\([a-z]*\),.*/\1/p' "$LOG/boot.err")
said=$(sed -n 's/^vm-run: \[+[0-9.]*s\] accelerator: //p' "$LOG/boot.err")
guest=tcg
! grep -q 'Hypervisor detected: KVM' "$LOG/boot/console.log" || guest=kvm
tap_is "vm-run: the accelerator the probe chose is the one it names and the guest runs on" \
	"$said|$used|$guest" "$accel|${accel%%:*}|${accel%%:*}"
# Under TCG the guest's TSC is the host's: vm-run measures its rate
# (tsc-khz.c) and the guest takes it (tsc_early_khz=) instead of its own
# early calibration, which a busy host can throw far off.
if [ "$used" = tcg ] && grep -qw constant_tsc /proc/cpuinfo; then
	host_khz=$(sed -n 's/^vm-run: \[+[0-9.]*s\] guest TSC rate: the host.s, \([0-9]*\) kHz.*/\1/p' "$LOG/boot.err")
	# "Detected X MHz TSC" when the CPU's own rate differs, else the
	# one line "Detected X MHz processor" gives both.
	guest_khz=$(sed -n 's/.*tsc: Detected \([0-9]*\)\.\([0-9]*\) MHz TSC.*/\1\2/p' "$LOG/boot/console.log" | head -n 1)
	[ -n "$guest_khz" ] || guest_khz=$(sed -n 's/.*tsc: Detected \([0-9]*\)\.\([0-9]*\) MHz processor.*/\1\2/p' "$LOG/boot/console.log" | head -n 1)
	tap_is "vm-run: a TCG guest's TSC rate is the host's, as measured (tsc_early_khz=)" \
		"${guest_khz:-none}" "${host_khz:-unmeasured}"
else
	tap_skip "vm-run: a TCG guest's TSC rate is the host's, as measured (tsc_early_khz=)" \
		"not TCG, or the host's TSC has no constant rate"
fi
# Without a usable KVM device vm-run falls back to TCG and says why.
RV_VM_KVM_DEVICE=/nonexistent/kvm vmrun nokvm --out "$LOG/nokvm" -- true
if [ "$VM_RC" = 0 ] &&
   grep -q 'accelerator: tcg: /nonexistent/kvm does not exist' "$LOG/nokvm.err" &&
   grep -q 'booting kernel [^ ]* (tcg,' "$LOG/nokvm.err" &&
   ! grep -q 'Hypervisor detected: KVM' "$LOG/nokvm/console.log"; then
	tap_ok "vm-run: no KVM device, the run falls back to TCG and says why"
else
	tap_not_ok "vm-run: no KVM device, the run falls back to TCG and says why" "exit $VM_RC"
	show "$LOG/nokvm.err"
fi
rc=0
"$VM_RUN" --accel vmx --print-accel >/dev/null 2>"$LOG/accel-bad.err" || rc=$?
tap_is "vm-run: an unknown --accel is refused" "$rc" 2
# Every progress line says when; the last one gives the total.
untimed=$(grep -vE '^vm-run: (\[\+[0-9]+\.[0-9]{2}s\] |total [0-9]+\.[0-9]{2} s, exit status )' "$LOG/boot.err" || true)
if [ -z "$untimed" ] && grep -q '^vm-run: \[+[0-9.]*s\] command start: ' "$LOG/boot.err" &&
   tail -n1 "$LOG/boot.err" | grep -qE '^vm-run: total [0-9.]+ s, exit status 3$'; then
	tap_ok "vm-run: every progress line has the time since the start, the last one the total"
else
	tap_not_ok "vm-run: every progress line has the time since the start, the last one the total" \
		"untimed: '$untimed'"
	show "$LOG/boot.err"
fi

vmrun dmesg --out "$LOG/dmesg" -- sh -c \
	'echo "<4>WARNING: selftest-injected" >/dev/kmsg; echo "<5>selftest-second-marker" >/dev/kmsg'
tap_is "a WARNING: after the marker fails the run (status 122)" "$VM_RC" 122
if grep -q 'dmesg-check: .*WARNING: selftest-injected' "$LOG/dmesg.err"; then
	tap_ok "the failure message names the offending line"
else
	tap_not_ok "the failure message names the offending line"
	show "$LOG/dmesg.err"
fi
rc=0
"$BENCH_DIR/dmesg-check" -q "$LOG/dmesg/dmesg.txt" selftest-second-marker >/dev/null || rc=$?
tap_is "dmesg-check: the same WARNING: before a later marker is not flagged" "$rc" 0

# --------------------------------------------------------------- the CPU

# QEMU 7.2's TCG corrupts EFLAGS through CMPXCHG16B (cx16-flags.c), which
# kills 6.12 guests in SLUB; vm-run's default CPU model hides the
# instruction. The bed's CPU must show no corrupted flags; the same check
# with cx16 exposed tells whether this QEMU still has the bug.
cx16=$LOG/cx16-flags
if gcc -O2 -Wall -Werror -o "$cx16" "$BENCH_DIR/cx16-flags.c" 2>"$LOG/cx16-build.err"; then
	vmrun cx16 --smp 1 --out "$LOG/cx16" -- "$cx16" 10
	case "$VM_RC" in
	0) tap_ok "the bed's CPU: CMPXCHG16B keeps EFLAGS sound ($(tail -n1 "$LOG/cx16.out"))" ;;
	2) tap_ok "the bed's CPU hides CMPXCHG16B" ;;
	*) tap_not_ok "the bed's CPU: CMPXCHG16B keeps EFLAGS sound or is hidden" \
		"cx16-flags exit $VM_RC: $(tail -n1 "$LOG/cx16.out")"
	   show "$LOG/cx16.err" ;;
	esac
	# shellcheck disable=SC2016  # expanded in the VM
	RV_VM_CPU=qemu64 vmrun cx16-exposed --smp 1 --out "$LOG/cx16-exposed" -- \
		sh -c '"$1" 10 cmpxchg16b; echo "exit $?"; "$1" 10 cmpxchg; echo "exit $?"' sh "$cx16"
	tap_diag "with cx16 exposed ($(qemu-system-x86_64 --version | head -n1)):"
	tap_diag "  cmpxchg16b: $(sed -n 2p "$LOG/cx16-exposed.out")"
	tap_diag "  cmpxchg (control): $(sed -n 5p "$LOG/cx16-exposed.out")"
else
	tap_not_ok "the bed's CPU: cx16-flags builds" "$(cat "$LOG/cx16-build.err")"
fi

# --------------------------------------------------------------- rxe

vmrun rxe2 --rxe 2 --out "$LOG/rxe2" -- "$BENCH_DIR/tap-run" "$BENCH_DIR/selftest-guest.sh"
RXE_SECS=$VM_SECS
import_tap "$LOG/rxe2.out"
tap_is "vm-run --rxe 2 with ib_write_bw exits 0" "$VM_RC" 0
[ "$VM_RC" = 0 ] || show "$LOG/rxe2.err"

vmrun twovm --two-vm --out "$LOG/twovm" -- "$BENCH_DIR/tap-run" "$BENCH_DIR/selftest-guest.sh"
TWOVM_SECS=$VM_SECS
import_tap "$LOG/twovm.out"
if [ "$VM_RC" = 0 ] && [ -s "$LOG/twovm/dmesg-a.txt" ] && [ -s "$LOG/twovm/dmesg-b.txt" ]; then
	tap_ok "vm-run --two-vm exits 0, dmesg-a.txt and dmesg-b.txt saved"
else
	tap_not_ok "vm-run --two-vm exits 0, dmesg-a.txt and dmesg-b.txt saved" "exit $VM_RC"
	show "$LOG/twovm.err"
fi

# A VM that outlives the other by RV_VM_PEER_GRACE seconds is taken as
# hung: killed, the run failing as on timeout, not held until --timeout.
# shellcheck disable=SC2016  # expanded in the VM
RV_VM_PEER_GRACE=3 vmrun grace --two-vm --timeout 300 --out "$LOG/grace" -- \
	sh -c '[ "$RV_VM_ROLE" != b ] || sleep 250'
tap_is "vm-run --two-vm: a VM still running RV_VM_PEER_GRACE s after the other ended is killed (status 124, well before --timeout)" \
	"$VM_RC $(grep -c 'VM b: still running 3s after another VM of the run ended' "$LOG/grace.err") $([ "${VM_SECS%.*}" -lt 120 ] && echo early)" \
	"124 1 early"

tap_diag "times: boot ${BOOT_SECS:-?}s, plain run ${RUN1_SECS}s, --rxe 2 run ${RXE_SECS}s, --two-vm run ${TWOVM_SECS}s"
tap_diag "selftest: total $(since "$T_START") s (logs in $LOG)"
tap_done
