#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Module tier: every test that needs rv.ko, on Debian kernels
# (tools/testing/kernels.sh): RV_KERNELS, the series to test, default
# "6.1 6.12 7" (7: the newest 7.x, from tools/toolchain.sh).
# For each kernel, every bed is a fresh boot:
#   - one VM, two rxe nodes: module_load, ioctl (rv_vm_tests), conn
#     (tools/testing/selftests/rv/vm-suite.sh);
#   - one VM each, as they change the nodes: the device removed
#     mid-traffic, the driver unloaded mid-traffic (conn-fault.sh); the
#     one-VM soak with THP "always" and khugepaged scanning without pause
#     and no link flaps (soak.sh, RV_SOAK_THP=1);
#   - four VMs on one virtual Ethernet, on the newest kernel: a job of
#     four nodes (conn-4vm.sh: all-to-all, QPs per node, a link flap and
#     an unload seen by the other three);
#   - on the newest kernel, the ioctl tests of what the forms differ in,
#     and connections, against the rv.ko of the upstream series
#     (series.sh: its uAPI has no older forms); all of them with
#     RV_CHECK_FULL=1;
#   - two VMs joined by a virtual Ethernet, one rxe each: a verified
#     transfer and the peer's module removed (conn.sh); then, each on a
#     boot of its own, the soak with VM b's link flapping (soak-2vm.sh), a
#     node's link down and up mid-transfer and its address removed for
#     less and for more than reconnect_timeout (conn-2vm-fault.sh
#     link-flap, addr-short, addr-long).
# The beds after the suite's (faults, soaks, two VMs) run on the newest
# kernel; the older ones run the suite bed only, unless RV_CHECK_FULL=1
# (make check-full): those beds are what takes the time (340 to 430 s a
# kernel under TCG), make check has to fit 45 minutes on 2 cores, and the
# newest kernel is the one whose ib_core and soft-RoCE changed last.
# The tracepoint tests (Observability.Trace*) leave the suite bed for a
# bed of one vCPU (suite-trace): switching a tracepoint patches kernel
# text, which TCG can miss on another vCPU.
# RV_SUITE_ON_DEBUG: series whose debug kernel runs the suite bed's groups
# (check-debug-vm.sh, as make check does for the newest: "7"); their stock
# kernel runs only the tests the debug tier leaves out (the tracepoints)
# instead: one suite run per kernel.
# Each group first checks the bed (tools/testing/vm/bed-check): a broken
# bed is one failure that names it. Test names start with the kernel
# series, "[6.12] ...", and, in two VMs, the VM, "[6.12] [b] ...". One TAP
# stream; progress ("# check-vm: [+N s] ...", the total at the end) on
# stderr, each VM run's start and end from tap-run, vm-run's boot and
# setup lines.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${RV_BUILD_DIR:-$top/build}
cd "$top"

t0=$SECONDS
step() { echo "# check-vm: [+$((SECONDS - t0)) s] $*" >&2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; echo "# check-vm: total $((SECONDS - t0)) s" >&2' EXIT

step "building rv.ko for every kernel, and the programs the VMs run"
make -s modules BUILD="$build" >/dev/null
# A stale build would test old programs against this tree's module.
make -s userspace BUILD="$build" >"$build/userspace-build.log" 2>&1 || {
	echo "Bail out! building userspace failed, see $build/userspace-build.log"
	exit 1
}
# shellcheck disable=SC2086 # a list of series
mapfile -t kvers < <(tools/testing/kernels.sh ${RV_KERNELS:-})
# Soft-iWARP, which the kernels lack, for the iWARP refusal test
# (vm-run passes it as RV_SIW_KO); built once per kernel. Without it that
# test skips, saying why (build/siw/V/unavailable).
siw_kdirs=()
for kver in "${kvers[@]}"; do
	siw_kdirs+=("$(tools/testing/kernels.sh --build-dir "$kver")")
done
tools/testing/kernel/siw.sh -o "$build/siw" "${siw_kdirs[@]}" >/dev/null ||
	step "siw.ko is missing for some kernel: its test skips there (see $build/siw/*/unavailable)"

sel=$top/tools/testing/selftests/rv
vmrun=$top/tools/testing/vm/vm-run

# bed NAME KVER SERIES TIMEOUT VM-RUN-OPTIONS... -- COMMAND...: a program
# for tap-run (which runs programs without arguments) that boots the bed
# and names its results "[SERIES] ..." ("[SERIES] [a] ..." in two VMs).
bed() {
	local name=$1 kver=$2 series=$3 timeout=$4 f=$tmp/$3-$1
	shift 4
	{
		echo '#!/bin/bash'
		echo 'set -o pipefail'
		printf '%q ' "$vmrun" --kver "$kver" --timeout "$timeout" \
			--out "$build/vm/$series/$name" "$@"
		printf '| awk -v p=%q -f %q\n' "[$series] " "$top/tools/testing/vm/tap-name.awk"
		# The host CPU its VMs took (children's user + system), beside
		# tap-run's wall time: what running beds side by side could gain.
		printf 'rc=$? b=%q\n' "[$series] $name"
		cat <<-'EOF'
		t=$(mktemp) && times >"$t"
		awk -v b="$b" 'NR == 2 {
			u = $1; s = $2; sub(/s$/, "", u); sub(/s$/, "", s)
			split(u, a, "m"); split(s, c, "m")
			printf "# check-vm: bed %s: %.1f s of host CPU\n", b, a[1] * 60 + a[2] + c[1] * 60 + c[2]
		}' "$t"
		rm -f "$t"
		exit $rc
		EOF
	} >"$f"
	chmod +x "$f"
	beds+=("$f")
}

