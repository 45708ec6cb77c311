#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check-series.sh [--last] [OUT]: build every stage of the series make upstream
# wrote (OUT, default build/upstream; its git/ repository tags each patch
# patch-N), in its in-tree form: no compat layer, the uAPI header as the
# series adds it. Against the newest kernel's headers (tools/toolchain.sh's
# root, with the compiler they name), with W=1, -Werror and sparse:
#   - from the patch that adds the Makefile on (the second), rv.ko builds
#     and links;
#   - before it, each C file the series holds by then compiles on its own
#     (kbuild single targets).
# The KUnit files need a kernel with KUnit: series-kunit.sh builds them.
# The last patch's rv.ko is kept as OUT/rv.ko: the module tier loads it
# on the newest kernel (selftests/rv/series.sh); each stage's as
# OUT/stage-N.ko, which make check-full loads in turn there
# (selftests/rv/series-stages.sh).
# --last: the last patch only, the series' final state (make check; make
# check-full builds every stage). TAP on stdout, one point per patch.
set -euo pipefail

last=0
if [ "${1:-}" = --last ]; then
	last=1
	shift
fi

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-${RV_BUILD_DIR:-$top/build}/upstream}
git=$out/git
mod=drivers/infiniband/ulp/rv
[ -d "$git/.git" ] || { echo "Bail out! no series in $out: run make upstream"; exit 1; }

tc=$("$top/tools/toolchain.sh" --env) || { echo "Bail out! no 7.x root: run make deps"; exit 1; }
kver=$(sed -n 's/^RV_TC_KVER=//p' <<<"$tc")
kdir=/lib/modules/$kver/build
# sparse on every file each stage compiles: the one tools/toolchain.sh
# puts in the root for the 7.x headers (C=1: the files compiled, which in
# a new stage are all of them).
root=$(sed -n 's/^RV_TC_ROOT=//p' <<<"$tc")
checker=(C=1)
with=", sparse"
if [ ! -x "$root/usr/local/bin/sparse" ]; then
	checker=()
	with=""
	echo "# no sparse for the 7.x headers: $(cat "${root%/root}/sparse.status" 2>/dev/null)"
fi

mapfile -t tags < <(git -C "$git" tag -l 'patch-*' | sort -t- -k2 -n)
total=${#tags[@]}
[ "$last" = 0 ] || tags=("${tags[-1]}")
stage=$out/stage
rm -f "$out"/stage-*.ko
echo "1..${#tags[@]}"
n=0
for tag in "${tags[@]}"; do
	n=$((n + 1))
	subject="patch ${tag#patch-}/$total, $(git -C "$git" log -1 --format=%s "$tag")"
	rm -rf "$stage" "$out/rv.ko"
	mkdir -p "$stage"
	git -C "$git" archive "$tag" | tar -x -C "$stage"
	if [ ! -d "$stage/$mod" ]; then
		echo "ok $n - $subject: no C file yet"
		continue
	fi
	objs=()
	for c in "$stage/$mod"/*.c; do
		[ -e "$c" ] || continue
		case "$c" in *_test.c) continue ;; esac
		c=${c##*/}
		objs+=("${c%.c}.o")
	done
	if [ -f "$stage/$mod/Makefile" ]; then
		what="rv.ko builds and links"
		targets=(modules)
	else
		what="${#objs[@]} files compile"
		targets=("${objs[@]}")
		# No Makefile yet: the flags the Makefile will give them.
		# shellcheck disable=SC2016 # kbuild expands it
		printf 'CFLAGS_rv_trace.o := -I$(src)\n' >"$stage/$mod/Kbuild"
	fi
	if [ "${#targets[@]}" = 0 ]; then
		echo "ok $n - $subject: no C file yet"
		continue
	fi
	log=$out/stage-$n.log
	if "$top/tools/toolchain.sh" --run --bind "$stage" \
		make -C "$kdir" M="/mnt/rv/$mod" -j"$(nproc)" W=1 "${checker[@]}" \
		KCFLAGS="-Werror -I/mnt/rv/include/uapi" \
		CONFIG_INFINIBAND_RV=m "${targets[@]}" >"$log" 2>&1 &&
	   ! grep -q 'warning:' "$log"; then
		echo "ok $n - $subject: $what ($kver, W=1$with)"
		if [ -f "$stage/$mod/rv.ko" ]; then
			cp "$stage/$mod/rv.ko" "$out/stage-${tag#patch-}.ko"
			[ "$tag" != "${tags[-1]}" ] || cp "$stage/$mod/rv.ko" "$out/rv.ko"
		fi
	else
		echo "not ok $n - $subject: $what ($kver, W=1$with)"
		tail -n 30 "$log" | sed 's/^/# /'
	fi
done
