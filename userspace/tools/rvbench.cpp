// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench: micro-benchmarks of the rv module.
//
//	rvbench reg [--sizes 4K,64K,1M,4M] [--iters N] [--json]
//	rvbench bw  [--listen PORT | --connect HOST:PORT | --loopback] [--json]
//	rvbench lat [--listen PORT | --connect HOST:PORT | --loopback] [--json]
//
// Each subcommand is an entry of the command table below with its own
// option parser on top of the common options (--device, --port, --rv,
// --json, --help). `reg` works on one attached rv::Device; `bw` and `lat`
// (RDMA WRITE with immediate through rv's shared connections, between two
// processes each attached to its own device) are in bench/two_node.cpp.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <getopt.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rv/attach.hpp>
#include <rv/connection.hpp>
#include <rv/device.hpp>
#include <rv/error.hpp>
#include <rv/json.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>
#include <rv/rdma_sysfs.hpp>

#include "bench/bench_util.hpp"
#include "bench/oob.hpp"
#include "bench/two_node.hpp"
#include "bench/verbs.hpp"
#include "getopt_error.hpp"

namespace {

constexpr const char *prog = "rvbench";

using rv::bench::Summary;

// --- usage errors ----------------------------------------------------------

struct UsageError : std::exception {
	explicit UsageError(std::string m) : msg(std::move(m)) {}
	const char *what() const noexcept override { return msg.c_str(); }
	std::string msg;
};

// --- options shared by every command ----------------------------------------

struct CommonOptions {
	std::string rv_path{rv::Device::default_path};
	std::string device;	// RDMA device; empty: default_device()
	unsigned port = 1;
	std::string sysfs{rv::RdmaSysfs::default_root};
	bool json = false;
	bool verbose = false;
	rv::bench::ProgressMode progress = rv::bench::ProgressMode::automatic;
	std::uint64_t progress_interval_ns = rv::bench::Progress::default_interval_ns;
};

enum : int {
	opt_rv = 0x100,
	opt_port,
	opt_sysfs,
	opt_sizes,
	opt_iters,
	opt_miss_iters,
	opt_miss_method,
	opt_warmup,
	opt_max_seconds,
	opt_cache_mb,
	opt_no_ibv,
	opt_progress,
	opt_no_progress,
};

constexpr const char *common_help =
"Common options:\n"
"  -d, --device DEV   RDMA device (default: the first of $RV_NODES, else the\n"
"                     first device whose port has a RoCE v2 IPv4 GID)\n"
"      --port N       its port (default 1)\n"
"      --rv PATH      rv device node (default " RV_FILE_NAME ")\n"
"      --sysfs DIR    where the RDMA devices are (default\n"
"                     /sys/class/infiniband; for tests)\n"
"  -j, --json         one JSON object on stdout instead of a table\n"
"  -v, --verbose      each step (attach, connect, size done) on stderr\n"
"      --progress[=S] a progress line on stderr every S seconds (default 2)\n"
"                     of the run: done/total, rate, elapsed, ETA; by\n"
"                     default only when stderr is a terminal\n"
"      --no-progress  no progress lines, even on a terminal\n"
"  -h, --help         show the help of the command and exit\n";

#define COMMON_LONGOPTS                                                 \
	{"device", required_argument, nullptr, 'd'},                    \
	{"port", required_argument, nullptr, opt_port},                 \
	{"rv", required_argument, nullptr, opt_rv},                     \
	{"sysfs", required_argument, nullptr, opt_sysfs},               \
	{"json", no_argument, nullptr, 'j'},                            \
	{"verbose", no_argument, nullptr, 'v'},                         \
	{"progress", optional_argument, nullptr, opt_progress},         \
	{"no-progress", no_argument, nullptr, opt_no_progress},         \
	{"help", no_argument, nullptr, 'h'}
#define COMMON_SHORTOPTS ":d:jvh"

// The argument of option what as a count in [min, max]; a UsageError if
// it is not one.
std::uint64_t count_arg(const char *what, const std::string &arg,
			std::uint64_t min = 1, std::uint64_t max = UINT64_MAX)
{
	auto v = rv::bench::parse_count(arg, min, max);
	if (!v)
		throw UsageError(std::string("invalid ") + what + " '" + arg + "'");
	return *v;
}

// The argument of option what as a size (K/M/G binary).
std::uint64_t size_arg(const char *what, const std::string &arg)
{
	auto v = rv::bench::parse_size(arg);
	if (!v)
		throw UsageError(std::string("invalid ") + what + " '" + arg + "'");
	return *v;
}

// The argument of --sizes.
std::vector<std::uint64_t> size_list_arg(const std::string &arg)
{
	auto v = rv::bench::parse_size_list(arg);
	if (!v)
		throw UsageError("invalid --sizes '" + arg + "'");
	return *v;
}

// The argument of option what as seconds, more than 0 and at most max.
double seconds_arg(const char *what, const std::string &arg,
		   double max = std::numeric_limits<double>::max())
{
	char *end = nullptr;
	const double v = std::strtod(arg.c_str(), &end);
	if (arg.empty() || *end || !(v > 0) || !std::isfinite(v) || v > max)
		throw UsageError(std::string("invalid ") + what + " '" + arg + "'");
	return v;
}

// Handles a common option (true) or returns false.
bool common_option(int c, CommonOptions &o)
{
	switch (c) {
	case 'd':
		o.device = optarg;
		if (o.device.empty())
			throw UsageError("empty --device");
		return true;
	case opt_port:
		o.port = static_cast<unsigned>(count_arg("--port", optarg, 1, 255));
		return true;
	case opt_rv:
		o.rv_path = optarg;
		if (o.rv_path.empty())
			throw UsageError("empty --rv");
		return true;
	case opt_sysfs:
		o.sysfs = optarg;
		if (o.sysfs.empty())
			throw UsageError("empty --sysfs");
		return true;
	case 'j':
		o.json = true;
		return true;
	case 'v':
		o.verbose = true;
		return true;
	case opt_progress:
		o.progress = rv::bench::ProgressMode::on;
		if (optarg) {
			// 0: a line at every step (for tests).
			char *end = nullptr;
			const double v = std::strtod(optarg, &end);
			if (!*optarg || *end || !(v >= 0) || v > 86400)
				throw UsageError(std::string("invalid --progress '") +
						 optarg + "' (seconds)");
			o.progress_interval_ns = static_cast<std::uint64_t>(v * 1e9);
		}
		return true;
	case opt_no_progress:
		o.progress = rv::bench::ProgressMode::off;
		return true;
	default:
		return false;
	}
}

[[noreturn]] void bad_option(int c, char **argv)
{
	throw UsageError(rv::tools::getopt_error(c, argv));
}

// getopt_long over argv with the common options and the command's
// (shortopts, longopts): -h prints usage(stdout) and exits, a common
// option goes into common, any other to f(c, its argument or ""); an
// argument that is no option is a UsageError.
template <typename Usage, typename F>
void parse_options(int argc, char **argv, const char *shortopts,
		   const option *longopts, Usage &&usage, CommonOptions &common,
		   F &&f)
{
	const std::string opts = std::string(COMMON_SHORTOPTS) + shortopts;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, opts.c_str(), longopts, nullptr)) != -1) {
		if (c == 'h') {
			usage(stdout);
			std::exit(std::fflush(stdout) == 0 ? 0 : 1);
		}
		if (!common_option(c, common))
			f(c, std::string(optarg ? optarg : ""));
	}
	if (auto extra = rv::tools::extra_argument(argc, argv))
		throw UsageError(*extra);
}