beds=()
for kver in "${kvers[@]}"; do
	suite_only=
	if [ "${RV_CHECK_FULL:-0}" = 0 ] && [ "$kver" != "${kvers[-1]}" ]; then
		suite_only=1
	fi
	IFS=. read -r major minor _ <<<"$kver"
	series=$major.${minor%%[!0-9]*}
	stand_in=
	for s in ${RV_SUITE_ON_DEBUG:-}; do
		[[ "$series" == "$s" || "$series" == "$s".* ]] && stand_in=1
	done
	# The tests that switch tracepoints on and off run in a VM of one
	# CPU: under TCG a vCPU can go on running a patched static key's
	# breakpoint after the patch, and loop on it for good (6.1,
	# 2026-11-27: tools/testing/vm/README.md, "The emulator's hazards").
	if [ -z "$stand_in" ]; then
		bed suite "$kver" "$series" 1200 --rxe 2 -- \
			env GTEST_FILTER='-Observability.Trace*' "$sel/vm-suite.sh"
	fi
	# Where the debug tier runs the suite's groups on the twin, this is
	# all of the suite that runs here.
	bed suite-trace "$kver" "$series" 600 --rxe 2 --smp 1 -- \
		env GTEST_FILTER='Observability.Trace*' "$sel/vm-suite.sh" ioctl
	[ -z "$suite_only" ] || continue
	# Also where the debug tier runs them: 7.x's rxe cannot be unloaded
	# on the debug kernel (docs/connections.md).
	for g in conn-fault:DeviceRemovedMidTraffic \
		conn-fault:DriverUnloadedMidTraffic; do
		bed "${g#*:}" "$kver" "$series" 600 --rxe 2 -- "$sel/vm-suite.sh" "$g"
	done
	bed soak "$kver" "$series" 1500 --two-vm -- "$sel/vm-suite.sh" soak-2vm
	# Messages as large as a buffer in one MR can be: max_size + 64 KiB
	# is soft-RoCE's max_fmr_size (511 pages, 2044 KiB).
	bed soak-thp "$kver" "$series" 900 --rxe 2 -- \
		env RV_SOAK_THP=1 RV_SOAK_FLAP=0 RV_SOAK_PROCS=8 \
		RV_SOAK_ARGS=--max-size=1980K "$sel/vm-suite.sh" soak
	bed two-vm "$kver" "$series" 900 --two-vm -- "$sel/vm-suite.sh" conn
	for f in link-flap addr-short addr-long; do
		bed "two-vm-$f" "$kver" "$series" 900 --two-vm -- \
			"$sel/vm-suite.sh" "conn-2vm-fault:$f"
	done
done
# A job of four nodes, on the newest kernel.
bed four-vm "$kver" "$series" 1800 --nodes 4 -- "$sel/vm-suite.sh" conn-4vm
# The series' own form of rv (make upstream), built for the newest kernel:
# the tests of what differs between the forms, and connections; make
# check-full, the whole ioctl suite, after every stage of the series
# loaded in turn (series-stages.sh: check-series.sh built each).
series_filter='Attach.*:Capability.*:FastReg.*:Job.*:MrCache.*:Open.*:Process.*:Ring.*:RvInfo.*:Conn.*:ConnCreate.*'
series_groups=(series)
if [ "${RV_CHECK_FULL:-0}" != 0 ]; then
	series_filter='-Observability.Trace*'
	series_groups=(series-stages series)
fi
bed series "$kver" "$series" 900 --rxe 2 -- \
	env GTEST_FILTER="$series_filter" "$sel/vm-suite.sh" "${series_groups[@]}"

rc=0
step "${#kvers[@]} kernels (${kvers[*]}), ${#beds[@]} beds"
tools/testing/vm/tap-run "${beds[@]}" || rc=$?
exit "$rc"
