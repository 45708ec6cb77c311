// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Isolation: what one user, one job or one process can reach through
// /dev/rv and through the wire.
//   - A process of another uid, or another job, with a connection to the
//     node: its CM REQs carry its uid and job key, and are rejected; no
//     connection forms.
//   - Another process of the same job cannot deregister, evict or post
//     with this process's MR handles.
//   - A peer with a valid rkey can write only inside the registered range,
//     and nothing once the MR is gone.
//   - No value handed to userspace is a kernel address.
// (Other parts: Job.OtherUidGetsOwnJobDevice, Process.ForkChildGetsEacces,
// Ring.ScribbledHeaderHarmsNobody, MrCache.DeregErrors.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <grp.h>
#include <unistd.h>

#include <rv/connection.hpp>
#include <rv/error.hpp>
#include <rv/mapping.hpp>

#include "child.hpp"
#include "conn_util.hpp"
#include "mr_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

// What a side of a refused connection saw.
struct Refused {
	std::uint32_t connected = 0;
	std::uint32_t failed = 0;	// CONN_CONNECTED said EIO
	std::uint32_t rej_recv = 0;
	std::uint32_t req_sent = 0;
	std::uint32_t established = 0;
};

enum : std::uint32_t {
	msg_refused = msg_user + 20,	// Refused
	msg_target,			// Target
	msg_written,			// std::uint32_t: the send completion status
};

Refused refused_of(Side &s)
{
	Refused r;
	const rv::ConnStats st = s.conn().stats();
	try {
		r.connected = s.conn().connected() ? 1 : 0;
	} catch (const std::system_error &e) {
		if (e.code().value() != EIO)
			throw;
		r.failed = 1;
	}
	r.rej_recv = st.rej_recv;
	r.req_sent = st.req_sent;
	r.established = st.established;
	return r;
}

// One side of a connection attempt that must not succeed: creates and
// connects, gives the CM `wait`, reports what it saw.
int refused_side(Channel &ch, const Node &local, const Node &remote,
		 const rv::JobKey &key, bool as_nobody, milliseconds wait)
{
	if (as_nobody)
		become_nobody();
	Side s(local, remote, key);
	s.connect();
	ch.send(msg_ready);
	std::this_thread::sleep_for(wait);
	ch.send(msg_refused, refused_of(s));
	(void)ch.expect(msg_fin, seconds(60));
	return 0;
}

// Node 0 runs a child with key0 (as nobody if asked); node 1 is this
// process with key1. Both connect to each other; neither may connect,
// and the initiator must have been rejected as "not there yet": it keeps
// trying until its reconnect_timeout, whether the job is another uid's or
// does not exist (a REJ tells no other uid that a job key is in use).
void expect_no_connection(const Node &n0, const Node &n1,
			  const rv::JobKey &key0, bool nobody0,
			  const rv::JobKey &key1)
{
	const milliseconds wait(6000);
	const std::uint64_t rx0 = rcvd_pkts(n0.dev);
	const std::uint64_t rx1 = rcvd_pkts(n1.dev);

	Peer child([&](Channel &ch) {
		return refused_side(ch, n0, n1, key0, nobody0, wait);
	});
	(void)child.chan().expect(msg_ready, seconds(60));
	Side me(n1, n0, key1);
	me.connect();
	const Refused theirs =
		child.chan().expect_body<Refused>(msg_refused, wait + seconds(60));
	const Refused mine = refused_of(me);
	child.chan().send(msg_fin);
	const Peer::Status st = child.wait(seconds(60));
	EXPECT_TRUE(st.ok()) << st.str();

	EXPECT_EQ(theirs.connected, 0u);
	EXPECT_EQ(mine.connected, 0u);
	EXPECT_EQ(theirs.established + mine.established, 0u);
	// The initiator (the side with the larger GID) sent REQs and got
	// REJs back: the CM messages crossed, and were refused.
	const Refused &init = listens(n0, n1) ? mine : theirs;
	const Refused &lis = listens(n0, n1) ? theirs : mine;
	EXPECT_GT(init.req_sent, 0u);
	EXPECT_GT(init.rej_recv, 0u);
	EXPECT_EQ(init.failed, 0u) << "a REJ for good";
	EXPECT_EQ(lis.failed, 0u) << "the listener's connection failed";
	EXPECT_GT(rcvd_pkts(n0.dev), rx0) << "nothing reached " << n0.dev;
	EXPECT_GT(rcvd_pkts(n1.dev), rx1) << "nothing reached " << n1.dev;
}

} // namespace