// --- the session every command starts from ------------------------------

std::string default_device(const rv::RdmaSysfs &sysfs)
{
	if (const char *nodes = std::getenv("RV_NODES")) {
		std::istringstream in(nodes);
		std::string first;
		if (in >> first)
			return first;
	}
	for (const auto &d : sysfs.devices())
		if (!sysfs.roce_v2_ipv4_gids(d, 1).empty())
			return d;
	rv::throw_errno(ENODEV, "no RDMA device with a RoCE v2 IPv4 GID "
				"(use --device)");
}

struct Session {
	std::string device;
	unsigned port = 1;
	rv::Device dev;
	rv::Capability cap;
	rv::Attach attach;
};

// Opens the rv device, declares the current ABI and attaches to the port
// with PSM3's defaults (no event ring), mr_cache_size_mb 0 = default.
Session open_session(const CommonOptions &o, std::uint32_t mr_cache_size_mb)
{
	const rv::RdmaSysfs sysfs(o.sysfs);
	std::string device = o.device.empty() ? default_device(sysfs) : o.device;
	rv::AttachParams p = rv::AttachParams::for_roce(device, o.port, {}, sysfs);
	p.cq_entries = 0;
	p.mr_cache_size = mr_cache_size_mb;

	rv::Device dev(o.rv_path);
	rv::Capability cap = dev.capability();
	rv::Attach a = dev.attach(p);
	return Session{device, o.port, std::move(dev), cap, a};
}

void progress(const CommonOptions &o, const std::string &msg)
{
	if (o.verbose)
		std::fprintf(stderr, "%s: %s\n", prog, msg.c_str());
}

// Where the progress lines of a long run go: stderr, never stdout (which
// may carry --json); nullptr when they are not wanted.
rv::bench::Progress::Sink progress_sink(const CommonOptions &o)
{
	if (!rv::bench::progress_enabled(o.progress, ::isatty(STDERR_FILENO) == 1))
		return nullptr;
	return [](const std::string &line) {
		std::fprintf(stderr, "%s: %s\n", prog, line.c_str());
		std::fflush(stderr);
	};
}

// --- rvbench reg -----------------------------------------------------------

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
	static const option longopts[] = {
		COMMON_LONGOPTS,
		{"sizes", required_argument, nullptr, 's'},
		{"iters", required_argument, nullptr, 'n'},
		{"miss-iters", required_argument, nullptr, opt_miss_iters},
		{"miss-method", required_argument, nullptr, opt_miss_method},
		{"warmup", required_argument, nullptr, opt_warmup},
		{"max-seconds", required_argument, nullptr, opt_max_seconds},
		{"cache-mb", required_argument, nullptr, opt_cache_mb},
		{"no-ibv", no_argument, nullptr, opt_no_ibv},
		{nullptr, 0, nullptr, 0},
	};
	RegOptions o;

	auto on_option = [&](int c, const std::string &arg) {
		switch (c) {
		case 's':
			o.sizes = size_list_arg(arg);
			break;
		case 'n':
			o.iters = count_arg("--iters", arg);
			break;
		case opt_miss_iters:
			o.miss_iters = count_arg("--miss-iters", arg);
			break;
		case opt_warmup:
			o.warmup = count_arg("--warmup", arg, 0);
			break;
		case opt_max_seconds:
			o.max_seconds = seconds_arg("--max-seconds", arg);
			break;
		case opt_cache_mb:
			o.cache_mb = static_cast<std::uint32_t>(
				count_arg("--cache-mb", arg, 1, 1048576));
			break;
		case opt_miss_method:
			if (arg == "evict")
				o.miss_method = MissMethod::evict;
			else if (arg == "remap")
				o.miss_method = MissMethod::remap;
			else
				throw UsageError("invalid --miss-method '" + arg +
						 "' (evict or remap)");
			break;
		case opt_no_ibv:
			o.ibv = false;
			break;
		default:
			bad_option(c, argv);
		}
	};
	parse_options(argc, argv, "s:n:", longopts, reg_usage, o.common, on_option);
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
	Summary hit, miss, ibv, ibv_reg_only;
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

