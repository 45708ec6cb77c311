// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv_sizing: measures, with rv.ko loaded in the test VM (vm-run --rxe N),
// what rv's objects cost the kernel, and what a user RC QP of the size
// PSM3 would use costs in the same kernel.
//
// Every measurement is a series of points x0 < x1 < ... (processes,
// connections, MRs, QPs). Between points the program only adds objects
// of one kind; at each point it waits for the kernel to settle and reads
// /proc/meminfo, /proc/slabinfo and `rdma res show`. The deltas from the
// series' first point are fitted with a line (a + b*x): b is the cost of
// one object.
//
// The objects are made by forked worker processes that the controller
// (this process, which never opens /dev/rv or a verbs device while it
// measures) drives over socketpairs, so that the cost of forking is
// never part of a delta.
//
// Series:
//   attach  processes attaching to one job on node 0, in three groups of
//           cq_entries (0, 192 = what PSM3 asks for, 10000 = the maximum)
//   conn    node 0 connects to k = 1, 2, ... peers (one process per node,
//           all in one job); the VM holds both ends of every connection,
//           so a step adds 2 connection ends = 2 * num_conn RC QPs. Four
//           (num_conn, q_depth) settings separate the per-connection,
//           per-QP and per-queue-entry costs (least squares).
//   mr      one process registers MRs of 4 KiB .. 2044 KiB (REG_MEM; the
//           largest is soft-RoCE's max_fmr_size, 511 pages)
//   userqp  one process creates user RC QPs with ibverbs, sized as PSM3
//           sizes its per-process RC QPs (PSM3_RDMA=2): send 129, recv 33,
//           on the process's shared CQs; then user QPs of rv's size (each
//           with its own CQ), which tells rv's own share of an rv QP
//   --snapshot  no series: one point now, as key=value on one line (the
//           fields below); a test compares two (conn-4vm.sh)
//
// Output: human-readable on stdout; --json prints instead one JSON object
// with the points, the fits and the derived constants that
// tools/sizing/model.py reads (the text goes to stderr then), --json-file
// FILE writes that object to FILE.
#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rv/attach.hpp>
#include <rv/connection.hpp>
#include <rv/device.hpp>
#include <rv/error.hpp>
#include <rv/event_ring.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>
#include <rv/uapi.hpp>

#include <toolkit/json.hpp>
#include <toolkit/rdma_sysfs.hpp>

#include "cli.hpp"
#include "verbs.hpp"

