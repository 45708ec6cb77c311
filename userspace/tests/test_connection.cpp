// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::Connection on the host.
//
// Built twice. In rv_unit_tests: the uapi structs the helpers build
// (layouts, byte orders), the immediate helpers, and the errors of a
// Connection without a module. With RV_TEST_FAKE_MODULE, as
// rv_fake_module_tests, which CTest runs under the LD_PRELOAD fake module
// (support/fake_rv_module.cpp) with two fake RoCE nodes fake0 (10.0.0.1)
// and fake1 (10.0.0.2), GID index 3: the ioctls' errors as librv reports
// them, and a write from one /dev/rv file of the process to another. Its
// main() sets that environment up and re-executes the program under the
// shim, so it also runs on its own.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <rv/attach.hpp>
#include <rv/connection.hpp>
#include <rv/device.hpp>
#include <rv/event_ring.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>
#include <rv/gid.hpp>

namespace {

// Runs f, which must throw std::system_error; returns its errno.
template <typename F>
int thrown_errno(F &&f, std::string *what = nullptr)
{
	try {
		f();
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().category(), std::generic_category());
		if (what)
			*what = e.what();
		return e.code().value();
	}
	ADD_FAILURE() << "no std::system_error thrown";
	return 0;
}

} // namespace

#ifndef RV_TEST_FAKE_MODULE

namespace {

rv::Gid gid_of(const char *text)
{
	return rv::parse_gid(text).value();
}

} // namespace

TEST(ConnectionUapi, RemoteRoce)
{
	const rv::Gid g = gid_of("0000:0000:0000:0000:0000:ffff:0a4d:0102");
	rv::Remote r = rv::Remote::roce(g, 0x0a4d0102, 3, 1);
	r.context = 0x1122334455667788ULL;
	const rv_conn_create_params_in in = r.to_uapi();

	EXPECT_EQ(in.ah.is_global, 1);
	EXPECT_EQ(std::memcmp(in.ah.grh.dgid, g.data(), 16), 0);
	EXPECT_EQ(in.ah.grh.sgid_index, 3);
	EXPECT_EQ(in.ah.grh.hop_limit, 64);
	EXPECT_EQ(in.ah.grh.flow_label, 0u);
	EXPECT_EQ(in.ah.grh.traffic_class, 0);
	EXPECT_EQ(in.ah.port_num, 1);
	EXPECT_EQ(in.ah.dlid, 0);
	EXPECT_EQ(in.ah.sl, 0);
	EXPECT_EQ(in.ah.static_rate, 0);
	EXPECT_EQ(in.ah.reserved, 0);
	EXPECT_EQ(in.ah.grh.reserved, 0);
	EXPECT_EQ(in.rem_addr, 0x0a4d0102u);	// host order, as loc_addr
	EXPECT_EQ(in.resv1, 0u);
	EXPECT_EQ(in.context, 0x1122334455667788ULL);

	// The layout the module reads.
	EXPECT_EQ(sizeof(in), 48u);
	EXPECT_EQ(offsetof(rv_conn_create_params_in, ah.grh.sgid_index), 20u);
	EXPECT_EQ(offsetof(rv_conn_create_params_in, ah.is_global), 29u);
	EXPECT_EQ(offsetof(rv_conn_create_params_in, ah.port_num), 30u);
	EXPECT_EQ(offsetof(rv_conn_create_params_in, rem_addr), 32u);
	EXPECT_EQ(offsetof(rv_conn_create_params_in, context), 40u);
	const auto *bytes = reinterpret_cast<const std::uint8_t *>(&in);
	EXPECT_EQ(bytes[32], 0x02);	// little-endian host order
	EXPECT_EQ(bytes[35], 0x0a);
}

