// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Processes SIGKILLed in the middle of things: while registering large
// fresh buffers, while connecting, while connected and idle, and with
// writes in flight from their MRs. After each kill the process's MRs are
// deregistered, its rv_index is free for the next process of the job,
// its connection goes with the last process of the job on the node, and
// once every job is gone the RDMA core lists no verbs object of rv
// (`rdma resource show pd|cq|qp|mr`, read over RDMA netlink). Releases
// the kernel defers to a workqueue are polled for with generous
// deadlines; nothing here depends on how fast anything is.
//
//   RV_KILL_SEED   seed of the kill points (default 0x6b696c6c); each
//                  test prints the one it used
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <new>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rv/connection.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>

#include "child.hpp"
#include "conn_util.hpp"
#include "fault/rdma_res.hpp"
#include "mr_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using rv::test::fault::RdmaRes;
using rv::test::fault::ResCounts;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;
using steady = std::chrono::steady_clock;

namespace {

std::uint64_t kill_seed(const char *test)
{
	const char *v = std::getenv("RV_KILL_SEED");
	const std::uint64_t seed = v && *v ? std::strtoull(v, nullptr, 0) : 0x6b696c6cULL;
	note(std::string(test) + ": RV_KILL_SEED=" + std::to_string(seed));
	return seed;
}

// Memory shared with forked children (MAP_SHARED): where a child says
// what it is doing, readable after it was killed.
template <typename T>
class Shared {
public:
	Shared()
		: map_(rv::Mapping::map(sizeof(T), PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_ANONYMOUS))
	{
		new (map_.data()) T();
	}
	T *operator->() const noexcept { return static_cast<T *>(map_.data()); }
	T &operator*() const noexcept { return *static_cast<T *>(map_.data()); }

private:
	rv::Mapping map_;
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

// The child has not ended yet (it is not reaped here).
bool alive(pid_t pid)
{
	siginfo_t si{};
	if (::waitid(P_PID, static_cast<id_t>(pid), &si,
		     WEXITED | WNOHANG | WNOWAIT) < 0)
		return false;
	return si.si_pid == 0;
}

// The rv objects on dev, polled until they are want or timeout passes
// (the release of a process's MRs, connection and job runs in a
// workqueue after its file is closed). Returns the last count.
ResCounts settle(RdmaRes &res, const std::string &dev, const ResCounts &want,
		 milliseconds timeout = seconds(60))
{
	const auto end = steady::now() + timeout;
	for (;;) {
		ResCounts now = res.count(dev);
		if (now == want || steady::now() >= end)
			return now;
		std::this_thread::sleep_for(milliseconds(50));
	}
}

// Earlier tests' objects on n are gone (their release may still run);
// a leak shows here, before this test did anything.
::testing::AssertionResult clean_start(RdmaRes &res, const Node &n)
{
	const ResCounts got = settle(res, n.dev, ResCounts{});
	if (got == ResCounts{})
		return ::testing::AssertionSuccess();
	return ::testing::AssertionFailure()
	       << n.dev << ": rv objects left before this test: " << got.str();
}

// The same objects as rdma(8) lists them (`rdma resource show
// pd|cq|qp|mr`, rv's on dev): what an admin would look at. nullopt
// (with why) if the tool is missing or fails.
std::optional<ResCounts> rdma_tool_counts(const std::string &dev, std::string *why)
{
	ResCounts c;
	const std::pair<const char *, std::uint32_t ResCounts::*> types[] = {
		{"pd", &ResCounts::pd}, {"cq", &ResCounts::cq},
		{"qp", &ResCounts::qp}, {"mr", &ResCounts::mr}};
	for (const auto &[type, field] : types) {
		const std::optional<unsigned> n = rv_rdma_res(type, dev);
		if (!n) {
			*why = std::string("rdma resource show ") + type +
			       " failed (or rdma(8) is missing)";
			return std::nullopt;
		}
		c.*field = *n;
	}
	return c;
}

// rdma(8) agrees with the netlink count want (which settled already).
void expect_tool_shows(const std::string &dev, const ResCounts &want)
{
	std::string why;
	const auto got = rdma_tool_counts(dev, &why);
	if (!got) {
		note("skipping the rdma(8) cross-check: " + why);
		return;
	}
	EXPECT_TRUE(*got == want) << "rdma resource show, " << dev << ": rv objects "
				  << got->str() << ", want " << want.str();
}

#define EXPECT_SETTLES(res, dev, want, what)                                  \
	do {                                                                  \
		const ResCounts want_ = (want);                               \
		const ResCounts got_ = settle((res), (dev), want_);           \
		EXPECT_TRUE(got_ == want_)                                    \
			<< (dev) << " " << (what) << ": rv objects "          \
			<< got_.str() << ", want " << want_.str();            \
	} while (0)

// Nothing of rv is left on any of devs, by both counts.
void expect_all_gone(RdmaRes &res, const std::vector<std::string> &devs,
		     const char *what)
{
	for (const std::string &dev : devs)
		EXPECT_SETTLES(res, dev, ResCounts{}, what);
	for (const std::string &dev : devs)
		expect_tool_shows(dev, ResCounts{});
}

void expect_killed(Peer &p, const std::string &who)
{
	const Peer::Status st = p.wait(seconds(60));
	EXPECT_FALSE(st.timed_out) << who << " did not die of SIGKILL in 60 s";
	EXPECT_TRUE(!st.exited && st.signal == SIGKILL)
		<< who << " ended before the kill: " << st.str();
}

// ------------------------------------------------------------ registration

enum Phase : std::uint32_t {
	phase_idle,
	phase_reg,	// in REG_MEM (pinning, or waiting for the file's reg lock)
	phase_dereg,
	phase_map,
	phase_unmap,
};

const char *phase_name(std::uint32_t p)
{
	switch (p) {
	case phase_idle: return "idle";
	case phase_reg: return "REG_MEM";
	case phase_dereg: return "DEREG_MEM";
	case phase_map: return "mmap";
	case phase_unmap: return "munmap";
	}
	return "?";
}

// What one registering thread of a child does, for the parent.
struct RegThread {
	std::atomic<std::uint32_t> phase{phase_idle};
	std::atomic<std::uint64_t> regs{0};	// REG_MEMs that succeeded
	std::atomic<std::uint64_t> first_reg_us{0};
	std::atomic<std::uint32_t> errors{0};	// failed calls (alive)
	std::atomic<std::uint32_t> error_op{0};
	std::atomic<std::int32_t> error_errno{0};
};

// Registers fresh (never touched, so every page is faulted in and
// pinned by REG_MEM) anonymous buffers of len bytes over and over, as
// PSM3 does a buffer larger than max_fmr_size: in chunks of at most chunk
// bytes, one REG_MEM each. It keeps the last two buffers referenced; the
// older one goes by DEREG of its chunks then munmap, or by munmap first
// (its MRs turn stale while referenced) then DEREG. Never returns.
[[noreturn]] void reg_loop(int fd, std::uint64_t len, std::uint64_t chunk, RegThread &t,
			   std::uint64_t seed)
{
	struct Live {
		void *addr;
		std::vector<std::uint64_t> handles;	// chunk i at addr + i * chunk
	};
	std::mt19937_64 rng(seed);
	std::deque<Live> live;
	auto fail = [&](Phase op, int err) {
		t.error_op = op;
		t.error_errno = err;
		t.errors++;
	};
	auto chunk_len = [&](std::size_t i) { return std::min(chunk, len - i * chunk); };
	auto dereg_all = [&](const Live &b) {
		for (std::size_t i = 0; i < b.handles.size(); i++)
			if (int e = dereg_errno(fd, b.handles[i], addr_of(b.addr) + i * chunk,
						chunk_len(i), rv::access::psm3_recv))
				fail(phase_dereg, e);
	};
	for (;;) {
		t.phase = phase_map;
		void *m = ::mmap(nullptr, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			fail(phase_map, errno);
			t.phase = phase_idle;
			std::this_thread::sleep_for(milliseconds(10));
			continue;
		}
		// 4 KiB pages: pinning faults in every one of them.
		(void)::madvise(m, len, MADV_NOHUGEPAGE);
		Live b{m, {}};
		int err = 0;
		for (std::size_t i = 0; i * chunk < len && !err; i++) {
			rv_mem_params_out out{};
			t.phase = phase_reg;
			const auto t0 = steady::now();
			err = reg_errno(fd, addr_of(m) + i * chunk, chunk_len(i),
					rv::access::psm3_recv, &out);
			const auto us =
				std::chrono::duration_cast<microseconds>(steady::now() - t0);
			t.phase = phase_idle;
			if (err)
				break;
			if (!t.regs)
				t.first_reg_us = static_cast<std::uint64_t>(us.count());
			t.regs++;
			b.handles.push_back(out.mr_handle);
		}
		if (err) {
			fail(phase_reg, err);
			dereg_all(b);
			::munmap(m, len);
			continue;
		}
		live.push_back(std::move(b));
		if (live.size() <= 2)
			continue;
		const Live old = std::move(live.front());
		live.pop_front();
		const bool unmap_first = rng() & 1;
		if (unmap_first) {
			t.phase = phase_unmap;
			::munmap(old.addr, len);
		}
		t.phase = phase_dereg;
		dereg_all(old);
		if (!unmap_first) {
			t.phase = phase_unmap;
			::munmap(old.addr, len);
		}
		t.phase = phase_idle;
	}
}

// The chunks reg_loop() registers a buffer in: max_fmr_size (a whole
// number of pages), at most 16 MiB.
std::uint64_t reg_chunk(const rv::Attach &a)
{
	return std::min<std::uint64_t>(a.max_fmr_size, 16 * MiB);
}

constexpr unsigned reg_threads = 2;
constexpr std::uint64_t reg_len = 64 * MiB;

struct RegShared {
	RegThread t[reg_threads];
};

// A process of the job: attaches with p, sends its rv_index, and
// registers in reg_threads threads until it is killed.
int registering_child(Channel &ch, const rv::AttachParams &p, RegShared &sh,
		      std::uint64_t seed)
{
	rv::Device dev = open_declared();
	const rv::Attach a = dev.attach(p);
	std::vector<std::thread> threads;
	for (unsigned i = 0; i < reg_threads; i++)
		threads.emplace_back([&, i] {
			reg_loop(dev.fd(), reg_len, reg_chunk(a), sh.t[i], seed + i);
		});
	ch.send(msg_u64, std::uint64_t{a.rv_index});
	for (auto &t : threads)
		t.join();
	return 0;
}

// rv_index of a new process attaching with p, or -errno.
std::int64_t attach_in_new_process(const rv::AttachParams &p)
{
	auto out = run_in_child<std::int64_t>([&] {
		rv::Device d = open_declared();
		rv_attach_params a{};
		a.in = p.to_uapi();
		const int err = ioctl_errno(d.fd(), RV_IOCTL_ATTACH, &a);
		return err ? -std::int64_t{err} : std::int64_t{a.out.rv_index};
	});
	if (!out.ok())
		return -1000;
	return *out.report;
}

// Waits until the registering child is inside a REG_MEM after its first
// few, then a random part of one registration's duration; when says so.
void wait_inside_reg(Peer &child, RegShared &sh, std::mt19937_64 &rng, std::string &when)
{
	const std::uint64_t after = 1 + rng() % 3;
	auto regs = [&] {
		std::uint64_t sum = 0;
		for (auto &t : sh.t)
			sum += t.regs;
		return sum;
	};
	ASSERT_TRUE(wait_until([&] { return regs() >= after || !alive(child.pid()); },
			       seconds(600)))
		<< "no REG_MEM finished in 600 s";
	ASSERT_TRUE(alive(child.pid())) << "the registering process died";
	const std::uint64_t span = std::max<std::uint64_t>(
		std::max(sh.t[0].first_reg_us.load(), sh.t[1].first_reg_us.load()), 1);
	const auto d = microseconds(rng() % span);
	ASSERT_TRUE(wait_until([&] {
		for (auto &t : sh.t)
			if (t.phase == phase_reg)
				return true;
		return false;
	}, seconds(60)));
	std::this_thread::sleep_for(d);
	when = std::to_string(d.count()) + " us into a REG_MEM after " +
	       std::to_string(regs()) + " (one took " + std::to_string(span) + " us)";
}

// Where the killed child's threads were; in_reg: one inside a REG_MEM.
// None may have seen an error.
std::string thread_phases(const RegShared &sh, bool &in_reg)
{
	std::string where;
	for (unsigned t = 0; t < reg_threads; t++) {
		const RegThread &rt = sh.t[t];
		in_reg |= rt.phase == phase_reg;
		where += std::string(" thread ") + std::to_string(t) + ": " +
			 phase_name(rt.phase) + " after " +
			 std::to_string(rt.regs.load()) + " REG_MEM;";
		EXPECT_EQ(rt.errors.load(), 0u)
			<< "thread " << t << ": " << phase_name(rt.error_op)
			<< " failed: " << std::strerror(rt.error_errno);
	}
	return where;
}

} // namespace

// A process registering 64 MiB fresh buffers in two threads (each in
// chunks of max_fmr_size, as PSM3 does) is killed at random points: soon
// after it attached (its first REG_MEM still faulting in and pinning
// pages), or inside a later REG_MEM. The job lives on in
// the test (index 0, index_bits 1: one more index), so a new process of
// the job gets index 1 again only if the killed one's was freed; the
// killed one's MRs (referenced, stale, half-registered) are all
// deregistered; when the job goes, no rv object is left on the device.
TEST(Kill, MidRegistration)
{
	RV_NODE_OR_SKIP(n, 0);
	RdmaRes res;
	ASSERT_TRUE(clean_start(res, n));
	std::mt19937_64 rng(kill_seed("Kill.MidRegistration"));
	constexpr unsigned kills = 10;

	rv::AttachParams p = params_for(n);
	p.index_bits = 1;
	p.mr_cache_size = 0;	// the module's 256 MB: both threads' MRs fit
	p.cq_entries = 0;
	rv::Device holder = open_declared();
	ASSERT_EQ(holder.attach(p).rv_index, 0u);
	// The job alone (its PD and its registration QP, whose CQ is one
	// of ib_core's pool): what the device holds after each kill.
	const ResCounts job_only = res.count(n.dev);
	note("the job alone: " + job_only.str());
	EXPECT_EQ(job_only.pd, 1u);
	EXPECT_EQ(job_only.mr, 0u);
	EXPECT_EQ(job_only.qp, 1u) << "the registration QP";
	EXPECT_EQ(job_only.cq, 0u) << "rv's QPs complete to CQs of ib_core's pool";
	expect_tool_shows(n.dev, job_only);

	unsigned mid_reg = 0;
	for (unsigned i = 0; i < kills; i++) {
		SCOPED_TRACE("kill " + std::to_string(i));
		Shared<RegShared> sh;
		const std::uint64_t child_seed = rng();
		Peer child([&](Channel &ch) {
			return registering_child(ch, p, *sh, child_seed);
		});
		const auto idx = child.chan().expect_body<std::uint64_t>(msg_u64, seconds(60));
		EXPECT_EQ(idx, 1u) << "the registering process's rv_index";

		std::string when;
		if (i % 2 == 0) {
			// 0..50 ms after the attach.
			const auto d = milliseconds(rng() % 51);
			std::this_thread::sleep_for(d);
			when = std::to_string(d.count()) + " ms after the attach";
		} else {
			wait_inside_reg(child, *sh, rng, when);
			if (HasFatalFailure())
				return;
		}
		child.kill(SIGKILL);
		expect_killed(child, "the registering process");

		bool in_reg = false;
		const std::string where = thread_phases(*sh, in_reg);
		mid_reg += in_reg;
		note("kill " + std::to_string(i) + " " + when + ":" + where);

		// Its index is free for the next process of the job...
		const std::int64_t again = attach_in_new_process(p);
		EXPECT_EQ(again, 1) << "a new process of the job: "
				    << (again < 0 ? std::strerror(static_cast<int>(-again)) : "");
		// ... and every MR it had, or was making, is deregistered.
		EXPECT_SETTLES(res, n.dev, job_only, "after the kill");
	}
	EXPECT_GT(mid_reg, 0u) << "no kill landed inside a REG_MEM";

	holder.close();
	expect_all_gone(res, {n.dev}, "after the job");
}

// ------------------------------------------------------------ connect

namespace {

// What a process that connects says about its connection, as it goes.
struct ConnShared {
	std::atomic<std::uint32_t> connect_done{0};	// CONN_CONNECT returned
	std::atomic<std::int32_t> connect_err{0};
	std::atomic<std::int32_t> connected{0};		// CONN_CONNECTED, -errno
	std::atomic<std::uint32_t> ever_connected{0};
	std::atomic<std::uint32_t> other_err{0};	// an ioctl failed otherwise
	std::atomic<std::uint64_t> req_sent{0};
	std::atomic<std::uint64_t> req_recv{0};
	std::atomic<std::uint64_t> rej_recv{0};
	std::atomic<std::uint64_t> rep_recv{0};
	std::atomic<std::uint64_t> resolve{0};
};

// The process to kill: attaches, creates, says msg_ready, connects at
// once and watches the connection until it is killed.
int connecting_child(Channel &ch, const Node &local, const Node &remote,
		     const rv::JobKey &key, const SideConfig &cfg, ConnShared &sh)
{
	Side s(local, remote, key, cfg);
	s.create();
	ch.send(msg_ready);
	sh.connect_err = conn_connect_errno(s.fd(), s.conn().handle(),
					    path_of(local, remote).to_uapi());
	sh.connect_done = 1;
	for (;;) {
		int v = -1;
		const int err = conn_connected_errno(s.fd(), s.conn().handle(), &v);
		sh.connected = err ? -err : v;
		if (!err && v == 1)
			sh.ever_connected = 1;
		rv_conn_get_stats_params_out st{};
		const int serr = conn_stats_errno(s.fd(), s.conn().handle(),
						  RV_CONN_STATS_AGGREGATE, &st);
		if ((err && err != EIO) || serr)
			sh.other_err++;
		if (!serr) {
			sh.req_sent = st.req_sent;
			sh.req_recv = st.req_recv;
			sh.rej_recv = st.rej_recv;
			sh.rep_recv = st.rep_recv;
			sh.resolve = st.resolve;
		}
		std::this_thread::sleep_for(milliseconds(2));
	}
}

struct PeerReport {
	std::int32_t connected_err = 0;	// of CONN_CONNECTED
	std::int32_t connected = -1;
	rv::ConnStats stats{};
};

// The other node's process: attaches and creates (msg_ready); on msg_go
// connects if connect; on msg_fin reports and closes.
int other_side(Channel &ch, const Node &local, const Node &remote,
	       const rv::JobKey &key, const SideConfig &cfg, bool connect)
{
	Side s(local, remote, key, cfg);
	s.create();
	ch.send(msg_ready);
	for (;;) {
		Msg m = ch.recv(seconds(-1)).value();
		if (m.type == msg_go && connect)
			s.connect();
		if (m.type != msg_fin)
			continue;
		PeerReport r;
		r.connected_err = conn_connected_errno(s.fd(), s.conn().handle(), &r.connected);
		(void)conn_stats_errno(s.fd(), s.conn().handle(), RV_CONN_STATS_AGGREGATE,
				       &r.stats);
		ch.send(msg_user, r);
		return 0;
	}
}

// A verified transfer small enough for the debug kernel under TCG (well
// under 1 MiB/s): 1 MiB in flight in writes of at most 252 KiB, so that
// no QP goes long without a completion. No MR of it is whole MiB (see
// slot_bytes()).
TransferSpec small_spec(std::uint64_t seed)
{
	TransferSpec spec;
	spec.seed = seed;
	spec.bytes = 4 * MiB;
	spec.slots = 4;
	spec.slot_size = 252 * KiB;
	spec.max_len = 252 * KiB;
	spec.timeout_s = 300;
	spec.stall_s = 120;
	return spec;
}

// A forked process of job key on local that connects to remote and
// receives a verified transfer (recv_transfer), then waits for msg_fin.
Peer transfer_receiver(const Node &local, const Node &remote, const rv::JobKey &key,
		       const SideConfig &cfg, const TransferSpec &spec)
{
	return Peer([&](Channel &ch) {
		Side s(local, remote, key, cfg);
		s.create_and_connect(seconds(120));
		RecvReport r = recv_transfer(s, ch, spec);
		ch.expect(msg_fin, seconds(120));
		return r.result ? 1 : 0;
	});
}

// A new job connects a and b and moves verified data from a to b; then
// both processes are gone and so is every rv object on both devices.
void fresh_job_moves_data(RdmaRes &res, const Node &a, const Node &b,
			  std::uint64_t seed)
{
	SCOPED_TRACE("a fresh job " + a.dev + " -> " + b.dev);
	const rv::JobKey key = rv::random_job_key();
	const SideConfig cfg;
	const TransferSpec spec = small_spec(seed);
	const std::uint64_t count = message_count(spec);
	const std::uint64_t rx = rcvd_pkts(b.dev);

	Peer child = transfer_receiver(b, a, key, cfg, spec);
	{
		Side me(a, b, key, cfg);
		ASSERT_NO_THROW(me.create_and_connect(seconds(120)))
			<< to_string(me.conn().stats());
		const TransferResult tr = send_transfer(me, child.chan());
		EXPECT_EQ(tr.send.result, 0) << to_string(tr.send);
		EXPECT_EQ(tr.send.messages, count) << to_string(tr.send);
		EXPECT_EQ(tr.send.cqe_err, 0u) << to_string(tr.send);
		ASSERT_TRUE(tr.recv.has_value());
		EXPECT_EQ(tr.recv->result, 0) << to_string(*tr.recv);
		EXPECT_EQ(tr.recv->verified, count) << to_string(*tr.recv);
		EXPECT_EQ(tr.recv->mismatches, 0u) << to_string(*tr.recv);
		const std::uint64_t got = rcvd_pkts(b.dev) - rx;
		EXPECT_GE(got, spec.bytes / 4096) << b.dev << " received too few packets";
		child.chan().send(msg_fin);
		const Peer::Status st = child.wait(seconds(60));
		EXPECT_TRUE(st.ok()) << st.str();
	}
	expect_all_gone(res, {a.dev, b.dev}, "after the fresh job");
}

enum class Other { none, idle, connecting };

const char *other_name(Other o)
{
	switch (o) {
	case Other::none: return "no job there";
	case Other::idle: return "a process there that does not connect";
	case Other::connecting: return "a process there connecting too";
	}
	return "?";
}

// How far the killed connecting process got.
std::string conn_progress(const ConnShared &sh)
{
	return std::string(sh.connect_done ? "" : "CONN_CONNECT not returned, ") +
	       "connected " + std::to_string(sh.connected.load()) + " req_sent " +
	       std::to_string(sh.req_sent.load()) + " rej_recv " +
	       std::to_string(sh.rej_recv.load()) + " rep_recv " +
	       std::to_string(sh.rep_recv.load()) + " req_recv " +
	       std::to_string(sh.req_recv.load());
}

// Until it was killed, the connecting process saw no error but EIO, and
// no connection unless the other side (on there) was connecting too.
void expect_clean_connect(const ConnShared &sh, Other other, const Node &there)
{
	if (sh.connect_done) {
		EXPECT_EQ(sh.connect_err.load(), 0)
			<< "CONN_CONNECT: " << std::strerror(sh.connect_err);
	}
	EXPECT_EQ(sh.other_err.load(), 0u)
		<< "CONN_CONNECTED or GET_STATS failed (not with EIO)";
	if (other != Other::connecting) {
		EXPECT_EQ(sh.ever_connected.load(), 0u)
			<< "connected with nobody connecting on " << there.dev;
	}
}

// The other side of a killed connection ends: it saw the connection up or
// failed (EIO), exits cleanly, and leaves nothing on there.
void finish_other_side(Peer &peer, RdmaRes &res, const Node &there)
{
	peer.chan().send(msg_fin);
	const PeerReport r = peer.chan().expect_body<PeerReport>(msg_user, seconds(60));
	EXPECT_TRUE(r.connected_err == 0 || r.connected_err == EIO)
		<< "the other side's CONN_CONNECTED: " << std::strerror(r.connected_err);
	const Peer::Status st = peer.wait(seconds(60));
	EXPECT_TRUE(st.ok()) << st.str();
	EXPECT_SETTLES(res, there.dev, ResCounts{}, "after the other side closed");
}

} // namespace

// A process is killed while its connection is being made: on the
// initiating node (resolving, REQ sent, rejected and retrying) or on the
// listening node (waiting for REQs), with no job on the other node, with
// one there that never connects, or with one connecting at the same
// time. Every time the killed process's node is left with no rv object,
// and the other node's once its process closes too; then a new job
// connects the two nodes and moves data.
TEST(Kill, MidConnect)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	RdmaRes res;
	ASSERT_TRUE(clean_start(res, n0));
	ASSERT_TRUE(clean_start(res, n1));
	std::mt19937_64 rng(kill_seed("Kill.MidConnect"));
	const Node &client = listens(n0, n1) ? n1 : n0;
	const Node &server = listens(n0, n1) ? n0 : n1;
	ASSERT_NE(listens(client, server), listens(server, client)) << "the GIDs are equal";
	constexpr unsigned kills = 12;