namespace {

using i64 = std::int64_t;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr i64 kib = 1024;

// ------------------------------------------------------------ options

constexpr const char *prog = "rv_sizing";

struct Opts {
	bool json = false;			// --json: JSON on stdout
	bool snapshot = false;			// --snapshot: one point, key=value
	std::string json_file;			// --json-file FILE
	std::vector<std::string> only;		// --only attach,conn,mr,userqp
	unsigned settle_ms = 1500;		// --settle-ms
	unsigned max_peers = 7;			// --peers
	unsigned procs_step = 32;		// --procs-step
	unsigned procs_steps = 2;		// --procs-steps (per group)
	unsigned connect_timeout = 120;		// s
	// (num_conn, q_depth) settings of the conn series
	std::vector<std::pair<unsigned, unsigned>> conn_settings = {
		{4, 4000}, {1, 4000}, {4, 16000}, {4, 1000}};
	// PSM3 (PSM3_RDMA=2) user RC QP: PSM3_NUM_SEND_RDMA + 1 and
	// HFI_TF_NFLOWS + 1; its per-process CQs: NUM_SEND_WQES +
	// NUM_SEND_RDMA + 1000 and NUM_RECV_WQES + 32 + 1000.
	unsigned user_send_wr = 129;
	unsigned user_recv_wr = 33;
	unsigned user_scq = 4080 + 128 + 1000;
	unsigned user_rcq = 4095 + 32 + 1000;
	std::vector<unsigned> user_qp_steps = {32, 64, 128};
	bool want(const std::string &s) const
	{
		return only.empty() ||
		       std::find(only.begin(), only.end(), s) != only.end();
	}
	// Where the human-readable report goes: stdout, or stderr when
	// stdout has the JSON.
	std::ostream &text() const { return json ? std::cerr : std::cout; }
};

void usage(std::FILE *f)
{
	std::fprintf(f,
"Usage: %s [OPTION]...\n"
"Measures what rv's objects (processes, connections, MRs) and PSM3-sized\n"
"user RC QPs cost the kernel. Runs as root in the test VM with rv loaded\n"
"and RV_NODES / RV_NODE_IPS set (vm-run --rxe N); see docs/sizing.md.\n"
"\n"
"      --only LIST        series to run, comma separated: attach, conn, mr,\n"
"                         userqp (default: all)\n"
"      --settle-ms MS     wait before each point (default 1500)\n"
"      --peers K          most peers of the conn series (default 7)\n"
"      --procs-step N     processes added per point of attach (default 32)\n"
"      --procs-steps S    points per attach group (default 2)\n"
"      --conn NC:QD[,NC:QD...]  (num_conn, q_depth) of the conn series\n"
"                         (default 4:4000,1:4000,4:16000,4:1000)\n"
"  -j, --json             one JSON object on stdout (the points, the fits and\n"
"                         the constants); the text report goes to stderr\n"
"      --json-file FILE   also write that JSON object to FILE\n"
"      --snapshot         measure nothing: print one point now, key=value\n"
"                         (kernel_all, kernel, ... in bytes; res_* counts)\n"
"  -h, --help             show this help and exit\n"
"\n"
"Exit status: 0 on success, 1 if a measurement failed, 2 on a usage error.\n",
		prog);
}

// --conn NC:QD[,NC:QD...]
void parse_conn_settings(Opts &o, std::string_view list)
{
	o.conn_settings.clear();
	for (std::string_view item : rv::cli::split(list)) {
		const auto nq = rv::cli::split(item, ':');
		if (nq.size() != 2)
			throw rv::cli::UsageError("invalid --conn '" + std::string(list) +
						  "': not NC:QD[,NC:QD...]");
		o.conn_settings.emplace_back(
			static_cast<unsigned>(rv::cli::parse_uint("--conn NC", nq[0], 1,
								  RV_MAX_NUM_CONN)),
			static_cast<unsigned>(rv::cli::parse_uint("--conn QD", nq[1], 1,
								  UINT32_MAX)));
	}
}

rv::cli::Parsed parse(int argc, char **argv, Opts &o)
{
	const rv::cli::Option options[] = {
		rv::cli::flag("json", 'j', o.json),
		rv::cli::flag("snapshot", 0, o.snapshot),
		rv::cli::text("json-file", 0, o.json_file),
		rv::cli::value("only", 0, [&o](std::string_view v) {
			for (std::string_view s : rv::cli::split(v)) {
				if (s != "attach" && s != "conn" && s != "mr" && s != "userqp")
					throw rv::cli::UsageError("invalid --only '" + std::string(v) +
								  "': not a list of attach, conn, mr, userqp");
				o.only.emplace_back(s);
			}
		}),
		rv::cli::number("settle-ms", 0, o.settle_ms, 0, 600000),
		rv::cli::number("peers", 0, o.max_peers, 1, 1024),
		rv::cli::number("procs-step", 0, o.procs_step, 1, 4096),
		rv::cli::number("procs-steps", 0, o.procs_steps, 1, 1024),
		rv::cli::value("conn", 0, [&o](std::string_view v) { parse_conn_settings(o, v); }),
	};
	return rv::cli::parse(argc, argv, options);
}

// The words of s between runs of sep.
std::vector<std::string> split(const std::string &s, char sep)
{
	std::vector<std::string> out;
	std::string cur;
	std::istringstream in(s);
	while (std::getline(in, cur, sep))
		if (!cur.empty())
			out.push_back(cur);
	return out;
}

// ------------------------------------------------------------ nodes

struct NodeInfo {
	std::string dev;
	std::uint32_t ip = 0;
	std::uint16_t gid_index = 0;
	rv::Gid gid{};
};

std::vector<NodeInfo> discover_nodes()
{
	const char *devs = std::getenv("RV_NODES");
	const char *ips = std::getenv("RV_NODE_IPS");
	if (!devs || !ips)
		throw std::runtime_error("RV_NODES / RV_NODE_IPS not set: run under vm-run --rxe N");
	auto d = split(devs, ' ');
	auto a = split(ips, ' ');
	if (d.size() != a.size() || d.empty())
		throw std::runtime_error("RV_NODES and RV_NODE_IPS disagree");
	rv::RdmaSysfs sysfs;
	std::vector<NodeInfo> out;
	for (std::size_t i = 0; i < d.size(); i++) {
		NodeInfo n;
		n.dev = d[i];
		n.ip = rv::parse_ipv4(a[i]).value_or(0);
		rv::RoceGid g = sysfs.find_roce_v2_ipv4_gid(n.dev, 1, n.ip);
		n.gid_index = g.index;
		n.gid = g.gid;
		out.push_back(n);
	}
	return out;
}

std::string hex(const rv::JobKey &k)
{
	std::ostringstream o;
	for (auto b : k)
		o << std::hex << std::setw(2) << std::setfill('0') << unsigned(b);
	return o.str();
}

rv::JobKey unhex(const std::string &s)
{
	rv::JobKey k{};
	if (s.size() != 2 * k.size())
		throw std::invalid_argument("bad job key");
	for (std::size_t i = 0; i < k.size(); i++)
		k[i] = static_cast<std::uint8_t>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
	return k;
}

// ------------------------------------------------------------ /proc

i64 vm_pin_bytes()
{
	std::ifstream f("/proc/self/status");
	std::string line;
	while (std::getline(f, line))
		if (line.rfind("VmPin:", 0) == 0)
			return std::stoll(line.substr(6)) * kib;
	return -1;
}

// /proc/meminfo fields in bytes.
std::map<std::string, i64> read_meminfo()
{
	std::map<std::string, i64> m;
	std::ifstream f("/proc/meminfo");
	std::string name;
	i64 v = 0;
	std::string unit;
	std::string line;
	while (std::getline(f, line)) {
		std::istringstream in(line);
		if (!(in >> name >> v))
			continue;
		name.pop_back();	// ':'
		in >> unit;
		m[name] = unit == "kB" ? v * kib : v;
	}
	return m;
}

struct SlabRow {
	i64 active = 0;
	i64 num = 0;
	i64 objsize = 0;
};

std::map<std::string, SlabRow> read_slabinfo()
{
	std::map<std::string, SlabRow> m;
	std::ifstream f("/proc/slabinfo");
	std::string line;
	while (std::getline(f, line)) {
		if (line.empty() || line[0] == '#' || line.rfind("slabinfo", 0) == 0)
			continue;
		std::istringstream in(line);
		std::string name;
		SlabRow r;
		if (in >> name >> r.active >> r.num >> r.objsize)
			m[name] = r;
	}
	return m;
}

std::string run_capture(const std::string &cmd)
{
	struct Pclose {
		void operator()(FILE *f) const noexcept { ::pclose(f); }
	};
	std::string out;
	std::unique_ptr<FILE, Pclose> p(::popen(cmd.c_str(), "r"));
	if (!p)
		return out;
	char buf[4096];
	std::size_t n = 0;
	while ((n = std::fread(buf, 1, sizeof(buf), p.get())) > 0)
		out.append(buf, n);
	return out;
}

// `rdma res show`, summed over devices: pd, cq, qp, cm_id, mr, ctx.
std::map<std::string, i64> read_rdma_res()
{
	std::map<std::string, i64> m;
	std::istringstream in(run_capture("rdma res show 2>/dev/null"));
	std::string line;
	while (std::getline(in, line)) {
		std::istringstream w(line);
		std::string idx, dev, key;
		i64 v = 0;
		if (!(w >> idx >> dev))
			continue;
		while (w >> key >> v)
			m["res_" + key] += v;
	}
	return m;
}

// Free pages held on the per-CPU page lists (/proc/zoneinfo "count:"
// under "pagesets"), which MemFree does not include.
i64 pcp_pages()
{
	std::ifstream f("/proc/zoneinfo");
	std::string line;
	i64 n = 0;
	while (std::getline(f, line)) {
		std::istringstream in(line);
		std::string key;
		i64 v = 0;
		if (in >> key >> v && key == "count:")
			n += v;
	}
	return n;
}

struct Snap {
	std::map<std::string, i64> m;		// meminfo, res_*, derived
	std::map<std::string, SlabRow> slab;
};

// The fields every series reports.
//   kernel_all  every page in use that is neither page cache, anonymous
//               user memory nor reclaimable slab: MemTotal - MemFree -
//               per-CPU free lists - (Cached + Buffers + SwapCached) -
//               AnonPages - SReclaimable. It includes what no other
//               counter shows (page-sized allocations such as the
//               scatterlists of pinned user memory).
//   kernel      SUnreclaim + VmallocUsed + Percpu, the part that meminfo
//               attributes.
const std::vector<std::string> &fields()
{
	static const std::vector<std::string> f = {
		"kernel_all", "kernel", "SUnreclaim", "SReclaimable",
		"VmallocUsed", "Percpu", "PageTables", "KernelStack",
		"AnonPages", "MemFree", "pcp",
		"res_qp", "res_cq", "res_mr", "res_cm_id", "res_pd"};
	return f;
}

Snap snapshot(const Opts &o)
{
	std::this_thread::sleep_for(milliseconds(o.settle_ms));
	Snap s;
	// rdma res first: its exec disturbs the page cache and 9p slabs,
	// and meminfo is read after it has exited.
	s.m = read_rdma_res();
	std::this_thread::sleep_for(milliseconds(200));
	{
		// Fold the per-CPU counter deltas into the global counters.
		std::ofstream r("/proc/sys/vm/stat_refresh");
		r << "1\n";
	}
	s.slab = read_slabinfo();
	s.m["pcp"] = pcp_pages() * ::sysconf(_SC_PAGESIZE);
	for (const auto &[k, v] : read_meminfo())
		s.m[k] = v;
	s.m["kernel"] = s.m["SUnreclaim"] + s.m["VmallocUsed"] + s.m["Percpu"];
	s.m["kernel_all"] = s.m["MemTotal"] - s.m["MemFree"] - s.m["pcp"] -
			    s.m["Cached"] - s.m["Buffers"] - s.m["SwapCached"] -
			    s.m["AnonPages"] - s.m["SReclaimable"];
	return s;
}

// ------------------------------------------------------------ workers

// One forked process that makes objects on command. Commands and replies
// are single SEQPACKET messages: "ok ..." or "err ...".
class WorkerState {
public:
	explicit WorkerState(const std::vector<NodeInfo> &nodes) : nodes_(nodes) {}
	~WorkerState() { cleanup(); }
	WorkerState(const WorkerState &) = delete;
	WorkerState &operator=(const WorkerState &) = delete;