SizeResult bench_size(const RegOptions &o, Session &s, ibv_pd *pd,
		      std::uint64_t size, rv::bench::Progress &meter,
		      const std::string &step)
{
	constexpr std::uint32_t access = rv::access::psm3_recv;
	const std::uint64_t miss_n = o.miss_iters.value_or(o.iters);
	SizeResult r;
	r.size = size;

	if (size > s.attach.max_fmr_size) {
		r.skipped = true;
		return r;
	}

	const std::string name = "reg " + rv::bench::format_size(size) + step;

	// Hits: one miss to cache the buffer, then REG_MEM + DEREG_MEM.
	meter.set_label(name + " hits");
	{
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
		r.hit = rv::bench::summarize(std::move(samples));
		// Leave nothing cached for the next measurement.
		(void)s.dev.evict_exact(buf.addr(), size, access);
	}
	progress(o.common, rv::bench::format_size(size) + ": hits done");

	// Misses.
	meter.set_label(name + " misses");
	{
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
		r.miss = rv::bench::summarize(std::move(samples));
		(void)s.dev.evict_exact(addr, size, access);
	}
	progress(o.common, rv::bench::format_size(size) + ": misses done");

	// ibv_reg_mr + ibv_dereg_mr in a user PD of the same device.
	if (pd) {
		meter.set_label(name + " ibv_reg_mr");
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
		      "%9s %17s %9s %9s %10s %10s %10s %10s %9s %9s\n", "size",
		      "calls h/m/ibv", "hit med", "hit p99", "miss med",
		      "miss p99", "ibv med", "ibv p99", "hit/miss", "hit/ibv");
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
			      " %10" PRIu64 " %10s %10s %9s %9s\n",
			      size.c_str(), calls.c_str(), r.hit.median, r.hit.p99,
			      r.miss.median, r.miss.p99,
			      num(r.have_ibv, r.ibv.median).c_str(),
			      num(r.have_ibv, r.ibv.p99).c_str(),
			      fmt_ratio(rv::bench::ratio(r.hit.median, r.miss.median)).c_str(),
			      r.have_ibv ? fmt_ratio(rv::bench::ratio(
						   r.hit.median, r.ibv.median)).c_str()
					 : "-");
		out += line;
	}
	out += "(times in ns; ratios of medians)\n";
	std::snprintf(line, sizeof(line),
		      "ioctl floor (GET_CACHE_STATS): median %" PRIu64
		      " p99 %" PRIu64 " ns over %zu calls\n",
		      floor.median, floor.p99, floor.count);
	out += line;
	return out;
}

int run_reg(int argc, char **argv)
{
	const RegOptions o = parse_reg(argc, argv);

	Session s = open_session(o.common, o.cache_mb);
	progress(o.common, "attached to " + s.device + " port " +
				   std::to_string(s.port) + " as rv_index " +
				   std::to_string(s.attach.rv_index));

	rv::bench::verbs::Context ctx;
	rv::bench::verbs::Pd pd;
	if (o.ibv) {
		ctx = rv::bench::verbs::open_device(s.device);
		pd = rv::bench::verbs::alloc_pd(*ctx);
	}

	// Progress: every call of every measurement, sizes over max_fmr_size
	// (skipped) aside.
	const std::uint64_t miss_n = o.miss_iters.value_or(o.iters);
	std::uint64_t calls = o.warmup + o.iters;
	for (std::uint64_t size : o.sizes)
		if (size <= s.attach.max_fmr_size)
			calls += o.warmup + o.iters + (o.warmup + miss_n) * (o.ibv ? 2 : 1);
	rv::bench::Progress meter(progress_sink(o.common), calls, "calls", false,
				 o.common.progress_interval_ns);

	// The floor under every hit: the cheapest attached ioctl, which copies
	// out 112 bytes and looks nothing up.
	meter.set_label("reg ioctl floor");
	const rv::bench::Summary floor = rv::bench::summarize(
		measure(o.warmup, o.iters, o.max_seconds, meter, [&] {
			rv_cache_stats_params_out st{};
			std::uint64_t t0 = rv::bench::now_ns();
			s.dev.ioctl(RV_IOCTL_GET_CACHE_STATS, &st);
			return rv::bench::now_ns() - t0;
		}));

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
	if (std::fputs(out.c_str(), stdout) == EOF || std::fflush(stdout) != 0) {
		std::fprintf(stderr, "%s: write error: %s\n", prog,
			     std::strerror(errno));
		return 1;
	}
	return 0;
}

// --- rvbench bw / lat: transfers between two nodes -------------------------

// Where the other process is.
struct Endpoint {
	enum class Kind { unset, listen, connect, loopback } kind = Kind::unset;
	std::string host;		// listen: address ("" any); connect: peer
	std::uint16_t tcp_port = 0;
	std::string client_dev, server_dev;	// loopback
	bool threads = false;		// loopback in threads, not processes
};

struct TransferOptions {
	CommonOptions common;
	rv::bench::Test test = rv::bench::Test::bw;
	Endpoint ep;
	std::vector<std::uint64_t> sizes;
	std::optional<std::uint64_t> iters;
	std::uint64_t bytes = 32ULL << 20;	// bw: per size, unless --iters
	std::uint64_t warmup = 100;		// lat
	std::uint32_t window = 32;
	std::uint64_t buffer = 64ULL << 20;
	double timeout_s = 60;
	std::optional<rv::JobKey> job_key;
	std::uint8_t num_conn = 0;
	std::uint8_t index_bits = 9;
	std::optional<std::uint8_t> mtu;
	std::uint8_t packet_life_time = 16;
	bool yield = false;
};

constexpr std::uint64_t default_lat_iters = 1000;

std::vector<std::uint64_t> default_sizes(rv::bench::Test t)
{
	if (t == rv::bench::Test::lat)
		return {8};
	std::vector<std::uint64_t> v;
	for (std::uint64_t s = 4 << 10; s <= (4 << 20); s *= 2)
		v.push_back(s);
	return v;
}

