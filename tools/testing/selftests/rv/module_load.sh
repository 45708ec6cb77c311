#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Loading and unloading rv.ko: defaults, every parameter at its bounds,
# out-of-range values refused with a message, the ib_client seeing RDMA
# devices come and go, and rmmod refused while /dev/rv is open.
# Runs as root inside the test VM (tools/testing/vm/vm-run --rxe 2).
set -uo pipefail

top=$(cd "$(dirname "$0")/../../../.." && pwd)
# shellcheck source=tools/testing/vm/lib.sh
. "$top/tools/testing/vm/lib.sh"

ko=${RV_KO:?vm-run sets RV_KO: the rv.ko of the kernel it boots}
params=/sys/module/rv/parameters

# name min max default
bounds=(
	"num_conn 1 16 4"
	"q_depth 16 65536 4000"
	"mr_cache_size 1 1048576 256"
	"mr_cache_size_gpu 1 1048576 1024"
	"min_hb_interval 0 60000 100"
	"max_reconnect_timeout 0 3600 300"
)

unload() {
	if [ -d /sys/module/rv ]; then
		rmmod rv
	fi
}

# kmsg_since MARK: kernel log lines after the marker MARK
kmsg_since() {
	dmesg | sed -n "/rv-selftest-mark $1\$/,\$p"
}

mark=0
kmsg_mark() {
	mark=$((mark + 1))
	echo "rv-selftest-mark $mark" > /dev/kmsg
}

# The rxe nodes the bench set up are there and ACTIVE.
read -ra nodes <<<"${RV_NODES:-}"
active=0
for d in "${nodes[@]}"; do
	if [ "$(cat "/sys/class/infiniband/$d/ports/1/state" 2>/dev/null)" = "4: ACTIVE" ]; then
		active=$((active + 1))
	fi
done
tap_check "two rxe devices ACTIVE (${nodes[*]})" [ "$active" -ge 2 ]

# The ib_client callbacks are seen through rv's pr_debug messages, which
# need dynamic debug (Debian's kernel has it; the debug kernel does not).
dyndbg_check() {
	if [ -e /proc/dynamic_debug/control ] ||
		[ -e /sys/kernel/debug/dynamic_debug/control ]; then
		tap_check "$@"
	else
		tap_skip "$1" "no CONFIG_DYNAMIC_DEBUG in this kernel"
	fi
}

# Defaults, and the ib_client's add callback for every device.
kmsg_mark
if insmod "$ko" dyndbg=+p; then
	tap_ok "insmod rv.ko with defaults"
else
	tap_not_ok "insmod rv.ko with defaults"
fi
tap_check "/dev/rv is a character device" [ -c /dev/rv ]
tap_check "/dev/rv mode is 0666" [ "$(stat -c %a /dev/rv)" = 666 ]
for b in "${bounds[@]}"; do
	read -r name _ _ def <<<"$b"
	tap_check "default $name=$def" [ "$(cat "$params/$name")" = "$def" ]
done
tap_check "default service_id" \
	[ "$(cat $params/service_id)" = 0x1000125500000001 ]
tap_check "default cq_poll=workqueue" [ "$(cat $params/cq_poll)" = workqueue ]
added=$(kmsg_since $mark | grep -c 'rv: added')
dyndbg_check "ib_client added ${#nodes[@]} devices (saw $added)" \
	[ "$added" -eq "${#nodes[@]}" ]

# Device removal and re-adding reach the ib_client while rv is loaded.
if [ ${#nodes[@]} -ge 1 ]; then
	dev=${nodes[0]}
	netdev=$(rdma link show "$dev/1" | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
	kmsg_mark
	rdma link delete "$dev"
	dyndbg_check "ib_client remove callback for $dev" \
		bash -c "dmesg | sed -n '/rv-selftest-mark $mark\$/,\$p' | grep -q '$dev: rv: removed'"
	kmsg_mark
	rdma link add "$dev" type rxe netdev "$netdev"
	dyndbg_check "ib_client add callback for re-added $dev" \
		bash -c "dmesg | sed -n '/rv-selftest-mark $mark\$/,\$p' | grep -q '$dev: rv: added'"
	rxe_wait_active "$dev"
fi

# A module with an open file cannot go away.
exec 3<>/dev/rv
if rmmod rv 2>/dev/null; then
	tap_not_ok "rmmod refused while /dev/rv is open"
else
	tap_ok "rmmod refused while /dev/rv is open"
fi
exec 3>&-
if unload && [ ! -e /dev/rv ]; then
	tap_ok "rmmod rv after close, /dev/rv gone"
else
	tap_not_ok "rmmod rv after close, /dev/rv gone"
fi

# Every parameter at both bounds loads and reads back. RV_MODULE_LOAD_BOUNDS=0
# (the debug tier): not these 14 loads, which run the same load path as
# the defaults' with other numbers; Debian's kernels run them.
in_range=("${bounds[@]}")
sids=(0x1 0xffffffffffffffff)
if [ "${RV_MODULE_LOAD_BOUNDS:-1}" = 0 ]; then
	tap_skip "every parameter at its bounds, service_id at its ends" \
		"RV_MODULE_LOAD_BOUNDS=0: run on Debian's kernels"
	in_range=() sids=()
fi
for b in "${in_range[@]}"; do
	read -r name lo hi _ <<<"$b"
	for v in "$lo" "$hi"; do
		if insmod "$ko" "$name=$v" &&
		   [ "$(cat "$params/$name")" = "$v" ] && unload; then
			tap_ok "insmod $name=$v (bound)"
		else
			tap_not_ok "insmod $name=$v (bound)"
			unload
		fi
	done
done
for v in "${sids[@]}"; do
	if insmod "$ko" "service_id=$v" && unload; then
		tap_ok "insmod service_id=$v"
	else
		tap_not_ok "insmod service_id=$v"
		unload
	fi
done

for v in workqueue unbound softirq; do
	if insmod "$ko" "cq_poll=$v" && [ "$(cat "$params/cq_poll")" = "$v" ] &&
	   unload; then
		tap_ok "insmod cq_poll=$v"
	else
		tap_not_ok "insmod cq_poll=$v"
		unload
	fi
done

# Out of range, malformed: refused, with a message naming the parameter.
refuse() {
	local name=$1 v=$2
	kmsg_mark
	if insmod "$ko" "$name=$v" 2>/dev/null; then
		tap_not_ok "insmod $name=$v refused"
		unload
		return
	fi
	if [ -e /dev/rv ]; then
		tap_not_ok "insmod $name=$v refused (but /dev/rv exists)"
	elif kmsg_since $mark | grep -q "rv: $name=$v is invalid"; then
		tap_ok "insmod $name=$v refused with a message"
	else
		tap_not_ok "insmod $name=$v refused with a message"
	fi
}
for b in "${bounds[@]}"; do
	read -r name lo hi _ <<<"$b"
	if [ "$lo" -gt 0 ]; then
		refuse "$name" $((lo - 1))
	fi
	refuse "$name" $((hi + 1))
	refuse "$name" bogus
	refuse "$name" -1
done
refuse service_id 0
refuse service_id 0x1ffffffffffffffff
refuse service_id bogus
refuse cq_poll bogus
refuse cq_poll direct
refuse cq_poll auto

tap_done