	std::string run(const std::string &line);
	void cleanup() noexcept;

private:
	// A command's words: w[0] its name, arg(i) the i-th argument.
	struct Command {
		std::vector<std::string> w;
		const std::string &arg(std::size_t i) const
		{
			if (i >= w.size())
				throw std::invalid_argument(w[0] + ": missing argument");
			return w[i];
		}
	};

	// One function per command, each answering "ok ..." or "err ...".
	std::string attach(const Command &c);
	std::string conn(const Command &c);
	std::string wait(const Command &c);
	std::string buf(const Command &c);
	std::string reg(const Command &c);
	std::string verbs(const Command &c);
	std::string qps(const Command &c);

	const NodeInfo &node(const std::string &s) const
	{
		std::size_t i = std::stoul(s);
		if (i >= nodes_.size())
			throw std::out_of_range("no node " + s);
		return nodes_[i];
	}

	std::vector<NodeInfo> nodes_;
	std::unique_ptr<rv::Device> dev_;
	const NodeInfo *local_ = nullptr;
	rv::EventRing ring_;
	std::vector<rv::Connection> conns_;
	std::vector<rv::MemoryRegion> mrs_;
	rv::Mapping buf_;
	std::size_t buf_used_ = 0;
	// In the order of creation, so that they are destroyed in reverse.
	rv::verbs::Context ctx_;
	rv::verbs::Pd pd_;
	rv::verbs::Cq scq_;
	rv::verbs::Cq rcq_;
	std::vector<rv::verbs::Cq> qp_cqs_;	// one per QP ("qpcq")
	std::vector<rv::verbs::Qp> qps_;
};

void WorkerState::cleanup() noexcept
{
	qps_.clear();
	qp_cqs_.clear();
	scq_.reset();
	rcq_.reset();
	pd_.reset();
	ctx_.reset();
	mrs_.clear();
	conns_.clear();
	try {
		if (ring_.valid())
			ring_.unmap();
	} catch (...) {
	}
	dev_.reset();
	buf_.reset();
}

std::string WorkerState::run(const std::string &line)
{
	const Command c{split(line, ' ')};
	if (c.w.empty())
		throw std::invalid_argument("empty command");
	const std::string &name = c.w[0];
	if (name == "attach")
		return attach(c);
	if (name == "conn")
		return conn(c);
	if (name == "wait")
		return wait(c);
	if (name == "buf")
		return buf(c);
	if (name == "reg")
		return reg(c);
	if (name == "verbs")
		return verbs(c);
	if (name == "qps" || name == "qpcq")
		return qps(c);
	throw std::invalid_argument("unknown command " + name);
}

std::string WorkerState::attach(const Command &c)
{
	// attach NODE CQ_ENTRIES NUM_CONN Q_DEPTH MR_MB KEY
	local_ = &node(c.arg(1));
	dev_ = std::make_unique<rv::Device>("/dev/rv");
	(void)dev_->capability();
	rv::AttachParams p;
	p.dev_name = local_->dev;
	p.port_num = 1;
	p.loc_gid_index = local_->gid_index;
	p.loc_gid = local_->gid;
	p.loc_addr = local_->ip;
	p.cq_entries = static_cast<std::uint32_t>(std::stoul(c.arg(2)));
	p.num_conn = static_cast<std::uint8_t>(std::stoul(c.arg(3)));
	p.q_depth = static_cast<std::uint32_t>(std::stoul(c.arg(4)));
	p.mr_cache_size = static_cast<std::uint32_t>(std::stoul(c.arg(5)));
	p.job_key = unhex(c.arg(6));
	p.reconnect_timeout = 30;
	p.hb_interval = 1000;
	rv::Attach a = dev_->attach(p);
	if (p.cq_entries)
		ring_ = rv::EventRing::map(*dev_);
	return "ok rv_index=" + std::to_string(a.rv_index) +
	       " q_depth=" + std::to_string(a.q_depth);
}

std::string WorkerState::conn(const Command &c)
{
	// conn REMOTE_NODE: CONN_CREATE and CONN_CONNECT (no wait)
	if (!dev_ || !local_)
		throw std::logic_error("conn before attach");
	const NodeInfo &r = node(c.arg(1));
	auto conn = rv::Connection::create(
		*dev_, rv::Remote::roce(r.gid, r.ip, local_->gid_index, 1));
	conn.connect(rv::PathRecord::roce(local_->gid, r.gid, 3));
	conns_.push_back(std::move(conn));
	return "ok";
}

std::string WorkerState::wait(const Command &c)
{
	// wait SECONDS: every connection of this process connected
	const auto t = seconds(std::stoul(c.arg(1)));
	for (auto &conn : conns_)
		if (!conn.wait_connected(t))
			return "err not connected in time";
	return "ok";
}

std::string WorkerState::buf(const Command &c)
{
	// buf BYTES [rev]: private anonymous memory, every page
	// touched, without transparent huge pages (4 KiB pages). With
	// rev the pages are touched from the last to the first, so
	// that consecutive pages are (almost never) physically
	// contiguous and a pinned range's scatterlist cannot merge
	// them: the worst case for per-page bookkeeping.
	const std::size_t len = std::stoull(c.arg(1));
	const bool rev = c.w.size() > 2 && c.w[2] == "rev";
	buf_ = rv::Mapping::anonymous(len, false);
	(void)::madvise(buf_.data(), len, MADV_NOHUGEPAGE);
	const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
	auto *b = static_cast<volatile char *>(buf_.data());
	for (std::size_t i = 0; i < len / page; i++)
		b[(rev ? len / page - 1 - i : i) * page] = 0x5a;
	buf_used_ = 0;
	return "ok vmpin=" + std::to_string(vm_pin_bytes());
}

std::string WorkerState::reg(const Command &c)
{
	// reg COUNT SIZE: COUNT REG_MEMs of SIZE bytes, back to back
	// in the buffer, kept referenced
	if (!dev_)
		throw std::logic_error("reg before attach");
	const std::size_t count = std::stoull(c.arg(1));
	const std::size_t size = std::stoull(c.arg(2));
	if (buf_used_ + count * size > buf_.size())
		throw std::invalid_argument("reg: buffer too small");
	for (std::size_t i = 0; i < count; i++) {
		mrs_.push_back(dev_->reg_mem(
			static_cast<char *>(buf_.data()) + buf_used_, size,
			rv::access::psm3_recv));
		buf_used_ += size;
	}
	return "ok vmpin=" + std::to_string(vm_pin_bytes());
}

std::string WorkerState::verbs(const Command &c)
{
	// verbs NODE SEND_CQE RECV_CQE: open the device, a PD and the
	// process's two CQs, as PSM3 does
	ctx_ = rv::verbs::open_device(node(c.arg(1)).dev);
	pd_ = rv::verbs::alloc_pd(*ctx_);
	scq_ = rv::verbs::create_cq(*ctx_, std::stoi(c.arg(2)));
	rcq_ = rv::verbs::create_cq(*ctx_, std::stoi(c.arg(3)));
	return "ok";
}

std::string WorkerState::qps(const Command &c)
{
	// qps COUNT SEND_WR RECV_WR: user RC QPs on the shared CQs
	if (!pd_)
		throw std::logic_error("qps before verbs");
	const unsigned long count = std::stoul(c.arg(1));
	ibv_qp_init_attr a{};
	a.send_cq = scq_.get();
	a.recv_cq = rcq_.get();
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = static_cast<std::uint32_t>(std::stoul(c.arg(2)));
	a.cap.max_recv_wr = static_cast<std::uint32_t>(std::stoul(c.arg(3)));
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	// qpcq ... CQE: each QP on a CQ of its own with CQE entries,
	// as rv makes its QPs
	const int own_cqe = c.w[0] == "qpcq" ? std::stoi(c.arg(4)) : 0;
	for (unsigned long i = 0; i < count; i++) {
		ibv_qp_init_attr ai = a;
		if (own_cqe) {
			qp_cqs_.push_back(rv::verbs::create_cq(*ctx_, own_cqe));
			ai.send_cq = ai.recv_cq = qp_cqs_.back().get();
		}
		qps_.push_back(rv::verbs::create_qp(*pd_, ai));
	}
	return "ok";
}

int worker_main(int fd, const std::vector<NodeInfo> &nodes)
{
	WorkerState st(nodes);
	for (;;) {
		char buf[1024];
		ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		std::string line(buf, static_cast<std::size_t>(n));
		std::string reply;
		if (line == "quit") {
			st.cleanup();
			reply = "ok";
		} else {
			try {
				reply = st.run(line);
			} catch (const std::exception &e) {
				reply = std::string("err ") + line + ": " + e.what();
			}
		}
		if (::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL) < 0)
			break;
		if (line == "quit")
			break;
	}
	return 0;
}

