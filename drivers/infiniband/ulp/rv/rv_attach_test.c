// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of ATTACH's input checks and of the defaults and admin
 * policy it applies (rv_attach_parse(), which needs no device), of the
 * service ids a caller may use and of the key that finds a job.
 */
#include <kunit/test.h>
#include <linux/string.h>
#include <net/net_namespace.h>

#include "rv_job.h"

/* What PSM3 sends by default (docs/psm3.md). */
static struct rv_attach_params_in rv_attach_test_psm3(void)
{
	struct rv_attach_params_in in = {
		.dev_name = "rxe0",
		.rdma_mode = RV_RDMA_MODE_KERNEL,
		.port_num = 1,
		.loc_addr = 0x0a4d0101,
		.index_bits = 9,
		.loc_gid_index = 1,
		.job_key_len = RV_MAX_JOB_KEY_LEN,
		.service_id = 0x1000125500000001ULL,
		.cq_entries = 192,
		.reconnect_timeout = 30,
		.hb_interval = 1000,
		.fr_page_list_len = 1024,
	};

	memset(in.job_key, 0x5a, sizeof(in.job_key));
	return in;
}

struct rv_attach_test_case {
	const char *name;
	void (*change)(struct rv_attach_params_in *in);
	int ret;
};

#define RV_JOB_CHANGE(fn, stmt) \
	static void fn(struct rv_attach_params_in *in) { stmt; }

RV_JOB_CHANGE(rv_job_none, (void)in)
RV_JOB_CHANGE(rv_job_resv1, in->resv1 = 1)
RV_JOB_CHANGE(rv_job_resv2, in->resv2 = 1)
RV_JOB_CHANGE(rv_job_resv3, in->resv3[6] = 1)
RV_JOB_CHANGE(rv_job_resv4, in->resv4 = 1)
RV_JOB_CHANGE(rv_job_mode_bits, in->rdma_mode |= 0x40)
RV_JOB_CHANGE(rv_job_mode_user, in->rdma_mode = RV_RDMA_MODE_USER)
RV_JOB_CHANGE(rv_job_mode_max1, in->rdma_mode = RV_RDMA_MODE_MAX + 1)
#ifndef RV_UPSTREAM
RV_JOB_CHANGE(rv_job_mode_upsize,
	      in->rdma_mode = RV_RDMA_MODE_KERNEL | RV_RDMA_MODE_UPSIZE_CPU)
#endif
RV_JOB_CHANGE(rv_job_name_empty, in->dev_name[0] = 0)
RV_JOB_CHANGE(rv_job_name_unterminated,
	      memset(in->dev_name, 'x', sizeof(in->dev_name)))
RV_JOB_CHANGE(rv_job_name_longest,
	      memset(in->dev_name, 'x', sizeof(in->dev_name) - 1))
RV_JOB_CHANGE(rv_job_num_conn_max, in->num_conn = RV_MAX_NUM_CONN)
RV_JOB_CHANGE(rv_job_num_conn_max1, in->num_conn = RV_MAX_NUM_CONN + 1)
RV_JOB_CHANGE(rv_job_bits_0, in->index_bits = 0)
RV_JOB_CHANGE(rv_job_bits_max, in->index_bits = RV_MAX_INDEX_BITS)
RV_JOB_CHANGE(rv_job_bits_max1, in->index_bits = RV_MAX_INDEX_BITS + 1)
RV_JOB_CHANGE(rv_job_key_0, in->job_key_len = 0)
RV_JOB_CHANGE(rv_job_key_max1, in->job_key_len = RV_MAX_JOB_KEY_LEN + 1)
RV_JOB_CHANGE(rv_job_cq_0, in->cq_entries = 0)
RV_JOB_CHANGE(rv_job_cq_1, in->cq_entries = 1)
RV_JOB_CHANGE(rv_job_cq_2, in->cq_entries = 2)
RV_JOB_CHANGE(rv_job_cq_max, in->cq_entries = RV_MAX_CQ_ENTRIES)
RV_JOB_CHANGE(rv_job_cq_max1, in->cq_entries = RV_MAX_CQ_ENTRIES + 1)
RV_JOB_CHANGE(rv_job_q_min, in->q_depth = RV_Q_DEPTH_MIN)
RV_JOB_CHANGE(rv_job_q_min1, in->q_depth = RV_Q_DEPTH_MIN - 1)
RV_JOB_CHANGE(rv_job_q_max, in->q_depth = RV_Q_DEPTH_MAX)
RV_JOB_CHANGE(rv_job_q_max1, in->q_depth = RV_Q_DEPTH_MAX + 1)
RV_JOB_CHANGE(rv_job_cache_max, in->mr_cache_size = RV_MR_CACHE_SIZE_MAX)
RV_JOB_CHANGE(rv_job_cache_max1, in->mr_cache_size = RV_MR_CACHE_SIZE_MAX + 1)
RV_JOB_CHANGE(rv_job_hb_equal, in->reconnect_timeout = 1;
	      in->hb_interval = 1000)
