// SPDX-License-Identifier: GPL-2.0
/*
 * Attached processes: ATTACH, the per-process object and its lifetime.
 *
 * ATTACH checks its request, finds (or creates) the caller's job-device
 * and makes the process a user of it: the lowest free rv_index that fits
 * in the job's index_bits, an event ring and an MR cache. The user lives
 * until its file is released and the last write it posted completed.
 */
#include <kunit/visibility.h>
#include <linux/capability.h>
#include <linux/nsproxy.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <rdma/ib_cache.h>

#include "rv.h"
#include "rv_job.h"
#include "rv_trace.h"

/*
 * Checks that need no device; fills @req with defaults and policy applied.
 * Visible to the KUnit suite.
 */
VISIBLE_IF_KUNIT int rv_attach_parse(const struct rv_attach_params_in *in,
				     struct rv_attach_req *req)
{
	u8 mode = in->rdma_mode & RV_RDMA_MODE_MASK;
	u8 bits = RV_RDMA_MODE_MASK;

#ifndef RV_UPSTREAM
	bits |= RV_RDMA_MODE_UPSIZE_CPU;
#endif
	if (in->resv1 || in->resv2 || memchr_inv(in->resv3, 0,
						 sizeof(in->resv3)) ||
	    in->resv4)
		return -EINVAL;
	if (in->rdma_mode & ~bits)
		return -EINVAL;
	if (mode == RV_RDMA_MODE_USER)
		return -EOPNOTSUPP;
	if (mode > RV_RDMA_MODE_MAX)
		return -EINVAL;
	if (!in->dev_name[0] ||
	    !memchr(in->dev_name, 0, sizeof(in->dev_name)))
		return -EINVAL;
	if (in->num_conn > RV_MAX_NUM_CONN ||
	    in->index_bits > RV_MAX_INDEX_BITS ||
	    in->job_key_len > RV_MAX_JOB_KEY_LEN ||
	    in->cq_entries > RV_MAX_CQ_ENTRIES || in->cq_entries == 1 ||
	    (in->q_depth && (in->q_depth < RV_Q_DEPTH_MIN ||
			     in->q_depth > RV_Q_DEPTH_MAX)) ||
	    in->mr_cache_size > RV_MR_CACHE_SIZE_MAX ||
	    in->fr_page_list_len == 1)
		return -EINVAL;
	if (in->reconnect_timeout && in->hb_interval &&
	    (u64)in->reconnect_timeout * 1000 <= in->hb_interval)
		return -EINVAL;

	memcpy(req->dev_name, in->dev_name, sizeof(req->dev_name));
	memcpy(req->gid, in->loc_gid, sizeof(req->gid));
	req->key.port_num = in->port_num;
	req->key.gid_index = in->loc_gid_index;
	memcpy(req->key.job_key, in->job_key, in->job_key_len);
	req->key.job_key_len = in->job_key_len;
	req->key.service_id = in->service_id ?: rv_params.service_id;
	req->params.num_conn = in->num_conn ?: rv_params.num_conn;
	req->params.index_bits = in->index_bits;
	req->params.q_depth = in->q_depth ?: rv_params.q_depth;
	req->params.reconnect_timeout = min(in->reconnect_timeout,
					    rv_params.max_reconnect_timeout);
	req->params.hb_interval = in->hb_interval ?
		max(in->hb_interval, rv_params.min_hb_interval) : 0;
	/* The module's size is a ceiling: a process may ask for less. */
	req->mr_cache_mb = rv_params.mr_cache_size;
#ifndef RV_UPSTREAM
	if (in->rdma_mode & RV_RDMA_MODE_UPSIZE_CPU)
		req->mr_cache_mb = rv_params.mr_cache_size_gpu;
#endif
	if (in->mr_cache_size)
		req->mr_cache_mb = min(req->mr_cache_mb, in->mr_cache_size);
	req->fr_page_list_len = in->fr_page_list_len;
	req->cq_entries = in->cq_entries;
	req->loc_addr = in->loc_addr;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rv_attach_parse);

/*
 * May the caller listen on @service_id? Any uid may use the default and
 * the user range; ids in the RDMA CM's port spaces are refused to all
 * (EADDRNOTAVAIL), others need CAP_NET_BIND_SERVICE in the initial user
 * namespace (EACCES): the IB CM's ids are global to the node, not to a
 * namespace. Visible to the KUnit suite.
 */
VISIBLE_IF_KUNIT int rv_service_id_check(u64 service_id)
{
	if (rv_service_id_is_ip_cm(service_id))
		return -EADDRNOTAVAIL;
	if (service_id == rv_params.service_id ||
	    (service_id >= rv_params.user_service_id_min &&
	     service_id <= rv_params.user_service_id_max))
		return 0;
	return capable(CAP_NET_BIND_SERVICE) ? 0 : -EACCES;
}
EXPORT_SYMBOL_IF_KUNIT(rv_service_id_check);

