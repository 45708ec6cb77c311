/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The out-of-tree build's backports layer (compat/Kbuild): what the
 * kernels rv builds for, Linux 6.1 up to 7.3, lack of the newest API that
 * drivers/infiniband/ulp/rv is written against. Kbuild includes this
 * header first in every file (-include) and, for each difference, tests
 * the kernel's own headers and defines RV_HAVE_*.
 * The sources themselves carry no version test; in tree none of this
 * exists.
 */
#ifndef RV_COMPAT_H
#define RV_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

/* vm_area_struct.vm_flags is read-only since 6.3: vm_flags_set(). */
#ifndef RV_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/*
 * Pinning a range of the calling process's memory: ib_umem_get() up to
 * 7.2, ib_umem_get_va() since (ib_umem_get() is gone in 7.3). Same
 * arguments.
 */
#ifndef RV_HAVE_IB_UMEM_GET_VA
#define ib_umem_get_va ib_umem_get
#endif

/*
 * A timer with its function: hrtimer_setup() since 6.13; hrtimer_init()
 * and the function set after it up to 6.14 (it is gone in 6.15).
 */
#ifndef RV_HAVE_HRTIMER_SETUP
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*fn)(struct hrtimer *),
				 clockid_t clock, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
}
#endif

/*
 * Typed allocation: kzalloc_obj() and kzalloc_objs() since 7.0. rv always
 * passes the gfp flags.
 */
#ifndef RV_HAVE_KZALLOC_OBJ
#define kzalloc_obj(p, gfp) kzalloc(sizeof(p), gfp)
#define kzalloc_objs(p, n, gfp) kcalloc(n, sizeof(p), gfp)
#endif

/*
 * A module imports a symbol namespace by its name as a string since 6.13;
 * before, MODULE_IMPORT_NS() stringified an identifier.
 */
#ifndef RV_HAVE_IMPORT_NS_STRING
#undef MODULE_IMPORT_NS
#define MODULE_IMPORT_NS(ns) MODULE_INFO(import_ns, ns)
#endif

/*
 * A workqueue bound to CPUs says so since WQ_PERCPU exists (7.x warns
 * about one that says neither); before, that was the default.
 */
#ifndef RV_HAVE_WQ_PERCPU
#define WQ_PERCPU 0
#endif

#endif /* RV_COMPAT_H */
