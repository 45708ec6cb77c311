// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of rv's wire formats (rv_wire.c): the CM private data of
 * REQs and REJs, and the process index of an immediate.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/stddef.h>
#include <linux/string.h>

#include "rv_wire.h"

static const u8 key16[RV_MAX_JOB_KEY_LEN] = {
	0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87,
	0x98, 0xa9, 0xba, 0xcb, 0xdc, 0xed, 0xfe, 0x0f,
};

static struct rv_req_info rv_wire_info(void)
{
	struct rv_req_info info = {
		.index = 3,
		.num_conn = 4,
		.job_key_len = RV_MAX_JOB_KEY_LEN,
		.uid = 0x01020304,
	};

	memcpy(info.job_key, key16, sizeof(key16));
	return info;
}

static void rv_wire_test_req_roundtrip(struct kunit *test)
{
	struct rv_req_info in = rv_wire_info(), out;
	struct rv_req_pdata pd;

	rv_req_pdata_init(&pd, &in);
	KUNIT_ASSERT_EQ(test, rv_req_pdata_parse(&pd, &out), 0);
	KUNIT_EXPECT_EQ(test, out.index, 3);
	KUNIT_EXPECT_EQ(test, out.num_conn, 4);
	KUNIT_EXPECT_EQ(test, out.job_key_len, RV_MAX_JOB_KEY_LEN);
	KUNIT_EXPECT_EQ(test, memcmp(out.job_key, key16, sizeof(key16)), 0);
	KUNIT_EXPECT_EQ(test, out.uid, 0x01020304U);

	/* A shorter key: the bytes past its length are zero on the wire. */
	in.job_key_len = 5;
	rv_req_pdata_init(&pd, &in);
	KUNIT_EXPECT_EQ(test, pd.job_key_len, 5);
	KUNIT_EXPECT_NULL(test, memchr_inv(pd.job_key + 5, 0, 11));
	KUNIT_ASSERT_EQ(test, rv_req_pdata_parse(&pd, &out), 0);
	KUNIT_EXPECT_EQ(test, out.job_key_len, 5);
	KUNIT_EXPECT_EQ(test, memcmp(out.job_key, key16, 5), 0);
}

/* Network byte order: the bytes on the wire, whatever the host. */
static void rv_wire_test_req_byte_order(struct kunit *test)
{
	struct rv_req_info in = rv_wire_info();
	struct rv_req_pdata pd;
	const u8 *b = (const u8 *)&pd;
	const size_t uid = offsetof(struct rv_req_pdata, uid);

	rv_req_pdata_init(&pd, &in);
	KUNIT_EXPECT_EQ(test, b[0], 0x72);	/* 'r' */
	KUNIT_EXPECT_EQ(test, b[1], 0x76);	/* 'v' */
	KUNIT_EXPECT_EQ(test, b[2], 0x34);	/* '4' */
	KUNIT_EXPECT_EQ(test, b[3], 0x63);	/* 'c' */
	KUNIT_EXPECT_EQ(test, b[4], RV_CM_VERSION);
	KUNIT_EXPECT_EQ(test, b[5], 3);
	KUNIT_EXPECT_EQ(test, b[uid], 0x01);
	KUNIT_EXPECT_EQ(test, b[uid + 3], 0x04);
	KUNIT_EXPECT_EQ(test, pd.resv, 0);
}

static void rv_wire_test_req_rejects(struct kunit *test)
{
	struct rv_req_info in = rv_wire_info(), out;
	struct rv_req_pdata pd;

	KUNIT_EXPECT_EQ(test, rv_req_pdata_parse(NULL, &out), -EPROTO);

	rv_req_pdata_init(&pd, &in);
	pd.magic = cpu_to_be32(RV_CM_MAGIC + 1);
	KUNIT_EXPECT_EQ(test, rv_req_pdata_parse(&pd, &out), -EPROTO);

	rv_req_pdata_init(&pd, &in);
	pd.magic = cpu_to_be32(swab32(RV_CM_MAGIC));	/* host order */
	KUNIT_EXPECT_EQ(test, rv_req_pdata_parse(&pd, &out), -EPROTO);

	rv_req_pdata_init(&pd, &in);
	pd.version = RV_CM_VERSION + 1;
	KUNIT_EXPECT_EQ(test, rv_req_pdata_parse(&pd, &out), -EPROTO);

	rv_req_pdata_init(&pd, &in);
	pd.job_key_len = RV_MAX_JOB_KEY_LEN + 1;
	KUNIT_EXPECT_EQ(test, rv_req_pdata_parse(&pd, &out), -EPROTO);

	/* Too long a key is cut on the way out, never sent. */
	in.job_key_len = 200;
	rv_req_pdata_init(&pd, &in);
	KUNIT_EXPECT_EQ(test, pd.job_key_len, RV_MAX_JOB_KEY_LEN);
}

