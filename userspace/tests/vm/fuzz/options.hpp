// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Command line of rv_fuzz.
#ifndef RV_FUZZ_OPTIONS_HPP
#define RV_FUZZ_OPTIONS_HPP

#include <bitset>
#include <cstdint>
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "ops.hpp"

namespace rvfuzz {

inline constexpr unsigned max_procs = 64;
inline constexpr unsigned max_threads = 16;

struct Options {
	std::uint64_t seed = 1;
	std::uint64_t calls = 100000;	// total bound over every process
	double seconds = 600;		// time bound
	unsigned procs = 4;
	unsigned threads = 2;		// per process
	bool json = false;
	bool trace = false;		// every call to stderr
	double progress = 0;		// seconds between progress lines, 0 none
	double hang_seconds = 180;	// a call this long is a failure
	std::string device;		// default RV_DEVICE, else /dev/rv
	std::bitset<op_count> skip;	// call classes left out
	bool no_kill = false;		// no SIGKILL or early exit of workers
};

// Into o; throws rv::cli::UsageError (rv::cli::parse_command_line()).
[[nodiscard]] rv::cli::Parsed parse_options(int argc, char **argv, Options &o);

void usage(std::FILE *f);

} // namespace rvfuzz

#endif // RV_FUZZ_OPTIONS_HPP