TEST(ConnectionUapi, RemoteWithoutGrhAndTooLargeSgidIndex)
{
	rv::Remote r;
	r.is_global = false;
	r.dlid = 0x1234;
	r.gid = gid_of("fe80:0000:0000:0000:0000:0000:0000:0001");
	rv_conn_create_params_in in = r.to_uapi();
	EXPECT_EQ(in.ah.is_global, 0);
	EXPECT_EQ(in.ah.dlid, 0x1234);	// host order in ib_uverbs_ah_attr
	const std::uint8_t zero[16] = {};
	EXPECT_EQ(std::memcmp(in.ah.grh.dgid, zero, 16), 0);

	r.is_global = true;
	r.sgid_index = 255;
	EXPECT_EQ(r.to_uapi().ah.grh.sgid_index, 255);
	r.sgid_index = 256;
	std::string what;
	EXPECT_EQ(thrown_errno([&] { (void)r.to_uapi(); }, &what), EINVAL);
	EXPECT_NE(what.find("sgid_index 256"), std::string::npos) << what;
}

TEST(ConnectionUapi, PathRecordRoceByteOrder)
{
	const rv::Gid s = gid_of("0000:0000:0000:0000:0000:ffff:0a4d:0101");
	const rv::Gid d = gid_of("0000:0000:0000:0000:0000:ffff:0a4d:0102");
	rv::PathRecord p = rv::PathRecord::roce(s, d, 3);
	p.slid = 0x1234;
	p.dlid = 0xabcd;
	p.packet_life_time = 16;
	const ib_user_path_rec r = p.to_uapi();

	EXPECT_EQ(std::memcmp(r.sgid, s.data(), 16), 0);
	EXPECT_EQ(std::memcmp(r.dgid, d.data(), 16), 0);
	EXPECT_EQ(r.pkey, htons(0xffff));
	EXPECT_EQ(r.slid, htons(0x1234));
	EXPECT_EQ(r.dlid, htons(0xabcd));
	const auto *b = reinterpret_cast<const std::uint8_t *>(&r);
	EXPECT_EQ(b[offsetof(ib_user_path_rec, slid)], 0x12);	// network order
	EXPECT_EQ(b[offsetof(ib_user_path_rec, slid) + 1], 0x34);
	EXPECT_EQ(b[offsetof(ib_user_path_rec, dlid)], 0xab);
	EXPECT_EQ(b[offsetof(ib_user_path_rec, pkey)], 0xff);
	EXPECT_EQ(r.mtu, 3u);			// enum ib_mtu, host order
	EXPECT_EQ(r.hop_limit, 64);
	EXPECT_EQ(r.numb_path, 1);
	EXPECT_EQ(r.reversible, 1u);
	EXPECT_EQ(r.packet_life_time, 16);
	EXPECT_EQ(r.raw_traffic, 0u);
	EXPECT_EQ(r.flow_label, 0u);
	EXPECT_EQ(r.sl, 0);
	EXPECT_EQ(r.rate, 0);
	EXPECT_EQ(r.preference, 0);

	rv::PathRecord def = rv::PathRecord::roce(s, d);
	EXPECT_EQ(def.to_uapi().mtu, 3u);
	EXPECT_EQ(def.pkey, 0xffff);
	EXPECT_EQ(def.slid, 0);
}

TEST(ConnectionUapi, IbMtu)
{
	EXPECT_EQ(rv::ib_mtu_from_bytes(256), 1);
	EXPECT_EQ(rv::ib_mtu_from_bytes(1024), 3);
	EXPECT_EQ(rv::ib_mtu_from_bytes(4096), 5);
	EXPECT_EQ(rv::ib_mtu_from_bytes(1500), std::nullopt);
	EXPECT_EQ(rv::ib_mtu_from_bytes(0), std::nullopt);
	for (std::uint8_t m = 1; m <= 5; m++)
		EXPECT_EQ(rv::ib_mtu_from_bytes(rv::ib_mtu_to_bytes(m)), m);
	EXPECT_EQ(rv::ib_mtu_to_bytes(0), 0u);
	EXPECT_EQ(rv::ib_mtu_to_bytes(6), 0u);
}

