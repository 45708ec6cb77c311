// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "bench_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <utility>

#include <time.h>

namespace rv::bench {

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

void write_summary(rv::json::Writer &w, const Summary &s)
{
	w.begin_object()
		.member("calls", s.count)
		.member("median_ns", s.median)
		.member("p99_ns", s.p99)
		.member("min_ns", s.min)
		.member("max_ns", s.max)
		.member("mean_ns", s.mean)
		.end_object();
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

// --- progress --------------------------------------------------------------

std::string format_duration(double seconds)
{
	char buf[48];

	if (!(seconds > 0))	// negative or NaN
		seconds = 0;
	if (seconds < 59.95) {
		std::snprintf(buf, sizeof(buf), "%.1f s", seconds);
		return buf;
	}
	const auto whole = static_cast<unsigned long long>(std::llround(seconds));
	if (whole < 3600)
		std::snprintf(buf, sizeof(buf), "%llu min %02llu s", whole / 60,
			      whole % 60);
	else
		std::snprintf(buf, sizeof(buf), "%llu h %02llu min", whole / 3600,
			      whole / 60 % 60);
	return buf;
}

namespace {

// done/total in the binary unit of total: "120.0/352.0 MiB", "512/1024 B".
std::string byte_pair(std::uint64_t done, std::uint64_t total)
{
	static constexpr const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	unsigned u = 0;
	char buf[96];

	while (u + 1 < std::size(units) && (total >> (10 * (u + 1))) > 0)
		u++;
	if (u == 0) {
		std::snprintf(buf, sizeof(buf), "%llu/%llu B",
			      static_cast<unsigned long long>(done),
			      static_cast<unsigned long long>(total));
		return buf;
	}
	const auto unit = static_cast<double>(std::uint64_t{1} << (10 * u));
	std::snprintf(buf, sizeof(buf), "%.1f/%.1f %s",
		      static_cast<double>(done) / unit,
		      static_cast<double>(total) / unit, units[u]);
	return buf;
}

std::string rate_text(double per_s)
{
	char buf[48];
	std::snprintf(buf, sizeof(buf), per_s >= 10 ? "%.0f" : "%.1f", per_s);
	return buf;
}

} // namespace

std::string format_progress(const ProgressInfo &p)
{
	std::string s(p.label);

	s += ": ";
	if (p.bytes) {
		s += byte_pair(p.done, p.total);
	} else {
		s += std::to_string(p.done) + "/" + std::to_string(p.total) + " ";
		s += p.unit;
	}
	if (p.total) {
		unsigned pct = 100;
		if (p.done < p.total)
			pct = static_cast<unsigned>(std::min(
				99.0, std::floor(100.0 * static_cast<double>(p.done) /
						 static_cast<double>(p.total))));
		s += " (" + std::to_string(pct) + "%)";
	}
	const double secs = static_cast<double>(p.elapsed_ns) / 1e9;
	double rate = 0;
	if (p.done && p.elapsed_ns) {
		rate = static_cast<double>(p.done) / secs;
		if (p.bytes) {
			char buf[48];
			std::snprintf(buf, sizeof(buf), ", %.1f MB/s", rate / 1e6);
			s += buf;
		} else {
			s += ", " + rate_text(rate) + " ";
			s += p.unit;
			s += "/s";
		}
	}
	s += ", elapsed " + format_duration(secs);
	if (rate > 0 && p.done < p.total)
		s += ", ETA " + format_duration(static_cast<double>(p.total - p.done) / rate);
	return s;
}

Progress::Progress(Sink sink, std::uint64_t total, std::string unit, bool bytes,
		   std::uint64_t interval_ns, Clock clock)
	: sink_(std::move(sink)), clock_(clock ? std::move(clock) : Clock(now_ns)),
	  unit_(std::move(unit)), bytes_(bytes), total_(total),
	  interval_ns_(interval_ns)
{
	if (sink_)
		start_ = last_ = clock_();
}

void Progress::advance(std::uint64_t n)
{
	if (!sink_)
		return;
	done_ += n;
	const std::uint64_t t = clock_();
	if (t - last_ >= interval_ns_)
		emit(label_, t);
}

void Progress::drop(std::uint64_t n) noexcept
{
	total_ = std::max(done_, total_ > n ? total_ - n : 0);
}

void Progress::finish(std::string_view label)
{
	if (sink_ && lines_)
		emit(label, clock_());
	sink_ = nullptr;
}

void Progress::emit(std::string_view label, std::uint64_t t)
{
	ProgressInfo p;
	p.label = label;
	p.done = done_;
	p.total = std::max(total_, done_);
	p.elapsed_ns = t - start_;
	p.unit = unit_;
	p.bytes = bytes_;
	last_ = t;
	lines_++;
	sink_(format_progress(p));
}

} // namespace rv::bench
