#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#
# ABI tests of include/uapi/rdma/rv_user_ioctls.h. Prints TAP, exits non-zero
# if any check fails. Nothing built here is run, so the i386 and x32 checks
# work where those binaries cannot execute.
#
#  1. layout: layout.c is compiled to assembler for x86_64 (-m64), i386
#     (-m32) and x32 (-mx32); abi_check.py reads the figures it leaves
#     (sizes, alignments, offsets and sizes of every member, ioctl numbers,
#     constants) and checks that they are the same on the three ABIs, equal
#     to expected-x86_64.txt, and that the members of each struct fill it
#     (no hidden hole). It also checks that abi_table.h lists every struct
#     tag and #define of the header and, from the DWARF of layout.c, every
#     member. version_check.c checks RV_ABI_VERSION_CURRENT in #if.
#     clang must measure the same figures as gcc.
#  2. compile: the header alone, first, as C11 and C++20 on the 3 ABIs;
#     psm3_usage.c (the header used as PSM3 uses it) as C11 and C++20,
#     linked; the same with clang; -pedantic builds, for information only.
#  3. self-check: broken copies of the header must fail test 1.
#  4. series: the header as make upstream proposes it
#     (tools/upstream/make-series.py --header: unifdef -DRV_UPSTREAM, no
#     legacy form, GPU remnant or libibverbs name, and no macro of the
#     members older forms shared) keeps no such name, stands alone on the
#     3 ABIs, and each figure of it is one of the tree header's: the forms
#     it keeps are not changed.
#
# Usage: run.sh [--header PATH] [--layout-only] [--no-self-check]
#   --header PATH    test this copy of rv_user_ioctls.h instead of the tree's
#   --layout-only    only test 1 (used by the self-check)
#   --no-self-check  skip test 3
# Environment: RV_BUILD_DIR (default <repo>/build/abi), CC, CXX (gcc, g++),
# CLANG, CLANGXX (clang, clang++: optional, their checks are skipped when
# missing), PYTHON, READELF.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=${RV_BUILD_DIR:-$repo/build/abi}
CC=${CC:-gcc}
CXX=${CXX:-g++}
CLANG=${CLANG:-clang}
CLANGXX=${CLANGXX:-clang++}
PYTHON=${PYTHON:-python3}
READELF=${READELF:-readelf}

header=
layout_only=0
self_check=1
while [ $# -gt 0 ]; do
	case $1 in
	--header) header=$2; shift 2 ;;
	--header=*) header=${1#--header=}; shift ;;
	--layout-only) layout_only=1; shift ;;
	--no-self-check) self_check=0; shift ;;
	-h|--help) sed -n '3,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

mkdir -p "$build"
build=$(cd "$build" && pwd)
if [ -n "$header" ]; then
	# the copy must be found as <rdma/rv_user_ioctls.h>
	[ -f "$header" ] || { echo "run.sh: no such header: $header" >&2; exit 2; }
	mkdir -p "$build/include/rdma"
	cp "$header" "$build/include/rdma/rv_user_ioctls.h"
	inc=$build/include
else
	inc=$repo/include/uapi
fi
header=$inc/rdma/rv_user_ioctls.h

declare -A MFLAG=([x86_64]=-m64 [i386]=-m32 [x32]=-mx32)
ABIS="x86_64 i386 x32"

tap=$build/tap.txt
: >"$tap"
trap 'echo "Bail out! run.sh: unexpected failure at line $LINENO" >>"$tap"; cat "$tap"' ERR

