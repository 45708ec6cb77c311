// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// What an admin sees of rv (docs/observability.md): the debugfs files
// under /sys/kernel/debug/rv/, the rv tracepoints, and rv's kernel verbs
// objects in `rdma resource show`. One process attaches to both nodes,
// connects them and moves a few writes; each view must show exactly that.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rv/connection.hpp>
#include <rv/mapping.hpp>

#include <toolkit/debugfs.hpp>

#include "../support/subprocess.hpp"
#include "conn_util.hpp"
#include "fault/rdma_res.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr std::uint64_t buf_len = 1 << 20;
constexpr unsigned n_writes = 3;
constexpr std::uint64_t write_len = 4096 + 17;

std::string hex(const rv::JobKey &k)
{
	std::string s;
	char b[3];
	for (std::uint8_t c : k) {
		std::snprintf(b, sizeof(b), "%02x", c);
		s += b;
	}
	return s;
}

using Records = std::vector<rv::debugfs::Record>;

std::string str(const rv::debugfs::Record &r)
{
	std::string s;
	for (const auto &f : r.fields())
		s += (s.empty() ? "" : " ") + f.key + "=" + f.value;
	return s;
}

Records select(const Records &rs, const std::string &key, const std::string &value)
{
	Records out;
	for (const auto &r : rs)
		if (r.get(key) == std::string_view(value))
			out.push_back(r);
	return out;
}

std::string dump(const Records &rs)
{
	std::string s;
	for (const auto &r : rs)
		s += "\n  " + str(r);
	return s;
}

std::uint64_t sum(const Records &rs, const std::string &key)
{
	std::uint64_t n = 0;
	for (const auto &r : rs)
		n += r.get_u64(key).value_or(0);
	return n;
}

// Both nodes attached with one key, connected, a buffer registered on
// each side, and n_writes writes from a to b completed.
struct Pair {
	Pair(const Node &n0, const Node &n1)
		: key(rv::random_job_key()), a(n0, n1, key), b(n1, n0, key)
	{
		a.create();
		b.create();
		a.connect();
		b.connect();
		src = rv::Mapping::map(buf_len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE);
		dst = rv::Mapping::map(buf_len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE);
		smr = a.dev().reg_mem(src.data(), src.size(), rv::access::psm3_send);
		dmr = b.dev().reg_mem(dst.data(), dst.size(), rv::access::psm3_recv);
		if (!a.conn().wait_connected(seconds(120)) ||
		    !b.conn().wait_connected(seconds(120)))
			throw std::runtime_error("not connected");
	}

	// The writes; true if each completed on both sides.
	bool write()
	{
		for (unsigned i = 0; i < n_writes; i++) {
			rv::WriteRequest w;
			w.loc_addr = src.addr();
			w.mr = &smr.info();
			w.rem_addr = dst.addr() + i * write_len;
			w.rkey = dmr.rkey();
			w.length = write_len;
			w.wr_id = 100 + i;
			w.immed = a.immed(b.attach().rv_index, 0x40 + i);
			a.conn().post_write(w);
		}
		return a.wait_events(n_writes, seconds(60), milliseconds(200)).size() ==
			       n_writes &&
		       b.wait_events(n_writes, seconds(60), milliseconds(200)).size() ==
			       n_writes;
	}

	rv::JobKey key;
	Side a, b;
	rv::Mapping src, dst;
	rv::MemoryRegion smr, dmr;
};

// A value of the kernel's direct map or vmalloc area, as a number would
// show it: what no field may be.
bool looks_like_kernel_address(const std::string &v)
{
	std::uint64_t n = 0;
	try {
		std::size_t pos = 0;
		n = std::stoull(v, &pos, 0);
		if (pos != v.size())
			return false;
	} catch (const std::exception &) {
		return false;
	}
	return n >= 0xffff800000000000ULL;
}

