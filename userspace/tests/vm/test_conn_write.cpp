// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// POST_RDMA_WR_IMMED between two nodes: completions in both rings with
// the right fields, the stats, input validation, a verified
// transfer of mixed sizes at unaligned offsets (256 MiB by default), and the
// immediate data choosing the receiving process among 16.
//
//   RV_CONN_TEST_BYTES   bytes of ConnWrite.DataIntegrity (default 256 MiB)
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/mman.h>

#include <rv/connection.hpp>
#include <rv/mapping.hpp>

#include "conn_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t MiB = 1024 * KiB;

rv::Mapping shared_buffer(std::uint64_t len)
{
	return rv::Mapping::map(len, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
}

// A write the tests post and check.
struct Piece {
	std::uint64_t src_off;
	std::uint64_t dst_off;
	std::uint64_t len;
};
// The buffers of the pieces, each one MR: 2 MiB less a page, as large
// as an MR of soft-RoCE gets (max_fmr_size, 511 pages), and no whole
// number of MiB (conn_util.hpp).
constexpr std::uint64_t piece_buf = slot_bytes(2);
// Neither the sources nor the destinations overlap; the last one ends at
// the end of the receiver's MR.
constexpr Piece pieces[] = {
	{0, 0, 1},
	{13, 4096 + 7, 4099},
	{8192 + 1, 64 * KiB + 1, MiB + 5},
	{MiB + 64 * KiB + 3, piece_buf - 65536, 65536},
};
constexpr std::size_t n_pieces = std::size(pieces);
static_assert(pieces[2].src_off + pieces[2].len <= pieces[3].src_off);
static_assert(pieces[2].dst_off + pieces[2].len <= pieces[3].dst_off);

std::uint64_t piece_key(std::size_t i)
{
	return 0x77000000ULL + i;
}

struct BufInfo {
	std::uint64_t addr;
	std::uint64_t length;
	std::uint32_t rkey;
	std::uint32_t rv_index;
	std::uint64_t conn_handle;
};

struct RecvCheck {
	std::uint32_t events;
	std::uint32_t ok;		// right fields and data
	std::uint32_t bad_fields;
	std::uint32_t bad_data;
	rv::Event first_bad;
	rv::EventStats es;
	rv::ConnStats cs;
};

// The receiving side of a test: connected, with piece_buf registered for
// the sender's writes and the sender told where it is (msg_user: BufInfo).
struct Receiver {
	Receiver(Channel &ch, const Node &local, const Node &remote,
		 const rv::JobKey &key)
		: s(local, remote, key)
	{
		s.connect();
		buf = shared_buffer(piece_buf);
		mr = s.dev().reg_mem(buf.data(), buf.size(), rv::access::psm3_recv);
		if (!s.conn().wait_connected(seconds(120)))
			throw std::runtime_error("receiver not connected");
		ch.send(msg_user, BufInfo{buf.addr(), buf.size(), mr.rkey(),
					  s.attach().rv_index, s.conn().conn_handle()});
	}

	Side s;
	rv::Mapping buf;
	rv::MemoryRegion mr;
};

// The receiving side of Basic: a Receiver that waits for the n_pieces
// writes and checks them.
int basic_receiver(Channel &ch, const Node &local, const Node &remote,
		   const rv::JobKey &key)
{
	Receiver me(ch, local, remote, key);
	Side &s = me.s;

	RecvCheck r{};
	// Anything more would be a duplicate.
	std::vector<rv::Event> evs = s.wait_events(n_pieces, seconds(60),
						   milliseconds(300));
	std::set<std::uint32_t> seen;
	for (const rv::Event &e : evs) {
		r.events++;
		const std::uint32_t i = e.imm_data & 0xff;
		bool fields = e.event_type == RV_WC_RECV_RDMA_WITH_IMM && !e.status &&
			      e.conn_handle == s.conn().conn_handle() &&
			      e.imm_data == s.immed(s.attach().rv_index, 0x1200 | i) &&
			      i < n_pieces && e.byte_len == pieces[i].len &&
			      seen.insert(i).second;
		if (!fields) {
			if (!r.bad_fields && !r.bad_data)
				r.first_bad = e;
			r.bad_fields++;
			continue;
		}
		if (check_pattern(me.buf.bytes() + pieces[i].dst_off, pieces[i].len,
				  piece_key(i))) {
			if (!r.bad_fields && !r.bad_data)
				r.first_bad = e;
			r.bad_data++;
			continue;
		}
		r.ok++;
	}
	r.es = s.dev().event_stats();
	r.cs = s.conn().stats();
	ch.send(msg_user + 1, r);
	ch.expect(msg_fin, seconds(300));
	return 0;
}

class ConnWriteDir : public testing::TestWithParam<int> {};

// The writer's completions of the pieces (wr_id 0xabc000 + i): one each,
// successful, of the piece's length.
void expect_completions(const std::vector<rv::Event> &evs, std::uint64_t conn_handle)
{
	std::set<std::uint64_t> ids;
	for (const rv::Event &e : evs) {
		SCOPED_TRACE(to_string(e));
		EXPECT_EQ(e.event_type, RV_WC_RDMA_WRITE);
		EXPECT_EQ(e.status, 0);
		ASSERT_GE(e.wr_id, 0xabc000u);
		ASSERT_LT(e.wr_id, 0xabc000u + n_pieces);
		EXPECT_TRUE(ids.insert(e.wr_id).second) << "duplicate completion";
		EXPECT_EQ(e.conn_handle, conn_handle);
		EXPECT_EQ(e.byte_len, pieces[e.wr_id - 0xabc000].len);
	}
}

// The receiver got every piece, total bytes, in its events and counters.
void expect_received(const RecvCheck &rc, std::uint64_t total)
{
	EXPECT_EQ(rc.events, n_pieces);
	EXPECT_EQ(rc.ok, n_pieces) << "bad fields " << rc.bad_fields << ", bad data "
				   << rc.bad_data << "; first bad event: "
				   << to_string(rc.first_bad);
	EXPECT_EQ(rc.es.recv_write_cqe, n_pieces);
	EXPECT_EQ(rc.es.recv_write_bytes, total);
	EXPECT_EQ(rc.es.recv_write_cqe_fail, 0u);
	EXPECT_EQ(rc.es.send_write_cqe, 0u);
	EXPECT_EQ(rc.cs.recv_write_cqe, n_pieces) << to_string(rc.cs);
	EXPECT_EQ(rc.cs.recv_write_bytes, total) << to_string(rc.cs);
}

// The writer's counters: every piece, total bytes, sent and completed;
// the per-QP counters add up to the connection's.
void expect_sent(Side &me, std::uint64_t total)
{
	const rv::EventStats es = me.dev().event_stats();
	EXPECT_EQ(es.send_write_cqe, n_pieces);
	EXPECT_EQ(es.send_write_bytes, total);
	EXPECT_EQ(es.send_write_cqe_fail, 0u);
	EXPECT_EQ(es.recv_write_cqe, 0u);
	const rv::ConnStats cs = me.conn().stats();
	EXPECT_EQ(cs.post_write, n_pieces) << to_string(cs);
	EXPECT_EQ(cs.post_write_bytes, total) << to_string(cs);
	EXPECT_EQ(cs.send_write_cqe, n_pieces) << to_string(cs);
	EXPECT_EQ(cs.send_write_cqe_fail, 0u) << to_string(cs);
	EXPECT_EQ(cs.outstand_send_write, 0u) << to_string(cs);
	std::uint64_t per_qp = 0;
	for (unsigned i = 0; i < me.num_conn(); i++)
		per_qp += me.conn().stats(static_cast<std::uint8_t>(i)).post_write;
	EXPECT_EQ(per_qp, n_pieces) << "per-QP stats add up to the aggregate";
	const rv::ConnStats all = rv::Connection::all_stats(me.dev());
	EXPECT_EQ(all.post_write, n_pieces);
}

} // namespace

