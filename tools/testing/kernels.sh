#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kernels.sh: the Debian kernels rv is tested on, one release a line: for
# each series given (default: 6.1 6.12 7, Debian 12's two LTS kernels and
# the newest 7.x of Debian 13's backports), the newest release V of that
# series whose kernel and headers are there: /boot/vmlinuz-V and
# /lib/modules/V/build on this machine, or, for 7.x, the kernel and the
# headers tools/toolchain.sh unpacked (make deps sets up both). Fails,
# naming the series, when one has none.
#
#   tools/testing/kernels.sh [SERIES...]
#   tools/testing/kernels.sh --build-dir V   the build tree of release V
#   tools/testing/kernels.sh --kernel-dir V  what vm-run --kernel-dir takes
#                                            for V (empty: /boot's kernel)

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tc_env=$("$here/../toolchain.sh" --env 2>/dev/null) || tc_env=
tc() { sed -n "s/^$1=//p" <<<"$tc_env"; }

case "${1:-}" in
--build-dir|--kernel-dir)
	[ "$#" = 2 ] || { echo "usage: $0 $1 V" >&2; exit 2; }
	if [ -n "$tc_env" ] && [ "$2" = "$(tc RV_TC_KVER)" ]; then
		if [ "$1" = --build-dir ]; then
			readlink -f "$(tc RV_TC_ROOT)/lib/modules/$2/build"
		else
			tc RV_TC_KERNEL_DIR
		fi
	elif [ "$1" = --build-dir ]; then
		echo "/lib/modules/$2/build"
	fi
	exit 0
	;;
esac

[ "$#" -gt 0 ] || set -- 6.1 6.12 7
rc=0
for series in "$@"; do
	best=
	for f in /boot/vmlinuz-"$series".*; do
		[ -e "$f" ] || continue
		v=${f#/boot/vmlinuz-}
		[ -d "/lib/modules/$v/build/" ] || continue
		best=$(printf '%s\n' ${best:+"$best"} "$v" | sort -V | tail -n 1)
	done
	v=$(tc RV_TC_KVER)
	if [ -z "$best" ] && [ -n "$v" ] && [[ "$v" == "$series".* ]] &&
	   [ -d "$(tc RV_TC_KERNEL_DIR)" ]; then
		best=$v
	fi
	if [ -n "$best" ]; then
		echo "$best"
	else
		echo "kernels.sh: no Linux $series with its kernel and headers: run 'make deps'" >&2
		rc=1
	fi
done
exit "$rc"
