// SPDX-License-Identifier: GPL-2.0
/*
 * Fast registration of kernel MRs over a process's memory, as in-tree
 * ULPs register memory on any verbs device (nvme-rdma, iSER, RDS): the
 * RDMA core's umem pins the range and charges it to RLIMIT_MEMLOCK, then a
 * fast-registration MR of the job's PD (ib_alloc_mr(), ib_map_mr_sg()) is
 * made valid by an IB_WR_REG_MR work request. No call here reaches a
 * driver's reg_user_mr, which some drivers implement for uverbs only.
 *
 * Where the REG_MR work requests go: a registration QP per job-device, an
 * RC QP of the job's PD connected to itself and used for nothing else.
 * - A REG_MR must be posted on a QP of the MR's PD, and the MR then
 *   serves every QP of the PD: the job's connections and the peers'
 *   writes to its rkey alike.
 * - REG_MEM does not belong to a connection, and may come before any
 *   exists or while every one is recovering: a connection's QP may be in
 *   ERR, or gone, when the process registers.
 * - A failed REG_MR moves its QP to ERR. On a QP of its own that fails
 *   only the registration that caused it; on a connection's QP it would
 *   break the connection and every write in flight on it.
 * - UD QPs do not take REG_MR on some devices (mlx5), and an RC QP
 *   reaches RTS only with a peer: itself. Its address is the port's own
 *   (the GID ATTACH checked, or the port's LID on InfiniBand), resolved
 *   here as kernel callers of ib_modify_qp() must. It never sends a
 *   packet: REG_MR is executed by the local device.
 * One REG_MR is in flight at a time, under the QP's mutex, and REG_MEM
 * waits for its completion, so that the lkey and rkey are valid when the
 * ioctl returns. Pinning, which is most of a registration's cost, runs
 * before and outside the mutex. A failed completion marks the QP broken;
 * the next registration resets it (RESET, INIT, RTR, RTS) first.
 *
 * The MR's iova is the process's virtual address of the range, since PSM3
 * addresses its writes and its peers' with it: ib_map_mr_sg() sets the
 * DMA address of the first page plus the offset, which has the same
 * offset within a page, and the iova and length are then set to the
 * range's, as xprtrdma sets its own iova bits before posting.
 *
 * Sizes: each MR is allocated for the pages of its range, with PAGE_SIZE
 * pages. A job-device's largest MR (max_fmr_size) is one page less than
 * its page list, so that a range of that length fits whatever its offset
 * within a page (rv_reg_max_fmr_size()).
 */
#include <kunit/visibility.h>
#include <linux/netdevice.h>
/* After netdevice.h: Linux 6.1's needs bool and gfp_t declared. */
#include <linux/fault-inject.h>
#include <linux/pagemap.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "rv.h"

/* Its QP's room in a pool CQ: one send and one receive queue entry. */
#define RV_REG_CQE 2

/* Fault injection (debugfs rv/fail_reg_*), on kernels built for it. */
enum rv_reg_fault {
	RV_REG_FAIL_ALLOC_MR,
	RV_REG_FAIL_POST,
	RV_REG_FAIL_WC,
	RV_REG_FAIL_NUM
};

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
static struct fault_attr rv_reg_faults[RV_REG_FAIL_NUM] = {
	[0 ... RV_REG_FAIL_NUM - 1] = FAULT_ATTR_INITIALIZER,
};

static const char * const rv_reg_fault_names[RV_REG_FAIL_NUM] = {
	[RV_REG_FAIL_ALLOC_MR] = "fail_reg_alloc_mr",
	[RV_REG_FAIL_POST] = "fail_reg_post",
	[RV_REG_FAIL_WC] = "fail_reg_wc",
};
#endif

static bool rv_reg_should_fail(enum rv_reg_fault f)
{
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	return should_fail(&rv_reg_faults[f], 1);
#else
	return false;
#endif
}

