#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the test VM (vm-run --rxe 2): the MR cache under khugepaged and
# REG_MEM's costs, for two builds of rv.ko in the same boot, alternately:
#
#   mr-before-after.sh OLD_KO [ROUNDS]
#
# OLD_KO is the other rv.ko for this kernel (e.g. built from an older
# commit with tools/build-module.sh -o build/old-modules); the other is
# RV_KO, which vm-run sets. Each round loads one, runs
# HeldMr.KhugepagedScanning (RV_KHUGEPAGED_TEST_SECONDS, default 30; 0:
# not run) with rv's rv_mr_cache tracepoint counted by op, then
# `rvbench reg --sizes $RV_REG_SIZES` (default 64K,1M,4M; sizes above
# max_fmr_size are skipped), and unloads it. Prints numbers; asserts
# nothing (the test's own result is printed with them).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
old=${1:?usage: mr-before-after.sh OLD_KO [ROUNDS]}
rounds=${2:-2}
new=${RV_KO:?vm-run sets RV_KO}
t=/sys/kernel/tracing

# shellcheck disable=SC2086 # a list of modules (vm-guest)
modprobe -a ${RV_RXE_MODULES:?} ib_uverbs ib_cm
[ -d "$t/events" ] || mount -t tracefs nodev "$t"
export RV_KHUGEPAGED_TEST_SECONDS=${RV_KHUGEPAGED_TEST_SECONDS:-30}
sizes=${RV_REG_SIZES:-64K,1M,4M}
for ((r = 1; r <= rounds; r++)); do
	for which in old new; do
		ko=$new
		[ "$which" = new ] || ko=$old
		insmod "$ko" || exit 1
		echo "=== $which ($ko), round $r"
		if [ "$RV_KHUGEPAGED_TEST_SECONDS" = 0 ]; then
			"$build/userspace/tools/rvbench" reg --sizes "$sizes" \
				--iters 2000 --miss-iters 300 --max-seconds 20
			rmmod rv
			continue
		fi
		echo 8192 >"$t/buffer_size_kb"
		echo >"$t/trace"
		echo 1 >"$t/events/rdma_rv/rv_mr_cache/enable"
		"$build/userspace/tests/vm/rv_vm_tests" \
			--gtest_filter=HeldMr.KhugepagedScanning 2>&1 |
			grep -E '^# held-mr|^(not )?ok'
		echo 0 >"$t/events/rdma_rv/rv_mr_cache/enable"
		printf 'trace:'
		for op in hit miss recheck invalidate remove; do
			printf ' %s %s' "$op" "$(grep -c "op=$op " "$t/trace")"
		done
		echo
		"$build/userspace/tools/rvbench" reg --sizes "$sizes" --iters 2000 \
			--miss-iters 300 --max-seconds 20
		rmmod rv
	done
done
