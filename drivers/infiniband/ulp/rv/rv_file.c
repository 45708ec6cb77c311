// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/rv file operations and ioctl dispatch.
 *
 * An ioctl whose type is not RV_MAGIC, or whose number rv does not define,
 * fails with -ENOTTY. A defined number whose direction or size is none of
 * the forms the ABI defines for it fails with -EINVAL. Each handler gets
 * the exact command so that it can tell the size variants apart.
 */
#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "rv.h"

/**
 * rv_file_user - the attach of this file, for a caller that needs one
 * @rf: the file
 * @err: set when NULL is returned
 *
 * Only the attaching process may use an attach: a child after fork, or the
 * process after exec, gets -EACCES. Takes no lock (rf->user is published
 * once by ATTACH), so it may run under mmap_lock.
 *
 * Return: the attach, or NULL with *@err -EINVAL (not attached) or -EACCES.
 */
struct rv_user *rv_file_user(struct rv_file *rf, int *err)
{
	/* Pairs with the release in rv_ioctl_attach(). */
	struct rv_user *user = smp_load_acquire(&rf->user);

	if (!user) {
		*err = -EINVAL;
		return NULL;
	}
	if (user->mm != current->mm || user->tgid != current->tgid) {
		*err = -EACCES;
		return NULL;
	}
	return user;
}

static int rv_open(struct inode *inode, struct file *filp)
{
	struct rv_file *rf;

	rf = kzalloc_obj(*rf, GFP_KERNEL_ACCOUNT);
	if (!rf)
		return -ENOMEM;
	mutex_init(&rf->lock);
#ifdef RV_UPSTREAM
	rf->abi_version = RV_ABI_VERSION_CURRENT;
#else
	/* A client that never declares its ABI gets the legacy layout. */
	rf->abi_version = RV_ABI_VERSION(1, 6);
#endif
	filp->private_data = rf;
	return 0;
}

static int rv_release(struct inode *inode, struct file *filp)
{
	struct rv_file *rf = filp->private_data;

	if (rf->user) {
		rv_user_release(rf->user);
		rv_conn_user_exit(rf->user);
		rv_user_put(rf->user);
	}
	mutex_destroy(&rf->lock);
	kfree(rf);
	return 0;
}

static bool rv_is_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

static long rv_ioctl_capability(const struct rv_ioctl_ctx *ctx)
{
	struct rv_capability_params p = {};
	void __user *uarg = ctx->uarg;
	struct rv_file *rf = ctx->rf;
	u32 abi;

#ifndef RV_UPSTREAM
	if (ctx->cmd == RV_IOCTL_QUERY_R2) {
		/* The 1.2 form carries no input. */
		abi = RV_ABI_VERSION(1, 2);
		goto answer;
	}
#endif
	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	if (p.resv1 || !rv_is_zero(p.resv2, sizeof(p.resv2)) || !p.major_rev)
		return -EINVAL;
	if (p.major_rev > RV_ABI_VER_MAJOR)
		abi = RV_ABI_VERSION_CURRENT;
	else
		abi = RV_ABI_VERSION(p.major_rev, p.minor_rev);
#ifdef RV_UPSTREAM
	/* The 65-byte events of older versions are not served. */
	if (abi < RV_ABI_VERSION(1, 7))
		return -EINVAL;
#else
answer:
#endif

	memset(&p, 0, sizeof(p));
	p.major_rev = RV_ABI_VER_MAJOR;
	p.minor_rev = RV_ABI_VER_MINOR;
	p.capability = RV_CAPS_IMPLEMENTED;
	if (copy_to_user(uarg, &p, sizeof(p)))
		return -EFAULT;

	mutex_lock(&rf->lock);
	rf->abi_version = abi;
	mutex_unlock(&rf->lock);
	return 0;
}

typedef long (*rv_ioctl_fn)(const struct rv_ioctl_ctx *ctx);

/*
 * Every ioctl number rv defines, with the command forms it accepts. A
 * number without a handler is part of the ABI but not implemented by this
 * build of the module. @attached: only the process that attached may call
 * it.
 */
#ifdef RV_UPSTREAM
#define RV_IOCTL_FORMS 1
#else
/* ATTACH, REG_MEM and CAPABILITY have older forms on the same number. */
#define RV_IOCTL_FORMS 3
#endif

struct rv_ioctl_desc {
	unsigned int cmds[RV_IOCTL_FORMS];
	rv_ioctl_fn fn;
	bool attached;
};

#define RV_IOCTL_FIRST_NR 0xF1
#define RV_IOC_IDX(c) (_IOC_NR(c) - RV_IOCTL_FIRST_NR)

