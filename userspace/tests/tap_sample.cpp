// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Known outcomes for checking the TAP listener (test_tap.cpp runs this
// program). Not a test of anything by itself.
#include <gtest/gtest.h>

TEST(Sample, Passes)
{
	EXPECT_EQ(1, 1);
}

TEST(Sample, Fails)
{
	EXPECT_EQ(1, 2) << "first marker";
	ADD_FAILURE() << "second marker\nspanning two lines";
}

TEST(Sample, Skipped)
{
	GTEST_SKIP() << "not today";
}

TEST(Sample, DISABLED_NotRun)
{
	FAIL();
}

TEST(Other, AlsoPasses)
{
	SUCCEED();
}
