#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install tier: what `make install`, `make uninstall` and DKMS do for the
# people who run rv. In a copy of the source tree (other builds of this
# tree are left alone) and a scratch directory, never the machine's own
# /usr or /lib/modules:
#   - `make install DESTDIR=` puts every file in place, and nothing else;
#   - librv is the ABI mirror alone: the tools' helpers (userspace/toolkit:
#     JSON writer, debugfs and sysfs readers) are neither among its
#     headers nor in librv.a, and every installed header compiles alone;
#   - rv.pc (pkg-config) and the CMake package rv work: a C++20 program
#     that prepares an ATTACH builds against the staged tree both ways and
#     runs; a C11 program includes the staged <rdma/rv_user_ioctls.h>;
#   - the man pages render without groff warnings;
#   - `modinfo -p rv.ko` gives every parameter's unit, range and default,
#     as the README table, rv(4) and the modprobe.d example do;
#   - the admin files agree with the module (/dev/rv's mode);
#   - `make uninstall DESTDIR=` leaves no file behind;
#   - dkms add / build / remove of `make dkms-source`'s tree against the
#     test kernel's headers (its own DKMS tree; needs root).
# TAP output. Takes about two minutes (two module builds, librv and the
# tools without their tests); the start of each long step and the total
# ("# check-install: [+N s] ...", "# check-install: total N s") go to
# stderr.
set -uo pipefail

t0=$SECONDS

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
# shellcheck source=tools/testing/vm/lib.sh
. tools/testing/vm/lib.sh

# make install's kernel, as the top Makefile picks it (never `uname -r`);
# DKMS builds for every kernel with headers.
# shellcheck disable=SC2012 # the Makefile's very words
kdir=${KDIR:-$(ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1)}
kver=${KVER:-$(basename "$(dirname "$kdir")")}
[ -d "$kdir" ] || tap_bail "no kernel headers in /lib/modules/*/build: run 'make deps'"
kvers=()
for b in /lib/modules/*/build; do
	[ -d "$b/" ] && kvers+=("$(basename "$(dirname "$b")")")
done

work=$(mktemp -d "${TMPDIR:-/tmp}/rv-check-install.XXXXXX")
# Left for a look when RV_KEEP_INSTALL_DIR is set.
cleanup() {
	if [ -n "${RV_KEEP_INSTALL_DIR:-}" ]; then
		echo "# kept $work" >&2
	else
		rm -rf "$work"
	fi
	echo "# check-install: total $((SECONDS - t0)) s" >&2
}
trap cleanup EXIT

src=$work/src
stage=$work/stage
prefix=/usr/local
log=$work/log
mkdir -p "$src" "$stage" "$log"

# Nothing from a calling make (`make check`) reaches the makes run here.
unset MAKEFLAGS MFLAGS MAKELEVEL

submake() {
	env -u BUILD -u DESTDIR -u PREFIX \
		make -C "$src" --no-print-directory KDIR="$kdir" KVER="$kver" "$@"
}

# ok NAME LOGFILE CMD...: CMD's output goes to LOGFILE, shown on failure.
tap_run() {
	local name=$1 out=$2 ts=$SECONDS
	shift 2
	echo "# check-install: [+$((SECONDS - t0)) s] $name" >&2
	if "$@" >"$out" 2>&1; then
		tap_ok "$name"
		[ $((SECONDS - ts)) -lt 5 ] || tap_diag "took $((SECONDS - ts)) s"
	else
		tap_not_ok "$name" "$* failed:"
		tail -n 40 "$out" | sed 's/^/# /'
		return 1
	fi
}

# --- the source tree and the project version --------------------------

# Tracked and new files as they are in the working tree, without build/.
if git rev-parse --git-dir >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] && printf '%s\0' "$f"
		done | tar --null -T - -cf - | tar -C "$src" -xf -
else
	tar --exclude=./build -cf - . | tar -C "$src" -xf -
fi

version=$(sed -n 's/^[[:space:]]*VERSION \([0-9][0-9.]*\)$/\1/p' \
	userspace/CMakeLists.txt | head -n 1)
dkms_version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
man_versions=$(sed -n 's/^\.TH .*"rv \([^"]*\)".*/\1/p' man/*.[0-9] | sort -u)
if [ -n "$version" ] && [ "$dkms_version" = "$version" ] &&
	[ "$man_versions" = "$version" ]; then
	tap_ok "version $version in userspace/CMakeLists.txt, dkms.conf and the man pages"
else
	tap_not_ok "one version everywhere" \
		"CMake '$version', dkms.conf '$dkms_version', man pages '$man_versions'"
