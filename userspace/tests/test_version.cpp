// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <gtest/gtest.h>

#include <rv/version.hpp>

#include <sstream>

using rv::Version;

TEST(Version, HeaderIsCurrentAbi)
{
	EXPECT_EQ(Version::header().major, RV_ABI_VER_MAJOR);
	EXPECT_EQ(Version::header().minor, RV_ABI_VER_MINOR);
	EXPECT_EQ(Version::header().packed(),
		  static_cast<std::uint32_t>(RV_ABI_VERSION_CURRENT));
	EXPECT_EQ(Version::header(), (Version{1, 7}));
}

TEST(Version, ToString)
{
	EXPECT_EQ((Version{1, 7}).to_string(), "1.7");
	EXPECT_EQ((Version{0, 0}).to_string(), "0.0");
	EXPECT_EQ((Version{1, 10}).to_string(), "1.10");
	EXPECT_EQ(to_string(Version{65535, 65535}), "65535.65535");

	std::ostringstream os;
	os << Version{1, 2};
	EXPECT_EQ(os.str(), "1.2");
}

TEST(Version, ParseValid)
{
	EXPECT_EQ(Version::parse("1.7"), (Version{1, 7}));
	EXPECT_EQ(Version::parse("0.0"), (Version{0, 0}));
	EXPECT_EQ(Version::parse("1.10"), (Version{1, 10}));
	EXPECT_EQ(Version::parse("65535.65535"), (Version{65535, 65535}));
	EXPECT_EQ(Version::parse("10.0"), (Version{10, 0}));
}

TEST(Version, ParseInvalid)
{
	for (const char *bad : {"", "1", "1.", ".7", ".", "1.7.0", "01.7",
				"1.07", "+1.7", "-1.7", "1.-7", " 1.7", "1.7 ",
				"1 .7", "65536.0", "0.65536", "1,7", "a.b",
				"1.7x", "0x1.7", "99999999999999999999.1",
				"1..7"}) {
		SCOPED_TRACE(bad);
		EXPECT_FALSE(Version::parse(bad).has_value());
	}
	// An embedded NUL is not the end of the text.
	EXPECT_FALSE(Version::parse(std::string_view("1.7\0", 4)));
}

TEST(Version, Compare)
{
	EXPECT_LT((Version{1, 6}), (Version{1, 7}));
	EXPECT_LT((Version{1, 9}), (Version{1, 10}));	// numeric, not text
	EXPECT_LT((Version{1, 65535}), (Version{2, 0}));
	EXPECT_GT((Version{2, 0}), (Version{1, 7}));
	EXPECT_EQ((Version{1, 7}), (Version{1, 7}));
	EXPECT_NE((Version{1, 7}), (Version{7, 1}));
	EXPECT_LE((Version{1, 7}), (Version{1, 7}));
	EXPECT_GE((Version{1, 7}), (Version{1, 2}));
}

TEST(Version, Packed)
{
	EXPECT_EQ((Version{1, 2}).packed(),
		  static_cast<std::uint32_t>(RV_ABI_VERSION(1, 2)));
	EXPECT_EQ((Version{0xffff, 0xffff}).packed(), 0xffffffffu);
	EXPECT_EQ(Version::from_packed(RV_ABI_VERSION(1, 6)), (Version{1, 6}));
	// Ordering of packed values agrees with Version ordering.
	EXPECT_LT((Version{1, 65535}).packed(), (Version{2, 0}).packed());
}

TEST(Version, RoundTrip)
{
	for (Version v : {Version{0, 0}, Version{1, 2}, Version{1, 7},
			  Version{12, 345}, Version{65535, 0}}) {
		SCOPED_TRACE(v.to_string());
		EXPECT_EQ(Version::parse(v.to_string()), v);
		EXPECT_EQ(Version::from_packed(v.packed()), v);
	}
}
