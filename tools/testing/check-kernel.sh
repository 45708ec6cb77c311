#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel code tier: rv.ko builds with W=1 and -Werror and sparse finds
# nothing, for each kernel of tools/testing/kernels.sh (6.1, 6.12 and the
# newest 7.x, built in tools/toolchain.sh's root with gcc-14), and
# checkpatch.pl --strict (from Debian's linux-source-6.1)
# finds nothing in any tracked kernel source or uAPI header, no two
# of the module's source files call each other in a circle, and rv.ko
# registers memory only by fast registration: it imports ib_alloc_mr and
# ib_map_mr_sg, and not ib_reg_user_mr (the only exported call that
# reaches a driver's reg_user_mr, which irdma and mthca implement for
# uverbs only: docs/rdma-drivers.md), and the upstream series
# (tools/upstream) is checkpatch-clean and builds in its in-tree form.
# TAP output;
# progress ("# check-kernel: [+N s] ...", the total at the end) on stderr.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
cd "$top" || exit 1

t0=$SECONDS
step() { echo "# check-kernel: [+$((SECONDS - t0)) s] $*" >&2; }
trap 'echo "# check-kernel: total $((SECONDS - t0)) s" >&2' EXIT

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; }
indent() { sed 's/^/# /'; }

mkdir -p "$build"
# shellcheck disable=SC2086 # a list of series
mapfile -t kvers < <(tools/testing/kernels.sh ${RV_KERNELS:-})
# clean TARGET KVER NAME: `make TARGET` for one kernel, a point that fails
# on any warning.
clean() {
	local log=$build/kernel-$1-$2.log
	step "$3"
	if make -s "$1" KDIR="$(tools/testing/kernels.sh --build-dir "$2")" >"$log" 2>&1 &&
	   ! grep -q 'warning:' "$log"; then
		ok "$3"
	else
		not_ok "$3"
		indent <"$log"
	fi
}

# The circle check first shows that it finds one: a.c and b.c call each
# other, c.c calls a.c.
circles=$build/call-circles
rm -rf "$circles" && mkdir -p "$circles"
printf 'void b(void);\nvoid a(void) { b(); }\n' >"$circles/a.c"
printf 'void a(void);\nvoid b(void) { a(); }\n' >"$circles/b.c"
printf 'void a(void);\nvoid c(void) { a(); }\n' >"$circles/c.c"
(cd "$circles" && gcc -c a.c b.c c.c)
out=$(tools/testing/call-circles.py "$circles")
rc=$?
rm "$circles/b.o"
if [ "$rc" = 1 ] && [ "$out" = "circle: a.o b.o" ] &&
   tools/testing/call-circles.py "$circles" >/dev/null; then
	ok "call-circles.py finds a circle of two files, and none without it"
else
	not_ok "call-circles.py finds a circle of two files, and none without it"
	indent <<<"exit $rc: $out"
fi