fi

# --- make install ---------------------------------------------------------

# The build directory inside the copy, where a clone has it: ccache
# (paths relative to the tree, Makefile) then serves this build too.
if ! tap_run "make install DESTDIR=... (rv.ko for $kver, librv, tools)" \
	"$log/install.log" \
	submake install DESTDIR="$stage" BUILD="$src/build" \
	CMAKE_ARGS=-DRV_BUILD_TESTS=OFF; then
	tap_bail "make install failed"
fi

libdir=$prefix/lib
expected=(
	"/lib/modules/$kver/extra/rv.ko"
	/usr/include/rdma/rv_user_ioctls.h
	/usr/lib/udev/rules.d/60-rv.rules
	/usr/lib/modules-load.d/rv.conf
	"$prefix/share/doc/rv/examples/modprobe.d/rv.conf"
	"$prefix/share/man/man4/rv.4"
	"$prefix/share/man/man1/rvinfo.1"
	"$prefix/share/man/man1/rvstat.1"
	"$prefix/share/man/man1/rvbench.1"
	"$prefix/bin/rvinfo"
	"$prefix/bin/rvstat"
	"$prefix/bin/rvbench"
	"$libdir/librv.a"
	"$libdir/pkgconfig/rv.pc"
	"$libdir/cmake/rv/rvConfig.cmake"
	"$libdir/cmake/rv/rvConfigVersion.cmake"
	"$libdir/cmake/rv/rvTargets.cmake"
	"$libdir/cmake/rv/rvTargets-relwithdebinfo.cmake"
)
for h in userspace/include/rv/*.hpp; do
	expected+=("$prefix/include/rv/${h##*/}")
done

missing=()
for f in "${expected[@]}"; do
	[ -f "$stage$f" ] || missing+=("$f")
