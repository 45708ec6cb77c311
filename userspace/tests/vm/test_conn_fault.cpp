// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Connections under faults: the link goes down and up in the middle of a
// verified transfer (the connection recovers, every write completes
// exactly once, the data arrives); the peer process is killed, or closes
// its file, with writes in flight (the surviving side sees the connection
// lost and never hangs; posts fail with EAGAIN or EIO, never EINVAL).
//
//   RV_CONN_LINK_TESTS     set: run LinkDownUpMidTransfer and
//                          DeviceRemovedMidTraffic (conn.sh does)
//   RV_CONN_FLAP_DOWN_MS   how long the link stays down (default 5000)
//   RV_CONN_FLAP_BYTES     bytes of the transfer (default 160 MiB)
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_set>

#include <sys/mman.h>

#include <rv/connection.hpp>
#include <rv/mapping.hpp>

#include "conn_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using std::chrono::milliseconds;
using std::chrono::seconds;
using steady = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t MiB = 1024 * 1024;

std::uint64_t env_u64(const char *name, std::uint64_t def)
{
	const char *v = std::getenv(name);
	return v && *v ? std::strtoull(v, nullptr, 0) : def;
}

// Why a test that changes node n's link or device must not run here, if
// it must not: only in the test VM, and only when asked (conn.sh runs
// these last, as they leave the nodes changed), and n's netdev known.
std::optional<std::string> node_change_skip(const Node &n)
{
	if (!in_test_vm())
		return "changes the nodes: only in the test VM (RV_VM=1)";
	if (!std::getenv("RV_CONN_LINK_TESTS"))
		return "set RV_CONN_LINK_TESTS=1 (tools/testing/selftests/rv/conn.sh)";
	if (n.netdev.empty())
		return n.dev + ": netdev unknown";
	return std::nullopt;
}

// Linux 7.x's soft-RoCE built with lockdep (CONFIG_DEBUG_LOCK_ALLOC, the
// debug kernel) gives each device's UDP socket a lock class of its own
// module, which takes a module reference it drops only for its global
// sockets: every device pins rdma_rxe, and rmmod is refused whatever
// runs (docs/connections.md). Nothing here opens a verbs device, so a
// reference now is the driver's own.
std::optional<std::string> driver_pinned_skip()
{
	std::ifstream f("/sys/module/rdma_rxe/refcnt");
	unsigned long refs = 0;
	if (f >> refs && refs > 0)
		return "rdma_rxe pins itself (refcnt " + std::to_string(refs) +
		       " with no user: 7.x's rxe under lockdep keeps a module reference per "
		       "device), so it cannot be unloaded here";
	return std::nullopt;
}

} // namespace

