/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who pays for what rv creates for a process (rv_account.c): the rdma
 * cgroup's handles and objects, and the per-user limits on jobs,
 * connections and QPs.
 */
#ifndef RV_ACCOUNT_H
#define RV_ACCOUNT_H

#include <linux/atomic.h>
#include <linux/cgroup_rdma.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/uidgid.h>
#include <rdma/ib_verbs.h>

/*
 * Charges of one kind (RDMACG_RESOURCE_HCA_HANDLE or _OBJECT) to one rdma
 * cgroup, for the objects of one rv object. Empty (n == 0) when nothing
 * is charged, and after the charges are returned.
 */
struct rv_rdmacg {
#ifdef CONFIG_CGROUP_RDMA
	struct rdma_cgroup *cg;
#endif
	u16 n;
	u8 type;			/* enum rdmacg_resource_type */
};

int rv_rdmacg_charge(struct rv_rdmacg *c, struct ib_device *dev,
		     enum rdmacg_resource_type type, unsigned int n);
void rv_rdmacg_uncharge(struct rv_rdmacg *c, struct ib_device *dev);

/* What one uid has made rv create, against the per-user limits. */
enum rv_owner_res {
	RV_OWNER_JOBS,
	RV_OWNER_CONNS,
	RV_OWNER_QPS,
	RV_OWNER_NRES
};

struct rv_owner {
	struct hlist_node node;		/* rv_owners, under rv_owners_lock */
	kuid_t uid;
	refcount_t ref;
	atomic_t used[RV_OWNER_NRES];
};

struct rv_owner *rv_owner_get(kuid_t uid);
void rv_owner_put(struct rv_owner *o);
int rv_owner_charge(struct rv_owner *o, enum rv_owner_res res,
		    unsigned int n);
void rv_owner_uncharge(struct rv_owner *o, enum rv_owner_res res,
		       unsigned int n);
void rv_owners_show(struct seq_file *m);

#endif /* RV_ACCOUNT_H */