// Connections in debugfs: num_conn QPs a side, all connected; the writes
// on a's (of job ja), their arrival on b's (of job jb).
void expect_conns(const rv::debugfs::Snapshot &d, const std::string &ja,
		  const std::string &jb, Pair &p, const Node &n1)
{
	const Records ca = select(d.conns, "job", ja);
	const Records cb = select(d.conns, "job", jb);
	ASSERT_EQ(ca.size(), p.a.num_conn()) << dump(d.conns);
	ASSERT_EQ(cb.size(), p.b.num_conn()) << dump(d.conns);
	for (const auto &c : ca) {
		SCOPED_TRACE(str(c));
		EXPECT_EQ(c.get("state"), std::string_view("connected"));
		EXPECT_NE(c.u64_or("qpn", 0), 0u);
		EXPECT_EQ(c.get_u64("conn"), p.a.conn().conn_handle());
		EXPECT_GE(c.get_u64("conn_count"), 1u);
		EXPECT_EQ(c.get_u64("outstanding"), 0u);
		EXPECT_EQ(c.get_u64("users"), 1u);
		EXPECT_EQ(c.get_u64("rem_addr"), n1.ip);
	}
	EXPECT_EQ(sum(ca, "post_write"), n_writes) << dump(ca);
	EXPECT_EQ(sum(ca, "post_write_bytes"), n_writes * write_len) << dump(ca);
	EXPECT_EQ(sum(ca, "send_write_cqe"), n_writes) << dump(ca);
	EXPECT_EQ(sum(ca, "send_write_cqe_fail"), 0u) << dump(ca);
	EXPECT_EQ(sum(cb, "recv_write_cqe"), n_writes) << dump(cb);
	EXPECT_EQ(sum(cb, "recv_write_bytes"), n_writes * write_len) << dump(cb);
	EXPECT_EQ(sum(cb, "recv_drop"), 0u) << dump(cb);
	EXPECT_EQ(sum(ca, "server") + sum(cb, "server"), p.a.num_conn())
		<< "one side listens";
}

// Processes in debugfs: this one, once in each job, with its cache and
// events.
void expect_procs(const rv::debugfs::Snapshot &d, const std::string &ja,
		  const std::string &jb, Pair &p)
{
	const std::string pid = std::to_string(getpid());
	const Records pa = select(select(d.procs, "job", ja), "pid", pid);
	const Records pb = select(select(d.procs, "job", jb), "pid", pid);
	ASSERT_EQ(pa.size(), 1u) << dump(d.procs);
	ASSERT_EQ(pb.size(), 1u) << dump(d.procs);
	const rv::CacheStats cs = p.a.dev().cache_stats();
	EXPECT_EQ(pa[0].get_u64("rv_index"), p.a.attach().rv_index);
	EXPECT_EQ(pb[0].get_u64("rv_index"), p.b.attach().rv_index);
	EXPECT_EQ(pa[0].get_u64("conns"), 1u);
	EXPECT_EQ(pa[0].get("conn_ids"),
		  std::string_view(std::to_string(p.a.conn().conn_handle())));
	EXPECT_EQ(pa[0].get_u64("cache_count"), cs.count) << str(pa[0]);
	EXPECT_EQ(pa[0].get_u64("cache_size"), cs.cache_size) << str(pa[0]);
	EXPECT_EQ(pa[0].get_u64("cache_miss"), cs.miss) << str(pa[0]);
	EXPECT_EQ(pa[0].get_u64("cache_limit"),
		  std::uint64_t{p.a.attach().mr_cache_size} << 20) << str(pa[0]);
	EXPECT_EQ(pa[0].get_u64("ring_entries"), p.a.config().cq_entries) << str(pa[0]);
	EXPECT_EQ(pa[0].get_u64("send_write_cqe"), n_writes) << str(pa[0]);
	EXPECT_EQ(pa[0].get_u64("send_write_bytes"), n_writes * write_len);
	EXPECT_EQ(pb[0].get_u64("recv_write_cqe"), n_writes) << str(pb[0]);
	EXPECT_EQ(pb[0].get_u64("recv_write_bytes"), n_writes * write_len);
}

} // namespace

