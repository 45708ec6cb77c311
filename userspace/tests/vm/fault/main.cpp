// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_fault_sweep: fault injection on every allocation of rv's attach,
// mmap, REG_MEM, connection, post and release paths (sweep.hpp). Runs as
// root inside the debug-kernel VM (tools/testing/selftests/rv/fault.sh)
// with rv.ko loaded and the failslab / fail_page_alloc knobs set so that
// fail-nth reaches GFP_KERNEL allocations.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <string>
#include <system_error>

#include <getopt.h>

#include <rv/json.hpp>

#include "getopt_error.hpp"
#include "sweep.hpp"

using namespace rv::test;
using namespace rv::test::fault;

namespace {

constexpr const char *prog = "rv_fault_sweep";

// Exit statuses.
constexpr int exit_ok = 0;
constexpr int exit_problems = 1;
constexpr int exit_usage = 2;
constexpr int exit_cannot_run = 77;	// no fault injection: skip

void usage(std::FILE *f)
{
	std::fprintf(f,
"Usage: %s [OPTION]...\n"
"Fault-injection sweep of rv's allocation sites. For each operation and\n"
"n = 1, 2, ...: set up what the call needs, arm /proc/thread-self/fail-nth\n"
"with n, make the call, disarm; the call must fail with a known errno and\n"
"leave nothing behind (the same call again works), or succeed if the\n"
"failed allocation was optional. The sweep of an operation ends with the\n"
"first call that consumed no fault. Needs root, rv.ko loaded, and\n"
"/sys/kernel/debug/{failslab,fail_page_alloc} with ignore-gfp-wait=N\n"
"(fail_page_alloc also ignore-gfp-highmem=N, min-order=0); verbose=2\n"
"there names each failed allocation from the kernel log.\n"
"\n"
"  -o, --only OP[,OP...]   sweep only these operations (see --list)\n"
"  -s, --skip OP:N[,N...]  do not inject at these points (a point that\n"
"                          trips a kernel bug), go on with the next\n"
"  -n, --max-n N           give up on an operation after N points\n"
"                          (default 400)\n"
"  -b, --burst B           fail the nth check and keep failing the checks\n"
"                          after it: B - 1 more of the injector that\n"
"                          failed it, B of the other (default 1: only the\n"
"                          nth). Reaches the error paths behind a\n"
"                          fallback allocation, such as the xarray's\n"
"                          GFP_NOWAIT then GFP_KERNEL node allocation.\n"
"                          Sets probability 100 and task-filter Y, and\n"
"                          uses /proc/thread-self/make-it-fail and times\n"
"                          around each call; restores them at the end.\n"
"                          The results are named OP/burstB\n"
"      --settle-ms MS      wait at most MS for rv's objects to go after a\n"
"                          point's files are closed (default 30000)\n"
"      --connect-timeout S connection establishment timeout (default 120)\n"
"  -j, --json              print one JSON object instead of text\n"
"      --json-file FILE    also write the JSON object to FILE\n"
"  -l, --list              list the operations and exit\n"
"  -q, --quiet             no per-point lines (text output)\n"
"  -h, --help              show this help and exit\n"
"\n"
"Text output: '# ' lines with each point, then one line per operation:\n"
"  result OP ok|fail|skip SUMMARY\n"
"The nodes come from RV_NODES / RV_NODE_IPS (vm-run --rxe 2); operations\n"
"that connect need two.\n"
"\n"
"Exit status: 0 if every operation passed, 1 if any found a problem,\n"
"2 on a usage error, 77 if fault injection is not available.\n",
		prog);
}

[[noreturn]] void usage_error(const std::string &msg)
{
	std::fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n",
		     prog, msg.c_str(), prog);
	std::exit(exit_usage);
}

std::vector<std::string> split(const std::string &s, char sep)
{
	std::vector<std::string> out;
	std::size_t start = 0;
	for (;;) {
		std::size_t end = s.find(sep, start);
		out.push_back(s.substr(start, end - start));
		if (end == std::string::npos)
			return out;
		start = end + 1;
	}
}

unsigned parse_uint(const std::string &s, const char *what)
{
	char *end = nullptr;
	errno = 0;
	unsigned long v = std::strtoul(s.c_str(), &end, 10);
	if (s.empty() || *end || errno || v > 1000000000UL)
		usage_error(std::string("invalid ") + what + " '" + s + "'");
	return static_cast<unsigned>(v);
}

bool known_op(const std::string &name)
{
	for (const auto &op : all_ops())
		if (name == op->name())
			return true;
	return false;
}

enum : int {
	opt_json_file = 1000,
	opt_settle,
	opt_connect_timeout,
};

