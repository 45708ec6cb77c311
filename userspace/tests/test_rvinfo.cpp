// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The rvinfo tool on the host: everything that works without the module.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <unistd.h>

#include "support/subprocess.hpp"

#ifndef RVINFO_PATH
#error "RVINFO_PATH must name the built rvinfo binary"
#endif

using ::testing::HasSubstr;
using ::testing::StartsWith;
using rv::test::ProcessResult;
using rv::test::run_process;

namespace {

ProcessResult rvinfo(std::vector<std::string> args)
{
	args.insert(args.begin(), RVINFO_PATH);
	return run_process(args);
}

const std::string missing = "/nonexistent-rv-test/rv";

} // namespace

TEST(RvInfo, Help)
{
	for (const char *opt : {"--help", "-h"}) {
		SCOPED_TRACE(opt);
		ProcessResult r = rvinfo({opt});
		ASSERT_TRUE(r.exited);
		EXPECT_EQ(r.exit_code, 0);
		EXPECT_THAT(r.out, StartsWith("Usage: rvinfo"));
		EXPECT_THAT(r.out, HasSubstr("--device"));
		EXPECT_THAT(r.out, HasSubstr("--json"));
		EXPECT_THAT(r.out, HasSubstr("--query-r2"));
		EXPECT_EQ(r.err, "");
	}
}

TEST(RvInfo, MissingDeviceExits1)
{
	ProcessResult r = rvinfo({"--device", missing});

	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_EQ(r.out, "");
	EXPECT_EQ(r.err, "rvinfo: " + missing +
			 ": No such file or directory (is the rv module loaded?)\n");
}

TEST(RvInfo, MissingDeviceJsonExits1)
{
	ProcessResult r = rvinfo({"--json", "-d", missing});

	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_EQ(r.out, "");	// no partial JSON
	EXPECT_THAT(r.err, HasSubstr("No such file or directory"));
}

TEST(RvInfo, DefaultDeviceIsDevRv)
{
	if (::access("/dev/rv", F_OK) == 0)
		GTEST_SKIP() << "/dev/rv exists on this host";
	ProcessResult r = rvinfo({});

	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_THAT(r.err, StartsWith("rvinfo: /dev/rv: "));
}

TEST(RvInfo, NotAnRvDevice)
{
	ProcessResult r = rvinfo({"--device=/dev/null"});

	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_EQ(r.out, "");
	EXPECT_EQ(r.err, "rvinfo: /dev/null: RV_IOCTL_CAPABILITY: Inappropriate "
			 "ioctl for device (is /dev/null the rv device?)\n");

	r = rvinfo({"--query-r2", "--device", "/dev/null"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_THAT(r.err, HasSubstr("RV_IOCTL_QUERY_R2: Inappropriate ioctl"));
}

TEST(RvInfo, UsageErrorsExit2)
{
	for (const auto &args : std::vector<std::vector<std::string>>{
		     {"--bogus"}, {"-x"}, {"--device"}, {"extra"},
		     {"--device", ""}}) {
		SCOPED_TRACE(::testing::PrintToString(args));
		ProcessResult r = rvinfo(args);
		ASSERT_TRUE(r.exited);
		EXPECT_EQ(r.exit_code, 2);
		EXPECT_EQ(r.out, "");
		EXPECT_THAT(r.err, StartsWith("rvinfo: "));
		EXPECT_THAT(r.err, HasSubstr("--help"));
	}
}

TEST(RvInfo, HelpWriteErrorExits1)
{
	if (::access("/dev/full", W_OK) != 0)
		GTEST_SKIP() << "no /dev/full";
	// run_process has no redirection; use a shell for this one.
	ProcessResult r = run_process(
		{"/bin/sh", "-c", std::string("exec '") + RVINFO_PATH +
					  "' --help >/dev/full"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
}
