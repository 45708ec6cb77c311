// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of fast registration's arithmetic (rv_reg.c): the pages per
 * MR from the device and ATTACH, the largest MR, and the pages a range
 * touches, at the edges and across every offset within a page.
 */
#include <kunit/test.h>

#include "rv.h"

static struct ib_device_attr rv_reg_test_attrs(u32 pages)
{
	struct ib_device_attr attrs = {
		.device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS,
		.max_fast_reg_page_list_len = pages,
	};

	return attrs;
}

static void rv_reg_test_max_pages(struct kunit *test)
{
	struct ib_device_attr attrs = rv_reg_test_attrs(512);

	/* 0 asks for the device's; more than the device's is capped. */
	KUNIT_EXPECT_EQ(test, rv_reg_max_pages(&attrs, 0), 512U);
	KUNIT_EXPECT_EQ(test, rv_reg_max_pages(&attrs, 16), 16U);
	KUNIT_EXPECT_EQ(test, rv_reg_max_pages(&attrs, 2), 2U);
	KUNIT_EXPECT_EQ(test, rv_reg_max_pages(&attrs, 512), 512U);
	KUNIT_EXPECT_EQ(test, rv_reg_max_pages(&attrs, 1024), 512U);
	KUNIT_EXPECT_EQ(test, rv_reg_max_pages(&attrs, U32_MAX), 512U);

	attrs.max_fast_reg_page_list_len = U32_MAX;
	KUNIT_EXPECT_EQ(test, rv_reg_max_pages(&attrs, 0), U32_MAX);
	KUNIT_EXPECT_EQ(test, rv_reg_max_pages(&attrs, 1024), 1024U);

	/* No fast registration, or a page list too short to use. */
	attrs.max_fast_reg_page_list_len = 1;
	KUNIT_EXPECT_EQ(test, rv_reg_max_pages(&attrs, 0), 0U);
	attrs.max_fast_reg_page_list_len = 0;
	KUNIT_EXPECT_EQ(test, rv_reg_max_pages(&attrs, 0), 0U);
	attrs = rv_reg_test_attrs(512);
	attrs.device_cap_flags = 0;
	KUNIT_EXPECT_EQ(test, rv_reg_max_pages(&attrs, 0), 0U);
	KUNIT_EXPECT_EQ(test, rv_reg_max_pages(&attrs, 16), 0U);
}

static void rv_reg_test_max_fmr_size(struct kunit *test)
{
	const u64 big = U64_MAX;

	/* One page less than the page list. */
	KUNIT_EXPECT_EQ(test, rv_reg_max_fmr_size(512, big, big),
			511ULL * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, rv_reg_max_fmr_size(2, big, big),
			(u64)PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, rv_reg_max_fmr_size(U32_MAX, big, big),
			(u64)(U32_MAX - 1) << PAGE_SHIFT);
	/* The device's largest MR, the cache, whichever is smaller. */
	KUNIT_EXPECT_EQ(test, rv_reg_max_fmr_size(512, 65536, big), 65536ULL);
	KUNIT_EXPECT_EQ(test, rv_reg_max_fmr_size(512, big, 1 << 20),
			1ULL << 20);
	KUNIT_EXPECT_EQ(test, rv_reg_max_fmr_size(512, 4096, 1 << 20), 4096ULL);
	/* A device that gives no max_mr_size does not limit it. */
	KUNIT_EXPECT_EQ(test, rv_reg_max_fmr_size(512, 0, big),
			511ULL * PAGE_SIZE);
	/* Nothing to register with. */
	KUNIT_EXPECT_EQ(test, rv_reg_max_fmr_size(1, big, big), 0ULL);
	KUNIT_EXPECT_EQ(test, rv_reg_max_fmr_size(0, big, big), 0ULL);
	KUNIT_EXPECT_EQ(test, rv_reg_max_fmr_size(512, big, 0), 0ULL);
}

static void rv_reg_test_npages(struct kunit *test)
{
	const u64 p = PAGE_SIZE;

	KUNIT_EXPECT_EQ(test, rv_reg_npages(0, 1), 1ULL);
	KUNIT_EXPECT_EQ(test, rv_reg_npages(p - 1, 1), 1ULL);
	KUNIT_EXPECT_EQ(test, rv_reg_npages(p - 1, 2), 2ULL);
	KUNIT_EXPECT_EQ(test, rv_reg_npages(0, p), 1ULL);
	KUNIT_EXPECT_EQ(test, rv_reg_npages(1, p), 2ULL);
	KUNIT_EXPECT_EQ(test, rv_reg_npages(p, 3 * p), 3ULL);
	KUNIT_EXPECT_EQ(test, rv_reg_npages(p + 7, 3 * p), 4ULL);
	/* The top of the address space does not wrap. */
	KUNIT_EXPECT_EQ(test, rv_reg_npages(U64_MAX - p + 1, p), 1ULL);
	KUNIT_EXPECT_EQ(test, rv_reg_npages(U64_MAX, 1), 1ULL);
	KUNIT_EXPECT_EQ(test, rv_reg_npages(U64_MAX - p, p + 1), 2ULL);
}

/*
 * The promise of max_fmr_size: a range of up to it fits the page list at
 * every offset within a page; two bytes more need one page more.
 */
static void rv_reg_test_every_offset_fits(struct kunit *test)
{
	static const u32 lists[] = { 2, 3, 16, 511, 512, 1024 };
	unsigned int i;
	u64 off, max;

	for (i = 0; i < ARRAY_SIZE(lists); i++) {
		max = rv_reg_max_fmr_size(lists[i], U64_MAX, U64_MAX);
		for (off = 0; off < PAGE_SIZE; off++) {
			KUNIT_ASSERT_LE(test, rv_reg_npages(off, max),
					(u64)lists[i]);
			KUNIT_ASSERT_LE(test, rv_reg_npages(off, 1),
					(u64)lists[i]);
		}
		KUNIT_EXPECT_EQ(test, rv_reg_npages(PAGE_SIZE - 1, max + 2),
				(u64)lists[i] + 1);
	}
}

static struct kunit_case rv_reg_test_cases[] = {
	KUNIT_CASE(rv_reg_test_max_pages),
	KUNIT_CASE(rv_reg_test_max_fmr_size),
	KUNIT_CASE(rv_reg_test_npages),
	KUNIT_CASE(rv_reg_test_every_offset_fits),
	{}
};

static struct kunit_suite rv_reg_test_suite = {
	.name = "rv_reg",
	.test_cases = rv_reg_test_cases,
};

kunit_test_suite(rv_reg_test_suite);
