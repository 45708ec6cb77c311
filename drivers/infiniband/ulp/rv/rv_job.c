// SPDX-License-Identifier: GPL-2.0
/*
 * Jobs and ATTACH.
 *
 * The processes of one job on one device port share a struct rv_job_dev,
 * found by (device, port, GID index, caller's euid, job key, service id):
 * the first attach creates it with a kernel PD, later ones join it if they
 * agree on its parameters. Each attached process gets the lowest free
 * rv_index that fits in the job's index_bits.
 */
#include <kunit/visibility.h>
#include <linux/cred.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <rdma/ib_cache.h>

#include "rv_conn.h"
#include "rv_job.h"
#include "rv_trace.h"

/* See the locking order in rv.h. */
DEFINE_SRCU(rv_dev_srcu);

static LIST_HEAD(rv_jobs);		/* jobs with members, found by key */
static LIST_HEAD(rv_all_jobs);		/* every job-device not yet released */
static DEFINE_MUTEX(rv_jobs_lock);
static u32 rv_next_job_id;		/* under rv_jobs_lock */

/* Called with rv_jobs_lock held (kref_put_mutex); drops it. */
static void rv_job_release(struct kref *kref)
{
	struct rv_job_dev *jdev = container_of(kref, struct rv_job_dev, kref);

	if (!list_empty(&jdev->list))
		list_del(&jdev->list);
	list_del(&jdev->all);
	mutex_unlock(&rv_jobs_lock);

	/* Outside rv_jobs_lock: this waits for the CM's REQ handlers. */
	rv_cm_unlisten(jdev);
	WARN_ON(!xa_empty(&jdev->users));
	WARN_ON(!list_empty(&jdev->conns));
	xa_destroy(&jdev->users);
	mutex_destroy(&jdev->conn_mutex);
	if (jdev->pd)
		ib_dealloc_pd(jdev->pd);
	atomic_dec(&jdev->dev->jobs);
	rv_device_put(jdev->dev);
	kfree(jdev);
}

void rv_job_put(struct rv_job_dev *jdev)
{
	kref_put_mutex(&jdev->kref, rv_job_release, &rv_jobs_lock);
}

/*
 * A process leaves the job (or fails to join it). When the last one has
 * left, the job-device leaves the list although connections and writes
 * in flight may keep it a while: a new attach with the same key starts a
 * new job, and inbound REQs find that one.
 */
static void rv_job_leave(struct rv_job_dev *jdev)
{
	mutex_lock(&rv_jobs_lock);
	if (!--jdev->members)
		list_del_init(&jdev->list);
	mutex_unlock(&rv_jobs_lock);
}

/* Is @jdev's key for @port, @service_id and this job key? */
static bool rv_job_key_matches(const struct rv_job_dev *jdev, u32 port,
			       u64 service_id, const u8 *job_key,
			       u8 job_key_len)
{
	const struct rv_job_key *k = &jdev->key;

	return k->port_num == port && k->service_id == service_id &&
	       k->job_key_len == job_key_len &&
	       !memcmp(k->job_key, job_key, job_key_len);
}

static bool rv_job_matches(const struct rv_job_dev *jdev,
			   const struct rv_device *dev,
			   const struct rv_job_key *key, kuid_t uid)
{
	return jdev->dev == dev && uid_eq(jdev->uid, uid) &&
	       jdev->key.gid_index == key->gid_index &&
	       rv_job_key_matches(jdev, key->port_num, key->service_id,
				  key->job_key, key->job_key_len);
}

static bool rv_job_agrees(const struct rv_job_params *a,
			  const struct rv_job_params *b)
{
	return a->num_conn == b->num_conn && a->index_bits == b->index_bits &&
	       a->q_depth == b->q_depth &&
	       a->reconnect_timeout == b->reconnect_timeout &&
	       a->hb_interval == b->hb_interval;
}

/*
 * Find the caller's job-device or create it. Takes over the reference on
 * @dev. Returns the job-device with a reference held, or ERR_PTR.
 */
