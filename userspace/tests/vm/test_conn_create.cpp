// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// CONN_CREATE and the ioctls that name a connection, on one node: input
// validation, the shared connection of a job, handles, and that nothing
// goes on the wire before CONN_CONNECT.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <sys/mman.h>

#include <rv/connection.hpp>
#include <rv/device.hpp>
#include <rv/mapping.hpp>

#include "child.hpp"
#include "conn_util.hpp"
#include "vm_env.hpp"

using namespace rv::test;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

// The CONN_CREATE input for local -> remote, built by hand.
rv_conn_create_params raw_create(const Node &local, const Node &remote)
{
	rv_conn_create_params p{};
	p.in.ah.is_global = 1;
	std::memcpy(p.in.ah.grh.dgid, remote.gid.data(), 16);
	p.in.ah.grh.sgid_index = static_cast<std::uint8_t>(local.gid_index);
	p.in.ah.grh.hop_limit = 64;
	p.in.ah.port_num = 1;
	p.in.rem_addr = remote.ip;
	return p;
}

ib_user_path_rec raw_path(const rv::Gid &sgid, const rv::Gid &dgid)
{
	ib_user_path_rec p{};
	std::memcpy(p.sgid, sgid.data(), 16);
	std::memcpy(p.dgid, dgid.data(), 16);
	p.pkey = 0xffff;
	p.mtu = 3;
	p.hop_limit = 64;
	p.numb_path = 1;
	p.reversible = 1;
	return p;
}

// A node that does not exist: the same subnet, an address no node has.
Node phantom_node(const Node &like)
{
	Node n = like;
	n.dev = "none";
	n.ip = (like.ip & 0xffffff00u) | 0xc8u;	// .200
	n.gid = rv::ipv4_mapped_gid(n.ip);
	return n;
}

bool kernel_address(std::uint64_t v)
{
	return v >= 0xffff800000000000ULL;
}

rv::Device attached(const Node &n, const rv::JobKey &key, std::uint8_t num_conn = 0)
{
	rv::AttachParams p = params_for(n, key);
	p.num_conn = num_conn;
	p.cq_entries = 0;
	rv::Device dev = open_declared();
	(void)dev.attach(p);
	return dev;
}

} // namespace

TEST(ConnCreate, NotAttachedEinval)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	rv::Device dev = open_declared();
	rv_conn_create_params p = raw_create(n0, n1);
	EXPECT_EQ(conn_create_errno(dev.fd(), p), EINVAL);
	EXPECT_EQ(conn_connected_errno(dev.fd(), 1), EINVAL);
	EXPECT_EQ(conn_stats_errno(dev.fd(), 0, RV_CONN_STATS_AGGREGATE), EINVAL);
	rv_post_write_params_in w{};
	w.handle = 1;
	w.length = 1;
	EXPECT_EQ(post_write_errno(dev.fd(), w), EINVAL);
}

TEST(ConnCreate, BadAddressEinval)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	rv::Device dev = attached(n0, rv::random_job_key());

	struct Case {
		const char *what;
		void (*mutate)(rv_conn_create_params &, const Node &);
	};
	const Case cases[] = {
		{"port_num 2", [](rv_conn_create_params &p, const Node &) {
			 p.in.ah.port_num = 2;
		 }},
		{"port_num 0", [](rv_conn_create_params &p, const Node &) {
			 p.in.ah.port_num = 0;
		 }},
		{"sgid_index not the attach's", [](rv_conn_create_params &p, const Node &l) {
			 p.in.ah.grh.sgid_index = static_cast<std::uint8_t>(l.gid_index + 1);
		 }},
		{"zero dgid", [](rv_conn_create_params &p, const Node &) {
			 std::memset(p.in.ah.grh.dgid, 0, 16);
		 }},
		{"dgid = local GID (loopback)", [](rv_conn_create_params &p, const Node &l) {
			 std::memcpy(p.in.ah.grh.dgid, l.gid.data(), 16);
		 }},
		{"is_global 0 on RoCE", [](rv_conn_create_params &p, const Node &) {
			 p.in.ah.is_global = 0;
		 }},
		{"resv1 non-zero", [](rv_conn_create_params &p, const Node &) {
			 p.in.resv1 = 1;
		 }},
	};
	for (const Case &c : cases) {
		SCOPED_TRACE(c.what);
		rv_conn_create_params p = raw_create(n0, n1);
		c.mutate(p, n0);
		int err = conn_create_errno(dev.fd(), p);
		EXPECT_EQ(err, EINVAL) << c.what << ": " << std::strerror(err);
	}

	// Nothing was left behind: the valid request still works, once.
	rv_conn_create_params ok = raw_create(n0, n1);
	ASSERT_EQ(conn_create_errno(dev.fd(), ok), 0);
	EXPECT_NE(ok.out.handle, 0u);
	EXPECT_NE(ok.out.conn_handle, 0u);
	rv_conn_create_params again = raw_create(n0, n1);
	EXPECT_EQ(conn_create_errno(dev.fd(), again), EBUSY);
}