void transfer_usage(std::FILE *f, rv::bench::Test t)
{
	const bool bw = t == rv::bench::Test::bw;
	std::fprintf(f,
"Usage: %s %s [--listen [HOST:]PORT | --connect HOST:PORT |\n"
"                  --loopback-nodes DEV_A,DEV_B | --loopback] [OPTION]...\n",
		prog, bw ? "bw" : "lat");
	if (bw)
		std::fprintf(f,
"Bandwidth and message rate of RDMA WRITE with immediate over rv's shared\n"
"connection between two nodes: the client writes, the server receives and\n"
"checks every message (a pattern derived from size and sequence number, in\n"
"a rotating slot of its buffer) and returns credits by writes of its own.\n"
"A message that does not check out makes the exit status 1.\n");
	else
		std::fprintf(f,
"Half round-trip latency of RDMA WRITE with immediate over rv's shared\n"
"connection: the client writes a ping, the server answers each one with a\n"
"pong as soon as its event arrives; both check every message. The time\n"
"is taken from before the ping's post to the pong's event, halved.\n");
	std::fprintf(f,
"\n"
"One process per node, each attached to its own RDMA device with the same\n"
"job key (the server hands its key out), joined by TCP for the setup: the\n"
"server (--listen) follows the plan the client (--connect) sends it.\n"
"\n"
"      --listen [HOST:]PORT  be the server: wait for one client on PORT\n"
"      --connect HOST:PORT   be the client of the server at HOST:PORT\n"
"      --loopback-nodes A,B  both in one go: the client on device A, the\n"
"                            server on device B in a forked child\n"
"      --loopback            --loopback-nodes with the first two of $RV_NODES\n"
"      --loopback-threads    run the loopback server in a thread of this\n"
"                            process instead (two /dev/rv files)\n");
	if (bw)
		std::fprintf(f,
"  -s, --sizes LIST          message sizes, K/M binary (default 4K,8K,...,4M)\n"
"  -n, --iters N             messages per size (default: --bytes / size)\n"
"      --bytes B             bytes per size (default 32M), at least 1 message\n"
"      --window N            writes in flight, 1..%u (default 32)\n"
"      --buffer B            bytes of each side's message buffer (default\n"
"                            64M): receive slots per size = B / size (at most\n"
"                            %u), send slots = B / size (at most --window)\n",
			     rv::bench::max_window, rv::bench::max_bw_slots);
	else
		std::fprintf(f,
"  -s, --sizes LIST          message sizes (default 8)\n"
"  -n, --iters N             timed round trips per size (default %llu)\n"
"      --warmup N            untimed round trips first (default 100)\n",
			     static_cast<unsigned long long>(default_lat_iters));
	std::fprintf(f,
"      --timeout S           setup steps, and any phase without progress,\n"
"                            fail after S seconds (default 60)\n"
"      --job-key HEX         the job key (32 hex digits; default: the\n"
"                            server's random one)\n"
"      --num-conn N          ATTACH num_conn, QPs per connection (default:\n"
"                            the module's)\n"
"      --index-bits N        ATTACH index_bits (default 9)\n"
"      --mtu BYTES           path MTU 256..4096 (default: the ports' active\n"
"                            MTU, the smaller of both)\n"
"      --pkt-lifetime N      path record packet_life_time (default 16: an ACK\n"
"                            timeout of about 0.5 s, for emulated machines)\n"
"      --poll MODE           between empty polls of the event ring: spin\n"
"                            (default) or yield (sched_yield(), which leaves\n"
"                            the CPU to the kernel's work on few CPUs)\n"
"\n%s"
"\n"
"The client prints the results (MB = 10^6 bytes; polls: turns of the\n"
"event-ring poll loop, empty: those that found nothing), with --json as one\n"
"object; a --listen server prints a summary of what it checked.\n"
"\n"
"Exit status: 0 on success, 1 on a failure or a wrong message, 2 on a usage\n"
"error.\n",
		common_help);
}

std::optional<rv::JobKey> parse_job_key(const std::string &s)
{
	auto b = rv::bench::oob::from_hex(s);
	rv::JobKey k{};
	if (!b || b->size() != k.size())
		return std::nullopt;
	std::copy(b->begin(), b->end(), k.begin());
	return k;
}

