#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Userspace tier: librv and the tools build (C++20, -Werror) and their
# GoogleTest unit tests pass under CTest. One TAP line per CTest test, as
# each one finishes; progress ("# check-userspace: [+N s] ...", the total
# at the end) on stderr.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
cd "$top"

t0=$SECONDS
step() { echo "# check-userspace: [+$((SECONDS - t0)) s] $*" >&2; }
trap 'echo "# check-userspace: total $((SECONDS - t0)) s" >&2' EXIT

log=$build/userspace-build.log
mkdir -p "$build"
step "building librv, the tools and the tests (log: $log)"
if ! make -s userspace >"$log" 2>&1; then
	echo "not ok 1 - userspace builds"
	sed 's/^/# /' "$log"
	echo "1..1"
	exit 1
fi
echo "ok 1 - userspace builds (C++20, -Werror)"

# ctest's output goes to a log; its result lines become TAP as they come,
# and the last line carries its exit status.
ctlog=$build/userspace-ctest.log
step "running the unit tests (ctest, log: $ctlog)"
rc=
n=1
while IFS='|' read -r name result; do
	if [ "$name" = "ctest exit status" ]; then
		rc=$result
		continue
	fi
	n=$((n + 1))
	name=${name%%  #*}	# "# ..." would read as a TAP directive
	if [ "$result" = Passed ]; then
		echo "ok $n - ctest $name"
	else
		echo "not ok $n - ctest $name ($result)"
	fi
# "  3/59 Test  #3: Name (may hold spaces and '#') ......   Passed  0.01 sec"
done < <(ctest --test-dir "$build/userspace" --output-on-failure 2>&1 |
	 tee "$ctlog" |
	 sed -uEn 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: (.*[^ ]) +\.{3,} *\**([A-Za-z]+).*/\1|\2/p'
	 echo "ctest exit status|${PIPESTATUS[0]}")
rc=${rc:-1}
if [ "$rc" -ne 0 ] || [ $n -eq 1 ]; then
	sed 's/^/# /' "$ctlog"
	n=$((n + 1))
	echo "not ok $n - ctest exit status $rc"
fi
echo "1..$n"
