#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install every Debian package rv's build, tests and demo need. Does
# nothing when all are present; otherwise runs apt-get update first (a
# fresh machine has no package lists) and installs what is missing. Then
# the newest kernel, Linux 7.x from Debian 13's backports, with the
# compiler its headers name: tools/toolchain.sh (once; about a minute).
set -euo pipefail

pkgs=(
	# the test kernels, 6.1 and 6.12, and the headers rv.ko is built against
	linux-image-amd64 linux-headers-amd64
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	# checkpatch.pl and the debug kernels come from the source packages
	linux-source-6.1 linux-source-6.12 xz-utils
	# the VM bench
	qemu-system-x86 busybox-static kmod cpio iproute2
	# RDMA userspace: rdma tool, rxe provider, perftest references
	rdma-core ibverbs-utils ibverbs-providers perftest
	# the test bed's health check pings through the RDMA CM (rping)
	rdmacm-utils
	libibverbs-dev librdmacm-dev
	# builds: kernel module, sparse, ABI tests on -m32/-mx32, C++20
	make gcc g++ gcc-multilib g++-multilib libc6-dev-x32 sparse cmake
	libgtest-dev libgmock-dev pkg-config
	# a fresh clone's userspace build from the compiler cache
	ccache
	# the ABI tests read compiler output and DWARF
	python3 binutils
	# the debug test kernel (KASAN, lockdep, kmemleak, KUnit)
	bc bison flex libelf-dev libssl-dev
	# the Debian 13 root for the newest kernel (tools/toolchain.sh), and
	# the fixes of its soft-RoCE (tools/testing/kernel/rxe.sh)
	debootstrap patch
	# the install tier: DKMS builds, man pages rendered by groff
	dkms groff-base
	# the tracepoint test records with trace-cmd, as admins do
	trace-cmd
	# make upstream: the series without the out-of-tree module's older
	# uAPI forms (#ifndef RV_UPSTREAM)
	unifdef
)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	sudo=(sudo)
fi

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#pkgs[@]} packages present"
else
	echo "deps: installing ${missing[*]}"
	"${sudo[@]}" apt-get update
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y \
		--no-install-recommends "${missing[@]}"
fi

"${sudo[@]}" "$(dirname "$0")/toolchain.sh" >/dev/null
