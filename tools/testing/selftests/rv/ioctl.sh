#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The /dev/rv ioctl tests (userspace/tests/vm, GoogleTest with TAP output)
# with rv.ko loaded, then rmmod: it must unload once every file is closed.
# Runs as root inside the test VM.
set -uo pipefail

top=$(cd "$(dirname "$0")/../../../.." && pwd)
ko=${RV_KO:?vm-run sets RV_KO: the rv.ko of the kernel it boots}
tests=${RV_VM_TESTS:-${RV_BUILD_DIR:-$top/build}/userspace/tests/vm/rv_vm_tests}
rvinfo=${RV_RVINFO:-${RV_BUILD_DIR:-$top/build}/userspace/tools/rvinfo}

# shellcheck disable=SC2086 # a list of module parameters
insmod "$ko" ${RV_INSMOD_ARGS:-} || { echo "not ok 1 - insmod rv.ko"; exit 1; }
# Each test's time, for whoever trims a bed: RV_OUT/gtest-ioctl.json.
RV_RVINFO=$rvinfo "$tests" --gtest_output="json:${RV_OUT:-/tmp}/gtest-ioctl.json"
rc=$?
rmmod rv || { echo "# rmmod rv failed after the ioctl tests"; rc=1; }
exit $rc