TransferOptions parse_transfer(int argc, char **argv, rv::bench::Test test)
{
	enum : int {
		opt_listen = 0x200, opt_connect, opt_loopback_nodes, opt_loopback,
		opt_loopback_threads, opt_bytes, opt_window, opt_buffer,
		opt_timeout, opt_job_key, opt_num_conn, opt_index_bits, opt_mtu,
		opt_pkt_lifetime, opt_lat_warmup, opt_poll,
	};
	static const option longopts[] = {
		COMMON_LONGOPTS,
		{"listen", required_argument, nullptr, opt_listen},
		{"connect", required_argument, nullptr, opt_connect},
		{"loopback-nodes", required_argument, nullptr, opt_loopback_nodes},
		{"loopback", no_argument, nullptr, opt_loopback},
		{"loopback-threads", no_argument, nullptr, opt_loopback_threads},
		{"sizes", required_argument, nullptr, 's'},
		{"iters", required_argument, nullptr, 'n'},
		{"bytes", required_argument, nullptr, opt_bytes},
		{"warmup", required_argument, nullptr, opt_lat_warmup},
		{"window", required_argument, nullptr, opt_window},
		{"buffer", required_argument, nullptr, opt_buffer},
		{"timeout", required_argument, nullptr, opt_timeout},
		{"job-key", required_argument, nullptr, opt_job_key},
		{"num-conn", required_argument, nullptr, opt_num_conn},
		{"index-bits", required_argument, nullptr, opt_index_bits},
		{"mtu", required_argument, nullptr, opt_mtu},
		{"pkt-lifetime", required_argument, nullptr, opt_pkt_lifetime},
		{"poll", required_argument, nullptr, opt_poll},
		{nullptr, 0, nullptr, 0},
	};
	const bool bw = test == rv::bench::Test::bw;
	TransferOptions o;
	o.test = test;
	o.sizes = default_sizes(test);
	bool loopback_threads = false;

	auto set_kind = [&](Endpoint::Kind k) {
		if (o.ep.kind != Endpoint::Kind::unset && o.ep.kind != k)
			throw UsageError("--listen, --connect and --loopback* "
					 "exclude each other");
		o.ep.kind = k;
	};
	auto only = [&](bool ok, const char *opt) {
		if (!ok)
			throw UsageError(std::string(opt) + " is not an option of " +
					 (bw ? "bw" : "lat"));
	};

	auto on_option = [&](int c, const std::string &arg) {
		switch (c) {
		case opt_listen: {
			auto hp = rv::bench::oob::parse_host_port(arg);
			if (!hp)
				throw UsageError("invalid --listen '" + arg + "'");
			set_kind(Endpoint::Kind::listen);
			o.ep.host = hp->first;
			o.ep.tcp_port = hp->second;
			break;
		}
		case opt_connect: {
			auto hp = rv::bench::oob::parse_host_port(arg);
			if (!hp || hp->first.empty() || !hp->second)
				throw UsageError("invalid --connect '" + arg +
						 "' (HOST:PORT)");
			set_kind(Endpoint::Kind::connect);
			o.ep.host = hp->first;
			o.ep.tcp_port = hp->second;
			break;
		}
		case opt_loopback_nodes: {
			const std::size_t comma = arg.find(',');
			if (comma == std::string::npos || !comma ||
			    comma + 1 == arg.size() ||
			    arg.find(',', comma + 1) != std::string::npos)
				throw UsageError("invalid --loopback-nodes '" + arg +
						 "' (DEV_A,DEV_B)");
			set_kind(Endpoint::Kind::loopback);
			o.ep.client_dev = arg.substr(0, comma);
			o.ep.server_dev = arg.substr(comma + 1);
			break;
		}
		case opt_loopback: {
			set_kind(Endpoint::Kind::loopback);
			std::istringstream in(std::getenv("RV_NODES") ? std::getenv("RV_NODES") : "");
			if (!(in >> o.ep.client_dev >> o.ep.server_dev))
				throw UsageError("--loopback needs two devices in "
						 "$RV_NODES (or use --loopback-nodes)");
			break;
		}
		case opt_loopback_threads:
			loopback_threads = true;
			break;
		case 's':
			o.sizes = size_list_arg(arg);
			for (auto s : o.sizes)
				if (s > (1ULL << 30))
					throw UsageError("--sizes: at most 1G");
			break;
		case 'n':
			o.iters = count_arg("--iters", arg);
			break;
		case opt_bytes:
			only(bw, "--bytes");
			o.bytes = size_arg("--bytes", arg);
			break;
		case opt_lat_warmup:
			only(!bw, "--warmup");
			o.warmup = count_arg("--warmup", arg, 0);
			break;
		case opt_window:
			only(bw, "--window");
			o.window = static_cast<std::uint32_t>(
				count_arg("--window", arg, 1, rv::bench::max_window));
			break;
		case opt_buffer:
			only(bw, "--buffer");
			o.buffer = size_arg("--buffer", arg);
			break;
		case opt_timeout:
			o.timeout_s = seconds_arg("--timeout", arg, 86400);
			break;
		case opt_job_key:
			o.job_key = parse_job_key(arg);
			if (!o.job_key)
				throw UsageError("invalid --job-key '" + arg +
						 "' (32 hex digits)");
			break;
		case opt_num_conn:
			o.num_conn = static_cast<std::uint8_t>(
				count_arg("--num-conn", arg, 1, RV_MAX_NUM_CONN));
			break;
		case opt_index_bits:
			o.index_bits = static_cast<std::uint8_t>(
				count_arg("--index-bits", arg, 1, RV_MAX_INDEX_BITS));
			break;
		case opt_mtu: {
			auto m = rv::ib_mtu_from_bytes(static_cast<unsigned>(
				count_arg("--mtu", arg, 256, 4096)));
			if (!m)
				throw UsageError("invalid --mtu '" + arg +
						 "' (256, 512, 1024, 2048 or 4096)");
			o.mtu = *m;
			break;
		}
		case opt_pkt_lifetime:
			o.packet_life_time = static_cast<std::uint8_t>(
				count_arg("--pkt-lifetime", arg, 0, 31));
			break;
		case opt_poll:
			if (arg == "spin")
				o.yield = false;
			else if (arg == "yield")
				o.yield = true;
			else
				throw UsageError("invalid --poll '" + arg +
						 "' (spin or yield)");
			break;
		default:
			bad_option(c, argv);
		}
	};
	auto usage = [test](std::FILE *f) { transfer_usage(f, test); };
	parse_options(argc, argv, "s:n:", longopts, usage, o.common, on_option);
	if (o.ep.kind == Endpoint::Kind::unset)
		throw UsageError("say --listen, --connect, --loopback-nodes or --loopback");
	if (loopback_threads) {
		if (o.ep.kind != Endpoint::Kind::loopback)
			throw UsageError("--loopback-threads goes with --loopback-nodes "
					 "or --loopback");
		o.ep.threads = true;
	}
	if (o.ep.kind == Endpoint::Kind::loopback && !o.common.device.empty())
		throw UsageError("--device does not go with --loopback*: the nodes "
				 "name the devices");
	if (o.ep.kind == Endpoint::Kind::loopback &&
	    o.ep.client_dev == o.ep.server_dev)
		throw UsageError("the loopback nodes must be two devices");
	if (bw && o.buffer < *std::max_element(o.sizes.begin(), o.sizes.end()))
		throw UsageError("--buffer is smaller than the largest size");
	return o;
}

rv::bench::Plan make_plan(const TransferOptions &o)
{
	rv::bench::Plan p;
	p.test = o.test;
	p.sizes = o.sizes;
	p.warmup = o.test == rv::bench::Test::lat ? o.warmup : 0;
	p.window = o.window;
	p.buffer = o.buffer;
	for (std::uint64_t s : o.sizes) {
		if (o.iters)
			p.counts.push_back(*o.iters);
		else if (o.test == rv::bench::Test::lat)
			p.counts.push_back(default_lat_iters);
		else
			p.counts.push_back(std::max<std::uint64_t>(1, o.bytes / s));
	}
	return p;
}

