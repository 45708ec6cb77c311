/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fast registration of kernel MRs over a process's memory (rv_reg.c): the
 * device checks ATTACH makes, the size arithmetic, the job's registration
 * QP and the pinning and registration of one range.
 */
#ifndef RV_REG_H
#define RV_REG_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "rv_account.h"

struct rv_job_dev;
struct dentry;

/* The registration QP of a job-device: one REG_MR in flight at a time. */
struct rv_reg_qp {
	struct mutex mutex;		/* a registration, a reset */
	struct ib_cq *cq;		/* of ib_core's pool, shared */
	struct ib_qp *qp;
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;	/* of the last completion */
	bool broken;			/* in ERR: reset before the next post */
};

/* A range of a process's memory, pinned and registered. */
struct rv_reg_mr {
	struct ib_umem *umem;
	struct ib_mr *mr;
	struct rv_rdmacg rdmacg;	/* the MR, an rdma cgroup object */
};

int rv_reg_check_port(struct ib_device *ibdev, u32 port);
u32 rv_reg_max_pages(const struct ib_device_attr *attrs, u32 fr_page_list_len);
u64 rv_reg_max_fmr_size(u32 max_pages, u64 max_mr_size, u64 cache_bytes);
u64 rv_reg_npages(u64 addr, u64 len);

int rv_reg_qp_init(struct rv_job_dev *jdev);
void rv_reg_qp_destroy(struct rv_job_dev *jdev);

int rv_reg_user(struct rv_job_dev *jdev, u64 addr, u64 len, int access,
		struct rv_reg_mr *r);
void rv_reg_user_put(struct rv_reg_mr *r);

void rv_reg_debugfs_init(struct dentry *root);

#endif /* RV_REG_H */