TEST(ConnCreate, SecondToSameRemoteEbusy)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	rv::Device dev = attached(n0, rv::random_job_key());

	rv::Connection c = rv::Connection::create(dev, remote_of(n0, n1));
	try {
		(void)rv::Connection::create(dev, remote_of(n0, n1));
		ADD_FAILURE() << "second CONN_CREATE to the same remote succeeded";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EBUSY) << e.what();
	}
	// Another remote is another connection.
	rv::Connection other = rv::Connection::create(dev, remote_of(n0, phantom_node(n1)));
	EXPECT_NE(other.conn_handle(), c.conn_handle());
	EXPECT_NE(other.handle(), c.handle());
}

TEST(ConnCreate, HandlesAndNothingOnTheWire)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	rv::Device dev = attached(n0, rv::random_job_key());
	const unsigned num_conn = effective_num_conn(0);
	EXPECT_TRUE(wait_quiet({n0.dev, n1.dev}, milliseconds(1000), seconds(60)))
		<< "packets keep arriving without any connection";
	const std::uint64_t rx0 = rcvd_pkts(n0.dev);
	const std::uint64_t rx1 = rcvd_pkts(n1.dev);
	const std::uint64_t tx0 = hw_counter(n0.dev, "sent_pkts");

	rv_conn_create_params p = raw_create(n0, n1);
	ASSERT_EQ(conn_create_errno(dev.fd(), p), 0);
	const std::uint64_t h = p.out.handle;
	EXPECT_NE(h, 0u);
	EXPECT_NE(p.out.conn_handle, 0u);
	EXPECT_FALSE(kernel_address(h)) << std::hex << h;
	EXPECT_FALSE(kernel_address(p.out.conn_handle)) << std::hex << p.out.conn_handle;

	int connected = -1;
	EXPECT_EQ(conn_connected_errno(dev.fd(), h, &connected), 0);
	EXPECT_EQ(connected, 0);

	rv_conn_get_stats_params_out s{};
	ASSERT_EQ(conn_stats_errno(dev.fd(), h, RV_CONN_STATS_AGGREGATE, &s), 0);
	EXPECT_EQ(s.index, RV_CONN_STATS_AGGREGATE);
	EXPECT_EQ(s.num_conn, num_conn) << to_string(s);
	EXPECT_EQ(s.flags & RV_CONN_STAT_FLAG_WAS_CONNECTED, 0) << to_string(s);
	EXPECT_EQ(s.req_sent, 0u);
	EXPECT_EQ(s.post_write, 0u);
	for (unsigned i = 0; i < num_conn; i++) {
		SCOPED_TRACE(i);
		rv_conn_get_stats_params_out q{};
		ASSERT_EQ(conn_stats_errno(dev.fd(), h, static_cast<std::uint8_t>(i), &q), 0);
		EXPECT_EQ(q.index, i);
		EXPECT_EQ(q.num_conn, 1u);
		std::uint32_t count = 99;
		EXPECT_EQ(conn_count_errno(dev.fd(), h, static_cast<std::uint8_t>(i), &count), 0);
		EXPECT_EQ(count, 0u) << "never established";
	}
	EXPECT_EQ(conn_count_errno(dev.fd(), h, static_cast<std::uint8_t>(num_conn)), EINVAL);
	EXPECT_EQ(conn_stats_errno(dev.fd(), h, static_cast<std::uint8_t>(num_conn)), EINVAL);

	// CONN_CREATE sends nothing.
	std::this_thread::sleep_for(milliseconds(500));
	EXPECT_EQ(rcvd_pkts(n1.dev), rx1);
	EXPECT_EQ(rcvd_pkts(n0.dev), rx0);
	EXPECT_EQ(hw_counter(n0.dev, "sent_pkts"), tx0);
}

