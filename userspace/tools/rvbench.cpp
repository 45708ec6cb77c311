// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench: micro-benchmarks of the rv module.
//
//	rvbench reg [--sizes 4K,64K,1M,4M] [--iters N] [--json]
//	rvbench attach [--threads N] [--iters N] [--same-job] [--json]
//	rvbench bw  [--listen PORT | --connect HOST:PORT | --loopback] [--json]
//	rvbench lat [--listen PORT | --connect HOST:PORT | --loopback] [--json]
//
// Each command is an entry of the command table below and has files of
// its own: `reg` (bench/reg.cpp) works on one attached rv::Device;
// `attach` (bench/attach.cpp) attaches from several threads at once; `bw`
// and `lat` (bench/transfer.cpp, their options in
// bench/transfer_options.cpp) send RDMA WRITE with immediate through rv's
// shared connections between two processes each attached to its own
// device. Every command takes the common options of
// bench/command_line.hpp (--device, --port, --rv, --json, --help).
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "bench/command_line.hpp"
#include "bench/commands.hpp"

namespace {

using namespace rvbench;

struct Command {
	std::string_view name;
	std::string_view summary;
	int (*run)(int argc, char **argv);	// argv[0] is the command
};

constexpr Command commands[] = {
	{"reg", "REG_MEM cost: MR cache hit vs miss vs ibv_reg_mr", run_reg},
	{"attach", "ATTACH cost and rate, threads at once, new jobs or one", run_attach},
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

namespace {

// The command argv[1] with its arguments: its exit status in rc; help for
// "help", -h or --help instead of a command.
rv::cli::Parsed run_command(int argc, char **argv, int &rc)
{
	if (argc < 2)
		throw UsageError("no command");
	std::string_view cmd = argv[1];
	if (cmd == "-h" || cmd == "--help" || cmd == "help")
		return rv::cli::Parsed::help;
	for (const auto &c : commands)
		if (c.name == cmd) {
			rc = c.run(argc - 1, argv + 1);
			return rv::cli::Parsed::run;
		}
	throw UsageError("unknown command '" + std::string(cmd) + "'");
}

} // namespace

int main(int argc, char **argv)
{
	try {
		int rc = 1;
		if (auto r = rv::cli::parse_command_line(prog, usage, run_command, argc, argv, rc))
			return *r;
		return rc;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", prog, e.what());
		return 1;
	}
}