// role: "client" or "server"; show_progress: this process prints the
// progress lines of the run (not a loopback server: its client does).
rv::bench::NodeConfig node_config(const TransferOptions &o, const std::string &device,
				  const char *role, bool show_progress = true)
{
	rv::bench::NodeConfig c;
	c.rv_path = o.common.rv_path;
	c.port = o.common.port;
	c.sysfs = o.common.sysfs;
	c.device = device.empty() ? default_device(rv::RdmaSysfs(o.common.sysfs))
				  : device;
	c.num_conn = o.num_conn;
	c.index_bits = o.index_bits;
	c.mtu = o.mtu;
	c.packet_life_time = o.packet_life_time;
	c.timeout_s = o.timeout_s;
	c.yield = o.yield;
	c.job_key = o.job_key;
	if (show_progress)
		c.progress = progress_sink(o.common);
	c.progress_interval_ns = o.common.progress_interval_ns;
	if (o.common.verbose) {
		const std::string who = role;
		c.log = [who](const std::string &m) {
			std::fprintf(stderr, "%s: %s: %s\n", prog, who.c_str(), m.c_str());
		};
	}
	return c;
}

std::chrono::milliseconds ms_of(double s)
{
	return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

// --- output ---

void write_node(rv::json::Writer &w, const rv::bench::NodeInfo &n)
{
	w.begin_object()
		.member("device", n.device)
		.member("port", n.port)
		.member("ip", rv::format_ipv4(n.ip))
		.member("gid", rv::format_gid(n.gid))
		.member("gid_index", n.gid_index)
		.member("rv_index", n.rv_index)
		.member("index_bits", n.index_bits)
		.member("q_depth", n.q_depth)
		.member("port_mtu", rv::ib_mtu_to_bytes(n.mtu))
		.end_object();
}

const char *mode_name(const Endpoint &ep)
{
	switch (ep.kind) {
	case Endpoint::Kind::loopback:
		return ep.threads ? "loopback-threads" : "loopback-fork";
	case Endpoint::Kind::listen:
		return "server";
	default:
		return "client";
	}
}

template <typename T>
void member_opt(rv::json::Writer &w, std::string_view k, const std::optional<T> &v)
{
	if (v)
		w.member(k, *v);
	else
		w.member(k, nullptr);
}

std::string transfer_json(const TransferOptions &o, const rv::bench::ClientReport &r)
{
	const bool bw = o.test == rv::bench::Test::bw;
	rv::json::Writer w;

	w.begin_object()
		.member("command", bw ? "bw" : "lat")
		.member("mode", mode_name(o.ep))
		.member("rv_device", o.common.rv_path);
	w.key("abi").begin_object()
		.member("major", r.abi.major)
		.member("minor", r.abi.minor)
		.end_object();
	w.key("local");
	write_node(w, r.self);
	w.key("peer");
	write_node(w, r.peer);
	w.member("path_mtu", rv::ib_mtu_to_bytes(r.path_mtu))
		.member("num_conn", r.conn.num_conn)
		.member("connect_us", r.connect_ns / 1000);
	if (bw)
		w.member("window", r.plan.window).member("buffer", r.plan.buffer);
	else
		w.member("warmup", r.plan.warmup);

	w.key("results").begin_array();
	for (const auto &b : r.bw) {
		w.begin_object()
			.member("size", b.size)
			.member("messages", b.messages)
			.member("bytes", b.bytes)
			.member("seconds", b.seconds())
			.member("mb_per_s", b.mb_per_s())
			.member("mmsg_per_s", b.mmsg_per_s())
			.member("window", b.window)
			.member("slots", b.slots)
			.member("post_retries", b.post_retries)
			.member("sender_polls", b.polls)
			.member("sender_empty_polls", b.empty_polls)
			.member("receiver_polls", b.peer_polls)
			.member("receiver_empty_polls", b.peer_empty_polls)
			.member("receiver_mb_per_s", b.peer_mb_per_s())
			.member("credits", b.credits)
			.member("verified", b.verified)
			.member("mismatches", b.mismatches);
		if (!b.first_mismatch.empty())
			w.member("first_mismatch", b.first_mismatch);
		member_opt(w, "sender_rcvd_pkts", b.rcvd_pkts);
		member_opt(w, "receiver_rcvd_pkts", b.peer_rcvd_pkts);
		w.end_object();
	}
	for (const auto &l : r.lat) {
		w.begin_object()
			.member("size", l.size)
			.member("iters", l.iters)
			.member("warmup", l.warmup)
			.member("median_ns", l.half_rtt.median)
			.member("p99_ns", l.half_rtt.p99)
			.member("mean_ns", l.half_rtt.mean)
			.member("min_ns", l.half_rtt.min)
			.member("max_ns", l.half_rtt.max)
			.member("post_retries", l.post_retries)
			.member("polls", l.polls)
			.member("empty_polls", l.empty_polls)
			.member("peer_polls", l.peer_polls)
			.member("peer_empty_polls", l.peer_empty_polls)
			.member("verified", l.verified)
			.member("peer_verified", l.peer_verified)
			.member("mismatches", l.mismatches + l.peer_mismatches);
		if (!l.first_mismatch.empty())
			w.member("first_mismatch", l.first_mismatch);
		w.end_object();
	}
	w.end_array();

	w.key("conn_stats").begin_object()
		.member("flags", r.conn.flags)
		.member("post_write", r.conn.post_write)
		.member("post_write_fail", r.conn.post_write_fail)
		.member("post_write_bytes", r.conn.post_write_bytes)
		.member("send_write_cqe", r.conn.send_write_cqe)
		.member("send_write_cqe_fail", r.conn.send_write_cqe_fail)
		.member("recv_write_cqe", r.conn.recv_write_cqe)
		.member("recv_write_bytes", r.conn.recv_write_bytes)
		.member("conn_recovery", r.conn.conn_recovery);
	w.key("qp_post_write").begin_array();
	for (auto n : r.qp_post_write)
		w.value(n);
	w.end_array().end_object();
	w.member("mismatches", r.mismatches()).end_object();
	return w.str() + "\n";
}

std::string node_text(const rv::bench::NodeInfo &n)
{
	return n.device + " (" + rv::format_ipv4(n.ip) + ", rv_index " +
	       std::to_string(n.rv_index) + ")";
}

std::string transfer_table(const TransferOptions &o, const rv::bench::ClientReport &r)
{
	const bool bw = o.test == rv::bench::Test::bw;
	std::string out;
	char line[320];

	std::snprintf(line, sizeof(line), "rvbench %s: %s -> %s via %s (ABI %s, %s)\n",
		      bw ? "bw" : "lat", node_text(r.self).c_str(),
		      node_text(r.peer).c_str(), o.common.rv_path.c_str(),
		      r.abi.to_string().c_str(), mode_name(o.ep));
	out += line;
	std::snprintf(line, sizeof(line),
		      "connection: %u QPs, path MTU %u, connected in %.1f ms",
		      r.conn.num_conn, rv::ib_mtu_to_bytes(r.path_mtu),
		      static_cast<double>(r.connect_ns) / 1e6);
	out += line;
	if (bw) {
		std::snprintf(line, sizeof(line), "; window %u, buffer %s\n",
			      r.plan.window,
			      rv::bench::format_size(r.plan.buffer).c_str());
		out += line;
		out += "every message checked by the receiver\n\n";
		std::snprintf(line, sizeof(line),
			      "%9s %9s %10s %9s %6s %7s %19s %19s %9s %6s %10s\n",
			      "size", "messages", "MB/s", "Mmsg/s", "window",
			      "retries", "tx polls/empty", "rx polls/empty",
			      "checked", "wrong", "peer pkts");
		out += line;
		for (const auto &b : r.bw) {
			std::string txp = std::to_string(b.polls) + "/" +
					  std::to_string(b.empty_polls);
			std::string rxp = std::to_string(b.peer_polls) + "/" +
					  std::to_string(b.peer_empty_polls);
			std::snprintf(line, sizeof(line),
				      "%9s %9" PRIu64 " %10.1f %9.4f %6u %7" PRIu64
				      " %19s %19s %9" PRIu64 " %6" PRIu64 " %10s\n",
				      rv::bench::format_size(b.size).c_str(), b.messages,
				      b.mb_per_s(), b.mmsg_per_s(), b.window,
				      b.post_retries, txp.c_str(), rxp.c_str(),
				      b.verified, b.mismatches,
				      b.peer_rcvd_pkts ? std::to_string(*b.peer_rcvd_pkts).c_str()
						       : "-");
			out += line;
		}
		out += "(MB = 10^6 bytes; the sender's time from its first post to "
		       "its last completion)\n";
	} else {
		std::snprintf(line, sizeof(line), "; %" PRIu64 " untimed round trips first\n\n",
			      r.plan.warmup);
		out += line;
		std::snprintf(line, sizeof(line),
			      "%9s %8s %10s %10s %10s %10s %10s %19s %9s %6s\n",
			      "size", "iters", "median us", "p99 us", "mean us",
			      "min us", "max us", "polls/empty", "checked", "wrong");
		out += line;
		for (const auto &l : r.lat) {
			std::string p = std::to_string(l.polls) + "/" +
					std::to_string(l.empty_polls);
			std::snprintf(line, sizeof(line),
				      "%9s %8" PRIu64 " %10.2f %10.2f %10.2f %10.2f %10.2f %19s %9" PRIu64
				      " %6" PRIu64 "\n",
				      rv::bench::format_size(l.size).c_str(), l.iters,
				      static_cast<double>(l.half_rtt.median) / 1e3,
				      static_cast<double>(l.half_rtt.p99) / 1e3,
				      l.half_rtt.mean / 1e3,
				      static_cast<double>(l.half_rtt.min) / 1e3,
				      static_cast<double>(l.half_rtt.max) / 1e3,
				      p.c_str(), l.verified + l.peer_verified,
				      l.mismatches + l.peer_mismatches);
			out += line;
		}
		out += "(half round trip: post of the ping to the pong's event, "
		       "halved; polls are the client's)\n";
	}
	for (const auto &b : r.bw)
		if (!b.first_mismatch.empty())
			out += "first wrong message: " + b.first_mismatch + "\n";
	for (const auto &l : r.lat)
		if (!l.first_mismatch.empty())
			out += "first wrong message: " + l.first_mismatch + "\n";
	if (r.mismatches()) {
		std::snprintf(line, sizeof(line), "FAILED: %" PRIu64 " wrong messages\n",
			      r.mismatches());
		out += line;
	}
	return out;
}

std::string server_text(const TransferOptions &o, const rv::bench::ServerReport &r)
{
	if (o.common.json) {
		rv::json::Writer w;
		w.begin_object()
			.member("command", rv::bench::test_name(r.plan.test))
			.member("mode", "server");
		w.key("local");
		write_node(w, r.self);
		w.key("peer");
		write_node(w, r.peer);
		w.member("phases", r.phases)
			.member("verified", r.verified)
			.member("mismatches", r.mismatches)
			.end_object();
		return w.str() + "\n";
	}
	char line[320];
	std::snprintf(line, sizeof(line),
		      "rvbench %s server: %s <- %s: %" PRIu64 " sizes, %" PRIu64
		      " messages checked, %" PRIu64 " wrong\n",
		      rv::bench::test_name(r.plan.test), node_text(r.self).c_str(),
		      node_text(r.peer).c_str(), r.phases, r.verified, r.mismatches);
	return line;
}

int print(const std::string &out)
{
	if (std::fputs(out.c_str(), stdout) == EOF || std::fflush(stdout) != 0) {
		std::fprintf(stderr, "%s: write error: %s\n", prog, std::strerror(errno));
		return 1;
	}
	return 0;
}

// --- the two processes ---

// A forked child, killed and reaped if still running when this goes.
class Child {
public:
	explicit Child(pid_t pid) noexcept : pid_(pid) {}
	Child(const Child &) = delete;
	Child &operator=(const Child &) = delete;
	~Child()
	{
		if (pid_ > 0) {
			::kill(pid_, SIGTERM);
			(void)wait();
		}
	}

	// The exit status (128 + signal if killed).
	int wait() noexcept
	{
		int st = 0;
		while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR)
			;
		pid_ = -1;
		return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}

private:
	pid_t pid_;
};