Options parse_args(int argc, char **argv, bool &list)
{
	static const option longopts[] = {
		{"only", required_argument, nullptr, 'o'},
		{"skip", required_argument, nullptr, 's'},
		{"max-n", required_argument, nullptr, 'n'},
		{"burst", required_argument, nullptr, 'b'},
		{"settle-ms", required_argument, nullptr, opt_settle},
		{"connect-timeout", required_argument, nullptr, opt_connect_timeout},
		{"json", no_argument, nullptr, 'j'},
		{"json-file", required_argument, nullptr, opt_json_file},
		{"list", no_argument, nullptr, 'l'},
		{"quiet", no_argument, nullptr, 'q'},
		{"help", no_argument, nullptr, 'h'},
		{nullptr, 0, nullptr, 0},
	};
	Options o;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:s:n:b:jlqh", longopts, nullptr)) != -1) {
		switch (c) {
		case 'o':
			for (const auto &name : split(optarg, ',')) {
				if (!known_op(name))
					usage_error("unknown operation '" + name + "'");
				o.only.insert(name);
			}
			break;
		case 's': {
			std::string a = optarg;
			auto colon = a.find(':');
			if (colon == std::string::npos)
				usage_error("--skip wants OP:N[,N...], not '" + a + "'");
			std::string name = a.substr(0, colon);
			if (!known_op(name))
				usage_error("unknown operation '" + name + "'");
			for (const auto &n : split(a.substr(colon + 1), ','))
				o.skip.insert({name, parse_uint(n, "point")});
			break;
		}
		case 'n':
			o.max_n = parse_uint(optarg, "--max-n");
			if (!o.max_n)
				usage_error("--max-n must be at least 1");
			break;
		case 'b':
			o.burst = parse_uint(optarg, "--burst");
			if (!o.burst || o.burst > 64)
				usage_error("--burst must be 1..64");
			break;
		case opt_settle:
			o.settle = milliseconds(parse_uint(optarg, "--settle-ms"));
			break;
		case opt_connect_timeout:
			o.connect_timeout = seconds(parse_uint(optarg, "--connect-timeout"));
			break;
		case 'j':
			o.json = true;
			break;
		case opt_json_file:
			o.json_file = optarg;
			break;
		case 'l':
			list = true;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			usage(stdout);
			std::exit(exit_ok);
		default:
			usage_error(rv::tools::getopt_error(c, argv));
		}
	}
	if (auto extra = rv::tools::extra_argument(argc, argv))
		usage_error(*extra);
	return o;
}

void knobs_json(rv::json::Writer &w, const FaultKnobs &k)
{
	w.begin_object().member("dir", k.dir).member("present", k.present);
	auto opt = [&](const char *name, const std::optional<long> &v) {
		w.key(name);
		if (v)
			w.value(*v);
		else
			w.value(nullptr);
	};
	opt("probability", k.probability);
	opt("verbose", k.verbose);
	opt("ignore_gfp_wait", k.ignore_gfp_wait);
	opt("ignore_gfp_highmem", k.ignore_gfp_highmem);
	opt("min_order", k.min_order);
	w.end_object();
}

void strings_json(rv::json::Writer &w, const char *key,
		  const std::vector<std::string> &v)
{
	w.key(key).begin_array();
	for (const auto &s : v)
		w.value(s);
	w.end_array();
}

