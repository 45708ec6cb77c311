#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# rxe.sh: soft-RoCE (rdma_rxe.ko) with the fixes of rxe-patches/, for the
# newest kernel's bed (tools/toolchain.sh). The bed's NICs are rxe; where
# rxe has a defect that the tests hit, the fix goes into rxe, never into
# rv: each patch of rxe-patches/ is one fix, written for upstream, in the
# form `git am` takes.
#
#   tools/testing/kernel/rxe.sh
#
# From the toolchain's linux-source tarball, drivers/infiniband/sw/rxe is
# patched and built as an external module in the Debian 13 root, against
# the kernel's own headers with the compiler they name, then installed as
# KERNEL_DIR/lib/modules/V/updates/rdma_rxe.ko (depmod: modprobe rdma_rxe,
# as the VMs load it, takes that one). A patch that is already in the
# source (it applies in reverse) is skipped; one that applies neither way
# is an error. Done once per kernel and set of patches (updates/rxe.stamp);
# prints the module's path.

set -euo pipefail

PROG=rxe.sh
HERE=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
PATCHES=$HERE/rxe-patches
RXE=drivers/infiniband/sw/rxe

msg() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { msg "error: $*"; exit 1; }

case "${1:-}" in
-h|--help) sed -n '4,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
"") ;;
*) die "no arguments (see --help)" ;;
esac

tc=$("$HERE/../../toolchain.sh" --env) || die "no toolchain: run tools/toolchain.sh (make deps)"
get() { sed -n "s/^$1=//p" <<<"$tc"; }
root=$(get RV_TC_ROOT) kver=$(get RV_TC_KVER) series=$(get RV_TC_SERIES)
kdir=$(get RV_TC_KERNEL_DIR) src=$(get RV_TC_SOURCE)
mods=$kdir/lib/modules/$kver
ko=$mods/updates/rdma_rxe.ko
stamp=$mods/updates/rxe.stamp

want=$({
	echo "$kver $(cat "$src.version" 2>/dev/null)"
	cat "$PATCHES"/*.patch
} | sha256sum | cut -c1-16)
if [ -f "$ko" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
	echo "$ko"
	exit 0
fi

# The build happens inside the root, where the headers and gcc-14 are.
work=$root/var/tmp/rv-rxe
rm -rf "$work"
mkdir -p "$work"
tar -xJf "$src" -C "$work" --strip-components=1 "linux-source-$series/$RXE" ||
	die "no $RXE in $src"
for p in "$PATCHES"/*.patch; do
	if patch -p1 -d "$work" --dry-run --forward -s <"$p" >/dev/null 2>&1; then
		patch -p1 -d "$work" --forward -s <"$p"
		msg "applied ${p##*/}"
	elif patch -p1 -d "$work" --dry-run -R -s <"$p" >/dev/null 2>&1; then
		msg "${p##*/}: already in Linux $kver"
	else
		die "${p##*/} does not apply to Linux $kver's rxe"
	fi
done
log=$work/build.log
if ! "$HERE/../../toolchain.sh" --run make -C "/lib/modules/$kver/build" \
	M="/var/tmp/rv-rxe/$RXE" -j"$(nproc)" CONFIG_RDMA_RXE=m modules >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "building rdma_rxe for $kver failed"
fi
mkdir -p "$mods/updates"
cp "$work/$RXE/rdma_rxe.ko" "$ko.tmp"
mv "$ko.tmp" "$ko"
depmod -b "$kdir" "$kver"
echo "$want" >"$stamp"
rm -rf "$work"
msg "Linux $kver: $ko"
echo "$ko"