TEST(ConnectionUapi, WriteRequest)
{
	const rv::MrInfo mr{7, 0x10000, 0x1007, 0x2007, 0x10000, 0x8000,
			    rv::access::psm3_send};
	rv::WriteRequest w;
	w.loc_addr = 0x10100;
	w.mr = &mr;
	w.rem_addr = 0x7f0000001000ULL;
	w.rkey = 0x2009;
	w.length = 4096;
	w.wr_id = 0xdeadbeefcafeULL;
	w.immed = rv::make_immed(5, 9, 42);
	const rv_post_write_params_in in = w.to_uapi(99);

	EXPECT_EQ(in.handle, 99u);
	EXPECT_EQ(in.loc_addr, 0x10100u);
	EXPECT_EQ(in.loc_mr_handle, 7u);
	EXPECT_EQ(in.loc_mr_addr, 0x10000u);	// as given to REG_MEM
	EXPECT_EQ(in.loc_mr_length, 0x8000u);
	EXPECT_EQ(in.loc_mr_access, rv::access::psm3_send);
	EXPECT_EQ(in.rkey, 0x2009u);
	EXPECT_EQ(in.rem_addr, 0x7f0000001000ULL);
	EXPECT_EQ(in.length, 4096u);
	EXPECT_EQ(in.wr_id, 0xdeadbeefcafeULL);
	EXPECT_EQ(in.immed, (5u << 23) | 42u);
	EXPECT_EQ(in.resv1, 0u);
	EXPECT_EQ(sizeof(rv_post_write_params), 80u);
	EXPECT_EQ(offsetof(rv_post_write_params_in, loc_mr_access), 40u);
	EXPECT_EQ(offsetof(rv_post_write_params_in, immed), 72u);

	w.mr = nullptr;
	const rv_post_write_params_in none = w.to_uapi(1);
	EXPECT_EQ(none.loc_mr_handle, 0u);
	EXPECT_EQ(none.loc_mr_addr, 0u);
	EXPECT_EQ(none.loc_mr_length, 0u);
	EXPECT_EQ(none.loc_mr_access, 0u);
}

TEST(ConnectionUapi, Immediate)
{
	static_assert(rv::make_immed(1, 9, 0) == 0x00800000u);
	static_assert(rv::make_immed(511, 9, 0xffffffffu) == 0xffffffffu);
	static_assert(rv::immed_index(0xff800001u, 9) == 511);
	static_assert(rv::immed_payload(0xff800001u, 9) == 1);
	static_assert(rv::immed_payload_mask(9) == 0x007fffffu);
	static_assert(rv::immed_payload_mask(0) == 0xffffffffu);
	static_assert(rv::immed_payload_mask(32) == 0);
	static_assert(rv::make_immed(3, 0, 77) == 77);
	static_assert(rv::immed_index(77, 0) == 0);
	static_assert(rv::make_immed(3, 12, 0x123456) == ((3u << 20) | 0x23456u));
	static_assert(rv::immed_index(rv::make_immed(4095, 12, 5), 12) == 4095);
	for (unsigned bits = 1; bits <= 12; bits++) {
		const std::uint32_t idx = (1u << bits) - 1;
		const std::uint32_t imm = rv::make_immed(idx, bits, 0x00abcdefu);
		EXPECT_EQ(rv::immed_index(imm, bits), idx) << bits;
		EXPECT_EQ(rv::immed_payload(imm, bits),
			  0x00abcdefu & rv::immed_payload_mask(bits)) << bits;
	}
}