std::string to_json(const Ctx *ctx, const FaultSetup &setup, unsigned opts_burst,
		    const std::vector<OpResult> &results, bool ok)
{
	rv::json::Writer w(1);
	w.begin_object();
	w.key("setup").begin_object();
	w.key("failslab");
	knobs_json(w, setup.failslab);
	w.key("fail_page_alloc");
	knobs_json(w, setup.fail_page_alloc);
	w.member("fail_nth", setup.fail_nth);
	w.member("burst", opts_burst);
	strings_json(w, "problems", setup.problems);
	if (ctx) {
		w.key("nodes").begin_array().value(ctx->n0.dev);
		if (ctx->have_n1)
			w.value(ctx->n1.dev);
		w.end_array();
	}
	w.end_object();

	w.key("ops").begin_array();
	for (const auto &r : results) {
		w.begin_object();
		w.member("name", r.name).member("what", r.what);
		w.member("status", r.skipped ? "skip" : r.ok() ? "ok" : "fail");
		if (r.skipped)
			w.member("skip_reason", r.skip_reason);
		w.member("sites", r.sites())
			.member("failed", r.failed_calls())
			.member("tolerated", r.tolerated())
			.member("seconds", r.seconds);
		std::map<std::string, unsigned> errs;
		std::map<std::string, unsigned> owners;
		for (const auto &p : r.points) {
			if (p.consumed && p.err)
				errs[errname(p.err)]++;
			if (p.consumed)
				owners[p.site ? (p.site->kind.empty() ? p.site->owner()
								      : p.site->kind)
					      : "silent"]++;
		}
		w.key("errnos").begin_object();
		for (const auto &[name, n] : errs)
			w.member(name, n);
		w.end_object();
		w.key("sites_by_owner").begin_object();
		for (const auto &[name, n] : owners)
			w.member(name.empty() ? "unknown" : name, n);
		w.end_object();
		w.key("allowed").begin_array();
		w.begin_object().member("errno", "ENOMEM")
			.member("why", "the allocation failed").end_object();
		for (const auto &a : r.allowed)
			w.begin_object().member("errno", errname(a.err))
				.member("why", a.why).end_object();
		w.end_array();
		strings_json(w, "problems", r.problems);
		w.key("points").begin_array();
		for (const auto &p : r.points) {
			w.begin_object().member("n", p.n);
			if (p.skipped) {
				w.member("skipped", true).end_object();
				continue;
			}
			w.member("injected", p.injected)
				.member("consumed", p.consumed)
				.member("errno", errname(p.err));
			if (p.site) {
				w.member("injector", p.site->injector)
					.member("site", p.site->summary())
					.member("owner", p.site->owner())
					.member("kind", p.site->kind);
				strings_json(w, "frames", p.site->frames);
			} else if (p.consumed) {
				w.member("site", "silent");
			}
			strings_json(w, "problems", p.problems);
			strings_json(w, "notes", p.notes);
			w.end_object();
		}
		w.end_array();
		w.end_object();
	}
	w.end_array();
	w.member("ok", ok);
	w.end_object();
	return w.str();
}

} // namespace

int main(int argc, char **argv)
{
	bool list = false;
	Options opts = parse_args(argc, argv, list);
	std::vector<std::unique_ptr<Op>> ops = all_ops();

	if (list) {
		for (const auto &op : ops)
			std::printf("%-18s %s%s\n", op->name(), op->what(),
				    op->needs_peer() ? " [2 nodes]" : "");
		return exit_ok;
	}

	FaultSetup setup = FaultSetup::probe();
	auto finish = [&](const Ctx *ctx, const std::vector<OpResult> &results,
			  bool ok) {
		std::string j = to_json(ctx, setup, opts.burst, results, ok);
		if (opts.json)
			std::printf("%s\n", j.c_str());
		if (!opts.json_file.empty()) {
			std::ofstream f(opts.json_file);
			f << j << '\n';
			if (!f)
				std::fprintf(stderr, "%s: cannot write %s\n", prog,
					     opts.json_file.c_str());
		}
	};

	if (!setup.problems.empty()) {
		if (!opts.json) {
			std::printf("# fault injection is not usable:\n");
			for (const auto &p : setup.problems)
				std::printf("#   %s\n", p.c_str());
			std::printf("result SETUP skip fault injection not available\n");
		}
		finish(nullptr, {}, false);
		return exit_cannot_run;
	}

	std::vector<OpResult> results;
	bool ok = true;
	try {
		std::optional<BurstMode> burst;
		if (opts.burst > 1)
			burst.emplace();
		Ctx ctx(opts);
		if (!opts.json) {
			std::printf("# %s: node 0 %s", prog, ctx.n0.dev.c_str());
			if (ctx.have_n1)
				std::printf(", node 1 %s", ctx.n1.dev.c_str());
			std::printf("\n# %s\n# %s\n", setup.failslab.str().c_str(),
				    setup.fail_page_alloc.str().c_str());
			if (opts.burst > 1)
				std::printf("# burst %u: the nth check fails, and the "
					    "checks after it until %u more have failed\n",
					    opts.burst, opts.burst - 1);
			if (setup.verbose() < 2)
				std::printf("# verbose < 2: the failed allocations are "
					    "not named\n");
			std::fflush(stdout);
		}
		for (const auto &op : ops) {
			if (!opts.only.empty() && !opts.only.count(op->name()))
				continue;
			OpResult r = run_op(ctx, *op);
			ok = ok && (r.skipped || r.ok());
			if (!opts.json) {
				std::printf("result %s %s %s\n", r.name.c_str(),
					    r.skipped ? "skip" : r.ok() ? "ok" : "fail",
					    r.summary().c_str());
				std::fflush(stdout);
			}
			results.push_back(std::move(r));
		}
		ctx.stop_peer();
		finish(&ctx, results, ok);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", prog, e.what());
		if (!opts.json)
			std::printf("result SETUP fail %s\n", e.what());
		finish(nullptr, results, false);
		return exit_problems;
	}
	return ok ? exit_ok : exit_problems;
}
