// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvinfo's output formats on the host: an LD_PRELOAD shim
// (support/fake_rv_ioctl.cpp) answers the capability ioctls on /dev/null.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include <rv/version.hpp>

#include "support/json_value.hpp"
#include "support/subprocess.hpp"

#ifndef RVINFO_PATH
#error "RVINFO_PATH must name the built rvinfo binary"
#endif
#ifndef FAKE_RV_IOCTL_PATH
#error "FAKE_RV_IOCTL_PATH must name the built LD_PRELOAD shim"
#endif

using ::testing::HasSubstr;
using rv::test::JsonValue;
using rv::test::ProcessResult;

namespace {

const std::string header = rv::Version::header().to_string();

ProcessResult fake_rvinfo(std::vector<std::string> args, unsigned major,
			  unsigned minor, const std::string &caps,
			  std::vector<std::string> env = {})
{
	args.insert(args.begin(), RVINFO_PATH);
	env.push_back(std::string("LD_PRELOAD=") + FAKE_RV_IOCTL_PATH);
	env.push_back("RV_FAKE_MAJOR=" + std::to_string(major));
	env.push_back("RV_FAKE_MINOR=" + std::to_string(minor));
	env.push_back("RV_FAKE_CAPS=" + caps);
	return rv::test::run_process(args, env);
}

} // namespace

TEST(RvInfoFake, Human)
{
	ProcessResult r = fake_rvinfo({"-d", "/dev/null"}, 1, 7, "2");

	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.err, "");
	EXPECT_EQ(r.out, "rv ABI 1.7 (header " + header + ")\n"
			 "capabilities: 0x0000000000000002 (evict)\n");
}

TEST(RvInfoFake, HumanNoAndUnknownCapabilities)
{
	ProcessResult r = fake_rvinfo({"-d", "/dev/null"}, 1, 8, "0");
	EXPECT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.out, "rv ABI 1.8 (header " + header + ")\n"
			 "capabilities: 0x0000000000000000 (none)\n");

	r = fake_rvinfo({"-d", "/dev/null"}, 1, 7, "0x8000000000000016");
	EXPECT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.out, "rv ABI 1.7 (header " + header + ")\n"
			 "capabilities: 0x8000000000000016 "
			 "(evict, 0x4, 0x10, 0x8000000000000000)\n");
}

TEST(RvInfoFake, Json)
{
	ProcessResult r = fake_rvinfo({"--json", "--device", "/dev/null"}, 1, 7,
				      "2");

	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.err, "");
	auto h = rv::Version::header();
	EXPECT_EQ(r.out,
		  R"({"device":"/dev/null","abi":{"major":1,"minor":7},)"
		  R"("header_abi":{"major":)" + std::to_string(h.major) +
		  R"(,"minor":)" + std::to_string(h.minor) + "},"
		  R"("capability":2,"capabilities":["evict"]})" "\n");
}

TEST(RvInfoFake, JsonAllBits)
{
	ProcessResult r = fake_rvinfo({"-j", "-d", "/dev/null"}, 1, 7,
				      "0xffffffffffffffff");

	ASSERT_EQ(r.exit_code, 0) << r.err;
	JsonValue v = JsonValue::parse(r.out);
	EXPECT_EQ(v.at("capability").as_uint(), ~std::uint64_t{0});
	ASSERT_EQ(v.at("capabilities").size(), 64u);
	EXPECT_EQ(v.at("capabilities").at(0).as_string(), "user_mr");
	EXPECT_EQ(v.at("capabilities").at(1).as_string(), "evict");
	EXPECT_EQ(v.at("capabilities").at(63).as_string(),
		  "0x8000000000000000");
}

TEST(RvInfoFake, JsonEscapesDevicePath)
{
	// A device path that needs escaping: a symlink to /dev/null.
	auto dir = std::filesystem::temp_directory_path() /
		   ("rvinfo-test-" + std::to_string(::getpid()));
	std::filesystem::create_directories(dir);
	auto link = dir / "rv \"quoted\"\\\t\xff";
	std::filesystem::create_symlink("/dev/null", link);

	ProcessResult r = fake_rvinfo({"--json", "--device", link.string()}, 1,
				      7, "2");
	std::filesystem::remove_all(dir);

	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_THAT(r.out, HasSubstr(R"(rv \"quoted\"\\\t\ufffd")"));
	JsonValue v = JsonValue::parse(r.out);
	EXPECT_EQ(v.at("device").as_string(),
		  (dir / "rv \"quoted\"\\\t\xef\xbf\xbd").string());
}

TEST(RvInfoFake, QueryR2)
{
	ProcessResult r = fake_rvinfo({"--query-r2", "-d", "/dev/null"}, 1, 7,
				      "2");
	EXPECT_EQ(r.exit_code, 0) << r.err;
	EXPECT_THAT(r.out, HasSubstr("rv ABI 1.7"));

	// The shim fails only CAPABILITY on a bad declaration; make both
	// fail through RV_FAKE_ERRNO and check the named ioctl.
	r = fake_rvinfo({"--query-r2", "-d", "/dev/null"}, 1, 7, "2",
			{"RV_FAKE_ERRNO=5"});
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_EQ(r.err, "rvinfo: /dev/null: RV_IOCTL_QUERY_R2: "
			 "Input/output error\n");
	EXPECT_EQ(r.out, "");
}

TEST(RvInfoFake, MajorMismatchWarns)
{
	ProcessResult r = fake_rvinfo({"-d", "/dev/null"}, 2, 0, "0");

	EXPECT_EQ(r.exit_code, 0);
	EXPECT_THAT(r.out, HasSubstr("rv ABI 2.0"));
	EXPECT_THAT(r.err, HasSubstr("warning"));
}
