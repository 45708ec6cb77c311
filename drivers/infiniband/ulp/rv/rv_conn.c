// SPDX-License-Identifier: GPL-2.0
/*
 * Shared RC connections: the objects, their lifetime, the CONN_* ioctls
 * and the listener's handler, which finds the connection a REQ is for.
 * Each QP of a connection runs its own state machine (rv_sconn.c).
 *
 * A connection is created by the first CONN_CREATE of a process of the
 * job for a remote node; later processes of the job take a reference on
 * the same one. The first CONN_CONNECT gives it its path and starts its
 * QPs; the side with the smaller GID (or address) listens on every QP,
 * the other initiates. When the last process handle goes, the
 * connection is torn down from rv_wq.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <rdma/ib_cache.h>

#include "rv_conn.h"
#include "rv_trace.h"

static DEFINE_XARRAY_ALLOC1(rv_conn_ids);

static void rv_conn_destroy(struct work_struct *work)
{
	struct rv_conn *conn = container_of(work, struct rv_conn,
					    destroy_work);
	struct rv_job_dev *jdev = conn->jdev;
	int i;

	for (i = 0; i < conn->num_conn; i++)
		rv_sconn_close(&conn->sconn[i]);

	mutex_lock(&jdev->conn_mutex);
	list_del(&conn->list);
	/* Returned already if the device went (rv_conns_kill()). */
	rv_rdmacg_uncharge(&conn->rdmacg, jdev->dev->ib_dev);
	mutex_unlock(&jdev->conn_mutex);
	rv_owner_uncharge(jdev->owner, RV_OWNER_QPS, conn->num_conn);
	rv_owner_uncharge(jdev->owner, RV_OWNER_CONNS, 1);
	xa_erase(&rv_conn_ids, conn->id);
	if (conn->sgid_attr)
		rdma_put_gid_attr(conn->sgid_attr);
	rv_job_put(jdev);
	kfree(conn);
}

static void rv_conn_release(struct kref *kref)
{
	struct rv_conn *conn = container_of(kref, struct rv_conn, kref);

	/* May be the CM handler's reference: never tear down in place. */
	queue_work(rv_wq, &conn->destroy_work);
}

void rv_conn_put(struct rv_conn *conn)
{
	kref_put(&conn->kref, rv_conn_release);
}

/* Which connections a look-up considers. */
enum rv_conn_kind {
	RV_CONN_LOCAL,			/* by LID */
	RV_CONN_GLOBAL,			/* by GID */
	RV_CONN_ANY,			/* each by its own kind of address */
};

static bool rv_conn_matches(const struct rv_conn *conn,
			    const union ib_gid *dgid, u16 dlid,
			    enum rv_conn_kind kind)
{
	if ((kind == RV_CONN_LOCAL && conn->global) ||
	    (kind == RV_CONN_GLOBAL && !conn->global))
		return false;
	if (conn->global)
		return !memcmp(conn->dgid.raw, dgid->raw, sizeof(dgid->raw));
	return conn->dlid == dlid;
}

/*
 * The job's connection of @kind to @dgid or @dlid, with a reference; NULL
 * if there is none that is not being destroyed.
 */
static struct rv_conn *rv_conn_get_locked(struct rv_job_dev *jdev,
					  const union ib_gid *dgid, u16 dlid,
					  enum rv_conn_kind kind)
{
	struct rv_conn *conn;

	lockdep_assert_held(&jdev->conn_mutex);
	list_for_each_entry(conn, &jdev->conns, list) {
		if (rv_conn_matches(conn, dgid, dlid, kind) &&
		    kref_get_unless_zero(&conn->kref))
			return conn;
	}
	return NULL;
}

/* Where a REQ comes from: its source GID (global) or LID. */
struct rv_req_src {
	const union ib_gid *sgid;
	u16 slid;
};

/*
 * For rv_jobs_find_conn(): @jdev's connection to the source of a REQ,
 * @arg, with a reference; or NULL.
 */