/*
 * Can rv serve @port of @ibdev? 0, or the errno ATTACH answers, with one
 * line in the kernel log that names what is missing. Decided from the
 * port's protocol and the device's attributes only.
 */
int rv_reg_check_port(struct ib_device *ibdev, u32 port)
{
	const char *why;
	int ret;

	if (rdma_protocol_iwarp(ibdev, port)) {
		why = "iWARP has no RDMA WRITE with immediate";
		ret = -EPROTONOSUPPORT;
	} else if (!rdma_ib_or_roce(ibdev, port)) {
		why = "no RC transport";
		ret = -ESOCKTNOSUPPORT;
	} else if (!rv_reg_max_pages(&ibdev->attrs, 0)) {
		why = "no memory management extensions (fast registration)";
		ret = -EOPNOTSUPP;
	} else {
		return 0;
	}
	ibdev_warn_ratelimited(ibdev, "rv: port %u refused: %s\n", port, why);
	return ret;
}

/**
 * rv_reg_max_pages - pages in a fast registration of a job-device
 * @attrs: the device's attributes
 * @fr_page_list_len: what ATTACH asked for, 0 for the device's (never 1)
 *
 * Return: the smaller of @fr_page_list_len and the device's page list
 * length; 0 if the device has no fast registration, or a page list below
 * 2 pages.
 */
u32 rv_reg_max_pages(const struct ib_device_attr *attrs, u32 fr_page_list_len)
{
	u32 dev = attrs->max_fast_reg_page_list_len;

	if (!(attrs->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
	    dev < 2)
		return 0;
	return fr_page_list_len ? min(fr_page_list_len, dev) : dev;
}
EXPORT_SYMBOL_IF_KUNIT(rv_reg_max_pages);

/**
 * rv_reg_max_fmr_size - the largest MR of a process, in bytes
 * @max_pages: from rv_reg_max_pages()
 * @max_mr_size: the device's attrs.max_mr_size; 0: it gives none
 * @cache_bytes: the process's MR cache size
 *
 * Any range of this length spans at most @max_pages pages, whatever its
 * offset within a page. 0 if @max_pages is below 2.
 */
u64 rv_reg_max_fmr_size(u32 max_pages, u64 max_mr_size, u64 cache_bytes)
{
	u64 size;

	if (max_pages < 2)
		return 0;
	size = (u64)(max_pages - 1) << PAGE_SHIFT;
	if (max_mr_size)
		size = min(size, max_mr_size);
	return min(size, cache_bytes);
}
EXPORT_SYMBOL_IF_KUNIT(rv_reg_max_fmr_size);

/* Pages that [@addr, @addr + @len) touches; @len > 0, no wrap. */
u64 rv_reg_npages(u64 addr, u64 len)
{
	return ((addr + len - 1) >> PAGE_SHIFT) - (addr >> PAGE_SHIFT) + 1;
}
EXPORT_SYMBOL_IF_KUNIT(rv_reg_npages);

static void rv_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rv_reg_qp *reg = container_of(wc->wr_cqe, struct rv_reg_qp,
					     cqe);

	reg->status = wc->status;
	complete(&reg->done);
}

/* The port's own address, as a resolved AV of a kernel QP. */
static int rv_reg_self_av(struct rv_job_dev *jdev,
			  const struct ib_port_attr *pattr,
			  struct rdma_ah_attr *ah)
{
	struct ib_device *ibdev = jdev->dev->ib_dev;
	u32 port = jdev->key.port_num;
	const struct ib_gid_attr *gattr;
	struct net_device *ndev;
	int ret = 0;

	ah->type = rdma_ah_find_type(ibdev, port);
	rdma_ah_set_port_num(ah, port);
	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE) {
		rdma_ah_set_dlid(ah, pattr->lid);
		return 0;
	}
	gattr = rdma_get_gid_attr(ibdev, port, jdev->key.gid_index);
	if (IS_ERR(gattr))
		return PTR_ERR(gattr);
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(gattr);
	if (IS_ERR(ndev))
		ret = PTR_ERR(ndev);
	else
		memcpy(ah->roce.dmac, ndev->dev_addr, ETH_ALEN);
	rcu_read_unlock();
	rdma_put_gid_attr(gattr);
	rdma_ah_set_grh(ah, &jdev->gid, 0, jdev->key.gid_index, 1, 0);
	return ret;
}