TEST(Observability, DebugfsShowsJobsConnectionsAndProcesses)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const std::string dir(rv::debugfs::default_dir);
	std::optional<Pair> p;
	p.emplace(n0, n1);
	const std::uint64_t rx = rcvd_pkts(n1.dev);
	ASSERT_TRUE(p->write());
	EXPECT_GE(rcvd_pkts(n1.dev) - rx, n_writes) << "rcvd_pkts of " << n1.dev;

	const rv::debugfs::Snapshot d = rv::debugfs::read(dir);
	EXPECT_TRUE(d.warnings.empty()) << d.warnings.front().to_string();
	for (const Records *rs : {&d.devices, &d.jobs, &d.conns, &d.procs})
		for (const auto &r : *rs)
			for (const auto &f : r.fields())
				EXPECT_FALSE(looks_like_kernel_address(f.value))
					<< f.key << "=" << f.value << " in " << str(r);

	for (const Node *n : {&n0, &n1}) {
		const Records dev = select(d.devices, "device", n->dev);
		ASSERT_EQ(dev.size(), 1u) << dump(d.devices);
		EXPECT_GE(dev[0].u64_or("jobs", 0), 1u) << str(dev[0]);
	}

	// Each side's job-device, by its key and device.
	const Records mine = select(d.jobs, "job_key", hex(p->key));
	ASSERT_EQ(mine.size(), 2u) << dump(d.jobs);
	std::map<std::string, std::string> job_of;	// device -> job id
	for (const auto &j : mine) {
		SCOPED_TRACE(str(j));
		job_of[*j.find("device")] = *j.find("job");
		EXPECT_EQ(j.get_u64("uid"), 0u);
		EXPECT_EQ(j.get_u64("port"), 1u);
		EXPECT_EQ(j.get_u64("num_conn"), p->a.num_conn());
		EXPECT_EQ(j.get_u64("procs"), 1u);
		EXPECT_EQ(j.get_u64("conns"), 1u);
		EXPECT_EQ(j.get_u64("dead"), 0u);
		EXPECT_EQ(j.get_u64("index_bits"), p->a.config().index_bits);
	}
	ASSERT_EQ(job_of.count(n0.dev), 1u);
	ASSERT_EQ(job_of.count(n1.dev), 1u);
	EXPECT_EQ(select(d.jobs, "job", job_of[n0.dev]).size(), 1u) << "job ids are unique";

	expect_conns(d, job_of[n0.dev], job_of[n1.dev], *p, n1);
	if (HasFatalFailure())
		return;
	expect_procs(d, job_of[n0.dev], job_of[n1.dev], *p);
	if (HasFatalFailure())
		return;

	// Gone with the processes' files: no job with this key is left.
	const std::string key = hex(p->key);
	p.reset();
	EXPECT_TRUE(wait_until(
		[&] { return select(rv::debugfs::read(dir).jobs, "job_key", key).empty(); },
		seconds(30)))
		<< dump(rv::debugfs::read(dir).jobs);
}

namespace {

// The tracefs directory, mounted if need be.
std::string tracefs()
{
	for (const char *d : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
		struct stat st{};
		if (!stat((std::string(d) + "/events").c_str(), &st))
			return d;
	}
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr))
		throw std::system_error(errno, std::generic_category(), "mount tracefs");
	return "/sys/kernel/tracing";
}

// Lines of the trace buffer with event name ev (e.g. "rv_attach:").
std::vector<std::string> lines_of(const std::string &trace, const std::string &ev)
{
	std::vector<std::string> out;
	std::istringstream in(trace);
	for (std::string l; std::getline(in, l);)
		if (l.find(" " + ev + ": ") != std::string::npos)
			out.push_back(l);
	return out;
}

// Every enum that rv's events show by name reached the trace tools as a
// number (events: the tracefs directory of rv's events).
void expect_enums_as_numbers(const std::string &events)
{
	for (const char *n : {"rv_attach", "rv_detach", "rv_sconn_state", "rv_cm_event",
			      "rv_req_reject", "rv_mr_cache", "rv_post_write", "rv_send_cmpl",
			      "rv_recv_cmpl"}) {
		SCOPED_TRACE(n);
		const std::string fmt = read_file(events + "/" + n + "/format");
		EXPECT_EQ(fmt.find("RV_"), std::string::npos) << fmt;
		EXPECT_EQ(fmt.find("IB_CM_"), std::string::npos) << fmt;
	}
}

bool any_has(const std::vector<std::string> &ls, const std::vector<std::string> &parts)
{
	for (const auto &l : ls) {
		bool all = true;
		for (const auto &p : parts)
			all = all && l.find(p) != std::string::npos;
		if (all)
			return true;
	}
	return false;
}

} // namespace

