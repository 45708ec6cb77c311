#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# series-kunit.sh [OUT]: the series on the full kernel tree, and rv's KUnit
# suites in the series' own form. First every patch is applied in order
# with git apply to the whole linux-source tree of the newest debug kernel
# (an overlay over it, in a private mount namespace: the tree stays as it
# is; needs root, else that point skips). Then it builds the last patch of the series make upstream wrote (OUT, default
# build/upstream; its git/ repository tags each patch patch-N) in its
# in-tree form, with CONFIG_INFINIBAND_RV_KUNIT_TEST=m, against the newest
# debug kernel (tools/testing/kernel/debug-kernel.sh 7, built once and
# cached), W=1 and -Werror; then tools/testing/kernel/kunit.sh loads that
# rv.ko and rv_kunit.ko in a VM of the debug kernel. TAP on stdout: the
# build, then kunit.sh's points (each case, the unload, the kernel log
# and kmemleak). make check-full runs it; make check runs the suites on
# the tree's form only (the debug tier's boot).
set -euo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$(readlink -f "${1:-${RV_BUILD_DIR:-$top/build}/upstream}")
git=$out/git
mod=drivers/infiniband/ulp/rv
[ -d "$git/.git" ] || { echo "Bail out! no series in $out: run make upstream"; exit 1; }

work=$out/kunit-stage
mkdir -p "$work"
env_file=$work/kernel.env
"$top/tools/testing/kernel/debug-kernel.sh" 7 >"$env_file" ||
	{ echo "Bail out! building the debug kernel failed"; exit 1; }
RV_DEBUG_KDIR='' RV_DEBUG_KVER=''
# shellcheck source=/dev/null
. "$env_file"
[ -d "$RV_DEBUG_KDIR" ] || { echo "Bail out! debug-kernel.sh gave no kernel"; exit 1; }

n=1 failed=0
patches=()
for p in "$out"/[0-9][0-9][0-9][0-9]-*.patch; do
	[ "${p##*/}" = 0000-cover-letter.patch ] || patches+=("$p")
done
src=$(readlink -f "$RV_DEBUG_KDIR/source")
what="the ${#patches[@]} patches apply in order to the whole tree ($src)"
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	echo "ok $n - $what # SKIP needs root and unshare (an overlay mount)"
else
	ov=$(mktemp -d)
	mkdir "$ov/upper" "$ov/work" "$ov/tree"
	# Outside any git repository, git apply works as patch(1) does.
	# shellcheck disable=SC2016 # the inner shell expands them
	if unshare -m sh -c 'mount -t overlay rv-series -o "lowerdir=$1,upperdir=$2/upper,workdir=$2/work" "$2/tree" &&
		cd "$2/tree" && shift 2 && for p; do
			GIT_CEILING_DIRECTORIES=/ git apply --whitespace=error "$p" ||
				{ echo "# does not apply: ${p##*/}"; exit 1; }
		done' sh "$src" "$ov" "${patches[@]}" >"$work/apply.log" 2>&1; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		sed 's/^/# /' "$work/apply.log" | tail -n 20
		failed=1
	fi
	rm -rf "$ov"
fi

tag=$(git -C "$git" tag -l 'patch-*' | sort -t- -k2 -n | tail -n1)
stage=$work/src
rm -rf "$stage"
mkdir -p "$stage"
git -C "$git" archive "$tag" | tar -x -C "$stage"
log=$work/build.log
n=$((n + 1))
what="series ${tag#patch-} patches, in-tree form: rv.ko and rv_kunit.ko build ($RV_DEBUG_KVER, W=1)"
if make -C "$RV_DEBUG_KDIR" M="$stage/$mod" -j"$(nproc)" W=1 \
	KCFLAGS="-Werror -I$stage/include/uapi" CONFIG_INFINIBAND_RV=m \
	CONFIG_INFINIBAND_RV_KUNIT_TEST=m modules >"$log" 2>&1 &&
   ! grep -q 'warning:' "$log" && [ -f "$stage/$mod/rv_kunit.ko" ]; then
	echo "ok $n - $what"
else
	echo "not ok $n - $what"
	tail -n 30 "$log" | sed 's/^/# /'
	echo "1..$n"
	exit 1
fi
# kunit.sh's points as this stream's (its plan dropped); its files under
# OUT/kunit-7, apart from the tree's.
while IFS= read -r line; do
	case "$line" in
	"ok "* | "not ok "*)
		n=$((n + 1))
		[ "${line#not }" = "$line" ] || failed=1
		echo "${line%% [0-9]*} $n - ${line#* - }"
		;;
	[0-9]*..[0-9]*) ;;
	*) echo "$line" ;;
	esac
done < <(RV_BUILD_DIR=$out RV_KUNIT_KO=$stage/$mod/rv_kunit.ko \
	"$top/tools/testing/kernel/kunit.sh" || echo "not ok 0 - kunit.sh exited with status $?")
echo "1..$n"
exit "$failed"