// The test process on node P writes to a child on the other node.
TEST_P(ConnWriteDir, Basic)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const Node &me_node = GetParam() ? n1 : n0;
	const Node &peer_node = GetParam() ? n0 : n1;
	const rv::JobKey key = rv::random_job_key();

	Peer child([&](Channel &ch) {
		return basic_receiver(ch, peer_node, me_node, key);
	});
	Side me(me_node, peer_node, key);
	me.connect();
	rv::Mapping src = shared_buffer(piece_buf);
	rv::MemoryRegion mr = me.dev().reg_mem(src.data(), src.size(),
					       rv::access::psm3_send);
	ASSERT_TRUE(me.conn().wait_connected(seconds(120)))
		<< to_string(me.conn().stats());
	const BufInfo peer = child.chan().expect_body<BufInfo>(msg_user, seconds(120));
	const std::uint64_t rx_peer = rcvd_pkts(peer_node.dev);
	const std::uint64_t rx_me = rcvd_pkts(me_node.dev);

	std::uint64_t total = 0;
	std::string sconns;
	for (std::size_t i = 0; i < n_pieces; i++) {
		fill_pattern(src.bytes() + pieces[i].src_off, pieces[i].len, piece_key(i));
		total += pieces[i].len;
	}
	for (std::size_t i = 0; i < n_pieces; i++) {
		SCOPED_TRACE(i);
		rv::WriteRequest w;
		w.loc_addr = src.addr() + pieces[i].src_off;
		w.mr = &mr.info();
		w.rem_addr = peer.addr + pieces[i].dst_off;
		w.rkey = peer.rkey;
		w.length = pieces[i].len;
		w.wr_id = 0xabc000 + i;
		w.immed = me.immed(peer.rv_index, 0x1200 | static_cast<std::uint32_t>(i));
		rv::PostResult r = me.conn().post_write(w);
		sconns += " " + std::to_string(r.sconn_index);
		EXPECT_LT(r.sconn_index, me.num_conn());
		EXPECT_GE(r.conn_count, 1u);
		EXPECT_EQ(r.conn_count, me.conn().conn_count(r.sconn_index));
	}

	std::vector<rv::Event> evs = me.wait_events(n_pieces, seconds(60),
						    milliseconds(300));
	std::string got;
	for (const rv::Event &e : evs)
		got += " [" + to_string(e) + "]";
	ASSERT_EQ(evs.size(), n_pieces)
		<< "one completion per post; posted on QPs" << sconns
		<< "; got" << got << "; " << to_string(me.conn().stats());
	expect_completions(evs, me.conn().conn_handle());
	if (HasFatalFailure())
		return;

	expect_received(child.chan().expect_body<RecvCheck>(msg_user + 1, seconds(120)),
			total);
	expect_sent(me, total);

	// The data crossed the veth: the peer's device received at least
	// one packet per MTU (1024), this one only the ACKs.
	const std::uint64_t d_peer = rcvd_pkts(peer_node.dev) - rx_peer;
	const std::uint64_t d_me = rcvd_pkts(me_node.dev) - rx_me;
	EXPECT_GE(d_peer, total / 1024) << "rcvd_pkts of " << peer_node.dev;
	EXPECT_LT(d_me, d_peer) << "rcvd_pkts of " << me_node.dev
				<< " (the writer) rose more than the peer's";

	child.chan().send(msg_fin);
	Peer::Status st = child.wait(seconds(60));
	EXPECT_TRUE(st.ok()) << st.str();
}

