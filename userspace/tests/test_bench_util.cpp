// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "bench/mr_chunks.hpp"

using namespace rv::bench;

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

// --- progress lines -----------------------------------------------------

TEST(BenchProgress, Enabled)
{
	EXPECT_TRUE(progress_enabled(ProgressMode::on, false));
	EXPECT_TRUE(progress_enabled(ProgressMode::on, true));
	EXPECT_FALSE(progress_enabled(ProgressMode::off, true));
	EXPECT_FALSE(progress_enabled(ProgressMode::off, false));
	EXPECT_TRUE(progress_enabled(ProgressMode::automatic, true));
	EXPECT_FALSE(progress_enabled(ProgressMode::automatic, false));
}

TEST(BenchProgress, FormatDuration)
{
	EXPECT_EQ(format_duration(0), "0.0 s");
	EXPECT_EQ(format_duration(-3), "0.0 s");
	EXPECT_EQ(format_duration(std::numeric_limits<double>::quiet_NaN()), "0.0 s");
	EXPECT_EQ(format_duration(0.44), "0.4 s");
	EXPECT_EQ(format_duration(42), "42.0 s");
	EXPECT_EQ(format_duration(59.9), "59.9 s");
	EXPECT_EQ(format_duration(59.96), "1 min 00 s");
	EXPECT_EQ(format_duration(185), "3 min 05 s");
	EXPECT_EQ(format_duration(3599.4), "59 min 59 s");
	EXPECT_EQ(format_duration(3600), "1 h 00 min");
	EXPECT_EQ(format_duration(3720), "1 h 02 min");
	EXPECT_EQ(format_duration(90000), "25 h 00 min");
}

TEST(BenchProgress, FormatCounts)
{
	ProgressInfo p;
	p.label = "reg 4 KiB (1/4) hits";
	p.done = 250;
	p.total = 1000;
	p.elapsed_ns = 2'000'000'000;
	EXPECT_EQ(format_progress(p),
		  "reg 4 KiB (1/4) hits: 250/1000 calls (25%), 125 calls/s, "
		  "elapsed 2.0 s, ETA 6.0 s");

	// Rounded down: 100% only at the end, and then no ETA.
	p.done = 999;
	EXPECT_EQ(format_progress(p),
		  "reg 4 KiB (1/4) hits: 999/1000 calls (99%), 500 calls/s, "
		  "elapsed 2.0 s, ETA 0.0 s");
	p.done = 1000;
	EXPECT_EQ(format_progress(p),
		  "reg 4 KiB (1/4) hits: 1000/1000 calls (100%), 500 calls/s, "
		  "elapsed 2.0 s");

	// Slow: a rate below 10 gets a decimal.
	p.label = "lat 8 B (1/1)";
	p.unit = "round trips";
	p.done = 3;
	p.total = 10;
	EXPECT_EQ(format_progress(p),
		  "lat 8 B (1/1): 3/10 round trips (30%), 1.5 round trips/s, "
		  "elapsed 2.0 s, ETA 4.7 s");

	// Nothing done, or no time passed: no rate, no ETA.
	p.done = 0;
	EXPECT_EQ(format_progress(p),
		  "lat 8 B (1/1): 0/10 round trips (0%), elapsed 2.0 s");
	p.done = 5;
	p.elapsed_ns = 0;
	EXPECT_EQ(format_progress(p),
		  "lat 8 B (1/1): 5/10 round trips (50%), elapsed 0.0 s");

	// No total: no percentage.
	p.total = 0;
	p.done = 0;
	EXPECT_EQ(format_progress(p), "lat 8 B (1/1): 0/0 round trips, elapsed 0.0 s");
}