static void rv_wire_test_rej(struct kunit *test)
{
	static const u8 final[] = {
		RV_REJ_VERSION, RV_REJ_UID, RV_REJ_INDEX, RV_REJ_ROLE, 0, 200,
	};
	struct rv_rej_pdata pd;
	int i;

	rv_rej_pdata_init(&pd, RV_REJ_RETRY);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pd.magic), RV_CM_MAGIC);
	KUNIT_EXPECT_EQ(test, pd.version, RV_CM_VERSION);
	KUNIT_EXPECT_FALSE(test, rv_rej_pdata_is_final(&pd));
	KUNIT_EXPECT_EQ(test, rv_rej_pdata_reason(&pd), RV_REJ_RETRY);
	rv_rej_pdata_init(&pd, RV_REJ_LOCAL);
	KUNIT_EXPECT_FALSE(test, rv_rej_pdata_is_final(&pd));
	for (i = 0; i < ARRAY_SIZE(final); i++) {
		rv_rej_pdata_init(&pd, final[i]);
		KUNIT_EXPECT_TRUE_MSG(test, rv_rej_pdata_is_final(&pd),
				      "reason %u", final[i]);
		KUNIT_EXPECT_EQ(test, rv_rej_pdata_reason(&pd), final[i]);
	}
	/* Someone else's REJ, or none: do not retry; it gives no reason. */
	KUNIT_EXPECT_TRUE(test, rv_rej_pdata_is_final(NULL));
	KUNIT_EXPECT_EQ(test, rv_rej_pdata_reason(NULL), 0);
	rv_rej_pdata_init(&pd, RV_REJ_RETRY);
	pd.magic = 0;
	KUNIT_EXPECT_TRUE(test, rv_rej_pdata_is_final(&pd));
	KUNIT_EXPECT_EQ(test, rv_rej_pdata_reason(&pd), 0);
}

static void rv_wire_test_imm_index(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rv_imm_index(0xffffffff, 0), 0U);
	KUNIT_EXPECT_EQ(test, rv_imm_index(0x80000000, 1), 1U);
	KUNIT_EXPECT_EQ(test, rv_imm_index(0x7fffffff, 1), 0U);
	/* PSM3's default: 9 bits of index, 23 of payload. */
	KUNIT_EXPECT_EQ(test, rv_imm_index(0xff800000, 9), 511U);
	KUNIT_EXPECT_EQ(test, rv_imm_index(0x00800000, 9), 1U);
	KUNIT_EXPECT_EQ(test, rv_imm_index(0x007fffff, 9), 0U);
	KUNIT_EXPECT_EQ(test, rv_imm_index((37U << 23) | 0x1234, 9), 37U);
	KUNIT_EXPECT_EQ(test, rv_imm_index(0xfff00000, RV_MAX_INDEX_BITS),
			(1U << RV_MAX_INDEX_BITS) - 1);
}

/* Every width: the index comes back, whatever the payload below it. */
static void rv_wire_test_imm_index_all_bits(struct kunit *test)
{
	static const u32 payloads[] = { 0, 1, 0x5a5a5a5a, 0xffffffff };
	unsigned int bits, k;
	u32 idx, max, imm;

	for (bits = 0; bits <= RV_MAX_INDEX_BITS; bits++) {
		max = (1U << bits) - 1;
		for (idx = 0; idx <= max; idx += max / 7 + 1) {
			for (k = 0; k < ARRAY_SIZE(payloads); k++) {
				imm = bits ? (idx << (32 - bits)) |
					(payloads[k] >> bits) : payloads[k];
				KUNIT_EXPECT_EQ_MSG(test,
						    rv_imm_index(imm, bits),
						    idx, "bits %u imm %#x",
						    bits, imm);
			}
		}
		/* The largest index of the width. */
		imm = bits ? max << (32 - bits) : 0;
		KUNIT_EXPECT_EQ(test, rv_imm_index(imm, bits), max);
	}
}

static struct kunit_case rv_wire_test_cases[] = {
	KUNIT_CASE(rv_wire_test_req_roundtrip),
	KUNIT_CASE(rv_wire_test_req_byte_order),
	KUNIT_CASE(rv_wire_test_req_rejects),
	KUNIT_CASE(rv_wire_test_rej),
	KUNIT_CASE(rv_wire_test_imm_index),
	KUNIT_CASE(rv_wire_test_imm_index_all_bits),
	{}
};

static struct kunit_suite rv_wire_test_suite = {
	.name = "rv_wire",
	.test_cases = rv_wire_test_cases,
};

kunit_test_suite(rv_wire_test_suite);