static struct rv_conn *rv_conn_find_for_req(struct rv_job_dev *jdev,
					    const void *arg)
{
	const struct rv_req_src *src = arg;
	struct rv_conn *conn;

	mutex_lock(&jdev->conn_mutex);
	conn = rv_conn_get_locked(jdev, src->sgid, src->slid, RV_CONN_ANY);
	mutex_unlock(&jdev->conn_mutex);
	return conn;
}

/* A REQ: the QP it names accepts it, or it is rejected. */
static int rv_conn_req(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	const struct ib_cm_req_event_param *req = &ev->param.req_rcvd;
	struct rv_req_src src;
	struct rv_req_info pd = {};
	struct rv_conn *conn;
	int reason;

	if (rv_req_pdata_parse(ev->private_data, &pd) ||
	    req->qp_type != IB_QPT_RC) {
		reason = RV_REJ_VERSION;
		goto reject;
	}
	/* The CM turned the path around: dgid/dlid are the initiator's. */
	src.sgid = &req->primary_path->dgid;
	src.slid = be32_to_cpu(sa_path_get_dlid(req->primary_path));
	conn = rv_jobs_find_conn(id->device, req->port,
				 req->listen_id->service_id,
				 &req->primary_path->sgid, &pd,
				 rv_conn_find_for_req, &src, &reason);
	if (!conn)
		goto reject;
	if (pd.index >= conn->num_conn || pd.num_conn != conn->num_conn) {
		reason = RV_REJ_INDEX;
		goto put;
	}
	if (!conn->server) {
		reason = RV_REJ_ROLE;
		goto put;
	}
	reason = rv_sconn_req(&conn->sconn[pd.index], id, ev);
put:
	rv_conn_put(conn);
	if (!reason)
		return 0;
reject:
	trace_rv_req_reject(id->device, req->port, &pd, reason);
	rv_cm_reject(id, reason);
	return 1;	/* the CM destroys the new id */
}

/*
 * The listener's handler (rv_cm_listen()): a REQ, or an event on a CM
 * id a REQ created, which belongs to the QP that accepted it.
 */
int rv_conn_listen_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	if (ev->event == IB_CM_REQ_RECEIVED)
		return rv_conn_req(id, ev);
	return rv_sconn_cm_handler(id, ev);
}

static struct rv_conn *rv_conn_alloc(struct rv_job_dev *jdev,
				     const struct rv_conn_create_params_in *in)
{
	u8 n = jdev->params.num_conn;
	struct rv_conn *conn;
	int i, ret;

	ret = rv_owner_charge(jdev->owner, RV_OWNER_CONNS, 1);
	if (ret)
		return ERR_PTR(ret);
	ret = rv_owner_charge(jdev->owner, RV_OWNER_QPS, n);
	if (ret)
		goto err_conns;
	conn = kzalloc(struct_size(conn, sconn, n), GFP_KERNEL_ACCOUNT);
	if (!conn) {
		ret = -ENOMEM;
		goto err_qps;
	}
	/*
	 * Each QP, created now or when it connects. Its completions go to a
	 * CQ of ib_core's pool, which no process creates or owns.
	 */
	ret = rv_rdmacg_charge(&conn->rdmacg, jdev->dev->ib_dev,
			       RDMACG_RESOURCE_HCA_OBJECT, n);
	if (ret)
		goto err_free;
	kref_init(&conn->kref);
	conn->jdev = jdev;
	conn->num_conn = n;
	conn->global = in->ah.is_global;
	memcpy(conn->dgid.raw, in->ah.grh.dgid, sizeof(conn->dgid.raw));
	conn->dlid = in->ah.dlid;
	conn->rem_addr = in->rem_addr;
	if (conn->global)
		conn->server = memcmp(jdev->gid.raw, conn->dgid.raw,
				      sizeof(conn->dgid.raw)) < 0;
	else
		conn->server = jdev->loc_addr < conn->rem_addr;
	INIT_WORK(&conn->destroy_work, rv_conn_destroy);

	for (i = 0; i < n; i++) {
		ret = rv_sconn_init(&conn->sconn[i], conn, i);
		if (ret)
			goto err;
	}
	ret = xa_alloc(&rv_conn_ids, &conn->id, conn, xa_limit_32b,
		       GFP_KERNEL);
	if (ret)
		goto err;
	return conn;

err:
	while (i-- > 0)
		rv_sconn_uninit(&conn->sconn[i]);
	rv_rdmacg_uncharge(&conn->rdmacg, jdev->dev->ib_dev);
err_free:
	kfree(conn);
err_qps:
	rv_owner_uncharge(jdev->owner, RV_OWNER_QPS, n);
err_conns:
	rv_owner_uncharge(jdev->owner, RV_OWNER_CONNS, 1);
	return ERR_PTR(ret);
}