TEST(ConnCreate, NumConnFromAttach)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	for (std::uint8_t nc : {std::uint8_t{1}, std::uint8_t{3}, std::uint8_t{RV_MAX_NUM_CONN}}) {
		SCOPED_TRACE(unsigned{nc});
		rv::Device dev = attached(n0, rv::random_job_key(), nc);
		rv::Connection c = rv::Connection::create(dev, remote_of(n0, n1));
		EXPECT_EQ(c.stats().num_conn, nc);
		EXPECT_EQ(c.conn_count(static_cast<std::uint8_t>(nc - 1)), 0u);
		EXPECT_EQ(conn_count_errno(dev.fd(), c.handle(), nc), EINVAL);
	}
}

TEST(ConnCreate, SharedByTheJobsProcesses)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	const rv::JobKey key = rv::random_job_key();
	rv::Device dev = attached(n0, key);
	rv::Connection c = rv::Connection::create(dev, remote_of(n0, n1));
	const unsigned num_conn = effective_num_conn(0);

	struct Report {
		std::uint64_t handle;
		std::uint64_t conn_handle;
		std::uint32_t num_conn;
		int err;
	};
	auto create_in_child = [&](const rv::JobKey &k, const Node &remote) {
		return run_in_child<Report>([&] {
			Report r{};
			close_inherited_rv_files();
			rv::Device d = attached(n0, k);
			rv_conn_create_params p = raw_create(n0, remote);
			r.err = conn_create_errno(d.fd(), p);
			if (r.err)
				return r;
			r.handle = p.out.handle;
			r.conn_handle = p.out.conn_handle;
			rv_conn_get_stats_params_out s{};
			if (!conn_stats_errno(d.fd(), p.out.handle,
					      RV_CONN_STATS_AGGREGATE, &s))
				r.num_conn = s.num_conn;
			return r;
		});
	};

	// Processes of the job: the same connection, not more QPs.
	for (int i = 0; i < 3; i++) {
		SCOPED_TRACE(i);
		auto out = create_in_child(key, n1);
		ASSERT_TRUE(out.ok()) << "child exit " << out.exit_code;
		ASSERT_EQ(out.report->err, 0) << std::strerror(out.report->err);
		EXPECT_NE(out.report->handle, 0u);
		EXPECT_EQ(out.report->conn_handle, c.conn_handle());
		EXPECT_EQ(out.report->num_conn, num_conn);
	}
	EXPECT_EQ(c.stats().num_conn, num_conn);

	// Another job on the same node and remote: its own connection.
	auto other = create_in_child(rv::random_job_key(), n1);
	ASSERT_TRUE(other.ok());
	ASSERT_EQ(other.report->err, 0) << std::strerror(other.report->err);
	EXPECT_NE(other.report->conn_handle, c.conn_handle());

	// The same job to another remote: another connection.
	auto elsewhere = create_in_child(key, phantom_node(n1));
	ASSERT_TRUE(elsewhere.ok());
	ASSERT_EQ(elsewhere.report->err, 0) << std::strerror(elsewhere.report->err);
	EXPECT_NE(elsewhere.report->conn_handle, c.conn_handle());
}

TEST(ConnCreate, StatsOfAllConnections)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	rv::Device dev = attached(n0, rv::random_job_key(), 2);

	rv_conn_get_stats_params_out s{};
	EXPECT_EQ(conn_stats_errno(dev.fd(), 0, RV_CONN_STATS_AGGREGATE, &s), 0);
	EXPECT_EQ(s.num_conn, 0u) << "no connection yet";

	rv::Connection a = rv::Connection::create(dev, remote_of(n0, n1));
	rv::Connection b = rv::Connection::create(dev, remote_of(n0, phantom_node(n1)));
	rv::ConnStats all = rv::Connection::all_stats(dev);
	EXPECT_EQ(all.num_conn, 4u) << to_string(all);
	EXPECT_EQ(a.stats().num_conn, 2u);
	EXPECT_EQ(b.stats(1).num_conn, 1u);
}

