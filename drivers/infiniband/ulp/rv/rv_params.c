// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters. Each is checked when the module loads: a value out
 * of range makes the load fail with a message naming the parameter and
 * its range; nothing is clamped. They are read-only afterwards.
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>

#include "rv.h"

struct rv_params rv_params = {
	.num_conn = 4,
	.q_depth = 4000,
	.mr_cache_size = 256,
	.mr_cache_size_gpu = 1024,
	.service_id = 0x1000125500000001ULL,
	.min_hb_interval = 100,
	.max_reconnect_timeout = 300,
};

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
	*r->val = v;
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
	RV_P_MR_CACHE_SIZE_GPU,
	RV_P_MIN_HB_INTERVAL,
	RV_P_MAX_RECONNECT_TIMEOUT,
};

static struct rv_uint_range rv_ranges[] = {
	[RV_P_NUM_CONN] = { &rv_params.num_conn, 1, RV_MAX_NUM_CONN },
	[RV_P_Q_DEPTH] = { &rv_params.q_depth, 16, 65536 },
	[RV_P_MR_CACHE_SIZE] = { &rv_params.mr_cache_size, 1, 1048576 },
	[RV_P_MR_CACHE_SIZE_GPU] = { &rv_params.mr_cache_size_gpu, 1, 1048576 },
	[RV_P_MIN_HB_INTERVAL] = { &rv_params.min_hb_interval, 0, 60000 },
	[RV_P_MAX_RECONNECT_TIMEOUT] = {
		&rv_params.max_reconnect_timeout, 0, 3600 },
};

module_param_cb(num_conn, &rv_uint_range_ops, &rv_ranges[RV_P_NUM_CONN], 0444);
MODULE_PARM_DESC(num_conn,
		 "RC QPs per job to each remote node (1..16, default 4)");
module_param_cb(q_depth, &rv_uint_range_ops, &rv_ranges[RV_P_Q_DEPTH], 0444);
MODULE_PARM_DESC(q_depth,
		 "send queue depth per connection, split over its QPs (16..65536, default 4000)");
module_param_cb(mr_cache_size, &rv_uint_range_ops,
		&rv_ranges[RV_P_MR_CACHE_SIZE], 0444);
MODULE_PARM_DESC(mr_cache_size,
		 "MB of MR cache per process (1..1048576, default 256)");
module_param_cb(mr_cache_size_gpu, &rv_uint_range_ops,
		&rv_ranges[RV_P_MR_CACHE_SIZE_GPU], 0444);
MODULE_PARM_DESC(mr_cache_size_gpu,
		 "MB of MR cache per process attached with RV_RDMA_MODE_UPSIZE_CPU (1..1048576, default 1024)");
module_param_cb(min_hb_interval, &rv_uint_range_ops,
		&rv_ranges[RV_P_MIN_HB_INTERVAL], 0444);
MODULE_PARM_DESC(min_hb_interval,
		 "shortest heartbeat interval in ms a job may use; shorter requests are raised to it (0..60000, default 100)");
module_param_cb(max_reconnect_timeout, &rv_uint_range_ops,
		&rv_ranges[RV_P_MAX_RECONNECT_TIMEOUT], 0444);
MODULE_PARM_DESC(max_reconnect_timeout,
		 "longest reconnect_timeout in s a job may use; longer requests are cut to it (0..3600, default 300)");

static int rv_param_set_service_id(const char *buf,
				   const struct kernel_param *kp)
{
	u64 v;

	if (kstrtou64(buf, 0, &v) || !v) {
		pr_err(RV_DRV_NAME ": service_id=%s is invalid: must be a non-zero 64-bit IB CM service id\n",
		       buf);
		return -EINVAL;
	}
	rv_params.service_id = v;
	return 0;
}

static int rv_param_get_service_id(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "0x%016llx\n", rv_params.service_id);
}

static const struct kernel_param_ops rv_service_id_ops = {
	.set = rv_param_set_service_id,
	.get = rv_param_get_service_id,
};

module_param_cb(service_id, &rv_service_id_ops, NULL, 0444);
MODULE_PARM_DESC(service_id,
		 "default IB CM service id, default 0x1000125500000001");
