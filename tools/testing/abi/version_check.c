// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
/*
 * The ABI version macros must work in #if, where clients choose between
 * ioctl forms at build time, and must say 1.7. Compiled with -fsyntax-only
 * as C11 and C++20 for each ABI: any #error below fails the test.
 */
#include <rdma/rv_user_ioctls.h>

#if !defined(RV_ABI_VERSION) || !defined(RV_ABI_VERSION_CURRENT)
#error "RV_ABI_VERSION or RV_ABI_VERSION_CURRENT is missing"
#endif

#if RV_ABI_VERSION_CURRENT != RV_ABI_VERSION(1, 7)
#error "RV_ABI_VERSION_CURRENT is not RV_ABI_VERSION(1, 7)"
#endif

#if RV_ABI_VERSION(RV_ABI_VER_MAJOR, RV_ABI_VER_MINOR) != RV_ABI_VERSION_CURRENT
#error "RV_ABI_VER_MAJOR/RV_ABI_VER_MINOR disagree with RV_ABI_VERSION_CURRENT"
#endif

/* the guard PSM3 uses, and the ordering it relies on */
#if RV_ABI_VERSION_CURRENT > RV_ABI_VERSION(1, 5)
#else
#error "RV_ABI_VERSION_CURRENT > RV_ABI_VERSION(1, 5) is false"
#endif
#if !(RV_ABI_VERSION(1, 6) < RV_ABI_VERSION_CURRENT && \
	RV_ABI_VERSION_CURRENT < RV_ABI_VERSION(1, 8) && \
	RV_ABI_VERSION(1, 65535) < RV_ABI_VERSION(2, 0))
#error "RV_ABI_VERSION() does not order versions"
#endif

/* the named revisions PSM3 tests with #ifdef */
#if !defined(RV_ABI_VER_MAJOR_1) || !defined(RV_ABI_VER_MINOR_4) || \
	RV_ABI_VER_MAJOR_1 != 1 || RV_ABI_VER_MINOR_4 != 4
#error "RV_ABI_VER_MAJOR_1 / RV_ABI_VER_MINOR_4"
#endif

#if RV_EVENT_LEGACY_SIZE != 65
#error "RV_EVENT_LEGACY_SIZE is not 65"
#endif

/* the values are also usable as ordinary constant expressions */
#ifdef __cplusplus
static_assert(RV_ABI_VERSION_CURRENT == 0x10007, "ABI 1.7");
#else
_Static_assert(RV_ABI_VERSION_CURRENT == 0x10007, "ABI 1.7");
#endif