// The controller's ends of every worker's socket: a new worker closes
// the copies it inherits, so that each worker sees EOF when the
// controller goes away.
std::vector<int> &controller_fds()
{
	static std::vector<int> fds;
	return fds;
}

class Worker {
public:
	explicit Worker(const std::vector<NodeInfo> &nodes)
	{
		int sv[2];
		if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
			rv::throw_errno("socketpair");
		std::cout.flush();
		pid_ = ::fork();
		if (pid_ < 0)
			rv::throw_errno("fork");
		if (pid_ == 0) {
			::close(sv[0]);
			for (int fd : controller_fds())
				::close(fd);
			int rc = worker_main(sv[1], nodes);
			::_exit(rc);
		}
		::close(sv[1]);
		fd_ = sv[0];
		controller_fds().push_back(fd_);
	}
	~Worker() { stop(); }
	Worker(const Worker &) = delete;
	Worker &operator=(const Worker &) = delete;

	// Sends a command; returns the reply after "ok"; throws on "err".
	std::string cmd(const std::string &line, unsigned timeout_s = 180)
	{
		if (::send(fd_, line.data(), line.size(), MSG_NOSIGNAL) < 0)
			rv::throw_errno("send to worker");
		pollfd p{fd_, POLLIN, 0};
		int r = ::poll(&p, 1, static_cast<int>(timeout_s * 1000));
		if (r <= 0)
			throw std::runtime_error("worker: no answer to '" + line + "'");
		char buf[1024];
		ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
		if (n <= 0)
			throw std::runtime_error("worker died on '" + line + "'");
		std::string reply(buf, static_cast<std::size_t>(n));
		if (reply.rfind("ok", 0) != 0)
			throw std::runtime_error(reply);
		return reply.size() > 3 ? reply.substr(3) : std::string();
	}

	// Tells the worker to free everything and exit; reaps it.
	void stop() noexcept
	{
		if (pid_ <= 0)
			return;
		try {
			(void)cmd("quit", 60);
		} catch (...) {
			::kill(pid_, SIGKILL);
		}
		::close(fd_);
		auto &fds = controller_fds();
		fds.erase(std::remove(fds.begin(), fds.end(), fd_), fds.end());
		int st = 0;
		::waitpid(pid_, &st, 0);
		pid_ = -1;
	}

private:
	pid_t pid_ = -1;
	int fd_ = -1;
};

i64 reply_value(const std::string &reply, const std::string &key)
{
	for (const auto &kv : split(reply, ' '))
		if (kv.rfind(key + "=", 0) == 0)
			return std::stoll(kv.substr(key.size() + 1));
	return 0;
}

// ------------------------------------------------------------ series

struct Point {
	double x = 0;
	Snap s;
	std::map<std::string, i64> extra;	// e.g. vmpin
};

struct Fit {
	double slope = 0;
	double intercept = 0;
	double r2 = 1;
};

Fit fit(const std::vector<std::pair<double, double>> &xy)
{
	Fit f;
	const double n = static_cast<double>(xy.size());
	if (xy.size() < 2)
		return f;
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (auto [x, y] : xy) {
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
	}
	const double d = n * sxx - sx * sx;
	if (d == 0)
		return f;
	f.slope = (n * sxy - sx * sy) / d;
	f.intercept = (sy - f.slope * sx) / n;
	double ss_tot = 0, ss_res = 0;
	const double mean = sy / n;
	for (auto [x, y] : xy) {
		ss_tot += (y - mean) * (y - mean);
		const double e = y - (f.intercept + f.slope * x);
		ss_res += e * e;
	}
	f.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
	return f;
}

struct Series {
	std::string name;
	std::string x_name;
	std::map<std::string, double> params;
	std::vector<Point> pts;