INSTANTIATE_TEST_SUITE_P(ConnWrite, ConnWriteDir, testing::Values(0, 1),
			 [](const testing::TestParamInfo<int> &i) {
				 return i.param ? std::string("Node1ToNode0")
						: std::string("Node0ToNode1");
			 });

namespace {

// Posts good with one field made wrong at a time: each must fail with
// EINVAL. How many were accepted.
std::uint64_t expect_invalid_posts(int fd, const rv_post_write_params_in &good)
{
	struct Case {
		const char *what;
		void (*mutate)(rv_post_write_params_in &);
	};
	const Case cases[] = {
		{"bogus loc_mr_handle", [](rv_post_write_params_in &w) { w.loc_mr_handle += 999; }},
		{"zero loc_mr_handle", [](rv_post_write_params_in &w) { w.loc_mr_handle = 0; }},
		// A REG_MEM hit answers a bigger MR for a sub-range, so the MR
		// must cover the range named; it need not equal it.
		{"loc_mr_addr before the MR", [](rv_post_write_params_in &w) {
			 w.loc_mr_addr -= 4096;
			 w.loc_mr_length += 4096;
		 }},
		{"loc_mr_length past the MR", [](rv_post_write_params_in &w) { w.loc_mr_length += 4096; }},
		{"loc_mr_access not as registered", [](rv_post_write_params_in &w) {
			 w.loc_mr_access = rv::access::psm3_recv;
		 }},
		{"loc_addr before the MR", [](rv_post_write_params_in &w) { w.loc_addr = w.loc_mr_addr - 1; }},
		{"range past the MR's end", [](rv_post_write_params_in &w) {
			 w.loc_addr = w.loc_mr_addr + w.loc_mr_length - 100;
			 w.length = 101;
		 }},
		{"length beyond the MR", [](rv_post_write_params_in &w) {
			 w.loc_addr = w.loc_mr_addr;
			 w.length = w.loc_mr_length + 1;
		 }},
		{"loc_addr + length wraps", [](rv_post_write_params_in &w) {
			 w.length = ~std::uint64_t{0} - 10;
		 }},
		{"resv1 non-zero", [](rv_post_write_params_in &w) { w.resv1 = 1; }},
	};
	std::uint64_t accepted = 0;	// wrongly: each is one more write
	for (const Case &c : cases) {
		rv_post_write_params_in w = good;
		c.mutate(w);
		int err = post_write_errno(fd, w);
		EXPECT_EQ(err, EINVAL) << c.what << ": " << std::strerror(err);
		accepted += !err;
	}
	return accepted;
}

// w with its local side in mr, all of it.
rv_post_write_params_in from_mr(rv_post_write_params_in w, const rv::MemoryRegion &mr)
{
	w.loc_addr = mr.addr();
	w.loc_mr_handle = mr.handle();
	w.loc_mr_addr = mr.addr();
	w.loc_mr_length = mr.length();
	w.loc_mr_access = mr.access();
	return w;
}

// A Receiver that waits for msg_fin; reports the events it got (msg_u64:
// a count).
int idle_receiver(Channel &ch, const Node &local, const Node &remote,
		  const rv::JobKey &key)
{
	Receiver me(ch, local, remote, key);
	ch.expect(msg_fin, seconds(300));
	std::this_thread::sleep_for(milliseconds(200));
	std::uint64_t n = me.s.drain().size();
	ch.send(msg_u64, n);
	return 0;
}

} // namespace

