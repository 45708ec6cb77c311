#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kunit.sh: run rv's KUnit suites (rv_mr_cache, rv_ring, rv_wire, rv_reg,
# rv_attach) on a debug kernel: RV_DEBUG_SERIES, 7 (the default: the newest
# 7.x) or 6.1.
#
#   tools/testing/kernel/kunit.sh
#
# Builds the debug kernel if it is not cached yet (debug-kernel.sh), builds
# rv.ko and rv_kunit.ko (CONFIG_INFINIBAND_RV_KUNIT_TEST=m) against it from
# a copy of the module's sources (so that the tree's own objects, built for
# Debian's kernel, are left alone), boots the debug kernel with vm-run,
# loads rv.ko and rv_kunit.ko (the suites run while it loads), unloads
# both and has kmemleak scan.
#
# stdout is TAP only: one "ok N - SUITE.CASE" per test case, then
# "ok N - rv.rmmod" and "ok N - rv.kernel_log" (no KASAN, lockdep, kmemleak
# or other report in the kernel log from the load on, nothing in
# /sys/kernel/debug/kmemleak), then the plan. Progress goes to stderr.
# Exit status: 0 iff every test point passed.
#
# RV_KUNIT_KO=/path/rv_kunit.ko: test that module instead of building one,
# with the rv.ko beside it (both must lie where the guest sees them: not
# below /tmp or /run).
#
# RV_KUNIT_FROM=DIR: boot nothing; report what the debug tier's boot left
# in DIR (check-debug-vm.sh runs kunit-guest.sh first in its VM, which
# saves a boot): DIR/kunit/ has the guest's files, its kernel log too.
#
# Files: $RV_BUILD_DIR (default build)/kunit-SERIES: modules/ (the copy), out/
# (console.log, dmesg.txt, dmesg-kunit.txt: its part from the load on,
# kunit-ktap-SUITE.txt, kunit-results-SUITE.txt, kmemleak.txt, guest.log).

set -euo pipefail

PROG=kunit
SUITES="rv_mr_cache rv_ring rv_wire rv_attach rv_reg"
HERE=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
# Which debug kernel: the newest 7.x, "7" (make check), or 6.1 (make
# check-full adds it).
WORK=${RV_BUILD_DIR:-$REPO/build}/kunit-${RV_DEBUG_SERIES:-7}
OUT=$WORK/out

msg() {
	printf '%s: %s\n' "$PROG" "$*" >&2
}

bail() {
	echo "Bail out! $*"
	exit 1
}