static int rv_conn_check_ah(const struct rv_job_dev *jdev,
			    const struct rv_conn_create_params_in *in)
{
	const struct ib_uverbs_ah_attr *ah = &in->ah;
	struct ib_device *ibdev = jdev->dev->ib_dev;

	/*
	 * ah->reserved and ah->grh.reserved are not checked: PSM3 fills ah
	 * by copying a struct ibv_ah_attr, whose padding sits there.
	 */
	if (in->resv1)
		return -EINVAL;
	if (ah->port_num != jdev->key.port_num || ah->is_global > 1)
		return -EINVAL;
	if (!ah->is_global)
		return rdma_protocol_roce(ibdev, ah->port_num) || !ah->dlid ?
			-EINVAL : 0;
	if (ah->grh.sgid_index != jdev->key.gid_index ||
	    !memchr_inv(ah->grh.dgid, 0, sizeof(ah->grh.dgid)) ||
	    !memcmp(ah->grh.dgid, jdev->gid.raw, sizeof(ah->grh.dgid)))
		return -EINVAL;
	return 0;
}

static bool rv_user_has_conn(struct rv_user *user, struct rv_conn *conn)
{
	struct rv_conn *c;
	unsigned long h;

	xa_for_each(&user->conns, h, c)
		if (c == conn)
			return true;
	return false;
}

long rv_ioctl_conn_create(const struct rv_ioctl_ctx *ctx)
{
	struct rv_user *user = ctx->user;
	struct rv_job_dev *jdev = user->jdev;
	struct rv_conn_create_params p;
	struct rv_conn *conn;
	union ib_gid dgid;
	u32 handle;
	int ret;

	if (rv_job_dead(jdev))
		return -ENODEV;
	if (copy_from_user(&p, ctx->uarg, sizeof(p)))
		return -EFAULT;
	ret = rv_conn_check_ah(jdev, &p.in);
	if (ret)
		return ret;
	memcpy(dgid.raw, p.in.ah.grh.dgid, sizeof(dgid.raw));

	mutex_lock(&jdev->conn_mutex);
	conn = rv_conn_get_locked(jdev, &dgid, p.in.ah.dlid,
				  p.in.ah.is_global ? RV_CONN_GLOBAL :
						      RV_CONN_LOCAL);
	if (conn && rv_user_has_conn(user, conn)) {
		ret = -EBUSY;
		goto out_put;
	}
	if (!conn) {
		conn = rv_conn_alloc(jdev, &p.in);
		if (IS_ERR(conn)) {
			ret = PTR_ERR(conn);
			goto out_unlock;
		}
		kref_get(&jdev->kref);
		list_add_tail(&conn->list, &jdev->conns);
	}
	ret = xa_alloc(&user->conns, &handle, conn, xa_limit_32b,
		       GFP_KERNEL_ACCOUNT);
	if (ret)
		goto out_put;
	mutex_unlock(&jdev->conn_mutex);

	memset(&p.out, 0, sizeof(p.out));
	p.out.handle = handle;
	p.out.conn_handle = conn->id;
	if (copy_to_user(ctx->uarg, &p.out, sizeof(p.out))) {
		xa_erase(&user->conns, handle);
		rv_conn_put(conn);
		return -EFAULT;
	}
	return 0;

out_put:
	mutex_unlock(&jdev->conn_mutex);
	rv_conn_put(conn);
	return ret;
out_unlock:
	mutex_unlock(&jdev->conn_mutex);
	return ret;
}

/*
 * The job's device is going (no ioctl of the job runs): every QP of
 * every connection fails for good now, its writes in flight complete with
 * an error status, and nothing of the connections refers to the device
 * any more. The connections themselves go with their handles.
 */