	[[nodiscard]] i64 delta(std::size_t i, const std::string &k) const
	{
		auto get = [&](const Point &p) {
			auto it = p.s.m.find(k);
			if (it != p.s.m.end())
				return it->second;
			auto e = p.extra.find(k);
			return e != p.extra.end() ? e->second : i64{0};
		};
		return get(pts[i]) - get(pts.front());
	}
	[[nodiscard]] Fit fit_of(const std::string &k) const
	{
		std::vector<std::pair<double, double>> xy;
		for (std::size_t i = 0; i < pts.size(); i++)
			xy.emplace_back(pts[i].x, static_cast<double>(delta(i, k)));
		return fit(xy);
	}
	// Slab caches that changed most between the first and last point.
	[[nodiscard]] std::vector<std::pair<std::string, i64>> top_slabs(std::size_t n) const
	{
		std::vector<std::pair<std::string, i64>> d;
		const auto &a = pts.front().s.slab;
		const auto &b = pts.back().s.slab;
		for (const auto &[cache, rb] : b) {
			auto it = a.find(cache);
			const i64 before = it == a.end() ? 0 : it->second.active;
			const i64 bytes = (rb.active - before) * rb.objsize;
			if (bytes)
				d.emplace_back(cache, bytes);
		}
		std::sort(d.begin(), d.end(), [](const auto &x, const auto &y) {
			return std::llabs(x.second) > std::llabs(y.second);
		});
		if (d.size() > n)
			d.resize(n);
		return d;
	}
};

std::string human(double bytes)
{
	std::ostringstream o;
	const double a = std::fabs(bytes);
	o << std::fixed << std::setprecision(1);
	if (a >= 1024.0 * 1024 * 1024)
		o << bytes / (1024.0 * 1024 * 1024) << " GiB";
	else if (a >= 1024.0 * 1024)
		o << bytes / (1024.0 * 1024) << " MiB";
	else if (a >= 1024.0)
		o << bytes / 1024.0 << " KiB";
	else
		o << std::setprecision(0) << bytes << " B";
	return o.str();
}

void print_series(std::ostream &out, const Series &s)
{
	out << "\n== series " << s.name << " (";
	bool first = true;
	for (const auto &[k, v] : s.params) {
		out << (first ? "" : ", ") << k << "=" << static_cast<i64>(v);
		first = false;
	}
	out << ")\n";
	out << std::setw(8) << s.x_name << std::setw(12) << "kernel_all"
		  << std::setw(12) << "kernel"
		  << std::setw(12) << "SUnreclaim" << std::setw(12) << "Vmalloc"
		  << std::setw(11) << "PageTables" << std::setw(6) << "qp"
		  << std::setw(6) << "cq" << std::setw(6) << "mr" << std::setw(7)
		  << "cm_id";
	const bool pin = s.pts.front().extra.count("vmpin") != 0;
	if (pin)
		out << std::setw(12) << "VmPin";
	out << "\n";
	for (std::size_t i = 0; i < s.pts.size(); i++) {
		out << std::setw(8) << s.pts[i].x << std::setw(12)
			  << s.delta(i, "kernel_all") << std::setw(12)
			  << s.delta(i, "kernel") << std::setw(12)
			  << s.delta(i, "SUnreclaim") << std::setw(12)
			  << s.delta(i, "VmallocUsed") << std::setw(11)
			  << s.delta(i, "PageTables") << std::setw(6)
			  << s.delta(i, "res_qp") << std::setw(6)
			  << s.delta(i, "res_cq") << std::setw(6)
			  << s.delta(i, "res_mr") << std::setw(7)
			  << s.delta(i, "res_cm_id");
		if (pin)
			out << std::setw(12) << s.delta(i, "vmpin");
		out << "\n";
	}
	for (const char *m : {"kernel_all", "kernel"}) {
		const Fit k = s.fit_of(m);
		out << "  fit " << m << " = " << std::fixed
			  << std::setprecision(0) << k.intercept << " + "
			  << k.slope << " * " << s.x_name << "  (r2 "
			  << std::setprecision(4) << k.r2 << "; " << human(k.slope)
			  << " per " << s.x_name << ")\n";
	}
	out.unsetf(std::ios::floatfield);
	out << std::setprecision(6);
	out << "  slab caches (active objects x size, first to last point):";
	for (const auto &[name, b] : s.top_slabs(8))
		out << " " << name << " " << b;
	out << "\n";
}

void write_series(rv::json::Writer &w, const Series &s)
{
	w.begin_object();
	w.member("name", s.name);
	w.member("x", s.x_name);
	w.key("params").begin_object();
	for (const auto &[k, v] : s.params)
		w.member(k, v);
	w.end_object();
	w.key("points").begin_array();
	for (std::size_t i = 0; i < s.pts.size(); i++) {
		w.begin_object();
		w.member("x", s.pts[i].x);
		for (const auto &f : fields())
			w.member(f, s.delta(i, f));
		for (const auto &[k, v] : s.pts[i].extra)
			w.member(k, s.delta(i, k));
		w.end_object();
	}
	w.end_array();
	w.key("fits").begin_object();
	for (const auto &f : fields()) {
		const Fit ft = s.fit_of(f);
		w.key(f).begin_object();
		w.member("slope", ft.slope);
		w.member("intercept", ft.intercept);
		w.member("r2", ft.r2);
		w.end_object();
	}
	w.end_object();
	w.key("slab_top").begin_object();
	for (const auto &[name, b] : s.top_slabs(12))
		w.member(name, b);
	w.end_object();
	w.end_object();
}

// ------------------------------------------------------------ experiments

struct Results {
	std::vector<Series> series;
	std::vector<std::string> notes;

	[[nodiscard]] const Series *find(const std::string &name) const
	{
		for (const auto &s : series)
			if (s.name == name)
				return &s;
		return nullptr;
	}
};

std::string attach_cmd(unsigned node, unsigned cq, unsigned nc, unsigned qd,
		       unsigned mr_mb, const rv::JobKey &key)
{
	return "attach " + std::to_string(node) + " " + std::to_string(cq) + " " +
	       std::to_string(nc) + " " + std::to_string(qd) + " " +
	       std::to_string(mr_mb) + " " + hex(key);
}

// After workers exit, rv and the RDMA core free their objects from
// workqueues: wait (bounded) until `rdma res show` is back to before.
void wait_res_back(const std::map<std::string, i64> &before)
{
	for (int i = 0; i < 600; i++) {
		auto now = read_rdma_res();
		bool back = true;
		for (const auto &[k, v] : now) {
			auto it = before.find(k);
			if (v > (it == before.end() ? 0 : it->second))
				back = false;
		}
		if (back)
			return;
		std::this_thread::sleep_for(milliseconds(200));
	}
	std::cerr << "rv_sizing: warning: RDMA objects not freed in 120 s\n";
}

