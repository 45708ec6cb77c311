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

#include <toolkit/json.hpp>

#include "cli.hpp"
#include "sweep.hpp"

using namespace rv::test;
using namespace rv::test::fault;

namespace {

constexpr const char *prog = "rv_fault_sweep";

// Exit statuses.
constexpr int exit_ok = 0;
constexpr int exit_problems = 1;
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

// name, if it names an operation; a UsageError if not.
std::string known_op(std::string_view name)
{
	for (const auto &op : all_ops())
		if (name == op->name())
			return std::string(name);
	throw rv::cli::UsageError("unknown operation '" + std::string(name) + "'");
}

// --skip OP:N[,N...]
void add_skip(Options &o, std::string_view arg)
{
	const auto colon = arg.find(':');
	if (colon == std::string_view::npos)
		throw rv::cli::UsageError("--skip wants OP:N[,N...], not '" +
					  std::string(arg) + "'");
	const std::string name = known_op(arg.substr(0, colon));
	for (auto n : rv::cli::split(arg.substr(colon + 1)))
		o.skip.insert({name, static_cast<unsigned>(
			rv::cli::parse_uint("--skip point", n, 0, 1000000000))});
}

// Into o and list (--list).
rv::cli::Parsed parse_args(int argc, char **argv, Options &o, bool &list)
{
	const rv::cli::Option options[] = {
		rv::cli::value("only", 'o', [&o](std::string_view v) {
			for (auto name : rv::cli::split(v))
				o.only.insert(known_op(name));
		}),
		rv::cli::value("skip", 's', [&o](std::string_view v) { add_skip(o, v); }),
		rv::cli::number("max-n", 'n', o.max_n, 1, 1000000000),
		rv::cli::number("burst", 'b', o.burst, 1, 64),
		rv::cli::value("settle-ms", 0, [&o](std::string_view v) {
			o.settle = milliseconds(rv::cli::parse_uint("--settle-ms", v, 0, 3600000));
		}),
		rv::cli::value("connect-timeout", 0, [&o](std::string_view v) {
			o.connect_timeout = seconds(rv::cli::parse_uint("--connect-timeout", v, 1, 3600));
		}),
		rv::cli::flag("json", 'j', o.json),
		rv::cli::text("json-file", 0, o.json_file),
		rv::cli::flag("list", 'l', list),
		rv::cli::flag("quiet", 'q', o.quiet),
	};
	return rv::cli::parse(argc, argv, options);
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

void setup_json(rv::json::Writer &w, const Ctx *ctx, const FaultSetup &setup,
		unsigned burst)
{
	w.key("setup").begin_object();
	w.key("failslab");
	knobs_json(w, setup.failslab);
	w.key("fail_page_alloc");
	knobs_json(w, setup.fail_page_alloc);
	w.member("fail_nth", setup.fail_nth);
	w.member("burst", burst);
	strings_json(w, "problems", setup.problems);
	if (ctx) {
		w.key("nodes").begin_array().value(ctx->n0.dev);
		if (ctx->have_n1)
			w.value(ctx->n1.dev);
		w.end_array();
	}
	w.end_object();
}

void counts_json(rv::json::Writer &w, const char *key,
		 const std::map<std::string, unsigned> &counts)
{
	w.key(key).begin_object();
	for (const auto &[name, n] : counts)
		w.member(name.empty() ? "unknown" : name, n);
	w.end_object();
}

// The errnos of an operation's failed calls, and who owned the failed
// allocations.
void failures_json(rv::json::Writer &w, const OpResult &r)
{
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
	counts_json(w, "errnos", errs);
	counts_json(w, "sites_by_owner", owners);
	w.key("allowed").begin_array();
	w.begin_object().member("errno", "ENOMEM")
		.member("why", "the allocation failed").end_object();
	for (const auto &a : r.allowed)
		w.begin_object().member("errno", errname(a.err))
			.member("why", a.why).end_object();
	w.end_array();
}

void point_json(rv::json::Writer &w, const Point &p)
{
	w.begin_object().member("n", p.n);
	if (p.skipped) {
		w.member("skipped", true).end_object();
		return;
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

void op_json(rv::json::Writer &w, const OpResult &r)
{
	w.begin_object();
	w.member("name", r.name).member("what", r.what);
	w.member("status", r.skipped ? "skip" : r.ok() ? "ok" : "fail");
	if (r.skipped)
		w.member("skip_reason", r.skip_reason);
	w.member("sites", r.sites())
		.member("failed", r.failed_calls())
		.member("tolerated", r.tolerated())
		.member("seconds", r.seconds);
	failures_json(w, r);
	strings_json(w, "problems", r.problems);
	w.key("points").begin_array();
	for (const auto &p : r.points)
		point_json(w, p);
	w.end_array();
	w.end_object();
}

std::string to_json(const Ctx *ctx, const FaultSetup &setup, unsigned burst,
		    const std::vector<OpResult> &results, bool ok)
{
	rv::json::Writer w(1);
	w.begin_object();
	setup_json(w, ctx, setup, burst);
	w.key("ops").begin_array();
	for (const auto &r : results)
		op_json(w, r);
	w.end_array();
	w.member("ok", ok);
	w.end_object();
	return w.str();
}

// The text output's header: the nodes, the knobs, what burst does.
void print_header(const Ctx &ctx, const FaultSetup &setup, const Options &opts)
{
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

// Sweeps the operations opts selects into results; true if all passed.
bool sweep_ops(Ctx &ctx, const std::vector<std::unique_ptr<Op>> &ops,
	       const Options &opts, std::vector<OpResult> &results)
{
	bool ok = true;
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
	return ok;
}

// The JSON object on stdout (--json) and in --json-file.
void write_json(const Options &opts, const std::string &j)
{
	if (opts.json)
		std::printf("%s\n", j.c_str());
	if (opts.json_file.empty())
		return;
	std::ofstream f(opts.json_file);
	f << j << '\n';
	if (!f)
		std::fprintf(stderr, "%s: cannot write %s\n", prog, opts.json_file.c_str());
}

void list_ops(const std::vector<std::unique_ptr<Op>> &ops)
{
	for (const auto &op : ops)
		std::printf("%-18s %s%s\n", op->name(), op->what(),
			    op->needs_peer() ? " [2 nodes]" : "");
}

// No fault injection: says why, and the exit status that skips.
int cannot_run(const Options &opts, const FaultSetup &setup)
{
	if (!opts.json) {
		std::printf("# fault injection is not usable:\n");
		for (const auto &p : setup.problems)
			std::printf("#   %s\n", p.c_str());
		std::printf("result SETUP skip fault injection not available\n");
	}
	write_json(opts, to_json(nullptr, setup, opts.burst, {}, false));
	return exit_cannot_run;
}

} // namespace

int main(int argc, char **argv)
{
	Options opts;
	bool list = false;
	if (auto rc = rv::cli::parse_command_line(prog, usage, parse_args, argc, argv, opts, list))
		return *rc;
	std::vector<std::unique_ptr<Op>> ops = all_ops();
	if (list) {
		list_ops(ops);
		return exit_ok;
	}

	FaultSetup setup = FaultSetup::probe();
	if (!setup.problems.empty())
		return cannot_run(opts, setup);

	std::vector<OpResult> results;
	try {
		std::optional<BurstMode> burst;
		if (opts.burst > 1)
			burst.emplace();
		Ctx ctx(opts);
		if (!opts.json)
			print_header(ctx, setup, opts);
		const bool ok = sweep_ops(ctx, ops, opts, results);
		ctx.stop_peer();
		write_json(opts, to_json(&ctx, setup, opts.burst, results, ok));
		return ok ? exit_ok : exit_problems;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", prog, e.what());
		if (!opts.json)
			std::printf("result SETUP fail %s\n", e.what());
		write_json(opts, to_json(nullptr, setup, opts.burst, results, false));
		return exit_problems;
	}
}