	SideConfig cfg;
	cfg.reconnect_timeout = 30;	// outlasts every kill point
	unsigned after_req = 0;
	unsigned before_connected = 0;
	for (unsigned i = 0; i < kills; i++) {
		const bool on_client = i % 2 == 0;
		const Other other = static_cast<Other>((i / 2) % 3);
		const Node &here = on_client ? client : server;
		const Node &there = on_client ? server : client;
		const std::string what = std::string("kill ") + std::to_string(i) + " on the " +
					 (on_client ? "initiator " : "listener ") + here.dev +
					 ", " + other_name(other);
		SCOPED_TRACE(what);
		const rv::JobKey key = rv::random_job_key();

		std::optional<Peer> peer;
		if (other != Other::none) {
			peer.emplace([&](Channel &ch) {
				return other_side(ch, there, here, key, cfg,
						  other == Other::connecting);
			});
			peer->chan().expect(msg_ready, seconds(60));
		}
		Shared<ConnShared> sh;
		Peer victim([&](Channel &ch) {
			return connecting_child(ch, here, there, key, cfg, *sh);
		});
		victim.chan().expect(msg_ready, seconds(60));
		if (other == Other::connecting)
			peer->chan().send(msg_go);
		const auto d = milliseconds(other == Other::connecting ? rng() % 401
								       : rng() % 2501);
		std::this_thread::sleep_for(d);
		victim.kill(SIGKILL);
		expect_killed(victim, "the connecting process");

		note(what + ", " + std::to_string(d.count()) + " ms after CONN_CREATE: " +
		     conn_progress(*sh));
		expect_clean_connect(*sh, other, there);
		if (!sh->ever_connected) {
			before_connected++;
			after_req += on_client && sh->req_sent > 0;
		}

		// The killed process was the job on its node: all of it goes.
		EXPECT_SETTLES(res, here.dev, ResCounts{}, "after the kill");
		if (peer)
			finish_other_side(*peer, res, there);
		EXPECT_SETTLES(res, here.dev, ResCounts{}, "at the end");
	}
	note(std::to_string(before_connected) + " kills before the connection was made, " +
	     std::to_string(after_req) + " of them on the initiator after a REQ");
	EXPECT_GT(after_req, 0u) << "no kill landed between a REQ and the connection";