TEST(Connection, EmptyThrowsEbadf)
{
	rv::Connection c;
	EXPECT_FALSE(c.valid());
	EXPECT_EQ(c.handle(), 0u);
	std::string what;
	EXPECT_EQ(thrown_errno([&] { (void)c.connected(); }, &what), EBADF);
	EXPECT_EQ(what.rfind("RV_IOCTL_CONN_CONNECTED: ", 0), 0u) << what;
	EXPECT_EQ(thrown_errno([&] { c.connect(rv::PathRecord{}); }), EBADF);
	EXPECT_EQ(thrown_errno([&] { (void)c.conn_count(0); }), EBADF);
	EXPECT_EQ(thrown_errno([&] { (void)c.stats(); }), EBADF);
	EXPECT_EQ(thrown_errno([&] { (void)c.post_write({}); }, &what), EBADF);
	EXPECT_EQ(what.rfind("RV_IOCTL_POST_RDMA_WR_IMMED: ", 0), 0u) << what;
	rv::PostResult out;
	EXPECT_EQ(c.try_post_write({}, out), EBADF);
}

TEST(Connection, RetryableErrnos)
{
	EXPECT_TRUE(rv::Connection::retryable(EAGAIN));
	EXPECT_TRUE(rv::Connection::retryable(ENOMEM));
	EXPECT_TRUE(rv::Connection::retryable(EBUSY));
	EXPECT_FALSE(rv::Connection::retryable(EIO));
	EXPECT_FALSE(rv::Connection::retryable(EINVAL));
	EXPECT_FALSE(rv::Connection::retryable(0));
}

TEST(Connection, CreateOnAFileThatIsNotRv)
{
	// /dev/null answers every ioctl with ENOTTY: the error is the
	// kernel's, named after the ioctl.
	rv::Device dev("/dev/null");
	std::string what;
	EXPECT_EQ(thrown_errno([&] {
		(void)rv::Connection::create(
			dev, rv::Remote::roce(rv::ipv4_mapped_gid(0x0a000002),
					      0x0a000002, 3));
	}, &what), ENOTTY);
	EXPECT_EQ(what.rfind("RV_IOCTL_CONN_CREATE: ", 0), 0u) << what;
	EXPECT_EQ(thrown_errno([&] { (void)rv::Connection::all_stats(dev); }),
		  ENOTTY);

	dev.close();
	EXPECT_EQ(thrown_errno([&] {
		(void)rv::Connection::create(dev, rv::Remote{});
	}), EBADF);
}

#else // RV_TEST_FAKE_MODULE

namespace {

constexpr std::uint32_t ip0 = 0x0a000001;	// fake0
constexpr std::uint32_t ip1 = 0x0a000002;	// fake1
constexpr std::uint16_t gid_index = 3;

// An attached file on a fake node, with its ring.
struct Node {
	rv::Device dev{"/dev/null"};
	rv::AttachParams params;
	rv::Attach attach;
	rv::EventRing ring;

	Node(const char *name, std::uint32_t ip, const rv::JobKey &key,
	     std::uint32_t cq_entries = 64)
	{
		params.dev_name = name;
		params.loc_gid_index = gid_index;
		params.loc_gid = rv::ipv4_mapped_gid(ip);
		params.loc_addr = ip;
		params.job_key = key;
		params.cq_entries = cq_entries;
		dev.capability();
		attach = dev.attach(params);
		if (cq_entries)
			ring = rv::EventRing::map(dev);
	}

	rv::Connection connect_to(std::uint32_t peer_ip, bool wait = true)
	{
		const rv::Gid peer = rv::ipv4_mapped_gid(peer_ip);
		rv::Connection c = rv::Connection::create(
			dev, rv::Remote::roce(peer, peer_ip, gid_index));
		c.connect(rv::PathRecord::roce(params.loc_gid, peer));
		if (wait) {
			EXPECT_TRUE(c.wait_connected(std::chrono::seconds(5)));
		}
		return c;
	}

	std::vector<rv::Event> events()
	{
		std::vector<rv::Event> v;
		ring.drain([&](const rv::Event &e) { v.push_back(e); });
		return v;
	}
};

class ConnectionFake : public testing::Test {
protected:
	void SetUp() override
	{
		if (!std::getenv("RV_FAKE_MODULE"))
			GTEST_SKIP() << "needs the fake module (run by CTest)";
		key_ = rv::random_job_key();
	}

