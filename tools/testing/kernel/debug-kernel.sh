#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh: build (once) an rv debug test kernel, x86_64 defconfig
# plus debug.config (KASAN, lockdep, kmemleak, fault injection, KUnit),
# from Debian's linux-source-SERIES, and cache it outside the repository.
#
#   tools/testing/kernel/debug-kernel.sh [-v] [SERIES]
#
# SERIES is the newest 7.x (the default, "7": the source tools/toolchain.sh
# fetched from Debian 13's backports), 6.12 or 6.1 (linux-source-SERIES
# installed by make deps). The host's gcc builds it.
# The cache directory is ${RV_KERNEL_CACHE:-${RV_CACHE_DIR:-/var/cache/rv}/kernel}/KEY,
# where KEY is a sha256 over debug.config, the linux-source-SERIES package
# version and this script's recipe number. It holds:
#   build/               the O= object tree: KDIR for `make -C KDIR M=...`
#   bzImage              the kernel (build/vmlinux has its symbols)
#   lib/modules/KVER/    the modules, as after modules_install
#   kernel.env           the lines printed below
# The extracted source is shared by every key: src/linux-source-SERIES-PKGVER.
#
# A second run with the same key only prints the result. On success the
# last lines on stdout are sourceable:
#   RV_DEBUG_KDIR=...  RV_DEBUG_KERNEL=...  RV_DEBUG_MODULES=...
#   RV_DEBUG_KVER=...  RV_DEBUG_DIR=...
# Progress goes to stderr, the make output to KEY/build.log (-v: also to
# stderr).

set -euo pipefail

PROG=debug-kernel
RECIPE=1
HERE=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
FRAGMENT=$HERE/debug.config
CACHE=${RV_KERNEL_CACHE:-${RV_CACHE_DIR:-/var/cache/rv}/kernel}
VERBOSE=0

T0=$(date +%s)

msg() {
	printf '%s: [%4ss] %s\n' "$PROG" "$(($(date +%s) - T0))" "$*" >&2
}

die() {
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 1
}

SERIES=7
while [ "$#" -gt 0 ]; do
	case "$1" in
	-v) VERBOSE=1 ;;
	6.1|6.12|7|7.*) SERIES=$1 ;;
	-h|--help) sed -n '4,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "usage: $0 [-v] [7|6.12|6.1]" ;;
	esac
	shift
done

[ -r "$FRAGMENT" ] || die "$FRAGMENT not found"
case "$SERIES" in
7*)
	tc=$("$HERE/../../toolchain.sh" --env) ||
		die "no Linux 7.x source: run tools/toolchain.sh (make deps)"
	tc_series=$(sed -n 's/^RV_TC_SERIES=//p' <<<"$tc")
	[[ "$tc_series" == "$SERIES" || "$tc_series" == "$SERIES".* ]] ||
		die "tools/toolchain.sh has Linux $tc_series, not $SERIES"
	SERIES=$tc_series
	SRC_PKG=linux-source-$SERIES
	SRC_TAR=$(sed -n 's/^RV_TC_SOURCE=//p' <<<"$tc")
	PKGVER=$(cat "$SRC_TAR.version" 2>/dev/null) || die "$SRC_TAR.version not found"
	;;
*)
	SRC_PKG=linux-source-$SERIES
	SRC_TAR=/usr/src/$SRC_PKG.tar.xz
	[ -r "$SRC_TAR" ] || die "$SRC_TAR not found (apt-get install $SRC_PKG)"
	PKGVER=$(dpkg-query -W -f='${Version}' "$SRC_PKG" 2>/dev/null) ||
		die "package $SRC_PKG is not installed"
	;;
esac
[ -r "$SRC_TAR" ] || die "$SRC_TAR not found"
[ -n "$PKGVER" ] || die "package $SRC_PKG is not installed"
for tool in make gcc flex bison bc perl xz depmod flock; do
	command -v "$tool" >/dev/null || die "$tool not found (see tools/testing/kernel/README.md)"
done
[ -e /usr/include/libelf.h ] || die "libelf.h not found (apt-get install libelf-dev)"
[ -e /usr/include/openssl/ssl.h ] || die "openssl headers not found (apt-get install libssl-dev)"

