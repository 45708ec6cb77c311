#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Debug-kernel tier: the module tests again, on the debug kernel (KASAN,
# lockdep, atomic-sleep checks, kmemleak, fault injection; see
# tools/testing/kernel/debug.config). Builds that kernel once (cached
# outside the clone, tools/testing/kernel/debug-kernel.sh) and rv.ko
# against it, boots it with two rxe nodes and runs
# tools/testing/selftests/rv/debug-suite.sh: the VM suite's groups, the
# fuzzer's fixed-seed campaign and the allocation-failure sweep, each
# followed by a kmemleak scan. Any KASAN, lockdep, atomic-sleep, refcount
# or kmemleak report after the tests start fails the run (vm-run's kernel
# log check); what the kernel reports during its own boot is saved to
# build/vm/debug/kmemleak-boot.txt and the boot log, and does not count.
#
# The debug kernel moves rxe data ~30x slower: the data-integrity test
# moves RV_CONN_TEST_BYTES (default here 8M) instead of 256 MiB, and conn.sh's
# transfers RV_CONN_SH_BYTES (8 MiB) instead of 32 MiB.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
# Which debug kernel: the newest 7.x, "7" (make check), or 6.1 (make
# check-full adds it).
series=${RV_DEBUG_SERIES:-7}
out=$build/vm/debug-$series
mkdir -p "$out"

# Progress on stderr: "# check-debug-vm: [+N s] ...", the total at the end.
t0=$SECONDS
step() { echo "# check-debug-vm: [+$((SECONDS - t0)) s] $*" >&2; }
trap 'echo "# check-debug-vm: total $((SECONDS - t0)) s" >&2' EXIT

bail() {
	echo "Bail out! $*"
	exit 1
}

step "the debug kernel (tools/testing/kernel/debug-kernel.sh; built once, then cached)"
"$top/tools/testing/kernel/debug-kernel.sh" "$series" >"$out/kernel.env" ||
	bail "building the debug kernel failed"
RV_DEBUG_KDIR='' RV_DEBUG_DIR='' RV_DEBUG_KVER=''
# shellcheck source=/dev/null
. "$out/kernel.env"
if [ ! -d "$RV_DEBUG_KDIR" ] || [ ! -d "$RV_DEBUG_DIR" ]; then
	bail "debug-kernel.sh gave no kernel"
fi

step "building rv.ko and rv_kunit.ko (its KUnit suites) against $RV_DEBUG_KVER"
ko=$("$top/tools/build-module.sh" -o "$build/modules" "$RV_DEBUG_KDIR" \
	-- CONFIG_INFINIBAND_RV_KUNIT_TEST=m) ||
	bail "building rv.ko for the debug kernel failed"
kunit_ko=${ko%/*}/rv_kunit.ko
[ -f "$kunit_ko" ] || bail "no $kunit_ko"

step "building siw.ko against $RV_DEBUG_KVER (tools/testing/kernel/siw.sh)"
"$top/tools/testing/kernel/siw.sh" -o "$build/siw" "$RV_DEBUG_KDIR" >/dev/null ||
	step "no siw.ko for $RV_DEBUG_KVER: its test skips (see $build/siw/$RV_DEBUG_KVER/unavailable)"

step "booting $RV_DEBUG_KVER with two rxe nodes: debug-suite.sh"
start=$SECONDS
rc=0
# KUnit runs first in the same boot; kunit.sh reports it (RV_KUNIT_FROM).
rm -rf "$out/kunit"
# kasan_multi_shot: every KASAN report, not only the first, reaches dmesg.
RV_KUNIT_KO=$kunit_ko RV_KO=$ko RV_CONN_TEST_BYTES=${RV_CONN_TEST_BYTES:-8M} \
	RV_VM_CMDLINE="${RV_VM_CMDLINE:-kasan_multi_shot}" \
	RV_CONN_SH_BYTES=${RV_CONN_SH_BYTES:-$((8 << 20))} \
	"$top/tools/testing/vm/vm-run" --kernel-dir "$RV_DEBUG_DIR" --rxe 2 \
	--timeout "${RV_DEBUG_TIMEOUT:-3600}" --out "$out" \
	-- "$top/tools/testing/selftests/rv/debug-suite.sh" || rc=$?
step "debug-kernel suite: $((SECONDS - start)) s, vm-run status $rc"
if [ -s "$out/kmemleak-boot.txt" ]; then
	echo "# kmemleak during boot (not counted): $(grep -c 'unreferenced object' "$out/kmemleak-boot.txt") objects" >&2
fi
exit "$rc"
