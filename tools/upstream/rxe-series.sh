#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# rxe-series.sh BASE OUT [FIRST]: the soft-RoCE fixes the test bed runs
# with (tools/testing/kernel/rxe-patches/), written as a series of their
# own for the kernel source BASE, apart from rv's: each is applied with
# git am to BASE's drivers/infiniband/sw/rxe and written again by git
# format-patch into OUT, so a maintainer gets them as git makes them
# (dated as the patch file's last commit here, so the output depends only
# on the tree). BASE/scripts/checkpatch.pl --strict must find nothing.
# Each must apply, and CHECKPATCH --strict must find nothing in it.
# TAP points on stdout, numbered from FIRST (default 1), without a plan:
# tools/upstream/upstream.sh prints one for all. A patch that is already
# in the source (it applies in reverse) is written as it is, and said so.
set -euo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
top=$(cd "$here/../.." && pwd)
patches=$top/tools/testing/kernel/rxe-patches
rxe=drivers/infiniband/sw/rxe

[ $# -ge 2 ] || { echo "usage: rxe-series.sh BASE OUT [FIRST]" >&2; exit 2; }
base=$1 out=$2 n=$((${3:-1} - 1))
pkg=${base##*/}
checkpatch=$base/scripts/checkpatch.pl

work=$out.git
rm -rf "$out" "$work"
mkdir -p "$out" "$work/${rxe%/*}"
cp -a "$base/$rxe" "$work/$rxe"
export GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z'
g() { git -C "$work" -c user.name=rv -c user.email=rv@localhost "$@"; }
g init -q -b rxe
g add -A
g commit -q -m "base: $pkg, $rxe"

for p in "$patches"/*.patch; do
	n=$((n + 1))
	name=${p##*/}
	date=$(git -C "$top" log -1 --format=%aI -- "$p" 2>/dev/null) || date=
	export GIT_AUTHOR_DATE=${date:-2000-01-01T00:00:00Z}
	GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
	if ! g am -q --keep-cr "$p" 2>/dev/null; then
		g am --abort 2>/dev/null || true
		if git -C "$work" apply --check -R "$p" 2>/dev/null; then
			cp "$p" "$out/$name"
			echo "ok $n - rxe: $name is in $pkg already # SKIP nothing to send"
			continue
		fi
		echo "not ok $n - rxe: $name applies to $pkg's $rxe"
		continue
	fi
	# git am dates a patch without a Date: header now.
	g commit -q --amend --no-edit --date="$GIT_AUTHOR_DATE"
	g format-patch -1 --zero-commit --stdout HEAD >"$out/$name"
	lines=$(grep -c '^+' "$out/$name")
	if res=$(perl "$checkpatch" --strict --terse --no-tree --show-types \
		"$out/$name" 2>&1) &&
	   ! grep -q ': \(ERROR\|WARNING\|CHECK\):' <<<"$res"; then
		echo "ok $n - rxe: $name applies to $pkg and checkpatch --strict is clean, $lines lines added"
	else
		echo "not ok $n - rxe: $name: checkpatch --strict"
		printf '%s\n' "$res" | sed 's/^/# /'
	fi
done
rm -rf "$work"