namespace {

// The transfer of flap_mid_transfer(): 160 MiB unless
// RV_CONN_FLAP_BYTES says otherwise, write errors tolerated (re-posted).
TransferSpec flap_spec()
{
	TransferSpec spec;
	spec.seed = 0xf1a9;
	spec.bytes = env_u64("RV_CONN_FLAP_BYTES", 160 * MiB);
	spec.slots = 8;
	spec.slot_size = slot_bytes(2);
	spec.max_len = slot_bytes(2);
	spec.tolerate_errors = 1;
	spec.stall_s = 120;
	spec.timeout_s = 600;
	return spec;
}

// The sender of a transfer that a flap interrupted: all count messages
// sent, exactly one completion per post (some of them errors), traffic
// resumed on re-established QPs, never failed for good.
void expect_sender_recovered(const SendReport &s, std::uint64_t count)
{
	EXPECT_EQ(s.result, 0) << to_string(s);
	EXPECT_EQ(s.messages, count) << "traffic did not resume";
	EXPECT_EQ(s.outstanding_end, 0u) << to_string(s);
	EXPECT_EQ(s.cqe_unknown, 0u) << to_string(s);
	EXPECT_EQ(s.cqe_ok + s.cqe_err, s.posts) << to_string(s);
	EXPECT_EQ(s.cqe_bad, 0u) << to_string(s);
	EXPECT_EQ(s.post_eio, 0u) << "failed for good within reconnect_timeout";
	EXPECT_EQ(s.post_other, 0u) << "post: " << std::strerror(s.last_other_errno);
	EXPECT_EQ(s.overflow, 0u);
	EXPECT_GT(s.conn_count_last, s.conn_count_first)
		<< "no QP was re-established: " << to_string(s);
	EXPECT_GE(s.max_post_conn_count, 2u) << "no post went to a re-established QP";
}

// The receiver: every one of count messages arrived intact, no bad event.
void expect_all_received(const RecvReport &r, std::uint64_t count)
{
	EXPECT_EQ(r.result, 0) << to_string(r);
	EXPECT_EQ(r.verified, count) << to_string(r);
	EXPECT_EQ(r.mismatches, 0u) << to_string(r);
	EXPECT_EQ(r.bad_type + r.bad_index + r.bad_seq + r.bad_len + r.bad_conn_handle, 0u)
		<< to_string(r);
}

// A verified transfer from node 0 to node 1 during which flap(down_for)
// takes node 1 away for a while (what: "link", "address"): every write
// completes exactly once, the QPs recover within reconnect_timeout and
// traffic resumes on re-established QPs, every byte arrives.
void flap_mid_transfer(const Node &n0, const Node &n1, const std::string &what,
		       const std::function<void(milliseconds)> &flap)
{
	const rv::JobKey key = rv::random_job_key();
	SideConfig cfg;
	cfg.reconnect_timeout = 30;
	const TransferSpec spec = flap_spec();
	const milliseconds down_for(env_u64("RV_CONN_FLAP_DOWN_MS", 5000));
	const std::uint64_t count = message_count(spec);

	Peer child([&](Channel &ch) {
		Side s(n1, n0, key, cfg);
		s.create_and_connect(seconds(120));
		RecvReport r = recv_transfer(s, ch, spec);
		ch.send(msg_user, s.conn().stats());
		ch.expect(msg_fin, seconds(120));
		return r.result ? 1 : 0;
	});
	Side me(n0, n1, key, cfg);
	me.create_and_connect(seconds(120));
	const std::uint64_t rx1 = rcvd_pkts(n1.dev);

	std::thread flapper;
	std::string flap_error;
	bool flapped = false;
	steady::time_point flap_start;
	auto progress = [&](std::uint64_t bytes) {
		if (flapped || bytes < spec.bytes / 4)
			return;
		flapped = true;
		flap_start = steady::now();
		note(what + " of " + n1.netdev + " down for " +
		     std::to_string(down_for.count()) + " ms after " +
		     std::to_string(bytes >> 20) + " MiB");
		flapper = std::thread([&] {
			try {
				flap(down_for);
			} catch (const std::exception &e) {
				flap_error = e.what();
			}
		});
	};
	TransferResult res = send_transfer(me, child.chan(), progress);
	if (flapper.joinable())
		flapper.join();
	const double after_flap = std::chrono::duration<double>(steady::now() - flap_start).count();
	note("sender: " + to_string(res.send));
	note("transfer ended " + std::to_string(after_flap) + " s after the " + what + " went down");

	ASSERT_TRUE(flapped) << "the transfer ended before the " << what << " flap";
	EXPECT_EQ(flap_error, "");
	const SendReport &s = res.send;
	expect_sender_recovered(s, count);
	ASSERT_TRUE(res.recv.has_value());
	note("receiver: " + to_string(*res.recv));
	expect_all_received(*res.recv, count);

	const rv::ConnStats peer_cs = child.chan().expect_body<rv::ConnStats>(msg_user, seconds(60));
	const rv::ConnStats cs = me.conn().stats();
	note("this side: " + to_string(cs));
	note("peer side: " + to_string(peer_cs));
	EXPECT_TRUE(me.conn().connected());
	EXPECT_GE(rcvd_pkts(n1.dev) - rx1, s.bytes / 4096);

	child.chan().send(msg_fin);
	Peer::Status st = child.wait(seconds(60));
	EXPECT_TRUE(st.ok()) << st.str();
}

} // namespace

TEST(ConnFault, LinkDownUpMidTransfer)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	RV_ROOT_OR_SKIP();
	if (const auto why = node_change_skip(n1))
		GTEST_SKIP() << *why;
	flap_mid_transfer(n0, n1, "link", [&](milliseconds down_for) {
		link_flap(n1, down_for);
	});
}

