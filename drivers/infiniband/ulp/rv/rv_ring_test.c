// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the event ring producer (rv_ring.c): layouts, wrap,
 * full ring, a header the process scribbled over, and the event counts.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "rv.h"

static struct rv_event_wc rv_ring_wc(u64 wr_id, u8 status, u32 len)
{
	struct rv_event_wc wc = {
		.status = status,
		.imm_data = 0x12345678,
		.wr_id = wr_id,
		.conn_handle = 7,
		.byte_len = len,
	};

	return wc;
}

static struct rv_ring_header *rv_ring_hdr(struct rv_ring *ring)
{
	return ring->buf;
}

static void rv_ring_test_exit(struct kunit *test)
{
	if (test->priv)
		rv_ring_free(test->priv);
}

static struct rv_ring *rv_ring_new(struct kunit *test, u32 num, u32 abi)
{
	struct rv_ring *ring = kunit_kzalloc(test, sizeof(*ring), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ring);
	KUNIT_ASSERT_EQ(test, rv_ring_init(ring, num, abi), 0);
	test->priv = ring;
	return ring;
}

#ifndef RV_UPSTREAM
static void rv_ring_test_stride(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rv_event_stride(RV_ABI_VERSION(1, 7)), 64U);
	KUNIT_EXPECT_EQ(test, rv_event_stride(RV_ABI_VERSION(1, 6)),
			(unsigned int)RV_EVENT_LEGACY_SIZE);
	KUNIT_EXPECT_EQ(test, rv_event_stride(RV_ABI_VERSION(1, 2)),
			(unsigned int)RV_EVENT_LEGACY_SIZE);
}
#endif

/* A ring of n entries holds n - 1; the rest is dropped and counted. */
static void rv_ring_test_full_and_wrap(struct kunit *test)
{
	struct rv_ring *ring = rv_ring_new(test, 4, RV_ABI_VERSION(1, 7));
	struct rv_ring_header *hdr = rv_ring_hdr(ring);
	struct rv_event_wc wc;
	u64 i;

	for (i = 0; i < 3; i++) {
		wc = rv_ring_wc(i, 0, 100);
		KUNIT_EXPECT_TRUE(test, rv_ring_post(ring, RV_WC_RDMA_WRITE, &wc));
	}
	KUNIT_EXPECT_EQ(test, hdr->tail, 3U);
	wc = rv_ring_wc(3, 0, 100);
	KUNIT_EXPECT_FALSE(test, rv_ring_post(ring, RV_WC_RDMA_WRITE, &wc));
	KUNIT_EXPECT_EQ(test, hdr->overflow_cnt, 1ULL);
	KUNIT_EXPECT_EQ(test, hdr->tail, 3U);

	/* The consumer took two: two more fit, and the tail wraps. */
	hdr->head = 2;
	for (i = 10; i < 12; i++) {
		wc = rv_ring_wc(i, 0, 100);
		KUNIT_EXPECT_TRUE(test, rv_ring_post(ring, RV_WC_RDMA_WRITE, &wc));
	}
	KUNIT_EXPECT_EQ(test, hdr->tail, 1U);
	KUNIT_EXPECT_EQ(test, hdr->entries[3].wc.wr_id, 10ULL);
	KUNIT_EXPECT_EQ(test, hdr->entries[0].wc.wr_id, 11ULL);
	KUNIT_EXPECT_EQ(test, hdr->entries[2].wc.wr_id, 2ULL);
	KUNIT_EXPECT_EQ(test, hdr->entries[0].event_type, RV_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, hdr->entries[0].wc.conn_handle, 7ULL);
	KUNIT_EXPECT_EQ(test, hdr->entries[0].wc.byte_len, 100U);
}

/*
 * The process owns the header and may write anything there: the kernel
 * keeps its own tail and overflow count and never writes outside the
 * entries.
 */