	rv::JobKey key_{};
};

} // namespace

TEST_F(ConnectionFake, CreateConnectConnected)
{
	Node a("fake0", ip0, key_);
	const rv::Gid peer = rv::ipv4_mapped_gid(ip1);
	rv::Connection c = rv::Connection::create(
		a.dev, rv::Remote::roce(peer, ip1, gid_index));
	EXPECT_TRUE(c.valid());
	EXPECT_NE(c.handle(), 0u);
	EXPECT_NE(c.conn_handle(), 0u);
	EXPECT_FALSE(c.connected());		// not asked to connect yet
	c.connect(rv::PathRecord::roce(a.params.loc_gid, peer));
	EXPECT_TRUE(c.wait_connected(std::chrono::seconds(5)));
	EXPECT_TRUE(c.connected());
	EXPECT_EQ(c.conn_count(0), 1u);
	EXPECT_EQ(c.conn_count(3), 1u);		// num_conn 4 by default

	// Connecting again: the same path is fine, another one is not.
	c.connect(rv::PathRecord::roce(a.params.loc_gid, peer));
	EXPECT_EQ(thrown_errno([&] {
		c.connect(rv::PathRecord::roce(a.params.loc_gid, peer, 4));
	}), EEXIST);

	// The file has that connection already.
	EXPECT_EQ(thrown_errno([&] {
		(void)rv::Connection::create(a.dev,
					     rv::Remote::roce(peer, ip1, gid_index));
	}), EBUSY);

	// Another process of the job (here another file) shares it.
	Node a2("fake0", ip0, key_, 0);
	rv::Connection c2 = rv::Connection::create(
		a2.dev, rv::Remote::roce(peer, ip1, gid_index));
	EXPECT_EQ(c2.conn_handle(), c.conn_handle());

	// Moving leaves the source empty.
	rv::Connection moved = std::move(c2);
	EXPECT_FALSE(c2.valid());
	EXPECT_EQ(thrown_errno([&] { (void)c2.connected(); }), EBADF);
	EXPECT_TRUE(moved.valid());
}

TEST_F(ConnectionFake, CreateErrors)
{
	Node a("fake0", ip0, key_);
	const rv::Gid peer = rv::ipv4_mapped_gid(ip1);

	rv::Remote wrong_index = rv::Remote::roce(peer, ip1, gid_index + 1);
	std::string what;
	EXPECT_EQ(thrown_errno([&] {
		(void)rv::Connection::create(a.dev, wrong_index);
	}, &what), EINVAL);
	EXPECT_EQ(what.rfind("RV_IOCTL_CONN_CREATE: ", 0), 0u) << what;

	rv::Remote wrong_port = rv::Remote::roce(peer, ip1, gid_index, 2);
	EXPECT_EQ(thrown_errno([&] {
		(void)rv::Connection::create(a.dev, wrong_port);
	}), EINVAL);

	rv::Remote no_gid = rv::Remote::roce(rv::Gid{}, ip1, gid_index);
	EXPECT_EQ(thrown_errno([&] {
		(void)rv::Connection::create(a.dev, no_gid);
	}), EINVAL);

	rv::Remote self = rv::Remote::roce(a.params.loc_gid, ip0, gid_index);
	EXPECT_EQ(thrown_errno([&] {
		(void)rv::Connection::create(a.dev, self);
	}), EINVAL);

	// Not attached.
	rv::Device fresh("/dev/null");
	fresh.capability();
	EXPECT_EQ(thrown_errno([&] {
		(void)rv::Connection::create(fresh,
					     rv::Remote::roce(peer, ip1, gid_index));
	}), EINVAL);
}

