#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test VM: loads rxe's dependencies and rv, then runs
# rv_sizing. Arguments go to rv_sizing. From the host:
#
#   RV_KO=build/stable/rv.ko tools/testing/vm/vm-run --rxe 8 --mem 4096 \
#       --timeout 1800 --out build/sizing-out -- tools/sizing/measure.sh
#
# RV_KO         rv.ko to load (default: the in-tree build)
# RV_SIZING_BIN rv_sizing (default: the userspace build's,
#               $RV_BUILD_DIR/userspace/tests/vm/sizing/rv_sizing)
# RV_SIZING_JSON where the JSON goes (default: $RV_OUT/sizing.json)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ko=${RV_KO:?vm-run sets RV_KO: the rv.ko of the kernel it boots}
bin=${RV_SIZING_BIN:-${RV_BUILD_DIR:-$top/build}/userspace/tests/vm/sizing/rv_sizing}
json=${RV_SIZING_JSON:-${RV_OUT:-$top/build/sizing-out}/sizing.json}

[ "${RV_VM:-}" = 1 ] || { echo "measure.sh: run me inside vm-run" >&2; exit 2; }
[ -x "$bin" ] || { echo "measure.sh: no $bin (make userspace)" >&2; exit 2; }

# shellcheck disable=SC2086 # a list of modules (vm-guest)
modprobe -a ${RV_RXE_MODULES:?}
modprobe ib_uverbs
modprobe ib_cm
if ! grep -q '^rv ' /proc/modules; then
	insmod "$ko"
fi
echo "measure.sh: rv $(cat /sys/module/rv/version 2>/dev/null || echo '?')" \
	"from $ko, nodes: ${RV_NODES:-none}, $(nproc) CPUs," \
	"$(awk '/MemTotal/ {print $2 " kB"}' /proc/meminfo)"
exec "$bin" --json-file "$json" "$@"
