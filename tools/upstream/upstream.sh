#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make upstream: rv's patch series for the newest kernel source that
# make deps installs (linux-source-7.x, tools/toolchain.sh), written by
# tools/upstream/make-series.py to build/upstream/ (0000-cover-letter.patch
# first), then checked: checkpatch.pl --strict of that kernel on every
# patch must find nothing. The fixes of soft-RoCE the test bed runs with
# go apart, as their own series in build/upstream/rxe/ (rxe-series.sh).
# TAP on stdout, one point per patch.
#
#   tools/upstream/upstream.sh [-o OUT]
#
# The kernel files the series edits, and checkpatch.pl with its data, are
# taken out of the source tarball once per package version, into
# ${RV_CACHE_DIR:-/var/cache/rv}/upstream/VERSION (rxe's sources too).
set -euo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${RV_BUILD_DIR:-$top/build}/upstream
case "${1:-}" in
-o) out=${2:?usage: upstream.sh [-o OUT]} ;;
-h|--help) sed -n '4,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
'') ;;
*) echo "usage: upstream.sh [-o OUT]" >&2; exit 2 ;;
esac

tc=$("$top/tools/toolchain.sh" --env) ||
	{ echo "Bail out! no Linux 7.x source: run make deps"; exit 1; }
tar=$(sed -n 's/^RV_TC_SOURCE=//p' <<<"$tc")
ver=$(cat "$tar.version") || { echo "Bail out! $tar.version not found"; exit 1; }
pkg=$(basename "$tar" .tar.xz)
cache=${RV_CACHE_DIR:-/var/cache/rv}/upstream/$pkg-$ver
if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
	cache=${RV_BUILD_DIR:-$top/build}/upstream-base/$pkg-$ver
fi
base=$cache/$pkg
if [ ! -f "$cache/.rv-extracted" ]; then
	members=(Makefile MAINTAINERS include/uapi/rdma/rdma_user_ioctl.h
		drivers/infiniband/Kconfig drivers/infiniband/ulp/Makefile
		Documentation/infiniband/index.rst scripts/checkpatch.pl
		scripts/spelling.txt scripts/const_structs.checkpatch)
	rm -rf "$cache.tmp"
	mkdir -p "$cache.tmp"
	tar -xJf "$tar" -C "$cache.tmp" "${members[@]/#/$pkg/}"
	rm -rf "$base"
	mv "$cache.tmp/$pkg" "$base"
	rmdir "$cache.tmp"
	touch "$cache/.rv-extracted"
fi

# The soft-RoCE fixes (rxe-series.sh) need rxe's sources too.
if [ ! -f "$cache/.rv-extracted-rxe" ]; then
	rm -rf "$base/drivers/infiniband/sw/rxe"
	tar -xJf "$tar" -C "$cache" "$pkg/drivers/infiniband/sw/rxe"
	touch "$cache/.rv-extracted-rxe"
fi

mapfile -t patches < <(python3 "$here/make-series.py" --base "$base" --out "$out")
rxe_patches=("$top"/tools/testing/kernel/rxe-patches/*.patch)
n=0
echo "1..$((${#patches[@]} + ${#rxe_patches[@]}))"
for p in "${patches[@]}"; do
	case "${p##*/}" in 0000-*) continue ;; esac
	n=$((n + 1))
	name=${p##*/}
	lines=$(grep -c '^+' "$p")
	if res=$(perl "$base/scripts/checkpatch.pl" --strict --terse --no-tree \
		--show-types "$p" 2>&1) &&
	   ! grep -q ': \(ERROR\|WARNING\|CHECK\):' <<<"$res"; then
		echo "ok $n - checkpatch --strict ($pkg $ver) clean: $name, $lines lines added"
	else
		echo "not ok $n - checkpatch --strict ($pkg $ver) clean: $name"
		printf '%s\n' "$res" | sed 's/^/# /'
	fi
done
# As a maintainer takes them: git am, whitespace errors refused, onto the
# base, giving the tree of the last patch.
n=$((n + 1))
am=$(mktemp -d)
what="git am --whitespace=error of the $((${#patches[@]} - 1)) patches onto $pkg $ver gives the series' tree"
if git clone -q "$out/git" "$am/t" && git -C "$am/t" checkout -q -b am base &&
   git -C "$am/t" -c user.name=rv -c user.email=rv@invalid am -q --whitespace=error \
	"${patches[@]:1}" >"$am/log" 2>&1 &&
   git -C "$am/t" diff --quiet "patch-$((${#patches[@]} - 1))" HEAD; then
	echo "ok $n - $what"
else
	echo "not ok $n - $what"
	sed 's/^/# /' "$am/log" 2>/dev/null | tail -n 20
fi
rm -rf "$am"
"$here/rxe-series.sh" "$base" "$out/rxe" $((n + 1))
echo "# upstream: $((${#patches[@]} - 1)) patches and a cover letter in $out, for $pkg $ver; the soft-RoCE fixes in $out/rxe" >&2