TEST(Observability, TracepointsReportEachStep)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const std::string t = tracefs();
	const std::string events = t + "/events/rdma_rv";
	expect_enums_as_numbers(events);

	write_file(t + "/buffer_size_kb", "4096");
	write_file(t + "/trace", "");
	write_file(events + "/enable", "1");
	struct Off {
		std::string f;
		~Off()
		{
			std::ofstream(f) << "0";
		}
	} off{events + "/enable"};

	const std::string pid = "pid=" + std::to_string(getpid());
	// A REQ that no QP waits for: the listener's job is attached but has
	// no connection yet, so it turns the REQ away, and the initiator is
	// told to try again.
	{
		const bool n0_listens = listens(n0, n1);
		const Node &ln = n0_listens ? n0 : n1, &in = n0_listens ? n1 : n0;
		const rv::JobKey key = rv::random_job_key();
		Side listener(ln, in, key);
		Side initiator(in, ln, key);
		initiator.create();
		initiator.connect();
		ASSERT_TRUE(wait_until([&] { return initiator.conn().stats().rej_recv > 0; },
				       seconds(60)))
			<< to_string(initiator.conn().stats());
	}
	std::uint32_t ia = 0, ib = 0;
	{
		Pair p(n0, n1);
		ia = p.a.attach().rv_index;
		ib = p.b.attach().rv_index;
		// A hit, then an eviction, then an invalidation by munmap.
		{
			rv::MemoryRegion again = p.a.dev().reg_mem(
				p.src.data(), p.src.size(), rv::access::psm3_send);
		}
		ASSERT_TRUE(p.write());
		rv::Mapping extra = rv::Mapping::map(buf_len, PROT_READ | PROT_WRITE,
						     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE);
		{
			rv::MemoryRegion m = p.a.dev().reg_mem(extra.data(), extra.size(),
							       rv::access::psm3_send);
		}
		ASSERT_TRUE(p.a.dev().evict_range(extra.addr(), extra.size()));
		{
			rv::MemoryRegion m = p.a.dev().reg_mem(extra.data(), extra.size(),
							       rv::access::psm3_send);
		}
		// A permission change marks the cached MR for a recheck.
		ASSERT_EQ(::mprotect(extra.data(), extra.size(), PROT_READ), 0);
		extra = rv::Mapping{};	// munmap
	}
	// The connections close in a work item of rv after the files do.
	(void)wait_until([&] { return read_file(t + "/trace").find("new=closing") !=
				      std::string::npos; },
			 seconds(30));
	write_file(events + "/enable", "0");
	const std::string trace = read_file(t + "/trace");
	const auto attach = lines_of(trace, "rv_attach");
	EXPECT_TRUE(any_has(attach, {pid, "rv_index=" + std::to_string(ia), "device=" + n0.dev}))
		<< trace;
	EXPECT_TRUE(any_has(attach, {pid, "rv_index=" + std::to_string(ib), "device=" + n1.dev}))
		<< trace;
	// The two sides of the turned-away REQ, then the pair's.
	EXPECT_EQ(lines_of(trace, "rv_detach").size(), 4u) << trace;
	const auto state = lines_of(trace, "rv_sconn_state");
	EXPECT_TRUE(any_has(state, {"new=connected"})) << trace;
	EXPECT_TRUE(any_has(state, {"new=closing"})) << trace;
	const auto cm = lines_of(trace, "rv_cm_event");
	EXPECT_TRUE(any_has(cm, {"event=req_received"})) << trace;
	EXPECT_TRUE(any_has(cm, {"event=rep_received", "rv_reason=- "})) << trace;
	EXPECT_TRUE(any_has(cm, {"event=rej_received", "rv_reason=retry"})) << trace;
	EXPECT_TRUE(any_has(lines_of(trace, "rv_req_reject"), {"rv_reason=retry"})) << trace;
	const auto mr = lines_of(trace, "rv_mr_cache");
	for (const char *op : {"op=miss", "op=hit", "op=evict", "op=recheck", "op=invalidate"})
		EXPECT_TRUE(any_has(mr, {pid, op})) << op << "\n" << trace;
	const auto post = lines_of(trace, "rv_post_write");
	EXPECT_EQ(post.size(), n_writes) << trace;
	EXPECT_TRUE(any_has(post, {pid, "len=" + std::to_string(write_len), "ret=0"})) << trace;
	const auto sc = lines_of(trace, "rv_send_cmpl");
	EXPECT_EQ(sc.size(), n_writes) << trace;
	EXPECT_TRUE(any_has(sc, {pid, "status=0"})) << trace;
	const auto rc = lines_of(trace, "rv_recv_cmpl");
	EXPECT_EQ(rc.size(), n_writes) << trace;
	EXPECT_TRUE(any_has(rc, {"rv_index=" + std::to_string(ib), "status=0"})) << trace;
}

