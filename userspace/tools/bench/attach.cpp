// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench attach: the cost of RV_IOCTL_ATTACH, made by several threads at
// once, each attach a new job (the module makes a PD, a registration QP
// and a CM listener for it) or all joining one job.
#include <barrier>
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <rv/attach.hpp>
#include <rv/device.hpp>

#include <toolkit/json.hpp>

#include "bench/bench_util.hpp"
#include "bench/command_line.hpp"
#include "bench/commands.hpp"
#include "bench/session.hpp"

namespace rvbench {

namespace {

using rv::bench::Summary;

struct AttachOptions {
	CommonOptions common;
	unsigned threads = 2;
	std::uint64_t iters = 200;	// per thread
	std::uint64_t warmup = 10;	// per thread
	bool same_job = false;
};

void attach_usage(std::FILE *f)
{
	std::fprintf(f,
"Usage: %s attach [OPTION]...\n"
"Cost of RV_IOCTL_ATTACH with several threads attaching at once. Each\n"
"call opens the rv device, declares the ABI (CAPABILITY), attaches and\n"
"closes; only the ATTACH ioctl is timed, in ns. By default each ATTACH\n"
"is a new job, which the module makes: a PD, a registration QP and its\n"
"CQ, a share of the CM listener. The wall time of the timed phase gives\n"
"the ATTACHes per second of all threads together.\n"
"\n"
"  -t, --threads N        threads attaching at once (default 2, at most 64)\n"
"  -n, --iters N          timed ATTACHes per thread (default 200)\n"
"      --warmup N         untimed ATTACHes per thread first (default 10)\n"
"      --same-job         every ATTACH joins one job, which a file held\n"
"                         open for the run made first\n"
"\n%s"
"\n"
"Exit status: 0 on success, 1 on a failure (any ATTACH refused), 2 on a\n"
"usage error.\n",
		prog, common_help);
}

AttachOptions parse_attach(int argc, char **argv)
{
	AttachOptions o;
	std::vector<rv::cli::Option> options = {
		rv::cli::number("threads", 't', o.threads, 1, 64),
		rv::cli::number("iters", 'n', o.iters, 1),
		rv::cli::number("warmup", 0, o.warmup),
		rv::cli::flag("same-job", 0, o.same_job),
	};
	parse_options(argc, argv, std::move(options), attach_usage, o.common);
	return o;
}

struct AttachResult {
	Summary attach;
	std::uint64_t wall_ns = 0;	// the timed phase, all threads
	std::uint64_t calls = 0;	// timed ATTACHes, all threads
};

// One thread's calls: warmup untimed, then iters timed. A job key of its
// own for each call unless same_job.
std::vector<std::uint64_t> attach_loop(const AttachOptions &o,
				       rv::AttachParams p, std::barrier<> &timed,
				       rv::bench::Progress &meter,
				       std::mutex &meter_lock)
{
	std::vector<std::uint64_t> samples;
	samples.reserve(o.iters);
	auto one = [&] {
		if (!o.same_job)
			p.job_key = rv::random_job_key();
		rv::Device dev(o.common.rv_path);
		(void)dev.capability();
		const std::uint64_t t0 = rv::bench::now_ns();
		(void)dev.attach(p);
		const std::uint64_t ns = rv::bench::now_ns() - t0;
		dev.close();
		std::lock_guard g(meter_lock);
		meter.advance();
		return ns;
	};
	for (std::uint64_t i = 0; i < o.warmup; i++)
		(void)one();
	timed.arrive_and_wait();
	for (std::uint64_t i = 0; i < o.iters; i++)
		samples.push_back(one());
	return samples;
}

AttachResult run_threads(const AttachOptions &o, const rv::AttachParams &p,
			 rv::bench::Progress &meter)
{
	std::mutex meter_lock;
	std::vector<std::vector<std::uint64_t>> samples(o.threads);
	std::vector<std::exception_ptr> errors(o.threads);
	std::uint64_t start = 0;
	// The threads and this one: the clock starts when all have warmed
	// up (a thread that failed drops out).
	std::barrier timed(static_cast<std::ptrdiff_t>(o.threads) + 1);
	{
		std::vector<std::jthread> threads;
		for (unsigned t = 0; t < o.threads; t++)
			threads.emplace_back([&, t] {
				try {
					samples[t] = attach_loop(o, p, timed, meter,
								 meter_lock);
				} catch (...) {
					errors[t] = std::current_exception();
					timed.arrive_and_drop();
				}
			});
		timed.arrive_and_wait();
		start = rv::bench::now_ns();
	}
	AttachResult r;
	r.wall_ns = rv::bench::now_ns() - start;
	for (const auto &e : errors)
		if (e)
			std::rethrow_exception(e);
	std::vector<std::uint64_t> all;
	for (auto &s : samples)
		all.insert(all.end(), s.begin(), s.end());
	r.calls = all.size();
	r.attach = rv::bench::summarize(std::move(all));
	return r;
}

double per_second(const AttachResult &r)
{
	return r.wall_ns ? static_cast<double>(r.calls) * 1e9 /
				   static_cast<double>(r.wall_ns)
			 : 0;
}

const char *job_text(const AttachOptions &o)
{
	return o.same_job ? "all join one job" : "each ATTACH a new job";
}

std::string attach_json(const AttachOptions &o, const rv::AttachParams &p,
			const AttachResult &r)
{
	rv::json::Writer w;
	w.begin_object()
		.member("command", "attach")
		.member("rv_device", o.common.rv_path)
		.member("device", p.dev_name)
		.member("port", o.common.port)
		.member("timed", "RV_IOCTL_ATTACH ioctl only")
		.member("job", o.same_job ? "same" : "new")
		.member("threads", o.threads)
		.member("iters", o.iters)
		.member("warmup", o.warmup);
	w.key("attach");
	rv::bench::write_summary(w, r.attach);
	w.member("wall_ns", r.wall_ns)
		.member("attaches_per_s", per_second(r))
		.end_object();
	return w.str() + "\n";
}

std::string attach_table(const AttachOptions &o, const rv::AttachParams &p,
			 const AttachResult &r)
{
	char line[256];
	std::string out;
	std::snprintf(line, sizeof(line),
		      "rvbench attach: %s port %u via %s, %u thread%s, %s\n"
		      "timed: the ATTACH ioctl alone; %" PRIu64
		      " per thread after %" PRIu64 " untimed\n\n",
		      p.dev_name.c_str(), o.common.port, o.common.rv_path.c_str(),
		      o.threads, o.threads == 1 ? "" : "s", job_text(o), o.iters,
		      o.warmup);
	out += line;
	std::snprintf(line, sizeof(line), "%8s %12s %12s %12s %10s %12s\n",
		      "calls", "median ns", "p99 ns", "max ns", "wall s",
		      "ATTACH/s");
	out += line;
	std::snprintf(line, sizeof(line),
		      "%8zu %12" PRIu64 " %12" PRIu64 " %12" PRIu64
		      " %10.3f %12.1f\n",
		      r.attach.count, r.attach.median, r.attach.p99, r.attach.max,
		      static_cast<double>(r.wall_ns) / 1e9, per_second(r));
	out += line;
	out += "(ATTACH/s: all threads' timed ATTACHes over the timed phase's wall\n"
	       " time, which includes each call's open, CAPABILITY and close)\n";
	return out;
}

} // namespace

int run_attach(int argc, char **argv)
{
	const AttachOptions o = parse_attach(argc, argv);
	const rv::AttachParams p = session_params(o.common);

	// The job every ATTACH joins, held for the run.
	std::optional<rv::Device> anchor;
	if (o.same_job) {
		anchor.emplace(o.common.rv_path);
		(void)anchor->capability();
		(void)anchor->attach(p);
	}
	rv::bench::Progress meter(progress_sink(o.common),
				  o.threads * (o.warmup + o.iters), "calls", false,
				  o.common.progress_interval_ns);
	meter.set_label("attach");
	const AttachResult r = run_threads(o, p, meter);
	meter.finish("attach done");
	progress(o.common, std::to_string(r.calls) + " ATTACHes timed");
	return print(o.common.json ? attach_json(o, p, r) : attach_table(o, p, r));
}

} // namespace rvbench
