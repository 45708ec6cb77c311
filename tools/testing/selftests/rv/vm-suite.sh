#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Groups of rv tests that need the module, run inside one test VM (vm-run
# --rxe 2) by tools/testing/check-vm.sh and check-debug-vm.sh:
#
#   vm-suite.sh [GROUP[:ARG]...]
#
# GROUP is a script of this directory (GROUP.sh, given ARG if any);
# default: module_load ioctl conn. Each runs through bed-group: only while
# the bed works (bed-check: the nodes ACTIVE, an rping between them), so a
# broken bed is one failure that names it. With RV_GROUP_CHECK=1 each group
# is followed by group-check.sh (its kernel log; kmemleak after the
# last). One TAP stream
# (tap-run).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
vm=$top/tools/testing/vm

# Soft-RoCE's modules (vm-guest's RV_RXE_MODULES); rv needs the IB CM,
# and insmod does not load dependencies.
# shellcheck disable=SC2086 # a list of modules
modprobe -a ${RV_RXE_MODULES:?} ib_uverbs ib_cm

# The soak's link losses. Between two VMs (soak-2vm): real link flaps (ip
# link down/up). In one VM: packets dropped with the links up, as real
# flaps can leave the management QP of two soft-RoCE devices in one kernel
# dead for good (see userspace/tests/vm/soak/README.md).
if [ -n "${RV_VM_ROLE:-}" ]; then
	export RV_SOAK_FLAP_MODE=${RV_SOAK_FLAP_MODE:-link}
else
	export RV_SOAK_FLAP_MODE=${RV_SOAK_FLAP_MODE:-drop}
fi

[ "$#" -gt 0 ] || set -- module_load ioctl conn

# tap-run runs programs without arguments: one small script per step.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run=()
for g in "$@"; do
	name=${g%%:*} arg=
	[ "$name" = "$g" ] || arg=${g#*:}
	[ -x "$here/$name.sh" ] || { echo "Bail out! no group $name"; exit 1; }
	step=$tmp/${g//:/-}
	printf '#!/bin/sh\nexec %q %q %s\n' "$vm/bed-group" "$here/$name.sh" \
		"${arg:+$(printf '%q' "$arg")}" >"$step"
	run+=("$step")
	if [ "${RV_GROUP_CHECK:-0}" = 1 ]; then
		# kmemleak's scan once, after the last group.
		scan=
		[ "$g" != "${!#}" ] || scan=kmemleak
		printf '#!/bin/sh\nexec %q %q %s\n' "$here/group-check.sh" "$name" \
			"$scan" >"$tmp/check-after-${g//:/-}"
		run+=("$tmp/check-after-${g//:/-}")
	fi
done
chmod +x "${run[@]}"
exec "$vm/tap-run" "${run[@]}"
