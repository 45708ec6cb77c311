// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "bench_util.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include <time.h>

namespace rv::bench {

std::optional<std::uint64_t> parse_size(std::string_view text) noexcept
{
	std::size_t digits = 0;
	while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
		digits++;
	if (!digits)
		return std::nullopt;

	std::uint64_t v = 0;
	auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, v);
	if (ec != std::errc() || ptr != text.data() + digits)
		return std::nullopt;

	std::string_view unit = text.substr(digits);
	unsigned shift = 0;
	if (!unit.empty()) {
		switch (unit.front()) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		case 'b': case 'B': shift = 0; break;
		default: return std::nullopt;
		}
		std::string_view rest = unit.substr(1);
		if (unit.front() == 'b' || unit.front() == 'B') {
			if (!rest.empty())
				return std::nullopt;
		} else if (!rest.empty() && rest != "B" && rest != "iB" &&
			   rest != "b" && rest != "ib") {
			return std::nullopt;
		}
	}
	if (!v || v > (std::numeric_limits<std::uint64_t>::max() >> shift))
		return std::nullopt;
	return v << shift;
}

std::optional<std::vector<std::uint64_t>> parse_size_list(std::string_view text)
{
	std::vector<std::uint64_t> out;

	for (;;) {
		std::size_t comma = text.find(',');
		auto v = parse_size(text.substr(0, comma));
		if (!v)
			return std::nullopt;
		out.push_back(*v);
		if (comma == std::string_view::npos)
			return out;
		text.remove_prefix(comma + 1);
	}
}

std::optional<std::uint64_t> parse_count(std::string_view text, std::uint64_t min,
					 std::uint64_t max) noexcept
{
	if (text.empty() || text.front() < '0' || text.front() > '9')
		return std::nullopt;
	std::uint64_t v = 0;
	auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
	if (ec != std::errc() || ptr != text.data() + text.size() || v < min ||
	    v > max)
		return std::nullopt;
	return v;
}

std::string format_size(std::uint64_t bytes)
{
	static constexpr const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	unsigned u = 0;
	std::uint64_t whole = bytes;

	while (u + 1 < std::size(units) && whole >= 1024) {
		whole /= 1024;
		u++;
	}
	if (u == 0)
		return std::to_string(bytes) + " B";

	std::uint64_t unit = std::uint64_t{1} << (10 * u);
	if (bytes % unit == 0)
		return std::to_string(bytes / unit) + " " + units[u];
	char buf[32];
	std::snprintf(buf, sizeof(buf), "%.1f %s",
		      static_cast<double>(bytes) / static_cast<double>(unit),
		      units[u]);
	return buf;
}

std::uint64_t percentile(const std::vector<std::uint64_t> &sorted, double p) noexcept
{
	if (sorted.empty())
		return 0;
	double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
	auto idx = static_cast<std::size_t>(std::max(rank, 1.0)) - 1;
	return sorted[std::min(idx, sorted.size() - 1)];
}

Summary summarize(std::vector<std::uint64_t> samples)
{
	Summary s;

	if (samples.empty())
		return s;
	std::sort(samples.begin(), samples.end());
	s.count = samples.size();
	s.min = samples.front();
	s.max = samples.back();
	s.median = percentile(samples, 50);
	s.p99 = percentile(samples, 99);
	long double sum = 0;
	for (auto v : samples)
		sum += static_cast<long double>(v);
	s.mean = static_cast<double>(sum / static_cast<long double>(samples.size()));
	return s;
}

double ratio(std::uint64_t a, std::uint64_t b) noexcept
{
	if (!b)
		return std::numeric_limits<double>::quiet_NaN();
	return static_cast<double>(a) / static_cast<double>(b);
}

std::uint64_t now_ns() noexcept
{
	timespec ts{};
	::clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL +
	       static_cast<std::uint64_t>(ts.tv_nsec);
}

} // namespace rv::bench