int serve(const TransferOptions &o, const rv::bench::NodeConfig &cfg, int listen_fd,
	  bool quiet)
{
	// A server waits for its client without a limit; loopback ones not.
	auto s = rv::bench::oob::accept_one(
		listen_fd, quiet ? ms_of(o.timeout_s) : std::chrono::hours(24 * 365));
	rv::bench::ServerReport r = rv::bench::run_server(cfg, std::move(s));
	if (!quiet && print(server_text(o, r)))
		return 1;
	return r.mismatches ? 1 : 0;
}

int client_done(const TransferOptions &o, const rv::bench::ClientReport &r)
{
	if (print(o.common.json ? transfer_json(o, r) : transfer_table(o, r)))
		return 1;
	return r.mismatches() ? 1 : 0;
}

int run_transfer(int argc, char **argv, rv::bench::Test test)
{
	const TransferOptions o = parse_transfer(argc, argv, test);
	const rv::bench::Plan plan = make_plan(o);
	const auto to = ms_of(o.timeout_s);

	switch (o.ep.kind) {
	case Endpoint::Kind::connect: {
		const auto cfg = node_config(o, o.common.device, "client");
		auto s = rv::bench::oob::connect_tcp(o.ep.host, o.ep.tcp_port, to);
		return client_done(o, rv::bench::run_client(cfg, plan, std::move(s)));
	}
	case Endpoint::Kind::listen: {
		const auto cfg = node_config(o, o.common.device, "server");
		rv::UniqueFd l = rv::bench::oob::listen_tcp(o.ep.host, o.ep.tcp_port);
		progress(o.common, "listening on port " + std::to_string(o.ep.tcp_port));
		return serve(o, cfg, l.get(), false);
	}
	default:
		break;
	}

	// Loopback: the server on the second node, in a thread or a child.
	const auto ccfg = node_config(o, o.ep.client_dev, "client");
	const auto scfg = node_config(o, o.ep.server_dev, "server", false);
	std::uint16_t port = 0;
	rv::UniqueFd l = rv::bench::oob::listen_tcp("127.0.0.1", 0, &port);

	if (o.ep.threads) {
		int server_rc = 1;
		std::string server_err;
		std::thread t([&] {
			try {
				server_rc = serve(o, scfg, l.get(), true);
			} catch (const std::exception &e) {
				server_err = e.what();
			}
		});
		int rc = 1;
		std::string client_err;
		try {
			auto s = rv::bench::oob::connect_tcp("127.0.0.1", port, to);
			rc = client_done(o, rv::bench::run_client(ccfg, plan, std::move(s)));
		} catch (const std::exception &e) {
			client_err = e.what();
			::shutdown(l.get(), SHUT_RDWR);	// a server still in accept
		}
		t.join();
		if (!server_err.empty())
			std::fprintf(stderr, "%s: server: %s\n", prog, server_err.c_str());
		if (!client_err.empty())
			throw std::runtime_error(client_err);
		return rc ? rc : server_rc ? 1 : 0;
	}

	std::fflush(nullptr);
	const pid_t pid = ::fork();
	if (pid < 0)
		rv::throw_errno("fork");
	if (pid == 0) {
		int rc = 1;
		try {
			rc = serve(o, scfg, l.get(), true);
		} catch (const std::exception &e) {
			std::fprintf(stderr, "%s: server: %s\n", prog, e.what());
		}
		std::fflush(nullptr);
		::_exit(rc);
	}
	Child child(pid);
	l.reset();
	auto s = rv::bench::oob::connect_tcp("127.0.0.1", port, to);
	const int rc = client_done(o, rv::bench::run_client(ccfg, plan, std::move(s)));
	const int server_rc = child.wait();
	if (server_rc)
		std::fprintf(stderr, "%s: the server exited with status %d\n", prog,
			     server_rc);
	return rc ? rc : server_rc ? 1 : 0;
}

