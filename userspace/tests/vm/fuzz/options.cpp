// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "options.hpp"

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

#include <rv/uapi.hpp>

namespace rvfuzz {

namespace {

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

	for (std::string_view name : rv::cli::split(list)) {
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
			throw rv::cli::UsageError("invalid --skip '" + std::string(name) +
						  "': not a call class");
		o.skip.set(idx(*op));
	}
}

} // namespace

void usage(std::FILE *f)
{
	std::fputs(R"(usage: rv_fuzz [options]

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
)", f);
}

rv::cli::Parsed parse_options(int argc, char **argv, Options &o)
{
	if (const char *d = std::getenv("RV_DEVICE"); d && *d)
		o.device = d;
	else
		o.device = RV_FILE_NAME;

	constexpr double day = 86400;
	const rv::cli::Option options[] = {
		rv::cli::flag("json", 0, o.json),
		rv::cli::flag("trace", 0, o.trace),
		rv::cli::number("seed", 0, o.seed),
		rv::cli::number("calls", 0, o.calls),
		rv::cli::seconds("seconds", 0, o.seconds, 0, 30 * day),
		rv::cli::number("procs", 0, o.procs, 1, max_procs),
		rv::cli::number("threads", 0, o.threads, 1, max_threads),
		rv::cli::seconds("progress", 0, o.progress, 0, day),
		rv::cli::seconds("hang", 0, o.hang_seconds, 1, day),
		rv::cli::text("device", 0, o.device),
		rv::cli::value("skip", 0, [&o](std::string_view v) { parse_skip(o, v); }),
	};
	return rv::cli::parse(argc, argv, options);
}

} // namespace rvfuzz