void exp_attach(const Opts &o, const std::vector<NodeInfo> &nodes, Results &res)
{
	const auto res_before = read_rdma_res();
	const rv::JobKey key = rv::random_job_key();
	const std::vector<unsigned> groups = {0, 192, 10000};
	const unsigned per_group = o.procs_step * o.procs_steps;
	const unsigned jobs = 16;
	std::vector<std::unique_ptr<Worker>> ws;
	for (unsigned i = 0; i < jobs + per_group * groups.size(); i++)
		ws.push_back(std::make_unique<Worker>(nodes));

	// Job-devices: the first ATTACH of a job makes it (PD, CM
	// listener). Each point adds jobs/2 jobs of one process each (with
	// no ring); the last of them is the job of the attach series.
	Series job{"job_device", "jobs", {{"cq_entries", 0}}, {}};
	job.pts.push_back({0, snapshot(o), {}});
	std::size_t next = 0;
	for (unsigned step = 1; step <= 2; step++) {
		for (unsigned i = 0; i < jobs / 2; i++, next++)
			(void)ws[next]->cmd(attach_cmd(
				0, 0, 0, 0, 0,
				next + 1 == jobs ? key : rv::random_job_key()));
		job.pts.push_back({double(step * jobs / 2), snapshot(o), {}});
	}
	print_series(o.text(), job);
	res.series.push_back(job);

	for (unsigned cq : groups) {
		Series s{"attach_cq" + std::to_string(cq), "procs",
			 {{"cq_entries", cq}}, {}};
		s.pts.push_back({0, snapshot(o), {}});
		for (unsigned step = 1; step <= o.procs_steps; step++) {
			for (unsigned i = 0; i < o.procs_step; i++)
				(void)ws[next++]->cmd(attach_cmd(0, cq, 0, 0, 0, key));
			s.pts.push_back({double(step * o.procs_step), snapshot(o), {}});
		}
		print_series(o.text(), s);
		res.series.push_back(s);
	}
	ws.clear();
	wait_res_back(res_before);
}

void exp_conn(const Opts &o, const std::vector<NodeInfo> &nodes, Results &res)
{
	const unsigned peers =
		std::min<unsigned>(o.max_peers, static_cast<unsigned>(nodes.size()) - 1);
	if (peers < 1) {
		res.notes.push_back("conn: needs at least 2 nodes");
		return;
	}
	for (auto [nc, qd] : o.conn_settings) {
		const auto res_before = read_rdma_res();
		const rv::JobKey key = rv::random_job_key();
		std::vector<std::unique_ptr<Worker>> ws;
		for (unsigned i = 0; i <= peers; i++)
			ws.push_back(std::make_unique<Worker>(nodes));
		for (unsigned i = 0; i <= peers; i++)
			(void)ws[i]->cmd(attach_cmd(i, 192, nc, qd, 0, key));
		const unsigned sq = std::max((qd + nc - 1) / nc, 8u);
		Series s{"conn_nc" + std::to_string(nc) + "_qd" + std::to_string(qd),
			 "peers",
			 {{"num_conn", nc}, {"q_depth", qd}, {"sq_depth", sq},
			  {"ends_per_step", 2}},
			 {}};
		s.pts.push_back({0, snapshot(o), {}});
		const std::string wait = "wait " + std::to_string(o.connect_timeout);
		for (unsigned k = 1; k <= peers; k++) {
			(void)ws[0]->cmd("conn " + std::to_string(k));
			(void)ws[k]->cmd("conn 0");
			(void)ws[0]->cmd(wait, o.connect_timeout + 30);
			(void)ws[k]->cmd(wait, o.connect_timeout + 30);
			s.pts.push_back({double(k), snapshot(o), {}});
		}
		print_series(o.text(), s);
		res.series.push_back(s);
		ws.clear();
		wait_res_back(res_before);
	}
}

void exp_mr(const Opts &o, const std::vector<NodeInfo> &nodes, Results &res)
{
	// (MR size, count, pages physically scattered): 4 + 32 + 128 +
	// 127.75 MiB in scattered 4 KiB pages (the worst case), and 128 MiB
	// in pages as the allocator hands them out (mostly contiguous). The
	// largest MR is as large as soft-RoCE registers one (max_fmr_size:
	// 511 pages).
	struct MrSet {
		std::size_t size, count;
		bool scattered;
	};
	const std::vector<MrSet> sets = {{4096, 1024, true},
					 {64 * 1024, 512, true},
					 {1 << 20, 128, true},
					 {(2 << 20) - 4096, 64, true},
					 {1 << 20, 128, false}};
	for (auto [size, count, scattered] : sets) {
		const auto res_before = read_rdma_res();
		{
			Worker w(nodes);
			(void)w.cmd(attach_cmd(0, 192, 0, 0, 4096, rv::random_job_key()));
			const std::string r0 = w.cmd("buf " + std::to_string(size * count) +
						     (scattered ? " rev" : ""));
			Series s{"mr_" + std::to_string(size / 1024) + "k" +
					 (scattered ? "" : "_contig"),
				 "mrs",
				 {{"mr_bytes", double(size)},
				  {"count", double(count)},
				  {"scattered_pages", scattered ? 1.0 : 0.0}},
				 {}};
			s.pts.push_back({0, snapshot(o), {{"vmpin", reply_value(r0, "vmpin")}}});
			const std::size_t half = count / 2;
			std::string r = w.cmd("reg " + std::to_string(half) + " " +
					      std::to_string(size));
			s.pts.push_back({double(half), snapshot(o),
					 {{"vmpin", reply_value(r, "vmpin")}}});
			r = w.cmd("reg " + std::to_string(count - half) + " " +
				  std::to_string(size));
			s.pts.push_back({double(count), snapshot(o),
					 {{"vmpin", reply_value(r, "vmpin")}}});
			print_series(o.text(), s);
			res.series.push_back(s);
		}
		wait_res_back(res_before);
	}
}

void exp_userqp(const Opts &o, const std::vector<NodeInfo> &nodes, Results &res)
{
	const auto res_before = read_rdma_res();
	{
		Worker w(nodes);
		Series cqs{"user_process_cqs", "procs",
			   {{"send_cqe", o.user_scq}, {"recv_cqe", o.user_rcq}}, {}};
		cqs.pts.push_back({0, snapshot(o), {}});
		(void)w.cmd("verbs 0 " + std::to_string(o.user_scq) + " " +
			    std::to_string(o.user_rcq));
		cqs.pts.push_back({1, snapshot(o), {}});
		print_series(o.text(), cqs);
		res.series.push_back(cqs);

		Series s{"user_rc_qp", "qps",
			 {{"max_send_wr", o.user_send_wr},
			  {"max_recv_wr", o.user_recv_wr}},
			 {}};
		s.pts.push_back({0, snapshot(o), {}});
		unsigned have = 0;
		for (unsigned n : o.user_qp_steps) {
			(void)w.cmd("qps " + std::to_string(n - have) + " " +
				    std::to_string(o.user_send_wr) + " " +
				    std::to_string(o.user_recv_wr));
			have = n;
			s.pts.push_back({double(n), snapshot(o), {}});
		}
		print_series(o.text(), s);
		res.series.push_back(s);

		// The same rxe, user QPs of the size rv gives its QPs at the
		// module defaults (sq_depth 1000): what of an rv QP is the
		// device's and what is rv's own.
		const unsigned sq = 1000;
		Series r{"user_qp_rv_sized", "qps",
			 {{"max_send_wr", sq + 2}, {"max_recv_wr", sq + 2},
			  {"cqe", 2 * sq + 4}, {"sq_depth", sq}},
			 {}};
		r.pts.push_back({0, snapshot(o), {}});
		for (unsigned n : {8u, 16u}) {
			(void)w.cmd("qpcq 8 " + std::to_string(sq + 2) + " " +
				    std::to_string(sq + 2) + " " +
				    std::to_string(2 * sq + 4));
			r.pts.push_back({double(n), snapshot(o), {}});
		}
		print_series(o.text(), r);
		res.series.push_back(r);
	}
	wait_res_back(res_before);
}

