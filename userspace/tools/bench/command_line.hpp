// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench's command line: the usage error, the options every command
// shares (--device, --port, --rv, --json, --help, ...), the number
// arguments and the getopt_long() loop each command's parser runs.
#ifndef RV_BENCH_COMMAND_LINE_HPP
#define RV_BENCH_COMMAND_LINE_HPP

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <getopt.h>

#include <rv/device.hpp>
#include <rv/rdma_sysfs.hpp>
#include <rv/uapi.hpp>

#include "bench/bench_util.hpp"
#include "getopt_error.hpp"

namespace rvbench {

inline constexpr const char *prog = "rvbench";

// A command line error: main() prints it with a hint at --help, exit 2.
struct UsageError : std::exception {
	explicit UsageError(std::string m) : msg(std::move(m)) {}
	const char *what() const noexcept override { return msg.c_str(); }
	std::string msg;
};

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

inline constexpr const char *common_help =
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
			std::uint64_t min = 1, std::uint64_t max = UINT64_MAX);

// The argument of option what as a size (K/M/G binary).
std::uint64_t size_arg(const char *what, const std::string &arg);

// The argument of --sizes.
std::vector<std::uint64_t> size_list_arg(const std::string &arg);

// The argument of option what as seconds, more than 0 and at most max.
double seconds_arg(const char *what, const std::string &arg,
		   double max = std::numeric_limits<double>::max());

// Handles a common option (true) or returns false.
bool common_option(int c, CommonOptions &o);

// getopt_long() returned c, which no parser knows: a UsageError.
[[noreturn]] void bad_option(int c, char **argv);

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

} // namespace rvbench

#endif // RV_BENCH_COMMAND_LINE_HPP
