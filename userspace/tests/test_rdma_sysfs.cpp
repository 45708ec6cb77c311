// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::RdmaSysfs (the toolkit's) and rv::GidTable (librv's) over a fake
// /sys/class/infiniband tree.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <unistd.h>

#include <rv/attach.hpp>
#include <rv/roce_gid.hpp>

#include <toolkit/rdma_sysfs.hpp>

namespace fs = std::filesystem;

namespace {

class FakeSysfs : public testing::Test {
protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/rv-sysfs-XXXXXX";
		ASSERT_NE(::mkdtemp(tmpl), nullptr);
		root_ = tmpl;
	}
	void TearDown() override { fs::remove_all(root_); }

	void write(const fs::path &rel, const std::string &text)
	{
		fs::create_directories((root_ / rel).parent_path());
		std::ofstream(root_ / rel) << text;
	}

	// A GID entry; type empty: an unused entry (its type file is
	// missing, as reading it fails in sysfs).
	void gid(const std::string &dev, unsigned idx, const std::string &g,
		 const std::string &type, const std::string &ndev = "")
	{
		fs::path port = fs::path(dev) / "ports" / "1";
		write(port / "gids" / std::to_string(idx), g + "\n");
		if (!type.empty())
			write(port / "gid_attrs" / "types" / std::to_string(idx),
			      type + "\n");
		if (!ndev.empty())
			write(port / "gid_attrs" / "ndevs" / std::to_string(idx),
			      ndev + "\n");
	}

	fs::path root_;
};

constexpr const char *zero = "0000:0000:0000:0000:0000:0000:0000:0000";

} // namespace

TEST_F(FakeSysfs, FindsTheRoceV2Ipv4Gid)
{
	gid("rxe0", 0, "fe80:0000:0000:0000:0250:56ff:fe9a:0001", "IB/RoCE v1", "va");
	gid("rxe0", 1, "fe80:0000:0000:0000:0250:56ff:fe9a:0001", "RoCE v2", "va");
	gid("rxe0", 2, "0000:0000:0000:0000:0000:ffff:0a4d:0101", "IB/RoCE v1", "va");
	gid("rxe0", 3, "0000:0000:0000:0000:0000:ffff:0a4d:0101", "RoCE v2", "va");
	gid("rxe0", 4, zero, "");
	gid("rxe0", 5, "0000:0000:0000:0000:0000:ffff:0a4d:0105", "RoCE v2");
	write("rxe0/ports/1/state", "4: ACTIVE\n");
	gid("mlx0", 0, zero, "");
	write("mlx0/ports/1/state", "1: DOWN\n");

	rv::RdmaSysfs s(root_);
	EXPECT_EQ(s.devices(), (std::vector<std::string>{"mlx0", "rxe0"}));
	EXPECT_EQ(s.port_count("rxe0"), 1u);
	EXPECT_EQ(s.port_count("nope"), 0u);
	EXPECT_EQ(s.gid_table_len("rxe0", 1), 6u);
	EXPECT_TRUE(s.port_state("rxe0", 1).active());
	EXPECT_EQ(s.port_state("rxe0", 1).text, "4: ACTIVE");
	EXPECT_FALSE(s.port_state("mlx0", 1).active());
	EXPECT_EQ(s.port_state("mlx0", 1).code, 1);
	EXPECT_EQ(s.gid_type("rxe0", 1, 3), "RoCE v2");
	EXPECT_FALSE(s.gid_type("rxe0", 1, 4));

	auto all = s.roce_v2_ipv4_gids("rxe0", 1);
	ASSERT_EQ(all.size(), 2u);
	EXPECT_EQ(all[0].index, 3);
	EXPECT_EQ(all[0].ipv4, 0x0a4d0101u);
	EXPECT_EQ(all[0].netdev, "va");
	EXPECT_EQ(all[1].index, 5);
	EXPECT_EQ(all[1].netdev, "");

	rv::RoceGid g = s.find_roce_v2_ipv4_gid("rxe0", 1);
	EXPECT_EQ(g.index, 3);
	EXPECT_EQ(g.gid, rv::ipv4_mapped_gid(0x0a4d0101));
	EXPECT_EQ(s.find_roce_v2_ipv4_gid("rxe0", 1, 0x0a4d0105).index, 5);

	try {
		(void)s.find_roce_v2_ipv4_gid("rxe0", 1, 0x0a4d0109);
		ADD_FAILURE() << "found a GID for 10.77.1.9";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), ENOENT);
		EXPECT_NE(std::string(e.what()).find("10.77.1.9"), std::string::npos);
	}
	EXPECT_THROW((void)s.find_roce_v2_ipv4_gid("mlx0", 1), std::system_error);

	// librv's own GidTable, which RdmaSysfs hands these to, and
	// AttachParams::for_roce(), which uses it.
	const rv::GidTable t("rxe0", 1, root_);
	EXPECT_EQ(t.size(), 6u);
	EXPECT_EQ(t.find_roce_v2_ipv4(0x0a4d0105).index, 5);
	rv::AttachParams p = rv::AttachParams::for_roce("rxe0", 1, {}, root_);
	EXPECT_EQ(p.dev_name, "rxe0");
	EXPECT_EQ(p.loc_gid_index, 3);
	EXPECT_EQ(p.loc_gid, rv::ipv4_mapped_gid(0x0a4d0101));
	EXPECT_EQ(p.loc_addr, 0x0a4d0101u);

	try {
		(void)s.port_state("nope", 1);
		ADD_FAILURE();
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), ENOENT);
	}
}

