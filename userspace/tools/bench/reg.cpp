// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench reg: the cost of RV_IOCTL_REG_MEM when rv's MR cache hits and
// when it misses, and of ibv_reg_mr + ibv_dereg_mr on the same device.
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/mman.h>

#include <rv/error.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>

#include <toolkit/json.hpp>

#include "bench/bench_util.hpp"
#include "bench/command_line.hpp"
#include "bench/commands.hpp"
#include "bench/session.hpp"
#include "verbs.hpp"

namespace rvbench {

namespace {

using rv::bench::Summary;
using rv::bench::write_summary;

enum class MissMethod { evict, remap };

struct RegOptions {
	CommonOptions common;
	std::vector<std::uint64_t> sizes{4 << 10, 64 << 10, 1 << 20, 4 << 20};
	std::uint64_t iters = 10000;
	std::optional<std::uint64_t> miss_iters;	// default: iters
	std::uint64_t warmup = 100;
	double max_seconds = 0;				// 0: no limit
	std::uint32_t cache_mb = 0;
	MissMethod miss_method = MissMethod::evict;
	bool ibv = true;
};

void reg_usage(std::FILE *f)
{
	std::fprintf(f,
"Usage: %s reg [OPTION]...\n"
"Cost of RV_IOCTL_REG_MEM when the MR cache hits and when it misses, and of\n"
"ibv_reg_mr + ibv_dereg_mr on the same RDMA device (a user PD), per size.\n"
"Only the REG_MEM ioctl is timed: DEREG_MEM and whatever forces the next\n"
"miss run outside the clock. Medians and 99th percentiles are in ns.\n"
"\n"
"  -s, --sizes LIST       buffer sizes, comma-separated, K/M/G binary\n"
"                         (default 4K,64K,1M,4M)\n"
"  -n, --iters N          REG_MEM hits per size (default 10000)\n"
"      --miss-iters N     REG_MEM misses and ibv_reg_mr calls per size\n"
"                         (default: --iters)\n"
"      --miss-method M    how a miss is forced before each timed call:\n"
"                         evict  RV_IOCTL_EVICT of exactly that entry (default)\n"
"                         remap  munmap + mmap MAP_FIXED of the buffer (the\n"
"                                MMU notifier removes the entry)\n"
"      --warmup N         untimed calls before each measurement (default 100)\n"
"      --max-seconds S    end a measurement after S seconds; the calls made\n"
"                         are reported (default: no limit)\n"
"      --cache-mb N       ATTACH mr_cache_size in MB (default: module's)\n"
"      --no-ibv           skip ibv_reg_mr\n"
"\n%s"
"\n"
"Exit status: 0 on success, 1 on a failure (including a hit or miss count\n"
"that the cache statistics do not confirm), 2 on a usage error.\n",
		prog, common_help);
}

RegOptions parse_reg(int argc, char **argv)
{
	RegOptions o;
	std::vector<rv::cli::Option> options = {
		rv::cli::value("sizes", 's', [&](std::string_view v) {
			o.sizes = rv::cli::parse_size_list("--sizes", v);
		}),
		rv::cli::number("iters", 'n', o.iters, 1),
		rv::cli::value("miss-iters", 0, [&](std::string_view v) {
			o.miss_iters = rv::cli::parse_uint("--miss-iters", v, 1);
		}),
		rv::cli::number("warmup", 0, o.warmup),
		rv::cli::seconds("max-seconds", 0, o.max_seconds, min_seconds, 1e9),
		rv::cli::number("cache-mb", 0, o.cache_mb, 1, 1048576),
		rv::cli::value("miss-method", 0, [&](std::string_view v) {
			if (v == "evict")
				o.miss_method = MissMethod::evict;
			else if (v == "remap")
				o.miss_method = MissMethod::remap;
			else
				throw rv::cli::UsageError("invalid --miss-method '" + std::string(v) +
							  "' (evict or remap)");
		}),
		rv::cli::flag("no-ibv", 0, [&] { o.ibv = false; }),
	};
	parse_options(argc, argv, std::move(options), reg_usage, o.common);
	return o;
}

// Runs timed(i) for warmup calls untimed, then up to n timed ones (fewer
// once max_seconds have passed); timed() returns the ns of one call.
// Every call counts as one unit of meter, outside the clock.
template <typename F>
std::vector<std::uint64_t> measure(std::uint64_t warmup, std::uint64_t n,
				   double max_seconds, rv::bench::Progress &meter,
				   F &&timed)
{
	std::vector<std::uint64_t> samples;
	samples.reserve(n);
	for (std::uint64_t i = 0; i < warmup; i++) {
		(void)timed();
		meter.advance();
	}
	const std::uint64_t start = rv::bench::now_ns();
	const auto budget = static_cast<std::uint64_t>(max_seconds * 1e9);
	for (std::uint64_t i = 0; i < n; i++) {
		samples.push_back(timed());
		meter.advance();
		if (budget && rv::bench::now_ns() - start >= budget)
			break;
	}
	meter.drop(n - samples.size());
	return samples;
}

struct SizeResult {
	std::uint64_t size = 0;
	bool skipped = false;
	Summary floor, hit, miss, ibv, ibv_reg_only;
	bool have_ibv = false;
};

// REG_MEM with the argument refilled each time (the output overlays it);
// returns ns of the ioctl alone and the handle.
struct RegCall {
	rv::Device &dev;
	std::uint64_t addr, len;
	std::uint32_t access;
	std::uint64_t handle = 0;