// uid 65534 attaches with the job key of uid 0's job and connects to it:
// the REQs carry the sender's uid; the job with that key on the other
// node belongs to another uid, and the REQ is refused as if there were no
// such job.
TEST(Security, OtherUidCannotConnectToTheJob)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const rv::JobKey key = rv::random_job_key();

	expect_no_connection(n0, n1, key, true, key);
}

TEST(Security, OtherJobKeyCannotConnect)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);

	expect_no_connection(n0, n1, rv::random_job_key(), false,
			     rv::random_job_key());
}

namespace {

// What another process of the same user gets when it goes for m, an MR
// of this one's.
struct IntruderReport {
	int dereg = -1;
	int evict_exact = -1;
	int evict_range = -1;
	int evict_amount = -1;
	std::uint32_t evicted = ~0u;
	int post_mine = -1;
	int post_theirs = -1;
};

// A post of 4096 bytes at the start of m, on connection handle.
rv_post_write_params_in post_from(std::uint64_t handle, const rv::MrInfo &m)
{
	rv_post_write_params_in p{};
	p.handle = handle;
	p.loc_mr_handle = m.handle;
	p.loc_mr_addr = m.addr;
	p.loc_mr_length = m.length;
	p.loc_mr_access = m.access;
	p.loc_addr = m.addr;
	p.length = 4096;
	return p;
}

// The other process (in a child): DEREG_MEM, EVICT and POST with m, and
// its own MR of 256 KiB at own_addr for comparison.
IntruderReport intrude(const Node &n, const Node &n1, std::uint64_t own_addr,
		       const rv::MrInfo &m)
{
	IntruderReport r;
	rv::Device other = cache_device(n);
	rv::MemoryRegion own = other.reg_mem(own_addr, 256 * KiB, rv::access::psm3_send);
	rv::Connection c = rv::Connection::create(other, remote_of(n, n1));
	r.dereg = dereg_errno(other.fd(), m);
	rv_evict_params e{};
	e.in.type = RV_EVICT_TYPE_SEARCH_EXACT;
	e.in.search.addr = m.addr;
	e.in.search.length = m.length;
	e.in.search.access = m.access;
	r.evict_exact = evict_errno(other.fd(), e);
	e = {};
	e.in.type = RV_EVICT_TYPE_SEARCH_RANGE;
	e.in.search.addr = m.addr;
	e.in.search.length = m.length;
	r.evict_range = evict_errno(other.fd(), e);
	// POST through its own connection: its own MR gets as far as
	// the (unconnected) connection; the other's is unknown.
	r.post_mine = post_write_errno(other.fd(), post_from(c.handle(), own.info()));
	r.post_theirs = post_write_errno(other.fd(), post_from(c.handle(), m));
	// Unreferenced, its own MR can be evicted; the other's not.
	own.release();
	e = {};
	e.in.type = RV_EVICT_TYPE_AMOUNT;
	e.in.amount.bytes = ~0ULL;
	e.in.amount.count = ~0u;
	r.evict_amount = evict_errno(other.fd(), e);
	r.evicted = e.out.count;
	return r;
}

} // namespace