RV_JOB_CHANGE(rv_job_hb_below, in->reconnect_timeout = 1;
	      in->hb_interval = 999)
RV_JOB_CHANGE(rv_job_hb_huge, in->reconnect_timeout = U32_MAX;
	      in->hb_interval = U32_MAX)
RV_JOB_CHANGE(rv_job_fr_0, in->fr_page_list_len = 0)
RV_JOB_CHANGE(rv_job_fr_1, in->fr_page_list_len = 1)
RV_JOB_CHANGE(rv_job_fr_2, in->fr_page_list_len = 2)
RV_JOB_CHANGE(rv_job_fr_huge, in->fr_page_list_len = U32_MAX)
RV_JOB_CHANGE(rv_job_no_recovery, in->reconnect_timeout = 0;
	      in->hb_interval = U32_MAX)

static const struct rv_attach_test_case rv_attach_test_cases_table[] = {
	{ "psm3 defaults", rv_job_none, 0 },
	{ "resv1", rv_job_resv1, -EINVAL },
	{ "resv2", rv_job_resv2, -EINVAL },
	{ "resv3", rv_job_resv3, -EINVAL },
	{ "resv4", rv_job_resv4, -EINVAL },
	{ "unknown rdma_mode bits", rv_job_mode_bits, -EINVAL },
	{ "RV_RDMA_MODE_USER", rv_job_mode_user, -EOPNOTSUPP },
	{ "rdma_mode past the last", rv_job_mode_max1, -EINVAL },
#ifndef RV_UPSTREAM
	{ "RV_RDMA_MODE_UPSIZE_CPU", rv_job_mode_upsize, 0 },
#endif
	{ "empty dev_name", rv_job_name_empty, -EINVAL },
	{ "dev_name without NUL", rv_job_name_unterminated, -EINVAL },
	{ "longest dev_name", rv_job_name_longest, 0 },
	{ "num_conn max", rv_job_num_conn_max, 0 },
	{ "num_conn max+1", rv_job_num_conn_max1, -EINVAL },
	{ "index_bits 0", rv_job_bits_0, 0 },
	{ "index_bits max", rv_job_bits_max, 0 },
	{ "index_bits max+1", rv_job_bits_max1, -EINVAL },
	{ "job_key_len 0", rv_job_key_0, 0 },
	{ "job_key_len max+1", rv_job_key_max1, -EINVAL },
	{ "cq_entries 0 (no ring)", rv_job_cq_0, 0 },
	{ "cq_entries 1", rv_job_cq_1, -EINVAL },
	{ "cq_entries 2", rv_job_cq_2, 0 },
	{ "cq_entries max", rv_job_cq_max, 0 },
	{ "cq_entries max+1", rv_job_cq_max1, -EINVAL },
	{ "q_depth min", rv_job_q_min, 0 },
	{ "q_depth min-1", rv_job_q_min1, -EINVAL },
	{ "q_depth max", rv_job_q_max, 0 },
	{ "q_depth max+1", rv_job_q_max1, -EINVAL },
	{ "mr_cache_size max", rv_job_cache_max, 0 },
	{ "mr_cache_size max+1", rv_job_cache_max1, -EINVAL },
	{ "reconnect_timeout*1000 == hb_interval", rv_job_hb_equal,
	  -EINVAL },
	{ "reconnect_timeout*1000 > hb_interval", rv_job_hb_below, 0 },
	{ "both U32_MAX (no overflow)", rv_job_hb_huge, 0 },
	{ "no recovery, any hb_interval", rv_job_no_recovery, 0 },
	{ "fr_page_list_len 0 (the device's)", rv_job_fr_0, 0 },
	{ "fr_page_list_len 1", rv_job_fr_1, -EINVAL },
	{ "fr_page_list_len 2", rv_job_fr_2, 0 },
	{ "fr_page_list_len U32_MAX", rv_job_fr_huge, 0 },
};

static void rv_attach_test_case_desc(const struct rv_attach_test_case *t,
				     char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rv_attach_test_inputs, rv_attach_test_cases_table,
		  rv_attach_test_case_desc);