// The hint is read first: it wins over an earlier entry with the same
// address (another netdev's), and a stale or absent one falls back to
// the whole table.
TEST_F(FakeSysfs, FindTriesTheHintFirst)
{
	gid("rxe0", 0, zero, "");
	gid("rxe0", 1, "0000:0000:0000:0000:0000:ffff:0a4d:0101", "RoCE v2", "va");
	gid("rxe0", 2, "0000:0000:0000:0000:0000:ffff:0a4d:0101", "IB/RoCE v1", "vb");
	gid("rxe0", 3, "0000:0000:0000:0000:0000:ffff:0a4d:0101", "RoCE v2", "vb");
	gid("rxe0", 4, zero, "");
	gid("rxe0", 5, "0000:0000:0000:0000:0000:ffff:0a4d:0105", "RoCE v2");
	const rv::GidTable t("rxe0", 1, root_);

	EXPECT_EQ(t.find_roce_v2_ipv4(0x0a4d0101).index, 1);
	rv::RoceGid g = t.find_roce_v2_ipv4(0x0a4d0101, 3);
	EXPECT_EQ(g.index, 3);
	EXPECT_EQ(g.netdev, "vb");
	EXPECT_EQ(g.gid, rv::ipv4_mapped_gid(0x0a4d0101));
	// No address asked for: the hint's entry, if it is RoCE v2 IPv4.
	EXPECT_EQ(t.find_roce_v2_ipv4({}, 5).index, 5);
	// Stale hints: another address, RoCE v1, unused, past the table.
	EXPECT_EQ(t.find_roce_v2_ipv4(0x0a4d0101, 5).index, 1);
	EXPECT_EQ(t.find_roce_v2_ipv4(0x0a4d0101, 2).index, 1);
	EXPECT_EQ(t.find_roce_v2_ipv4(0x0a4d0101, 4).index, 1);
	EXPECT_EQ(t.find_roce_v2_ipv4(0x0a4d0105, 99).index, 5);
	EXPECT_EQ(t.find_roce_v2_ipv4(0x0a4d0105, 0x10000).index, 5);
	EXPECT_FALSE(t.roce_v2_ipv4_at(2));
	EXPECT_FALSE(t.roce_v2_ipv4_at(0x10000));
	try {
		(void)t.find_roce_v2_ipv4(0x0a4d0109, 3);
		ADD_FAILURE() << "found a GID for 10.77.1.9";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), ENOENT);
	}
	rv::RdmaSysfs s(root_);
	EXPECT_EQ(s.find_roce_v2_ipv4_gid("rxe0", 1, 0x0a4d0101, 3).index, 3);
}

TEST_F(FakeSysfs, HwCounter)
{
	write("rxe0/ports/1/hw_counters/rcvd_pkts", "12345678901\n");
	write("rxe0/ports/1/hw_counters/sent_pkts", "garbage\n");
	write("rxe0/ports/1/hw_counters/lifespan", "10\n");
	rv::RdmaSysfs s(root_);

	EXPECT_EQ(s.hw_counter("rxe0", 1, "rcvd_pkts"), 12345678901u);
	EXPECT_EQ(s.hw_counter("rxe0", 1, "sent_pkts"), std::nullopt);
	EXPECT_EQ(s.hw_counter("rxe0", 1, "no_such"), std::nullopt);
	EXPECT_EQ(s.hw_counter("rxe0", 2, "rcvd_pkts"), std::nullopt);
	EXPECT_EQ(s.hw_counter("nodev", 1, "rcvd_pkts"), std::nullopt);
}

// A read waits out the core's cache lifespan first, so that it is fresh.
TEST_F(FakeSysfs, HwCounterWaitsOutTheLifespan)
{
	write("rxe0/ports/1/hw_counters/rcvd_pkts", "7\n");
	write("rxe0/ports/1/hw_counters/lifespan", "300\n");
	rv::RdmaSysfs s(root_);

	const auto t0 = std::chrono::steady_clock::now();
	EXPECT_EQ(s.hw_counter("rxe0", 1, "rcvd_pkts"), 7u);
	EXPECT_GE(std::chrono::steady_clock::now() - t0,
		  std::chrono::milliseconds(300));
}
