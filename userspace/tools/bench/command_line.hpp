// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench's command line: the options every command shares (--device,
// --port, --rv, --json, --help, ...) and the parser each command runs.
#ifndef RV_BENCH_COMMAND_LINE_HPP
#define RV_BENCH_COMMAND_LINE_HPP

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <rv/device.hpp>
#include <rv/uapi.hpp>

#include <toolkit/rdma_sysfs.hpp>

#include "bench/bench_util.hpp"
#include "cli.hpp"

namespace rvbench {

inline constexpr const char *prog = "rvbench";

// A command line error: main() prints it with a hint at --help, exit 2.
using UsageError = rv::cli::UsageError;

// The shortest --timeout or --max-seconds.
inline constexpr double min_seconds = 0.001;

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

// The options every command has, into o.
std::vector<rv::cli::Option> common_options(CommonOptions &o);

// Parses argv with the command's options and the common ones: -h prints
// usage(stdout) and exits; anything wrong is a UsageError.
template <typename Usage>
void parse_options(int argc, char **argv, std::vector<rv::cli::Option> options,
		   Usage &&usage, CommonOptions &common)
{
	for (auto &o : common_options(common))
		options.push_back(std::move(o));
	if (rv::cli::parse(argc, argv, options) == rv::cli::Parsed::help) {
		usage(stdout);
		std::exit(std::fflush(stdout) == 0 ? 0 : 1);
	}
}

} // namespace rvbench

#endif // RV_BENCH_COMMAND_LINE_HPP