/*
 * A RoCE GID is an address of its netdev: usable only from the netdev's
 * namespace, as the RDMA CM binds only to addresses of its caller's.
 */
static int rv_attach_check_gid_net(struct ib_device *ibdev, u32 port,
				   const struct ib_gid_attr *attr,
				   const struct net *net)
{
	struct net_device *ndev;
	int ret = 0;

	if (!rdma_protocol_roce(ibdev, port))
		return 0;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	if (IS_ERR(ndev) || !net_eq(dev_net(ndev), net))
		ret = -EADDRNOTAVAIL;
	rcu_read_unlock();
	return ret;
}

/*
 * The port must exist, be one rv can serve (rv_reg_check_port()) and be
 * ACTIVE, the GID at gid_index must be gid and, for RoCE, an address of
 * the caller's namespace; notes the GID's type and the port's largest
 * message.
 */
static int rv_attach_check_port(struct rv_device *dev,
				struct rv_attach_req *req)
{
	struct net *net = current->nsproxy->net_ns;
	struct ib_device *ibdev = dev->ib_dev;
	u32 port = req->key.port_num;
	const struct ib_gid_attr *attr;
	struct ib_port_attr pattr;
	enum ib_port_state state;
	int ret;

	if (!rdma_is_port_valid(ibdev, port))
		return -EINVAL;
	ret = rv_reg_check_port(ibdev, port);
	if (ret)
		return ret;
	ret = ib_get_cached_port_state(ibdev, port, &state);
	if (ret)
		return ret;
	if (state != IB_PORT_ACTIVE)
		return -ENETDOWN;
	ret = ib_query_port(ibdev, port, &pattr);
	if (ret)
		return ret;
	req->max_msg_sz = pattr.max_msg_sz;

	attr = rdma_get_gid_attr(ibdev, port, req->key.gid_index);
	if (IS_ERR(attr))
		return -ENOENT;
	ret = memcmp(attr->gid.raw, req->gid, sizeof(req->gid)) ? -ENOENT : 0;
	if (!ret)
		ret = rv_attach_check_gid_net(ibdev, port, attr, net);
	req->gid_type = attr->gid_type;
	rdma_put_gid_attr(attr);
	return ret;
}

static void rv_user_free(struct work_struct *work)
{
	struct rv_user *user = container_of(to_rcu_work(work), struct rv_user,
					    free_rwork);

	rv_mr_user_exit(user);
	/* Returned already if the device went (rv_job_kill()). */
	rv_rdmacg_uncharge(&user->rdmacg, user->jdev->dev->ib_dev);
	rv_ring_free(&user->ring);
	rv_job_put(user->jdev);
	mmdrop(user->mm);
	kfree(user);
}

static void rv_user_last_put(struct kref *kref)
{
	struct rv_user *user = container_of(kref, struct rv_user, kref);

	/*
	 * May run in a completion handler: free where sleeping is allowed,
	 * after a grace period, as receive completions look users up under
	 * RCU (rv_recv.c).
	 */
	queue_rcu_work(rv_wq, &user->free_rwork);
}

void rv_user_put(struct rv_user *user)
{
	kref_put(&user->kref, rv_user_last_put);
}

/*
 * The file is being released: no new event reaches the process, which
 * leaves its job. The caller then drops its connection handles and its
 * reference; writes still in flight keep the user (its MRs and ring)
 * until they complete.
 */
void rv_user_release(struct rv_user *user)
{
	trace_rv_detach(user);
	xa_erase(&user->jdev->users, user->rv_index);
	rv_job_leave(user->jdev);
}

/* ATTACH's request checked, its device found: the job to join, or ERR_PTR. */
static struct rv_job_dev *rv_attach_job(const struct rv_attach_params_in *in,
					struct rv_attach_req *req)
{
	struct rv_device *dev;
	int ret;

	ret = rv_attach_parse(in, req);
	if (!ret)
		ret = rv_service_id_check(req->key.service_id);
	if (ret)
		return ERR_PTR(ret);
	dev = rv_device_get_by_name(req->dev_name);
	if (!dev)
		return ERR_PTR(-ENODEV);
	/* As uverbs' open: a device of another namespace, in exclusive mode. */
	ret = rdma_dev_access_netns(dev->ib_dev, current->nsproxy->net_ns) ?
		0 : -EPERM;
	if (!ret)
		ret = rv_attach_check_port(dev, req);
	if (ret) {
		rv_device_put(dev);
		return ERR_PTR(ret);
	}
	return rv_job_get(dev, req);
}

/*
 * The calling process as a new user of @jdev: its rv_index reserved, its
 * ring and MR cache set up, not yet visible. Or ERR_PTR.
 */
