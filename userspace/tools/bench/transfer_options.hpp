// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The command lines of rvbench bw and lat: where the other process is,
// what to send, how to attach and connect.
#ifndef RV_BENCH_TRANSFER_OPTIONS_HPP
#define RV_BENCH_TRANSFER_OPTIONS_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <rv/connection.hpp>

#include "bench/command_line.hpp"
#include "bench/two_node.hpp"

namespace rvbench {

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
	bool verify = true;			// bw: --no-verify clears it
	double timeout_s = 60;
	std::optional<rv::JobKey> job_key;
	std::uint8_t num_conn = 0;
	std::uint8_t index_bits = 9;
	std::uint32_t cache_mb = 0;		// ATTACH mr_cache_size; 0: the module's
	std::optional<std::uint8_t> mtu;
	std::uint8_t packet_life_time = 16;
	bool yield = false;
};

constexpr std::uint64_t default_lat_iters = 1000;

// Parses the command line of bw or lat (test); throws UsageError.
TransferOptions parse_transfer(int argc, char **argv, rv::bench::Test test);

} // namespace rvbench

#endif // RV_BENCH_TRANSFER_OPTIONS_HPP
