// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "bench/transfer_options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <rv/rdma_sysfs.hpp>

#include "bench/oob.hpp"

namespace rvbench {

namespace {

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

enum : int {
	opt_listen = 0x200, opt_connect, opt_loopback_nodes, opt_loopback,
	opt_loopback_threads, opt_bytes, opt_window, opt_buffer,
	opt_timeout, opt_job_key, opt_num_conn, opt_index_bits, opt_mtu,
	opt_pkt_lifetime, opt_lat_warmup, opt_poll,
};

const option transfer_longopts[] = {
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

// The options of bw or lat, one at a time, into o; then the checks
// across them (finish()).
class TransferParser {
public:
	explicit TransferParser(rv::bench::Test test)
		: bw_(test == rv::bench::Test::bw)
	{
		o.test = test;
		o.sizes = default_sizes(test);
	}

	void option(int c, const std::string &arg, char **argv)
	{
		if (!endpoint_option(c, arg) && !message_option(c, arg) &&
		    !connection_option(c, arg))
			bad_option(c, argv);
	}

	// The checks no single option can make.
	void finish();

	TransferOptions o;

private:
	// --listen, --connect, --loopback*: where the other process is.
	bool endpoint_option(int c, const std::string &arg);
	// What is sent: --sizes, --iters, --bytes, --warmup, --window, --buffer.
	bool message_option(int c, const std::string &arg);
	// How to attach and connect: --timeout, --job-key, --num-conn,
	// --index-bits, --mtu, --pkt-lifetime, --poll.
	bool connection_option(int c, const std::string &arg);

	void set_kind(Endpoint::Kind k)
	{
		if (o.ep.kind != Endpoint::Kind::unset && o.ep.kind != k)
			throw UsageError("--listen, --connect and --loopback* "
					 "exclude each other");
		o.ep.kind = k;
	}

	void only(bool ok, const char *opt) const
	{
		if (!ok)
			throw UsageError(std::string(opt) + " is not an option of " +
					 (bw_ ? "bw" : "lat"));
	}

	bool bw_;
	bool loopback_threads_ = false;
};

bool TransferParser::endpoint_option(int c, const std::string &arg)
{
	switch (c) {
	case opt_listen: {
		auto hp = rv::bench::oob::parse_host_port(arg);
		if (!hp)
			throw UsageError("invalid --listen '" + arg + "'");
		set_kind(Endpoint::Kind::listen);
		o.ep.host = hp->first;
		o.ep.tcp_port = hp->second;
		return true;
	}
	case opt_connect: {
		auto hp = rv::bench::oob::parse_host_port(arg);
		if (!hp || hp->first.empty() || !hp->second)
			throw UsageError("invalid --connect '" + arg +
					 "' (HOST:PORT)");
		set_kind(Endpoint::Kind::connect);
		o.ep.host = hp->first;
		o.ep.tcp_port = hp->second;
		return true;
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
		return true;
	}
	case opt_loopback: {
		set_kind(Endpoint::Kind::loopback);
		std::istringstream in(std::getenv("RV_NODES") ? std::getenv("RV_NODES") : "");
		if (!(in >> o.ep.client_dev >> o.ep.server_dev))
			throw UsageError("--loopback needs two devices in "
					 "$RV_NODES (or use --loopback-nodes)");
		return true;
	}
	case opt_loopback_threads:
		loopback_threads_ = true;
		return true;
	default:
		return false;
	}
}

bool TransferParser::message_option(int c, const std::string &arg)
{
	switch (c) {
	case 's':
		o.sizes = size_list_arg(arg);
		for (auto s : o.sizes)
			if (s > (1ULL << 30))
				throw UsageError("--sizes: at most 1G");
		return true;
	case 'n':
		o.iters = count_arg("--iters", arg);
		return true;
	case opt_bytes:
		only(bw_, "--bytes");
		o.bytes = size_arg("--bytes", arg);
		return true;
	case opt_lat_warmup:
		only(!bw_, "--warmup");
		o.warmup = count_arg("--warmup", arg, 0);
		return true;
	case opt_window:
		only(bw_, "--window");
		o.window = static_cast<std::uint32_t>(
			count_arg("--window", arg, 1, rv::bench::max_window));
		return true;
	case opt_buffer:
		only(bw_, "--buffer");
		o.buffer = size_arg("--buffer", arg);
		return true;
	default:
		return false;
	}
}

bool TransferParser::connection_option(int c, const std::string &arg)
{
	switch (c) {
	case opt_timeout:
		o.timeout_s = seconds_arg("--timeout", arg, 86400);
		return true;
	case opt_job_key:
		o.job_key = parse_job_key(arg);
		if (!o.job_key)
			throw UsageError("invalid --job-key '" + arg +
					 "' (32 hex digits)");
		return true;
	case opt_num_conn:
		o.num_conn = static_cast<std::uint8_t>(
			count_arg("--num-conn", arg, 1, RV_MAX_NUM_CONN));
		return true;
	case opt_index_bits:
		o.index_bits = static_cast<std::uint8_t>(
			count_arg("--index-bits", arg, 1, RV_MAX_INDEX_BITS));
		return true;
	case opt_mtu: {
		auto m = rv::ib_mtu_from_bytes(static_cast<unsigned>(
			count_arg("--mtu", arg, 256, 4096)));
		if (!m)
			throw UsageError("invalid --mtu '" + arg +
					 "' (256, 512, 1024, 2048 or 4096)");
		o.mtu = *m;
		return true;
	}
	case opt_pkt_lifetime:
		o.packet_life_time = static_cast<std::uint8_t>(
			count_arg("--pkt-lifetime", arg, 0, 31));
		return true;
	case opt_poll:
		if (arg == "spin")
			o.yield = false;
		else if (arg == "yield")
			o.yield = true;
		else
			throw UsageError("invalid --poll '" + arg +
					 "' (spin or yield)");
		return true;
	default:
		return false;
	}
}

void TransferParser::finish()
{
	if (o.ep.kind == Endpoint::Kind::unset)
		throw UsageError("say --listen, --connect, --loopback-nodes or --loopback");
	if (loopback_threads_) {
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
	if (bw_ && o.buffer < *std::max_element(o.sizes.begin(), o.sizes.end()))
		throw UsageError("--buffer is smaller than the largest size");
}

} // namespace

TransferOptions parse_transfer(int argc, char **argv, rv::bench::Test test)
{
	TransferParser p(test);
	auto usage = [test](std::FILE *f) { transfer_usage(f, test); };
	parse_options(argc, argv, "s:n:", transfer_longopts, usage, p.o.common,
		      [&](int c, const std::string &arg) { p.option(c, arg, argv); });
	p.finish();
	return p.o;
}

} // namespace rvbench
