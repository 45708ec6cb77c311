#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# toolchain.sh: the newest Debian kernel rv is tested on, and the compiler
# its headers name. Debian 13's backports carry Linux 7.x; its headers ask
# for gcc-14 and their tools (objtool, modpost) need glibc 2.38, which
# Debian 12 lacks. So this sets up, once, a Debian 13 (trixie) root with
# debootstrap, holding gcc-14 and the headers of the newest 7.x image in
# trixie-backports, and unpacks that image, its modules and its source
# beside it. Nothing is installed into this machine's own system.
#
#   tools/toolchain.sh [--env | --update | --help]
#   tools/toolchain.sh --run [--bind DIR] COMMAND...
#
# The cache is ${RV_TOOLCHAIN_CACHE:-${RV_CACHE_DIR:-/var/cache/rv}/toolchain}:
#   root/                 the trixie root (chroot): gcc-14, make, ccache,
#                         /lib/modules/V/build (the headers), and sid's
#                         sparse in /usr/local/bin (sparse.status: or why not)
#   ccache/               the root's compiler cache
#   kernels/V/            bzImage and lib/modules/V/ (depmod'ed): what
#                         vm-run --kernel-dir boots (vm-run --kver V finds it),
#                         with updates/rdma_rxe.ko: soft-RoCE with the fixes
#                         of tools/testing/kernel/rxe-patches/ (rxe.sh)
#   linux-source-S.tar.xz the kernel's source (the debug kernel's base)
#   toolchain.env         the lines printed below
# A second run prints toolchain.env and does nothing else; --update resolves
# the newest 7.x again and adds it. --env only prints toolchain.env (exit 1
# if there is none). Needs root (debootstrap, chroot). The last lines on
# stdout are sourceable:
#   RV_TC_ROOT=...  RV_TC_KVER=...  RV_TC_SERIES=...  RV_TC_KERNEL_DIR=...
#   RV_TC_SOURCE=...
#
# --run runs COMMAND in the root, in a private mount namespace with /proc
# mounted (apt and objtool read it), DIR bound at /mnt/rv, and gcc-14 going
# through ccache (RV_CCACHE=0: not) into ccache/: how tools/build-module.sh
# and tools/testing/kernel/rxe.sh build there. Its exit status is
# COMMAND's.

set -euo pipefail

PROG=toolchain
# Bump when the root's packages or the layout change.
RECIPE=4
MIRROR=${RV_TOOLCHAIN_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
CACHE=${RV_TOOLCHAIN_CACHE:-${RV_CACHE_DIR:-/var/cache/rv}/toolchain}
ROOT=$CACHE/root
ENV_FILE=$CACHE/toolchain.env
PKGS=gcc-14,make,libc6-dev,libelf-dev,sparse,ccache,ca-certificates,xz-utils

T0=$(date +%s)
msg() { printf '%s: [%4ss] %s\n' "$PROG" "$(($(date +%s) - T0))" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }

# in_root BIND COMMAND...: COMMAND in the root (--run), BIND ("" for none)
# at /mnt/rv.
in_root() {
	local bind=$1 path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	shift
	[ "${RV_CCACHE:-1}" = 0 ] || path=/usr/lib/ccache:$path
	mkdir -p "$ROOT/mnt/rv" "$ROOT/var/cache/rv-ccache" "$CACHE/ccache"
	# shellcheck disable=SC2016 # the inner shell expands them
	unshare -m sh -c 'root=$1 bind=$2 cc=$3 && shift 3 &&
		mount -t proc proc "$root/proc" &&
		mount --bind "$cc" "$root/var/cache/rv-ccache" &&
		{ [ -z "$bind" ] || mount --bind "$bind" "$root/mnt/rv"; } &&
		exec chroot "$root" "$@"' sh "$ROOT" "$bind" "$CACHE/ccache" \
		env PATH="$path" CCACHE_DIR=/var/cache/rv-ccache "$@"
}

update=0
case "${1:-}" in
"") ;;
--update) update=1 ;;
--env) [ -f "$ENV_FILE" ] || exit 1; cat "$ENV_FILE"; exit 0 ;;
--run)
	shift
	bind=
	if [ "${1:-}" = --bind ]; then
		[ "$#" -ge 2 ] || die "--bind needs a directory"
		bind=$(cd "$2" && pwd) || die "no directory $2"
		shift 2
	fi
	[ "$#" -gt 0 ] || die "--run needs a command"
	[ -x "$ROOT/usr/bin/gcc-14" ] || die "no root in $CACHE: run tools/toolchain.sh (make deps)"
	in_root "$bind" "$@"
	exit
	;;