	fresh_job_moves_data(res, n0, n1, rng());
}

// The process that made the job's first CONN_CONNECT on the initiating
// node is killed while the REQs it started are being rejected (no job on
// the other node yet). The connection belongs to the job: another
// process of the job on that node, which had created it too, keeps it.
// Its own CONN_CONNECT with the same path succeeds, the other node's job
// comes, the connection is made and verified data moves through it.
TEST(Kill, MidConnectOtherMemberCarriesOn)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	RdmaRes res;
	ASSERT_TRUE(clean_start(res, n0));
	ASSERT_TRUE(clean_start(res, n1));
	const Node &client = listens(n0, n1) ? n1 : n0;
	const Node &server = listens(n0, n1) ? n0 : n1;
	const rv::JobKey key = rv::random_job_key();
	SideConfig cfg;
	cfg.reconnect_timeout = 120;	// counts from the first CONN_CONNECT

	std::optional<Side> me;
	me.emplace(client, server, key, cfg);
	me->create();
	Shared<ConnShared> sh;
	Peer victim([&](Channel &ch) {
		return connecting_child(ch, client, server, key, cfg, *sh);
	});
	victim.chan().expect(msg_ready, seconds(60));
	ASSERT_TRUE(wait_until([&] { return sh->rej_recv >= 2 || !alive(victim.pid()); },
			       seconds(120)))
		<< "the REQs to " << server.dev << " were not rejected";
	victim.kill(SIGKILL);
	expect_killed(victim, "the connecting process");
	note("killed after req_sent " + std::to_string(sh->req_sent.load()) + " rej_recv " +
	     std::to_string(sh->rej_recv.load()));
	EXPECT_EQ(sh->connect_err.load(), 0) << std::strerror(sh->connect_err);
	EXPECT_EQ(sh->ever_connected.load(), 0u);

	// The survivor's handle still names the connection, which goes on.
	int v = -1;
	EXPECT_EQ(conn_connected_errno(me->fd(), me->conn().handle(), &v), 0);
	EXPECT_EQ(v, 0);
	EXPECT_EQ(conn_connect_errno(me->fd(), me->conn().handle(),
				     path_of(client, server).to_uapi()),
		  0)
		<< "the same path again";
	const std::uint64_t req0 = me->conn().stats().req_sent;
	EXPECT_TRUE(wait_until([&] { return me->conn().stats().req_sent > req0; },
			       seconds(60)))
		<< "no REQ after the kill: " << to_string(me->conn().stats());

	const TransferSpec spec = small_spec(0x6b11);
	const std::uint64_t count = message_count(spec);
	const std::uint64_t rx = rcvd_pkts(server.dev);
	Peer other = transfer_receiver(server, client, key, cfg, spec);
	ASSERT_TRUE(me->conn().wait_connected(seconds(120)))
		<< "the job's connection was not made: " << to_string(me->conn().stats());
	const TransferResult tr = send_transfer(*me, other.chan());
	EXPECT_EQ(tr.send.result, 0) << to_string(tr.send);
	EXPECT_EQ(tr.send.messages, count) << to_string(tr.send);
	ASSERT_TRUE(tr.recv.has_value());
	EXPECT_EQ(tr.recv->verified, count) << to_string(*tr.recv);
	EXPECT_EQ(tr.recv->mismatches, 0u) << to_string(*tr.recv);
	EXPECT_GE(rcvd_pkts(server.dev) - rx, spec.bytes / 4096);
	other.chan().send(msg_fin);
	const Peer::Status st = other.wait(seconds(60));
	EXPECT_TRUE(st.ok()) << st.str();
	me.reset();
	expect_all_gone(res, {client.dev, server.dev}, "after both jobs");
}

