// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <gtest/gtest.h>

#include <cmath>

#include "bench/bench_util.hpp"

using namespace rv::bench;

TEST(BenchUtil, ParseSize)
{
	EXPECT_EQ(parse_size("4096"), 4096u);
	EXPECT_EQ(parse_size("4K"), 4096u);
	EXPECT_EQ(parse_size("4k"), 4096u);
	EXPECT_EQ(parse_size("4KiB"), 4096u);
	EXPECT_EQ(parse_size("64KB"), 65536u);
	EXPECT_EQ(parse_size("1M"), 1048576u);
	EXPECT_EQ(parse_size("4MiB"), 4194304u);
	EXPECT_EQ(parse_size("2G"), 2147483648u);
	EXPECT_EQ(parse_size("100B"), 100u);
	for (const char *bad : {"", "K", "0", "0K", "-1", "4X", "4KX", "4 K",
				"4Kib2", "99999999999999999999", "17179869184G"})
		EXPECT_FALSE(parse_size(bad)) << bad;
}

TEST(BenchUtil, ParseSizeList)
{
	auto v = parse_size_list("4K,64K,1M,4M");
	ASSERT_TRUE(v);
	EXPECT_EQ(*v, (std::vector<std::uint64_t>{4096, 65536, 1 << 20, 4 << 20}));
	EXPECT_EQ(parse_size_list("8K"), (std::vector<std::uint64_t>{8192}));
	for (const char *bad : {"", ",", "4K,", ",4K", "4K,,8K", "4K;8K"})
		EXPECT_FALSE(parse_size_list(bad)) << bad;
}

TEST(BenchUtil, ParseCount)
{
	EXPECT_EQ(parse_count("10000"), 10000u);
	EXPECT_EQ(parse_count("0", 0), 0u);
	EXPECT_FALSE(parse_count("0"));
	EXPECT_FALSE(parse_count("+5"));
	EXPECT_FALSE(parse_count("5x"));
	EXPECT_FALSE(parse_count("256", 1, 255));
}

TEST(BenchUtil, FormatSize)
{
	EXPECT_EQ(format_size(100), "100 B");
	EXPECT_EQ(format_size(4096), "4 KiB");
	EXPECT_EQ(format_size(4 << 20), "4 MiB");
	EXPECT_EQ(format_size(1536 * 1024), "1.5 MiB");
	EXPECT_EQ(format_size(256ULL << 20), "256 MiB");
}

TEST(BenchUtil, PercentileNearestRank)
{
	std::vector<std::uint64_t> v;
	for (std::uint64_t i = 1; i <= 100; i++)
		v.push_back(i);
	EXPECT_EQ(percentile(v, 50), 50u);
	EXPECT_EQ(percentile(v, 99), 99u);
	EXPECT_EQ(percentile(v, 100), 100u);
	EXPECT_EQ(percentile(v, 0.5), 1u);
	EXPECT_EQ(percentile({}, 50), 0u);
	EXPECT_EQ(percentile({7}, 99), 7u);
	EXPECT_EQ(percentile({1, 2, 3}, 50), 2u);
	EXPECT_EQ(percentile({1, 2, 3, 4}, 50), 2u);
}

TEST(BenchUtil, Summarize)
{
	Summary s = summarize({5, 1, 4, 2, 3});
	EXPECT_EQ(s.count, 5u);
	EXPECT_EQ(s.min, 1u);
	EXPECT_EQ(s.max, 5u);
	EXPECT_EQ(s.median, 3u);
	EXPECT_EQ(s.p99, 5u);
	EXPECT_DOUBLE_EQ(s.mean, 3.0);

	std::vector<std::uint64_t> big(10000, 100);
	for (int i = 0; i < 50; i++)
		big[static_cast<std::size_t>(i)] = 1000000;	// 0.5% outliers
	s = summarize(big);
	EXPECT_EQ(s.median, 100u);
	EXPECT_EQ(s.p99, 100u);
	EXPECT_EQ(s.max, 1000000u);

	EXPECT_EQ(summarize({}).count, 0u);
}

TEST(BenchUtil, Ratio)
{
	EXPECT_DOUBLE_EQ(ratio(1, 4), 0.25);
	EXPECT_TRUE(std::isnan(ratio(1, 0)));
}

TEST(BenchUtil, Clock)
{
	std::uint64_t a = now_ns();
	std::uint64_t b = now_ns();
	EXPECT_GE(b, a);
	EXPECT_GT(a, 0u);
}
