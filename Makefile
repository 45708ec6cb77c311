# SPDX-License-Identifier: GPL-2.0
#
# rv: top-level build. `make` builds rv.ko out of tree against the test
# kernel's headers; see README.md for the other targets.

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD ?= $(TOP)/build

# The kernels rv.ko is built for: KDIR when given, else every installed
# kernel that has its headers (tools/build-module.sh). Never `uname -r`:
# the build machine's own kernel is not one we test. Each module lands in
# build/modules/<kernel release>/rv.ko. Everything here that depends on
# installed packages is evaluated when a recipe runs, after `make deps`.
KDIR ?=
MODDIR := $(TOP)/drivers/infiniband/ulp/rv
BUILD_MODULE = $(TOP)/tools/build-module.sh -o $(BUILD)/modules $(KDIR)
# make install: one kernel, KDIR's, else the newest with headers.
INSTALL_KDIR = $(or $(KDIR),$(shell ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1))
KVER ?= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"$$/\1/p' \
	$(INSTALL_KDIR)/include/generated/utsrelease.h 2>/dev/null)
RV_KO = $(BUILD)/modules/$(KVER)/rv.ko

PREFIX ?= /usr/local
DESTDIR ?=
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/rv
# Vendor locations, outside PREFIX like rv.ko and the uAPI header: udev
# and systemd-modules-load read them; /etc stays the admin's (README).
UDEVRULESDIR ?= /usr/lib/udev/rules.d
MODULESLOADDIR ?= /usr/lib/modules-load.d
# Extra arguments for configuring userspace, e.g. -DRV_BUILD_TESTS=OFF.
CMAKE_ARGS ?=

# The project version (userspace/CMakeLists.txt); dkms.conf carries it too.
VERSION := $(shell sed -n 's/^[[:space:]]*VERSION \([0-9][0-9.]*\)$$/\1/p' \
	userspace/CMakeLists.txt | head -n 1)
DKMS_SRC = $(DESTDIR)/usr/src/rv-$(VERSION)

export RV_BUILD_DIR := $(BUILD)

# ccache, when installed (make deps installs it): a fresh clone builds
# librv, the tools and the tests from its cache. Paths under the tree are
# hashed relative to it, so clones at other paths share the cache (this
# tree's, also under a make that runs another tree's: the install tier).
CCACHE ?= $(shell command -v ccache 2>/dev/null)
CMAKE_LAUNCHER = $(if $(CCACHE),-DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE) \
	-DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE))
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

.PHONY: all modules sparse userspace deps check check-full demo bench soak fuzz install \
	uninstall dkms-source dkms-install dkms-uninstall upstream clean help

all: modules userspace

help:
	@echo "make            build rv.ko and the userspace library and tools"
	@echo "make deps       install every Debian package the project needs"
	@echo "make check      run every test tier (installs what it needs)"
	@echo "make check-full make check, plus the debug tiers on Linux 6.1"
	@echo "make demo       boot the test VM, load rxe and rv, query /dev/rv"
	@echo "make bench      rvbench in the test VM (BENCH_ARGS, default: reg)"
	@echo "make soak       the soak between two VMs for SOAK_SECONDS (300), SOAK_FLAP_MODE"
	@echo "                link (default) or drop; SOAK_BED=one-vm: in one VM"
	@echo "make fuzz       the fuzzer: FUZZ_CALLS (10M) or FUZZ_SECONDS (1800), FUZZ_SEED (7)"
	@echo "make install    install rv.ko, the uAPI header, librv and tools"
	@echo "make uninstall  remove what make install installed"
	@echo "make dkms-install  rv $(VERSION) with DKMS, for every kernel with headers"
	@echo "make upstream   the patch series for the newest kernel, in build/upstream"
	@echo "variables: KDIR=<kernel build dir> (default: every kernel with headers)"

modules:
	$(BUILD_MODULE)

# The series for linux-rdma: tools/upstream/series.txt, written by
# make-series.py against the newest linux-source (make deps), each patch
# checked with that kernel's checkpatch.pl --strict.
upstream: deps
	RV_BUILD_DIR=$(BUILD) tools/upstream/upstream.sh

# The same builds with sparse run on every file, its warnings fatal.
sparse:
	$(BUILD_MODULE) -- C=2 CF=-Wsparse-error

userspace:
	cmake -S userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) -DRV_INSTALL_UAPI_HEADER=OFF \
		-DRV_UAPI_INSTALL_INCLUDEDIR=/usr/include $(CMAKE_LAUNCHER) $(CMAKE_ARGS)
	cmake --build $(BUILD)/userspace -j$$(nproc)

deps:
	tools/deps.sh

check: deps
	tools/testing/run-check

# make check, plus KUnit and the debug tier on the 6.1 debug kernel.
check-full: deps
	RV_CHECK_FULL=1 tools/testing/run-check

demo: deps modules userspace
	tools/testing/vm/vm-run --rxe 2 -- tools/testing/demo.sh

BENCH_ARGS ?= reg
bench: deps modules userspace
	tools/testing/vm/vm-run --rxe 2 --timeout 3600 -- tools/testing/bench.sh $(BENCH_ARGS)

# The long fuzz campaign (make check runs 100k calls on the debug kernel).
FUZZ_CALLS ?= 10000000
FUZZ_SECONDS ?= 1800
FUZZ_SEED ?= 7
fuzz: deps modules userspace
	RV_FUZZ_CALLS=$(FUZZ_CALLS) RV_FUZZ_SECONDS=$(FUZZ_SECONDS) RV_FUZZ_SEED=$(FUZZ_SEED) \
		tools/testing/vm/vm-run --rxe 2 --timeout $$(($(FUZZ_SECONDS) + 900)) \
		-- tools/testing/selftests/rv/fuzz.sh