static void rv_ring_test_scribbled_header(struct kunit *test)
{
	struct rv_ring *ring = rv_ring_new(test, 4, RV_ABI_VERSION(1, 7));
	struct rv_ring_header *hdr = rv_ring_hdr(ring);
	struct rv_event_wc wc = rv_ring_wc(1, 0, 8);
	int i;

	hdr->head = 0xffffffff;
	hdr->tail = 0x7fffffff;
	hdr->overflow_cnt = 99;
	for (i = 0; i < 10; i++)
		rv_ring_post(ring, RV_WC_RECV_RDMA_WITH_IMM, &wc);
	KUNIT_EXPECT_LT(test, hdr->tail, 4U);
	KUNIT_EXPECT_LT(test, ring->tail, 4U);

	/* A plausible head: the ring is full at once, counted from 0. */
	hdr->head = ring->tail == 3 ? 0 : ring->tail + 1;
	KUNIT_EXPECT_FALSE(test, rv_ring_post(ring, RV_WC_RDMA_WRITE, &wc));
	KUNIT_EXPECT_EQ(test, hdr->overflow_cnt, 1ULL);
}

#ifndef RV_UPSTREAM
/* ABI 1.6 and older: packed 65-byte entries at their old offsets. */
static void rv_ring_test_legacy_layout(struct kunit *test)
{
	struct rv_ring *ring = rv_ring_new(test, 4, RV_ABI_VERSION(1, 6));
	struct rv_event_wc wc = rv_ring_wc(0x1122334455667788ULL, 5, 4096);
	const u8 *e1;
	u64 wr_id;
	u32 len, imm;

	KUNIT_EXPECT_EQ(test, ring->stride, (u32)RV_EVENT_LEGACY_SIZE);
	KUNIT_ASSERT_TRUE(test, rv_ring_post(ring, RV_WC_RDMA_WRITE, &wc));
	KUNIT_ASSERT_TRUE(test, rv_ring_post(ring, RV_WC_RECV_RDMA_WITH_IMM,
					     &wc));
	e1 = (const u8 *)ring->buf + sizeof(struct rv_ring_header) +
	     RV_EVENT_LEGACY_SIZE;
	KUNIT_EXPECT_EQ(test, e1[0], RV_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, e1[1], 5);
	memcpy(&imm, e1 + 4, sizeof(imm));
	memcpy(&wr_id, e1 + 9, sizeof(wr_id));
	memcpy(&len, e1 + 25, sizeof(len));
	KUNIT_EXPECT_EQ(test, imm, 0x12345678U);
	KUNIT_EXPECT_EQ(test, wr_id, 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, len, 4096U);
}
#endif

/* Event counts: every completion, whether it fits or there is no ring. */
static void rv_ring_test_stats(struct kunit *test)
{
	struct rv_ring *ring = rv_ring_new(test, 0, RV_ABI_VERSION(1, 7));
	struct rv_event_wc ok = rv_ring_wc(1, 0, 1000);
	struct rv_event_wc bad = rv_ring_wc(2, 12, 1000);

	KUNIT_EXPECT_FALSE(test, rv_ring_post(ring, RV_WC_RDMA_WRITE, &ok));
	rv_ring_post(ring, RV_WC_RDMA_WRITE, &ok);
	rv_ring_post(ring, RV_WC_RDMA_WRITE, &bad);
	rv_ring_post(ring, RV_WC_RECV_RDMA_WITH_IMM, &ok);
	rv_ring_post(ring, RV_WC_RECV_RDMA_WITH_IMM, &bad);
	KUNIT_EXPECT_EQ(test, ring->stats.send_write_cqe, 2ULL);
	KUNIT_EXPECT_EQ(test, ring->stats.send_write_cqe_fail, 1ULL);
	KUNIT_EXPECT_EQ(test, ring->stats.send_write_bytes, 2000ULL);
	KUNIT_EXPECT_EQ(test, ring->stats.recv_write_cqe, 1ULL);
	KUNIT_EXPECT_EQ(test, ring->stats.recv_write_cqe_fail, 1ULL);
	KUNIT_EXPECT_EQ(test, ring->stats.recv_write_bytes, 1000ULL);
}

static struct kunit_case rv_ring_test_cases[] = {
#ifndef RV_UPSTREAM
	KUNIT_CASE(rv_ring_test_stride),
#endif
	KUNIT_CASE(rv_ring_test_full_and_wrap),
	KUNIT_CASE(rv_ring_test_scribbled_header),
#ifndef RV_UPSTREAM
	KUNIT_CASE(rv_ring_test_legacy_layout),
#endif
	KUNIT_CASE(rv_ring_test_stats),
	{}
};

static struct kunit_suite rv_ring_test_suite = {
	.name = "rv_ring",
	.exit = rv_ring_test_exit,
	.test_cases = rv_ring_test_cases,
};

kunit_test_suite(rv_ring_test_suite);