namespace {

// The peer: connect, register 1 MiB, send BufInfo; on msg_user + 1
// destroy everything rv (closing the file) and stay alive; exits on
// msg_fin.
int lossy_peer(Channel &ch, const Node &local, const Node &remote,
	       const rv::JobKey &key, const SideConfig &cfg)
{
	std::optional<Side> s;
	s.emplace(local, remote, key, cfg);
	connect_and_tell(*s, ch, seconds(120));
	std::optional<rv::Mapping> buf;
	buf.emplace(rv::Mapping::map(MiB, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE));
	std::optional<rv::MemoryRegion> mr;
	mr.emplace(s->dev().reg_mem(buf->data(), buf->size(), rv::access::psm3_recv));
	ch.send(msg_user, WriteTarget{buf->addr(), mr->rkey(), s->attach().rv_index});
	for (;;) {
		Msg m = ch.recv(seconds(-1)).value();
		if (m.type == msg_fin)
			return 0;
		if (m.type == msg_user + 1) {
			mr.reset();
			s.reset();	// unmaps the ring, closes the file
			ch.send(msg_ready);
		}
		// Keep draining nothing: events are not read.
	}
}

void check_loss(const LossLog &log, const SideConfig &cfg)
{
	note("surviving side: " + log.str());
	EXPECT_EQ(log.post_other, 0u) << "post failed with " << std::strerror(log.last_other);
	EXPECT_EQ(log.connected_other_err, 0u) << "CONN_CONNECTED failed with another errno";
	EXPECT_EQ(log.cqe_unknown, 0u);
	EXPECT_EQ(log.outstanding_end, 0u) << "posts without a completion";
	EXPECT_GT(log.post_eagain + log.post_eio + log.cqe_err, 0u)
		<< "the loss of the peer went unnoticed";
	if (log.failed_for_good_s) {
		// Failed for good: not before reconnect_timeout.
		EXPECT_GE(*log.failed_for_good_s, cfg.reconnect_timeout * 0.9) << log.str();
		EXPECT_EQ(log.final_connected, -1);
		EXPECT_EQ(log.last_post_err, EIO);
		EXPECT_EQ(log.final_count_err, EIO) << "GET_CONN_COUNT after the failure";
	} else {
		// Still recovering: connected (after having been), posts
		// refused for now.
		EXPECT_EQ(log.final_connected, 1) << log.str();
		EXPECT_EQ(log.last_post_err, EAGAIN) << log.str();
	}
}

// The peer lost with writes in flight: lossy_peer on there, this side
// on here writing to it until lose(child) takes the peer away (what: "the
// kill", ...); checks that writes went through before and what this side
// saw. Returns the peer.
Peer lose_peer(const Node &here, const Node &there, const char *what,
	       const std::function<void(Peer &)> &lose)
{
	const rv::JobKey key = rv::random_job_key();
	SideConfig cfg;
	cfg.reconnect_timeout = 5;
	Peer child([&](Channel &ch) { return lossy_peer(ch, there, here, key, cfg); });
	Side me(here, there, key, cfg);
	connect_after(me, {&child}, seconds(120));
	const WriteTarget peer = child.chan().expect_body<WriteTarget>(msg_user, seconds(120));
	const std::uint64_t rx = rcvd_pkts(there.dev);

	LossLog log = watch_loss(
		me, peer, [&] { lose(child); }, seconds(1),
		seconds(cfg.reconnect_timeout + 60));
	EXPECT_GT(rcvd_pkts(there.dev), rx) << "no write reached " << there.dev;
	EXPECT_GT(log.cqe_ok, 0u) << "no write succeeded before " << what;
	check_loss(log, cfg);
	return child;
}

} // namespace

// The process on node 1 (the client) is killed with writes in flight;
// node 0 (the server) waits reconnect_timeout for it in vain.
TEST(ConnFault, PeerProcessKilled)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	lose_peer(n0, n1, "the kill", [](Peer &p) {
		p.kill(SIGKILL);
		Peer::Status st = p.wait(seconds(30));
		EXPECT_EQ(st.signal, SIGKILL) << st.str();
	});
}