# The newest kernel's root (tools/toolchain.sh), with its sparse.
tc_root=$(tools/toolchain.sh --env 2>/dev/null | sed -n 's/^RV_TC_ROOT=//p') || true
[ -n "$tc_root" ] || tc_root=/nonexistent
for k in "${kvers[@]}"; do
	clean modules "$k" "rv.ko builds warning-free for $k (W=1, -Werror)"
	# C=2 runs sparse over every file, rebuilt or not. Debian's sparse
	# (0.6.4, in both releases) cannot parse Linux 7.x's headers, which
	# use __typeof_unqual__ under the checker too: in the root, sid's
	# (tools/toolchain.sh), unless it could not be had.
	kdir=$(tools/testing/kernels.sh --build-dir "$k")
	if [[ "$kdir" == "$tc_root"/* ]] && [ ! -x "$tc_root/usr/local/bin/sparse" ]; then
		n=$((n + 1))
		echo "ok $n - sparse (make C=2) clean for $k # SKIP no sparse for 7.x headers: $(cat "${tc_root%/root}/sparse.status" 2>/dev/null)"
	else
		clean sparse "$k" "sparse (make C=2) clean for $k"
	fi
	imports=$(nm -u "$build/modules/$k/rv.ko" 2>&1)
	if grep -qx ' *U ib_alloc_mr' <<<"$imports" &&
	   grep -qx ' *U ib_map_mr_sg' <<<"$imports" &&
	   ! grep -q 'ib_reg_user_mr' <<<"$imports"; then
		ok "rv.ko for $k imports ib_alloc_mr and ib_map_mr_sg, not ib_reg_user_mr"
	else
		not_ok "rv.ko for $k imports ib_alloc_mr and ib_map_mr_sg, not ib_reg_user_mr"
		grep -E 'ib_alloc_mr|ib_map_mr_sg|ib_reg_user_mr|nm:' <<<"$imports" | indent
	fi
	objs=$build/modules/$k/src/drivers/infiniband/ulp/rv
	if out=$(tools/testing/call-circles.py "$objs" 2>&1); then
		ok "no circle in the calls between rv's source files for $k"
	else
		not_ok "no circle in the calls between rv's source files for $k"
		indent <<<"$out"
	fi
done

# checkpatch.pl and its two data files from linux-source-6.1. Taking three
# files out of the tarball unpacks all of it (about 15 s): done once per
# version of the package, into ${RV_CACHE_DIR:-/var/cache/rv}/checkpatch
# when it can be written.
cp=$build/checkpatch/checkpatch.pl
if [ ! -x "$cp" ]; then
	tarball=/usr/src/linux-source-6.1.tar.xz
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) || ver=unknown
	cache=${RV_CACHE_DIR:-/var/cache/rv}/checkpatch/$ver
	dir=$build/checkpatch
	if [ -x "$cache/checkpatch.pl" ] || { mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ]; }; then
		dir=$cache
	fi
	if [ ! -x "$dir/checkpatch.pl" ]; then
		mkdir -p "$dir.tmp.$$"
		tar -xJf "$tarball" -C "$dir.tmp.$$" --strip-components=2 \
			linux-source-6.1/scripts/checkpatch.pl \
			linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch
		mkdir -p "$dir"
		mv "$dir.tmp.$$"/* "$dir/"
		rmdir "$dir.tmp.$$"
	fi
	if [ "$dir" != "$build/checkpatch" ]; then
		mkdir -p "$build/checkpatch"
		cp -p "$dir"/* "$build/checkpatch/"
	fi
fi
mapfile -t files < <(git ls-files 'drivers/*.c' 'drivers/*.h' 'compat/*.c' 'compat/*.h' 'include/*.h')
step "checkpatch --strict on ${#files[@]} files"
for f in "${files[@]}"; do
	if out=$("$cp" --no-tree --strict --terse --show-types -f "$f" 2>&1); then
		ok "checkpatch --strict $f"
	else
		not_ok "checkpatch --strict $f"
		indent <<<"$out"
	fi
done
# The upstream series (make upstream): 7.3's checkpatch.pl --strict on
# every patch, and its final state built in-tree form against 7.3 (every
# patch's stage with RV_CHECK_FULL=1, make check-full).
# renumber: a TAP stream's points as points of this one.
renumber() {
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok "${line#* - }" ;;
		"not ok "*) not_ok "${line#* - }" ;;
		"Bail out!"*) not_ok "$1: ${line#Bail out! }" ;;
		"#"*) echo "$line" ;;
		esac
	done
}
step "make upstream: the series, checkpatch --strict on each patch"
renumber "make upstream" < <(RV_BUILD_DIR=$build tools/upstream/upstream.sh 2>"$build/upstream.log" ||
	echo "Bail out! tools/upstream/upstream.sh failed")
last=--last
[ "${RV_CHECK_FULL:-0}" = 0 ] || last=
step "the series built in its in-tree form (tools/upstream/check-series.sh $last)"
renumber "check-series" < <(tools/upstream/check-series.sh $last "$build/upstream" ||
	echo "Bail out! tools/upstream/check-series.sh failed")
echo "1..$n"