/* Each input: the errno of the table, and nothing filled on a failure. */
static void rv_attach_test_parse(struct kunit *test)
{
	const struct rv_attach_test_case *t = test->param_value;
	struct rv_attach_params_in in = rv_attach_test_psm3();
	struct rv_attach_req req, untouched;

	t->change(&in);
	memset(&req, 0xa5, sizeof(req));
	untouched = req;
	KUNIT_EXPECT_EQ(test, rv_attach_parse(&in, &req), t->ret);
	if (t->ret)
		KUNIT_EXPECT_EQ(test, memcmp(&req, &untouched, sizeof(req)), 0);
}

/* Zero means the module's default; the admin's bounds apply. */
static void rv_attach_test_defaults_and_policy(struct kunit *test)
{
	const struct rv_params saved = rv_params;
	struct rv_attach_params_in in = rv_attach_test_psm3();
	struct rv_attach_req req;

	rv_params.num_conn = 6;
	rv_params.q_depth = 1234;
	rv_params.mr_cache_size = 77;
#ifndef RV_UPSTREAM
	rv_params.mr_cache_size_gpu = 888;
#endif
	rv_params.min_hb_interval = 250;
	rv_params.max_reconnect_timeout = 40;

	in.service_id = 0;
	in.hb_interval = 100;
	in.reconnect_timeout = 50;
	KUNIT_ASSERT_EQ(test, rv_attach_parse(&in, &req), 0);
	KUNIT_EXPECT_EQ(test, req.params.num_conn, 6);
	KUNIT_EXPECT_EQ(test, req.params.q_depth, 1234U);
	KUNIT_EXPECT_EQ(test, req.mr_cache_mb, 77U);
	KUNIT_EXPECT_EQ(test, req.key.service_id, saved.service_id);
	KUNIT_EXPECT_EQ(test, req.params.hb_interval, 250U);
	KUNIT_EXPECT_EQ(test, req.params.reconnect_timeout, 40U);
	KUNIT_EXPECT_EQ(test, req.params.index_bits, 9);
	KUNIT_EXPECT_EQ(test, req.cq_entries, 192U);
	KUNIT_EXPECT_EQ(test, req.key.port_num, 1U);
	KUNIT_EXPECT_EQ(test, req.key.gid_index, 1);
	KUNIT_EXPECT_EQ(test, req.key.job_key_len, RV_MAX_JOB_KEY_LEN);
	KUNIT_EXPECT_EQ(test, req.loc_addr, 0x0a4d0101U);
	KUNIT_EXPECT_EQ(test, req.fr_page_list_len, 1024U);

	/* No heartbeats. */
	in.hb_interval = 0;
	KUNIT_ASSERT_EQ(test, rv_attach_parse(&in, &req), 0);
	KUNIT_EXPECT_EQ(test, req.params.hb_interval, 0U);
#ifndef RV_UPSTREAM
	/* The GPU-sized cache. */
	in.rdma_mode |= RV_RDMA_MODE_UPSIZE_CPU;
	KUNIT_ASSERT_EQ(test, rv_attach_parse(&in, &req), 0);
	KUNIT_EXPECT_EQ(test, req.mr_cache_mb, 888U);
	in.mr_cache_size = 889;		/* the module's size is a ceiling */
	KUNIT_ASSERT_EQ(test, rv_attach_parse(&in, &req), 0);
	KUNIT_EXPECT_EQ(test, req.mr_cache_mb, 888U);
	in.rdma_mode &= ~RV_RDMA_MODE_UPSIZE_CPU;
	KUNIT_ASSERT_EQ(test, rv_attach_parse(&in, &req), 0);
	KUNIT_EXPECT_EQ(test, req.mr_cache_mb, 77U);
#endif
	in.num_conn = 3;
	in.q_depth = 64;
	in.mr_cache_size = 5;
	in.service_id = 42;
	in.hb_interval = 5000;
	KUNIT_ASSERT_EQ(test, rv_attach_parse(&in, &req), 0);
	KUNIT_EXPECT_EQ(test, req.params.num_conn, 3);
	KUNIT_EXPECT_EQ(test, req.params.q_depth, 64U);
	KUNIT_EXPECT_EQ(test, req.mr_cache_mb, 5U);
	KUNIT_EXPECT_EQ(test, req.key.service_id, 42ULL);
	KUNIT_EXPECT_EQ(test, req.params.hb_interval, 5000U);

	rv_params = saved;
}

/*
 * A job is found by device, port, GID index, uid, network namespace, job
 * key and service id: two containers that share a uid and a job key do
 * not share a job.
 */