TEST(ConnCreate, InvalidHandleEinval)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	rv::Device dev = attached(n0, rv::random_job_key());
	rv::Connection c = rv::Connection::create(dev, remote_of(n0, n1));
	rv::Mapping buf = rv::Mapping::map(64 * 1024, PROT_READ | PROT_WRITE,
					   MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE);
	rv::MemoryRegion mr = dev.reg_mem(buf.data(), buf.size(), rv::access::psm3_send);
	const ib_user_path_rec path = raw_path(n0.gid, n1.gid);

	const std::uint64_t bads[] = {0, c.handle() + 1000,
				      c.handle() ^ 0x5a5a0000ULL, ~std::uint64_t{0}};
	for (std::uint64_t bad : bads) {
		SCOPED_TRACE(bad);
		EXPECT_EQ(conn_connected_errno(dev.fd(), bad), EINVAL);
		EXPECT_EQ(conn_count_errno(dev.fd(), bad, 0), EINVAL);
		EXPECT_EQ(conn_connect_errno(dev.fd(), bad, path), EINVAL);
		rv_post_write_params_in w{};
		w.handle = bad;
		w.loc_addr = buf.addr();
		w.loc_mr_handle = mr.handle();
		w.loc_mr_addr = mr.addr();
		w.loc_mr_length = mr.length();
		w.loc_mr_access = mr.access();
		w.length = 4096;
		w.rkey = 1;
		w.rem_addr = 0x10000;
		EXPECT_EQ(post_write_errno(dev.fd(), w), EINVAL);
		if (bad) {
			EXPECT_EQ(conn_stats_errno(dev.fd(), bad, RV_CONN_STATS_AGGREGATE),
				  EINVAL);
		}
	}
	// The real handle still works.
	int v = -1;
	EXPECT_EQ(conn_connected_errno(dev.fd(), c.handle(), &v), 0);
	EXPECT_EQ(v, 0);
}

TEST(ConnCreate, ConnectPathChecks)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	rv::Device dev = attached(n0, rv::random_job_key());
	rv::Connection c = rv::Connection::create(dev, remote_of(n0, n1));

	// sgid must be the attach's GID.
	EXPECT_EQ(conn_connect_errno(dev.fd(), c.handle(), raw_path(n1.gid, n1.gid)), EINVAL);
	EXPECT_EQ(conn_connect_errno(dev.fd(), c.handle(), raw_path(rv::Gid{}, n1.gid)),
		  EINVAL);
	int v = -1;
	EXPECT_EQ(conn_connected_errno(dev.fd(), c.handle(), &v), 0);
	EXPECT_EQ(v, 0);

	const ib_user_path_rec path = raw_path(n0.gid, n1.gid);
	EXPECT_EQ(conn_connect_errno(dev.fd(), c.handle(), path), 0);
	EXPECT_EQ(conn_connect_errno(dev.fd(), c.handle(), path), 0) << "same path again";
	ib_user_path_rec other = path;
	other.mtu = 2;
	EXPECT_EQ(conn_connect_errno(dev.fd(), c.handle(), other), EEXIST);
	// Closing while connecting (nobody answers) releases everything.
}

TEST(ConnCreate, ForkChildEacces)
{
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	rv::Device dev = attached(n0, rv::random_job_key());
	rv::Connection c = rv::Connection::create(dev, remote_of(n0, n1));
	const int fd = dev.fd();
	const std::uint64_t h = c.handle();

	struct Report {
		int create;
		int connected;
		int count;
		int stats;
		int post;
	};
	auto out = run_in_child<Report>([&] {
		Report r{};
		rv_conn_create_params p = raw_create(n0, phantom_node(n1));
		r.create = conn_create_errno(fd, p);
		r.connected = conn_connected_errno(fd, h);
		r.count = conn_count_errno(fd, h, 0);
		r.stats = conn_stats_errno(fd, h, RV_CONN_STATS_AGGREGATE);
		rv_post_write_params_in w{};
		w.handle = h;
		w.length = 1;
		r.post = post_write_errno(fd, w);
		return r;
	});
	ASSERT_TRUE(out.ok());
	EXPECT_EQ(out.report->create, EACCES);
	EXPECT_EQ(out.report->connected, EACCES);
	EXPECT_EQ(out.report->count, EACCES);
	EXPECT_EQ(out.report->stats, EACCES);
	EXPECT_EQ(out.report->post, EACCES);
}
