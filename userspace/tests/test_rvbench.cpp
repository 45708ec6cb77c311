// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench on the host: its command line (no module: runs stop at the
// device), the pieces of bw/lat that need no device (the payload pattern,
// the out-of-band messages), and whole runs against the fake module
// (tests/support/fake_rv_module.cpp), whose two fake nodes talk only
// inside one process: bw and lat run with --loopback-threads there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "bench/oob.hpp"
#include "bench/pattern.hpp"
#include "support/json_value.hpp"
#include "support/subprocess.hpp"

#ifndef RVBENCH_PATH
#error "RVBENCH_PATH must name the built rvbench binary"
#endif

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;
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
		EXPECT_THAT(r.out, HasSubstr("  attach "));
		EXPECT_THAT(r.out, HasSubstr("  bw "));
		EXPECT_THAT(r.out, HasSubstr("  lat "));
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
				"--max-seconds", "4K,64K,1M,4M", "10000",
				"--progress[=S]", "--no-progress"})
		EXPECT_THAT(r.out, HasSubstr(opt));
}

TEST(RvBench, TransferHelp)
{
	ProcessResult r = rvbench({"bw", "--help"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 0);
	for (const char *opt : {"--listen", "--connect", "--loopback-nodes",
				"--loopback", "--loopback-threads", "--sizes",
				"--iters", "--bytes", "--window", "--buffer",
				"--timeout", "--job-key", "--num-conn", "--mtu",
				"--json", "--device", "4K,8K,...,4M", "10^6",
				"--progress[=S]", "--no-progress", "--no-verify",
				"ib_write_bw", "sequence", "--cache-mb", "max_fmr_size",
				"skipped"})
		EXPECT_THAT(r.out, HasSubstr(opt));
	EXPECT_THAT(r.out, Not(HasSubstr("--warmup")));

	r = rvbench({"lat", "-h"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 0);
	for (const char *opt : {"--listen", "--connect", "--loopback", "--warmup",
				"--iters", "default 8", "round-trip latency", "--cache-mb",
				"max_fmr_size"})
		EXPECT_THAT(r.out, HasSubstr(opt));
	EXPECT_THAT(r.out, Not(HasSubstr("--window")));
	EXPECT_THAT(r.out, Not(HasSubstr("--no-verify")));
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
		{"reg", "--progress=x"},
		{"reg", "--progress=-1"},
		{"reg", "--progress="},
		{"attach", "--threads", "0"},
		{"attach", "--threads", "65"},
		{"attach", "--iters", "0"},
		{"attach", "--same-job=1"},
		{"attach", "extra"},
		{"reg", "--no-progress=1"},
		{"bw"},
		{"bw", "--listen", "1", "--connect", "h:1"},
		{"bw", "--connect", "nohostport"},
		{"bw", "--connect", ":5"},
		{"bw", "--listen", "70000"},
		{"bw", "--loopback-nodes", "a"},
		{"bw", "--loopback-nodes", "a,a"},
		{"bw", "--loopback-nodes", "a,b,c"},
		{"bw", "--loopback-nodes", "a,b", "--device", "a"},
		{"bw", "--loopback"},			// RV_NODES has one device
		{"bw", "--connect", "h:1", "--loopback-threads"},
		{"bw", "--loopback-nodes", "a,b", "--window", "0"},
		{"bw", "--loopback-nodes", "a,b", "--window", "5000"},
		{"bw", "--loopback-nodes", "a,b", "--warmup", "5"},
		{"bw", "--loopback-nodes", "a,b", "--bytes", "0"},
		{"bw", "--loopback-nodes", "a,b", "--buffer", "4K"},
		{"bw", "--loopback-nodes", "a,b", "--mtu", "1500"},
		{"bw", "--loopback-nodes", "a,b", "--job-key", "abc"},
		{"bw", "--loopback-nodes", "a,b", "--timeout", "0"},
		{"bw", "--loopback-nodes", "a,b", "--num-conn", "17"},
		{"bw", "--loopback-nodes", "a,b", "--index-bits", "13"},
		{"bw", "--loopback-nodes", "a,b", "--cache-mb", "0"},
		{"lat", "--loopback-nodes", "a,b", "--cache-mb", "x"},
		{"bw", "--loopback-nodes", "a,b", "--sizes", "2G"},
		{"lat", "--loopback-nodes", "a,b", "--window", "4"},
		{"lat", "--loopback-nodes", "a,b", "--no-verify"},
		{"bw", "--loopback-nodes", "a,b", "--no-verify=1"},
		{"lat", "--loopback-nodes", "a,b", "--bytes", "1M"},
		{"lat", "--loopback-nodes", "a,b", "extra"},
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

TEST(RvBench, ConnectNobodyListensExit1)
{
	// A port nobody listens on: connect retries until --timeout.
	std::uint16_t port = 0;
	{
		rv::UniqueFd probe = rv::bench::oob::listen_tcp("127.0.0.1", 0, &port);
	}
	const auto t0 = std::chrono::steady_clock::now();
	ProcessResult r = rvbench({"bw", "--connect", "127.0.0.1:" + std::to_string(port),
				   "--timeout", "0.5"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_THAT(r.err, HasSubstr("connect 127.0.0.1:" + std::to_string(port)));
	EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

// The out-of-band protocol is versioned: a peer of another version is
// refused with a message that says so, on either side, before any device
// is opened.
TEST(RvBench, OtherProtocolVersionRefused)
{
	namespace oob = rv::bench::oob;
	const auto to = std::chrono::seconds(10);

	// A server of version 1 (one MR per buffer): the client refuses it
	// and tells it why.
	std::uint16_t port = 0;
	rv::UniqueFd l = oob::listen_tcp("127.0.0.1", 0, &port);
	std::string told;
	std::thread t([&] {
		oob::Socket s = oob::accept_one(l.get(), to);
		s.send(oob::Message{"HELLO", {}}
			       .set("proto", std::uint64_t{1})
			       .set("job_key", std::string(32, '0')));
		oob::Message m = s.recv(to);
		told = m.verb + ": " + (m.has("msg") ? m.get("msg") : "");
	});
	ProcessResult r = rvbench({"bw", "--connect", "127.0.0.1:" + std::to_string(port)});
	t.join();
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_THAT(r.err, HasSubstr("the server speaks protocol 1, this client 2"));
	EXPECT_THAT(told, HasSubstr("ERROR: out-of-band: the server speaks protocol 1"));

	// A client of version 1 (its INFO has no proto): the server refuses
	// it.
	{
		rv::UniqueFd probe = oob::listen_tcp("127.0.0.1", 0, &port);
	}
	ProcessResult server;
	std::thread st([&] {
		server = rvbench({"bw", "--listen", "127.0.0.1:" + std::to_string(port)});
	});
	std::string answer;
	try {
		oob::Socket c = oob::connect_tcp("127.0.0.1", port, to);
		EXPECT_EQ(c.expect("HELLO", to).get("proto"), "2");
		c.send(oob::Message{"INFO", {}}.set("mr_rkey", std::uint64_t{7}));
		oob::Message m = c.recv(to);
		answer = m.verb + ": " + (m.has("msg") ? m.get("msg") : "");
	} catch (const std::exception &e) {
		ADD_FAILURE() << e.what();
	}
	st.join();
	ASSERT_TRUE(server.exited);
	EXPECT_EQ(server.exit_code, 1);
	EXPECT_THAT(server.err, HasSubstr("the client speaks protocol 1, this server 2"));
	EXPECT_THAT(answer, HasSubstr("ERROR: out-of-band: the client speaks protocol 1"));
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
		for (int d = 0; d < 2; d++) {
			auto port = root_ / ("fake" + std::to_string(d)) / "ports" / "1";
			std::filesystem::create_directories(port / "gids");
			std::filesystem::create_directories(port / "gid_attrs" / "types");
			for (int i = 0; i < 4; i++)
				std::ofstream(port / "gids" / std::to_string(i))
					<< (i != 3 ? "0000:0000:0000:0000:0000:0000:0000:0000\n"
					    : d ? "0000:0000:0000:0000:0000:ffff:0a00:0002\n"
						: "0000:0000:0000:0000:0000:ffff:0a00:0001\n");
			std::ofstream(port / "gid_attrs" / "types" / "3") << "RoCE v2\n";
		}
	}
	void TearDown() override { std::filesystem::remove_all(root_); }

	// rvbench reg --no-ibv ARGS on fake0.
	ProcessResult run(std::vector<std::string> args)
	{
		args.insert(args.begin(), {"reg", "--no-ibv"});
		return command(std::move(args));
	}

	// rvbench COMMAND ARGS (args[0] the command) on fake0.
	ProcessResult command(std::vector<std::string> args)
	{
		args.insert(args.begin() + 1, {"--rv", "/dev/null", "--sysfs",
					       root_.string()});
		args.insert(args.begin(), RVBENCH_PATH);
		return rv::test::run_process(
			args, {std::string("LD_PRELOAD=") + FAKE_RV_IOCTL_PATH,
			       "RV_FAKE_MAJOR=1", "RV_FAKE_MINOR=7", "RV_FAKE_CAPS=2",
			       "RV_FAKE_MODULE=1", "RV_NODES=fake0",
			       "RV_NODE_IPS=10.0.0.1", "RV_NODE_GID_INDEXES=3"});
	}

	// rvbench bw/lat ARGS on fake0 (client) and fake1 (server).
	ProcessResult transfer(std::vector<std::string> args,
			       std::vector<std::string> env = {})
	{
		args.insert(args.begin() + 1, {"--rv", "/dev/null", "--sysfs",
					       root_.string(), "--mtu", "1024"});
		args.insert(args.begin(), RVBENCH_PATH);
		for (const char *e : {"RV_FAKE_MAJOR=1", "RV_FAKE_MINOR=7",
				      "RV_FAKE_CAPS=2", "RV_FAKE_MODULE=1",
				      "RV_NODES=fake0 fake1",
				      "RV_NODE_IPS=10.0.0.1 10.0.0.2",
				      "RV_NODE_GID_INDEXES=3 3"})
			env.push_back(e);
		env.push_back(std::string("LD_PRELOAD=") + FAKE_RV_IOCTL_PATH);
		return rv::test::run_process(args, env);
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
		EXPECT_EQ(s.at("ioctl_floor").at("calls").as_uint(), 300u);
		EXPECT_TRUE(s.at("hit_floor_ratio").is_number());
		EXPECT_EQ(s.find("ibv_reg_mr"), nullptr);
	}
	// Per size: 5 + 300 hits; 1 (caching the hit buffer) + 5 + 40 misses.
	EXPECT_EQ(v.at("cache_stats").at("hit").as_uint(), 2u * 305);
	EXPECT_EQ(v.at("cache_stats").at("miss").as_uint(), 2u * (1 + 45));
}

TEST_F(RvBenchFake, AttachJsonNewJobs)
{
	ProcessResult r = command({"attach", "--json", "--threads", "3",
				   "--iters", "20", "--warmup", "2"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	JsonValue v = JsonValue::parse(r.out);
	EXPECT_EQ(v.at("command").as_string(), "attach");
	EXPECT_EQ(v.at("device").as_string(), "fake0");
	EXPECT_EQ(v.at("job").as_string(), "new");
	EXPECT_EQ(v.at("threads").as_uint(), 3u);
	EXPECT_EQ(v.at("attach").at("calls").as_uint(), 60u);
	EXPECT_LE(v.at("attach").at("median_ns").as_uint(),
		  v.at("attach").at("p99_ns").as_uint());
	EXPECT_GT(v.at("wall_ns").as_uint(), 0u);
	EXPECT_TRUE(v.at("attaches_per_s").is_number());
}

TEST_F(RvBenchFake, AttachTableSameJob)
{
	ProcessResult r = command({"attach", "--same-job", "--threads", "2",
				   "--iters", "5"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_THAT(r.out, HasSubstr("rvbench attach: fake0 port 1 via /dev/null, "
				     "2 threads, all join one job"));
	EXPECT_THAT(r.out, HasSubstr("ATTACH/s"));
	EXPECT_THAT(r.out, HasSubstr("\n      10 "));
}

// A refused ATTACH (here: fake1 is in sysfs but not a device of the
// fake module) ends the run with status 1 and errno's text.
TEST_F(RvBenchFake, AttachRefusedExit1)
{
	ProcessResult r = command({"attach", "--device", "fake1", "--iters", "2"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_THAT(r.err, HasSubstr("No such device"));
	EXPECT_EQ(r.out, "");
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

// Progress lines: on stderr with --progress (=0: at every step), never on
// stdout, none without it when stderr is no terminal (as here).
TEST_F(RvBenchFake, RegProgress)
{
	const std::vector<std::string> args = {"--json", "--sizes", "4K,8M", "--iters", "20",
					       "--miss-iters", "5", "--warmup", "2",
					       "--cache-mb", "4"};
	std::vector<std::string> a = args;
	a.push_back("--progress=0");
	ProcessResult r = run(a);
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	JsonValue v = JsonValue::parse(r.out);	// stdout: the JSON alone
	EXPECT_EQ(v.at("command").as_string(), "reg");
	// 22 floor calls; 4K: 22 floor calls, 22 hits, 7 misses; 8M is skipped.
	EXPECT_THAT(r.err, HasSubstr("rvbench: reg ioctl floor: 1/73 calls (1%), "));
	EXPECT_THAT(r.err, HasSubstr("rvbench: reg 4 KiB (1/2) floor: 23/73 calls (31%), "));
	EXPECT_THAT(r.err, HasSubstr("rvbench: reg 4 KiB (1/2) hits: 45/73 calls (61%), "));
	EXPECT_THAT(r.err, HasSubstr("rvbench: reg 4 KiB (1/2) misses: 73/73 calls (100%), "));
	EXPECT_THAT(r.err, HasSubstr("\nrvbench: reg done: 73/73 calls (100%), "));

	// Not a terminal, --no-progress, or --no-progress last: no lines.
	const std::vector<std::vector<std::string>> quiet = {
		{}, {"--no-progress"}, {"--progress=0", "--no-progress"}};
	for (const auto &q : quiet) {
		SCOPED_TRACE(q.size());
		a = args;
		a.insert(a.end(), q.begin(), q.end());
		r = run(a);
		ASSERT_TRUE(r.exited);
		ASSERT_EQ(r.exit_code, 0) << r.err;
		EXPECT_EQ(r.err, "");
	}
}

TEST_F(RvBenchFake, BwLoopbackThreadsJson)
{
	ProcessResult r = transfer({"bw", "--loopback", "--loopback-threads", "--json",
				    "--sizes", "4K,64K,1M", "--bytes", "2M",
				    "--window", "8", "--buffer", "1M"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	JsonValue v = JsonValue::parse(r.out);
	EXPECT_EQ(v.at("command").as_string(), "bw");
	EXPECT_EQ(v.at("mode").as_string(), "loopback-threads");
	EXPECT_EQ(v.at("local").at("device").as_string(), "fake0");
	EXPECT_EQ(v.at("peer").at("device").as_string(), "fake1");
	EXPECT_EQ(v.at("peer").at("ip").as_string(), "10.0.0.2");
	EXPECT_EQ(v.at("path_mtu").as_uint(), 1024u);
	EXPECT_EQ(v.at("num_conn").as_uint(), 4u);
	EXPECT_EQ(v.at("window").as_uint(), 8u);
	EXPECT_TRUE(v.at("verify").as_bool());
	EXPECT_EQ(v.at("mismatches").as_uint(), 0u);
	const auto &res = v.at("results").as_array();
	ASSERT_EQ(res.size(), 3u);
	std::uint64_t messages = 0;
	const std::uint64_t sizes[] = {4096, 65536, 1 << 20};
	const std::uint64_t slots[] = {256, 16, 1};
	for (std::size_t i = 0; i < 3; i++) {
		SCOPED_TRACE(sizes[i]);
		const auto &s = res[i];
		EXPECT_EQ(s.at("size").as_uint(), sizes[i]);
		EXPECT_EQ(s.at("messages").as_uint(), (2u << 20) / sizes[i]);
		EXPECT_EQ(s.at("bytes").as_uint(), 2u << 20);
		EXPECT_TRUE(s.at("verify").as_bool());
		EXPECT_EQ(s.at("received").as_uint(), s.at("messages").as_uint());
		EXPECT_EQ(s.at("verified").as_uint(), s.at("messages").as_uint());
		EXPECT_EQ(s.at("mismatches").as_uint(), 0u);
		EXPECT_EQ(s.at("slots").as_uint(), slots[i]);
		EXPECT_EQ(s.at("window").as_uint(), std::min<std::uint64_t>(8, slots[i]));
		EXPECT_GT(s.at("mb_per_s").as_double(), 0);
		EXPECT_GT(s.at("mmsg_per_s").as_double(), 0);
		EXPECT_GE(s.at("sender_polls").as_uint(),
			  s.at("sender_empty_polls").as_uint());
		EXPECT_GE(s.at("credits").as_uint(), 1u);
		EXPECT_TRUE(s.at("sender_rcvd_pkts").is_null());	// no hw counters
		EXPECT_EQ(s.find("first_mismatch"), nullptr);
		messages += s.at("messages").as_uint();
	}
	// The sender's writes are the connection's posts; the credits it got
	// are its received writes.
	const auto &cs = v.at("conn_stats");
	EXPECT_EQ(cs.at("post_write").as_uint(), messages);
	EXPECT_EQ(cs.at("send_write_cqe").as_uint(), messages);
	EXPECT_EQ(cs.at("post_write_bytes").as_uint(), 3u * (2u << 20));
	const auto &qp = cs.at("qp_post_write").as_array();
	ASSERT_EQ(qp.size(), 4u);
	std::uint64_t sum = 0;
	for (const auto &q : qp)
		sum += q.as_uint();
	EXPECT_EQ(sum, messages);
}

// Buffers larger than max_fmr_size, as on soft-RoCE: each side's buffer
// is MRs of C bytes (the fake's max_fmr_size is --cache-mb: 3 MiB, so C
// is 2 MiB) and no write spans two (the fake completes a write outside
// the rkey's MR with IB_WC_REM_ACCESS_ERR). Sizes above C are skipped,
// the others run and check out.
TEST_F(RvBenchFake, BwChunkedBuffersAndSkippedSizes)
{
	const std::vector<std::string> args = {
		"bw", "--loopback", "--loopback-threads", "--cache-mb", "3",
		"--buffer", "2560K", "--sizes", "4K,384K,512K,2M,2560K",
		"--bytes", "4M", "--window", "8"};
	std::vector<std::string> a = args;
	a.push_back("--json");
	ProcessResult r = transfer(a);
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	JsonValue v = JsonValue::parse(r.out);
	EXPECT_EQ(v.at("mr_chunk").as_uint(), 2u << 20);
	EXPECT_EQ(v.at("buffer").as_uint(), 2560u << 10);
	for (const char *side : {"local", "peer"}) {
		EXPECT_EQ(v.at(side).at("max_fmr_size").as_uint(), 3u << 20);
		EXPECT_EQ(v.at(side).at("mr_chunk").as_uint(), 2u << 20);
	}
	EXPECT_EQ(v.at("mismatches").as_uint(), 0u);
	const auto &res = v.at("results").as_array();
	ASSERT_EQ(res.size(), 5u);
	// 384 KiB: 5 slots in the first 2 MiB MR, 1 in the second.
	const std::uint64_t sizes[] = {4 << 10, 384 << 10, 512 << 10, 2 << 20};
	const std::uint64_t slots[] = {640, 6, 5, 1};
	std::uint64_t messages = 0;
	for (std::size_t i = 0; i < 4; i++) {
		SCOPED_TRACE(sizes[i]);
		const auto &s = res[i];
		EXPECT_EQ(s.find("skipped"), nullptr);
		EXPECT_EQ(s.at("size").as_uint(), sizes[i]);
		EXPECT_EQ(s.at("slots").as_uint(), slots[i]);
		EXPECT_EQ(s.at("window").as_uint(), std::min<std::uint64_t>(8, slots[i]));
		EXPECT_EQ(s.at("messages").as_uint(), (4u << 20) / sizes[i]);
		EXPECT_EQ(s.at("received").as_uint(), s.at("messages").as_uint());
		EXPECT_EQ(s.at("verified").as_uint(), s.at("messages").as_uint());
		EXPECT_EQ(s.at("mismatches").as_uint(), 0u);
		messages += s.at("messages").as_uint();
	}
	EXPECT_EQ(res[4].at("size").as_uint(), 2560u << 10);
	EXPECT_EQ(res[4].at("skipped").as_string(), "larger than the MR chunk");
	EXPECT_EQ(res[4].find("messages"), nullptr);
	EXPECT_EQ(v.at("conn_stats").at("post_write").as_uint(), messages);
	EXPECT_EQ(v.at("conn_stats").at("send_write_cqe_fail").as_uint(), 0u);

	r = transfer(args);
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_THAT(r.out, HasSubstr("buffer 2.5 MiB in MRs of 2 MiB"));
	EXPECT_THAT(r.out, HasSubstr("  2.5 MiB skipped: larger than the MR chunk (MRs of "
				     "2 MiB; max_fmr_size 3145728 here, 3145728 at the "
				     "peer)\n"));
	EXPECT_THAT(r.out, Not(HasSubstr("FAILED")));
}

// lat skips the sizes above the MR chunk too, with the reason; the run
// still succeeds.
TEST_F(RvBenchFake, LatSkipsSizesAboveMaxFmrSize)
{
	ProcessResult r = transfer({"lat", "--loopback", "--loopback-threads", "--json",
				    "--cache-mb", "3", "--sizes", "8,3000,4M,512K",
				    "--iters", "20", "--warmup", "2"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	JsonValue v = JsonValue::parse(r.out);
	EXPECT_EQ(v.at("mr_chunk").as_uint(), 2u << 20);
	const auto &res = v.at("results").as_array();
	ASSERT_EQ(res.size(), 4u);
	EXPECT_EQ(res[2].at("size").as_uint(), 4u << 20);
	EXPECT_EQ(res[2].at("skipped").as_string(), "larger than max_fmr_size");
	for (std::size_t i : {0u, 1u, 3u}) {
		SCOPED_TRACE(i);
		EXPECT_EQ(res[i].find("skipped"), nullptr);
		EXPECT_EQ(res[i].at("verified").as_uint(), 22u);
		EXPECT_EQ(res[i].at("peer_verified").as_uint(), 22u);
		EXPECT_EQ(res[i].at("mismatches").as_uint(), 0u);
	}
	EXPECT_EQ(res[3].at("size").as_uint(), 512u << 10);
}

TEST_F(RvBenchFake, BwTableRetriesOnBusy)
{
	ProcessResult r = transfer({"bw", "--loopback-nodes", "fake0,fake1",
				    "--loopback-threads", "--sizes", "8K",
				    "--iters", "300"},
				   {"RV_FAKE_POST_BUSY_EVERY=10"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_THAT(r.out, HasSubstr("rvbench bw: fake0 (10.0.0.1, rv_index 0) -> "
				     "fake1 (10.0.0.2, rv_index 0)"));
	EXPECT_THAT(r.out, HasSubstr("every message checked by the receiver"));
	EXPECT_THAT(r.out, HasSubstr("MB/s"));
	EXPECT_THAT(r.out, HasSubstr("Mmsg/s"));
	EXPECT_THAT(r.out, HasSubstr("    8 KiB       300"));
	EXPECT_THAT(r.out, Not(HasSubstr("FAILED")));
	// Every tenth post of each side answers EBUSY: the sender retried.
	EXPECT_THAT(r.out, Not(testing::ContainsRegex("8 KiB +300 +[0-9.]+ +[0-9.]+ +32 +0 ")));
}

TEST_F(RvBenchFake, BwWrongDataFails)
{
	ProcessResult r = transfer({"bw", "--loopback", "--loopback-threads", "--json",
				    "--sizes", "4K,16K", "--iters", "100"},
				   {"RV_FAKE_CORRUPT_EVERY=25"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1) << r.err;
	JsonValue v = JsonValue::parse(r.out);
	EXPECT_GE(v.at("mismatches").as_uint(), 4u);
	const auto &s = v.at("results").as_array().at(0);
	EXPECT_EQ(s.at("verified").as_uint(), 100u);
	EXPECT_GE(s.at("mismatches").as_uint(), 3u);
	EXPECT_THAT(s.at("first_mismatch").as_string(),
		    HasSubstr("first wrong byte at offset 2048"));
}

// --no-verify: the payloads are not looked at, so damaged bytes pass and
// nothing is claimed to be checked; the same sizes, slots and window.
TEST_F(RvBenchFake, BwNoVerifyDoesNotCheckPayloads)
{
	ProcessResult r = transfer({"bw", "--loopback", "--loopback-threads", "--json",
				    "--sizes", "4K,16K", "--iters", "100", "--window", "8",
				    "--no-verify"},
				   {"RV_FAKE_CORRUPT_EVERY=25"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	JsonValue v = JsonValue::parse(r.out);
	EXPECT_FALSE(v.at("verify").as_bool());
	EXPECT_EQ(v.at("window").as_uint(), 8u);
	EXPECT_EQ(v.at("mismatches").as_uint(), 0u);
	const auto &res = v.at("results").as_array();
	ASSERT_EQ(res.size(), 2u);
	for (const auto &s : res) {
		EXPECT_FALSE(s.at("verify").as_bool());
		EXPECT_EQ(s.at("messages").as_uint(), 100u);
		EXPECT_EQ(s.at("received").as_uint(), 100u);
		EXPECT_EQ(s.at("verified").as_uint(), 0u);
		EXPECT_EQ(s.at("mismatches").as_uint(), 0u);
		EXPECT_EQ(s.at("window").as_uint(), 8u);
		EXPECT_GE(s.at("credits").as_uint(), 1u);
		EXPECT_EQ(s.find("first_mismatch"), nullptr);
	}

	r = transfer({"bw", "--loopback-nodes", "fake0,fake1", "--loopback-threads",
		      "--sizes", "8K", "--iters", "50", "--no-verify"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_THAT(r.out, HasSubstr("payloads not checked (--no-verify)"));
	EXPECT_THAT(r.out, Not(HasSubstr("every message checked")));
}

// --no-verify still checks each completion: a write whose receive event
// comes twice fails the run.
TEST_F(RvBenchFake, BwNoVerifyCatchesDuplicateCompletion)
{
	ProcessResult r = transfer({"bw", "--loopback", "--loopback-threads", "--json",
				    "--sizes", "4K", "--iters", "100", "--no-verify"},
				   {"RV_FAKE_DUP_EVERY=10"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1) << r.err;
	JsonValue v = JsonValue::parse(r.out);
	EXPECT_GE(v.at("mismatches").as_uint(), 1u);
	const auto &s = v.at("results").as_array().at(0);
	EXPECT_EQ(s.at("verified").as_uint(), 0u);
	EXPECT_THAT(s.at("first_mismatch").as_string(),
		    HasSubstr("unexpected sequence number"));
}

TEST_F(RvBenchFake, TransferProgress)
{
	ProcessResult r = transfer({"bw", "--loopback", "--loopback-threads", "--json",
				    "--sizes", "4K,64K", "--bytes", "1M", "--progress=0"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	JsonValue v = JsonValue::parse(r.out);
	EXPECT_EQ(v.at("results").as_array().size(), 2u);
	// Bytes written of 2 x 1 MiB.
	EXPECT_THAT(r.err, HasSubstr("rvbench: bw 4 KiB (1/2): 0.0/2.0 MiB (0%), "));
	EXPECT_THAT(r.err, HasSubstr("rvbench: bw 64 KiB (2/2): 2.0/2.0 MiB (100%), "));
	EXPECT_THAT(r.err, HasSubstr("rvbench: bw done: 2.0/2.0 MiB (100%), "));
	// The loopback server leaves the progress to its client.
	EXPECT_THAT(r.err, Not(HasSubstr("server:")));

	r = transfer({"lat", "--loopback", "--loopback-threads", "--sizes", "8,64",
		      "--iters", "10", "--warmup", "2", "--progress=0"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_THAT(r.out, HasSubstr("rvbench lat: "));
	EXPECT_THAT(r.out, Not(HasSubstr("round trips (")));
	EXPECT_THAT(r.err, HasSubstr("rvbench: lat 8 B (1/2): 1/24 round trips (4%), "));
	EXPECT_THAT(r.err, HasSubstr("rvbench: lat done: 24/24 round trips (100%), "));

	r = transfer({"lat", "--loopback", "--loopback-threads", "--sizes", "8",
		      "--iters", "10"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.err, "");
}

TEST_F(RvBenchFake, LatLoopbackThreads)
{
	ProcessResult r = transfer({"lat", "--loopback", "--loopback-threads", "--json",
				    "--sizes", "8,5,4K", "--iters", "50", "--warmup", "5"});
	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	JsonValue v = JsonValue::parse(r.out);
	EXPECT_EQ(v.at("command").as_string(), "lat");
	EXPECT_EQ(v.at("warmup").as_uint(), 5u);
	const auto &res = v.at("results").as_array();
	ASSERT_EQ(res.size(), 3u);
	for (const auto &s : res) {
		EXPECT_EQ(s.at("iters").as_uint(), 50u);
		EXPECT_EQ(s.at("verified").as_uint(), 55u);
		EXPECT_EQ(s.at("peer_verified").as_uint(), 55u);
		EXPECT_EQ(s.at("mismatches").as_uint(), 0u);
		EXPECT_LE(s.at("min_ns").as_uint(), s.at("median_ns").as_uint());
		EXPECT_LE(s.at("median_ns").as_uint(), s.at("p99_ns").as_uint());
		EXPECT_LE(s.at("p99_ns").as_uint(), s.at("max_ns").as_uint());
	}
	EXPECT_EQ(res[1].at("size").as_uint(), 5u);

	r = transfer({"lat", "--loopback", "--loopback-threads", "--sizes", "64",
		      "--iters", "20"},
		     {"RV_FAKE_CORRUPT_EVERY=7"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_THAT(r.out, HasSubstr("FAILED"));
	EXPECT_THAT(r.out, HasSubstr("first wrong message: size 64"));
}

TEST_F(RvBenchFake, ForkedServerStallTimesOut)
{
	// The fake delivers writes only inside one process, so with the
	// server in a child nothing arrives: whichever side's --timeout
	// runs out first (the two start a moment apart) gives up without
	// progress, tells the other, and both exit.
	const auto t0 = std::chrono::steady_clock::now();
	ProcessResult r = transfer({"bw", "--loopback", "--sizes", "4K",
				    "--iters", "10", "--timeout", "1"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_THAT(r.err, AnyOf(HasSubstr("no progress for 1 s: bw size 4096: posted 10, "
					   "completed 10, checked by the receiver 0 of 10"),
				 HasSubstr("server: no progress for 1 s: bw size 4096: "
					   "received 0 of 10")));
	EXPECT_EQ(r.out, "");
	EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

TEST_F(RvBenchFake, ListenAndConnectProcesses)
{
	// A server process and a client process: set up, connected, then
	// stuck like the forked server above. Checks the two roles' setup
	// and the server's report of the client's failure.
	std::uint16_t port = 0;
	{
		rv::UniqueFd probe = rv::bench::oob::listen_tcp("127.0.0.1", 0, &port);
	}
	ProcessResult server;
	std::thread t([&] {
		server = transfer({"bw", "--listen", "127.0.0.1:" + std::to_string(port),
				   "--device", "fake1", "--timeout", "5", "-v"});
	});
	ProcessResult client = transfer({"bw", "--connect",
					 "127.0.0.1:" + std::to_string(port),
					 "--device", "fake0", "--sizes", "4K",
					 "--iters", "3", "--timeout", "1", "-v"});
	t.join();
	ASSERT_TRUE(client.exited);
	EXPECT_EQ(client.exit_code, 1);
	EXPECT_THAT(client.err, HasSubstr("client: connected in"));
	EXPECT_THAT(client.err, HasSubstr("no progress for 1 s"));
	ASSERT_TRUE(server.exited);
	EXPECT_EQ(server.exit_code, 1);
	EXPECT_THAT(server.err, HasSubstr("server: attached to fake1 port 1"));
	EXPECT_THAT(server.err, HasSubstr("the peer failed: no progress"));
}
#endif

// --- bench/pattern.hpp and bench/oob.hpp ------------------------------------

TEST(BenchPattern, FillCheckRoundTrip)
{
	for (std::uint64_t size : {1ULL, 5ULL, 8ULL, 13ULL, 4095ULL, 4096ULL,
				   4100ULL, 8192ULL, 12345ULL, 65536ULL}) {
		SCOPED_TRACE(size);
		std::vector<std::byte> buf(size);
		rv::bench::PatternChecker chk(size);
		rv::bench::pattern_fill(buf.data(), size, 7);
		EXPECT_EQ(chk.check(buf.data(), 7), std::nullopt);
		// Another sequence number: the stamps differ, the first at 0.
		EXPECT_EQ(chk.check(buf.data(), 8), std::optional<std::uint64_t>(0));
		// Restamping makes it message 8 exactly.
		rv::bench::pattern_stamp(buf.data(), size, 8);
		EXPECT_EQ(chk.check(buf.data(), 8), std::nullopt);
		std::vector<std::byte> fresh(size);
		rv::bench::pattern_fill(fresh.data(), size, 8);
		EXPECT_EQ(buf, fresh);
		// Any damaged byte is found where it is.
		for (std::uint64_t off : {size - 1, size / 2, size / 3}) {
			buf[off] ^= std::byte{1};
			EXPECT_EQ(chk.check(buf.data(), 8),
				  std::optional<std::uint64_t>(off));
			buf[off] ^= std::byte{1};
		}
	}
}

TEST(BenchPattern, SizesAndStampsDiffer)
{
	std::vector<std::byte> a(8192), b(8192);
	rv::bench::pattern_fill(a.data(), 8192, 1);
	rv::bench::pattern_fill(b.data(), 4096, 1);
	rv::bench::pattern_fill(b.data() + 4096, 4096, 2);
	rv::bench::PatternChecker chk(8192);
	EXPECT_NE(chk.check(b.data(), 1), std::nullopt);
	// The stamp of the second 4 KiB page of a message.
	std::vector<std::byte> c = a;
	rv::bench::pattern_stamp(c.data(), 8192, 2);
	EXPECT_TRUE(rv::bench::pattern_stamped(8192, 512));
	EXPECT_TRUE(rv::bench::pattern_stamped(8192, 1023));
	EXPECT_FALSE(rv::bench::pattern_stamped(8192, 511));
	std::copy(a.begin() + 4096, a.begin() + 4104, c.begin() + 4096);
	EXPECT_EQ(chk.check(c.data(), 2), std::optional<std::uint64_t>(4096));
}

TEST(BenchPattern, SeqNearest)
{
	using rv::bench::seq_nearest;
	EXPECT_EQ(seq_nearest(0, 0, 23), 0u);
	EXPECT_EQ(seq_nearest(0, 5, 23), 5u);
	EXPECT_EQ(seq_nearest(100, 99, 23), 99u);
	const std::uint64_t span = 1u << 23;
	EXPECT_EQ(seq_nearest(span - 2, 3, 23), span + 3);	// wrapped
	EXPECT_EQ(seq_nearest(span + 3, span - 2, 23), span - 2);	// behind
	EXPECT_EQ(seq_nearest(5 * span + 10, 9, 23), 5 * span + 9);
	EXPECT_EQ(seq_nearest(1, span - 1, 23), span - 1);	// not below 0
	EXPECT_EQ(seq_nearest(7, 0xffffffffu, 32), 0xffffffffULL);
	EXPECT_EQ(seq_nearest(0x100000005ULL, 3, 32), 0x100000003ULL);
}

TEST(BenchOob, FormatParse)
{
	rv::bench::oob::Message m{"INFO", {}};
	m.set("gid", "0000:0000:0000:0000:0000:ffff:0a4d:0101")
		.set("n", std::uint64_t{42})
		.set("msg", "a b%c\nd")
		.set("empty", "");
	const std::string line = m.format();
	EXPECT_EQ(line.find('\n'), std::string::npos);
	EXPECT_EQ(line, "INFO empty= gid=0000:0000:0000:0000:0000:ffff:0a4d:0101 "
			"msg=a%20b%25c%0Ad n=42");
	rv::bench::oob::Message p = rv::bench::oob::Message::parse(line);
	EXPECT_EQ(p.verb, "INFO");
	EXPECT_EQ(p.fields, m.fields);
	EXPECT_EQ(p.get_u64("n"), 42u);
	EXPECT_THROW((void)p.get("nope"), std::runtime_error);
	EXPECT_THROW((void)p.get_u64("gid"), std::runtime_error);
	p.set("hex", "0x1F");
	EXPECT_EQ(p.get_u64("hex"), 31u);

	for (const char *bad : {"", "=x", "V a", "V =b", "V a=%2", "V a=%zz"})
		EXPECT_THROW((void)rv::bench::oob::Message::parse(bad),
			     std::runtime_error) << bad;
	rv::bench::oob::Message badkey{"V", {}};
	badkey.set("a b", "c");
	EXPECT_THROW((void)badkey.format(), std::invalid_argument);
}

TEST(BenchOob, HostPortAndHex)
{
	using rv::bench::oob::parse_host_port;
	EXPECT_EQ(parse_host_port("18515"), std::pair(std::string(), std::uint16_t{18515}));
	EXPECT_EQ(parse_host_port("10.77.1.2:7"),
		  std::pair(std::string("10.77.1.2"), std::uint16_t{7}));
	EXPECT_EQ(parse_host_port("h:65536"), std::nullopt);
	EXPECT_EQ(parse_host_port(":5"), std::nullopt);
	EXPECT_EQ(parse_host_port("h:"), std::nullopt);
	EXPECT_EQ(parse_host_port("x"), std::nullopt);

	const std::uint8_t bytes[] = {0x00, 0xab, 0x7f};
	EXPECT_EQ(rv::bench::oob::to_hex(bytes, 3), "00ab7f");
	EXPECT_EQ(rv::bench::oob::from_hex("00AB7f"),
		  std::vector<std::uint8_t>({0x00, 0xab, 0x7f}));
	EXPECT_EQ(rv::bench::oob::from_hex("abc"), std::nullopt);
	EXPECT_EQ(rv::bench::oob::from_hex("zz"), std::nullopt);
}

TEST(BenchOob, SocketMessagesAndTimeout)
{
	auto [a, b] = rv::bench::oob::socket_pair();
	EXPECT_FALSE(b.peek().has_value());
	a.send(rv::bench::oob::Message{"HELLO", {}}.set("x", "1"));
	a.send(rv::bench::oob::Message{"ERROR", {}}.set("msg", "it broke"));
	// peek() shows the next message and leaves it for recv(), twice.
	for (int i = 0; i < 2; i++) {
		const auto m = b.peek();
		ASSERT_TRUE(m.has_value());
		EXPECT_EQ(m->verb, "HELLO");
		EXPECT_EQ(m->get("x"), "1");
	}
	EXPECT_EQ(b.expect("HELLO", std::chrono::seconds(1)).get("x"), "1");
	try {
		(void)b.expect("INFO", std::chrono::seconds(1));
		ADD_FAILURE() << "no exception";
	} catch (const std::runtime_error &e) {
		EXPECT_THAT(e.what(), HasSubstr("the peer failed: it broke"));
	}
	try {
		(void)b.recv(std::chrono::milliseconds(20));
		ADD_FAILURE() << "no exception";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), ETIMEDOUT);
	}
	EXPECT_FALSE(b.peek().has_value());
	a.close();
	EXPECT_THROW((void)b.peek(), std::runtime_error);
	EXPECT_THROW((void)b.recv(std::chrono::seconds(1)), std::runtime_error);
}
