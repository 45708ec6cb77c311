#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kernels.sh: the Debian kernels rv is tested on, one release a line:
# for each series given (default: 6.1 6.12, the two LTS kernels Debian 12
# ships), the newest installed release V of that series with both
# /boot/vmlinuz-V and /lib/modules/V/build (make deps installs them).
# Fails, naming the series, when one has none.
#
#   tools/testing/kernels.sh [SERIES...]

set -euo pipefail

[ "$#" -gt 0 ] || set -- 6.1 6.12
rc=0
for series in "$@"; do
	best=
	for f in /boot/vmlinuz-"$series".*; do
		[ -e "$f" ] || continue
		v=${f#/boot/vmlinuz-}
		[ -d "/lib/modules/$v/build/" ] || continue
		best=$(printf '%s\n' ${best:+"$best"} "$v" | sort -V | tail -n 1)
	done
	if [ -n "$best" ]; then
		echo "$best"
	else
		echo "kernels.sh: no Linux $series with /boot/vmlinuz and headers: run 'make deps'" >&2
		rc=1
	fi
done
exit "$rc"