int run_bw(int argc, char **argv)
{
	return run_transfer(argc, argv, rv::bench::Test::bw);
}

int run_lat(int argc, char **argv)
{
	return run_transfer(argc, argv, rv::bench::Test::lat);
}

// --- the command table --------------------------------------------------

struct Command {
	std::string_view name;
	std::string_view summary;
	int (*run)(int argc, char **argv);	// argv[0] is the command
};

constexpr Command commands[] = {
	{"reg", "REG_MEM cost: MR cache hit vs miss vs ibv_reg_mr", run_reg},
	{"bw", "RDMA WRITE with immediate between two nodes: MB/s, Mmsg/s", run_bw},
	{"lat", "RDMA WRITE with immediate ping-pong: half round trip", run_lat},
};

void usage(std::FILE *f)
{
	std::fprintf(f,
"Usage: %s COMMAND [OPTION]...\n"
"Micro-benchmarks of the rv kernel module, on an attached /dev/rv.\n"
"\n"
"Commands:\n", prog);
	for (const auto &c : commands)
		std::fprintf(f, "  %-6.*s %.*s\n", static_cast<int>(c.name.size()),
			     c.name.data(), static_cast<int>(c.summary.size()),
			     c.summary.data());
	std::fprintf(f,
"\n"
"'%s COMMAND --help' describes a command and its options.\n"
"\n%s"
"\n"
"Exit status: 0 on success, 1 on a failure, 2 on a usage error.\n",
		prog, common_help);
}

} // namespace

int main(int argc, char **argv)
{
	try {
		if (argc < 2)
			throw UsageError("no command");
		std::string_view cmd = argv[1];
		if (cmd == "-h" || cmd == "--help" || cmd == "help") {
			usage(stdout);
			return std::fflush(stdout) == 0 ? 0 : 1;
		}
		for (const auto &c : commands)
			if (c.name == cmd)
				return c.run(argc - 1, argv + 1);
		throw UsageError("unknown command '" + std::string(cmd) + "'");
	} catch (const UsageError &e) {
		std::fprintf(stderr,
			     "%s: %s\nTry '%s --help' for more information.\n",
			     prog, e.what(), prog);
		return 2;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", prog, e.what());
		return 1;
	}
}