// ------------------------------------------------------------ connected

namespace {

struct MemberReady {
	std::uint32_t rv_index = 0;
	std::uint32_t resv = 0;
	std::uint64_t conn_handle = 0;
};

struct WriteOrder {
	WriteTarget target;
	std::uint64_t key = 0;
	std::uint32_t len = 0;
	std::uint32_t payload = 0;	// of the immediate
};

struct WriteDone {
	std::int32_t post_err = 0;
	std::uint32_t events = 0;
	std::uint32_t type = 0;
	std::uint32_t status = 0;
};

// A process of the job on local: connects, registers a source buffer,
// says MemberReady; then writes what each msg_go orders (WriteOrder) and
// answers WriteDone; idle in between.
int member(Channel &ch, const Node &local, const Node &remote,
	   const rv::JobKey &key, const SideConfig &cfg)
{
	Side s(local, remote, key, cfg);
	connect_and_tell(s, ch, seconds(120));
	rv::Mapping src = rv::Mapping::map(64 * KiB, PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
	rv::MemoryRegion mr = s.dev().reg_mem(src.data(), src.size(),
					      rv::access::psm3_send);
	ch.send(msg_ready, MemberReady{s.attach().rv_index, 0, s.conn().conn_handle()});
	for (;;) {
		Msg m = ch.recv(seconds(-1)).value();
		if (m.type == msg_fin)
			return 0;
		if (m.type != msg_go)
			continue;
		const WriteOrder o = body_of<WriteOrder>(m);
		fill_pattern(src.bytes(), o.len, o.key);
		rv::WriteRequest w;
		w.loc_addr = src.addr();
		w.mr = &mr.info();
		w.rem_addr = o.target.addr;
		w.rkey = o.target.rkey;
		w.length = o.len;
		w.wr_id = o.key;
		w.immed = s.immed(o.target.rv_index, o.payload);
		WriteDone d;
		rv::PostResult pr;
		const auto end = steady::now() + seconds(60);
		for (;;) {
			d.post_err = s.conn().try_post_write(w, pr);
			if (!rv::Connection::retryable(d.post_err) || steady::now() >= end)
				break;
			std::this_thread::sleep_for(milliseconds(5));
		}
		if (!d.post_err) {
			const auto ev = s.wait_events(1, seconds(60));
			d.events = static_cast<std::uint32_t>(ev.size());
			if (!ev.empty()) {
				d.type = ev[0].event_type;
				d.status = ev[0].status;
			}
		}
		ch.send(msg_user, d);
	}
}

// p writes len bytes of pattern key to buf + off (registered as target
// by me); the write completes without error at p and arrives intact at
// me, through the node's shared connection.
void write_through(Peer &p, Side &me, const rv::Mapping &buf,
		   const WriteTarget &target, std::uint64_t off, std::uint64_t key)
{
	constexpr std::uint32_t len = 4096;
	const std::uint32_t payload = static_cast<std::uint32_t>(key & 0xfff);
	const std::uint64_t rx = rcvd_pkts(me.local().dev);
	WriteOrder o;
	o.target = target;
	o.target.addr += off;
	o.key = key;
	o.len = len;
	o.payload = payload;
	p.chan().send(msg_go, o);
	const WriteDone d = p.chan().expect_body<WriteDone>(msg_user, seconds(180));
	EXPECT_EQ(d.post_err, 0) << "POST_RDMA_WR_IMMED: " << std::strerror(d.post_err);
	EXPECT_EQ(d.events, 1u) << "the write's completion";
	EXPECT_EQ(d.type, unsigned{RV_WC_RDMA_WRITE});
	EXPECT_EQ(d.status, 0u) << "the write completed in error";
	const auto ev = me.wait_events(1, seconds(60));
	ASSERT_EQ(ev.size(), 1u) << "the write did not arrive";
	EXPECT_EQ(ev[0].event_type, RV_WC_RECV_RDMA_WITH_IMM) << to_string(ev[0]);
	EXPECT_EQ(ev[0].status, 0) << to_string(ev[0]);
	EXPECT_EQ(ev[0].imm_data, me.immed(target.rv_index, payload)) << to_string(ev[0]);
	EXPECT_FALSE(check_pattern(buf.bytes() + off, len, key).has_value())
		<< "the data that arrived differs";
	EXPECT_GT(rcvd_pkts(me.local().dev), rx);
}

// The connection of me (on node b) fails for good within its reconnect
// timeout once the peer's job is gone, after a DREQ.
void expect_failed_for_good(Side &me, const Node &b, unsigned reconnect_timeout)
{
	int err = 0;
	EXPECT_TRUE(wait_until([&] {
		int v = -1;
		err = conn_connected_errno(me.fd(), me.conn().handle(), &v);
		return err == EIO;
	}, seconds(reconnect_timeout + 60)))
		<< b.dev << "'s connection did not fail for good: CONN_CONNECTED "
		<< std::strerror(err) << "; " << to_string(me.conn().stats());
	const rv::ConnStats st = me.conn().stats();
	note(b.dev + " after the peer's job went: " + to_string(st));
	EXPECT_GE(st.dreq_recv, 1u) << "no DREQ from the released connection";
}

} // namespace

// Two processes of a job on node 0 share a connection to node 1 (this
// process). Killing one while idle frees its index and its MR and leaves
// the connection alone: no QP is re-established, the other process
// writes through it, and a new process gets the dead one's index and the
// same connection. Killing the last ones releases the connection: node 0
// has no rv object left, node 1 sees the connection go (DREQ) and fail
// for good after reconnect_timeout; after it closes, node 1 has none
// either.
TEST(Kill, WhileConnectedIdle)
{
	RV_NODE_OR_SKIP(a, 0);
	RV_NODE_OR_SKIP(b, 1);
	RdmaRes res;
	ASSERT_TRUE(clean_start(res, a));
	ASSERT_TRUE(clean_start(res, b));
	const rv::JobKey key = rv::random_job_key();
	SideConfig cfg;
	cfg.reconnect_timeout = 5;
	const unsigned num_conn = effective_num_conn(cfg.num_conn);

	std::optional<Side> me;
	me.emplace(b, a, key, cfg);
	const rv::Mapping buf = rv::Mapping::map(MiB, PROT_READ | PROT_WRITE,
						 MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
	std::optional<rv::MemoryRegion> rmr;
	rmr.emplace(me->dev().reg_mem(buf.data(), buf.size(), rv::access::psm3_recv));
	const WriteTarget target{buf.addr(), rmr->rkey(), me->attach().rv_index};
	auto start_member = [&] {
		return Peer([&](Channel &ch) { return member(ch, a, b, key, cfg); });
	};

	Peer p1 = start_member();
	Peer p2 = start_member();
	ASSERT_NO_THROW(connect_after(*me, {&p1, &p2}, seconds(120)))
		<< to_string(me->conn().stats());
	const auto r1 = p1.chan().expect_body<MemberReady>(msg_ready, seconds(180));
	const auto r2 = p2.chan().expect_body<MemberReady>(msg_ready, seconds(180));
	EXPECT_EQ(r1.conn_handle, r2.conn_handle) << "processes of a job on "
						    << a.dev << " got different connections";
	EXPECT_EQ((std::set<std::uint32_t>{r1.rv_index, r2.rv_index}),
		  (std::set<std::uint32_t>{0, 1}));

	// The job-device: its PD, num_conn RC QPs of the connection and its
	// registration QP (their CQs are ib_core's pool's); an MR per process.
	ResCounts both;
	both.pd = 1;
	both.qp = num_conn + 1;
	both.mr = 2;
	EXPECT_SETTLES(res, a.dev, both, "with two processes connected");
	expect_tool_shows(a.dev, both);
	write_through(p1, *me, buf, target, 0, 0x11);
	write_through(p2, *me, buf, target, 4096, 0x12);
	const std::uint64_t count0 = me->conn_count_sum();

	// The first one goes.
	p1.kill(SIGKILL);
	expect_killed(p1, "process 1");
	ResCounts one = both;
	one.mr = 1;
	EXPECT_SETTLES(res, a.dev, one, "after one of two processes was killed");
	write_through(p2, *me, buf, target, 8192, 0x13);
	EXPECT_EQ(me->conn_count_sum(), count0) << "a QP was re-established: "
						<< to_string(me->conn().stats());
	EXPECT_EQ(me->conn().stats().dreq_recv, 0u) << "the connection was torn down";

	// A new process of the job: the dead one's index, the same connection.
	Peer p3 = start_member();
	(void)p3.chan().expect(msg_connecting, seconds(180));
	const auto r3 = p3.chan().expect_body<MemberReady>(msg_ready, seconds(180));
	EXPECT_EQ(r3.rv_index, r1.rv_index) << "the killed process's index was not reused";
	EXPECT_EQ(r3.conn_handle, r1.conn_handle);
	write_through(p3, *me, buf, target, 12288, 0x14);
	EXPECT_SETTLES(res, a.dev, both, "with a new second process");
	EXPECT_EQ(me->conn_count_sum(), count0) << to_string(me->conn().stats());

	// The last ones go, idle: so does the connection.
	p2.kill(SIGKILL);
	p3.kill(SIGKILL);
	expect_killed(p2, "process 2");
	expect_killed(p3, "process 3");
	EXPECT_SETTLES(res, a.dev, ResCounts{}, "after the last process was killed");

	expect_failed_for_good(*me, b, cfg.reconnect_timeout);
	// This side's MR is its own and stays.
	EXPECT_EQ(res.count(b.dev).mr, 1u);
	rmr.reset();
	me.reset();
	expect_all_gone(res, {b.dev, a.dev}, "after the last job");
}

// ------------------------------------------------------------ writes in flight

namespace {

struct FloodShared {
	std::atomic<std::uint64_t> posts{0};
	std::atomic<std::uint64_t> cqe_ok{0};
	std::atomic<std::uint64_t> cqe_err{0};
	std::atomic<std::uint64_t> post_fail{0};	// not EAGAIN/EBUSY/ENOMEM
	std::atomic<std::int32_t> post_errno{0};
	RegThread reg;
};

// Writes of 64 KiB, 64 in flight: 4 MiB, which the debug kernel under TCG
// still moves without a QP going seconds without a completion. Every MR
// fits in max_fmr_size of soft-RoCE (511 pages), and no write ends at the
// end of an MR (see small_spec()).
constexpr std::uint32_t flood_q_depth = 64;	// fewer than ring entries
constexpr std::uint64_t flood_src_mrs = 4;
constexpr std::uint64_t flood_mr_len = slot_bytes(2);
constexpr std::uint64_t flood_write = 64 * KiB;
constexpr std::uint64_t flood_src_offsets = 31;	// 31 * 64 KiB < flood_mr_len
constexpr std::uint64_t flood_target_len = 31 * flood_write;	// written
constexpr std::uint64_t flood_target_mr_len = slot_bytes(2);
static_assert(flood_src_offsets * flood_write < flood_mr_len);
static_assert(flood_target_len < flood_target_mr_len);

// Connects, takes the target (WriteTarget), registers four MRs of 2 MiB
// less a page and keeps the send queue full of 64 KiB writes from them;
// with reg, another thread registers 16 MiB fresh buffers (in chunks of
// max_fmr_size) meanwhile. Says msg_ready once 8 writes completed, and
// goes on until it is killed.
int flooder(Channel &ch, const Node &local, const Node &remote,
	    const rv::JobKey &key, const SideConfig &cfg, FloodShared &sh,
	    bool reg, std::uint64_t seed)
{
	Side s(local, remote, key, cfg);
	connect_and_tell(s, ch, seconds(120));
	const WriteTarget t = ch.expect_body<WriteTarget>(msg_user, seconds(120));
	rv::Mapping src = rv::Mapping::map(flood_src_mrs * flood_mr_len,
					   PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
	std::memset(src.data(), 0x5a, src.size());
	std::vector<rv::MemoryRegion> mrs;
	for (std::uint64_t k = 0; k < flood_src_mrs; k++)
		mrs.push_back(s.dev().reg_mem(src.addr() + k * flood_mr_len, flood_mr_len,
					      rv::access::psm3_send));
	std::optional<std::thread> reg_thread;
	if (reg)
		reg_thread.emplace([&] {
			reg_loop(s.fd(), 16 * MiB, reg_chunk(s.attach()), sh.reg, seed);
		});

	bool told = false;
	auto on_event = [&](const rv::Event &e) {
		if (e.status)
			sh.cqe_err++;
		else
			sh.cqe_ok++;
	};
	// At most a queue's worth of posts between two looks at the ring: when
	// completions free slots as fast as the loop posts (seen on 6.1's
	// soft-RoCE, its other CPU busy registering), the queue never reports
	// full, and a loop posting until it does would never read its ring.
	for (std::uint64_t n = 0;;) {
		for (std::uint32_t b = 0; b < flood_q_depth; b++) {
			const std::uint64_t k = n % flood_src_mrs;
			rv::WriteRequest w;
			w.loc_addr = src.addr() + k * flood_mr_len +
				     (n % flood_src_offsets) * flood_write;
			w.mr = &mrs[k].info();
			w.rem_addr = t.addr + (n % (flood_target_len / flood_write)) * flood_write;
			w.rkey = t.rkey;
			w.length = flood_write;
			w.wr_id = n;
			w.immed = s.immed(t.rv_index, static_cast<std::uint32_t>(n & 0xffff));
			rv::PostResult pr;
			const int err = s.conn().try_post_write(w, pr);
			if (err) {
				if (!rv::Connection::retryable(err)) {
					sh.post_errno = err;
					sh.post_fail++;
				}
				break;
			}
			sh.posts++;
			n++;
		}
		s.ring().drain(on_event);
		if (!told && sh.cqe_ok >= 8) {
			ch.send(msg_ready);
			told = true;
		}
		std::this_thread::sleep_for(microseconds(200));
	}
}

} // namespace

// A process with its send queue full of 64 KiB writes from four MRs (and,
// every other time, a thread registering fresh buffers) is killed. Its
// MRs, held by the writes in flight, are deregistered once those
// complete; its QPs, CQs and PD go; the receiving process on the other
// node keeps its own MR. Then a new job connects and moves data.
TEST(Kill, WithRegisteredMrsInUse)
{
	RV_NODE_OR_SKIP(a, 0);
	RV_NODE_OR_SKIP(b, 1);
	RdmaRes res;
	ASSERT_TRUE(clean_start(res, a));
	ASSERT_TRUE(clean_start(res, b));
	std::mt19937_64 rng(kill_seed("Kill.WithRegisteredMrsInUse"));
	constexpr unsigned kills = 4;
	SideConfig cfg;
	cfg.reconnect_timeout = 5;
	cfg.q_depth = flood_q_depth;

	for (unsigned i = 0; i < kills; i++) {
		const bool reg = i % 2;
		SCOPED_TRACE("kill " + std::to_string(i) + (reg ? " (registering too)" : ""));
		const rv::JobKey key = rv::random_job_key();
		std::optional<Side> me;
		me.emplace(b, a, key, cfg);
		const rv::Mapping buf = rv::Mapping::map(flood_target_mr_len, PROT_READ | PROT_WRITE,
							 MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
		std::optional<rv::MemoryRegion> rmr;
		rmr.emplace(me->dev().reg_mem(buf.data(), buf.size(), rv::access::psm3_recv));
		Shared<FloodShared> sh;
		const std::uint64_t child_seed = rng();
		Peer child([&](Channel &ch) {
			return flooder(ch, a, b, key, cfg, *sh, reg, child_seed);
		});
		ASSERT_NO_THROW(connect_after(*me, {&child}, seconds(120)))
			<< to_string(me->conn().stats());
		const std::uint64_t rx = rcvd_pkts(b.dev);
		child.chan().send(msg_user,
				  WriteTarget{buf.addr(), rmr->rkey(), me->attach().rv_index});
		// The writing process says when 8 writes completed; if it never
		// does, what it saw and the receiver's connection name why.
		try {
			child.chan().expect(msg_ready, seconds(180));
		} catch (const std::exception &e) {
			FAIL() << e.what() << ": the writing process posted "
			       << sh->posts << ", saw " << sh->cqe_ok << " completions and "
			       << sh->cqe_err << " errors, " << sh->post_fail
			       << " posts failed (last: " << std::strerror(sh->post_errno)
			       << "), REG_MEM " << sh->reg.regs << " in "
			       << phase_name(sh->reg.phase) << "; the receiver's connection: "
			       << to_string(me->conn().stats());
		}
		const auto d = milliseconds(rng() % 101);
		std::this_thread::sleep_for(d);
		child.kill(SIGKILL);
		expect_killed(child, "the writing process");

		const std::uint64_t posts = sh->posts;
		const std::uint64_t done = sh->cqe_ok + sh->cqe_err;
		note("kill " + std::to_string(i) + " " + std::to_string(d.count()) +
		     " ms after 8 writes completed: posts " + std::to_string(posts) +
		     " completions seen " + std::to_string(done) + " (errors " +
		     std::to_string(sh->cqe_err.load()) + "), REG_MEM " +
		     std::to_string(sh->reg.regs.load()) + ", in " +
		     phase_name(sh->reg.phase));
		EXPECT_GT(posts, done) << "no write was in flight when the process was killed";
		EXPECT_EQ(sh->post_fail.load(), 0u)
			<< "POST_RDMA_WR_IMMED: " << std::strerror(sh->post_errno);
		EXPECT_EQ(sh->cqe_err.load(), 0u) << "writes failed before the kill";
		EXPECT_EQ(sh->reg.errors.load(), 0u)
			<< phase_name(sh->reg.error_op) << ": "
			<< std::strerror(sh->reg.error_errno);
		EXPECT_GT(rcvd_pkts(b.dev), rx);

		// Everything of the killed process goes, the MRs its writes
		// held included.
		EXPECT_SETTLES(res, a.dev, ResCounts{}, "after the kill");
		// The receiver keeps its own MR, and its file works.
		EXPECT_EQ(res.count(b.dev).mr, 1u);
		EXPECT_NO_THROW((void)me->dev().cache_stats());
		(void)me->drain();
		rmr.reset();
		me.reset();
		EXPECT_SETTLES(res, b.dev, ResCounts{}, "after the receiver closed");
	}

	fresh_job_moves_data(res, a, b, rng());
}
