// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Pieces of rvbench that need no device: option values, statistics of
// samples, formatting. Unit-tested on the host.
#ifndef RV_BENCH_UTIL_HPP
#define RV_BENCH_UTIL_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::bench {

// "4096", "4K", "4k", "4KiB", "64KB", "1M", "1MiB", "2G": bytes, with
// binary multiples. nullopt for anything else, 0 or an overflow.
[[nodiscard]] std::optional<std::uint64_t> parse_size(std::string_view text) noexcept;

// Comma-separated parse_size() values, at least one, no empty items.
[[nodiscard]] std::optional<std::vector<std::uint64_t>>
parse_size_list(std::string_view text);

// A decimal count without sign; min and max bound it.
[[nodiscard]] std::optional<std::uint64_t>
parse_count(std::string_view text, std::uint64_t min = 1,
	    std::uint64_t max = UINT64_MAX) noexcept;

// "4 KiB", "1 MiB", "1.5 MiB", "100 B".
[[nodiscard]] std::string format_size(std::uint64_t bytes);

// Order statistics of a set of samples (nanoseconds here).
struct Summary {
	std::size_t count = 0;
	std::uint64_t min = 0;
	std::uint64_t median = 0;	// nearest rank, 50th percentile
	std::uint64_t p99 = 0;		// nearest rank, 99th percentile
	std::uint64_t max = 0;
	double mean = 0;
};

// The p-th percentile (0 < p <= 100) of sorted samples by the nearest-
// rank method: the smallest sample with at least p% of the samples at
// or below it. 0 for no samples.
[[nodiscard]] std::uint64_t percentile(const std::vector<std::uint64_t> &sorted,
				       double p) noexcept;

// Sorts samples and summarizes them.
[[nodiscard]] Summary summarize(std::vector<std::uint64_t> samples);

// a / b, or NaN when b is 0.
[[nodiscard]] double ratio(std::uint64_t a, std::uint64_t b) noexcept;

// CLOCK_MONOTONIC in nanoseconds.
[[nodiscard]] std::uint64_t now_ns() noexcept;

} // namespace rv::bench

#endif // RV_BENCH_UTIL_HPP
