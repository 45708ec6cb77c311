#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The rv tests run on the debug kernel (KASAN, lockdep, atomic-sleep,
# kmemleak, fault injection), inside the test VM, by
# tools/testing/check-debug-vm.sh: vm-run --kernel-dir ... --rxe 2 --
# debug-suite.sh. The groups of vm-suite.sh, the fuzzer's fixed-seed
# campaign and the allocation-failure sweep (RV_DEBUG_GROUPS: which
# scripts of this directory), each followed by group-check.sh: its kernel
# log must be clean and kmemleak must find nothing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)

modprobe crc32_generic
modprobe rdma_rxe
modprobe ib_uverbs
modprobe ib_cm

echo "<5>rv-debug-suite: start" >/dev/kmsg

# Not here: the tests that switch tracepoints on and off. That patches
# kernel text (text_poke_bp, an IPI to every CPU), and on this kernel
# under TCG it once waited forever for the other vCPU (an RCU stall in
# trace-cmd's disable, 2026-11-22). They run on Debian's kernel.
export GTEST_FILTER=${GTEST_FILTER:--Observability.Trace*}

# Nor the real link flap of conn.sh. Soft RoCE of 6.1 sometimes loses its
# management QP over an `ip link` down/up (the node then drops every CM
# reply in hdr_check; see userspace/tests/vm/soak/README.md), and on this
# slower kernel that happened in a CI run (2026-11-22): the connection
# cannot come back, and every later group of this VM fails to connect.
# The device removal and driver unload mid-traffic still run here, so
# the loss and teardown paths do; the recovery after a flap is tested on
# Debian's kernel.
export RV_CONN_LINK_FLAP=${RV_CONN_LINK_FLAP:-0}

# tap-run runs programs without arguments: one small script per check.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run=()
for group in ${RV_DEBUG_GROUPS:-module_load ioctl conn fault fuzz}; do
	run+=("$here/$group.sh")
	printf '#!/bin/sh\nexec %q %q\n' "$here/group-check.sh" "$group" \
		>"$tmp/check-after-$group"
	chmod +x "$tmp/check-after-$group"
	run+=("$tmp/check-after-$group")
done
"$top/tools/testing/vm/tap-run" "${run[@]}"
