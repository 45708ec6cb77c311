// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_soak: its command line (soak_options.cpp).
#ifndef RV_SOAK_SOAK_OPTIONS_HPP
#define RV_SOAK_SOAK_OPTIONS_HPP

#include <cstdint>
#include <cstdio>
#include <string>

#include "cli.hpp"

namespace rv::soak {

inline constexpr const char *prog = "rv_soak";

using UsageError = rv::cli::UsageError;

struct Options {
	double seconds = 30;
	unsigned procs = 16;
	double flap_interval = 8;
	unsigned flap_down_ms = 0;	// 0: 5000, or 12000 with --flap-mode drop
	unsigned flap_down_min_ms = 0;	// 0: flap_down_ms
	unsigned flap_node = 1;
	bool flap_drop = false;		// --flap-mode drop
	std::uint64_t seed = 1;
	unsigned slots = 4;
	unsigned window = 4;
	std::uint64_t max_size = 1ULL << 20;
	unsigned churn = 25;
	bool small_pages = false;	// --small-pages
	unsigned reconnect_timeout = 30;
	unsigned drain_timeout = 120;
	bool json = false;
	bool quiet = false;
	char role = 0;			// --two-vm a|b; 0: one VM, both nodes
	std::string peer_ip;		// --peer-ip, default $RV_PEER_IP
	std::uint16_t control_port = 18730;
	unsigned peer_timeout = 300;
};

void usage(FILE *f);
// The options into o; throws UsageError (rv::cli::parse_command_line()).
rv::cli::Parsed parse(int argc, char **argv, Options &o);

} // namespace rv::soak

#endif // RV_SOAK_SOAK_OPTIONS_HPP