# result ok|fail "description" [file whose lines become diagnostics]
result() {
	if [ "$1" = ok ]; then echo "ok - $2"; else echo "not ok - $2"; fi >>"$tap"
	if [ $# -ge 3 ] && [ -s "$3" ]; then sed 's/^/# /' "$3" >>"$tap"; fi
}

# compile "description" logfile command...: a TAP line from a compiler run
compile() {
	local desc=$1 log=$2
	shift 2
	if ! command -v "$1" >/dev/null; then
		echo "ok - $desc # SKIP $1 not found" >>"$tap"
	elif "$@" >"$log" 2>&1; then result ok "$desc" "$log"
	else result fail "$desc" "$log"; fi
}

# the "->" lines layout.c leaves in its assembler output
figures() {
	sed -n 's/^[[:space:]]*\.ascii[[:space:]]*"->\(.*\)"[[:space:]]*$/\1/p' "$1"
}

WARN=(-Wall -Wextra -Werror)

# ---------------------------------------------------------------- test 3
# (started first, as it takes longest)

# mutate name sed-script: a copy of the header, changed by the script
mutate() {
	local dir=$build/self-check/$1
	mkdir -p "$dir"
	sed -e "$2" "$header" >"$dir/rv_user_ioctls.h"
	if cmp -s "$header" "$dir/rv_user_ioctls.h"; then
		echo "the mutation did not change the header" >"$dir/out.txt"
		return 1
	fi
	RV_BUILD_DIR=$dir/build bash "$here/run.sh" --layout-only --no-self-check \
		--header "$dir/rv_user_ioctls.h" >"$dir/out.txt" 2>&1 && echo 0 >"$dir/rc" ||
		echo $? >"$dir/rc"
}

# expect name "description" pass|fail [regex that must match the output]...
expect() {
	local dir=$build/self-check/$1 desc=$2 want=$3
	shift 3
	local rc why=$dir/why.txt
	rc=$(cat "$dir/rc" 2>/dev/null || echo none)
	: >"$why"
	if [ "$want" = pass ] && [ "$rc" != 0 ]; then
		echo "run.sh exits $rc on this copy:" >>"$why"
		grep -E '^(not ok|# )' "$dir/out.txt" | head -20 >>"$why" || true
	elif [ "$want" = fail ] && [ "$rc" = 0 ]; then
		echo "run.sh passes on this copy" >>"$why"
	fi
	for re in "$@"; do
		grep -qE -- "$re" "$dir/out.txt" || echo "no output line matches: $re" >>"$why"
	done
	if [ -s "$why" ]; then result fail "self-check: $desc" "$why"
	elif [ "$want" = pass ]; then result ok "self-check: $desc"
	else
		# show what was caught
		grep -E '^# ' "$dir/out.txt" | grep -v '^# FAILED' | sed 's/^# //' \
			| head -6 >"$why" || true
		result ok "self-check: $desc" "$why"
	fi
}

# the self-check proper; runs in the background, next to tests 1 and 2
self_check_run() {
	rm -rf "$build/self-check"
	mutate unchanged '$a\/* unchanged copy */' &
	mutate moved '/^\t__u32 cq_entries; \\$/{h;d};/^\t__u32 q_depth; \\$/G' &
	mutate size '/^struct rv_capability_params {/,/^};/s/resv2\[6\]/resv2[7]/' &
	mutate i386 '/^struct rv_event_wc {/,/^};/s/__aligned_u64/__u64/' &
	mutate hole '/^struct rv_conn_get_conn_count_params_in {/,/^};/s/resv1\[7\]/resv1[3]/' &
	mutate pointer 's/^\t\t__aligned_u64 udata_u64; \\$/\t\tvoid *udata_u64; \\/' &
	wait

	expect unchanged "an unchanged copy of the header passes" pass
	expect moved "moved field caught (cq_entries and q_depth swapped)" fail \
		'^not ok .*struct rv_attach_params_in: x86_64 layout as in expected' \
		'^# rv_attach_params_in\.cq_entries: x86_64 @140 \[4\], expected @136 \[4\]' \
		'^# rv_attach_params\.in\.q_depth: x86_64 @136 \[4\], expected @140 \[4\]'
	expect size "changed size caught (rv_capability_params.resv2[7])" fail \
		'^# rv_capability_params \(size\): x86_64 72, expected 64' \
		'^not ok .*RV_IOCTL_CAPABILITY' \
		'^# RV_IOCTL_QUERY_R2 \(x86_64\): .* size 72, expected .* size 64'
	expect i386 "i386-only difference caught (plain __u64 in rv_event_wc)" fail \
		'^ok .*struct rv_event_wc: x86_64 layout as in expected' \
		'^not ok .*struct rv_event_wc: same layout on x86_64, i386 and x32' \
		'^# rv_event_wc \(alignment\): x86_64 8, i386 4'
	expect hole "hidden hole caught (rv_conn_get_conn_count_params_in.resv1[3])" fail \
		'^not ok .*struct rv_conn_get_conn_count_params_in: members fill it' \
		'^# rv_conn_get_conn_count_params_in \(x86_64\): \(top\): 4 bytes of tail padding at offset 12'
	expect pointer "i386/x32-only hole caught (void *udata_u64 instead of __aligned_u64)" fail \
		'^ok .*struct rv_mem_params_in: x86_64 layout as in expected' \
		'^# rv_mem_params_in\.udata_u64: x86_64 @40 \[8\], i386 @40 \[4\]' \
		'^# rv_mem_params_in \(i386\): \(top\): hole of 4 bytes at offset 44'
}

if [ $layout_only = 0 ] && [ $self_check = 1 ]; then
	(
		tap=$build/tap-self-check.txt
		: >"$tap"
		self_check_run
	) &
	self_check_pid=$!
fi

# ---------------------------------------------------------------- test 1

layout_ok=1
for abi in $ABIS; do
	m=${MFLAG[$abi]}
	log=$build/layout-$abi.log
	if "$CC" "$m" -std=gnu11 -O0 -g -fno-eliminate-unused-debug-types \
		"${WARN[@]}" -I"$inc" -save-temps=obj -c "$here/layout.c" \
		-o "$build/layout-$abi.o" >"$log" 2>&1 &&
	   "$CC" "$m" -E -dM -I"$inc" -include rdma/rv_user_ioctls.h \
		-x c /dev/null -o "$build/macros-$abi.txt" >>"$log" 2>&1; then
		result ok "layout: layout.c builds for $abi ($m)" "$log"
	else
		result fail "layout: layout.c builds for $abi ($m)" "$log"
		layout_ok=0
	fi
done

if [ $layout_ok = 1 ]; then
	if "$PYTHON" "$here/abi_check.py" --header "$header" \
		--expected "$here/expected-x86_64.txt" --build "$build" \
		--readelf "$READELF" >"$build/check.txt" 2>"$build/check.err"; then
		cat "$build/check.txt" >>"$tap"
	else
		result fail "layout: abi_check.py runs" "$build/check.err"
	fi
fi

for abi in $ABIS; do
	m=${MFLAG[$abi]}
	desc="layout: clang measures what gcc measures on $abi"
	log=$build/layout-clang-$abi.log
	if ! command -v "$CLANG" >/dev/null; then
		echo "ok - $desc # SKIP $CLANG not found" >>"$tap"
	elif [ $layout_ok = 0 ]; then
		result fail "$desc (gcc failed)"
	elif "$CLANG" "$m" -std=gnu11 "${WARN[@]}" -I"$inc" -S "$here/layout.c" \
		-o "$build/layout-clang-$abi.s" >"$log" 2>&1; then
		if diff -U0 <(figures "$build/layout-$abi.s") \
			<(figures "$build/layout-clang-$abi.s") >"$log.diff"; then
			result ok "$desc"
		else
			result fail "$desc" "$log.diff"
		fi
	else
		result fail "$desc" "$log"
	fi
done

for abi in $ABIS; do
	m=${MFLAG[$abi]}
	compile "version: RV_ABI_VERSION_CURRENT == RV_ABI_VERSION(1, 7) in #if, C11, $abi" \
		"$build/version-c-$abi.log" \
		"$CC" "$m" -std=c11 "${WARN[@]}" -I"$inc" -fsyntax-only "$here/version_check.c"
	compile "version: RV_ABI_VERSION_CURRENT == RV_ABI_VERSION(1, 7) in #if, C++20, $abi" \
		"$build/version-cxx-$abi.log" \
		"$CXX" "$m" -std=c++20 "${WARN[@]}" -I"$inc" -fsyntax-only -x c++ \
		"$here/version_check.c"
done

# ---------------------------------------------------------------- test 2

if [ $layout_only = 0 ]; then
	for abi in $ABIS; do
		m=${MFLAG[$abi]}
		for cc in "$CC" "$CLANG"; do
			n=${cc##*/}
			compile "standalone: the header alone, first, as C11 with -Wpadded ($n, $abi)" \
				"$build/standalone-$n-$abi.log" \
				"$cc" "$m" -std=c11 "${WARN[@]}" -Wpadded -I"$inc" -c \
				"$here/standalone.c" -o "$build/standalone-$n-$abi.o"
		done
		for cxx in "$CXX" "$CLANGXX"; do
			n=${cxx##*/}
			compile "standalone: the header alone, first, as C++20 with -Wpadded ($n, $abi)" \
				"$build/standalone-$n-$abi.log" \
				"$cxx" "$m" -std=c++20 "${WARN[@]}" -Wpadded -I"$inc" -x c++ -c \
				"$here/standalone.c" -o "$build/standalone-$n-$abi.o"
		done
	done

	# -pedantic: information only, the warnings become diagnostics
	for build_cfg in "$CC gnu11" "$CXX c++20" "$CC gnu99" "$CLANG gnu11" "$CLANGXX c++20"; do
		set -- $build_cfg
		cc=$1 std=$2 n=${1##*/}
		desc="pedantic (information only): $n -std=$std -pedantic"
		if ! command -v "$cc" >/dev/null; then
			echo "ok - $desc # SKIP $cc not found" >>"$tap"
			continue
		fi
		log=$build/pedantic-$n-$std.log
		case $std in c++*) lang=c++ ;; *) lang=c ;; esac
		"$cc" -std=$std -pedantic -Wall -Wextra -I"$inc" -x $lang -c \
			"$here/standalone.c" -o "$build/pedantic-$n-$std.o" >"$log" 2>&1 || true
		grep 'warning:' "$log" | sed 's/^.*warning: //' | sort | uniq -c \
			| sed -E 's/^ *([0-9]+) /\1 x /' >"$log.summary" || true
		result ok "$desc: warnings: $(grep -c 'warning:' "$log" || true)" "$log.summary"
	done
	set --

	for abi in $ABIS; do
		m=${MFLAG[$abi]}
		for cc in "$CC" "$CLANG"; do
			n=${cc##*/}
			compile "psm3_usage: PSM3-style client builds and links as C11 ($n, $abi)" \
				"$build/psm3-$n-$abi.log" \
				"$cc" "$m" -std=c11 "${WARN[@]}" -I"$inc" "$here/psm3_usage.c" \
				-o "$build/psm3_usage-$n-$abi"
		done
		for cxx in "$CXX" "$CLANGXX"; do
			n=${cxx##*/}
			compile "psm3_usage: PSM3-style client builds and links as C++20 ($n, $abi)" \
				"$build/psm3-$n-$abi.log" \
				"$cxx" "$m" -std=c++20 "${WARN[@]}" -I"$inc" -x c++ \
				"$here/psm3_usage.c" -o "$build/psm3_usage-$n-$abi"
		done
	done

	# every macro of the header appears in psm3_usage.c's code (not comments)
	"$CC" -fpreprocessed -dD -E -P "$here/psm3_usage.c" >"$build/psm3-code.c" 2>/dev/null
	: >"$build/psm3-unused.txt"
	for name in $(sed -n 's/^[[:space:]]*#[[:space:]]*define[[:space:]]\{1,\}\([A-Za-z0-9_]\{1,\}\).*/\1/p' "$header"); do
		case $name in
		_UAPI_*|__RV_*) continue ;;	# include guard, field lists
		esac
		grep -qw -- "$name" "$build/psm3-code.c" ||
			echo "$name is not used by psm3_usage.c" >>"$build/psm3-unused.txt"
	done
	if [ -s "$build/psm3-unused.txt" ]; then
		result fail "psm3_usage: uses every macro of the header" "$build/psm3-unused.txt"
	else
		result ok "psm3_usage: uses every macro of the header"
	fi
fi

# ---------------------------------------------------------------- test 4

if [ $layout_only = 0 ]; then
	sdir=$build/series
	sinc=$sdir/include
	mkdir -p "$sinc/rdma"
	shdr=$sinc/rdma/rv_user_ioctls.h
	rc=0
	# As make upstream writes it: unifdef -DRV_UPSTREAM, and the members
	# the older forms shared through a macro declared by the struct.
	python3 "$here/../../upstream/make-series.py" --header "$header" "$shdr" \
		>"$sdir/unifdef.log" 2>&1 || rc=$?
	if [ "$rc" != 0 ]; then
		result fail "series: make-series.py --header strips the header" "$sdir/unifdef.log"
	else
		result ok "series: make-series.py --header strips the header ($(wc -l <"$header") to $(wc -l <"$shdr") lines)"
		grep -nE 'RV_UPSTREAM|_R[0-9]\b|_R[0-9]_|RV_ABI_VER_(MINOR|MAJOR)_[0-9]|LEGACY|legacy|UPSIZE|_gpu|IBV_ACCESS_KERNEL|__RV_[A-Z_]*_FIELDS|DOC: [A-Z_]* input' \
			"$shdr" >"$sdir/names.txt" || true
		if [ -s "$sdir/names.txt" ]; then
			result fail "series: no legacy form, GPU remnant, IBV_ACCESS_KERNEL or shared-members macro left" "$sdir/names.txt"
		else
			result ok "series: no legacy form, GPU remnant, IBV_ACCESS_KERNEL or shared-members macro left"
		fi
		for abi in $ABIS; do
			m=${MFLAG[$abi]}
			compile "series: the header alone, first, as C11 and C++20 with -Wpadded ($abi)" \
				"$sdir/standalone-$abi.log" sh -c "
				$CC $m -std=c11 ${WARN[*]} -Wpadded -I$sinc -c $here/standalone.c -o $sdir/s-$abi.o &&
				$CXX $m -std=c++20 ${WARN[*]} -Wpadded -I$sinc -x c++ -c $here/standalone.c -o $sdir/sx-$abi.o"
			log=$sdir/layout-$abi.log
			if "$CC" "$m" -std=gnu11 -DRV_UPSTREAM "${WARN[@]}" -I"$sinc" -S \
				"$here/layout.c" -o "$sdir/layout-$abi.s" >"$log" 2>&1; then
				figures "$sdir/layout-$abi.s" | sort >"$sdir/figures-$abi.txt"
				figures "$build/layout-$abi.s" | sort >"$sdir/tree-$abi.txt"
				comm -23 "$sdir/figures-$abi.txt" "$sdir/tree-$abi.txt" >"$log"
				if [ -s "$sdir/tree-$abi.txt" ] && [ ! -s "$log" ]; then
					result ok "series: its $(wc -l <"$sdir/figures-$abi.txt") figures are the tree header's ($abi)"
				else
					result fail "series: its figures are the tree header's ($abi)" "$log"
				fi
			else
				result fail "series: layout.c builds for $abi" "$log"
			fi
		done
	fi
fi

# ---------------------------------------------------------------- report

if [ -n "${self_check_pid:-}" ]; then
	wait "$self_check_pid" ||
		echo "Bail out! run.sh: the self-check failed to run" >>"$tap"
	cat "$build/tap-self-check.txt" >>"$tap"
fi

trap - ERR
total=$(grep -cE '^(ok|not ok) ' "$tap" || true)
failed=$(grep -cE '^not ok ' "$tap" || true)
echo "1..$total"
awk '/^(ok|not ok) / { n++; sub(/^ok /, "ok " n " "); sub(/^not ok /, "not ok " n " ") } { print }' "$tap"
if [ "$failed" -ne 0 ] || grep -q '^Bail out!' "$tap"; then
	echo "# FAILED $failed of $total"
	exit 1
fi
echo "# passed all $total"