TEST(Observability, RdmaResourceShowsRvObjects)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	if (which("rdma").empty())
		GTEST_SKIP() << "needs rdma(8) (iproute2)";
	const auto before = [&](const char *type) { return rv_rdma_res(type, n0.dev); };
	const auto pd0 = before("pd"), cq0 = before("cq"), qp0 = before("qp"),
		   mr0 = before("mr");
	ASSERT_TRUE(pd0 && cq0 && qp0 && mr0);
	rv::test::fault::RdmaRes res;
	const std::uint64_t pool0 = res.cq_users(n0.dev, "ib_core");

	std::optional<Pair> p;
	p.emplace(n0, n1);
	ASSERT_TRUE(p->write());
	const unsigned nc = p->a.num_conn();
	const std::uint32_t mrs = p->a.dev().cache_stats().count;
	ASSERT_GE(mrs, 1u);
	EXPECT_EQ(rv_rdma_res("pd", n0.dev), *pd0 + 1) << "one PD per job-device";
	EXPECT_EQ(rv_rdma_res("cq", n0.dev), *cq0) << "rv makes no CQ of its own";
	EXPECT_EQ(res.cq_users(n0.dev, "ib_core"), pool0 + 2 * (nc + 1))
		<< "each QP's send and receive queue on a CQ of ib_core's pool";
	EXPECT_EQ(rv_rdma_res("qp", n0.dev), *qp0 + nc + 1)
		<< "num_conn RC QPs and the job-device's registration QP";
	EXPECT_EQ(rv_rdma_res("mr", n0.dev), *mr0 + mrs) << "one MR per cache entry";
	p.reset();
	EXPECT_TRUE(wait_until(
		[&] {
			return rv_rdma_res("pd", n0.dev) == pd0 && rv_rdma_res("cq", n0.dev) == cq0 &&
			       rv_rdma_res("qp", n0.dev) == qp0 && rv_rdma_res("mr", n0.dev) == mr0 &&
			       res.cq_users(n0.dev, "ib_core") == pool0;
		},
		seconds(30)))
		<< "rv objects left on " << n0.dev;
}

// Reading the files while connections come and go: every read succeeds
// with well-formed lines (on the debug kernel, lockdep and KASAN watch).
TEST(Observability, DebugfsReadsRaceConnectionTeardown)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const std::string dir(rv::debugfs::default_dir);
	std::atomic<bool> stop{false};
	std::atomic<unsigned> reads{0}, bad{0};
	std::string first_bad;
	std::thread reader([&] {
		while (!stop) {
			try {
				const rv::debugfs::Snapshot s = rv::debugfs::read(dir);
				if (!s.warnings.empty() && !bad++)
					first_bad = s.warnings.front().to_string();
			} catch (const std::exception &e) {
				if (!bad++)
					first_bad = e.what();
			}
			reads++;
		}
	});
	for (int i = 0; i < 3; i++) {
		Pair p(n0, n1);
		EXPECT_TRUE(p.write());
	}
	stop = true;
	reader.join();
	EXPECT_EQ(bad, 0u) << first_bad;
	EXPECT_GT(reads, 3u);
}

// trace-cmd, as an admin would run it: records the rv events of a command
// and reports them by name with their fields.
TEST(Observability, TraceCmdRecordsRvEvents)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n0, 0);
	const std::string tc = which("trace-cmd");
	if (tc.empty())
		GTEST_SKIP() << "needs trace-cmd (make deps installs it)";
	char self[4096] = {};
	ASSERT_GT(readlink("/proc/self/exe", self, sizeof(self) - 1), 0);
	char dir[] = "/tmp/rv-trace-XXXXXX";
	ASSERT_NE(mkdtemp(dir), nullptr);
	const std::string dat = std::string(dir) + "/trace.dat";

	const rv::test::ProcessResult rec = rv::test::run_process(
		{tc, "record", "-q", "-e", "rdma_rv", "-o", dat, self,
		 "--gtest_filter=Attach.Psm3DefaultsWork"});
	ASSERT_TRUE(rec.ok()) << rec.out << rec.err;
	const rv::test::ProcessResult rep = rv::test::run_process({tc, "report", "-i", dat});
	ASSERT_TRUE(rep.ok()) << rep.err;
	const auto attach = lines_of(rep.out, "rv_attach");
	EXPECT_TRUE(any_has(attach, {"device=" + n0.dev, "port=1"})) << rep.out;
	EXPECT_FALSE(lines_of(rep.out, "rv_detach").empty()) << rep.out;
	std::filesystem::remove_all(dir);
}
