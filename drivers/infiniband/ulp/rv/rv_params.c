// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters. Each is checked when the module loads: a value out
 * of range makes the load fail with a message naming the parameter and
 * its range; nothing is clamped. They are read-only afterwards, but for
 * the per-user limits, which an admin may change while jobs run (a
 * change applies to what is created after it).
 */
#include <kunit/visibility.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/stringify.h>
#include <linux/string.h>

#include "rv.h"

/*
 * Defaults and ranges (those ATTACH shares are in rv.h). The descriptions
 * modinfo shows are built from the same values: "what (unit, min..max,
 * default N)".
 */
#define RV_NUM_CONN_DEF			4
#define RV_NUM_CONN_MIN			1
#define RV_Q_DEPTH_DEF			4000
#define RV_MR_CACHE_SIZE_DEF		256
#ifndef RV_UPSTREAM
#define RV_MR_CACHE_SIZE_GPU_DEF	1024
#endif
#define RV_MR_CACHE_SIZE_MIN		1
#define RV_MIN_HB_INTERVAL_DEF		100
#define RV_MIN_HB_INTERVAL_MAX		60000
#define RV_MAX_RECONNECT_TIMEOUT_DEF	300
#define RV_MAX_RECONNECT_TIMEOUT_MAX	3600
#define RV_MAX_JOBS_PER_USER_DEF	1024
#define RV_MAX_CONNS_PER_USER_DEF	16384
#define RV_MAX_QPS_PER_USER_DEF		65536

#define RV_PARM_DESC(name, unit, min, max, def, what) \
	MODULE_PARM_DESC(name, what " (" unit ", " __stringify(min) ".." \
			 __stringify(max) ", default " __stringify(def) ")")

struct rv_params rv_params = {
	.num_conn = RV_NUM_CONN_DEF,
	.q_depth = RV_Q_DEPTH_DEF,
	.mr_cache_size = RV_MR_CACHE_SIZE_DEF,
#ifndef RV_UPSTREAM
	.mr_cache_size_gpu = RV_MR_CACHE_SIZE_GPU_DEF,
#endif
	.service_id = 0x1000125500000001ULL,
	.user_service_id_min = 0x1000125500000000ULL,
	.user_service_id_max = 0x10001255ffffffffULL,
	.min_hb_interval = RV_MIN_HB_INTERVAL_DEF,
	.max_reconnect_timeout = RV_MAX_RECONNECT_TIMEOUT_DEF,
	.max_jobs_per_user = RV_MAX_JOBS_PER_USER_DEF,
	.max_conns_per_user = RV_MAX_CONNS_PER_USER_DEF,
	.max_qps_per_user = RV_MAX_QPS_PER_USER_DEF,
	.cq_poll = IB_POLL_WORKQUEUE,
};

/* The KUnit suites of ATTACH's defaults set it for a case, and restore it. */
EXPORT_SYMBOL_IF_KUNIT(rv_params);

struct rv_uint_range {
	unsigned int *val;
	unsigned int min;
	unsigned int max;
};

static int rv_param_set_uint(const char *buf, const struct kernel_param *kp)
{
	const struct rv_uint_range *r = kp->arg;
	unsigned int v;

	if (kstrtouint(buf, 0, &v) || v < r->min || v > r->max) {
		pr_err(RV_DRV_NAME ": %s=%s is invalid: must be %u..%u\n",
		       kp->name, buf, r->min, r->max);
		return -EINVAL;
	}
	WRITE_ONCE(*r->val, v);
	return 0;
}

static int rv_param_get_uint(char *buf, const struct kernel_param *kp)
{
	const struct rv_uint_range *r = kp->arg;

	return sysfs_emit(buf, "%u\n", *r->val);
}

static const struct kernel_param_ops rv_uint_range_ops = {
	.set = rv_param_set_uint,
	.get = rv_param_get_uint,
};

enum {
	RV_P_NUM_CONN,
	RV_P_Q_DEPTH,
	RV_P_MR_CACHE_SIZE,
#ifndef RV_UPSTREAM
	RV_P_MR_CACHE_SIZE_GPU,
#endif
	RV_P_MIN_HB_INTERVAL,
	RV_P_MAX_RECONNECT_TIMEOUT,
	RV_P_MAX_JOBS_PER_USER,
	RV_P_MAX_CONNS_PER_USER,
	RV_P_MAX_QPS_PER_USER,
};

