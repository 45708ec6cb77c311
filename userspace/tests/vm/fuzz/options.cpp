// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "options.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

#include <rv/uapi.hpp>

namespace rvfuzz {

namespace {

std::uint64_t parse_u64(std::string_view opt, std::string_view v)
{
	std::uint64_t n = 0;
	int base = 10;

	if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		v.remove_prefix(2);
		base = 16;
	}
	auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n, base);
	if (ec != std::errc() || p != v.data() + v.size() || v.empty())
		throw UsageError(std::string(opt) + ": not a number: " +
				 std::string(v));
	return n;
}

double parse_seconds(std::string_view opt, std::string_view v)
{
	std::string s(v);
	char *end = nullptr;
	double d = std::strtod(s.c_str(), &end);

	if (s.empty() || *end || !std::isfinite(d) || d < 0)
		throw UsageError(std::string(opt) + ": not a duration: " + s);
	return d;
}

// --skip NAME[,NAME...]: a call class, or a group of them.
void parse_skip(Options &o, std::string_view list)
{
	const std::initializer_list<Op> conn = {
		Op::conn_create, Op::conn_connect, Op::conn_connected,
		Op::conn_count, Op::conn_stats, Op::post_write};
	const std::initializer_list<Op> mr = {
		Op::reg_mem, Op::reg_mem_r4, Op::reg_mem_r1, Op::dereg_mem,
		Op::evict};
	const std::initializer_list<Op> ring = {
		Op::mmap, Op::munmap, Op::mremap, Op::ring_poll};

	while (!list.empty()) {
		std::size_t comma = list.find(',');
		std::string_view name = list.substr(0, comma);

		list = comma == std::string_view::npos ? std::string_view()
						       : list.substr(comma + 1);
		if (name.empty())
			continue;
		if (name == "kill") {
			o.no_kill = true;
			continue;
		}
		const std::initializer_list<Op> *group = name == "conn" ? &conn :
			name == "mr" ? &mr : name == "ring" ? &ring : nullptr;
		if (group) {
			for (Op op : *group)
				o.skip.set(idx(op));
			continue;
		}
		auto op = op_by_name(name);
		if (!op)
			throw UsageError("--skip: unknown call class: " +
					 std::string(name));
		o.skip.set(idx(*op));
	}
}

} // namespace

std::string usage(const char *prog)
{
	std::string u = "usage: ";

	u += prog;
	u += R"( [options]

Fuzzes the ioctls and mmap of /dev/rv from several processes and threads.
Stops after --calls calls or --seconds seconds, whichever comes first.
Exit status 0 iff no call returned an errno outside the set its ioctl may
return, succeeded where it cannot, or hung, and no worker crashed.

  --seed N        campaign seed (default 1); failures name it
  --calls N       calls on /dev/rv in total (default 100000)
  --seconds S     time bound (default 600; 0 = none)
  --procs P       worker processes (default 4, at most 64)
  --threads T     threads per worker process (default 2, at most 16)
  --json          print the summary as JSON on stdout
  --trace         print every call on stderr
  --progress S    a progress line on stderr every S seconds
  --hang S        a call running S seconds is a failure (default 180)
  --device PATH   device node (default $RV_DEVICE, else /dev/rv)
  --skip LIST     leave out call classes, comma separated: an op name
                  (see the summary), conn, mr, ring, or kill (no
                  SIGKILL or early exit of workers)
  --help          this text

Environment: RV_NODES, RV_NODE_IPS, RV_NODE_GID_INDEXES (tools/testing/vm
sets them with --rxe N) name the RDMA devices to attach to; without them
every device with a RoCE v2 IPv4 GID on port 1 is used.
)";
	return u;
}

Options parse_options(int argc, char **argv)
{
	Options o;

	if (const char *d = std::getenv("RV_DEVICE"); d && *d)
		o.device = d;
	else
		o.device = RV_FILE_NAME;

	for (int i = 1; i < argc; i++) {
		std::string_view a = argv[i];
		std::string_view v;
		auto value = [&]() -> std::string_view {
			if (auto eq = a.find('='); eq != std::string_view::npos) {
				v = a.substr(eq + 1);
				return v;
			}
			if (i + 1 >= argc)
				throw UsageError(std::string(a) + ": needs a value");
			v = argv[++i];
			return v;
		};
		std::string_view name = a.substr(0, a.find('='));

		if (name == "--help" || name == "-h") {
			o.help = true;
		} else if (name == "--json") {
			o.json = true;
		} else if (name == "--trace") {
			o.trace = true;
		} else if (name == "--seed") {
			o.seed = parse_u64(name, value());
		} else if (name == "--calls") {
			o.calls = parse_u64(name, value());
		} else if (name == "--seconds") {
			o.seconds = parse_seconds(name, value());
		} else if (name == "--procs") {
			std::uint64_t n = parse_u64(name, value());
			if (n < 1 || n > max_procs)
				throw UsageError("--procs: 1.." +
						 std::to_string(max_procs));
			o.procs = static_cast<unsigned>(n);
		} else if (name == "--threads") {
			std::uint64_t n = parse_u64(name, value());
			if (n < 1 || n > max_threads)
				throw UsageError("--threads: 1.." +
						 std::to_string(max_threads));
			o.threads = static_cast<unsigned>(n);
		} else if (name == "--progress") {
			o.progress = parse_seconds(name, value());
		} else if (name == "--hang") {
			o.hang_seconds = parse_seconds(name, value());
			if (o.hang_seconds < 1)
				throw UsageError("--hang: at least 1 s");
		} else if (name == "--device") {
			o.device = std::string(value());
		} else if (name == "--skip") {
			parse_skip(o, value());
		} else {
			throw UsageError("unknown option: " + std::string(a));
		}
	}
	return o;
}

} // namespace rvfuzz