// Another process of the same job gets nowhere with this process's MR
// handles, addresses and ranges: they name nothing in its own cache. (The
// forked child has the same addresses: it registers a range of its own
// first, so that handle numbers overlap but ranges do not.)
TEST(Security, OtherProcessCannotTouchMyMrs)
{
	RV_NODE_OR_SKIP(n, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const rv::Mapping buf = rv::Mapping::anonymous(MiB);
	rv::Device mine = cache_device(n);
	rv::MemoryRegion mr = mine.reg_mem(buf.data(), 256 * KiB,
					   rv::access::psm3_send);
	const rv::MrInfo m = mr.info();
	const rv::CacheStats before = mine.cache_stats();

	auto out = run_in_child<IntruderReport>(
		[&] { return intrude(n, n1, buf.addr() + 512 * KiB, m); });
	ASSERT_TRUE(out.exited) << "signal " << out.signal;
	ASSERT_TRUE(out.report) << "exit " << out.exit_code;
	const IntruderReport &r = *out.report;
	EXPECT_EQ(r.dereg, EINVAL);
	EXPECT_NE(r.evict_exact, 0) << "evicted another process's MR";
	EXPECT_NE(r.evict_range, 0) << "evicted another process's MR";
	EXPECT_EQ(r.post_mine, EAGAIN) << "the control POST";
	EXPECT_EQ(r.post_theirs, EINVAL);
	EXPECT_EQ(r.evict_amount, 0);
	EXPECT_EQ(r.evicted, 1u) << "evicting by amount reached beyond its own MR";

	const rv::CacheStats after = mine.cache_stats();
	EXPECT_EQ(after.count, before.count);
	EXPECT_EQ(after.inuse, before.inuse);
	EXPECT_EQ(dereg_errno(mine.fd(), m), 0) << "the owner's reference is gone";
	mr.abandon();
}

namespace {

// Receiver -> sender: write len bytes of pattern key at addr with rkey.
struct Target {
	std::uint64_t addr;
	std::uint64_t len;
	std::uint64_t key;
	std::uint32_t rkey;
	std::uint32_t rv_index;
};

// The sender of BoundsOfTheRegisteredRange: one write per Target, each
// once the connection is (again) up; answers each with the status of its
// send completion.
int bounds_sender(Channel &ch, const Node &local, const Node &remote,
		  const rv::JobKey &key)
{
	Side s(local, remote, key);
	s.connect();
	rv::Mapping src = rv::Mapping::anonymous(MiB);
	rv::MemoryRegion mr = s.dev().reg_mem(src.data(), src.size(),
					      rv::access::psm3_send);
	for (;;) {
		const Msg m = *ch.recv(seconds(-1));
		if (m.type == msg_fin)
			return 0;
		if (m.type != msg_target)
			throw std::runtime_error("unexpected message");
		const Target t = body_of<Target>(m);
		if (!s.conn().wait_connected(seconds(120)))
			throw std::runtime_error("not (re)connected: " +
						 to_string(s.conn().stats()));
		fill_pattern(src.bytes(), t.len, t.key);
		rv::WriteRequest w;
		w.loc_addr = src.addr();
		w.mr = &mr.info();
		w.rem_addr = t.addr;
		w.rkey = t.rkey;
		w.length = t.len;
		w.wr_id = t.key;
		w.immed = s.immed(t.rv_index, 1);
		rv::PostResult res;
		int err;
		const auto give_up = std::chrono::steady_clock::now() + seconds(120);
		while ((err = s.conn().try_post_write(w, res)) != 0 &&
		       rv::Connection::retryable(err) &&
		       std::chrono::steady_clock::now() < give_up)
			std::this_thread::sleep_for(milliseconds(10));
		if (err)
			throw std::system_error(err, std::generic_category(), "post");
		const std::vector<rv::Event> evs = s.wait_events(1, seconds(60));
		ch.send(msg_written, evs.size() == 1 ? std::uint32_t{evs[0].status}
						       : std::uint32_t{0xffff});
	}
}

// The first byte of buf outside [ok_off, ok_off + ok_len) that is not
// the guard; nullopt if there is none.
std::optional<std::uint64_t> changed_outside(const rv::Mapping &buf, std::byte guard,
					     std::uint64_t ok_off, std::uint64_t ok_len)
{
	for (std::uint64_t i = 0; i < buf.size(); i++)
		if ((i < ok_off || i >= ok_off + ok_len) && buf.bytes()[i] != guard)
			return i;
	return std::nullopt;
}

// EVICT of [addr, addr + len) on fd finds exactly one MR.
void expect_evicted_one(int fd, std::uint64_t addr, std::uint64_t len)
{
	rv_evict_params e{};
	e.in.type = RV_EVICT_TYPE_SEARCH_RANGE;
	e.in.search.addr = addr;
	e.in.search.length = len;
	ASSERT_EQ(evict_errno(fd, e), 0);
	ASSERT_EQ(e.out.count, 1u);
}

} // namespace

// The peer holds the rkey of [mr, mr + 64 KiB) inside a larger buffer: a
// write inside works, one that crosses either end fails at the sender
// (remote access error) and changes no byte, and once the MR is
// deregistered and evicted its rkey writes nothing at all.
TEST(Security, PeerWritesOnlyInsideTheRegisteredRange)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const rv::JobKey key = rv::random_job_key();
	constexpr std::byte guard{0x5a};
	constexpr std::uint64_t mr_off = 256 * KiB;
	constexpr std::uint64_t mr_len = 64 * KiB;

	Peer child([&](Channel &ch) { return bounds_sender(ch, n0, n1, key); });
	Side me(n1, n0, key);
	me.connect();
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	std::fill_n(buf.bytes(), buf.size(), guard);
	const std::uint64_t base = buf.addr() + mr_off;
	std::optional<rv::MemoryRegion> mr =
		me.dev().reg_mem(base, mr_len, rv::access::psm3_recv);
	const std::uint32_t rkey = mr->rkey();
	ASSERT_TRUE(me.conn().wait_connected(seconds(120)))
		<< to_string(me.conn().stats());
	const std::uint64_t rx = rcvd_pkts(n1.dev);

	// Sends one write; its send completion status.
	std::uint64_t key_no = 1;
	auto write = [&](std::uint64_t addr, std::uint64_t len, std::uint32_t rk) {
		child.chan().send(msg_target, Target{addr, len, key_no++, rk,
						     me.attach().rv_index});
		return child.chan().expect_body<std::uint32_t>(msg_written,
							       seconds(300));
	};
	auto untouched_but = [&](std::uint64_t ok_off, std::uint64_t ok_len) {
		return changed_outside(buf, guard, ok_off, ok_len);
	};

	// Inside: lands, and the receiver is told.
	ASSERT_EQ(write(base + 100, 4096, rkey), 0u);
	const std::vector<rv::Event> got = me.wait_events(1, seconds(60));
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(got[0].event_type, RV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_FALSE(check_pattern(buf.bytes() + mr_off + 100, 4096, 1));
	EXPECT_FALSE(untouched_but(mr_off + 100, 4096));

	// Across the end, across the start, wholly outside: each fails.
	struct Case {
		const char *what;
		std::uint64_t addr;
		std::uint64_t len;
	};
	const Case bad[] = {
		{"one byte past the end", base + mr_len - 4095, 4096},
		{"one byte before the start", base - 1, 4096},
		{"after the end", base + mr_len, 64},
		{"overflowing address", ~0ULL - 100, 4096},
	};
	for (const Case &c : bad) {
		const std::uint32_t status = write(c.addr, c.len, rkey);
		EXPECT_NE(status, 0u) << c.what << ": the write succeeded";
		EXPECT_FALSE(untouched_but(mr_off + 100, 4096))
			<< c.what << ": bytes outside the range changed";
		EXPECT_TRUE(me.wait_events(0, milliseconds(0), milliseconds(200)).empty())
			<< c.what << ": the receiver got an event";
	}

	// The MR gone (deregistered and evicted): its rkey writes nothing.
	mr.reset();
	expect_evicted_one(me.fd(), base, mr_len);
	if (HasFatalFailure())
		return;
	EXPECT_NE(write(base + 8192, 4096, rkey), 0u)
		<< "a write through the rkey of an evicted MR succeeded";
	EXPECT_FALSE(untouched_but(mr_off + 100, 4096))
		<< "the write through a dead rkey changed memory";
	EXPECT_GT(rcvd_pkts(n1.dev), rx) << "nothing reached " << n1.dev;

	child.chan().send(msg_fin);
	const Peer::Status st = child.wait(seconds(60));
	EXPECT_TRUE(st.ok()) << st.str();
}

// Handles are small ids; nothing returned looks like a kernel address.
TEST(Security, NoKernelAddressesInOutputs)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	auto kernel_like = [](std::uint64_t v) { return v >= 0xffff800000000000ULL; };
	const rv::JobKey key = rv::random_job_key();
	Side s(n0, n1, key);
	const rv::Connection &c = s.create();
	EXPECT_NE(c.handle(), 0u);
	EXPECT_LT(c.handle(), std::uint64_t{1} << 32);
	EXPECT_LT(c.conn_handle(), std::uint64_t{1} << 32);
	EXPECT_FALSE(kernel_like(c.conn_handle()));

	const rv::Mapping buf = rv::Mapping::anonymous(MiB);
	const rv::MemoryRegion mr = s.dev().reg_mem(buf.data(), MiB,
						    rv::access::psm3_recv);
	EXPECT_LT(mr.handle(), std::uint64_t{1} << 32);
	EXPECT_EQ(mr.iova(), buf.addr()) << "the iova is the user's address";

	const rv::Attach &a = s.attach();
	for (const std::uint64_t v : {std::uint64_t{a.rv_index}, a.max_fmr_size,
				      std::uint64_t{a.mr_cache_size}})
		EXPECT_FALSE(kernel_like(v)) << std::hex << v;

	// The stats: counters and times only.
	const rv::ConnStats st = rv::Connection::all_stats(s.dev());
	const auto *w = reinterpret_cast<const std::uint64_t *>(&st);
	for (std::size_t i = 0; i < sizeof(st) / 8; i++)
		EXPECT_FALSE(kernel_like(w[i])) << "stats word " << i << ": 0x"
						<< std::hex << w[i];
}
