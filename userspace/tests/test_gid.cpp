// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// librv's GID and IPv4 helpers (rv/gid.hpp): the text forms and the
// IPv4-mapped GIDs of RoCE v2.
#include <gtest/gtest.h>

#include <rv/gid.hpp>

TEST(Gid, HexDigit)
{
	EXPECT_EQ(rv::hex_digit('0'), 0);
	EXPECT_EQ(rv::hex_digit('9'), 9);
	EXPECT_EQ(rv::hex_digit('a'), 10);
	EXPECT_EQ(rv::hex_digit('F'), 15);
	for (char bad : {'g', 'G', '/', ':', '@', '`', ' ', '\0'})
		EXPECT_EQ(rv::hex_digit(bad), -1) << static_cast<int>(bad);
}

TEST(Gid, ParseAndFormat)
{
	auto g = rv::parse_gid("fe80:0000:0000:0000:0250:56ff:FE9a:0001");
	ASSERT_TRUE(g);
	EXPECT_EQ((*g)[0], 0xfe);
	EXPECT_EQ((*g)[1], 0x80);
	EXPECT_EQ((*g)[12], 0xfe);
	EXPECT_EQ((*g)[13], 0x9a);
	EXPECT_EQ((*g)[15], 0x01);
	EXPECT_EQ(rv::format_gid(*g), "fe80:0000:0000:0000:0250:56ff:fe9a:0001");

	for (const char *bad : {"", "fe80::1", "fe80:0000:0000:0000:0250:56ff:fe9a",
				"fe80:0000:0000:0000:0250:56ff:fe9a:00011",
				"fe80-0000:0000:0000:0250:56ff:fe9a:0001",
				"ge80:0000:0000:0000:0250:56ff:fe9a:0001"})
		EXPECT_FALSE(rv::parse_gid(bad)) << bad;
}

TEST(Gid, Ipv4Mapped)
{
	rv::Gid g = rv::ipv4_mapped_gid(0x0a4d0102);
	EXPECT_TRUE(rv::is_ipv4_mapped(g));
	EXPECT_EQ(rv::format_gid(g), "0000:0000:0000:0000:0000:ffff:0a4d:0102");
	EXPECT_EQ(rv::gid_ipv4(g), 0x0a4d0102u);
	EXPECT_FALSE(rv::is_ipv4_mapped(*rv::parse_gid("0000:0000:0000:0000:0000:0000:0000:0000")));
	EXPECT_FALSE(rv::is_ipv4_mapped(
		*rv::parse_gid("fe80:0000:0000:0000:0000:ffff:0a4d:0102")));
}

TEST(Ipv4, ParseAndFormat)
{
	EXPECT_EQ(rv::parse_ipv4("10.77.1.2"), 0x0a4d0102u);
	EXPECT_EQ(rv::parse_ipv4("0.0.0.0"), 0u);
	EXPECT_EQ(rv::parse_ipv4("255.255.255.255"), 0xffffffffu);
	for (const char *bad : {"", "10.77.1", "10.77.1.2.3", "256.1.1.1",
				"10.77.01.2", "10.77.1.2 ", "a.b.c.d", "10..1.2"})
		EXPECT_FALSE(rv::parse_ipv4(bad)) << bad;
	EXPECT_EQ(rv::format_ipv4(0x0a4d0102), "10.77.1.2");
}