static void rv_attach_test_job_key(struct kunit *test)
{
	struct rv_attach_params_in in = rv_attach_test_psm3();
	struct rv_device *dev, *other_dev;
	struct net *other_net;
	struct rv_job_dev *jdev;
	struct rv_attach_req req;
	struct rv_job_key key;
	kuid_t uid = KUIDT_INIT(1000);

	KUNIT_ASSERT_EQ(test, rv_attach_parse(&in, &req), 0);
	jdev = kunit_kzalloc(test, sizeof(*jdev), GFP_KERNEL);
	dev = kunit_kzalloc(test, sizeof(*dev), GFP_KERNEL);
	other_dev = kunit_kzalloc(test, sizeof(*other_dev), GFP_KERNEL);
	/* Only its address counts: net_eq() compares pointers. */
	other_net = kunit_kzalloc(test, sizeof(*other_net), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, jdev);
	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_ASSERT_NOT_NULL(test, other_dev);
	KUNIT_ASSERT_NOT_NULL(test, other_net);
	jdev->dev = dev;
	jdev->uid = uid;
	jdev->net = &init_net;
	jdev->key = req.key;

	key = req.key;
	KUNIT_EXPECT_TRUE(test, rv_job_matches(jdev, dev, &key, uid, &init_net));
	KUNIT_EXPECT_FALSE(test, rv_job_matches(jdev, dev, &key, uid, other_net));
	KUNIT_EXPECT_FALSE(test, rv_job_matches(jdev, dev, &key,
						KUIDT_INIT(1001), &init_net));
	KUNIT_EXPECT_FALSE(test, rv_job_matches(jdev, other_dev, &key, uid,
						&init_net));
	key.gid_index++;
	KUNIT_EXPECT_FALSE(test, rv_job_matches(jdev, dev, &key, uid, &init_net));
	key = req.key;
	key.port_num++;
	KUNIT_EXPECT_FALSE(test, rv_job_matches(jdev, dev, &key, uid, &init_net));
	key = req.key;
	key.service_id++;
	KUNIT_EXPECT_FALSE(test, rv_job_matches(jdev, dev, &key, uid, &init_net));
	key = req.key;
	key.job_key[0]++;
	KUNIT_EXPECT_FALSE(test, rv_job_matches(jdev, dev, &key, uid, &init_net));
	key = req.key;
	key.job_key_len--;
	KUNIT_EXPECT_FALSE(test, rv_job_matches(jdev, dev, &key, uid, &init_net));
}

/* The ids any uid may use; the RDMA CM's are nobody's. */
static void rv_attach_test_service_ids(struct kunit *test)
{
	const struct rv_params saved = rv_params;

	rv_params.service_id = 0x77;
	rv_params.user_service_id_min = 0x1000;
	rv_params.user_service_id_max = 0x1fff;
	KUNIT_EXPECT_EQ(test, rv_service_id_check(0x77), 0);
	KUNIT_EXPECT_EQ(test, rv_service_id_check(0x1000), 0);
	KUNIT_EXPECT_EQ(test, rv_service_id_check(0x1fff), 0);
	KUNIT_EXPECT_EQ(test, rv_service_id_check(RV_IP_CM_SERVICE_ID_MIN),
			-EADDRNOTAVAIL);
	KUNIT_EXPECT_EQ(test, rv_service_id_check(0x0000000001064853ULL),
			-EADDRNOTAVAIL);	/* RDMA_PS_TCP port 18515 */
	KUNIT_EXPECT_EQ(test, rv_service_id_check(RV_IP_CM_SERVICE_ID_MAX),
			-EADDRNOTAVAIL);
	/* Even inside the user range. */
	rv_params.user_service_id_min = 0;
	rv_params.user_service_id_max = U64_MAX;
	KUNIT_EXPECT_EQ(test, rv_service_id_check(0x0000000001060000ULL),
			-EADDRNOTAVAIL);
	rv_params = saved;
}

static struct kunit_case rv_attach_test_cases[] = {
	KUNIT_CASE(rv_attach_test_service_ids),
	KUNIT_CASE(rv_attach_test_job_key),
	KUNIT_CASE_PARAM(rv_attach_test_parse, rv_attach_test_inputs_gen_params),
	KUNIT_CASE(rv_attach_test_defaults_and_policy),
	{}
};

static struct kunit_suite rv_attach_test_suite = {
	.name = "rv_attach",
	.test_cases = rv_attach_test_cases,
};

kunit_test_suite(rv_attach_test_suite);
