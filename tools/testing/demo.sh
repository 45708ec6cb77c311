#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`, inside the test VM: load rv next to two soft-RoCE devices,
# ask /dev/rv what it is, then move data between the two nodes over rv's
# shared connection (rvbench bw: RDMA WRITE with immediate, every message
# checked by the receiving process).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
ko=${RV_KO:?vm-run sets RV_KO: the rv.ko of the kernel it boots}

echo "== RDMA devices"
rdma link show
echo "== loading rv"
# insmod does not load what rv needs (ib_core, ib_cm).
IFS=, read -ra deps <<<"$(modinfo -F depends "$ko")"
[ ${#deps[@]} -eq 0 ] || modprobe -a "${deps[@]}"
insmod "$ko"
trap 'rmmod rv' EXIT
ls -l /dev/rv
echo "== rvinfo"
"$build/userspace/tools/rvinfo"
"$build/userspace/tools/rvinfo" --json

read -ra nodes <<<"${RV_NODES:-}"
if [ ${#nodes[@]} -lt 2 ]; then
	echo "== (one RDMA node only: no transfer)"
	exit 0
fi
a=${nodes[0]} b=${nodes[1]}
. "$top/tools/testing/vm/lib.sh"
echo "== rvbench bw: $a -> $b, each node a process of its own"
a0=$(rxe_rcvd_pkts "$a") b0=$(rxe_rcvd_pkts "$b")
"$build/userspace/tools/rvbench" bw --loopback-nodes "$a,$b" \
	--sizes 4K,64K,1M --bytes 2M
echo "rcvd_pkts: $a +$(($(rxe_rcvd_pkts "$a") - a0)) (ACKs and credits), $b +$(($(rxe_rcvd_pkts "$b") - b0)) (the data)"
