#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# siw.sh: build Soft-iWARP (siw.ko) for the test kernels, as an external
# module, from the kernel's own source: the VM tests attach rv to an iWARP
# port (userspace/tests/vm/test_fast_reg.cpp), and Debian's kernels and the
# debug kernel have CONFIG_RDMA_SIW unset.
#
#   tools/testing/kernel/siw.sh [-o OUT] [KDIR...]
#
# KDIR is a kernel build tree: /lib/modules/V/build of a Debian kernel, or
# the O= tree of a kernel built from source (the debug kernel,
# debug-kernel.sh); default: the test kernels (tools/testing/kernels.sh).
# The source of drivers/infiniband/sw/siw/ is KDIR/source (an O= tree
# links its source there), else Debian's linux-source-SERIES tarball,
# whose version must be that of the kernel's headers package. Built with
# the compiler the kernel's .config names (CONFIG_CC_VERSION_TEXT). A
# kernel without LIBCRC32C (the debug kernel) gets lib/libcrc32c.c built
# beside siw: OUT/V/libcrc32c.ko, to be loaded first.
#
# Writes OUT/V/siw.ko (OUT: ${RV_BUILD_DIR:-build}/siw, V the kernel
# release), built once and kept while the source it came from is the
# same (OUT/V/stamp), and kept for other clones in
# ${RV_CACHE_DIR:-/var/cache/rv}/siw/V when that can be written: taking
# siw out of a tarball unpacks all of it. When siw cannot be built, OUT/V/unavailable says why
# (the test prints it when it skips). The make output is in OUT/V/build.log.
# stdout: the path of each siw.ko, one a line. Exit status 1 if any kernel
# got none.

set -euo pipefail

PROG=siw.sh
HERE=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
OUT=${RV_BUILD_DIR:-$REPO/build}/siw
SIW=drivers/infiniband/sw/siw

usage() { sed -n '4,26p' "$0" | sed 's/^# \{0,1\}//'; }

msg() { printf '%s: %s\n' "$PROG" "$*" >&2; }

kdirs=()
while [ "$#" -gt 0 ]; do
	case "$1" in
	-o) [ "$#" -ge 2 ] || { usage >&2; exit 2; }; OUT=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	-*) usage >&2; exit 2 ;;
	*) kdirs+=("$1"); shift ;;
	esac
done
if [ "${#kdirs[@]}" = 0 ]; then
	mapfile -t kvers < <("$REPO/tools/testing/kernels.sh")
	for v in "${kvers[@]}"; do
		kdirs+=("/lib/modules/$v/build")
	done
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# The release a build tree's modules are for (their vermagic).
kernel_release() {
	sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$1/include/generated/utsrelease.h" 2>/dev/null | grep .
}

# config KDIR SYMBOL: its value in KDIR/.config ("" when not set).
config() {
	sed -n "s/^$2=//p" "$1/.config" 2>/dev/null | head -n 1
}

# unavailable DIR WHY: record why there is no siw.ko, and say it.
unavailable() {
	rm -f "$1/siw.ko" "$1/libcrc32c.ko" "$1/stamp"
	printf '%s\n' "$2" >"$1/unavailable"
	msg "$(basename "$1"): no siw.ko: $2"
}