static struct rv_job_dev *rv_job_get(struct rv_device *dev,
				     const struct rv_attach_req *req)
{
	kuid_t uid = current_euid();
	struct rv_job_dev *jdev;
	struct ib_pd *pd;
	int ret;

	mutex_lock(&rv_jobs_lock);
	list_for_each_entry(jdev, &rv_jobs, list) {
		if (!rv_job_matches(jdev, dev, &req->key, uid))
			continue;
		/* Under rv_jobs_lock a listed job holds a reference. */
		if (rv_job_agrees(&jdev->params, &req->params)) {
			kref_get(&jdev->kref);
			jdev->members++;
		} else {
			jdev = ERR_PTR(-EBUSY);
		}
		mutex_unlock(&rv_jobs_lock);
		rv_device_put(dev);
		return jdev;
	}

	jdev = kzalloc(sizeof(*jdev), GFP_KERNEL);
	if (!jdev) {
		jdev = ERR_PTR(-ENOMEM);
		goto out_put_dev;
	}
	pd = ib_alloc_pd(dev->ib_dev, 0);
	if (IS_ERR(pd)) {
		kfree(jdev);
		jdev = ERR_CAST(pd);
		goto out_put_dev;
	}
	kref_init(&jdev->kref);
	jdev->id = ++rv_next_job_id;
	jdev->members = 1;
	jdev->dev = dev;
	strscpy(jdev->dev_name, req->dev_name, sizeof(jdev->dev_name));
	jdev->pd = pd;
	jdev->uid = uid;
	jdev->key = req->key;
	jdev->params = req->params;
	memcpy(jdev->gid.raw, req->gid, sizeof(jdev->gid.raw));
	jdev->gid_type = req->gid_type;
	jdev->loc_addr = req->loc_addr;
	xa_init_flags(&jdev->users, XA_FLAGS_ALLOC);
	mutex_init(&jdev->conn_mutex);
	INIT_LIST_HEAD(&jdev->conns);
	ret = rv_cm_listen(jdev);
	if (ret) {
		mutex_destroy(&jdev->conn_mutex);
		ib_dealloc_pd(pd);
		kfree(jdev);
		jdev = ERR_PTR(ret);
		goto out_put_dev;
	}
	list_add_tail(&jdev->list, &rv_jobs);
	list_add_tail(&jdev->all, &rv_all_jobs);
	atomic_inc(&dev->jobs);
	mutex_unlock(&rv_jobs_lock);
	return jdev;

out_put_dev:
	mutex_unlock(&rv_jobs_lock);
	rv_device_put(dev);
	return jdev;
}

/*
 * The device of @jdev is going away: free every verbs object of the job
 * now, once no ioctl that may not have seen it dead is running. Its
 * connections fail for good (their writes in flight complete with an
 * error status), its processes' MRs are deregistered, and what is left
 * is a job-device without a device: its processes get ENODEV (EIO from
 * POST and the connection ioctls) until they close.
 */
static void rv_job_kill(struct rv_job_dev *jdev)
{
	struct rv_user *user;
	unsigned long index;

	mutex_lock(&rv_jobs_lock);
	WRITE_ONCE(jdev->dead, true);
	if (!list_empty(&jdev->list))
		list_del_init(&jdev->list);
	mutex_unlock(&rv_jobs_lock);
	/* Every later ioctl of the job sees it dead and keeps off. */
	synchronize_srcu(&rv_dev_srcu);

	rv_conns_kill(jdev);
	/* Teardown of dropped connections and frees of finished users. */
	flush_workqueue(rv_wq);

	xa_for_each(&jdev->users, index, user) {
		if (!kref_get_unless_zero(&user->kref))
			continue;
		rv_mr_user_flush(user);
		rv_user_put(user);
	}
	rv_cm_unlisten(jdev);
	jdev->listen_id = NULL;
	ib_dealloc_pd(jdev->pd);
	jdev->pd = NULL;
}

/*
 * For debugfs: @fn runs for each job-device not yet released, under
 * rv_jobs_lock (a listed job-device cannot be released meanwhile).
 */