// ------------------------------------------------------------ constants

// Solves the 3x3 least-squares problem rows * (a, b, c) ~ y; false if
// the rows do not separate the three terms.
bool solve3(const std::vector<std::array<double, 4>> &rows, double out[3])
{
	double a[3][4] = {};
	for (const auto &r : rows)
		for (std::size_t i = 0; i < 3; i++) {
			for (std::size_t j = 0; j < 3; j++)
				a[i][j] += r[i] * r[j];
			a[i][3] += r[i] * r[3];
		}
	for (std::size_t c = 0; c < 3; c++) {
		std::size_t p = c;
		for (std::size_t r = c + 1; r < 3; r++)
			if (std::fabs(a[r][c]) > std::fabs(a[p][c]))
				p = r;
		if (std::fabs(a[p][c]) < 1e-9)
			return false;
		for (std::size_t j = 0; j < 4; j++)
			std::swap(a[c][j], a[p][j]);
		for (std::size_t r = 0; r < 3; r++) {
			if (r == c)
				continue;
			const double f = a[r][c] / a[c][c];
			for (std::size_t j = c; j < 4; j++)
				a[r][j] -= f * a[c][j];
		}
	}
	for (std::size_t i = 0; i < 3; i++)
		out[i] = a[i][3] / a[i][i];
	return true;
}

// Processes and job-devices (the attach series).
void derive_attach(std::map<std::string, double> &c, const Results &res,
		   const std::string &m)
{
	if (const Series *j = res.find("job_device"))
		c["job_plus_process_bytes"] = j->fit_of(m).slope;
	for (unsigned cq : {0u, 192u, 10000u})
		if (const Series *s = res.find("attach_cq" + std::to_string(cq))) {
			c["process_bytes_cq" + std::to_string(cq)] = s->fit_of(m).slope;
			c["process_pagetables_cq" + std::to_string(cq)] =
				s->fit_of("PageTables").slope;
		}
	if (c.count("process_bytes_cq0")) {
		c["process_bytes"] = c["process_bytes_cq0"];
		if (c.count("job_plus_process_bytes"))
			c["job_device_bytes"] = c["job_plus_process_bytes"] -
						c["process_bytes_cq0"];
		if (c.count("process_bytes_cq10000"))
			c["ring_bytes_per_entry"] = (c["process_bytes_cq10000"] -
						     c["process_bytes_cq0"]) / 10000.0;
	}
}

// Connections and their QPs: per connection end, per QP and per queue
// entry, by least squares over the (num_conn, q_depth) settings.
void derive_conn(std::map<std::string, double> &c, const Results &res,
		 const std::string &m)
{
	std::vector<std::array<double, 4>> rows;
	for (const auto &s : res.series) {
		if (s.name.rfind("conn_", 0) != 0)
			continue;
		const double nc = s.params.at("num_conn");
		const double sq = s.params.at("sq_depth");
		const double end = s.fit_of(m).slope / s.params.at("ends_per_step");
		const std::string tag = s.name.substr(5);
		c["conn_end_bytes_" + tag] = end;
		c["qp_bytes_" + tag] = end / nc;
		c["qps_per_peer_" + tag] = s.fit_of("res_qp").slope;
		rows.push_back({1.0, nc, nc * sq, end});
	}
	double x[3];
	if (rows.size() >= 3 && solve3(rows, x)) {
		c["conn_fixed_bytes"] = x[0];
		c["qp_fixed_bytes"] = x[1];
		c["qp_bytes_per_sq_depth"] = x[2];
	}
}

// MRs: per MR and per page.
void derive_mr(std::map<std::string, double> &c, const Results &res,
	       const std::string &m)
{
	std::vector<std::pair<double, double>> per_mr, pin;
	for (const auto &s : res.series) {
		if (s.name.rfind("mr_", 0) != 0)
			continue;
		const double pages = s.params.at("mr_bytes") / 4096.0;
		const double b = s.fit_of(m).slope;
		c["mr_bytes_" + s.name.substr(3)] = b;
		if (!s.params.at("scattered_pages"))
			continue;
		per_mr.emplace_back(pages, b);
		pin.emplace_back(pages, s.fit_of("vmpin").slope);
	}
	if (per_mr.size() >= 2) {
		// The line through the smallest and the largest MR: rxe's page
		// map grows in 4 KiB steps (256 pages), so this line is above
		// the sizes in between (an upper bound), where a least-squares
		// line would undercount small MRs.
		std::sort(per_mr.begin(), per_mr.end());
		const auto [p0, b0] = per_mr.front();
		const auto [p1, b1] = per_mr.back();
		const double per_page = (b1 - b0) / (p1 - p0);
		c["mr_bytes_per_page"] = per_page;
		c["mr_fixed_bytes"] = b0 - per_page * p0;
		const Fit f = fit(per_mr);
		c["mr_lsq_fixed_bytes"] = f.intercept;
		c["mr_lsq_bytes_per_page"] = f.slope;
		c["mr_lsq_r2"] = f.r2;
		c["mr_vmpin_bytes_per_page"] = fit(pin).slope;
	}
}

// PSM3-sized user QPs and their CQs; rv's own share of an rv QP.
void derive_userqp(std::map<std::string, double> &c, const Results &res,
		   const std::string &m)
{
	if (const Series *s = res.find("user_process_cqs"))
		c["user_process_cq_bytes"] = static_cast<double>(s->delta(1, m));
	if (const Series *s = res.find("user_rc_qp")) {
		c["user_rc_qp_bytes"] = s->fit_of(m).slope;
		c["user_rc_qp_pagetable_bytes"] = s->fit_of("PageTables").slope;
		c["user_rc_qp_send_wr"] = s->params.at("max_send_wr");
		c["user_rc_qp_recv_wr"] = s->params.at("max_recv_wr");
	}
	if (const Series *s = res.find("user_qp_rv_sized")) {
		c["user_qp_rv_sized_bytes"] = s->fit_of(m).slope;
		if (c.count("qp_bytes_nc4_qd4000"))
			c["rv_own_bytes_per_qp_sq1000"] =
				c["qp_bytes_nc4_qd4000"] - c["user_qp_rv_sized_bytes"];
	}
}

// The per-object constants, in bytes, from the series, for metric m.
std::map<std::string, double> derive(const Results &res, const std::string &m)
{
	std::map<std::string, double> c;
	derive_attach(c, res, m);
	derive_conn(c, res, m);
	derive_mr(c, res, m);
	derive_userqp(c, res, m);
	return c;
}