# The long soak: two VMs (vm-run --two-vm, one rxe each), VM b's link
# going down and up for real (ip link) by default; SOAK_BED=one-vm: the two
# rxe nodes of one VM instead. make check runs 30 s of the same two-VM
# soak with link flaps (selftests/rv/vm-suite.sh soak-2vm).
SOAK_SECONDS ?= 300
SOAK_FLAP_MODE ?= link
SOAK_BED ?= two-vm
soak: deps modules userspace
	@case "$(SOAK_BED)" in two-vm|one-vm) ;; \
	*) echo "SOAK_BED must be two-vm or one-vm, not '$(SOAK_BED)'" >&2; exit 2 ;; esac
	RV_SOAK_SECONDS=$(SOAK_SECONDS) RV_SOAK_FLAP_MODE=$(SOAK_FLAP_MODE) \
		tools/testing/vm/vm-run $(if $(filter one-vm,$(SOAK_BED)),--rxe 2,--two-vm) \
		--timeout $$(($(SOAK_SECONDS) + $(if $(filter one-vm,$(SOAK_BED)),900,1500))) -- \
		$(if $(filter one-vm,$(SOAK_BED)),tools/testing/selftests/rv/soak.sh,\
		tools/testing/selftests/rv/vm-suite.sh soak-2vm)

# What `make install` puts outside the CMake install (which keeps its own
# manifest), relative to DESTDIR.
INSTALLED_FILES = /lib/modules/$(KVER)/extra/rv.ko \
	/usr/include/rdma/rv_user_ioctls.h \
	$(UDEVRULESDIR)/60-rv.rules \
	$(MODULESLOADDIR)/rv.conf \
	$(DOCDIR)/examples/modprobe.d/rv.conf \
	$(MANDIR)/man4/rv.4

install: modules userspace
	@test -f "$(RV_KO)" || { echo "no rv.ko for '$(KVER)': set KDIR" >&2; exit 1; }
	install -D -m 0644 $(RV_KO) $(DESTDIR)/lib/modules/$(KVER)/extra/rv.ko
	install -D -m 0644 include/uapi/rdma/rv_user_ioctls.h \
		$(DESTDIR)/usr/include/rdma/rv_user_ioctls.h
	install -D -m 0644 packaging/udev/60-rv.rules \
		$(DESTDIR)$(UDEVRULESDIR)/60-rv.rules
	install -D -m 0644 packaging/modules-load.d/rv.conf \
		$(DESTDIR)$(MODULESLOADDIR)/rv.conf
	install -D -m 0644 packaging/modprobe.d/rv.conf \
		$(DESTDIR)$(DOCDIR)/examples/modprobe.d/rv.conf
	install -D -m 0644 man/rv.4 $(DESTDIR)$(MANDIR)/man4/rv.4
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD)/userspace --prefix $(PREFIX)
	if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

# The CMake part from the manifest of the last install (paths without
# DESTDIR), then the directories only rv uses, when left empty.
MANIFEST = $(BUILD)/userspace/install_manifest.txt

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED_FILES))
	if [ -f $(MANIFEST) ]; then \
		sed 's|^|$(DESTDIR)|' $(MANIFEST) | xargs -r -d '\n' rm -f; fi
	{ printf '%s\n' $(DOCDIR)/examples/modprobe.d $(DOCDIR)/examples \
		$(DOCDIR); if [ -f $(MANIFEST) ]; then \
		sed -n 's|/[^/]*$$||p' $(MANIFEST) | grep '/rv$$' | sort -u; fi; } | \
		while read -r d; do rmdir "$(DESTDIR)$$d" 2>/dev/null || true; done
	if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

# DKMS: the module's sources with the out-of-tree layer (compat/: its
# Kbuild, which kbuild reads instead of the Makefile), dkms.conf and the
# uAPI header in /usr/src/rv-VERSION, the layout dkms.conf builds from.
dkms-source:
	@test -n "$(VERSION)" || { echo "no version in userspace/CMakeLists.txt" >&2; exit 1; }
	@grep -qx 'PACKAGE_VERSION="$(VERSION)"' dkms.conf || \
		{ echo "dkms.conf: PACKAGE_VERSION is not $(VERSION)" >&2; exit 1; }
	rm -rf $(DKMS_SRC)
	install -D -m 0644 dkms.conf $(DKMS_SRC)/dkms.conf
	install -D -m 0644 -t $(DKMS_SRC)/drivers/infiniband/ulp/rv \
		$(MODDIR)/Makefile $(MODDIR)/Kconfig $(wildcard $(MODDIR)/*.h) \
		$(filter-out %.mod.c,$(wildcard $(MODDIR)/*.c)) \
		compat/Kbuild $(wildcard compat/*.[ch])
	install -D -m 0644 include/uapi/rdma/rv_user_ioctls.h \
		$(DKMS_SRC)/include/uapi/rdma/rv_user_ioctls.h

# Registers the source with DKMS, then builds and installs rv.ko for every
# kernel that has its headers; DKMS builds it for kernels installed later
# (AUTOINSTALL). DKMS's copy (updates/dkms) wins over `make install`'s
# (extra): use one or the other.
dkms-install: dkms-source
	dkms status rv/$(VERSION) | grep -q . || dkms add rv/$(VERSION)
	for b in /lib/modules/*/build; do \
		[ -d "$$b/" ] || continue; k=$${b%/build}; \
		dkms install rv/$(VERSION) -k $${k##*/} || exit 1; \
	done

dkms-uninstall:
	-dkms remove rv/$(VERSION) --all
	rm -rf $(DKMS_SRC)

clean:
	rm -rf $(BUILD)