TEST_F(ConnectionFake, ConnectErrorsAndFailure)
{
	Node a("fake0", ip0, key_);
	const rv::Gid peer = rv::ipv4_mapped_gid(ip1);
	rv::Connection c = rv::Connection::create(
		a.dev, rv::Remote::roce(peer, ip1, gid_index));

	// sgid must be the attach GID, dgid the created one.
	EXPECT_EQ(thrown_errno([&] {
		c.connect(rv::PathRecord::roce(peer, peer));
	}), EINVAL);
	EXPECT_EQ(thrown_errno([&] {
		c.connect(rv::PathRecord::roce(a.params.loc_gid,
					       rv::ipv4_mapped_gid(ip0)));
	}), EINVAL);
	EXPECT_EQ(thrown_errno([&] {
		c.connect(rv::PathRecord::roce(a.params.loc_gid, peer, 9));
	}), EINVAL);

	// A node nobody has: CONNECT starts, CONNECTED fails for good.
	const std::uint32_t nobody = 0x0a0000fe;
	const rv::Gid ghost = rv::ipv4_mapped_gid(nobody);
	rv::Connection g = rv::Connection::create(
		a.dev, rv::Remote::roce(ghost, nobody, gid_index));
	g.connect(rv::PathRecord::roce(a.params.loc_gid, ghost));
	std::string what;
	EXPECT_EQ(thrown_errno([&] { (void)g.connected(); }, &what), EIO);
	EXPECT_EQ(what.rfind("RV_IOCTL_CONN_CONNECTED: ", 0), 0u) << what;
	EXPECT_EQ(thrown_errno([&] {
		(void)g.wait_connected(std::chrono::milliseconds(50));
	}), EIO);
	EXPECT_EQ(thrown_errno([&] { (void)g.conn_count(0); }), EIO);

	// Not connected within the timeout: false, no exception (another
	// file: this one has the connection already).
	Node other("fake0", ip0, rv::random_job_key(), 0);
	rv::Connection idle = rv::Connection::create(
		other.dev, rv::Remote::roce(peer, ip1, gid_index));
	EXPECT_FALSE(idle.wait_connected(std::chrono::milliseconds(5)));

	EXPECT_EQ(thrown_errno([&] { (void)c.conn_count(4); }), EINVAL);
	EXPECT_EQ(thrown_errno([&] { (void)c.stats(4); }), EINVAL);
}

TEST_F(ConnectionFake, PostErrors)
{
	Node a("fake0", ip0, key_);
	rv::Mapping buf = rv::Mapping::anonymous(8192);
	rv::MemoryRegion mr = a.dev.reg_mem(buf.data(), 8192, rv::access::psm3_send);

	const rv::Gid peer = rv::ipv4_mapped_gid(ip1);
	rv::Connection c = rv::Connection::create(
		a.dev, rv::Remote::roce(peer, ip1, gid_index));
	rv::WriteRequest w;
	w.loc_addr = buf.addr();
	w.mr = &mr.info();
	w.rem_addr = 0x1000;
	w.rkey = 0x1234;
	w.length = 4096;

	// Not connected yet: EAGAIN, retryable, no exception from try_.
	rv::PostResult out;
	EXPECT_EQ(c.try_post_write(w, out), EAGAIN);
	c.connect(rv::PathRecord::roce(a.params.loc_gid, peer));
	ASSERT_TRUE(c.wait_connected(std::chrono::seconds(5)));

	EXPECT_EQ(c.try_post_write(w, out), 0);
	EXPECT_LT(out.sconn_index, 4);
	EXPECT_EQ(out.conn_count, 1u);

	// The local MR must be named exactly as REG_MEM was given it and
	// must hold the data.
	rv::WriteRequest bad = w;
	bad.length = 8193;
	std::string what;
	EXPECT_EQ(thrown_errno([&] { (void)c.post_write(bad); }, &what), EINVAL);
	EXPECT_EQ(what.rfind("RV_IOCTL_POST_RDMA_WR_IMMED: ", 0), 0u) << what;
	rv::MrInfo other = mr.info();
	other.access = rv::access::psm3_recv;
	bad = w;
	bad.mr = &other;
	EXPECT_EQ(c.try_post_write(bad, out), EINVAL);
	bad = w;
	bad.length = 0;
	EXPECT_EQ(c.try_post_write(bad, out), EINVAL);
	bad.mr = nullptr;
	EXPECT_EQ(c.try_post_write(bad, out), EINVAL);

	// After DEREG the handle holds no reference.
	rv::MrInfo gone = mr.info();
	mr.release();
	bad = w;
	bad.mr = &gone;
	EXPECT_EQ(c.try_post_write(bad, out), EINVAL);

	// A connection that failed for good: EIO.
	const std::uint32_t nobody = 0x0a0000fe;
	rv::Connection g = rv::Connection::create(
		a.dev, rv::Remote::roce(rv::ipv4_mapped_gid(nobody), nobody,
					gid_index));
	g.connect(rv::PathRecord::roce(a.params.loc_gid,
				       rv::ipv4_mapped_gid(nobody)));
	rv::MemoryRegion mr2 = a.dev.reg_mem(buf.data(), 8192, rv::access::psm3_send);
	w.mr = &mr2.info();
	EXPECT_EQ(thrown_errno([&] { (void)g.post_write(w); }), EIO);

	// Once the file is closed: EBADF.
	a.dev.close();
	EXPECT_EQ(c.try_post_write(w, out), EBADF);
	EXPECT_EQ(thrown_errno([&] { (void)c.connected(); }), EBADF);
}

