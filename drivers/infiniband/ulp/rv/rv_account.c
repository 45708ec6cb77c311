// SPDX-License-Identifier: GPL-2.0
/*
 * Who pays for what rv creates for a process.
 *
 * The rdma cgroup, as uverbs charges it: each attached process holds a
 * handle (RDMACG_RESOURCE_HCA_HANDLE, as a uverbs context does) and each
 * PD, QP, CQ and MR rv creates is an object (RDMACG_RESOURCE_HCA_OBJECT),
 * charged to the cgroup of the process whose ioctl made rv create it: a
 * job's PD and registration QP and CQ to the process that created the
 * job, a shared connection's QPs and CQs to the process that created the
 * connection, for as long as they exist, whoever uses them and whether
 * or not that process is still alive. A charge over the cgroup's
 * rdma.max fails with EAGAIN, as uverbs' does. Every charge is returned
 * when its objects are destroyed, at the latest in rv's remove callback
 * of the device, before the RDMA core takes the device out of the
 * cgroup.
 *
 * Per-user limits: the module parameters max_jobs_per_user,
 * max_conns_per_user and max_qps_per_user bound what one uid's jobs hold
 * on the node (0: no limit), counted whoever of the uid's processes
 * created them. Beyond a limit ATTACH or CONN_CREATE fails with EDQUOT,
 * unless the caller has CAP_SYS_RESOURCE, as with other per-user limits.
 */
#include <linux/capability.h>
#include <linux/hashtable.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "rv.h"
#include "rv_account.h"

int rv_rdmacg_charge(struct rv_rdmacg *c, struct ib_device *dev,
		     enum rdmacg_resource_type type, unsigned int n)
{
#ifdef CONFIG_CGROUP_RDMA
	struct rdma_cgroup *cg;
	int ret;

	c->type = type;
	for (c->n = 0; c->n < n; c->n++) {
		ret = rdmacg_try_charge(&cg, &dev->cg_device, type);
		if (ret)
			goto err;
		/* All to one cgroup, even if the caller moves meanwhile. */
		if (c->n && cg != c->cg) {
			rdmacg_uncharge(cg, &dev->cg_device, type);
			ret = -EAGAIN;
			goto err;
		}
		c->cg = cg;
	}
	return 0;

err:
	rv_rdmacg_uncharge(c, dev);
	return ret;
#else
	c->n = 0;
	return 0;
#endif
}

/* @dev is the device charged; not used once c->n is 0. */
void rv_rdmacg_uncharge(struct rv_rdmacg *c, struct ib_device *dev)
{
#ifdef CONFIG_CGROUP_RDMA
	for (; c->n; c->n--)
		rdmacg_uncharge(c->cg, &dev->cg_device, c->type);
#endif
}

static DEFINE_HASHTABLE(rv_owners, 6);
static DEFINE_SPINLOCK(rv_owners_lock);

static struct rv_owner *rv_owner_find(kuid_t uid)
{
	struct rv_owner *o;

	hash_for_each_possible(rv_owners, o, node, __kuid_val(uid))
		if (uid_eq(o->uid, uid))
			return o;
	return NULL;
}

/* The counters of @uid, with a reference; NULL if out of memory. */
struct rv_owner *rv_owner_get(kuid_t uid)
{
	struct rv_owner *o, *new;

	spin_lock(&rv_owners_lock);
	o = rv_owner_find(uid);
	if (o)
		refcount_inc(&o->ref);
	spin_unlock(&rv_owners_lock);
	if (o)
		return o;

	new = kzalloc_obj(*new, GFP_KERNEL);
	if (!new)
		return NULL;
	new->uid = uid;
	refcount_set(&new->ref, 1);
	spin_lock(&rv_owners_lock);
	o = rv_owner_find(uid);
	if (o) {
		refcount_inc(&o->ref);
	} else {
		hash_add(rv_owners, &new->node, __kuid_val(uid));
		o = new;
		new = NULL;
	}
	spin_unlock(&rv_owners_lock);
	kfree(new);
	return o;
}

void rv_owner_put(struct rv_owner *o)
{
	bool last;

	spin_lock(&rv_owners_lock);
	last = refcount_dec_and_test(&o->ref);
	if (last)
		hash_del(&o->node);
	spin_unlock(&rv_owners_lock);
	if (last)
		kfree(o);
}

static unsigned int rv_owner_limit(enum rv_owner_res res)
{
	switch (res) {
	case RV_OWNER_JOBS:
		return READ_ONCE(rv_params.max_jobs_per_user);
	case RV_OWNER_CONNS:
		return READ_ONCE(rv_params.max_conns_per_user);
	default:
		return READ_ONCE(rv_params.max_qps_per_user);
	}
}

/* Take @n of @res for @o, in the caller's context: 0 or -EDQUOT. */
int rv_owner_charge(struct rv_owner *o, enum rv_owner_res res,
		    unsigned int n)
{
	unsigned int limit = rv_owner_limit(res);
	unsigned int used = atomic_add_return(n, &o->used[res]);

	if (limit && used > limit && !capable(CAP_SYS_RESOURCE)) {
		atomic_sub(n, &o->used[res]);
		return -EDQUOT;
	}
	return 0;
}

void rv_owner_uncharge(struct rv_owner *o, enum rv_owner_res res,
		       unsigned int n)
{
	atomic_sub(n, &o->used[res]);
}

/* For debugfs: a line per uid that holds something. */
void rv_owners_show(struct seq_file *m)
{
	struct rv_owner *o;
	int bkt;

	spin_lock(&rv_owners_lock);
	hash_for_each(rv_owners, bkt, o, node)
		seq_printf(m, "uid=%u jobs=%d conns=%d qps=%d\n",
			   from_kuid_munged(&init_user_ns, o->uid),
			   atomic_read(&o->used[RV_OWNER_JOBS]),
			   atomic_read(&o->used[RV_OWNER_CONNS]),
			   atomic_read(&o->used[RV_OWNER_QPS]));
	spin_unlock(&rv_owners_lock);
}