// The process on node 0 (the server) closes its file with writes in
// flight; node 1 (the client) keeps asking to reconnect until
// reconnect_timeout.
TEST(ConnFault, PeerClosesItsFile)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	Peer child = lose_peer(n1, n0, "the close", [](Peer &p) {
		p.chan().send(msg_user + 1);
		p.chan().expect(msg_ready, seconds(60));
	});
	child.chan().send(msg_fin);
	EXPECT_TRUE(child.wait(seconds(30)).ok());
}

namespace {

// Node 1 is ACTIVE again within 10 s.
bool node_active(const Node &n)
{
	const std::string state = "/sys/class/infiniband/" + n.dev + "/ports/1/state";
	return wait_until(
		[&] {
			std::ifstream f(state);
			std::string line;
			return std::getline(f, line) &&
			       line.find("ACTIVE") != std::string::npos;
		},
		milliseconds(10000));
}

// Attaches in a loop (run(), on a thread of its own) until one fails with
// ENODEV, or its thread is asked to stop.
struct AttachRace {
	std::atomic<unsigned> attached{0};
	std::atomic<bool> ended{false};
	std::map<int, unsigned> errs;	// errno -> count, read after finish()
	int last_err = 0;
	std::string other;		// another exception's message

	void run(const rv::AttachParams &p, const std::stop_token &stop)
	{
		while (!stop.stop_requested()) {
			try {
				rv::Device d = attach_new(p);
				attached++;
			} catch (const std::system_error &e) {
				last_err = e.code().value();
				errs[last_err]++;
				if (last_err == ENODEV)
					break;
			} catch (const std::exception &e) {
				last_err = -1;	// not an errno: ends the loop
				other = e.what();
				break;
			}
		}
		ended = true;
	}

	// Until the first attach worked (bounded).
	void wait_first(milliseconds timeout) const
	{
		(void)wait_until([&] { return attached > 0 || ended; }, timeout);
	}

	void finish(std::jthread &t, milliseconds timeout)
	{
		if (!wait_until([&] { return ended.load(); }, timeout))
			t.request_stop();
		t.join();
	}

