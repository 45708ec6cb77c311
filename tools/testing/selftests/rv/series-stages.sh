#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Every stage of the upstream series loads: the rv.ko that
# tools/upstream/check-series.sh keeps for each patch from the second on
# (build/upstream/stage-N.ko; make check-full builds every stage, make
# check the last only). For each, in order: insmod, rvinfo answers
# CAPABILITY with the series' ABI, the ioctl numbers rv defines
# (0xF1-0xFF: not ENOTTY) are noted, rmmod. The first stage defines
# CAPABILITY alone, each later one at least the numbers of the one before,
# and the last all of the uAPI's. Runs as root inside the test VM of the
# newest kernel, with the IB CM loaded (vm-suite.sh); TAP output.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
dir=${RV_SERIES_DIR:-$build/upstream}
rvinfo=${RV_RVINFO:-$build/userspace/tools/rvinfo}
# shellcheck source-path=SCRIPTDIR source=../../vm/lib.sh
. "$top/tools/testing/vm/lib.sh"

mapfile -t kos < <(find "$dir" -maxdepth 1 -name 'stage-*.ko' -printf '%f\n' |
	sort -t- -k2 -n)
if [ "${#kos[@]}" -lt 2 ]; then
	echo "1..0 # SKIP ${#kos[@]} stage of the series built: make check-full builds each"
	exit 0
fi
ko_skip_other_kernel "$dir/${kos[0]}" "the stages are"
if lsmod | grep -qw '^rv'; then
	rmmod rv || { echo "Bail out! rv is loaded and does not unload"; exit 1; }
fi

# The ioctl numbers of 0xF1-0xFF on /dev/rv that are not ENOTTY: an
# argument of the wrong size gets EINVAL from a number rv defines.
defined() {
	python3 - <<-'EOF'
	import errno, fcntl, os
	fd = os.open('/dev/rv', os.O_RDWR)
	found = []
	for nr in range(0xF1, 0x100):
	    cmd = (3 << 30) | (1 << 16) | (0x1B << 8) | nr  # _IOWR(0x1B, nr, 1 byte)
	    try:
	        fcntl.ioctl(fd, cmd, bytearray(1))
	        found.append(nr)
	    except OSError as e:
	        if e.errno != errno.ENOTTY:
	            found.append(nr)
	print(' '.join('%#x' % n for n in found))
	EOF
}

tap_plan $((${#kos[@]} + 2))
prev=
first=
for ko in "${kos[@]}"; do
	n=${ko#stage-}
	n=${n%.ko}
	if ! out=$(insmod "$dir/$ko" 2>&1); then
		tap_not_ok "patch $n: rv.ko loads" "$out"
		continue
	fi
	info=$("$rvinfo" --json 2>&1)
	rc=$?
	nrs=$(defined 2>&1)
	if ! rmmod rv 2>/dev/null; then
		tap_not_ok "patch $n: rv.ko loads, answers CAPABILITY and unloads" "rmmod failed"
		continue
	fi
	if [ "$rc" != 0 ]; then
		tap_not_ok "patch $n: rv.ko loads, answers CAPABILITY and unloads" "rvinfo: $info"
		continue
	fi
	# Each stage defines at least the numbers of the one before.
	missing=
	for x in $prev; do
		[[ " $nrs " == *" $x "* ]] || missing+=" $x"
	done
	if [ -n "$missing" ]; then
		tap_not_ok "patch $n: rv.ko loads, answers CAPABILITY and unloads" \
			"lost ioctls the patch before defined:$missing"
	else
		tap_ok "patch $n: rv.ko loads, answers CAPABILITY and unloads; ioctls $nrs"
	fi
	[ -n "$first" ] || first=$nrs
	prev=$nrs
done
# The uAPI's ioctl numbers, and CAPABILITY's, from the header.
numbers() {
	python3 - "$top/include/uapi/rdma/rv_user_ioctls.h" "$1" <<-'EOF'
	import re, sys
	text = open(sys.argv[1]).read().replace('\\\n', ' ')
	found = re.findall(r'#define (RV_IOCTL_\w+)\s+_IO\w*\(RV_MAGIC,\s*(0x[0-9A-Fa-f]+)', text)
	want = sys.argv[2]
	print(' '.join(sorted({'%#x' % int(nr, 16) for name, nr in found
	                       if want == 'all' or name == want})))
	EOF
}
cap=$(numbers RV_IOCTL_CAPABILITY)
if [ -n "$cap" ] && [ "$first" = "$cap" ]; then
	tap_ok "the first stage defines CAPABILITY ($cap) alone"
else
	tap_not_ok "the first stage defines CAPABILITY (${cap:-?}) alone" "it defines: $first"
fi
# The last stage is the series' rv.ko: every number of the uAPI.
all=$(numbers all)
got=$(tr ' ' '\n' <<<"$prev" | sort | tr '\n' ' ')
got=${got% }
if [ -n "$prev" ] && [ "$got" = "$all" ]; then
	tap_ok "the last stage defines every ioctl number of the uAPI"
else
	tap_not_ok "the last stage defines every ioctl number of the uAPI" "uAPI: $all; last stage: $got"
fi
tap_done