static const struct rv_ioctl_desc rv_ioctls[] = {
	[RV_IOC_IDX(RV_IOCTL_ATTACH)] = {
#ifdef RV_UPSTREAM
		{ RV_IOCTL_ATTACH }, rv_ioctl_attach },
	[RV_IOC_IDX(RV_IOCTL_REG_MEM)] = {
		{ RV_IOCTL_REG_MEM }, rv_ioctl_reg_mem, true },
#else
		{ RV_IOCTL_ATTACH, RV_IOCTL_ATTACH_R5 }, rv_ioctl_attach },
	[RV_IOC_IDX(RV_IOCTL_REG_MEM)] = {
		{ RV_IOCTL_REG_MEM, RV_IOCTL_REG_MEM_R4, RV_IOCTL_REG_MEM_R1 },
		rv_ioctl_reg_mem, true },
#endif
	[RV_IOC_IDX(RV_IOCTL_DEREG_MEM)] = {
		{ RV_IOCTL_DEREG_MEM }, rv_ioctl_dereg_mem, true },
	[RV_IOC_IDX(RV_IOCTL_EVICT)] = {
		{ RV_IOCTL_EVICT }, rv_ioctl_evict, true },
	[RV_IOC_IDX(RV_IOCTL_GET_CACHE_STATS)] = {
		{ RV_IOCTL_GET_CACHE_STATS }, rv_ioctl_get_cache_stats, true },
	[RV_IOC_IDX(RV_IOCTL_CONN_CREATE)] = {
		{ RV_IOCTL_CONN_CREATE }, rv_ioctl_conn_create, true },
	[RV_IOC_IDX(RV_IOCTL_CONN_CONNECT)] = {
		{ RV_IOCTL_CONN_CONNECT }, rv_ioctl_conn_connect, true },
	[RV_IOC_IDX(RV_IOCTL_CONN_CONNECTED)] = {
		{ RV_IOCTL_CONN_CONNECTED }, rv_ioctl_conn_connected, true },
	[RV_IOC_IDX(RV_IOCTL_POST_RDMA_WR_IMMED)] = {
		{ RV_IOCTL_POST_RDMA_WR_IMMED }, rv_ioctl_post_write, true },
	[RV_IOC_IDX(RV_IOCTL_CAPABILITY)] = {
#ifdef RV_UPSTREAM
		{ RV_IOCTL_CAPABILITY }, rv_ioctl_capability },
#else
		{ RV_IOCTL_CAPABILITY, RV_IOCTL_QUERY_R2 },
		rv_ioctl_capability },
#endif
	[RV_IOC_IDX(RV_IOCTL_CONN_GET_STATS)] = {
		{ RV_IOCTL_CONN_GET_STATS }, rv_ioctl_conn_get_stats, true },
	[RV_IOC_IDX(RV_IOCTL_GET_EVENT_STATS)] = {
		{ RV_IOCTL_GET_EVENT_STATS }, rv_ioctl_get_event_stats, true },
	[RV_IOC_IDX(RV_IOCTL_CONN_GET_CONN_COUNT)] = {
		{ RV_IOCTL_CONN_GET_CONN_COUNT }, rv_ioctl_conn_get_conn_count,
		true },
};

/*
 * A handler for the process that attached: the caller must be it, and the
 * job's verbs objects stay while the handler runs.
 */
static long rv_ioctl_attached(const struct rv_ioctl_desc *desc,
			      struct rv_ioctl_ctx *ctx)
{
	int err, idx;
	long ret;

	ctx->user = rv_file_user(ctx->rf, &err);
	if (!ctx->user)
		return err;
	idx = srcu_read_lock(&rv_dev_srcu);
	ret = desc->fn(ctx);
	srcu_read_unlock(&rv_dev_srcu, idx);
	return ret;
}

static long rv_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct rv_ioctl_ctx ctx = {
		.rf = filp->private_data,
		.uarg = (void __user *)arg,
		.cmd = cmd,
	};
	const struct rv_ioctl_desc *desc;
	unsigned int nr = _IOC_NR(cmd);
	int i;

	if (_IOC_TYPE(cmd) != RV_MAGIC || nr < RV_IOCTL_FIRST_NR ||
	    nr - RV_IOCTL_FIRST_NR >= ARRAY_SIZE(rv_ioctls))
		return -ENOTTY;
	desc = &rv_ioctls[nr - RV_IOCTL_FIRST_NR];
	if (!desc->cmds[0])
		return -ENOTTY;

	for (i = 0; i < ARRAY_SIZE(desc->cmds) && desc->cmds[i]; i++) {
		if (desc->cmds[i] != cmd)
			continue;
		if (!desc->fn)
			return -EOPNOTSUPP;
		if (desc->attached)
			return rv_ioctl_attached(desc, &ctx);
		return desc->fn(&ctx);
	}
	return -EINVAL;
}

/* Runs under mmap_lock: no lock of ours that REG_MEM holds may be taken. */
static int rv_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct rv_user *user;
	int ret;

	user = rv_file_user(filp->private_data, &ret);
	if (!user)
		return ret;
	return rv_ring_mmap(&user->ring, vma);
}

const struct file_operations rv_fops = {
	.owner = THIS_MODULE,
	.open = rv_open,
	.release = rv_release,
	.unlocked_ioctl = rv_ioctl,
	.mmap = rv_mmap,
	/* Every struct has the same layout for 32-bit callers. */
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};