[ "$#" = 0 ] || { sed -n '4,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# 1. The debug kernel.
# The kernel log of the KUnit part only: from its start to its end marker.
kunit_log() {
	sed -n '/rv-kunit: start/,/rv-kunit: end/p' "$1" >"$OUT/dmesg-kunit.txt"
}

if [ -n "${RV_KUNIT_FROM:-}" ]; then
	OUT=$RV_KUNIT_FROM/kunit
	[ -f "$OUT/kunit-guest.status" ] ||
		bail "no KUnit results in $OUT (did check-debug-vm.sh run?)"
	# The boot's other failures are the debug tier's to report.
	vm_rc=0
	kunit_log "$OUT/dmesg-guest.txt"
	msg "reporting the KUnit run of the debug tier's boot ($RV_KUNIT_FROM)"
fi

mkdir -p "$WORK"
envf=$WORK/kernel.env
"$HERE/debug-kernel.sh" "${RV_DEBUG_SERIES:-7}" >"$envf" ||
	bail "building the debug kernel failed"
RV_DEBUG_KDIR='' RV_DEBUG_DIR='' RV_DEBUG_KVER=''
# shellcheck source=/dev/null
. "$envf"
if [ ! -d "$RV_DEBUG_KDIR" ] || [ ! -d "$RV_DEBUG_DIR" ]; then
	bail "debug-kernel.sh gave no kernel"
fi

# 2. rv.ko with the suite, from a copy of the sources.
build_ko() {
	msg "building rv.ko and rv_kunit.ko against $RV_DEBUG_KVER"
	KO=$("$HERE/../../build-module.sh" -o "$WORK/modules" "$RV_DEBUG_KDIR" \
		-- CONFIG_INFINIBAND_RV_KUNIT_TEST=m) || bail "building rv.ko failed"
	KO=${KO%/*}/rv_kunit.ko
}

KO=${RV_KUNIT_KO:-}
if [ -n "${RV_KUNIT_FROM:-}" ]; then
	:
elif [ -z "$KO" ]; then
	build_ko
else
	[ -r "$KO" ] || bail "RV_KUNIT_KO: $KO not found"
	KO=$(readlink -f "$KO")
fi

# 3. Boot, load, unload, scan.
if [ -z "${RV_KUNIT_FROM:-}" ]; then
	mkdir -p "$OUT"
	rm -f "$OUT"/kunit-results*.txt "$OUT/kmemleak.txt" "$OUT/kunit-guest.status" \
		"$OUT/dmesg-guest.txt"
	msg "booting the debug kernel (about a minute under TCG)"
	vm_rc=0
	RV_KUNIT_KO=$KO RV_KO=${KO%/*}/rv.ko RV_KUNIT_SUITES=$SUITES \
		"$REPO/tools/testing/vm/vm-run" --kernel-dir "$RV_DEBUG_DIR" --out "$OUT" \
		--timeout 1200 -- "$HERE/kunit-guest.sh" >"$OUT/guest.log" 2>&1 || vm_rc=$?
	[ "$vm_rc" = 0 ] || msg "vm-run exited with status $vm_rc (log: $OUT/guest.log)"
	if [ -s "$OUT/dmesg-guest.txt" ]; then kunit_log "$OUT/dmesg-guest.txt"; else rm -f "$OUT/dmesg-kunit.txt"; fi
fi

# 4. TAP. Each suite's KTAP from the kernel log (complete, unlike the
# debugfs copy, whose per-case log is cut at 512 bytes), else from debugfs.
n=0
failed=0
suite_tap() {
	local SUITE=$1 ktap=$OUT/kunit-ktap-$1.txt planned='' first=$((n + 1))
	local line res verdict rest name directive d
	local -a diag=()
	: >"$ktap"
	if [ -s "$OUT/dmesg-kunit.txt" ]; then
		# Drop the "[ seconds] " prefix (continuation lines: its width
		# in blanks) and keep the suite's subtest, from its header to
		# its result.
		sed -n '/rv-kunit: start/,$p' "$OUT/dmesg-kunit.txt" |
			sed -E 's/^\[ *[0-9]+\.[0-9]+\] //; t; s/^ {15}//' |
			sed -n "/^    # Subtest: $SUITE\$/,/^\(not \)\{0,1\}ok [0-9]* $SUITE\$/p" >"$ktap"
	fi
	if ! grep -q '^    \(not \)\{0,1\}ok ' "$ktap" &&
		[ -s "$OUT/kunit-results-$SUITE.txt" ]; then
		cp "$OUT/kunit-results-$SUITE.txt" "$ktap"
	fi

	# One level of nesting: the suite's test cases are indented by 4
	# spaces; the lines of their logs (expectation failures, kunit_info)
	# come before each result, indented by 4 or more.
	while IFS= read -r line; do
		case "$line" in
		"    1.."*)
			planned=${line#    1..} ;;
		"    ok "*|"    not ok "*)
			res=${line#    }
			verdict=ok
			case "$res" in "not ok "*) verdict="not ok" ;; esac
			rest=${res#"$verdict "}
			rest=${rest#* }
			rest=${rest#- }
			name=${rest%% *}
			directive=
			case "$rest" in *" # "*) directive=" # ${rest#* # }" ;; esac
			n=$((n + 1))
			echo "$verdict $n - $SUITE.$name$directive"
			if [ "$verdict" != ok ]; then
				failed=$((failed + 1))
				for d in "${diag[@]}"; do echo "# $d"; done
			fi
			diag=() ;;
		"    # Subtest:"*|"    KTAP version"*) ;;
		"    "*)
			line=${line#    }
			line=${line#"# "}
			[ -z "$line" ] || diag+=("$line") ;;
		esac
	done <"$ktap"

	if [ "$n" -lt "$first" ]; then
		n=$((n + 1))
		echo "not ok $n - $SUITE.results"
		echo "# no results from the suite"
		failed=$((failed + 1))
		sed 's/^/# /' "$OUT/guest.log" | tail -n 20
	elif [ -n "$planned" ] && [ "$planned" != "$((n - first + 1))" ]; then
		n=$((n + 1))
		echo "not ok $n - $SUITE.results"
		echo "# the suite planned $planned test cases and reported $((n - first))"
		failed=$((failed + 1))
	fi
}
for s in $SUITES; do
	suite_tap "$s"
done

rmmod_rc=$(awk '$1 == "rmmod" { print $2 }' "$OUT/kunit-guest.status" 2>/dev/null || true)
n=$((n + 1))
if [ "$rmmod_rc" = 0 ]; then
	echo "ok $n - rv.rmmod"
else
	echo "not ok $n - rv.rmmod"
	echo "# insmod/rmmod: $(tr '\n' ' ' <"$OUT/kunit-guest.status" 2>/dev/null)"
	failed=$((failed + 1))
fi

# The kernel log from the load on, and kmemleak's list.
n=$((n + 1))
log_ok=1
problems=
if [ ! -s "$OUT/dmesg-kunit.txt" ]; then
	log_ok=0
	problems="no kernel log (vm-run status $vm_rc)"
elif ! problems=$("$REPO/tools/testing/vm/dmesg-check" -e 'DEBUG_LOCKS_WARN_ON' \
	"$OUT/dmesg-kunit.txt" 'rv-kunit: start' 2>&1); then
	log_ok=0
fi
if [ ! -f "$OUT/kmemleak.txt" ]; then
	log_ok=0
	problems+=$'\n'"no kmemleak results"
elif grep -q 'unreferenced object\|^no ' "$OUT/kmemleak.txt"; then
	log_ok=0
	problems+=$'\n'"kmemleak: $(grep -c 'unreferenced object' "$OUT/kmemleak.txt") objects"
	problems+=$'\n'$(head -n 40 "$OUT/kmemleak.txt")
fi
if [ "$vm_rc" != 0 ] && [ "$log_ok" = 1 ]; then
	log_ok=0
	problems="vm-run exited with status $vm_rc"
fi
if [ "$log_ok" = 1 ]; then
	echo "ok $n - rv.kernel_log"
else
	echo "not ok $n - rv.kernel_log"
	printf '%s\n' "$problems" | sed '/^$/d; s/^/# /'
	failed=$((failed + 1))
fi

echo "1..$n"
[ "$failed" = 0 ]