static struct rv_uint_range rv_ranges[] = {
	[RV_P_NUM_CONN] = { &rv_params.num_conn, RV_NUM_CONN_MIN,
			    RV_MAX_NUM_CONN },
	[RV_P_Q_DEPTH] = { &rv_params.q_depth, RV_Q_DEPTH_MIN,
			   RV_Q_DEPTH_MAX },
	[RV_P_MR_CACHE_SIZE] = { &rv_params.mr_cache_size,
				 RV_MR_CACHE_SIZE_MIN, RV_MR_CACHE_SIZE_MAX },
#ifndef RV_UPSTREAM
	[RV_P_MR_CACHE_SIZE_GPU] = { &rv_params.mr_cache_size_gpu,
				     RV_MR_CACHE_SIZE_MIN,
				     RV_MR_CACHE_SIZE_MAX },
#endif
	[RV_P_MIN_HB_INTERVAL] = { &rv_params.min_hb_interval, 0,
				   RV_MIN_HB_INTERVAL_MAX },
	[RV_P_MAX_RECONNECT_TIMEOUT] = { &rv_params.max_reconnect_timeout, 0,
					 RV_MAX_RECONNECT_TIMEOUT_MAX },
	[RV_P_MAX_JOBS_PER_USER] = { &rv_params.max_jobs_per_user, 0,
				     UINT_MAX },
	[RV_P_MAX_CONNS_PER_USER] = { &rv_params.max_conns_per_user, 0,
				      UINT_MAX },
	[RV_P_MAX_QPS_PER_USER] = { &rv_params.max_qps_per_user, 0,
				    UINT_MAX },
};

module_param_cb(num_conn, &rv_uint_range_ops, &rv_ranges[RV_P_NUM_CONN], 0444);
RV_PARM_DESC(num_conn, "QPs", RV_NUM_CONN_MIN, RV_MAX_NUM_CONN, RV_NUM_CONN_DEF,
	     "RC QPs per job to each remote node, when ATTACH passes 0");
module_param_cb(q_depth, &rv_uint_range_ops, &rv_ranges[RV_P_Q_DEPTH], 0444);
RV_PARM_DESC(q_depth, "WRs", RV_Q_DEPTH_MIN, RV_Q_DEPTH_MAX, RV_Q_DEPTH_DEF,
	     "send queue depth per connection, split over its QPs, when ATTACH passes 0");
module_param_cb(mr_cache_size, &rv_uint_range_ops,
		&rv_ranges[RV_P_MR_CACHE_SIZE], 0444);
RV_PARM_DESC(mr_cache_size, "MB", RV_MR_CACHE_SIZE_MIN, RV_MR_CACHE_SIZE_MAX,
	     RV_MR_CACHE_SIZE_DEF,
	     "MR cache per process, when ATTACH passes 0, and the most it may ask for");
#ifndef RV_UPSTREAM
module_param_cb(mr_cache_size_gpu, &rv_uint_range_ops,
		&rv_ranges[RV_P_MR_CACHE_SIZE_GPU], 0444);
RV_PARM_DESC(mr_cache_size_gpu, "MB", RV_MR_CACHE_SIZE_MIN,
	     RV_MR_CACHE_SIZE_MAX, RV_MR_CACHE_SIZE_GPU_DEF,
	     "MR cache per process that attaches with RV_RDMA_MODE_UPSIZE_CPU, and the most it may ask for");
#endif
module_param_cb(min_hb_interval, &rv_uint_range_ops,
		&rv_ranges[RV_P_MIN_HB_INTERVAL], 0444);
RV_PARM_DESC(min_hb_interval, "ms", 0, RV_MIN_HB_INTERVAL_MAX,
	     RV_MIN_HB_INTERVAL_DEF,
	     "shortest heartbeat interval a job may use; shorter requests are raised to it");
module_param_cb(max_reconnect_timeout, &rv_uint_range_ops,
		&rv_ranges[RV_P_MAX_RECONNECT_TIMEOUT], 0444);
RV_PARM_DESC(max_reconnect_timeout, "s", 0, RV_MAX_RECONNECT_TIMEOUT_MAX,
	     RV_MAX_RECONNECT_TIMEOUT_DEF,
	     "longest reconnect window a job may use; longer requests are cut to it and ATTACH reports the value in use");
/* Writable: an admin may tighten or relax them while jobs run. */
module_param_cb(max_jobs_per_user, &rv_uint_range_ops,
		&rv_ranges[RV_P_MAX_JOBS_PER_USER], 0644);
RV_PARM_DESC(max_jobs_per_user, "jobs", 0, 4294967295, RV_MAX_JOBS_PER_USER_DEF,
	     "job-devices one uid may hold on the node, 0 for no limit; beyond it ATTACH fails with EDQUOT unless the caller has CAP_SYS_RESOURCE");
