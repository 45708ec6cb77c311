#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the test VM (vm-run --rxe 2): connection setup and small-message
# latency for two builds of rv.ko in the same boot, alternately:
#
#   conn-before-after.sh OLD_KO [ROUNDS]
#
# OLD_KO is the other rv.ko for this kernel (e.g. built from an older
# commit with tools/build-module.sh -o build/old-modules); the other is
# RV_KO, which vm-run sets. Each round loads one, runs `rvbench lat
# --loopback` (8-byte ping-pong between the bed's two nodes, over the
# veth) RV_CONN_RUNS times (default 5), each with a new job and a new
# connection, prints each run's connect time and median half round trip,
# and unloads it. Prints numbers; asserts nothing.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
old=${1:?usage: conn-before-after.sh OLD_KO [ROUNDS]}
rounds=${2:-2}
runs=${RV_CONN_RUNS:-5}
new=${RV_KO:?vm-run sets RV_KO}

# shellcheck disable=SC2086 # a list of modules (vm-guest)
modprobe -a ${RV_RXE_MODULES:?} ib_uverbs ib_cm
for ((r = 1; r <= rounds; r++)); do
	for which in old new; do
		ko=$new
		[ "$which" = new ] || ko=$old
		insmod "$ko" || exit 1
		printf '%s round %d: connect_us' "$which" "$r"
		lat=()
		for ((i = 0; i < runs; i++)); do
			j=$("$build/userspace/tools/rvbench" lat --loopback \
				--sizes 8 --iters 2000 --json --no-progress) ||
				{ echo " rvbench failed"; rmmod rv; exit 1; }
			printf ' %s' "$(grep -o '"connect_us": *[0-9]*' <<<"$j" |
				grep -o '[0-9]*$')"
			lat+=("$(grep -o '"median_ns": *[0-9]*' <<<"$j" |
				head -1 | grep -o '[0-9]*$')")
		done
		echo " half_rtt_median_ns ${lat[*]}"
		rmmod rv
	done
done