KEY=$({
	echo "recipe $RECIPE"
	echo "$SRC_PKG $PKGVER"
	sha256sum <"$FRAGMENT"
} | sha256sum | cut -c1-16)
DIR=$CACHE/$KEY
ENV_FILE=$DIR/kernel.env
SRC=$CACHE/src/$SRC_PKG-$PKGVER
B=$DIR/build
LOG=$DIR/build.log

print_env() {
	cat "$ENV_FILE"
}

if [ -f "$DIR/done" ] && [ -f "$ENV_FILE" ]; then
	msg "cached: $DIR ($SRC_PKG $PKGVER)"
	print_env
	exit 0
fi

mkdir -p "$CACHE" "$DIR"
# One build per cache at a time.
exec 9>"$CACHE/.lock"
if ! flock -n 9; then
	msg "waiting for another build in $CACHE"
	flock 9
fi
if [ -f "$DIR/done" ] && [ -f "$ENV_FILE" ]; then
	msg "built meanwhile: $DIR"
	print_env
	exit 0
fi

msg "building the debug kernel into $DIR ($SRC_PKG $PKGVER, key $KEY)"

if [ ! -f "$SRC/.rv-extracted" ]; then
	msg "extracting $SRC_TAR"
	rm -rf "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -xJf "$SRC_TAR" -C "$SRC.tmp"
	rm -rf "$SRC"
	mv "$SRC.tmp/$SRC_PKG" "$SRC"
	rmdir "$SRC.tmp"
	touch "$SRC/.rv-extracted"
fi

# run STEP MAKE-ARGS...: make in the object tree, output to the log.
run_make() {
	local step=$1 rc=0
	shift
	msg "$step"
	echo "### $step: make $*" >>"$LOG"
	if [ "$VERBOSE" = 1 ]; then
		make -C "$SRC" O="$B" "$@" 2>&1 | tee -a "$LOG" >&2 || rc=$?
	else
		make -C "$SRC" O="$B" "$@" >>"$LOG" 2>&1 || rc=$?
	fi
	if [ "$rc" != 0 ]; then
		tail -n 40 "$LOG" >&2
		die "$step failed (status $rc), see $LOG"
	fi
}

mkdir -p "$B"
: >"$LOG"
run_make "configuring: defconfig + $(basename "$FRAGMENT")" defconfig
cat "$FRAGMENT" >>"$B/.config"
run_make "configuring: olddefconfig" olddefconfig

# Every CONFIG line of the fragment must have survived olddefconfig.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*) want=$line sym=${line%%=*} ;;
	"# CONFIG_"*" is not set") sym=${line#"# "}; sym=${sym%% *}; want="# $sym is not set" ;;
	*) continue ;;
	esac
	got=$(grep -E "^$sym=|^# $sym is not set" "$B/.config" || true)
	if [ "$want" = "# $sym is not set" ] && [ -z "$got" ]; then
		continue	# absent means not set (its dependencies are off)
	fi
	if [ "$got" != "$want" ]; then
		printf '%s: error: want "%s", .config has "%s"\n' "$PROG" "$want" "${got:-nothing}" >&2
		bad=1
	fi
done <"$FRAGMENT"
[ "$bad" = 0 ] || die "the configuration lost options of $FRAGMENT (a dependency is missing?)"
msg "configuration verified: every option of $(basename "$FRAGMENT") is set"

JOBS=$(nproc)
run_make "building bzImage and modules (-j$JOBS; this takes a while)" -j"$JOBS" bzImage modules
KVER=$(make -s -C "$SRC" O="$B" kernelrelease 2>/dev/null)
[ -n "$KVER" ] || die "cannot read the kernel release"
rm -rf "${DIR:?}/lib"
run_make "installing modules into $DIR/lib/modules/$KVER" modules_install INSTALL_MOD_PATH="$DIR"
cp "$B/arch/x86/boot/bzImage" "$DIR/bzImage.tmp"
mv -f "$DIR/bzImage.tmp" "$DIR/bzImage"

{
	printf 'RV_DEBUG_KDIR=%q\n' "$B"
	printf 'RV_DEBUG_KERNEL=%q\n' "$DIR/bzImage"
	printf 'RV_DEBUG_MODULES=%q\n' "$DIR/lib/modules/$KVER"
	printf 'RV_DEBUG_KVER=%q\n' "$KVER"
	printf 'RV_DEBUG_DIR=%q\n' "$DIR"
} >"$ENV_FILE"
touch "$DIR/done"
msg "done in $(($(date +%s) - T0))s: kernel $KVER"
print_env