void rv_conns_kill(struct rv_job_dev *jdev)
{
	struct rv_conn *conn;
	bool found;
	int i;

	do {
		/* Not under conn_mutex: the CM's REQ handler takes it. */
		found = false;
		mutex_lock(&jdev->conn_mutex);
		list_for_each_entry(conn, &jdev->conns, list) {
			if (!conn->killed && kref_get_unless_zero(&conn->kref)) {
				conn->killed = true;
				found = true;
				break;
			}
		}
		mutex_unlock(&jdev->conn_mutex);
		if (!found)
			break;
		for (i = 0; i < conn->num_conn; i++)
			rv_sconn_stop(&conn->sconn[i], RV_SCONN_FAILED);
		mutex_lock(&jdev->conn_mutex);
		if (conn->sgid_attr)
			rdma_put_gid_attr(conn->sgid_attr);
		conn->sgid_attr = NULL;
		rv_rdmacg_uncharge(&conn->rdmacg, jdev->dev->ib_dev);
		mutex_unlock(&jdev->conn_mutex);
		rv_conn_put(conn);
	} while (found);
}

/* Only on release, when no ioctl of the file can run. */
void rv_conn_user_exit(struct rv_user *user)
{
	struct rv_conn *conn;
	unsigned long h;

	xa_for_each(&user->conns, h, conn) {
		xa_erase(&user->conns, h);
		rv_conn_put(conn);
	}
	xa_destroy(&user->conns);
}

/* The caller's connection @handle; the file's reference keeps it alive. */
static struct rv_conn *rv_user_conn(struct rv_user *user, u64 handle)
{
	if (!handle || handle > U32_MAX)
		return NULL;
	return xa_load(&user->conns, handle);
}

static int rv_check_path(const struct rv_conn *conn,
			 const struct ib_user_path_rec *path)
{
	const struct rv_job_dev *jdev = conn->jdev;

	if (memcmp(path->sgid, jdev->gid.raw, sizeof(path->sgid)))
		return -EINVAL;
	if (conn->global &&
	    memcmp(path->dgid, conn->dgid.raw, sizeof(path->dgid)))
		return -EINVAL;
	if (path->mtu < IB_MTU_256 || path->mtu > IB_MTU_4096)
		return -EINVAL;
	return 0;
}

long rv_ioctl_conn_connect(const struct rv_ioctl_ctx *ctx)
{
	struct rv_user *user = ctx->user;
	struct rv_job_dev *jdev = user->jdev;
	struct rv_conn_connect_params_in in;
	struct rv_conn *conn;
	int i, ret;

	if (copy_from_user(&in, ctx->uarg, sizeof(in)))
		return -EFAULT;
	conn = rv_user_conn(user, in.handle);
	if (!conn)
		return -EINVAL;
	if (rv_job_dead(jdev))
		return -ENODEV;
	ret = rv_check_path(conn, &in.path);
	if (ret)
		return ret;

	mutex_lock(&jdev->conn_mutex);
	if (conn->have_path) {
		ret = memcmp(&conn->upath, &in.path, sizeof(in.path)) ?
			-EEXIST : 0;
		goto out;
	}
	conn->upath = in.path;
	ret = rv_cm_path_init(conn);
	if (ret)
		goto out;
	/* Every QP first: a failure leaves the connection as it was. */
	for (i = 0; i < conn->num_conn; i++) {
		ret = rv_sconn_prepare(&conn->sconn[i]);
		if (ret)
			break;
	}
	if (ret) {
		while (i--)
			rv_sconn_unprepare(&conn->sconn[i]);
		rdma_put_gid_attr(conn->sgid_attr);
		conn->sgid_attr = NULL;
		goto out;
	}
	conn->have_path = true;
	for (i = 0; i < conn->num_conn; i++)
		rv_sconn_start(&conn->sconn[i]);
out:
	mutex_unlock(&jdev->conn_mutex);
	return ret;
}

