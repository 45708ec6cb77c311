#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host side of the sizing measurement: builds rv_sizing (userspace/tests/
# vm/sizing, in the userspace build), runs it in the
# test VM with 5 rxe nodes (node 0 and 4 peers) and prints the model's
# tables. As root, from anywhere:
#
#   RV_KO=build/stable/rv.ko tools/sizing/run.sh [rv_sizing args...]
#
# RV_KO    rv.ko for the VM's kernel (default: the in-tree build)
# OUT      output directory (default: build/sizing-out): console.log,
#          dmesg.txt, measure.log, sizing.json, table.md
# NODES    rxe nodes (default 5: vm-run --rxe 6..8 cannot create the 6th
#          netdev, "vf", which ip(8) parses as a keyword)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
out=$(realpath -m "${OUT:-build/sizing-out}")
nodes=${NODES:-5}
# vm-run loads the rv.ko `make` built for the kernel it boots, unless
# RV_KO names one.
if [ -n "${RV_KO:-}" ]; then
	RV_KO=$(realpath "$RV_KO")
	export RV_KO
fi

build=$(realpath -m "${RV_BUILD_DIR:-build}")/userspace
cmake -S userspace -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target rv_sizing -j"$(nproc)" >/dev/null
mkdir -p "$out"
RV_SIZING_JSON="$out/sizing.json" tools/testing/vm/vm-run --rxe "$nodes" \
	--mem 4096 --timeout 2400 --out "$out" -- \
	tools/sizing/measure.sh "$@" | tee "$out/measure.log"
python3 tools/sizing/model.py "$out/sizing.json" | tee "$out/table.md"