	std::uint64_t operator()()
	{
		rv_mem_params p{};
		p.in.addr = addr;
		p.in.length = len;
		p.in.access = access;
		std::uint64_t t0 = rv::bench::now_ns();
		dev.ioctl(RV_IOCTL_REG_MEM, &p);
		std::uint64_t t1 = rv::bench::now_ns();
		handle = p.out.mr_handle;
		return t1 - t0;
	}

	void dereg() { dev.dereg_mem(handle, addr, len, access); }
};

void check_delta(const char *what, std::uint64_t got, std::uint64_t want,
		 std::uint64_t size)
{
	if (got != want)
		throw std::runtime_error(
			std::string("cache statistics: ") + what + " rose by " +
			std::to_string(got) + ", expected " + std::to_string(want) +
			" (size " + rv::bench::format_size(size) + ")");
}

// Hits of size: one miss to cache a buffer, then REG_MEM + DEREG_MEM of
// it, checked against the cache statistics.
Summary bench_hits(const RegOptions &o, Session &s, std::uint64_t size,
		   rv::bench::Progress &meter)
{
	constexpr std::uint32_t access = rv::access::psm3_recv;

	rv::Mapping buf = rv::Mapping::anonymous(size);
	std::memset(buf.data(), 0xa5, size);
	RegCall reg{s.dev, buf.addr(), size, access};
	const rv::CacheStats before = s.dev.cache_stats();
	(void)reg();
	reg.dereg();
	auto samples = measure(o.warmup, o.iters, o.max_seconds, meter, [&] {
		std::uint64_t ns = reg();
		reg.dereg();
		return ns;
	});
	const rv::CacheStats after = s.dev.cache_stats();
	check_delta("miss (hit loop)", after.miss - before.miss, 1, size);
	check_delta("hit", after.hit - before.hit, o.warmup + samples.size(),
		    size);
	// Leave nothing cached for the next measurement.
	(void)s.dev.evict_exact(buf.addr(), size, access);
	return rv::bench::summarize(std::move(samples));
}

// Misses of size, each forced by --miss-method before the timed call,
// checked against the cache statistics.
Summary bench_misses(const RegOptions &o, Session &s, std::uint64_t size,
		     rv::bench::Progress &meter)
{
	constexpr std::uint32_t access = rv::access::psm3_recv;
	const std::uint64_t miss_n = o.miss_iters.value_or(o.iters);

	rv::Mapping buf = rv::Mapping::anonymous(size);
	std::memset(buf.data(), 0x5a, size);
	const std::uint64_t addr = buf.addr();
	RegCall reg{s.dev, addr, size, access};
	const rv::CacheStats before = s.dev.cache_stats();
	std::uint64_t evicted = 0;
	auto samples = measure(o.warmup, miss_n, o.max_seconds, meter, [&] {
		if (o.miss_method == MissMethod::remap) {
			// New pages at the same address: the entry of
			// the previous call is invalidated.
			buf.unmap();
			buf = rv::Mapping::map(
				size, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
					MAP_POPULATE,
				-1, 0, reinterpret_cast<void *>(addr));
		}
		std::uint64_t ns = reg();
		reg.dereg();
		if (o.miss_method == MissMethod::evict) {
			auto ev = s.dev.evict_exact(addr, size, access);
			if (!ev || ev->count != 1)
				throw std::runtime_error(
					"EVICT exact did not evict the entry");
			evicted++;
		}
		return ns;
	});
	const rv::CacheStats after = s.dev.cache_stats();
	const std::uint64_t calls = o.warmup + samples.size();
	check_delta("miss", after.miss - before.miss, calls, size);
	check_delta("hit (miss loop)", after.hit - before.hit, 0, size);
	if (o.miss_method == MissMethod::evict)
		check_delta("evict", after.evict - before.evict, evicted,
			    size);
	(void)s.dev.evict_exact(addr, size, access);
	return rv::bench::summarize(std::move(samples));
}

// ibv_reg_mr + ibv_dereg_mr of size in a user PD of the same device: into
// r.ibv (both calls) and r.ibv_reg_only (ibv_reg_mr alone).
void bench_ibv(const RegOptions &o, ibv_pd *pd, std::uint64_t size,
	       rv::bench::Progress &meter, SizeResult &r)
{
	const std::uint64_t miss_n = o.miss_iters.value_or(o.iters);

	rv::Mapping buf = rv::Mapping::anonymous(size);
	std::memset(buf.data(), 0x3c, size);
	constexpr unsigned int ibv_access =
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	std::vector<std::uint64_t> reg_only;
	reg_only.reserve(miss_n);
	std::uint64_t done = 0;
	auto samples = measure(o.warmup, miss_n, o.max_seconds, meter, [&] {
		std::uint64_t t0 = rv::bench::now_ns();
		ibv_mr *mr = ibv_reg_mr(pd, buf.data(), size, ibv_access);
		std::uint64_t t1 = rv::bench::now_ns();
		if (!mr)
			rv::throw_errno(errno ? errno : ENOMEM, "ibv_reg_mr");
		int err = ibv_dereg_mr(mr);
		std::uint64_t t2 = rv::bench::now_ns();
		if (err)
			rv::throw_errno(err, "ibv_dereg_mr");
		if (++done > o.warmup)
			reg_only.push_back(t1 - t0);
		return t2 - t0;
	});
	r.ibv = rv::bench::summarize(std::move(samples));
	r.ibv_reg_only = rv::bench::summarize(std::move(reg_only));
	r.have_ibv = true;
}

// The floor under every hit: the cheapest attached ioctl, which copies
// out 112 bytes and looks nothing up.
Summary bench_floor(const RegOptions &o, Session &s, rv::bench::Progress &meter)
{
	return rv::bench::summarize(
		measure(o.warmup, o.iters, o.max_seconds, meter, [&] {
			rv_cache_stats_params_out st{};
			std::uint64_t t0 = rv::bench::now_ns();
			s.dev.ioctl(RV_IOCTL_GET_CACHE_STATS, &st);
			return rv::bench::now_ns() - t0;
		}));
}

SizeResult bench_size(const RegOptions &o, Session &s, ibv_pd *pd,
		      std::uint64_t size, rv::bench::Progress &meter,
		      const std::string &step)
{
	SizeResult r;
	r.size = size;

	if (size > s.attach.max_fmr_size) {
		r.skipped = true;
		return r;
	}

	const std::string name = "reg " + rv::bench::format_size(size) + step;

	// The floor again, just before the hits: both in the same state.
	meter.set_label(name + " floor");
	r.floor = bench_floor(o, s, meter);
	meter.set_label(name + " hits");
	r.hit = bench_hits(o, s, size, meter);
	progress(o.common, rv::bench::format_size(size) + ": hits done");

	meter.set_label(name + " misses");
	r.miss = bench_misses(o, s, size, meter);
	progress(o.common, rv::bench::format_size(size) + ": misses done");

	if (pd) {
		meter.set_label(name + " ibv_reg_mr");
		bench_ibv(o, pd, size, meter, r);
		progress(o.common, rv::bench::format_size(size) + ": ibv_reg_mr done");
	}
	return r;
}

const char *miss_method_name(MissMethod m)
{
	return m == MissMethod::evict ? "evict_exact" : "remap";
}

const char *miss_method_text(MissMethod m)
{
	return m == MissMethod::evict
		? "RV_IOCTL_EVICT of the entry after each call (untimed)"
		: "munmap + mmap MAP_FIXED of the buffer before each call "
		  "(untimed)";
}

std::string reg_json(const RegOptions &o, const Session &s,
		     const std::vector<SizeResult> &results,
		     const rv::CacheStats &stats, const Summary &floor)
{
	rv::json::Writer w;

	w.begin_object()
		.member("command", "reg")
		.member("rv_device", o.common.rv_path)
		.member("device", s.device)
		.member("port", s.port);
	w.key("abi").begin_object()
		.member("major", s.cap.abi.major)
		.member("minor", s.cap.abi.minor)
		.end_object();
	w.key("attach").begin_object()
		.member("rv_index", s.attach.rv_index)
		.member("mr_cache_size_mb", s.attach.mr_cache_size)
		.member("max_fmr_size", s.attach.max_fmr_size)
		.end_object();
	w.member("timed", "RV_IOCTL_REG_MEM ioctl only")
		.member("miss_method", miss_method_name(o.miss_method))
		.member("ibv_timed", o.ibv ? "ibv_reg_mr + ibv_dereg_mr" : "skipped")
		.member("warmup", o.warmup)
		.member("iters", o.iters)
		.member("miss_iters", o.miss_iters.value_or(o.iters));
	if (o.max_seconds > 0)
		w.member("max_seconds", o.max_seconds);
	else
		w.member("max_seconds", nullptr);

	w.key("ioctl_floor");
	write_summary(w, floor);
	w.key("results").begin_array();
	for (const auto &r : results) {
		w.begin_object().member("size", r.size);
		if (r.skipped) {
			w.member("skipped", "larger than max_fmr_size").end_object();
			continue;
		}
		w.key("hit");
		write_summary(w, r.hit);
		w.key("miss");
		write_summary(w, r.miss);
		if (r.have_ibv) {
			w.key("ibv_reg_mr");
			write_summary(w, r.ibv);
			w.key("ibv_reg_mr_only");
			write_summary(w, r.ibv_reg_only);
		}
		w.key("ioctl_floor");
		write_summary(w, r.floor);
		w.member("hit_floor_ratio", rv::bench::ratio(r.hit.median, r.floor.median));
		w.member("hit_miss_ratio", rv::bench::ratio(r.hit.median, r.miss.median));
		if (r.have_ibv)
			w.member("hit_ibv_ratio",
				 rv::bench::ratio(r.hit.median, r.ibv.median));
		w.end_object();
	}
	w.end_array();

	w.key("cache_stats").begin_object()
		.member("hit", stats.hit)
		.member("miss", stats.miss)
		.member("full", stats.full)
		.member("failed", stats.failed)
		.member("evict", stats.evict)
		.member("remove", stats.remove)
		.member("max_cache_size", stats.max_cache_size)
		.end_object();
	w.end_object();
	return w.str() + "\n";
}

std::string fmt_ratio(double r)
{
	if (!std::isfinite(r))
		return "-";
	char buf[32];
	std::snprintf(buf, sizeof(buf), "%.4f", r);
	return buf;
}

std::string reg_table(const RegOptions &o, const Session &s,
		      const std::vector<SizeResult> &results,
		      const Summary &floor)
{
	std::string out;
	char line[256];

	std::snprintf(line, sizeof(line),
		      "rvbench reg: %s port %u via %s (ABI %s, rv_index %u, "
		      "cache %u MB, max_fmr_size %s)\n",
		      s.device.c_str(), s.port, o.common.rv_path.c_str(),
		      s.cap.abi.to_string().c_str(), s.attach.rv_index,
		      s.attach.mr_cache_size,
		      rv::bench::format_size(s.attach.max_fmr_size).c_str());
	out += line;
	out += "timed: the REG_MEM ioctl alone; misses forced by ";
	out += miss_method_text(o.miss_method);
	out += "\n";
	out += o.ibv ? "ibv: ibv_reg_mr + ibv_dereg_mr in a user PD, timed together\n"
		     : "ibv: skipped\n";
	std::snprintf(line, sizeof(line),
		      "calls per size: %" PRIu64 " hits, %" PRIu64
		      " misses%s, after %" PRIu64 " untimed each%s\n\n",
		      o.iters, o.miss_iters.value_or(o.iters),
		      o.ibv ? " and ibv_reg_mr" : "", o.warmup,
		      o.max_seconds > 0 ? "; at most --max-seconds each" : "");
	out += line;

	std::snprintf(line, sizeof(line),
		      "%9s %17s %9s %9s %10s %10s %10s %10s %9s %9s %9s %10s\n", "size",
		      "calls h/m/ibv", "hit med", "hit p99", "miss med",
		      "miss p99", "ibv med", "ibv p99", "hit/miss", "hit/ibv",
		      "floor med", "hit/floor");
	out += line;
	for (const auto &r : results) {
		std::string size = rv::bench::format_size(r.size);
		if (r.skipped) {
			std::snprintf(line, sizeof(line),
				      "%9s skipped: larger than max_fmr_size\n",
				      size.c_str());
			out += line;
			continue;
		}
		std::string calls = std::to_string(r.hit.count) + "/" +
				    std::to_string(r.miss.count) + "/" +
				    (r.have_ibv ? std::to_string(r.ibv.count) : "-");
		auto num = [](bool have, std::uint64_t v) {
			return have ? std::to_string(v) : std::string("-");
		};
		std::snprintf(line, sizeof(line),
			      "%9s %17s %9" PRIu64 " %9" PRIu64 " %10" PRIu64
			      " %10" PRIu64 " %10s %10s %9s %9s %9" PRIu64 " %10s\n",
			      size.c_str(), calls.c_str(), r.hit.median, r.hit.p99,
			      r.miss.median, r.miss.p99,
			      num(r.have_ibv, r.ibv.median).c_str(),
			      num(r.have_ibv, r.ibv.p99).c_str(),
			      fmt_ratio(rv::bench::ratio(r.hit.median, r.miss.median)).c_str(),
			      r.have_ibv ? fmt_ratio(rv::bench::ratio(
						   r.hit.median, r.ibv.median)).c_str()
					 : "-",
			      r.floor.median,
			      fmt_ratio(rv::bench::ratio(r.hit.median, r.floor.median)).c_str());
		out += line;
	}
	out += "(times in ns; ratios of medians; floor: GET_CACHE_STATS, the cheapest\n"
	       " attached ioctl, timed just before each size's hits)\n";
	std::snprintf(line, sizeof(line),
		      "ioctl floor (GET_CACHE_STATS), first: median %" PRIu64
		      " p99 %" PRIu64 " ns over %zu calls\n",
		      floor.median, floor.p99, floor.count);
	out += line;
	return out;
}

} // namespace

int run_reg(int argc, char **argv)
{
	const RegOptions o = parse_reg(argc, argv);

	Session s = open_session(o.common, o.cache_mb);
	progress(o.common, "attached to " + s.device + " port " +
				   std::to_string(s.port) + " as rv_index " +
				   std::to_string(s.attach.rv_index));

	rv::verbs::Context ctx;
	rv::verbs::Pd pd;
	if (o.ibv) {
		ctx = rv::verbs::open_device(s.device);
		pd = rv::verbs::alloc_pd(*ctx);
	}

	// Progress: every call of every measurement, sizes over max_fmr_size
	// (skipped) aside.
	const std::uint64_t miss_n = o.miss_iters.value_or(o.iters);
	std::uint64_t calls = o.warmup + o.iters;
	for (std::uint64_t size : o.sizes)
		if (size <= s.attach.max_fmr_size)
			calls += 2 * (o.warmup + o.iters) +
				 (o.warmup + miss_n) * (o.ibv ? 2 : 1);
	rv::bench::Progress meter(progress_sink(o.common), calls, "calls", false,
				 o.common.progress_interval_ns);

	meter.set_label("reg ioctl floor");
	const rv::bench::Summary floor = bench_floor(o, s, meter);

	std::vector<SizeResult> results;
	for (std::size_t k = 0; k < o.sizes.size(); k++)
		results.push_back(bench_size(
			o, s, pd.get(), o.sizes[k], meter,
			" (" + std::to_string(k + 1) + "/" +
				std::to_string(o.sizes.size()) + ")"));
	meter.finish("reg done");

	const rv::CacheStats stats = s.dev.cache_stats();
	std::string out = o.common.json ? reg_json(o, s, results, stats, floor)
					: reg_table(o, s, results, floor);
	return print(out);
}

} // namespace rvbench
