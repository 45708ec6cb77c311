// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Pieces of rvbench that need no device: statistics of samples,
// formatting, progress lines. Unit-tested on the host.
#ifndef RV_BENCH_UTIL_HPP
#define RV_BENCH_UTIL_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toolkit/json.hpp>

namespace rv::bench {

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

// s as a JSON object: calls, median_ns, p99_ns, min_ns, max_ns, mean_ns.
void write_summary(rv::json::Writer &w, const Summary &s);

// a / b, or NaN when b is 0.
[[nodiscard]] double ratio(std::uint64_t a, std::uint64_t b) noexcept;

// CLOCK_MONOTONIC in nanoseconds.
[[nodiscard]] std::uint64_t now_ns() noexcept;

// --- progress of long runs ----------------------------------------------

// --progress / --no-progress / neither (auto: only when stderr is a
// terminal).
enum class ProgressMode : std::uint8_t { automatic, on, off };

[[nodiscard]] constexpr bool progress_enabled(ProgressMode m,
					      bool stderr_is_tty) noexcept
{
	return m == ProgressMode::on || (m == ProgressMode::automatic && stderr_is_tty);
}

// "0.4 s", "42.0 s", "3 min 05 s", "1 h 02 min" (negative: as 0).
[[nodiscard]] std::string format_duration(double seconds);

// What one progress line says.
struct ProgressInfo {
	std::string_view label;		// what runs now: "bw 64 KiB (3/11)"
	std::uint64_t done = 0;		// units done of the whole run
	std::uint64_t total = 0;	// units of the whole run
	std::uint64_t elapsed_ns = 0;	// since the run started
	std::string_view unit = "calls";	// unless bytes
	bool bytes = false;		// units are bytes: KiB/MiB/GiB, MB/s
};

// "LABEL: DONE/TOTAL UNIT (P%), RATE UNIT/s, elapsed T, ETA T". Bytes are
// shown in the binary unit of the total ("120.0/352.0 MiB") and the rate in
// MB/s (10^6 bytes, as rvbench's tables). The percentage is rounded down
// (100% only when done reaches total). No rate while nothing is done or no
// time has passed, no ETA without a rate or once done reaches total.
[[nodiscard]] std::string format_progress(const ProgressInfo &p);

// Progress lines for a run of `total` units: advance() counts the units
// done and hands a format_progress() line to the sink when interval_ns
// have passed since the start or the last line (so a run shorter than the
// interval prints nothing). The clock is injectable for tests. A
// default-constructed Progress, or one without a sink, does nothing.
class Progress {
public:
	using Sink = std::function<void(const std::string &)>;
	using Clock = std::function<std::uint64_t()>;	// ns, monotonic
	static constexpr std::uint64_t default_interval_ns = 2'000'000'000;

	Progress() = default;
	Progress(Sink sink, std::uint64_t total, std::string unit, bool bytes,
		 std::uint64_t interval_ns = default_interval_ns,
		 Clock clock = nullptr);

	[[nodiscard]] bool enabled() const noexcept { return static_cast<bool>(sink_); }

	// What runs now; the label of the following lines.
	void set_label(std::string label) { label_ = std::move(label); }

	// n more units done; a line if one is due.
	void advance(std::uint64_t n = 1);

	// n units of the total will not be done after all (a measurement
	// that ended early).
	void drop(std::uint64_t n) noexcept;

	// A last line under label (the done/total so far, elapsed, no ETA)
	// if any line was printed before; nothing otherwise. Then does
	// nothing more.
	void finish(std::string_view label);

	[[nodiscard]] std::uint64_t done() const noexcept { return done_; }
	[[nodiscard]] std::uint64_t total() const noexcept { return total_; }
	[[nodiscard]] std::uint64_t lines() const noexcept { return lines_; }

private:
	void emit(std::string_view label, std::uint64_t t);

	Sink sink_;
	Clock clock_;
	std::string label_, unit_;
	bool bytes_ = false;
	std::uint64_t total_ = 0, done_ = 0;
	std::uint64_t interval_ns_ = default_interval_ns;
	std::uint64_t start_ = 0, last_ = 0;
	std::uint64_t lines_ = 0;
};

} // namespace rv::bench

#endif // RV_BENCH_UTIL_HPP