/* (Re)connect the registration QP to itself, from any state to RTS. */
static int rv_reg_qp_connect(struct rv_job_dev *jdev)
{
	struct ib_device *ibdev = jdev->dev->ib_dev;
	struct ib_qp *qp = jdev->reg.qp;
	struct ib_port_attr pattr;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	int ret;

	ret = ib_query_port(ibdev, jdev->key.port_num, &pattr);
	if (ret)
		return ret;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = jdev->key.port_num;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = pattr.active_mtu;
	attr.dest_qp_num = qp->qp_num;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	ret = rv_reg_self_av(jdev, &pattr, &attr.ah_attr);
	if (ret)
		return ret;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* The job-device's registration QP, in RTS, with room in a pool CQ. */
int rv_reg_qp_init(struct rv_job_dev *jdev)
{
	struct rv_reg_qp *reg = &jdev->reg;
	struct ib_qp_init_attr init = {
		.cap = {
			.max_send_wr = 1,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = jdev->key.port_num,
	};
	int ret;

	mutex_init(&reg->mutex);
	init_completion(&reg->done);
	reg->cqe.done = rv_reg_done;
	reg->cq = ib_cq_pool_get(jdev->dev->ib_dev, RV_REG_CQE, -1,
				 IB_POLL_SOFTIRQ);
	if (IS_ERR(reg->cq)) {
		ret = PTR_ERR(reg->cq);
		reg->cq = NULL;
		goto err_mutex;
	}
	init.send_cq = reg->cq;
	init.recv_cq = reg->cq;
	reg->qp = ib_create_qp(jdev->pd, &init);
	if (IS_ERR(reg->qp)) {
		ret = PTR_ERR(reg->qp);
		reg->qp = NULL;
		ib_cq_pool_put(reg->cq, RV_REG_CQE);
		reg->cq = NULL;
		goto err_mutex;
	}
	ret = rv_reg_qp_connect(jdev);
	if (ret)
		rv_reg_qp_destroy(jdev);
	return ret;

err_mutex:
	mutex_destroy(&reg->mutex);
	return ret;
}

/* Once no registration can be running (the job is released or dead). */
void rv_reg_qp_destroy(struct rv_job_dev *jdev)
{
	struct rv_reg_qp *reg = &jdev->reg;

	if (!reg->qp)
		return;
	ib_destroy_qp(reg->qp);
	ib_cq_pool_put(reg->cq, RV_REG_CQE);
	reg->qp = NULL;
	reg->cq = NULL;
	mutex_destroy(&reg->mutex);
}

/* Make @mr valid with @access: REG_MR on the registration QP, waited for. */
static int rv_reg_post(struct rv_job_dev *jdev, struct ib_mr *mr, int access)
{
	struct rv_reg_qp *reg = &jdev->reg;
	struct ib_reg_wr wr = {
		.wr = {
			.opcode = IB_WR_REG_MR,
			.wr_cqe = &reg->cqe,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = mr,
		.access = access,
	};
	int ret;

	mutex_lock(&reg->mutex);
	if (reg->broken) {
		ret = rv_reg_qp_connect(jdev);
		if (ret)
			goto out;
		reg->broken = false;
	}
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	wr.key = mr->rkey;
	/* An injected failed completion: a key of another MR's index. */
	if (rv_reg_should_fail(RV_REG_FAIL_WC))
		wr.key ^= 0x100;
	reinit_completion(&reg->done);
	if (rv_reg_should_fail(RV_REG_FAIL_POST))
		ret = -EIO;
	else
		ret = ib_post_send(reg->qp, &wr.wr, NULL);
	if (ret) {
		ibdev_warn_ratelimited(jdev->dev->ib_dev,
				       "rv: posting a registration failed: %d\n",
				       ret);
		ret = -EIO;
		goto out;
	}
	wait_for_completion(&reg->done);
	if (reg->status != IB_WC_SUCCESS) {
		ibdev_warn_ratelimited(jdev->dev->ib_dev,
				       "rv: registration failed: %s\n",
				       ib_wc_status_msg(reg->status));
		reg->broken = true;
		ret = -EIO;
	}
out:
	mutex_unlock(&reg->mutex);
	return ret;
}

/* Undo rv_reg_user(): deregister the MR, then unpin. */
void rv_reg_user_put(struct rv_reg_mr *r)
{
	struct ib_device *ibdev = r->mr->device;

	ib_dereg_mr(r->mr);
	rv_rdmacg_uncharge(&r->rdmacg, ibdev);
	ib_umem_release(r->umem);
	r->mr = NULL;
	r->umem = NULL;
}

/**
 * rv_reg_user - pin and register a range of the calling process
 * @jdev: the job-device, whose PD the MR is in
 * @addr: start of the range, in the calling process
 * @len: its length, at most the process's max_fmr_size
 * @access: IB_ACCESS_* of the MR
 * @r: the pinned pages and the MR, on success
 *
 * Return: 0, or: %EAGAIN past the rdma cgroup's objects; an error of
 * pinning (%EFAULT for memory not mapped or not writable, %ENOMEM past
 * RLIMIT_MEMLOCK); an error of ib_alloc_mr() (%ENOMEM); %EIO if the
 * device could not register the pages (ib_map_mr_sg(), the post or its
 * completion failed).
 */
int rv_reg_user(struct rv_job_dev *jdev, u64 addr, u64 len, int access,
		struct rv_reg_mr *r)
{
	struct ib_device *ibdev = jdev->dev->ib_dev;
	unsigned int offset;
	struct sg_table *sgt;
	int n, ret;

	ret = rv_rdmacg_charge(&r->rdmacg, ibdev, RDMACG_RESOURCE_HCA_OBJECT,
			       1);
	if (ret)
		return ret;
	r->umem = ib_umem_get_va(ibdev, addr, len, access);
	if (IS_ERR(r->umem)) {
		rv_rdmacg_uncharge(&r->rdmacg, ibdev);
		return PTR_ERR(r->umem);
	}
	if (rv_reg_should_fail(RV_REG_FAIL_ALLOC_MR))
		r->mr = ERR_PTR(-ENOMEM);
	else
		r->mr = ib_alloc_mr(jdev->pd, IB_MR_TYPE_MEM_REG,
				    ib_umem_num_pages(r->umem));
	if (IS_ERR(r->mr)) {
		ret = PTR_ERR(r->mr);
		goto err_umem;
	}
	sgt = &r->umem->sgt_append.sgt;
	offset = ib_umem_offset(r->umem);
	n = ib_map_mr_sg(r->mr, sgt->sgl, sgt->nents, &offset, PAGE_SIZE);
	if (n != sgt->nents) {
		ret = -EIO;
		goto err_mr;
	}
	r->mr->iova = addr;
	r->mr->length = len;
	ret = rv_reg_post(jdev, r->mr, access);
	if (ret)
		goto err_mr;
	return 0;

err_mr:
	rv_reg_user_put(r);
	return ret;
err_umem:
	ib_umem_release(r->umem);
	r->umem = NULL;
	rv_rdmacg_uncharge(&r->rdmacg, ibdev);
	return ret;
}

void rv_reg_debugfs_init(struct dentry *root)
{
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	int i;

	for (i = 0; i < RV_REG_FAIL_NUM; i++)
		fault_create_debugfs_attr(rv_reg_fault_names[i], root,
					  &rv_reg_faults[i]);
#endif
}