module_param_cb(max_conns_per_user, &rv_uint_range_ops,
		&rv_ranges[RV_P_MAX_CONNS_PER_USER], 0644);
RV_PARM_DESC(max_conns_per_user, "connections", 0, 4294967295,
	     RV_MAX_CONNS_PER_USER_DEF,
	     "shared connections one uid's jobs may hold, 0 for no limit; beyond it CONN_CREATE fails with EDQUOT unless the caller has CAP_SYS_RESOURCE");
module_param_cb(max_qps_per_user, &rv_uint_range_ops,
		&rv_ranges[RV_P_MAX_QPS_PER_USER], 0644);
RV_PARM_DESC(max_qps_per_user, "QPs", 0, 4294967295, RV_MAX_QPS_PER_USER_DEF,
	     "RC QPs of the connections one uid's jobs may hold (num_conn each), 0 for no limit; beyond it CONN_CREATE fails with EDQUOT unless the caller has CAP_SYS_RESOURCE");

/* A 64-bit service id parameter; kp->arg points at it. */
static int rv_param_set_service_id(const char *buf,
				   const struct kernel_param *kp)
{
	u64 v;

	if (kstrtou64(buf, 0, &v) || !v || rv_service_id_is_ip_cm(v)) {
		pr_err(RV_DRV_NAME ": %s=%s is invalid: must be a non-zero 64-bit IB CM service id outside 0x%llx..0x%llx\n",
		       kp->name, buf, RV_IP_CM_SERVICE_ID_MIN,
		       RV_IP_CM_SERVICE_ID_MAX);
		return -EINVAL;
	}
	*(u64 *)kp->arg = v;
	return 0;
}

static int rv_param_get_service_id(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "0x%016llx\n", *(u64 *)kp->arg);
}

static const struct kernel_param_ops rv_service_id_ops = {
	.set = rv_param_set_service_id,
	.get = rv_param_get_service_id,
};

module_param_cb(service_id, &rv_service_id_ops, &rv_params.service_id, 0444);
MODULE_PARM_DESC(service_id,
		 "IB CM service id, when ATTACH passes 0; any uid may use it (64-bit, non-zero, outside the RDMA CM's, default 0x1000125500000001)");
module_param_cb(user_service_id_min, &rv_service_id_ops,
		&rv_params.user_service_id_min, 0444);
MODULE_PARM_DESC(user_service_id_min,
		 "lowest IB CM service id any uid may attach with; others need CAP_NET_BIND_SERVICE (64-bit, non-zero, outside the RDMA CM's, default 0x1000125500000000)");
module_param_cb(user_service_id_max, &rv_service_id_ops,
		&rv_params.user_service_id_max, 0444);
MODULE_PARM_DESC(user_service_id_max,
		 "highest IB CM service id any uid may attach with (64-bit, non-zero, outside the RDMA CM's, default 0x10001255ffffffff)");

/*
 * Where the connections' completions are handled (the poll context of the
 * pool CQs they take, ib_cq_pool_get()): a kworker of ib_core's per-CPU
 * (default) or unbound workqueue, or softirq; each is a pool type, never
 * IB_POLL_DIRECT. docs/performance.md has what each costs on soft-RoCE.
 */
static const char * const rv_cq_poll_names[] = {
	[IB_POLL_SOFTIRQ] = "softirq",
	[IB_POLL_WORKQUEUE] = "workqueue",
	[IB_POLL_UNBOUND_WORKQUEUE] = "unbound",
};

static int rv_param_set_cq_poll(const char *buf, const struct kernel_param *kp)
{
	int i = sysfs_match_string(rv_cq_poll_names, buf);

	if (i < 0) {
		pr_err(RV_DRV_NAME ": cq_poll=%s is invalid: must be workqueue, unbound or softirq\n",
		       buf);
		return -EINVAL;
	}
	rv_params.cq_poll = i;
	return 0;
}

static int rv_param_get_cq_poll(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", rv_cq_poll_names[rv_params.cq_poll]);
}

static const struct kernel_param_ops rv_cq_poll_ops = {
	.set = rv_param_set_cq_poll,
	.get = rv_param_get_cq_poll,
};

module_param_cb(cq_poll, &rv_cq_poll_ops, NULL, 0444);
MODULE_PARM_DESC(cq_poll,
		 "where completions are handled: a kworker of ib_core's per-CPU or unbound workqueue, or softirq (workqueue, unbound or softirq, default workqueue)");
