#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-rv-ko.sh: build rv.ko against another kernel tree (the debug
# kernel) from a copy of the module's sources, so that the tree's own
# objects, built for Debian's kernel, are left alone.
#
#   tools/testing/kernel/build-rv-ko.sh KDIR WORKDIR [MAKE-VAR=VALUE]...
#
# The copy goes to WORKDIR/src, the make output to WORKDIR/build.log. The
# extra arguments go to make (e.g. CONFIG_INFINIBAND_RV_KUNIT_TEST=y).
# Warnings are errors (W=1). On success the only line on stdout is the
# path of the module, below WORKDIR.

set -euo pipefail

[ "$#" -ge 2 ] || { sed -n '4,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
kdir=$1 work=$2
shift 2
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../../.." && pwd)
mod=drivers/infiniband/ulp/rv
src=$work/src

[ -d "$kdir" ] || { echo "build-rv-ko: no kernel tree $kdir" >&2; exit 1; }
rm -rf "$src"
mkdir -p "$src/$mod" "$src/include"
cp -p "$repo/$mod"/*.[ch] "$repo/$mod/Makefile" "$repo/$mod/Kconfig" \
	"$src/$mod/"
cp -pr "$repo/include/uapi" "$src/include/"
if ! make -C "$kdir" M="$src/$mod" CONFIG_INFINIBAND_RV=m W=1 \
	KCFLAGS=-Werror "$@" modules >"$work/build.log" 2>&1; then
	tail -n 30 "$work/build.log" >&2
	echo "build-rv-ko: building rv.ko failed (see $work/build.log)" >&2
	exit 1
fi
echo "$src/$mod/rv.ko"