TEST(BenchProgress, FormatBytes)
{
	ProgressInfo p;
	p.label = "bw 64 KiB (3/11)";
	p.bytes = true;
	p.done = 120ULL << 20;
	p.total = 352ULL << 20;
	p.elapsed_ns = 4'000'000'000;
	// 120 MiB in 4 s: 31.5 MB/s (10^6), the other 232 MiB in 7.7 s.
	EXPECT_EQ(format_progress(p),
		  "bw 64 KiB (3/11): 120.0/352.0 MiB (34%), 31.5 MB/s, "
		  "elapsed 4.0 s, ETA 7.7 s");

	// The unit follows the total.
	p.label = "bw";
	p.done = 1ULL << 30;
	p.total = 3ULL << 30;
	p.elapsed_ns = 100'000'000'000;
	EXPECT_EQ(format_progress(p),
		  "bw: 1.0/3.0 GiB (33%), 10.7 MB/s, elapsed 1 min 40 s, "
		  "ETA 3 min 20 s");
	p.done = 512;
	p.total = 1024;
	p.elapsed_ns = 1'000'000'000;
	EXPECT_EQ(format_progress(p),
		  "bw: 0.5/1.0 KiB (50%), 0.0 MB/s, elapsed 1.0 s, ETA 1.0 s");
	p.total = 1000;
	EXPECT_EQ(format_progress(p),
		  "bw: 512/1000 B (51%), 0.0 MB/s, elapsed 1.0 s, ETA 1.0 s");
}

namespace {

// A Progress on a clock the test moves, its lines collected.
struct Ticker {
	std::uint64_t now = 5'000'000'000;	// any start
	std::vector<std::string> lines;

	Progress make(std::uint64_t total, std::uint64_t interval_ns)
	{
		return Progress([this](const std::string &l) { lines.push_back(l); },
				total, "calls", false, interval_ns, [this] { return now; });
	}
};

constexpr std::uint64_t sec = 1'000'000'000;

} // namespace

TEST(BenchProgress, TicksEveryInterval)
{
	Ticker t;
	Progress p = t.make(100, 2 * sec);
	ASSERT_TRUE(p.enabled());
	p.set_label("floor");

	p.advance(10);			// at the start: no line
	t.now += 2 * sec - 1;
	p.advance(10);			// not quite 2 s
	EXPECT_TRUE(t.lines.empty());
	t.now += 1;
	p.advance(10);			// 2 s since the start
	ASSERT_EQ(t.lines.size(), 1u);
	EXPECT_EQ(t.lines[0], "floor: 30/100 calls (30%), 15 calls/s, elapsed 2.0 s, "
			      "ETA 4.7 s");

	t.now += sec;
	p.advance(5);			// 1 s since the last line
	EXPECT_EQ(t.lines.size(), 1u);
	t.now += sec;
	p.set_label("hits");
	p.advance(5);			// 2 s since the last line
	ASSERT_EQ(t.lines.size(), 2u);
	EXPECT_EQ(t.lines[1], "hits: 40/100 calls (40%), 10 calls/s, elapsed 4.0 s, "
			      "ETA 6.0 s");

	// A measurement ends early: its 10 calls leave the total.
	p.drop(10);
	EXPECT_EQ(p.total(), 90u);
	t.now += 5 * sec;
	p.advance(50);
	ASSERT_EQ(t.lines.size(), 3u);
	EXPECT_EQ(t.lines[2], "hits: 90/90 calls (100%), 10 calls/s, elapsed 9.0 s");

	// The last line, then nothing more.
	t.now += sec / 2;
	p.finish("reg done");
	ASSERT_EQ(t.lines.size(), 4u);
	EXPECT_EQ(t.lines[3], "reg done: 90/90 calls (100%), 9.5 calls/s, "
			      "elapsed 9.5 s");
	EXPECT_FALSE(p.enabled());
	t.now += 10 * sec;
	p.advance(1);
	p.finish("again");
	EXPECT_EQ(t.lines.size(), 4u);
	EXPECT_EQ(p.lines(), 4u);
}

TEST(BenchProgress, ShortRunPrintsNothing)
{
	Ticker t;
	Progress p = t.make(1000, 2 * sec);
	for (int i = 0; i < 1000; i++) {
		p.advance();
		t.now += 1000;		// 1 us a call: 1 ms in all
	}
	p.finish("done");
	EXPECT_TRUE(t.lines.empty());
	EXPECT_EQ(p.done(), 1000u);
}

TEST(BenchProgress, IntervalZeroTicksEveryStep)
{
	Ticker t;
	Progress p = t.make(3, 0);
	p.set_label("x");
	p.advance();
	p.advance();
	p.advance();
	p.finish("x done");
	ASSERT_EQ(t.lines.size(), 4u);
	EXPECT_EQ(t.lines[0], "x: 1/3 calls (33%), elapsed 0.0 s");
	EXPECT_EQ(t.lines[3], "x done: 3/3 calls (100%), elapsed 0.0 s");
}

