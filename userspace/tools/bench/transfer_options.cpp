// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "bench/transfer_options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <toolkit/rdma_sysfs.hpp>

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
"A message that does not check out makes the exit status 1. --no-verify\n"
"measures as ib_write_bw does, without looking at the bytes.\n");
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
"Each side registers its buffers as MRs of C bytes (the last may be\n"
"shorter), C the largest power of two at most ATTACH's max_fmr_size (1 MiB\n"
"on soft-RoCE), and no write spans two of them, as PSM3 does. A size\n"
"above the smaller C of the two nodes is skipped with a note (JSON:\n"
"\"skipped\"); a size that does not divide C leaves the end of each MR\n"
"unused.\n"
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
"  -s, --sizes LIST          message sizes, K/M binary (default 4K,8K,...,4M;\n"
"                            those above C are skipped)\n"
"  -n, --iters N             messages per size (default: --bytes / size)\n"
"      --bytes B             bytes per size (default 32M), at least 1 message\n"
"      --window N            writes in flight, 1..%u (default 32), over all\n"
"                            the connection's QPs (ib_write_bw's -t counts\n"
"                            per QP: -q Q -t T compares with --window Q*T)\n"
"      --buffer B            bytes of each side's message buffer (default\n"
"                            64M), in MRs of C bytes: receive slots per size\n"
"                            = B / size (at most %u), send slots = B / size\n"
"                            (at most --window), fewer where size does not\n"
"                            divide C\n"
"      --no-verify           payloads are not checked: the client writes its\n"
"                            send slots as they are (no pattern, no stamps),\n"
"                            the server never reads them: \"checked\" (JSON\n"
"                            \"verified\") is 0, \"verify\" false.\n"
"                            Still checked: every completion's status, and\n"
"                            each received write's length and sequence\n"
"                            number (from the immediate), so a lost,\n"
"                            duplicated or misplaced write still fails.\n"
"                            Credits, slots and window are as without it.\n",
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
"      --cache-mb N          ATTACH mr_cache_size in MB (default: the\n"
"                            module's): each side's buffers must fit in it,\n"
"                            and max_fmr_size is at most it\n"
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

// The options of bw or lat into o; then the checks across them
// (finish()).
class TransferParser {
public:
	explicit TransferParser(rv::bench::Test test)
		: bw_(test == rv::bench::Test::bw)
	{
		o.test = test;
		o.sizes = default_sizes(test);
	}

	// The command's options (not the common ones).
	std::vector<rv::cli::Option> options()
	{
		std::vector<rv::cli::Option> v = endpoint_options();
		for (const auto &more : {message_options(), connection_options()})
			v.insert(v.end(), more.begin(), more.end());
		return v;
	}

	// The checks no single option can make.
	void finish();

	TransferOptions o;

private:
	// --listen, --connect, --loopback*: where the other process is.
	std::vector<rv::cli::Option> endpoint_options();
	// What is sent: --sizes, --iters, --bytes, --warmup, --window, --buffer,
	// --no-verify.
	std::vector<rv::cli::Option> message_options();
	// How to attach and connect: --timeout, --job-key, --num-conn,
	// --index-bits, --cache-mb, --mtu, --pkt-lifetime, --poll.
	std::vector<rv::cli::Option> connection_options();

	void set_kind(Endpoint::Kind k)
	{
		if (o.ep.kind != Endpoint::Kind::unset && o.ep.kind != k)
			throw UsageError("--listen, --connect and --loopback* "
					 "exclude each other");
		o.ep.kind = k;
	}

	// An option of bw only (for_bw) or of lat only: opt, or in the other
	// command one that is a UsageError.
	rv::cli::Option only(bool for_bw, rv::cli::Option opt) const
	{
		if (for_bw == bw_)
			return opt;
		opt.set = [name = opt.name, bw = bw_](std::optional<std::string_view>) {
			throw UsageError("--" + name + " is not an option of " +
					 (bw ? "bw" : "lat"));
		};
		return opt;
	}

	void host_port(Endpoint::Kind k, std::string_view arg);
	void loopback_nodes(std::string_view arg);

	bool bw_;
	bool loopback_threads_ = false;
};

