// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The TAP listener, through a sample program with known outcomes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/subprocess.hpp"

#ifndef TAP_SAMPLE_PATH
#error "TAP_SAMPLE_PATH must name the built tap_sample binary"
#endif

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

std::vector<std::string> lines(const std::string &s)
{
	std::vector<std::string> out;
	std::istringstream in(s);

	for (std::string line; std::getline(in, line);)
		out.push_back(line);
	return out;
}

} // namespace

TEST(Tap, ReportsEveryOutcome)
{
	auto r = rv::test::run_process({TAP_SAMPLE_PATH});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);	// one test failed

	auto l = lines(r.out);
	ASSERT_GE(l.size(), 5u) << r.out;
	EXPECT_EQ(l.front(), "1..4");
	EXPECT_EQ(l[1], "ok 1 - Sample.Passes");
	EXPECT_EQ(l[2], "not ok 2 - Sample.Fails");

	// Diagnostics of the failure, up to the next result.
	std::size_t i = 3;
	std::string diag;
	for (; i < l.size() && l[i].starts_with("#"); i++)
		diag += l[i] + "\n";
	EXPECT_THAT(diag, HasSubstr("tap_sample.cpp:"));
	EXPECT_THAT(diag, HasSubstr("# first marker\n"));
	EXPECT_THAT(diag, HasSubstr("# second marker\n# spanning two lines\n"));

	std::vector<std::string> rest(l.begin() + static_cast<long>(i), l.end());
	EXPECT_THAT(rest, ElementsAre("ok 3 - Sample.Skipped # SKIP not today",
				      "ok 4 - Other.AlsoPasses"));
	// Nothing but TAP on stdout.
	for (const auto &line : l)
		EXPECT_TRUE(line.starts_with("ok ") ||
			    line.starts_with("not ok ") ||
			    line.starts_with("#") || line.starts_with("1.."))
			<< line;
}

TEST(Tap, FilteredRunPasses)
{
	auto r = rv::test::run_process(
		{TAP_SAMPLE_PATH, "--gtest_filter=Sample.Passes:Other.*"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 0);
	EXPECT_EQ(r.out, "1..2\nok 1 - Sample.Passes\nok 2 - Other.AlsoPasses\n");
}

TEST(Tap, PrettyKeepsGoogleTestPrinter)
{
	auto r = rv::test::run_process(
		{TAP_SAMPLE_PATH, "--pretty", "--gtest_filter=Sample.Passes"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 0);
	EXPECT_THAT(r.out, HasSubstr("[  PASSED  ] 1 test"));
}