TEST(ConnWrite, PostValidation)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const rv::JobKey key = rv::random_job_key();
	Peer child([&](Channel &ch) { return idle_receiver(ch, n1, n0, key); });
	Side me(n0, n1, key);
	me.connect();
	rv::Mapping src = shared_buffer(2 * MiB);
	rv::MemoryRegion mr = me.dev().reg_mem(src.addr() + 64 * KiB, MiB,
					       rv::access::psm3_send);
	ASSERT_TRUE(me.conn().wait_connected(seconds(120)));
	const BufInfo peer = child.chan().expect_body<BufInfo>(msg_user, seconds(120));

	auto good = [&] {
		rv_post_write_params_in w{};
		w.handle = me.conn().handle();
		w.loc_addr = mr.addr() + 100;
		w.loc_mr_handle = mr.handle();
		w.loc_mr_addr = mr.addr();
		w.loc_mr_length = mr.length();
		w.loc_mr_access = mr.access();
		w.rkey = peer.rkey;
		w.rem_addr = peer.addr + 8;
		w.length = 4096;
		w.wr_id = 42;
		w.immed = me.immed(peer.rv_index, 1);
		return w;
	};
	std::uint64_t accepted = expect_invalid_posts(me.fd(), good());	// wrongly
	// An MR of another process of the job is not this process's.
	{
		Side other(n0, n1, key);
		rv::Mapping obuf = shared_buffer(MiB);
		rv::MemoryRegion omr = other.dev().reg_mem(obuf.data(), obuf.size(),
							   rv::access::psm3_send);
		int err = post_write_errno(me.fd(), from_mr(good(), omr));
		// Its handle may happen to name one of ours; then the
		// addresses do not match it.
		EXPECT_EQ(err, EINVAL) << "another file's MR: " << std::strerror(err);
		accepted += !err;
	}

	// An argument that can be read but not written: refused before the
	// write is posted (it could not be taken back).
	{
		rv::Mapping ro = rv::Mapping::map(4096, PROT_READ | PROT_WRITE,
						  MAP_PRIVATE | MAP_ANONYMOUS);
		rv_post_write_params p{};
		p.in = good();
		std::memcpy(ro.data(), &p, sizeof(p));
		ASSERT_EQ(mprotect(ro.data(), 4096, PROT_READ), 0);
		int err = ioctl_errno(me.fd(), RV_IOCTL_POST_RDMA_WR_IMMED, ro.data());
		EXPECT_EQ(err, EFAULT) << "read-only argument: " << std::strerror(err);
		accepted += !err;
	}

	// None of them was posted: no completion, no stats.
	std::vector<rv::Event> stray = me.wait_events(accepted, seconds(30),
						      milliseconds(300));
	EXPECT_EQ(stray.size(), accepted);
	EXPECT_EQ(me.conn().stats().post_write, accepted);

	// The valid request works, exactly once.
	rv_post_write_params_in w = good();
	rv_post_write_params_out out{};
	ASSERT_EQ(post_write_errno(me.fd(), w, &out), 0);
	EXPECT_LT(out.sconn_index, me.num_conn());
	std::vector<rv::Event> evs = me.wait_events(1, seconds(30), milliseconds(200));
	ASSERT_EQ(evs.size(), 1u);
	EXPECT_EQ(evs[0].status, 0) << to_string(evs[0]);
	EXPECT_EQ(evs[0].wr_id, 42u);

	child.chan().send(msg_fin);
	EXPECT_EQ(child.chan().expect_body<std::uint64_t>(msg_u64, seconds(30)), 1 + accepted)
		<< "the receiver got events for refused posts";
	EXPECT_TRUE(child.wait(seconds(60)).ok());
}

