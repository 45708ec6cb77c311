// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvinfo against the real module.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <rv/capability.hpp>
#include <rv/device.hpp>

#include "../support/json_value.hpp"
#include "../support/subprocess.hpp"
#include "vm_env.hpp"

using ::testing::HasSubstr;
using rv::test::JsonValue;
using rv::test::ProcessResult;

namespace {

ProcessResult rvinfo(std::vector<std::string> args)
{
	args.insert(args.begin(), rv::test::rvinfo_path());
	args.push_back("--device");
	args.push_back(rv::test::device_path());
	return rv::test::run_process(args);
}

// Checks the --json object against what the library reports.
void check_json(const std::string &out)
{
	rv::Capability cap = rv::Device(rv::test::device_path()).capability();

	ASSERT_FALSE(out.empty());
	EXPECT_EQ(out.back(), '\n');
	EXPECT_EQ(out.find('\n'), out.size() - 1) << "not a single line";
	EXPECT_THAT(out, HasSubstr("\"minor\":7"));

	JsonValue v = JsonValue::parse(out);
	ASSERT_TRUE(v.is_object());
	EXPECT_EQ(v.at("device").as_string(), rv::test::device_path());
	EXPECT_EQ(v.at("abi").at("major").as_int(), 1);
	EXPECT_EQ(v.at("abi").at("minor").as_int(), 7);
	EXPECT_EQ(v.at("header_abi").at("major").as_int(), RV_ABI_VER_MAJOR);
	EXPECT_EQ(v.at("header_abi").at("minor").as_int(), RV_ABI_VER_MINOR);
	EXPECT_EQ(v.at("capability").as_uint(), cap.capability);
	EXPECT_EQ(v.at("capability").as_uint() & RV_CAP_USER_MR, 0u);

	std::vector<std::string> names;
	for (const auto &n : v.at("capabilities").as_array())
		names.push_back(n.as_string());
	EXPECT_EQ(names, rv::capability_names(cap.capability));
	EXPECT_EQ(v.size(), 5u) << out;
}

} // namespace

TEST(RvInfo, Json)
{
	ProcessResult r = rvinfo({"--json"});

	ASSERT_TRUE(r.exited) << "signal " << r.signal;
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.err, "");
	check_json(r.out);
}

TEST(RvInfo, JsonQueryR2)
{
	RV_OOT_FORM_OR_SKIP();	// Capability.QueryR2...: EINVAL there
	ProcessResult r = rvinfo({"--json", "--query-r2"});

	ASSERT_TRUE(r.exited) << "signal " << r.signal;
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.err, "");
	check_json(r.out);
}

TEST(RvInfo, Human)
{
	rv::Capability cap = rv::Device(rv::test::device_path()).capability();
	ProcessResult r = rvinfo({});

	ASSERT_TRUE(r.exited) << "signal " << r.signal;
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.err, "");

	char bits[19];
	std::snprintf(bits, sizeof(bits), "0x%016llx",
		      static_cast<unsigned long long>(cap.capability));
	EXPECT_EQ(r.out, "rv ABI 1.7 (header " +
				 rv::Version::header().to_string() +
				 ")\ncapabilities: " +
				 std::string(bits) + " (" +
				 rv::format_capabilities(cap.capability) +
				 ")\n");
}