void rv_jobs_for_each(void (*fn)(struct rv_job_dev *jdev, void *arg),
		      void *arg)
{
	struct rv_job_dev *jdev;

	mutex_lock(&rv_jobs_lock);
	list_for_each_entry(jdev, &rv_all_jobs, all)
		fn(jdev, arg);
	mutex_unlock(&rv_jobs_lock);
}

/* From the ib_client remove callback: every job on @dev loses it. */
void rv_jobs_remove_device(struct rv_device *dev)
{
	struct rv_job_dev *jdev;
	bool found;

	do {
		found = false;
		mutex_lock(&rv_jobs_lock);
		list_for_each_entry(jdev, &rv_all_jobs, all) {
			if (jdev->dev == dev && !jdev->dead &&
			    kref_get_unless_zero(&jdev->kref)) {
				found = true;
				break;
			}
		}
		mutex_unlock(&rv_jobs_lock);
		if (found) {
			rv_job_kill(jdev);
			rv_job_put(jdev);
		}
	} while (found);
	/* Jobs whose last reference went meanwhile are released there. */
	flush_workqueue(rv_wq);
}

/**
 * rv_job_conn_for_req - the connection an inbound CM REQ is for
 * @ibdev: device the REQ arrived on
 * @port: and its port
 * @service_id: the listener's service id
 * @job_key: job key of the REQ
 * @job_key_len: its length
 * @uid: uid of the REQ, in the initial user namespace
 * @sgid: source GID of the REQ (global connections)
 * @slid: source LID of the REQ (others)
 * @reason: set when NULL is returned: RV_REJ_UID if the job exists only
 *	for another uid, else RV_REJ_RETRY (not attached or not created yet)
 *
 * Return: the connection with a reference held, or NULL.
 */
struct rv_conn *rv_job_conn_for_req(struct ib_device *ibdev, u32 port,
				    __be64 service_id, const u8 *job_key,
				    u8 job_key_len, u32 uid,
				    const union ib_gid *sgid, u16 slid,
				    int *reason)
{
	struct rv_conn *conn = NULL;
	struct rv_job_dev *jdev;

	*reason = RV_REJ_RETRY;
	mutex_lock(&rv_jobs_lock);
	list_for_each_entry(jdev, &rv_jobs, list) {
		if (jdev->dev->ib_dev != ibdev ||
		    !rv_job_key_matches(jdev, port, be64_to_cpu(service_id),
					job_key, job_key_len))
			continue;
		if (from_kuid_munged(&init_user_ns, jdev->uid) != uid) {
			*reason = RV_REJ_UID;
			continue;
		}
		conn = rv_conn_find_for_req(jdev, sgid, slid);
		if (conn)
			break;
		*reason = RV_REJ_RETRY;
	}
	mutex_unlock(&rv_jobs_lock);
	return conn;
}

/*
 * Checks that need no device; fills @req with defaults and policy applied.
 * Visible to the KUnit suite.
 */
VISIBLE_IF_KUNIT int rv_attach_parse(const struct rv_attach_params_in *in,
				     bool r5, struct rv_attach_req *req)
{
	u8 mode = in->rdma_mode & RV_RDMA_MODE_MASK;

	if (in->resv1 || in->resv2 || memchr_inv(in->resv3, 0,
						 sizeof(in->resv3)) ||
	    (!r5 && in->resv4))
		return -EINVAL;
	if (in->rdma_mode & ~(RV_RDMA_MODE_MASK | RV_RDMA_MODE_UPSIZE_CPU))
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
	    in->mr_cache_size > RV_MR_CACHE_SIZE_MAX)
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
	if (in->mr_cache_size)
		req->mr_cache_mb = in->mr_cache_size;
	else if (in->rdma_mode & RV_RDMA_MODE_UPSIZE_CPU)
		req->mr_cache_mb = rv_params.mr_cache_size_gpu;
	else
		req->mr_cache_mb = rv_params.mr_cache_size;
	req->cq_entries = in->cq_entries;
	req->loc_addr = in->loc_addr;
	return 0;
}

/*
 * The port must exist and be ACTIVE, the GID at gid_index must be gid;
 * notes the GID's type.
 */