namespace {

// A transfer without a fault: every one of count messages posted once and
// completed without error.
void expect_flawless_send(const SendReport &s, std::uint64_t count)
{
	EXPECT_EQ(s.result, 0) << to_string(s);
	EXPECT_EQ(s.messages, count);
	EXPECT_EQ(s.posts, count);
	EXPECT_EQ(s.cqe_ok, count);
	EXPECT_EQ(s.cqe_err, 0u);
	EXPECT_EQ(s.cqe_unknown, 0u);
	EXPECT_EQ(s.cqe_bad, 0u);
	EXPECT_EQ(s.outstanding_end, 0u);
	EXPECT_EQ(s.post_eio + s.post_other, 0u);
	EXPECT_EQ(s.overflow, 0u);
}

// Its receiver: every message, bytes in all, intact, nothing else.
void expect_flawless_receive(const RecvReport &r, std::uint64_t count, std::uint64_t bytes)
{
	EXPECT_EQ(r.result, 0) << to_string(r);
	EXPECT_EQ(r.verified, count) << to_string(r);
	EXPECT_EQ(r.bytes, bytes);
	EXPECT_EQ(r.mismatches, 0u) << to_string(r);
	EXPECT_EQ(r.duplicates + r.bad_type + r.bad_status + r.bad_index + r.bad_seq +
			  r.bad_len + r.bad_conn_handle,
		  0u)
		<< to_string(r);
	EXPECT_EQ(r.overflow, 0u);
}

} // namespace

// A verified transfer: node 0 writes RV_CONN_TEST_BYTES (256 MiB) to a
// process on node 1 in writes of 1 B to 2 MiB less a page (the largest
// MR soft-RoCE registers, max_fmr_size) at unaligned offsets of its MRs,
// 8 in flight; the receiver checks every byte of every write.
TEST(ConnWrite, DataIntegrity)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const rv::JobKey key = rv::random_job_key();
	TransferSpec spec;
	spec.seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now()
						       .time_since_epoch().count());
	spec.bytes = 256 * MiB;
	if (const char *b = std::getenv("RV_CONN_TEST_BYTES"); b && *b)
		spec.bytes = std::strtoull(b, nullptr, 0);
	spec.slots = 8;
	spec.slot_size = slot_bytes(2);
	spec.max_len = slot_bytes(2);
	const std::uint64_t count = message_count(spec);

	Peer child([&](Channel &ch) {
		Side s(n1, n0, key);
		s.create_and_connect(seconds(120));
		RecvReport r = recv_transfer(s, ch, spec);
		ch.send(msg_user, s.conn().stats());
		ch.send(msg_user + 1, s.dev().event_stats());
		ch.expect(msg_fin, seconds(60));
		return r.result ? 1 : 0;
	});
	Side me(n0, n1, key);
	me.create_and_connect(seconds(120));
	const std::uint64_t rx1 = rcvd_pkts(n1.dev);
	const auto t0 = std::chrono::steady_clock::now();

	TransferResult res = send_transfer(me, child.chan());
	const double secs = std::chrono::duration<double>(
				    std::chrono::steady_clock::now() - t0).count();
	note("DataIntegrity: " + std::to_string(res.send.bytes >> 20) + " MiB in " +
	     std::to_string(count) + " writes, " + std::to_string(secs) + " s, " +
	     std::to_string(static_cast<double>(res.send.bytes) / secs / 1e6) + " MB/s");
	note("sender: " + to_string(res.send));

	const SendReport &s = res.send;
	expect_flawless_send(s, count);
	ASSERT_TRUE(res.recv.has_value()) << "no report from the receiver";
	note("receiver: " + to_string(*res.recv));
	expect_flawless_receive(*res.recv, count, s.bytes);

	const rv::ConnStats peer_cs = child.chan().expect_body<rv::ConnStats>(msg_user, seconds(60));
	const rv::EventStats peer_es =
		child.chan().expect_body<rv::EventStats>(msg_user + 1, seconds(60));
	EXPECT_EQ(peer_cs.recv_write_cqe, count) << to_string(peer_cs);
	EXPECT_EQ(peer_cs.recv_write_bytes, s.bytes);
	EXPECT_EQ(peer_es.recv_write_cqe, count);
	EXPECT_EQ(peer_es.recv_write_bytes, s.bytes);
	const rv::ConnStats cs = me.conn().stats();
	EXPECT_EQ(cs.post_write, count) << to_string(cs);
	EXPECT_EQ(cs.post_write_bytes, s.bytes);
	EXPECT_EQ(cs.send_write_cqe, count);
	EXPECT_EQ(cs.outstand_send_write, 0u);
	const rv::EventStats es = me.dev().event_stats();
	EXPECT_EQ(es.send_write_cqe, count);
	EXPECT_EQ(es.send_write_bytes, s.bytes);
	EXPECT_GE(rcvd_pkts(n1.dev) - rx1, s.bytes / 4096) << "rcvd_pkts of " << n1.dev;
	note("QPs used (sconn_index bits): " + std::to_string(s.sconn_mask));

	child.chan().send(msg_fin);
	Peer::Status st = child.wait(seconds(60));
	EXPECT_TRUE(st.ok()) << st.str();
}