long rv_ioctl_conn_connected(const struct rv_ioctl_ctx *ctx)
{
	struct rv_conn_connected_params_in in;
	struct rv_conn *conn;
	unsigned long flags;
	int i, ret = 1;

	if (copy_from_user(&in, ctx->uarg, sizeof(in)))
		return -EFAULT;
	conn = rv_user_conn(ctx->user, in.handle);
	if (!conn)
		return -EINVAL;
	for (i = 0; i < conn->num_conn; i++) {
		struct rv_sconn *s = &conn->sconn[i];

		spin_lock_irqsave(&s->lock, flags);
		if (s->state == RV_SCONN_FAILED)
			ret = -EIO;
		else if (ret > 0 && s->state != RV_SCONN_CONNECTED &&
			 !s->was_connected)
			ret = 0;
		spin_unlock_irqrestore(&s->lock, flags);
		if (ret < 0)
			break;
	}
	return ret;
}

long rv_ioctl_conn_get_conn_count(const struct rv_ioctl_ctx *ctx)
{
	struct rv_conn_get_conn_count_params p;
	struct rv_conn *conn;
	struct rv_sconn *s;
	unsigned long flags;
	bool failed;

	if (copy_from_user(&p, ctx->uarg, sizeof(p)))
		return -EFAULT;
	conn = rv_user_conn(ctx->user, p.in.handle);
	if (!conn || p.in.index >= conn->num_conn ||
	    memchr_inv(p.in.resv1, 0, sizeof(p.in.resv1)))
		return -EINVAL;
	s = &conn->sconn[p.in.index];
	spin_lock_irqsave(&s->lock, flags);
	failed = s->state == RV_SCONN_FAILED;
	memset(&p.out, 0, sizeof(p.out));
	p.out.count = s->conn_count;
	spin_unlock_irqrestore(&s->lock, flags);
	if (failed)
		return -EIO;
	if (copy_to_user(ctx->uarg, &p.out, sizeof(p.out)))
		return -EFAULT;
	return 0;
}

#define RV_ST(f) offsetof(struct rv_conn_get_stats_params_out, f)

/* Counters that add up in an aggregate; the rest are maxima or flags. */
static const u16 rv_stats_sum_u32[] = {
	RV_ST(req_error), RV_ST(req_recv), RV_ST(rep_error), RV_ST(rep_recv),
	RV_ST(rtu_recv), RV_ST(established), RV_ST(dreq_error),
	RV_ST(dreq_recv), RV_ST(drep_recv), RV_ST(timewait), RV_ST(mra_recv),
	RV_ST(rej_recv), RV_ST(lap_error), RV_ST(lap_recv), RV_ST(apr_recv),
	RV_ST(unexp_event), RV_ST(req_sent), RV_ST(rep_sent), RV_ST(rtu_sent),
	RV_ST(rej_sent), RV_ST(dreq_sent), RV_ST(drep_sent), RV_ST(resolve),
	RV_ST(resolve_fail), RV_ST(conn_recovery), RV_ST(reresolve),
	RV_ST(reresolve_fail), RV_ST(outstand_send_write), RV_ST(recv_drop),
	RV_ST(num_conn),
};

static const u16 rv_stats_sum_u64[] = {
	RV_ST(wait_time), RV_ST(resolve_time), RV_ST(connect_time),
	RV_ST(connected_time), RV_ST(rewait_time), RV_ST(reresolve_time),
	RV_ST(reconnect_time), RV_ST(post_write), RV_ST(post_write_fail),
	RV_ST(post_write_bytes), RV_ST(send_write_cqe),
	RV_ST(send_write_cqe_fail), RV_ST(recv_write_cqe),
	RV_ST(recv_write_bytes), RV_ST(recv_cqe_fail), RV_ST(post_hb),
	RV_ST(post_hb_fail), RV_ST(send_hb_cqe), RV_ST(send_hb_cqe_fail),
	RV_ST(recv_hb_cqe),
};

static const u16 rv_stats_max_u64[] = {
	RV_ST(max_rewait_time), RV_ST(max_reresolve_time),
	RV_ST(max_reconnect_time),
};

/*
 * Every byte of the statistics is in a table above or one of the fields
 * rv_stats_add() and rv_sconn_stats() handle apart: a field added to the
 * uAPI struct but to no table does not build.
 */
