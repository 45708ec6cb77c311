// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Connecting two nodes: one process per node (the test and a forked
// child), each attached to its own rxe device with the same job key. The
// side with the smaller GID listens; CONN_CONNECT works in any order; the
// CM exchange shows in the stats; the processes of a job on a node share
// num_conn kernel RC QPs however many they are; packets cross the veth
// (the peer device's rcvd_pkts rises).
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <rv/connection.hpp>

#include "conn_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

struct Ready {
	std::uint64_t handle;
	std::uint64_t conn_handle;
	std::uint32_t rv_index;
	std::uint32_t resv;
};

// What a connected side reports: its aggregate stats, the conn_count of
// each QP and the errno of GET_CONN_COUNT for index num_conn.
struct Connected {
	rv::ConnStats stats;
	std::uint32_t count[RV_MAX_NUM_CONN];
	std::int32_t count_past_end;
	std::int32_t connected;
};

Connected connected_report(Side &s)
{
	Connected c{};
	c.stats = s.conn().stats();
	for (unsigned i = 0; i < s.num_conn() && i < RV_MAX_NUM_CONN; i++)
		c.count[i] = s.conn().conn_count(static_cast<std::uint8_t>(i));
	c.count_past_end = conn_count_errno(s.fd(), s.conn().handle(),
					    static_cast<std::uint8_t>(s.num_conn()));
	int v = -1;
	c.connected = conn_connected_errno(s.fd(), s.conn().handle(), &v) ? -1 : v;
	return c;
}

// The child's side of a connect test: create, report Ready, CONN_CONNECT
// on msg_go, report Connected, wait for msg_fin.
int connect_child(Channel &ch, const Node &local, const Node &remote,
		  const rv::JobKey &key, const SideConfig &cfg)
{
	Side s(local, remote, key, cfg);
	s.create();
	ch.send(msg_ready, Ready{s.conn().handle(), s.conn().conn_handle(),
				 s.attach().rv_index, 0});
	ch.expect(msg_go, seconds(300));
	s.connect();
	if (!s.conn().wait_connected(seconds(120)))
		throw std::runtime_error("child: not connected after 120 s: " +
					 to_string(s.conn().stats()));
	ch.send(msg_user, connected_report(s));
	ch.expect(msg_fin, seconds(600));
	return 0;
}

void check_roles(const Connected &c, bool server, unsigned num_conn,
		 const std::string &who)
{
	SCOPED_TRACE(who);
	const rv::ConnStats &s = c.stats;
	EXPECT_EQ(c.connected, 1);
	EXPECT_EQ(s.num_conn, num_conn) << to_string(s);
	EXPECT_TRUE(s.flags & RV_CONN_STAT_FLAG_WAS_CONNECTED) << to_string(s);
	if (server) {
		EXPECT_TRUE(s.flags & RV_CONN_STAT_FLAG_SERVER) << to_string(s);
		EXPECT_FALSE(s.flags & RV_CONN_STAT_FLAG_CLIENT) << to_string(s);
		EXPECT_EQ(s.req_sent, 0u) << to_string(s);
		EXPECT_GE(s.req_recv, num_conn) << to_string(s);
		EXPECT_GE(s.rep_sent, num_conn) << to_string(s);
		EXPECT_GE(s.rtu_recv + s.established, num_conn) << to_string(s);
	} else {
		EXPECT_TRUE(s.flags & RV_CONN_STAT_FLAG_CLIENT) << to_string(s);
		EXPECT_FALSE(s.flags & RV_CONN_STAT_FLAG_SERVER) << to_string(s);
		EXPECT_GE(s.req_sent, num_conn) << to_string(s);
		EXPECT_EQ(s.req_recv, 0u) << to_string(s);
		EXPECT_GE(s.rep_recv, num_conn) << to_string(s);
		EXPECT_GE(s.rtu_sent, num_conn) << to_string(s);
	}
	for (unsigned i = 0; i < num_conn && i < RV_MAX_NUM_CONN; i++)
		EXPECT_GE(c.count[i], 1u) << "QP " << i;
	EXPECT_EQ(c.count_past_end, EINVAL);
}

enum class Order { server_first, client_first, interleaved };

