/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels rv builds for, in one place: Linux 6.1
 * up to 6.12 (README.md, "Supported kernels"). Every other file is written
 * against the newest API and includes this header where it uses one of
 * these; nothing else in rv tests LINUX_VERSION_CODE.
 */
#ifndef RV_COMPAT_H
#define RV_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "rv needs Linux 6.1 or newer"
#endif

/* vm_area_struct.vm_flags is read-only since 6.3: vm_flags_set(). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void rv_vm_flags_set(struct vm_area_struct *vma,
				   vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#else
#define rv_vm_flags_set vm_flags_set
#endif

/*
 * __assign_str() takes only the field since 6.10; the source is the one
 * __string() named.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 10, 0)
#define rv_assign_str(dst, src) __assign_str(dst, src)
#else
#define rv_assign_str(dst, src) __assign_str(dst)
#endif

/*
 * Soft-RoCE hands CQ notifications to a tasklet that ib_free_cq() does
 * not kill, up to 6.3 (rv_quirks.c).
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
#define RV_RXE_CQ_TASKLET
#endif

#endif /* RV_COMPAT_H */