namespace {

constexpr int routing_procs = 16;
constexpr std::uint32_t routing_writes = 4;	// per process
// Room for the longest write (routing_len() of unknown_index), and the
// sender's source of 66 of them in one MR of max_fmr_size of soft-RoCE.
constexpr std::uint64_t routing_slot = 20 * KiB;
constexpr std::uint32_t unknown_index = 400;	// index_bits 9: < 512

std::uint64_t routing_len(std::uint32_t idx, std::uint32_t k)
{
	return 1000 + 4099 * k + 37 * idx;
}

std::uint64_t routing_key(std::uint32_t idx, std::uint32_t k)
{
	return (std::uint64_t{idx} << 16) | k | 0x5100000000ULL;
}

struct RoutingReady {
	std::uint64_t conn_handle;
	std::uint32_t rv_index;
	std::uint32_t resv;
};

struct RoutingInfo {
	std::uint64_t addr;
	std::uint32_t rkey;
	std::uint32_t rv_index;
};

struct RoutingReport {
	std::uint32_t rv_index;
	std::uint32_t events;
	std::uint32_t ok;
	std::uint32_t wrong_index;
	std::uint32_t duplicate;
	std::uint32_t bad;		// type, status, length, conn_handle or data
	std::uint32_t spare_written;	// the unknown-index writes landed
	std::uint32_t recv_drop;	// the connection's, process 0 only
	rv::Event first_bad;
	rv::EventStats es;
};

int routing_receiver(Channel &ch, const Node &local, const Node &remote,
		     const rv::JobKey &key)
{
	SideConfig cfg;
	Side s(local, remote, key, cfg);
	s.create();
	const std::uint32_t me = s.attach().rv_index;
	ch.send(msg_ready, RoutingReady{s.conn().conn_handle(), me, 0});
	// Slots 0..routing_writes-1 for the writes to this process, then
	// room for the writes with an unknown index.
	rv::Mapping buf = shared_buffer((routing_writes + 2) * routing_slot);
	rv::MemoryRegion mr = s.dev().reg_mem(buf.data(), buf.size(),
					      rv::access::psm3_recv);
	ch.expect(msg_go, seconds(300));
	s.connect();
	if (!s.conn().wait_connected(seconds(180)))
		throw std::runtime_error("not connected");
	ch.send(msg_user, RoutingInfo{buf.addr(), mr.rkey(), me});

	RoutingReport r{};
	r.rv_index = me;
	std::set<std::uint32_t> seen;
	auto on_event = [&](const rv::Event &e) {
		r.events++;
		const std::uint32_t idx = e.imm_data >> (32 - cfg.index_bits);
		const std::uint32_t k = e.imm_data & 0xffff;
		if (idx != me) {
			r.wrong_index++;
			if (!r.bad)
				r.first_bad = e;
			return;
		}
		if (e.event_type != RV_WC_RECV_RDMA_WITH_IMM || e.status ||
		    e.conn_handle != s.conn().conn_handle() || k >= routing_writes ||
		    e.byte_len != routing_len(me, k) ||
		    check_pattern(buf.bytes() + k * routing_slot, routing_len(me, k),
				  routing_key(me, k))) {
			if (!r.bad && !r.wrong_index)
				r.first_bad = e;
			r.bad++;
			return;
		}
		if (!seen.insert(k).second) {
			r.duplicate++;
			return;
		}
		r.ok++;
	};
	auto end = std::chrono::steady_clock::now() + seconds(120);
	while (r.ok < routing_writes && std::chrono::steady_clock::now() < end) {
		if (!s.ring().drain(on_event))
			std::this_thread::sleep_for(milliseconds(2));
	}
	// Wait for the sender's word that everything completed, then look
	// for strays.
	ch.expect(msg_fin, seconds(300));
	std::this_thread::sleep_for(milliseconds(500));
	s.ring().drain(on_event);
	if (me == 0)
		r.spare_written = !check_pattern(buf.bytes() + routing_writes * routing_slot,
						 routing_len(unknown_index, 0),
						 routing_key(unknown_index, 0));
	if (me == 0)
		r.recv_drop = s.conn().stats().recv_drop;
	r.es = s.dev().event_stats();
	ch.send(msg_user + 1, r);
	ch.expect(msg_fin, seconds(60));
	return 0;
}

// One write of the routing test: from offset off of the source.
struct RoutingPost {
	std::uint64_t off;
	std::uint64_t rem_addr;
	std::uint32_t rkey;
	std::uint32_t immed;
	std::uint64_t len;
};

// The writes of the routing test, their patterns in src: routing_writes
// to each receiver of info, then two with an index nobody has into the
// spare room of p0 (the receiver of rv_index 0).
std::vector<RoutingPost> routing_posts(Side &me, const std::vector<RoutingInfo> &info,
				       const RoutingInfo &p0, const rv::Mapping &src)
{
	std::vector<RoutingPost> posts;
	auto add = [&](const RoutingInfo &ri, std::uint32_t index, std::uint64_t slot,
		       std::uint32_t k) {
		RoutingPost p;
		p.off = posts.size() * routing_slot;
		p.rem_addr = ri.addr + slot * routing_slot;
		p.rkey = ri.rkey;
		p.immed = me.immed(index, k);
		p.len = routing_len(index, k);
		fill_pattern(src.bytes() + p.off, p.len, routing_key(index, k));
		posts.push_back(p);
	};
	for (std::uint32_t k = 0; k < routing_writes; k++)
		for (const RoutingInfo &ri : info)
			add(ri, ri.rv_index, k, k);
	for (std::uint32_t k = 0; k < 2; k++)
		add(p0, unknown_index, routing_writes + k, k);
	return posts;
}

// How posting every write of a list went.
struct PostOutcome {
	std::size_t posted = 0;
	std::size_t completed = 0;
	std::size_t failed = 0;		// completed in error
	int hard_error = 0;		// a post's errno other than "try again"
};

// Posts the writes in order (retrying EAGAIN, ENOMEM, EBUSY) and waits
// for their completions, for at most 180 s.
PostOutcome post_all(Side &me, const std::vector<RoutingPost> &posts,
		     const rv::Mapping &src, const rv::MemoryRegion &mr)
{
	PostOutcome o;
	auto end = std::chrono::steady_clock::now() + seconds(180);
	while ((o.posted < posts.size() || o.completed < o.posted) && !o.hard_error &&
	       std::chrono::steady_clock::now() < end) {
		if (o.posted < posts.size()) {
			const RoutingPost &p = posts[o.posted];
			rv::WriteRequest w;
			w.loc_addr = src.addr() + p.off;
			w.mr = &mr.info();
			w.rem_addr = p.rem_addr;
			w.rkey = p.rkey;
			w.length = p.len;
			w.wr_id = o.posted;
			w.immed = p.immed;
			rv::PostResult pr;
			int err = me.conn().try_post_write(w, pr);
			if (!err)
				o.posted++;
			else if (err != EAGAIN && err != ENOMEM && err != EBUSY)
				o.hard_error = err;
		}
		me.ring().drain([&](const rv::Event &e) {
			o.completed++;
			if (e.status || e.event_type != RV_WC_RDMA_WRITE)
				o.failed++;
		});
	}
	return o;
}

// A receiver of the routing test saw its writes and no other.
void expect_routed(const RoutingReport &r)
{
	SCOPED_TRACE("rv_index " + std::to_string(r.rv_index));
	EXPECT_EQ(r.ok, routing_writes);
	EXPECT_EQ(r.events, routing_writes);
	EXPECT_EQ(r.wrong_index, 0u) << "first: " << to_string(r.first_bad);
	EXPECT_EQ(r.duplicate, 0u);
	EXPECT_EQ(r.bad, 0u) << "first: " << to_string(r.first_bad);
	EXPECT_EQ(r.es.recv_write_cqe, routing_writes);
	if (r.rv_index == 0) {
		EXPECT_EQ(r.spare_written, 1u)
			<< "the write with an unknown index did not land";
		EXPECT_EQ(r.recv_drop, 2u)
			<< "writes for an unknown index not counted";
	}
}

} // namespace

