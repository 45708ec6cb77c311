// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <rv/capability.hpp>
#include <rv/device.hpp>

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(CapabilityNames, KnownBits)
{
	EXPECT_EQ(rv::capability_bit_name(0), "user_mr");
	EXPECT_EQ(rv::capability_bit_name(1), "evict");
	EXPECT_THAT(rv::capability_names(RV_CAP_USER_MR), ElementsAre("user_mr"));
	EXPECT_THAT(rv::capability_names(RV_CAP_EVICT), ElementsAre("evict"));
	EXPECT_THAT(rv::capability_names(RV_CAP_USER_MR | RV_CAP_EVICT),
		    ElementsAre("user_mr", "evict"));
}

TEST(CapabilityNames, UnknownBitsInHex)
{
	EXPECT_EQ(rv::capability_bit_name(2), "0x4");
	EXPECT_EQ(rv::capability_bit_name(63), "0x8000000000000000");
	EXPECT_THAT(rv::capability_names(0x16),
		    ElementsAre("evict", "0x4", "0x10"));
	EXPECT_THAT(rv::capability_names(std::uint64_t{1} << 40),
		    ElementsAre("0x10000000000"));
	EXPECT_EQ(rv::capability_names(~std::uint64_t{0}).size(), 64u);
}

TEST(CapabilityNames, NoBits)
{
	EXPECT_THAT(rv::capability_names(0), IsEmpty());
	EXPECT_EQ(rv::capability_bit_name(64), "");
}

TEST(CapabilityNames, Format)
{
	EXPECT_EQ(rv::format_capabilities(0), "none");
	EXPECT_EQ(rv::format_capabilities(RV_CAP_EVICT), "evict");
	EXPECT_EQ(rv::format_capabilities(RV_CAP_EVICT | RV_CAP_USER_MR | 8),
		  "user_mr, evict, 0x8");
}

TEST(CapabilityStruct, Has)
{
	rv::Capability c{rv::Version{1, 7}, RV_CAP_EVICT};

	EXPECT_TRUE(c.has(RV_CAP_EVICT));
	EXPECT_FALSE(c.has(RV_CAP_USER_MR));
	EXPECT_FALSE(c.has(RV_CAP_EVICT | RV_CAP_USER_MR));
	EXPECT_TRUE(c.has(0));
	EXPECT_EQ(c, (rv::Capability{rv::Version{1, 7}, RV_CAP_EVICT}));
	EXPECT_NE(c, (rv::Capability{rv::Version{1, 6}, RV_CAP_EVICT}));
}