// ------------------------------------------------------------ environment

std::string read_line(const std::string &path)
{
	std::ifstream f(path);
	std::string s;
	std::getline(f, s);
	return s;
}

struct DevAttrs {
	i64 max_qp = 0, max_qp_wr = 0, max_cqe = 0, max_cq = 0, max_mr = 0;
};

DevAttrs query_dev(const std::string &name)
{
	DevAttrs d;
	ibv_device_attr a{};
	try {
		rv::verbs::Context ctx = rv::verbs::open_device(name);
		if (ibv_query_device(ctx.get(), &a))
			return d;
	} catch (const std::system_error &) {
		return d;
	}
	d.max_qp = a.max_qp;
	d.max_qp_wr = a.max_qp_wr;
	d.max_cqe = a.max_cqe;
	d.max_cq = a.max_cq;
	d.max_mr = a.max_mr;
	return d;
}

// What the measurements ran on.
struct Env {
	utsname u{};
	std::vector<NodeInfo> nodes;
	DevAttrs attrs;				// of the first node's device
	std::map<std::string, std::string> params;	// rv's module parameters
};

Env probe_env()
{
	if (::geteuid() != 0)
		throw std::runtime_error("needs root (slabinfo, rdma res)");
	Env env;
	env.nodes = discover_nodes();
	::uname(&env.u);
	env.attrs = query_dev(env.nodes.front().dev);
	for (const char *p : {"num_conn", "q_depth", "mr_cache_size",
			      "mr_cache_size_gpu", "service_id"})
		env.params[p] = read_line(std::string("/sys/module/rv/parameters/") + p);
	if (env.params["num_conn"].empty())
		throw std::runtime_error("rv is not loaded");
	return env;
}

void print_env(std::ostream &out, const Env &env)
{
	out << "rv_sizing: kernel " << env.u.release << ", " << env.nodes.size()
	    << " rxe nodes, rv num_conn=" << env.params.at("num_conn")
	    << " q_depth=" << env.params.at("q_depth") << "; " << env.nodes.front().dev
	    << " max_qp_wr=" << env.attrs.max_qp_wr << " max_cqe=" << env.attrs.max_cqe
	    << "\nkernel = SUnreclaim + VmallocUsed + Percpu (bytes); deltas from "
	       "each series' first point\n";
}

using Constants = std::map<std::string, double>;

void print_constants(std::ostream &out, const Results &res, const Constants &all,
		     const Constants &kernel)
{
	out << "\n== constants (bytes; kernel_all, and in brackets the "
	       "SUnreclaim + VmallocUsed + Percpu part)\n";
	for (const auto &[k, v] : all) {
		auto it = kernel.find(k);
		out << "  " << std::left << std::setw(32) << k << std::right
		    << std::fixed << std::setprecision(1) << std::setw(14) << v
		    << "  " << std::setw(10) << human(v) << "  ["
		    << (it == kernel.end() ? 0.0 : it->second) << "]\n";
	}
	for (const auto &n : res.notes)
		out << "note: " << n << "\n";
}

void write_env(rv::json::Writer &w, const Opts &o, const Env &env)
{
	w.member("tool", "rv_sizing");
	w.member("kernel", std::string(env.u.release));
	w.member("machine", std::string(env.u.machine));
	w.member("page_size", static_cast<i64>(::sysconf(_SC_PAGESIZE)));
	w.member("settle_ms", o.settle_ms);
	w.member("nodes", static_cast<i64>(env.nodes.size()));
	w.member("device", env.nodes.front().dev);
	w.key("device_attrs").begin_object();
	w.member("max_qp", env.attrs.max_qp);
	w.member("max_qp_wr", env.attrs.max_qp_wr);
	w.member("max_cqe", env.attrs.max_cqe);
	w.member("max_cq", env.attrs.max_cq);
	w.member("max_mr", env.attrs.max_mr);
	w.end_object();
	w.key("module_params").begin_object();
	for (const auto &[k, v] : env.params)
		w.member(k, v);
	w.end_object();
}

void write_constants(rv::json::Writer &w, const char *key, const Constants &c)
{
	w.key(key).begin_object();
	for (const auto &[k, v] : c)
		w.member(k, v);
	w.end_object();
}

std::string to_json(const Opts &o, const Env &env, const Results &res,
		    const Constants &all, const Constants &kernel)
{
	rv::json::Writer w(2);
	w.begin_object();
	write_env(w, o, env);
	w.member("metric", "kernel_all: MemTotal - MemFree - per-CPU free "
		 "pages - Cached - Buffers - SwapCached - AnonPages - "
		 "SReclaimable");
	write_constants(w, "constants", all);
	w.member("metric_kernel", "SUnreclaim + VmallocUsed + Percpu");
	write_constants(w, "constants_kernel", kernel);
	w.key("notes").begin_array();
	for (const auto &n : res.notes)
		w.value(n);
	w.end_array();
	w.key("series").begin_array();
	for (const auto &s : res.series)
		write_series(w, s);
	w.end_array();
	w.end_object();
	return w.str();
}

// Runs the series o asks for.
void run_series(const Opts &o, const std::vector<NodeInfo> &nodes, Results &res)
{
	if (o.want("attach"))
		exp_attach(o, nodes, res);
	if (o.want("conn"))
		exp_conn(o, nodes, res);
	if (o.want("mr"))
		exp_mr(o, nodes, res);
	if (o.want("userqp"))
		exp_userqp(o, nodes, res);
}

// The JSON object on stdout (--json) and in --json-file; false if the
// file could not be written.
bool write_json(const Opts &o, const std::string &j)
{
	if (o.json)
		std::cout << j << "\n" << std::flush;
	if (o.json_file.empty())
		return true;
	std::ofstream f(o.json_file, std::ios::trunc);
	f << j << "\n";
	f.close();
	if (!f) {
		std::cerr << prog << ": cannot write " << o.json_file << "\n";
		return false;
	}
	o.text() << "wrote " << o.json_file << "\n";
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	Opts o;
	if (auto rc = rv::cli::parse_command_line(prog, usage, parse, argc, argv, o))
		return *rc;
	try {
		if (o.snapshot) {
			const Snap s = snapshot(o);
			const char *sep = "";
			for (const auto &f : fields()) {
				auto it = s.m.find(f);
				std::cout << sep << f << "=" << (it == s.m.end() ? 0 : it->second);
				sep = " ";
			}
			std::cout << "\n";
			return 0;
		}
		const Env env = probe_env();
		print_env(o.text(), env);
		Results res;
		run_series(o, env.nodes, res);
		const Constants all = derive(res, "kernel_all");
		const Constants kernel = derive(res, "kernel");
		print_constants(o.text(), res, all, kernel);
		return write_json(o, to_json(o, env, res, all, kernel)) ? 0 : 1;
	} catch (const std::exception &e) {
		std::cerr << prog << ": " << e.what() << "\n";
		return 1;
	}
}