-h|--help) sed -n '4,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) die "usage: $0 [--env | --update | --help] | --run [--bind DIR] COMMAND..." ;;
esac

# Debian 13's sparse (0.6.4) cannot parse 7.x's headers, which give the
# checker __typeof_unqual__ too; sid's (0.6.5~rc1) can. Its binary needs
# only glibc 2.38 or later: it is unpacked into the root's /usr/local/bin,
# ahead of Debian 13's in PATH, and not installed. SPARSE_STAMP records
# that it was done, or why it could not be.
SPARSE=$ROOT/usr/local/bin/sparse
SPARSE_STAMP=$CACHE/sparse.status
if [ "$update" = 0 ] && [ -f "$ENV_FILE" ] && [ -f "$SPARSE_STAMP" ] &&
   [ "$(cat "$CACHE/recipe" 2>/dev/null)" = "$RECIPE" ]; then
	cat "$ENV_FILE"
	exit 0
fi
[ "$(id -u)" = 0 ] || die "needs root (debootstrap and chroot)"
for t in debootstrap chroot unshare depmod dpkg-deb flock; do
	command -v "$t" >/dev/null || die "$t not found (make deps)"
done

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

if [ "$(cat "$CACHE/recipe" 2>/dev/null)" != "$RECIPE" ] ||
   [ ! -x "$ROOT/usr/bin/gcc-14" ]; then
	msg "debootstrap $SUITE into $ROOT ($PKGS)"
	rm -rf "$ROOT" "$CACHE/recipe" "$ENV_FILE"
	debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$ROOT" "$MIRROR" \
		>"$CACHE/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$CACHE/debootstrap.log" >&2; die "debootstrap failed, see $CACHE/debootstrap.log"; }
	echo "deb $MIRROR $SUITE-backports main" >"$ROOT/etc/apt/sources.list.d/backports.list"
	update=1
fi