# build KDIR: OUT/V/siw.ko for the kernel of KDIR; 1 if there is none.
build() {
	local kdir=$1 kver work src srcdesc tarball series pkgver hdrver cc
	local libcrc='' stamp cache
	kver=$(kernel_release "$kdir") || {
		msg "$kdir is not a kernel build tree"
		return 1
	}
	work=$OUT/$kver
	mkdir -p "$work"

	# Where siw's source comes from, and what identifies it.
	if [ -f "$kdir/source/$SIW/Makefile" ]; then
		src=$(readlink -f "$kdir/source")
		srcdesc="tree $src"
		tarball=
	else
		series=${kver%%-*}
		series=$(echo "$series" | cut -d. -f1,2)
		series=${series%%[!0-9.]*}
		tarball=/usr/src/linux-source-$series.tar.xz
		if [ ! -r "$tarball" ]; then
			unavailable "$work" "$tarball not found (make deps installs linux-source-$series)"
			return 1
		fi
		pkgver=$(dpkg-query -W -f='${Version}' "linux-source-$series" 2>/dev/null || true)
		hdrver=$(dpkg-query -W -f='${Version}' "linux-headers-$kver" 2>/dev/null || true)
		if [ -z "$pkgver" ] || [ "$pkgver" != "$hdrver" ]; then
			unavailable "$work" "linux-source-$series is '${pkgver:-not installed}' but the headers of $kver are '${hdrver:-not a Debian package}': its siw would not match the kernel"
			return 1
		fi
		srcdesc="linux-source-$series $pkgver"
	fi
	case "$(config "$kdir" CONFIG_INFINIBAND)" in
	y|m) ;;
	*) unavailable "$work" "the kernel has no InfiniBand core (CONFIG_INFINIBAND)"
	   return 1 ;;
	esac
	case "$(config "$kdir" CONFIG_RDMA_SIW)" in
	y|m) unavailable "$work" "the kernel has siw itself (CONFIG_RDMA_SIW): modprobe siw"
	     return 1 ;;
	esac
	case "$(config "$kdir" CONFIG_LIBCRC32C)" in
	y|m) ;;
	*) if [ "$(config "$kdir" CONFIG_CRYPTO_CRC32C)" = "" ]; then
		   unavailable "$work" "the kernel has neither LIBCRC32C nor CRYPTO_CRC32C, which siw needs"
		   return 1
	   fi
	   libcrc=1 ;;
	esac
	# The compiler the kernel was built with, e.g. gcc-12.
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$kdir/.config")
	if [ -z "$cc" ] || ! command -v "$cc" >/dev/null; then
		msg "$kver: compiler '${cc:-?}' of the kernel not found, using gcc"
		cc=gcc
	fi
	stamp="$srcdesc; kdir $(readlink -f "$kdir"); cc $cc; libcrc32c ${libcrc:-0}"
	if [ -f "$work/siw.ko" ] && [ "$(cat "$work/stamp" 2>/dev/null)" = "$stamp" ]; then
		echo "$work/siw.ko"
		return 0
	fi
	cache=${RV_CACHE_DIR:-/var/cache/rv}/siw/$kver
	if [ -f "$cache/siw.ko" ] && [ "$(cat "$cache/stamp" 2>/dev/null)" = "$stamp" ]; then
		rm -f "$work/unavailable" "$work/libcrc32c.ko"
		cp -p "$cache"/*.ko "$work/"
		echo "$stamp" >"$work/stamp"
		echo "$work/siw.ko"
		return 0
	fi

	msg "$kver: building siw.ko from $srcdesc with $cc"
	rm -rf "$work/src" "$work/unavailable"
	mkdir -p "$work/src"
	if [ -n "$tarball" ]; then
		# Only siw's directory (and libcrc32c.c) leave the tarball.
		local members=("linux-source-$series/$SIW")
		[ -z "$libcrc" ] || members+=("linux-source-$series/lib/libcrc32c.c")
		tar -xJf "$tarball" -C "$work/src" "${members[@]}"
		src=$work/src/linux-source-$series
	fi
	mkdir -p "$work/src/m"
	cp -p "$src/$SIW"/*.[ch] "$work/src/m/"
	# siw's own Makefile, plus libcrc32c when the kernel has none.
	{
		echo "obj-m += siw.o"
		sed -n '/^siw-y/,/^$/p' "$src/$SIW/Makefile"
		if [ -n "$libcrc" ]; then
			echo "obj-m += libcrc32c.o"
		fi
	} >"$work/src/m/Kbuild"
	[ -z "$libcrc" ] || cp -p "$src/lib/libcrc32c.c" "$work/src/m/"
	if make -C "$kdir" M="$work/src/m" CC="$cc" modules >"$work/build.log" 2>&1; then
		cp -p "$work/src/m/siw.ko" "$work/siw.ko.tmp"
		mv -f "$work/siw.ko.tmp" "$work/siw.ko"
		if [ -n "$libcrc" ]; then
			cp -p "$work/src/m/libcrc32c.ko" "$work/libcrc32c.ko"
		else
			rm -f "$work/libcrc32c.ko"
		fi
		echo "$stamp" >"$work/stamp"
		if mkdir -p "$cache.tmp.$$" 2>/dev/null &&
		   cp -p "$work"/*.ko "$work/stamp" "$cache.tmp.$$/"; then
			rm -rf "$cache"
			mv "$cache.tmp.$$" "$cache"
		fi
		rm -rf "$cache.tmp.$$"
		echo "$work/siw.ko"
		return 0
	fi
	sed 's/^/  /' "$work/build.log" | tail -n 20 >&2
	unavailable "$work" "siw did not build out of tree against $kver (see $work/build.log): $(grep -m1 -E 'error|ERROR' "$work/build.log" || echo 'make failed')"
	return 1
}

rc=0
for kdir in "${kdirs[@]}"; do
	build "$kdir" || rc=1
done
exit "$rc"
