#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-module.sh: build rv.ko for one or more kernels, each from its own
# copy of the module's sources, so that builds for different kernels
# never share objects.
#
#   tools/build-module.sh [-o OUT] [KDIR...] [-- MAKE-VAR=VALUE...]
#
# KDIR is a kernel build tree (/lib/modules/V/build, or the O= tree of a
# kernel built here); without one, every installed kernel that has its
# headers, and the newest kernel's in the root tools/toolchain.sh set up.
# A KDIR inside that root is built there, with the compiler its headers
# name (gcc-14 for Linux 7.x). For each, the copy goes to OUT/V/src and the module to
# OUT/V/rv.ko, V being the tree's kernel release; OUT defaults to
# ${RV_BUILD_DIR:-build}/modules. Warnings are errors (W=1 -Werror); the
# arguments after -- go to kbuild (e.g. C=2, or
# CONFIG_INFINIBAND_RV_KUNIT_TEST=m, which adds OUT/V/rv_kunit.ko, the
# KUnit suites). The make output is in OUT/V/build.log.
# stdout: the path of each module built, one a line.

set -euo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/.." && pwd)
mod=drivers/infiniband/ulp/rv
out=${RV_BUILD_DIR:-$repo/build}/modules
kdirs=()

usage() { sed -n '4,20p' "$0" | sed 's/^# \{0,1\}//'; }

while [ "$#" -gt 0 ]; do
	case "$1" in
	-o) [ "$#" -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) usage >&2; exit 2 ;;
	*) kdirs+=("$1"); shift ;;
	esac
done

# ccache, when it is installed (RV_CCACHE=0: not used): the compiler a
# kernel's headers name (gcc-12, x86_64-linux-gnu-gcc-12) is found first
# in ccache's directory of compiler names (in the root: toolchain.sh
# --run). The copies of the sources are the same bytes in every clone;
# for their paths to be the same too, builds as root (and in the root) run
# at /mnt/rv (below), and elsewhere CCACHE_BASEDIR makes them relative to
# the clone, which is enough from 6.13 on, where kbuild compiles from the
# module's directory.
ccache_dir=
if [ "${RV_CCACHE:-1}" != 0 ] && [ -d /usr/lib/ccache ] && command -v ccache >/dev/null; then
	ccache_dir=/usr/lib/ccache
	export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$repo}
	export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi

# The root of tools/toolchain.sh, when it is set up.
tc_root=$("$here/toolchain.sh" --env 2>/dev/null | sed -n 's/^RV_TC_ROOT=//p') || true

if [ "${#kdirs[@]}" = 0 ]; then
	for b in /lib/modules/*/build; do
		[ -d "$b/" ] && kdirs+=("$b")
	done
	if [ -n "$tc_root" ]; then
		for b in "$tc_root"/lib/modules/*/build; do
			b=$(readlink -f "$b")
			[[ "$b" == "$tc_root"/* ]] && [ -d "$b/" ] && kdirs+=("$b")
		done
	fi
	[ "${#kdirs[@]}" -gt 0 ] ||
		{ echo "build-module: no kernel headers installed: run 'make deps'" >&2; exit 1; }
fi

# The release a build tree's modules are for (their vermagic).
kernel_release() {
	sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$1/include/generated/utsrelease.h" 2>/dev/null | grep .
}

rc=0
for kdir in "${kdirs[@]}"; do
	kver=$(kernel_release "$kdir") ||
		{ echo "build-module: $kdir is not a kernel build tree" >&2; exit 1; }
	work=$out/$kver
	src=$work/src
	mkdir -p "$src/$mod" "$src/include"
	# Sources that left the repository leave the copy too; cp -p keeps
	# the times of the others, so an unchanged file is not rebuilt.
	for f in "$src/$mod"/*.[ch]; do
		[ -e "$f" ] || continue
		case "$f" in *.mod.c) continue ;; esac
		[ -e "$repo/$mod/${f##*/}" ] || [ -e "$repo/compat/${f##*/}" ] ||
			rm -f "$f" "${f%.c}.o"
	done
	# With the out-of-tree layer (compat/): its Kbuild, which kbuild
	# reads instead of the Makefile, and its files.
	cp -p "$repo/$mod"/*.[ch] "$repo/$mod/Makefile" "$repo/$mod/Kconfig" \
		"$repo/compat/Kbuild" "$repo/compat"/*.[ch] "$src/$mod/"
	rm -rf "$src/include/uapi"
	cp -pr "$repo/include/uapi" "$src/include/"
	cmd=(make -C "$kdir" M="$src/$mod")
	if [ -n "$tc_root" ] && [[ "$kdir" == "$tc_root"/* ]]; then
		# In the root, the work tree bound at /mnt/rv.
		cmd=("$here/toolchain.sh" --run --bind "$work"
			make -C "${kdir#"$tc_root"}" "M=/mnt/rv/src/$mod")
	elif [ -n "$ccache_dir" ] && [ "$(id -u)" = 0 ] && [ -d /mnt ] &&
	     command -v unshare >/dev/null; then
		# kbuild before 6.13 compiles from the kernel's directory with
		# the module's absolute paths, which name the clone: as root,
		# the work tree goes to /mnt/rv of a private mount namespace
		# (a tmpfs over /mnt), as in the root, so that every clone's
		# objects are the same to ccache.
		# shellcheck disable=SC2016 # the inner shell expands them
		cmd=(unshare -m sh -c 'mount -t tmpfs rv /mnt && mkdir /mnt/rv &&
			mount --bind "$1" /mnt/rv && shift && exec "$@"' sh "$work"
			env PATH="$ccache_dir:$PATH" make -C "$kdir" "M=/mnt/rv/src/$mod")
	elif [ -n "$ccache_dir" ]; then
		cmd=(env PATH="$ccache_dir:$PATH" "${cmd[@]}")
	fi
	if "${cmd[@]}" -j"$(nproc)" CONFIG_INFINIBAND_RV=m W=1 \
		KCFLAGS=-Werror "$@" modules >"$work/build.log" 2>&1; then
		cp -p "$src/$mod/rv.ko" "$work/rv.ko"
		# The KUnit suites' module, when asked for, beside it.
		rm -f "$work/rv_kunit.ko"
		if [[ " $* " == *" CONFIG_INFINIBAND_RV_KUNIT_TEST=m "* ]]; then
			cp -p "$src/$mod/rv_kunit.ko" "$work/rv_kunit.ko"
		fi
		echo "$work/rv.ko"
	else
		sed 's/^/  /' "$work/build.log" | tail -n 30 >&2
		echo "build-module: building rv.ko for $kver failed (see $work/build.log)" >&2
		rc=1
	fi
done
exit "$rc"