if [ "$update" = 1 ] || [ ! -f "$ENV_FILE" ]; then
	msg "resolving the newest Linux 7.x in $SUITE-backports"
	in_root "" apt-get -q update >"$CACHE/apt.log" 2>&1 ||
		{ tail -n 20 "$CACHE/apt.log" >&2; die "apt-get update in the root failed"; }
	# linux-headers-amd64 in backports depends on the newest release's.
	hdr=$(in_root "" apt-cache -o APT::Default-Release="$SUITE-backports" show \
		"linux-headers-amd64/$SUITE-backports" 2>/dev/null |
		sed -n 's/^Depends: .*\(linux-headers-[0-9][^ ,]*-amd64\).*/\1/p' | head -n 1)
	[ -n "$hdr" ] || die "no linux-headers-amd64 in $SUITE-backports"
	kver=${hdr#linux-headers-}
	series=$(echo "$kver" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
	case "$series" in 7.*) ;; *) die "the newest kernel in $SUITE-backports is $kver, not 7.x" ;; esac
	msg "Linux $kver: headers into the root, image, modules and source beside it"
	in_root "" env DEBIAN_FRONTEND=noninteractive apt-get -q install -y \
		--no-install-recommends -t "$SUITE-backports" "$hdr" >>"$CACHE/apt.log" 2>&1 ||
		{ tail -n 20 "$CACHE/apt.log" >&2; die "installing $hdr failed"; }
	rm -rf "$ROOT/var/tmp/debs"
	mkdir -p "$ROOT/var/tmp/debs"
	# The image package is only dependencies: the kernel is in
	# linux-binary-V, its modules in linux-modules-V and linux-base-V.
	in_root "" sh -c "cd /var/tmp/debs && apt-get -q download -t $SUITE-backports \
		linux-binary-$kver linux-modules-$kver linux-base-$kver linux-source-$series" \
		>>"$CACHE/apt.log" 2>&1 || { tail -n 20 "$CACHE/apt.log" >&2; die "downloading Linux $kver failed"; }
	kdir=$CACHE/kernels/$kver
	rm -rf "$kdir" "$kdir.tmp"
	mkdir -p "$kdir.tmp/lib/modules"
	for d in "$ROOT"/var/tmp/debs/linux-{binary,modules,base}-"$kver"_*.deb; do
		dpkg-deb -x "$d" "$kdir.tmp/x"
	done
	mv "$kdir.tmp/x/usr/lib/modules/$kver" "$kdir.tmp/lib/modules/"
	mv "$kdir.tmp/lib/modules/$kver/vmlinuz" "$kdir.tmp/bzImage"
	rm -rf "$kdir.tmp/x"
	depmod -b "$kdir.tmp" "$kver"
	# Debian's headers lack the script kbuild asks whether sparse works
	# with (C=1/C=2 then skip sparse, with a warning): one of our own.
	chk=$(readlink -f "$ROOT/lib/modules/$kver/source")/scripts/checker-valid.sh
	if [[ "$chk" == "$ROOT"/* ]] && [ ! -e "$chk" ]; then
		printf '%s\n' '#!/bin/sh' \
			'# Written by rv'"'"'s tools/toolchain.sh: prints 1 when the checker runs.' \
			'echo "extern int rv_checker_probe;" | "$@" - >/dev/null 2>&1 && echo 1' >"$chk"
		chmod +x "$chk"
	fi
	mv "$kdir.tmp" "$kdir"
	src=$CACHE/linux-source-$series.tar.xz
	dpkg-deb --fsys-tarfile "$ROOT"/var/tmp/debs/linux-source-"$series"_*.deb |
		tar -xO "./usr/src/linux-source-$series.tar.xz" >"$src.tmp"
	mv "$src.tmp" "$src"
	dpkg-deb -f "$ROOT"/var/tmp/debs/linux-source-"$series"_*.deb Version >"$src.version"
	rm -rf "$ROOT/var/tmp/debs"
	{
		echo "RV_TC_ROOT=$ROOT"
		echo "RV_TC_KVER=$kver"
		echo "RV_TC_SERIES=$series"
		echo "RV_TC_KERNEL_DIR=$kdir"
		echo "RV_TC_SOURCE=$src"
	} >"$ENV_FILE.tmp"
	mv "$ENV_FILE.tmp" "$ENV_FILE"
	echo "$RECIPE" >"$CACHE/recipe"
fi
if [ "$update" = 1 ] || [ ! -f "$SPARSE_STAMP" ]; then
	msg "sparse from sid, for the 7.x headers"
	sid=/var/tmp/sid
	rm -rf "$ROOT$sid" "$SPARSE"
	mkdir -p "$ROOT$sid/lists/partial" "$ROOT$sid/cache/archives/partial" "$ROOT$sid/debs"
	echo "deb $MIRROR sid main" >"$ROOT$sid/sources.list"
	# Its own lists: the root's apt never sees sid. The mirror may serve
	# a sid whose Release has passed its Valid-Until.
	apt_sid=(apt-get -q -o Dir::Etc::SourceList="$sid/sources.list"
		-o Dir::Etc::SourceParts=/nonexistent -o Dir::State::Lists="$sid/lists"
		-o Dir::Cache="$sid/cache" -o Acquire::Languages=none
		-o Acquire::Check-Valid-Until=false)
	why=
	# shellcheck disable=SC2016 # the inner shell expands them
	if ! in_root "" "${apt_sid[@]}" update >"$CACHE/apt-sid.log" 2>&1 ||
	   ! in_root "" sh -c 'cd "$1" && shift && exec "$@" download sparse' sh \
		"$sid/debs" "${apt_sid[@]}" >>"$CACHE/apt-sid.log" 2>&1; then
		why="fetching sid's sparse failed, see $CACHE/apt-sid.log"
	else
		deb=$(ls "$ROOT$sid"/debs/sparse_*.deb)
		pkgver=$(dpkg-deb -f "$deb" Version)
		dpkg-deb -x "$deb" "$ROOT$sid/x"
		install -m 755 "$ROOT$sid/x/usr/bin/sparse" "$SPARSE"
		if ! ver=$(in_root "" /usr/local/bin/sparse --version 2>&1); then
			rm -f "$SPARSE"
			why="sid's sparse does not run in the root: $ver"
		fi
	fi
	rm -rf "${ROOT:?}$sid"
	if [ -n "$why" ]; then
		msg "$why; sparse skips the 7.x kernel"
		echo "unavailable: $why" >"$SPARSE_STAMP"
	else
		msg "sparse $pkgver from sid: /usr/local/bin/sparse in the root"
		echo "ok: sparse $pkgver from sid" >"$SPARSE_STAMP"
	fi
fi
# The kernel's soft-RoCE with the fixes the bed needs (once per kernel
# and set of patches: tools/testing/kernel/rxe.sh).
"$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/testing/kernel/rxe.sh" >/dev/null ||
	die "building the bed's rdma_rxe failed"
msg "ready: $(sed -n 's/^RV_TC_KVER=//p' "$ENV_FILE") in $CACHE"
cat "$ENV_FILE"
