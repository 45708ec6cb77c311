# SPDX-License-Identifier: GPL-2.0
#
# rv: top-level build. `make` builds rv.ko out of tree against the test
# kernel's headers; see README.md for the other targets.

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD ?= $(TOP)/build

# The test kernel: the newest Debian kernel with headers installed. Never
# `uname -r`: the build machine's own kernel is not the one we test.
KDIR ?= $(shell ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1)
KVER ?= $(notdir $(patsubst %/,%,$(dir $(KDIR))))
MODDIR := $(TOP)/drivers/infiniband/ulp/rv
RV_KO := $(MODDIR)/rv.ko

# Warnings are errors, for the compiler (W=1) and for sparse (C=2).
KBUILD_ARGS := -C $(KDIR) M=$(MODDIR) CONFIG_INFINIBAND_RV=m \
	W=1 KCFLAGS=-Werror

PREFIX ?= /usr/local
DESTDIR ?=

export RV_BUILD_DIR := $(BUILD)
export RV_KO KVER

.PHONY: all modules sparse userspace deps check demo bench install \
	uninstall clean help

all: modules userspace

help:
	@echo "make            build rv.ko and the userspace library and tools"
	@echo "make deps       install every Debian package the project needs"
	@echo "make check      run every test tier (installs what it needs)"
	@echo "make demo       boot the test VM, load rxe and rv, query /dev/rv"
	@echo "make bench      rvbench in the test VM (BENCH_ARGS, default: reg)"
	@echo "make install    install rv.ko, the uAPI header, librv and tools"
	@echo "variables: KDIR=<kernel build dir> (default: $(KDIR))"

modules:
	@test -d "$(KDIR)" || { echo "no kernel headers: run 'make deps'" >&2; exit 1; }
	$(MAKE) $(KBUILD_ARGS) modules

# The same build with sparse run on every file, its warnings fatal.
sparse:
	@test -d "$(KDIR)" || { echo "no kernel headers: run 'make deps'" >&2; exit 1; }
	$(MAKE) $(KBUILD_ARGS) C=2 CF=-Wsparse-error modules

userspace:
	cmake -S userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DRV_INSTALL_UAPI_HEADER=OFF
	cmake --build $(BUILD)/userspace -j$$(nproc)

deps:
	tools/deps.sh

check: deps
	tools/testing/run-check

demo: deps modules userspace
	tools/testing/vm/vm-run --rxe 2 -- tools/testing/demo.sh

BENCH_ARGS ?= reg
bench: deps modules userspace
	tools/testing/vm/vm-run --rxe 2 --timeout 3600 -- tools/testing/bench.sh $(BENCH_ARGS)

install: modules userspace
	install -D -m 0644 $(RV_KO) $(DESTDIR)/lib/modules/$(KVER)/extra/rv.ko
	install -D -m 0644 include/uapi/rdma/rv_user_ioctls.h \
		$(DESTDIR)/usr/include/rdma/rv_user_ioctls.h
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD)/userspace --prefix $(PREFIX)
	if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/extra/rv.ko
	rm -f $(DESTDIR)/usr/include/rdma/rv_user_ioctls.h
	if [ -f $(BUILD)/userspace/install_manifest.txt ]; then \
		sed 's|^|$(DESTDIR)|' $(BUILD)/userspace/install_manifest.txt | \
		xargs -r -d '\n' rm -f; fi
	if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

clean:
	if [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(MODDIR) clean; fi
	rm -rf $(BUILD)