	[[nodiscard]] std::string str() const
	{
		std::string s = std::to_string(attached.load()) + " attached";
		for (const auto &[e, n] : errs)
			s += ", " + std::to_string(n) + " " + std::strerror(e);
		if (!other.empty())
			s += ", then: " + other;
		return s;
	}
};

// Node 1's RDMA device goes away under a connection with writes in
// flight (gone()): rv gives up every verbs object of the job at once, so
// the removal neither hangs nor leaves the kernel anything to warn about.
// This side's connection fails for good (posts EIO, CONN_CONNECTED EIO),
// each post completes exactly once, the ring stays readable and REG_MEM
// says ENODEV. Attaches to node 1, each a new job, run meanwhile until
// one says ENODEV (AttachRace): the removal finds every job an attach
// made, however close to it. back() puts the device back; then a new job
// attaches on it and connects.
void device_goes_away(const Node &n0, const Node &n1,
		      const std::function<void()> &gone,
		      const std::function<void()> &back)
{
	const rv::JobKey key = rv::random_job_key();
	SideConfig cfg;
	cfg.reconnect_timeout = 5;
	Peer child([&](Channel &ch) { return lossy_peer(ch, n0, n1, key, cfg); });
	std::optional<Side> me;
	me.emplace(n1, n0, key, cfg);
	connect_after(*me, {&child}, seconds(120));
	const WriteTarget peer = child.chan().expect_body<WriteTarget>(msg_user, seconds(120));
	rv::Mapping buf = rv::Mapping::anonymous(MiB);

	// Meanwhile, attaches to node 1 one after the other, each a new job
	// and closed at once, race the device's removal: until ATTACH says
	// the device is gone. The kernel log check sees what they break.
	AttachRace race;
	const rv::AttachParams race_p = params_for(n1);
	std::jthread attacher([&](const std::stop_token &st) { race.run(race_p, st); });
	bool done = false;
	LossLog log = watch_loss(
		*me, peer,
		[&] {
			race.wait_first(seconds(120));
			gone();
			done = true;
		},
		seconds(1), seconds(cfg.reconnect_timeout + 60));
	race.finish(attacher, seconds(60));
	note("after the loss: " + log.str());
	note("attaches racing the removal: " + race.str());
	EXPECT_GT(race.attached.load(), 0u) << "no attach before the removal";
	EXPECT_EQ(race.last_err, ENODEV) << "the attaches did not end with ENODEV: " << race.str();
	ASSERT_TRUE(done);
	EXPECT_GT(log.cqe_ok, 0u) << "no write succeeded before the loss";
	EXPECT_EQ(log.cqe_unknown, 0u);
	EXPECT_EQ(log.outstanding_end, 0u) << "posts without a completion";
	(void)me->drain();	// the ring is still mapped and readable
	EXPECT_EQ(log.post_other, 0u) << "post failed with " << std::strerror(log.last_other);
	EXPECT_EQ(log.connected_other_err, 0u) << "CONN_CONNECTED failed with another errno";
	EXPECT_TRUE(log.failed_for_good_s.has_value()) << log.str();
	EXPECT_EQ(log.final_connected, -1);
	EXPECT_EQ(log.last_post_err, EIO);
	EXPECT_EQ(log.final_count_err, EIO);
	try {
		rv::MemoryRegion mr = me->dev().reg_mem(buf.data(), buf.size(),
							rv::access::psm3_recv);
		ADD_FAILURE() << "REG_MEM worked without a device";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), ENODEV) << e.what();
	}
	me.reset();	// close works
	child.chan().send(msg_fin);
	EXPECT_TRUE(child.wait(seconds(60)).ok());

	// Put the node back for whatever runs next, and use it again.
	back();
	EXPECT_TRUE(node_active(n0)) << n0.dev << " is not ACTIVE";
	ASSERT_TRUE(node_active(n1)) << n1.dev << " did not come back";
	const Node m0 = current(n0, seconds(10));
	const Node m1 = current(n1, seconds(10));
	const rv::JobKey key2 = rv::random_job_key();
	Peer other([&](Channel &ch) {
		Side s(m0, m1, key2);
		s.create_and_connect(seconds(120));
		ch.send(msg_ready);
		ch.expect(msg_fin, seconds(120));
		return 0;
	});
	Side again(m1, m0, key2);
	EXPECT_NO_THROW(again.create_and_connect(seconds(120)))
		<< "a new job on the node that came back: " << to_string(again.conn().stats());
	EXPECT_NO_THROW(other.chan().expect(msg_ready, seconds(120)));
	other.chan().send(msg_fin);
	EXPECT_TRUE(other.wait(seconds(60)).ok());
}

void add_rxe(const Node &n)
{
	run_checked({"rdma", "link", "add", n.dev, "type", "rxe", "netdev", n.netdev});
}

} // namespace

// Node 1's RDMA device is removed (rdma link delete). Destructive: run by
// conn.sh.
TEST(ConnFault, DeviceRemovedMidTraffic)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	RV_ROOT_OR_SKIP();
	if (const auto why = node_change_skip(n1))
		GTEST_SKIP() << *why;
	device_goes_away(
		n0, n1,
		[&] { run_checked({"rdma", "link", "delete", n1.dev}); },
		[&] { add_rxe(n1); });
}

// The driver goes (rmmod rdma_rxe): every device leaves through rv's
// ib_client remove callback, with the job's writes in flight. Then the
// driver and both devices come back. Destructive: run by conn.sh.
TEST(ConnFault, DriverUnloadedMidTraffic)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	RV_ROOT_OR_SKIP();
	if (const auto why = node_change_skip(n1))
		GTEST_SKIP() << *why;
	if (const auto why = node_change_skip(n0))
		GTEST_SKIP() << *why;
	if (const auto why = driver_pinned_skip())
		GTEST_SKIP() << *why;
	device_goes_away(
		n0, n1,
		[&] { run_checked({"rmmod", "rdma_rxe"}); },
		[&] {
			run_checked({"modprobe", "rdma_rxe"});
			add_rxe(n0);
			add_rxe(n1);
		});
}