std::string order_name(const testing::TestParamInfo<Order> &i)
{
	switch (i.param) {
	case Order::server_first: return "ServerFirst";
	case Order::client_first: return "ClientFirst";
	case Order::interleaved: return "Interleaved";
	}
	return "?";
}

class ConnOrder : public testing::TestWithParam<Order> {};

// first connects its side; after wait, in which not_connected_yet checks
// that one side alone made no connection, second connects its side.
void one_then_other(const std::function<void()> &first, const std::function<void()> &second,
		    seconds wait, const std::function<void()> &not_connected_yet)
{
	first();
	std::this_thread::sleep_for(wait);
	not_connected_yet();
	second();
}

// CONNECT again on a connected connection: the same path is fine,
// another one is not.
void expect_connect_again(Side &me, const Node &n0, const Node &n1)
{
	EXPECT_EQ(conn_connect_errno(me.fd(), me.conn().handle(),
				     path_of(n0, n1).to_uapi()), 0);
	rv::PathRecord other = path_of(n0, n1);
	other.mtu = 2;
	EXPECT_EQ(conn_connect_errno(me.fd(), me.conn().handle(), other.to_uapi()),
		  EEXIST);
	EXPECT_TRUE(me.conn().connected());
}

} // namespace

TEST_P(ConnOrder, Connects)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const rv::JobKey key = rv::random_job_key();
	const SideConfig cfg;
	const unsigned num_conn = effective_num_conn(cfg.num_conn);
	const bool parent_server = listens(n0, n1);
	ASSERT_NE(parent_server, listens(n1, n0)) << "the GIDs are equal";
	const std::uint64_t rx0 = rcvd_pkts(n0.dev);
	const std::uint64_t rx1 = rcvd_pkts(n1.dev);

	Peer child([&](Channel &ch) { return connect_child(ch, n1, n0, key, cfg); });
	Side me(n0, n1, key, cfg);
	me.create();
	const Ready ready = child.chan().expect_body<Ready>(msg_ready, seconds(60));
	EXPECT_NE(ready.conn_handle, 0u);

	auto connect_parent = [&] { me.connect(); };
	auto connect_child_now = [&] { child.chan().send(msg_go); };
	auto not_connected_yet = [&] {
		int v = -1;
		EXPECT_EQ(conn_connected_errno(me.fd(), me.conn().handle(), &v), 0);
		EXPECT_EQ(v, 0) << "connected with only one side connecting";
	};

	const std::function<void()> connect_server =
		parent_server ? std::function<void()>(connect_parent) : connect_child_now;
	const std::function<void()> connect_client =
		parent_server ? std::function<void()>(connect_child_now) : connect_parent;
	switch (GetParam()) {
	case Order::server_first:
		one_then_other(connect_server, connect_client, seconds(2), not_connected_yet);
		break;
	case Order::client_first:
		// The client's REQs find nobody, or are rejected; it keeps
		// trying until the server side connects.
		one_then_other(connect_client, connect_server, seconds(4), not_connected_yet);
		break;
	case Order::interleaved:
		connect_child_now();
		connect_parent();
		break;
	}

	ASSERT_TRUE(me.conn().wait_connected(seconds(120)))
		<< to_string(me.conn().stats());
	const Connected mine = connected_report(me);
	const Connected theirs =
		child.chan().expect_body<Connected>(msg_user, seconds(120));

	check_roles(mine, parent_server, num_conn, "this side (" + n0.dev + ")");
	check_roles(theirs, !parent_server, num_conn, "peer side (" + n1.dev + ")");
	if (GetParam() == Order::client_first) {
		const rv::ConnStats &client = parent_server ? theirs.stats : mine.stats;
		EXPECT_TRUE(client.req_sent > num_conn || client.rej_recv > 0)
			<< "the client connected without retrying: " << to_string(client);
	}

	expect_connect_again(me, n0, n1);

	// The CM exchange crossed the veth both ways.
	EXPECT_GT(rcvd_pkts(n1.dev), rx1);
	EXPECT_GT(rcvd_pkts(n0.dev), rx0);

	child.chan().send(msg_fin);
	Peer::Status st = child.wait(seconds(60));
	EXPECT_TRUE(st.ok()) << st.str();
}