TEST(BenchProgress, OffDoesNothing)
{
	Progress off;
	EXPECT_FALSE(off.enabled());
	off.advance(5);
	off.drop(1);
	off.finish("x");
	EXPECT_EQ(off.lines(), 0u);

	// No sink: off too, and the clock is never read.
	int reads = 0;
	Progress p(nullptr, 10, "calls", false, 0, [&] { return std::uint64_t(++reads); });
	EXPECT_FALSE(p.enabled());
	p.advance(3);
	p.finish("x");
	EXPECT_EQ(reads, 0);
}

TEST(BenchProgress, DropKeepsWhatIsDone)
{
	Ticker t;
	Progress p = t.make(10, 2 * sec);
	p.advance(8);
	p.drop(5);
	EXPECT_EQ(p.total(), 8u);
	p.drop(100);
	EXPECT_EQ(p.total(), 8u);
	// More done than planned: shown as the total.
	p.advance(4);
	t.now += 2 * sec;
	p.advance(0);
	ASSERT_EQ(t.lines.size(), 1u);
	EXPECT_EQ(t.lines[0], ": 12/12 calls (100%), 6.0 calls/s, elapsed 2.0 s");
}

// --- bench/mr_chunks.hpp ------------------------------------------------------

TEST(BenchMrChunks, ChunkIsMaxFmrSizeRoundedDown)
{
	EXPECT_EQ(mr_chunk(2093056), 1u << 20);	// soft-RoCE: 511 pages
	EXPECT_EQ(mr_chunk(256ULL << 20), 256ULL << 20);
	EXPECT_EQ(mr_chunk(3ULL << 20), 2ULL << 20);
	EXPECT_EQ(mr_chunk(4096), 4096u);
	EXPECT_EQ(mr_chunk(0), 0u);
	EXPECT_EQ(mr_chunks(64ULL << 20, 1 << 20), 64u);
	EXPECT_EQ(mr_chunks((64ULL << 20) + 1, 1 << 20), 65u);
	EXPECT_EQ(mr_chunks(4096, 1 << 20), 1u);
	EXPECT_EQ(mr_chunks(0, 1 << 20), 0u);
	EXPECT_EQ(mr_chunks(~0ULL, 1ULL << 63), 2u);
}

TEST(BenchMrChunks, PowerOfTwoSlotsAsInOneMr)
{
	const std::uint64_t chunk = 1 << 20;
	for (std::uint64_t size = 1; size <= chunk; size *= 2) {
		SCOPED_TRACE(size);
		const SlotLayout l{size, chunk};
		for (std::uint64_t j : {0ULL, 1ULL, 5ULL, 1023ULL})
			EXPECT_EQ(l.offset(j), j * size);
		EXPECT_EQ(l.end(7), 7 * size);
		EXPECT_EQ(l.fit(64ULL << 20), (64ULL << 20) / size);
		EXPECT_EQ(l.fit(3 * size + size - 1), 3u);
	}
}

TEST(BenchMrChunks, OtherSizesNeverSpanTwoChunks)
{
	const std::uint64_t chunk = 64 << 10;
	for (std::uint64_t size : {1ULL, 3ULL, 3000ULL, 5000ULL, 40000ULL, 65535ULL}) {
		SCOPED_TRACE(size);
		const SlotLayout l{size, chunk};
		const std::uint64_t buffer = 5 * chunk + 12345;
		const std::uint64_t n = l.fit(buffer);
		EXPECT_EQ(n, 5 * (chunk / size) + 12345 / size);
		EXPECT_LE(l.end(n), buffer);
		EXPECT_GT(l.end(n + 1), buffer);	// the next one would not fit
		for (std::uint64_t j = 0; j < n; j++) {
			ASSERT_EQ(l.offset(j) / chunk, (l.offset(j) + size - 1) / chunk) << j;
			if (j) {
				ASSERT_GE(l.offset(j), l.offset(j - 1) + size) << j;
			}
		}
	}
	// 3000 bytes: 21 slots per 64 KiB chunk, the 22nd starts the next.
	const SlotLayout l{3000, chunk};
	EXPECT_EQ(l.per_chunk(), 21u);
	EXPECT_EQ(l.offset(20), 60000u);
	EXPECT_EQ(l.offset(21), chunk);
	EXPECT_EQ(l.end(22), chunk + 3000);
	EXPECT_EQ(l.end(0), 0u);
}