done
if [ ${#missing[@]} -eq 0 ]; then
	tap_ok "all ${#expected[@]} expected files installed"
else
	tap_not_ok "all ${#expected[@]} expected files installed" \
		"missing: ${missing[*]}"
fi

extra=$(comm -13 <(printf '%s\n' "${expected[@]}" | sort) \
	<(cd "$stage" && find . -type f -o -type l | sed 's|^\.||' | sort))
tap_is "no other files installed" "$extra" ""

# The tools' helpers stay in the build tree: no header of theirs, no
# symbol of theirs in librv.a (rv::GidTable, which is librv's, shows that
# nm reads the archive).
tap_is "the tools' helpers' headers are not installed" \
	"$(cd "$stage" && find . \( -name json.hpp -o -name debugfs.hpp \
		-o -name rdma_sysfs.hpp -o -name toolkit \) | sed 's|^\.||')" ""
syms=$(nm -C --defined-only "$stage$libdir/librv.a" 2>&1)
if ! grep -q 'rv::GidTable::find_roce_v2_ipv4' <<<"$syms"; then
	tap_not_ok "librv.a holds none of the tools' helpers" \
		"nm found no rv::GidTable in librv.a: $(head -n 3 <<<"$syms")"
else
	tap_is "librv.a holds none of the tools' helpers" \
		"$(grep -E 'rv::(json|debugfs)::|rv::RdmaSysfs|rv::PortState' <<<"$syms")" ""
fi

# shellcheck disable=SC2016 # $1 is bash -c's
tap_check "rvinfo, rvstat and rvbench are executable and run (--help)" \
	bash -c '"$1/rvinfo" --help >/dev/null && "$1/rvstat" --help >/dev/null &&
		"$1/rvbench" --help >/dev/null' \
	_ "$stage$prefix/bin"
tap_is "installed rv.ko is for $kver" \
	"$(modinfo -F vermagic "$stage/lib/modules/$kver/extra/rv.ko" | cut -d' ' -f1)" \
	"$kver"
tap_check "installed uAPI header is the tree's" \
	cmp -s include/uapi/rdma/rv_user_ioctls.h \
	"$stage/usr/include/rdma/rv_user_ioctls.h"

# --- pkg-config ---------------------------------------------------------

# Only the staged rv.pc, its paths under the staged root.
pc() {
	PKG_CONFIG_PATH="" PKG_CONFIG_LIBDIR="$stage$libdir/pkgconfig" \
		PKG_CONFIG_SYSROOT_DIR="$stage" pkg-config "$@"
}
tap_check "rv.pc is valid" pc --validate rv
tap_is "pkg-config --modversion rv" "$(pc --modversion rv 2>&1)" "$version"
flags=$(pc --cflags --libs rv 2>&1)
tap_is "pkg-config --cflags --libs rv" "${flags% }" \
	"-I$stage$prefix/include -I$stage/usr/include -L$stage$libdir -lrv"

# A C++20 consumer of librv: the header ABI is compiled in, the library
# links, and opening a device node that does not exist throws ENOENT.
consumer=$work/consumer
mkdir -p "$consumer"
cat >"$consumer/consumer.cpp" <<'EOF'
#include <cerrno>
#include <iostream>
#include <system_error>

#include <rv/attach.hpp>
#include <rv/device.hpp>
#include <rv/gid.hpp>
#include <rv/version.hpp>

int main()
{
	// What ATTACH takes, filled by hand and from a port's GID table.
	rv::AttachParams p;
	p.dev_name = "rxe0";
	p.loc_gid = rv::ipv4_mapped_gid(0x0a000001);
	p.loc_addr = rv::gid_ipv4(p.loc_gid);
	p.job_key = rv::random_job_key();
	if (p.to_uapi().loc_addr != 0x0a000001)
		return 1;
	try {
		(void)rv::AttachParams::for_roce("rxe0", 1, {}, "/nonexistent/ib");
		return 1;
	} catch (const std::system_error &e) {
		if (e.code().value() != ENOENT)
			return 1;
	}

	std::cout << rv::Version::header() << '\n';
	try {
		rv::Device dev("/nonexistent/rv");
	} catch (const std::system_error &e) {
		return e.code().value() == ENOENT ? 0 : 1;
	}
	return 1;
}
EOF
want_abi=$(sed -n 's/^#define RV_ABI_VER_MAJOR[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p' \
	include/uapi/rdma/rv_user_ioctls.h).$(sed -n \
	's/^#define RV_ABI_VER_MINOR[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p' \
	include/uapi/rdma/rv_user_ioctls.h)

# Each installed header on its own: none needs a header that is not
# installed.
hdr_fail=()
for h in "$stage$prefix"/include/rv/*.hpp; do
	# shellcheck disable=SC2046 # word splitting of pkg-config's output
	printf '#include <rv/%s>\n' "${h##*/}" |
		g++ -std=c++20 -Wall -Wextra -Werror -fsyntax-only -x c++ - \
		$(pc --cflags rv) >>"$log/headers.log" 2>&1 || hdr_fail+=("${h##*/}")
done
tap_is "every installed header compiles alone" "${hdr_fail[*]}" ""

# shellcheck disable=SC2046 # word splitting of pkg-config's output
if tap_run "C++20 consumer builds with pkg-config's flags" \
	"$log/consumer-pc.log" \
	g++ -std=c++20 -Wall -Wextra -Werror -o "$consumer/consumer-pc" \
	"$consumer/consumer.cpp" $(pc --cflags --libs rv); then
	tap_is "the pkg-config consumer runs" \
		"$("$consumer/consumer-pc" 2>&1; echo "exit $?")" \
		"$want_abi"$'\n'"exit 0"
else
	tap_not_ok "the pkg-config consumer runs" "not built"
fi

# The same through find_package(rv): no -std flag given, rv::rv brings
# cxx_std_20 and both include directories. A version the package is not
# compatible with must not be found.
cat >"$consumer/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.20)
project(rv_consumer LANGUAGES CXX)
find_package(rv 99.0 QUIET)
if(rv_FOUND)
	message(FATAL_ERROR "rv 99.0 found: the version check is broken")
endif()
find_package(rv $version EXACT REQUIRED)
message(STATUS "rv_DIR=\${rv_DIR}")
message(STATUS "rv_UAPI_INCLUDE_DIR=\${rv_UAPI_INCLUDE_DIR}")
add_executable(consumer consumer.cpp)
target_link_libraries(consumer PRIVATE rv::rv)
EOF
# shellcheck disable=SC2016 # $1 and $2 are bash -c's
if tap_run "C++20 consumer builds with find_package(rv) and rv::rv" \
	"$log/consumer-cmake.log" \
	bash -c 'cmake -S "$1" -B "$1/build" -DCMAKE_PREFIX_PATH="$2" &&
		cmake --build "$1/build" -v' _ "$consumer" \
	"$stage$prefix;$stage/usr"; then
	tap_is "find_package(rv) used the staged package" \
		"$(sed -n 's/^-- rv_DIR=//p; s/^-- rv_UAPI_INCLUDE_DIR=//p' \
			"$log/consumer-cmake.log")" \
		"$stage$libdir/cmake/rv"$'\n'"$stage/usr/include"
	tap_is "the find_package consumer runs" \
		"$("$consumer/build/consumer" 2>&1; echo "exit $?")" \
		"$want_abi"$'\n'"exit 0"
else
	tap_not_ok "find_package(rv) used the staged package" "not configured"
	tap_not_ok "the find_package consumer runs" "not built"
fi

# A C11 program (PSM3 is C) with the staged include directory only.
cat >"$consumer/consumer.c" <<'EOF'
#include <rdma/rv_user_ioctls.h>

_Static_assert(RV_ABI_VER_MAJOR == 1, "ABI major");
_Static_assert(sizeof(struct rv_capability_params) > 0, "struct");

unsigned long rv_cmds[] = { RV_IOCTL_CAPABILITY, RV_IOCTL_ATTACH,
			    RV_IOCTL_REG_MEM };
EOF
if tap_run "C11 consumer includes the staged <rdma/rv_user_ioctls.h>" \
	"$log/consumer-c.log" \
	gcc -std=c11 -Wall -Wextra -Werror -pedantic -I"$stage/usr/include" \
	-MD -MF "$consumer/consumer.d" -c -o "$consumer/consumer-c.o" \
	"$consumer/consumer.c"; then
	tap_check "the C11 consumer used the staged header" \
		grep -q "$stage/usr/include/rdma/rv_user_ioctls.h" \
		"$consumer/consumer.d"
else
	tap_not_ok "the C11 consumer used the staged header" "not built"
fi

# --- man pages -------------------------------------------------------------

for m in man4/rv.4 man1/rvinfo.1 man1/rvstat.1 man1/rvbench.1; do
	f=$stage$prefix/share/man/$m
	if [ ! -f "$f" ]; then
		tap_not_ok "man page ${m#*/} renders cleanly" "not installed"
		continue
	fi
	out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$f" 2>&1)
	n=$(LC_ALL=C.UTF-8 groff -man -Tutf8 "$f" 2>/dev/null | grep -c .)
	if [ -z "$out" ] && [ "$n" -gt 20 ]; then
		tap_ok "man page ${m#*/} renders cleanly (groff -ww, $n lines)"
	else
		tap_not_ok "man page ${m#*/} renders cleanly" "$out ($n lines)"
	fi
done

# --- module parameters ---------------------------------------------------

# The README table: | `name` | unit | default | range | meaning |
mapfile -t rows < <(sed -n '/^## Module parameters/,/^## /p' README.md |
	awk -F'|' '/^\| `[a-z_]+` \|/ {
		for (i = 2; i <= 5; i++) {
			gsub(/^ +| +$|`/, "", $i)
		}
		print $2 "|" $3 "|" $4 "|" $5
	}')
ko=$src/build/modules/$kver/rv.ko
parms=$(modinfo -p "$ko" 2>&1)
rv4=$(LC_ALL=C.UTF-8 MANWIDTH=1000 groff -man -Tutf8 man/rv.4 2>/dev/null | col -b)
example=$(cat packaging/modprobe.d/rv.conf)
tap_is "modinfo -p lists the README's ${#rows[@]} parameters" \
	"$(cut -d: -f1 <<<"$parms" | sort | tr '\n' ' ')" \
	"$(printf '%s\n' "${rows[@]}" | cut -d'|' -f1 | sort | tr '\n' ' ')"
for r in "${rows[@]}"; do
	IFS='|' read -r name unit def range <<<"$r"
	desc=$(sed -n "s/^$name://p" <<<"$parms")
	if [ -n "$unit" ]; then
		want="($unit, $range, default $def)"
	else
		want="$range, default $def)"
	fi
	problems=()
	[[ $desc == *"$want" ]] || problems+=("modinfo: '$desc' does not end in '$want'")
	grep -A4 "^ *$name=" <<<"$rv4" | grep -q "default $def\." ||
		problems+=("rv(4) does not give default $def")
	grep -qx "#options rv $name=$def" <<<"$example" ||
		problems+=("modprobe.d example has no '#options rv $name=$def'")
	if [ ${#problems[@]} -eq 0 ]; then
		tap_ok "parameter $name: unit, range and default in modinfo, rv(4), modprobe.d example"
	else
		tap_not_ok "parameter $name: unit, range and default in modinfo, rv(4), modprobe.d example" \
			"$(printf '%s\n' "${problems[@]}")"
	fi
done

# --- admin files -----------------------------------------------------------

# The example, every line enabled, parses without a complaint.
sed 's/^#options/options/' packaging/modprobe.d/rv.conf >"$work/modprobe.conf"
out=$(modprobe -C "$work/modprobe.conf" -S "$kver" -c 2>&1 >"$log/modprobe-c.txt")
if [ -z "$out" ] && [ "$(grep -c '^options rv ' "$log/modprobe-c.txt")" -eq $((${#rows[@]} + 1)) ]; then
	tap_ok "modprobe parses the modprobe.d example (every line enabled)"
else
	tap_not_ok "modprobe parses the modprobe.d example (every line enabled)" \
		"$out$(grep '^options rv' "$log/modprobe-c.txt")"
fi
tap_is "modules-load.d entry loads rv" \
	"$(grep -v '^#' packaging/modules-load.d/rv.conf)" "rv"
kmode=$(sed -n 's/^[[:space:]]*\.mode = \(0[0-7]*\),$/\1/p' \
	drivers/infiniband/ulp/rv/rv_main.c)
umode=$(sed -n 's/^KERNEL=="rv", SUBSYSTEM=="misc", MODE="\(0[0-7]*\)"$/\1/p' \
	packaging/udev/60-rv.rules)
tap_is "udev rule's mode for /dev/rv is the module's (${kmode:-?})" \
	"$umode" "$kmode"

# --- make uninstall ------------------------------------------------------

if tap_run "make uninstall DESTDIR=..." "$log/uninstall.log" \
	submake uninstall DESTDIR="$stage" BUILD="$src/build"; then
	left=$(cd "$stage" && find . -type f -o -type l)
	tap_is "make uninstall leaves no file behind" "$left" ""
	left=$(cd "$stage" && find . -type d -name rv)
	tap_is "make uninstall removes rv's own directories" "$left" ""
else
	tap_not_ok "make uninstall leaves no file behind" "uninstall failed"
	tap_not_ok "make uninstall removes rv's own directories" "uninstall failed"
fi

# --- DKMS --------------------------------------------------------------------

# Its own source and DKMS trees, and (through dkms's variables) its own
# signing key: dkms would otherwise create /var/lib/dkms/mok.key.
dkms_in() {
	mok_signing_key=$work/mok.key mok_certificate=$work/mok.pub \
		dkms "$@" --sourcetree "$work/dkms-src/usr/src" \
		--dkmstree "$work/dkms-tree"
}
dkms_tests=$((4 + 3 * ${#kvers[@]}))
if ! command -v dkms >/dev/null; then
	for ((i = 0; i < dkms_tests; i++)); do
		tap_not_ok "dkms" "dkms is not installed: run 'make deps'"
	done
elif [ "$(id -u)" -ne 0 ]; then
	for ((i = 0; i < dkms_tests; i++)); do
		tap_skip "dkms" "dkms needs root"
	done
else
	mkdir -p "$work/dkms-tree"
	tap_run "make dkms-source" "$log/dkms-source.log" \
		submake dkms-source DESTDIR="$work/dkms-src"
	tap_run "dkms add rv/$version" "$log/dkms-add.log" \
		dkms_in add -m rv -v "$version"
	for k in "${kvers[@]}"; do
		tap_run "dkms build rv/$version -k $k" "$log/dkms-build-$k.log" \
			dkms_in build -m rv -v "$version" -k "$k"
		built=$(find "$work/dkms-tree/rv/$version/$k" -path '*/module/rv.ko*' \
			2>/dev/null | head -n 1)
		# The kernel's own modules carry the vermagic rv.ko must match.
		ref=$(find "/lib/modules/$k/kernel/drivers/infiniband/core" \
			-name 'ib_core.ko*' 2>/dev/null | head -n 1)
		if [ -z "$ref" ]; then
			tap_not_ok "dkms-built rv.ko's vermagic is $k's" "no ib_core.ko in /lib/modules/$k"
		elif [ -n "$built" ]; then
			tap_is "dkms-built rv.ko's vermagic is $k's" \
				"$(modinfo -F vermagic "$built")" "$(modinfo -F vermagic "$ref")"
		else
			tap_not_ok "dkms-built rv.ko's vermagic is $k's" "no rv.ko built"
		fi
		tap_is "dkms status for $k: built" \
			"$(dkms_in status rv/"$version" -k "$k" 2>"$log/dkms-status-$k.log" | sed 's/,.*: /: /')" \
			"rv/$version: built"
	done
	tap_run "dkms remove rv/$version --all" "$log/dkms-remove.log" \
		dkms_in remove -m rv -v "$version" --all
	tap_is "dkms remove leaves the DKMS tree empty" \
		"$(cd "$work/dkms-tree" && find . -mindepth 1)" ""
fi

tap_done
