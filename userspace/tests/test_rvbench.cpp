// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench's command line, on the host (no module: runs stop at the
// device).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "support/json_value.hpp"
#include "support/subprocess.hpp"

#ifndef RVBENCH_PATH
#error "RVBENCH_PATH must name the built rvbench binary"
#endif

using ::testing::HasSubstr;
using rv::test::JsonValue;
using rv::test::ProcessResult;

namespace {

ProcessResult rvbench(std::vector<std::string> args)
{
	args.insert(args.begin(), RVBENCH_PATH);
	return rv::test::run_process(args, {"RV_NODES=rv_test_nodev0"});
}

} // namespace

TEST(RvBench, Help)
{
	for (const char *h : {"--help", "-h", "help"}) {
		ProcessResult r = rvbench({h});
		ASSERT_TRUE(r.exited);
		EXPECT_EQ(r.exit_code, 0) << h;
		EXPECT_THAT(r.out, HasSubstr("Usage: rvbench COMMAND"));
		EXPECT_THAT(r.out, HasSubstr("  reg "));
		EXPECT_THAT(r.out, HasSubstr("--json"));
		EXPECT_EQ(r.err, "");
	}
}

TEST(RvBench, RegHelp)
{
	ProcessResult r = rvbench({"reg", "--help"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 0);
	for (const char *opt : {"--sizes", "--iters", "--miss-iters",
				"--miss-method", "--device", "--json",
				"--max-seconds", "4K,64K,1M,4M", "10000"})
		EXPECT_THAT(r.out, HasSubstr(opt));
}

TEST(RvBench, UsageErrorsExit2)
{
	const std::vector<std::vector<std::string>> bad = {
		{},
		{"nosuchcmd"},
		{"reg", "--sizes", "4X"},
		{"reg", "--sizes", ""},
		{"reg", "--iters", "0"},
		{"reg", "--iters", "ten"},
		{"reg", "--miss-iters", "-1"},
		{"reg", "--miss-method", "flush"},
		{"reg", "--max-seconds", "0"},
		{"reg", "--port", "0"},
		{"reg", "--cache-mb", "0"},
		{"reg", "--bogus"},
		{"reg", "-x"},
		{"reg", "--sizes"},
		{"reg", "extra"},
	};
	for (const auto &args : bad) {
		std::string line;
		for (const auto &a : args)
			line += a + " ";
		SCOPED_TRACE(line);
		ProcessResult r = rvbench(args);
		ASSERT_TRUE(r.exited);
		EXPECT_EQ(r.exit_code, 2);
		EXPECT_THAT(r.err, HasSubstr("Try 'rvbench --help'"));
		EXPECT_EQ(r.out, "");
	}
}

TEST(RvBench, NoDeviceExit1)
{
	// RV_NODES names a device that does not exist.
	ProcessResult r = rvbench({"reg", "--iters", "10"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_THAT(r.err, HasSubstr("rv_test_nodev0"));
	EXPECT_EQ(r.out, "");
}

#ifdef FAKE_RV_IOCTL_PATH
namespace {

// rvbench reg against the fake module (tests/support/fake_rv_module.cpp)
// and a fake sysfs tree naming one RoCE device, fake0, with the GID
// ::ffff:10.0.0.1 at index 3. Checks the loops and their verification
// through the cache statistics, not any timing.
class RvBenchFake : public testing::Test {
protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/rvbench-sysfs-XXXXXX";
		ASSERT_NE(::mkdtemp(tmpl), nullptr);
		root_ = tmpl;
		auto port = root_ / "fake0" / "ports" / "1";
		std::filesystem::create_directories(port / "gids");
		std::filesystem::create_directories(port / "gid_attrs" / "types");
		for (int i = 0; i < 4; i++)
			std::ofstream(port / "gids" / std::to_string(i))
				<< (i == 3 ? "0000:0000:0000:0000:0000:ffff:0a00:0001\n"
					   : "0000:0000:0000:0000:0000:0000:0000:0000\n");
		std::ofstream(port / "gid_attrs" / "types" / "3") << "RoCE v2\n";
	}
	void TearDown() override { std::filesystem::remove_all(root_); }

	ProcessResult run(std::vector<std::string> args)
	{
		args.insert(args.begin(), {RVBENCH_PATH, "reg", "--rv", "/dev/null",
					   "--sysfs", root_.string(), "--no-ibv"});
		return rv::test::run_process(
			args, {std::string("LD_PRELOAD=") + FAKE_RV_IOCTL_PATH,
			       "RV_FAKE_MAJOR=1", "RV_FAKE_MINOR=7", "RV_FAKE_CAPS=2",
			       "RV_FAKE_MODULE=1", "RV_NODES=fake0",
			       "RV_NODE_IPS=10.0.0.1", "RV_NODE_GID_INDEXES=3"});
	}

	std::filesystem::path root_;
};

} // namespace

TEST_F(RvBenchFake, JsonEvictMethod)
{
	ProcessResult r = run({"--json", "--sizes", "4K,1M", "--iters", "300",
			       "--miss-iters", "40", "--warmup", "5"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	JsonValue v = JsonValue::parse(r.out);
	EXPECT_EQ(v.at("command").as_string(), "reg");
	EXPECT_EQ(v.at("device").as_string(), "fake0");
	EXPECT_EQ(v.at("miss_method").as_string(), "evict_exact");
	EXPECT_EQ(v.at("iters").as_uint(), 300u);
	EXPECT_EQ(v.at("miss_iters").as_uint(), 40u);
	EXPECT_EQ(v.at("attach").at("mr_cache_size_mb").as_uint(), 256u);
	const auto &res = v.at("results").as_array();
	ASSERT_EQ(res.size(), 2u);
	EXPECT_EQ(res[0].at("size").as_uint(), 4096u);
	EXPECT_EQ(res[1].at("size").as_uint(), 1u << 20);
	for (const auto &s : res) {
		EXPECT_EQ(s.at("hit").at("calls").as_uint(), 300u);
		EXPECT_EQ(s.at("miss").at("calls").as_uint(), 40u);
		EXPECT_LE(s.at("hit").at("median_ns").as_uint(),
			  s.at("hit").at("p99_ns").as_uint());
		EXPECT_TRUE(s.at("hit_miss_ratio").is_number());
		EXPECT_EQ(s.find("ibv_reg_mr"), nullptr);
	}
	// Per size: 5 + 300 hits; 1 (caching the hit buffer) + 5 + 40 misses.
	EXPECT_EQ(v.at("cache_stats").at("hit").as_uint(), 2u * 305);
	EXPECT_EQ(v.at("cache_stats").at("miss").as_uint(), 2u * (1 + 45));
}

TEST_F(RvBenchFake, TableRemapMethodAndSkippedSize)
{
	ProcessResult r = run({"--sizes", "4K,8M", "--iters", "50",
			       "--miss-method", "remap", "--cache-mb", "4"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_THAT(r.out, HasSubstr("rvbench reg: fake0 port 1"));
	EXPECT_THAT(r.out, HasSubstr("munmap + mmap MAP_FIXED"));
	EXPECT_THAT(r.out, HasSubstr("    4 KiB"));
	EXPECT_THAT(r.out, HasSubstr("8 MiB skipped: larger than max_fmr_size"));
	EXPECT_THAT(r.out, HasSubstr("50/50/-"));
}
#endif