// 16 processes of the job on node 1, one on node 0: a write whose
// immediate data carries rv_index i raises an event in process i only;
// an index no process has raises none.
TEST(ConnWrite, ImmediateRoutingAmong16Processes)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const rv::JobKey key = rv::random_job_key();
	const std::uint64_t rx1 = rcvd_pkts(n1.dev);

	std::vector<Peer> peers;
	for (int i = 0; i < routing_procs; i++)
		peers.emplace_back([&](Channel &ch) {
			return routing_receiver(ch, n1, n0, key);
		});
	std::set<std::uint64_t> conn_handles;
	std::set<std::uint32_t> indexes;
	for (auto &p : peers) {
		RoutingReady r = p.chan().expect_body<RoutingReady>(msg_ready, seconds(120));
		conn_handles.insert(r.conn_handle);
		indexes.insert(r.rv_index);
	}
	EXPECT_EQ(conn_handles.size(), 1u) << "one shared connection on " << n1.dev;
	ASSERT_EQ(indexes.size(), static_cast<std::size_t>(routing_procs));
	ASSERT_LT(*indexes.rbegin(), unknown_index);

	Side me(n0, n1, key);
	me.connect();
	for (auto &p : peers)
		p.chan().send(msg_go);
	ASSERT_TRUE(me.conn().wait_connected(seconds(180)))
		<< to_string(me.conn().stats());
	std::vector<RoutingInfo> info;
	for (auto &p : peers)
		info.push_back(p.chan().expect_body<RoutingInfo>(msg_user, seconds(180)));

	// Source: one slot per (process, write), plus the stray writes.
	rv::Mapping src = shared_buffer((routing_procs * routing_writes + 2) * routing_slot);
	rv::MemoryRegion mr = me.dev().reg_mem(src.data(), src.size(),
					       rv::access::psm3_send);
	// Writes for an index nobody has go into process 0's spare room.
	const RoutingInfo *p0 = nullptr;
	for (const RoutingInfo &ri : info)
		if (ri.rv_index == 0)
			p0 = &ri;
	ASSERT_NE(p0, nullptr);
	const std::vector<RoutingPost> posts = routing_posts(me, info, *p0, src);

	const PostOutcome o = post_all(me, posts, src, mr);
	EXPECT_EQ(o.hard_error, 0) << std::strerror(o.hard_error);
	EXPECT_EQ(o.posted, posts.size());
	EXPECT_EQ(o.completed, posts.size());
	EXPECT_EQ(o.failed, 0u);

	for (auto &p : peers)
		p.chan().send(msg_fin);
	std::uint64_t total_events = 0;
	for (auto &p : peers) {
		RoutingReport r = p.chan().expect_body<RoutingReport>(msg_user + 1, seconds(120));
		expect_routed(r);
		total_events += r.events;
	}
	EXPECT_EQ(total_events, std::uint64_t{routing_procs} * routing_writes)
		<< "the writes with an unknown index raised events";
	EXPECT_GT(rcvd_pkts(n1.dev), rx1);
	for (auto &p : peers)
		p.chan().send(msg_fin);
	for (auto &p : peers) {
		Peer::Status st = p.wait(seconds(60));
		EXPECT_TRUE(st.ok()) << st.str();
	}
}
