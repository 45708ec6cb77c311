#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The rv tests run on the debug kernel (KASAN, lockdep, atomic-sleep,
# kmemleak, fault injection), inside the test VM, by
# tools/testing/check-debug-vm.sh: vm-run --kernel-dir ... --rxe 2 --
# debug-suite.sh. The groups of vm-suite.sh, the fuzzer's fixed-seed
# campaign, the allocation-failure sweep and the device removal and driver
# unload (RV_DEBUG_GROUPS: which scripts of this directory), each after a
# bed check and followed by group-check.sh: its kernel log must be clean
# and kmemleak must find nothing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

# KUnit first, when check-debug-vm.sh passes the module built with it
# (RV_KUNIT_KO): its files go to OUT/kunit, for kunit.sh's report.
if [ -n "${RV_KUNIT_KO:-}" ]; then
	mkdir -p "$RV_OUT/kunit"
	RV_OUT=$RV_OUT/kunit "$here/../../kernel/kunit-guest.sh" >&2
fi

echo "<5>rv-debug-suite: start" >/dev/kmsg

# Not here: the tests that switch tracepoints on and off. That patches
# kernel text (text_poke_bp, an IPI to every CPU), and on this kernel
# under TCG it once waited forever for the other vCPU (an RCU stall in
# trace-cmd's disable, 2026-11-22). They run on Debian's kernel.
export GTEST_FILTER=${GTEST_FILTER:--Observability.Trace*}

# rv's completions in softirq context (cq_poll=softirq): lockdep and
# KASAN then see that context, which the module tiers, on the default
# workqueue, do not. Every group's insmod takes these.
export RV_INSMOD_ARGS=${RV_INSMOD_ARGS-cq_poll=softirq}

# What repeats a code path with other numbers only, and takes the debug
# kernel minutes under TCG, runs on Debian's kernels: the loads at each
# parameter's bounds (module_load.sh), conn.sh's phase of 4 processes
# with the default num_conn (1 and 16 processes, and 4 with num_conn 2,
# stay).
export RV_MODULE_LOAD_BOUNDS=${RV_MODULE_LOAD_BOUNDS:-0}
export RV_CONN_SH_HOLDS=${RV_CONN_SH_HOLDS:-1:0 16:0 4:2}

# The groups, each after a bed check and followed by group-check.sh. Last,
# the cases that change the nodes (conn-fault.sh: device removal, driver
# unload), which on Debian's kernels get a VM each.
# shellcheck disable=SC2086 # a list of groups
RV_GROUP_CHECK=1 exec "$here/vm-suite.sh" \
	${RV_DEBUG_GROUPS:-module_load ioctl conn fault fuzz conn-fault}