void TransferParser::host_port(Endpoint::Kind k, std::string_view arg)
{
	const bool connect = k == Endpoint::Kind::connect;
	auto hp = rv::bench::oob::parse_host_port(std::string(arg));
	if (!hp || (connect && (hp->first.empty() || !hp->second)))
		throw UsageError(std::string("invalid --") + (connect ? "connect" : "listen") +
				 " '" + std::string(arg) + "'" + (connect ? " (HOST:PORT)" : ""));
	set_kind(k);
	o.ep.host = hp->first;
	o.ep.tcp_port = hp->second;
}

void TransferParser::loopback_nodes(std::string_view arg)
{
	const auto devs = rv::cli::split(arg);
	if (devs.size() != 2 || devs[0].empty() || devs[1].empty())
		throw UsageError("invalid --loopback-nodes '" + std::string(arg) +
				 "' (DEV_A,DEV_B)");
	set_kind(Endpoint::Kind::loopback);
	o.ep.client_dev = devs[0];
	o.ep.server_dev = devs[1];
}

std::vector<rv::cli::Option> TransferParser::endpoint_options()
{
	return {
		rv::cli::value("listen", 0, [this](std::string_view v) {
			host_port(Endpoint::Kind::listen, v);
		}),
		rv::cli::value("connect", 0, [this](std::string_view v) {
			host_port(Endpoint::Kind::connect, v);
		}),
		rv::cli::value("loopback-nodes", 0, [this](std::string_view v) { loopback_nodes(v); }),
		rv::cli::flag("loopback", 0, [this] {
			set_kind(Endpoint::Kind::loopback);
			std::istringstream in(std::getenv("RV_NODES") ? std::getenv("RV_NODES") : "");
			if (!(in >> o.ep.client_dev >> o.ep.server_dev))
				throw rv::cli::UsageError("--loopback needs two devices in "
							  "$RV_NODES (or use --loopback-nodes)");
		}),
		rv::cli::flag("loopback-threads", 0, loopback_threads_),
	};
}

std::vector<rv::cli::Option> TransferParser::message_options()
{
	return {
		rv::cli::value("sizes", 's', [this](std::string_view v) {
			o.sizes = rv::cli::parse_size_list("--sizes", v, 1, 1ULL << 30);
		}),
		rv::cli::value("iters", 'n', [this](std::string_view v) {
			o.iters = rv::cli::parse_uint("--iters", v, 1);
		}),
		only(true, rv::cli::size("bytes", 0, o.bytes)),
		only(false, rv::cli::number("warmup", 0, o.warmup)),
		only(true, rv::cli::number("window", 0, o.window, 1, rv::bench::max_window)),
		only(true, rv::cli::size("buffer", 0, o.buffer)),
		only(true, rv::cli::flag("no-verify", 0, [this] { o.verify = false; })),
	};
}

std::vector<rv::cli::Option> TransferParser::connection_options()
{
	return {
		rv::cli::seconds("timeout", 0, o.timeout_s, min_seconds, 86400),
		rv::cli::value("job-key", 0, [this](std::string_view v) {
			o.job_key = parse_job_key(std::string(v));
			if (!o.job_key)
				throw rv::cli::UsageError("invalid --job-key '" + std::string(v) +
							  "' (32 hex digits)");
		}),
		rv::cli::number("num-conn", 0, o.num_conn, 1, RV_MAX_NUM_CONN),
		rv::cli::number("index-bits", 0, o.index_bits, 1, RV_MAX_INDEX_BITS),
		rv::cli::number("cache-mb", 0, o.cache_mb, 1, 1048576),
		rv::cli::value("mtu", 0, [this](std::string_view v) {
			o.mtu = rv::ib_mtu_from_bytes(static_cast<unsigned>(
				rv::cli::parse_uint("--mtu", v, 256, 4096)));
			if (!o.mtu)
				throw rv::cli::UsageError("invalid --mtu '" + std::string(v) +
							  "' (256, 512, 1024, 2048 or 4096)");
		}),
		rv::cli::number("pkt-lifetime", 0, o.packet_life_time, 0, 31),
		rv::cli::value("poll", 0, [this](std::string_view v) {
			if (v != "spin" && v != "yield")
				throw rv::cli::UsageError("invalid --poll '" + std::string(v) +
							  "' (spin or yield)");
			o.yield = v == "yield";
		}),
	};
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
	parse_options(argc, argv, p.options(), usage, p.o.common);
	p.finish();
	return p.o;
}

} // namespace rvbench