INSTANTIATE_TEST_SUITE_P(Conn, ConnOrder,
			 testing::Values(Order::server_first, Order::client_first,
					 Order::interleaved),
			 order_name);

// N processes on each node of one job share one connection: the same
// conn_handle, num_conn RC QPs per node however large N is (and the
// job-device's registration QP).
TEST(Conn, SharedByFourProcessesPerNode)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	constexpr int per_node = 4;
	const rv::JobKey key = rv::random_job_key();
	const SideConfig cfg;
	const unsigned num_conn = effective_num_conn(cfg.num_conn);
	const std::uint64_t rx0 = rcvd_pkts(n0.dev);
	const std::uint64_t rx1 = rcvd_pkts(n1.dev);
	const bool have_rdma = rv_rc_qps(n0.dev).has_value();
	if (have_rdma) {
		// Connections of earlier tests may still be going away.
		wait_until([&] { return rv_rc_qps(n0.dev) == 0u && rv_rc_qps(n1.dev) == 0u; },
			   seconds(30));
	}

	std::vector<Peer> peers;
	for (int i = 0; i < 2 * per_node; i++) {
		const Node &local = i % 2 ? n1 : n0;
		const Node &remote = i % 2 ? n0 : n1;
		peers.emplace_back([&, local, remote](Channel &ch) {
			return connect_child(ch, local, remote, key, cfg);
		});
	}
	std::set<std::uint64_t> handles[2];
	std::set<std::uint32_t> indexes[2];
	for (int i = 0; i < 2 * per_node; i++) {
		Ready r = peers[static_cast<std::size_t>(i)].chan().expect_body<Ready>(
			msg_ready, seconds(120));
		handles[i % 2].insert(r.conn_handle);
		indexes[i % 2].insert(r.rv_index);
	}
	EXPECT_EQ(handles[0].size(), 1u) << "processes on " << n0.dev
					 << " got different connections";
	EXPECT_EQ(handles[1].size(), 1u) << "processes on " << n1.dev
					 << " got different connections";
	EXPECT_EQ(indexes[0].size(), static_cast<std::size_t>(per_node));
	EXPECT_EQ(indexes[1].size(), static_cast<std::size_t>(per_node));

	for (auto &p : peers)
		p.chan().send(msg_go);
	for (std::size_t i = 0; i < peers.size(); i++) {
		SCOPED_TRACE(i);
		Connected c = peers[i].chan().expect_body<Connected>(msg_user, seconds(180));
		check_roles(c, listens(i % 2 ? n1 : n0, i % 2 ? n0 : n1), num_conn,
			    "process " + std::to_string(i));
	}

	if (have_rdma) {
		// The connection's num_conn QPs and the registration QP of the
		// node's job-device.
		const unsigned want = num_conn + 1;
		std::optional<unsigned> q0, q1;
		wait_until([&] {
			q0 = rv_rc_qps(n0.dev);
			q1 = rv_rc_qps(n1.dev);
			return q0 == want && q1 == want;
		}, seconds(10));
		EXPECT_EQ(q0.value_or(999), want) << "kernel RC QPs on " << n0.dev;
		EXPECT_EQ(q1.value_or(999), want) << "kernel RC QPs on " << n1.dev;
	}
	EXPECT_GT(rcvd_pkts(n1.dev), rx1);
	EXPECT_GT(rcvd_pkts(n0.dev), rx0);

	for (auto &p : peers)
		p.chan().send(msg_fin);
	for (auto &p : peers) {
		Peer::Status st = p.wait(seconds(60));
		EXPECT_TRUE(st.ok()) << st.str();
	}
	if (have_rdma) {
		// The last process of the job on a node takes the QPs with it.
		EXPECT_TRUE(wait_until(
			[&] { return rv_rc_qps(n0.dev) == 0u && rv_rc_qps(n1.dev) == 0u; },
			seconds(30)))
			<< "RC QPs left: " << rv_rc_qps(n0.dev).value_or(999) << " on "
			<< n0.dev << ", " << rv_rc_qps(n1.dev).value_or(999) << " on "
			<< n1.dev;
	}
}
