#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The rv tests run on the debug kernel (KASAN, lockdep, atomic-sleep,
# kmemleak, fault injection), inside the test VM, by
# tools/testing/check-debug-vm.sh: vm-run --kernel-dir ... --rxe 2 --
# debug-suite.sh. The groups of vm-suite.sh (RV_DEBUG_GROUPS: which
# scripts of this directory), each followed by a kmemleak scan
# (kmemleak.sh). vm-run fails the run if the kernel logged a report.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)

modprobe crc32_generic
modprobe rdma_rxe
modprobe ib_uverbs
modprobe ib_cm

# tap-run runs programs without arguments: one small script per scan.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run=()
for group in ${RV_DEBUG_GROUPS:-module_load ioctl conn}; do
	run+=("$here/$group.sh")
	printf '#!/bin/sh\nexec %q %q\n' "$here/kmemleak.sh" "$group" \
		>"$tmp/kmemleak-after-$group"
	chmod +x "$tmp/kmemleak-after-$group"
	run+=("$tmp/kmemleak-after-$group")
done
"$top/tools/testing/vm/tap-run" "${run[@]}"