TEST_F(ConnectionFake, PostBusyEvery)
{
	const char *every = std::getenv("RV_FAKE_POST_BUSY_EVERY");
	if (!every)
		GTEST_SKIP() << "RV_FAKE_POST_BUSY_EVERY not set";
	const unsigned long n = std::strtoul(every, nullptr, 0);
	Node a("fake0", ip0, key_, 0);
	rv::Mapping buf = rv::Mapping::anonymous(4096);
	rv::MemoryRegion mr = a.dev.reg_mem(buf.data(), 4096, rv::access::psm3_send);
	rv::Connection c = a.connect_to(ip1);
	rv::WriteRequest w{buf.addr(), &mr.info(), 0x1000, 0x1234, 64, 0, 0};
	rv::PostResult out;

	for (unsigned long i = 1; i < n; i++)
		ASSERT_EQ(c.try_post_write(w, out), 0) << i;
	const int err = c.try_post_write(w, out);
	EXPECT_EQ(err, EBUSY);
	EXPECT_TRUE(rv::Connection::retryable(err));
	EXPECT_EQ(c.try_post_write(w, out), 0);
}

TEST_F(ConnectionFake, WriteWithImmediateBetweenTwoNodes)
{
	Node a("fake0", ip0, key_);
	Node b("fake1", ip1, key_);
	rv::Connection ab = a.connect_to(ip1);
	rv::Connection ba = b.connect_to(ip0);

	constexpr std::size_t len = 3 * 4096;
	rv::Mapping src = rv::Mapping::anonymous(len);
	rv::Mapping dst = rv::Mapping::anonymous(2 * len);
	for (std::size_t i = 0; i < len; i++)
		src.bytes()[i] = static_cast<std::byte>(i * 7 + 1);
	rv::MemoryRegion smr = a.dev.reg_mem(src.data(), len, rv::access::psm3_send);
	rv::MemoryRegion dmr = b.dev.reg_mem(dst.data(), 2 * len,
					     rv::access::psm3_recv);

	// The remote address of dst + len, by the peer's iova.
	rv::WriteRequest w;
	w.loc_addr = src.addr();
	w.mr = &smr.info();
	w.rem_addr = dmr.iova() + len;
	w.rkey = dmr.rkey();
	w.length = len;
	w.wr_id = 0x5151;
	w.immed = rv::make_immed(b.attach.rv_index, b.params.index_bits, 0x1234);
	ab.post_write(w);

	EXPECT_EQ(std::memcmp(dst.bytes() + len, src.data(), len), 0);
	std::vector<rv::Event> rx = b.events();
	ASSERT_EQ(rx.size(), 1u);
	EXPECT_EQ(rx[0].event_type, RV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(rx[0].status, 0);
	EXPECT_EQ(rx[0].imm_data, w.immed);
	EXPECT_EQ(rx[0].byte_len, len);
	EXPECT_EQ(rx[0].conn_handle, ba.conn_handle());
	std::vector<rv::Event> tx = a.events();
	ASSERT_EQ(tx.size(), 1u);
	EXPECT_EQ(tx[0].event_type, RV_WC_RDMA_WRITE);
	EXPECT_EQ(tx[0].status, 0);
	EXPECT_EQ(tx[0].wr_id, 0x5151u);
	EXPECT_EQ(tx[0].byte_len, len);
	EXPECT_EQ(tx[0].conn_handle, ab.conn_handle());

	// A wrong rkey: the send completes with an error status
	// (IB_WC_REM_ACCESS_ERR), nothing arrives.
	w.rkey = dmr.rkey() + 100;
	w.wr_id = 2;
	ab.post_write(w);
	EXPECT_TRUE(b.events().empty());
	tx = a.events();
	ASSERT_EQ(tx.size(), 1u);
	EXPECT_EQ(tx[0].status, 10);
	EXPECT_EQ(tx[0].wr_id, 2u);

	// Statistics.
	const rv::ConnStats s = ab.stats();
	EXPECT_EQ(s.index, RV_CONN_STATS_AGGREGATE);
	EXPECT_EQ(s.num_conn, 4u);
	EXPECT_EQ(s.post_write, 2u);
	EXPECT_EQ(s.post_write_bytes, 2u * len);
	EXPECT_EQ(s.send_write_cqe, 1u);
	EXPECT_EQ(s.send_write_cqe_fail, 1u);
	EXPECT_TRUE(s.flags & RV_CONN_STAT_FLAG_WAS_CONNECTED);
	const rv::ConnStats q0 = ab.stats(0);
	EXPECT_EQ(q0.num_conn, 1u);
	EXPECT_EQ(q0.index, 0);
	const rv::ConnStats all = rv::Connection::all_stats(a.dev);
	EXPECT_EQ(all.post_write, 2u);
	const rv::ConnStats brx = ba.stats();
	EXPECT_EQ(brx.recv_write_cqe, 1u);
	EXPECT_EQ(brx.recv_write_bytes, len);
	const rv::EventStats es = b.dev.event_stats();
	EXPECT_EQ(es.recv_write_cqe, 1u);
	EXPECT_EQ(es.recv_write_bytes, len);
}

#ifndef FAKE_RV_IOCTL_PATH
#error "FAKE_RV_IOCTL_PATH must name the built LD_PRELOAD shim"
#endif

int main(int argc, char **argv)
{
	if (!std::getenv("RV_FAKE_MODULE")) {
		// The fake module's environment, then the same program again
		// with the shim preloaded.
		::setenv("LD_PRELOAD", FAKE_RV_IOCTL_PATH, 1);
		::setenv("RV_FAKE_MAJOR", "1", 1);
		::setenv("RV_FAKE_MINOR", "7", 1);
		::setenv("RV_FAKE_CAPS", "2", 1);
		::setenv("RV_FAKE_MODULE", "1", 1);
		::setenv("RV_NODES", "fake0 fake1", 1);
		::setenv("RV_NODE_IPS", "10.0.0.1 10.0.0.2", 1);
		::setenv("RV_NODE_GID_INDEXES", "3 3", 1);
		::setenv("RV_FAKE_POST_BUSY_EVERY", "50", 1);
		::execv("/proc/self/exe", argv);
		std::perror("execv /proc/self/exe");
		return 127;
	}
	testing::InitGoogleTest(&argc, argv);
	return RUN_ALL_TESTS();
}

#endif // RV_TEST_FAKE_MODULE