static struct rv_user *rv_user_create(struct rv_job_dev *jdev,
				      const struct rv_attach_req *req,
				      u32 abi_version)
{
	const struct ib_device_attr *attrs;
	struct rv_user *user;
	u32 index;
	int ret;

	user = kzalloc_obj(*user, GFP_KERNEL_ACCOUNT);
	if (!user)
		return ERR_PTR(-ENOMEM);
	/* As a uverbs context: a handle of the device. */
	ret = rv_rdmacg_charge(&user->rdmacg, jdev->dev->ib_dev,
			       RDMACG_RESOURCE_HCA_HANDLE, 1);
	if (ret)
		goto err_free;
	kref_init(&user->kref);
	INIT_RCU_WORK(&user->free_rwork, rv_user_free);
	xa_init_flags(&user->conns, XA_FLAGS_ALLOC1);
	user->jdev = jdev;
	user->tgid = current->tgid;
	user->mm = current->mm;
	user->mr_cache_mb = req->mr_cache_mb;
	attrs = &jdev->dev->ib_dev->attrs;
	user->max_fmr_size =
		rv_reg_max_fmr_size(rv_reg_max_pages(attrs,
						     req->fr_page_list_len),
				    attrs->max_mr_size,
				    (u64)req->mr_cache_mb << 20);

	/* Reserve the index; the user is stored once complete. */
	ret = xa_alloc(&jdev->users, &index, NULL,
		       XA_LIMIT(0, (1U << req->params.index_bits) - 1),
		       GFP_KERNEL);
	if (ret) {
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto err_free;
	}
	user->rv_index = index;
	ret = rv_ring_init(&user->ring, req->cq_entries, abi_version);
	if (ret)
		goto err_erase;
	ret = rv_mr_user_init(user);
	if (ret)
		goto err_ring;
	return user;

err_ring:
	rv_ring_free(&user->ring);
err_erase:
	xa_erase(&jdev->users, index);
err_free:
	rv_rdmacg_uncharge(&user->rdmacg, jdev->dev->ib_dev);
	kfree(user);
	return ERR_PTR(ret);
}

/* Undo rv_user_create() of a user never published. */
static void rv_user_destroy(struct rv_user *user)
{
	rv_mr_user_exit(user);
	rv_ring_free(&user->ring);
	xa_erase(&user->jdev->users, user->rv_index);
	rv_rdmacg_uncharge(&user->rdmacg, user->jdev->dev->ib_dev);
	kfree(user);
}

/*
 * Tell the process what it got, then make the user visible to the job
 * and the file. Fails only before anything is visible.
 */
static int rv_user_publish(struct rv_file *rf, struct rv_user *user,
			   const struct rv_attach_req *req, void __user *uarg)
{
	struct rv_attach_params_out out = {
		.rv_index = user->rv_index,
		.mr_cache_size = req->mr_cache_mb,
		.q_depth = req->params.q_depth,
		.reconnect_timeout = req->params.reconnect_timeout,
		.max_fmr_size = user->max_fmr_size,
	};

	if (copy_to_user(uarg, &out, sizeof(out)))
		return -EFAULT;
	mmgrab(user->mm);
	xa_store(&user->jdev->users, user->rv_index, user, GFP_KERNEL);
	/* Readers of rf->user take no lock: publish a complete user. */
	smp_store_release(&rf->user, user);
	return 0;
}

long rv_ioctl_attach(const struct rv_ioctl_ctx *ctx)
{
	struct rv_file *rf = ctx->rf;
	struct rv_attach_params p = {};
	struct rv_attach_req req = {};
	struct rv_job_dev *jdev;
	struct rv_user *user;
	int ret, idx;

	/* The ABI 1.5 form is shorter: its fr_page_list_len and resv4 stay 0. */
	if (copy_from_user(&p, ctx->uarg, _IOC_SIZE(ctx->cmd)))
		return -EFAULT;

	/*
	 * From finding the device to the user in its job: the removal of the
	 * device waits for this (rv_remove_one()), then finds the job.
	 */
	idx = srcu_read_lock(&rv_dev_srcu);
	mutex_lock(&rf->lock);
	if (rf->user) {
		ret = -EBUSY;
		goto out_unlock;
	}
	jdev = rv_attach_job(&p.in, &req);
	if (IS_ERR(jdev)) {
		ret = PTR_ERR(jdev);
		goto out_unlock;
	}
	user = rv_user_create(jdev, &req, rf->abi_version);
	if (IS_ERR(user)) {
		ret = PTR_ERR(user);
		goto out_put_job;
	}
	ret = rv_user_publish(rf, user, &req, ctx->uarg);
	if (ret) {
		rv_user_destroy(user);
		goto out_put_job;
	}
	mutex_unlock(&rf->lock);
	srcu_read_unlock(&rv_dev_srcu, idx);
	trace_rv_attach(user);
	return 0;

out_put_job:
	rv_job_leave(jdev);
	rv_job_put(jdev);
out_unlock:
	mutex_unlock(&rf->lock);
	srcu_read_unlock(&rv_dev_srcu, idx);
	return ret;
}