static_assert(ARRAY_SIZE(rv_stats_sum_u32) * sizeof(u32) +
	      (ARRAY_SIZE(rv_stats_sum_u64) + ARRAY_SIZE(rv_stats_max_u64)) *
	      sizeof(u64) +
	      sizeof_field(struct rv_conn_get_stats_params_out, index) +
	      sizeof_field(struct rv_conn_get_stats_params_out, flags) +
	      sizeof_field(struct rv_conn_get_stats_params_out, resv1) +
	      sizeof_field(struct rv_conn_get_stats_params_out, resv2) ==
	      sizeof(struct rv_conn_get_stats_params_out));

static void rv_stats_add(struct rv_conn_get_stats_params_out *sum,
			 const struct rv_conn_get_stats_params_out *one)
{
	const u8 *src = (const u8 *)one;
	u8 *dst = (u8 *)sum;
	int i;

	for (i = 0; i < ARRAY_SIZE(rv_stats_sum_u32); i++)
		*(u32 *)(dst + rv_stats_sum_u32[i]) +=
			*(const u32 *)(src + rv_stats_sum_u32[i]);
	for (i = 0; i < ARRAY_SIZE(rv_stats_sum_u64); i++)
		*(u64 *)(dst + rv_stats_sum_u64[i]) +=
			*(const u64 *)(src + rv_stats_sum_u64[i]);
	for (i = 0; i < ARRAY_SIZE(rv_stats_max_u64); i++) {
		u64 *d = (u64 *)(dst + rv_stats_max_u64[i]);

		*d = max(*d, *(const u64 *)(src + rv_stats_max_u64[i]));
	}
	sum->flags |= one->flags;
}

/*
 * One QP's statistics, as of now: under s->lock alone, which every
 * counter's writer holds (rv_sconn.c), so not behind a state machine step.
 */
static void rv_sconn_stats(struct rv_sconn *s,
			   struct rv_conn_get_stats_params_out *out)
{
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	*out = s->stats;
	out->outstand_send_write = s->outstanding;
	out->flags = (s->conn->server ? RV_CONN_STAT_FLAG_SERVER :
					RV_CONN_STAT_FLAG_CLIENT) |
		     (s->was_connected ? RV_CONN_STAT_FLAG_WAS_CONNECTED : 0);
	if (s->state == RV_SCONN_CONNECTED)
		out->connected_time += ktime_us_delta(ktime_get(),
						      s->t_connected);
	spin_unlock_irqrestore(&s->lock, flags);
	out->index = s->index;
	out->num_conn = 1;
	out->resv1 = 0;
	out->resv2 = 0;
}

static void rv_conn_stats(struct rv_conn *conn,
			  struct rv_conn_get_stats_params_out *sum)
{
	struct rv_conn_get_stats_params_out one;
	int i;

	for (i = 0; i < conn->num_conn; i++) {
		rv_sconn_stats(&conn->sconn[i], &one);
		rv_stats_add(sum, &one);
	}
}

long rv_ioctl_conn_get_stats(const struct rv_ioctl_ctx *ctx)
{
	struct rv_conn_get_stats_params p;
	struct rv_conn_get_stats_params_out out = {};
	struct rv_user *user = ctx->user;
	struct rv_conn *conn;
	unsigned long h;
	u8 index;

	if (copy_from_user(&p, ctx->uarg, sizeof(p)))
		return -EFAULT;
	if (memchr_inv(p.in.resv1, 0, sizeof(p.in.resv1)))
		return -EINVAL;
	index = p.in.index;
	if (!p.in.handle) {
		xa_for_each(&user->conns, h, conn)
			rv_conn_stats(conn, &out);
	} else {
		conn = rv_user_conn(user, p.in.handle);
		if (!conn)
			return -EINVAL;
		if (index == RV_CONN_STATS_AGGREGATE)
			rv_conn_stats(conn, &out);
		else if (index < conn->num_conn)
			rv_sconn_stats(&conn->sconn[index], &out);
		else
			return -EINVAL;
	}
	out.index = index;
	if (copy_to_user(ctx->uarg, &out, sizeof(out)))
		return -EFAULT;
	return 0;
}