static int rv_attach_check_port(struct rv_device *dev,
				struct rv_attach_req *req)
{
	struct ib_device *ibdev = dev->ib_dev;
	const struct ib_gid_attr *attr;
	enum ib_port_state state;
	int ret;

	if (!rdma_is_port_valid(ibdev, req->key.port_num))
		return -EINVAL;
	ret = ib_get_cached_port_state(ibdev, req->key.port_num, &state);
	if (ret)
		return ret;
	if (state != IB_PORT_ACTIVE)
		return -ENETDOWN;

	attr = rdma_get_gid_attr(ibdev, req->key.port_num, req->key.gid_index);
	if (IS_ERR(attr))
		return -ENOENT;
	ret = memcmp(attr->gid.raw, req->gid, sizeof(req->gid)) ? -ENOENT : 0;
	req->gid_type = attr->gid_type;
	rdma_put_gid_attr(attr);
	return ret;
}

static void rv_user_free(struct work_struct *work)
{
	struct rv_user *user = container_of(work, struct rv_user, free_work);

	/* Receive completions look users up under RCU. */
	synchronize_rcu();
	rv_mr_user_exit(user);
	rv_ring_free(&user->ring);
	rv_job_put(user->jdev);
	mmdrop(user->mm);
	kfree(user);
}

static void rv_user_last_put(struct kref *kref)
{
	struct rv_user *user = container_of(kref, struct rv_user, kref);

	/* May run in a completion handler: free where sleeping is allowed. */
	queue_work(rv_wq, &user->free_work);
}

void rv_user_put(struct rv_user *user)
{
	kref_put(&user->kref, rv_user_last_put);
}

/*
 * The file is being released: no new event reaches the process and its
 * connection handles go. Writes still in flight keep the user (its MRs
 * and ring) until they complete.
 */
void rv_user_release(struct rv_user *user)
{
	trace_rv_detach(user);
	xa_erase(&user->jdev->users, user->rv_index);
	rv_job_leave(user->jdev);
	rv_conn_user_exit(user);
	rv_user_put(user);
}

/* ATTACH's request checked, its device found: the job to join, or ERR_PTR. */
static struct rv_job_dev *rv_attach_job(const struct rv_attach_params_in *in,
					bool r5, struct rv_attach_req *req)
{
	struct rv_device *dev;
	int ret;

	ret = rv_attach_parse(in, r5, req);
	if (ret)
		return ERR_PTR(ret);
	dev = rv_device_get_by_name(req->dev_name);
	if (!dev)
		return ERR_PTR(-ENODEV);
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
	struct rv_user *user;
	u32 index;
	int ret;

	user = kzalloc(sizeof(*user), GFP_KERNEL);
	if (!user)
		return ERR_PTR(-ENOMEM);
	kref_init(&user->kref);
	INIT_WORK(&user->free_work, rv_user_free);
	xa_init_flags(&user->conns, XA_FLAGS_ALLOC1);
	user->jdev = jdev;
	user->tgid = current->tgid;
	user->mm = current->mm;
	user->mr_cache_mb = req->mr_cache_mb;
	user->max_fmr_size = min_t(u64, (u64)req->mr_cache_mb << 20,
				   jdev->dev->ib_dev->attrs.max_mr_size);

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
	kfree(user);
	return ERR_PTR(ret);
}

/* Undo rv_user_create() of a user never published. */
static void rv_user_destroy(struct rv_user *user)
{
	rv_mr_user_exit(user);
	rv_ring_free(&user->ring);
	xa_erase(&user->jdev->users, user->rv_index);
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
	int ret;

	if (copy_from_user(&p, ctx->uarg, _IOC_SIZE(ctx->cmd)))
		return -EFAULT;

	mutex_lock(&rf->lock);
	if (rf->user) {
		ret = -EBUSY;
		goto out_unlock;
	}
	jdev = rv_attach_job(&p.in, ctx->cmd == RV_IOCTL_ATTACH_R5, &req);
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
	trace_rv_attach(user);
	return 0;

out_put_job:
	rv_job_leave(jdev);
	rv_job_put(jdev);
out_unlock:
	mutex_unlock(&rf->lock);
	return ret;
}
