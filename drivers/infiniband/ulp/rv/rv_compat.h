/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels rv builds for, in one place: Linux 6.1
 * up to 7.3 (README.md, "Supported kernels"). The kbuild Makefile tests
 * the kernel's headers for each difference and defines RV_HAVE_* (or
 * RV_RXE_CQ_TASKLET) for this header; every other file is written against
 * the newest API and uses the rv_* names below where it differs. In tree
 * only the newest API exists, and none of this is needed.
 */
#ifndef RV_COMPAT_H
#define RV_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem.h>

/* vm_area_struct.vm_flags is read-only since 6.3: vm_flags_set(). */
#ifdef RV_HAVE_VM_FLAGS_SET
#define rv_vm_flags_set vm_flags_set
#else
static inline void rv_vm_flags_set(struct vm_area_struct *vma,
				   vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/*
 * __assign_str() takes only the field since 6.10; the source is the one
 * __string() named.
 */
#ifdef RV_HAVE_ASSIGN_STR_1
#define rv_assign_str(dst, src) __assign_str(dst)
#else
#define rv_assign_str(dst, src) __assign_str(dst, src)
#endif

/*
 * Pinning a range of the calling process's memory: ib_umem_get() up to
 * 7.2, ib_umem_get_va() since (ib_umem_get() is gone in 7.3).
 */
#ifdef RV_HAVE_IB_UMEM_GET_VA
#define rv_umem_get_va ib_umem_get_va
#else
#define rv_umem_get_va ib_umem_get
#endif

/*
 * A timer with its function: hrtimer_setup() since 6.13; hrtimer_init()
 * and the function set after it up to 6.14 (it is gone in 6.15).
 */
#ifdef RV_HAVE_HRTIMER_SETUP
#define rv_hrtimer_setup hrtimer_setup
#else
static inline void rv_hrtimer_setup(struct hrtimer *timer,
				    enum hrtimer_restart (*fn)(struct hrtimer *),
				    clockid_t clock, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
}
#endif

/*
 * A workqueue bound to CPUs says so since WQ_PERCPU exists (7.x warns
 * about one that says neither); before, that was the default.
 */
#ifdef RV_HAVE_WQ_PERCPU
#define RV_WQ_PERCPU WQ_PERCPU
#else
#define RV_WQ_PERCPU 0
#endif

/*
 * RV_RXE_CQ_TASKLET: soft-RoCE hands CQ notifications to a tasklet that
 * ib_free_cq() does not kill, up to 6.3 (rv_quirks.c).
 */

#endif /* RV_COMPAT_H */
