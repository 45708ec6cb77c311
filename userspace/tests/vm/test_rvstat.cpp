// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvstat against the real module: the debugfs files exist, and an
// attached process with registered memory shows up with its job.
//
//   RV_RVSTAT  rvstat binary (default: the one built with these tests,
//              else an rvstat next to rv_vm_tests)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <rv/attach.hpp>
#include <rv/device.hpp>
#include <rv/mapping.hpp>
#include <rv/memory_region.hpp>

#include <toolkit/debugfs.hpp>

#include "../support/json_value.hpp"
#include "../support/subprocess.hpp"
#include "mr_util.hpp"
#include "vm_env.hpp"

namespace fs = std::filesystem;

using ::testing::HasSubstr;
using rv::test::JsonValue;
using rv::test::KiB;
using rv::test::MiB;
using rv::test::ProcessResult;

namespace {

const std::string dir{rv::debugfs::default_dir};

std::string rvstat_path()
{
	if (const char *env = std::getenv("RV_RVSTAT"); env && *env)
		return env;
#ifdef RVSTAT_PATH
	if (::access(RVSTAT_PATH, X_OK) == 0)
		return RVSTAT_PATH;
#endif
	std::error_code ec;
	auto self = fs::read_symlink("/proc/self/exe", ec);
	if (!ec) {
		for (const char *rel : {"rvstat", "../tools/rvstat",
					"../../tools/rvstat"}) {
			auto p = self.parent_path() / rel;
			if (::access(p.c_str(), X_OK) == 0)
				return p.lexically_normal().string();
		}
	}
	return "rvstat";	// fails visibly in the test that runs it
}

ProcessResult rvstat(std::vector<std::string> args)
{
	args.insert(args.begin(), rvstat_path());
	return rv::test::run_process(args);
}

// rvstat --json args...; throws (failing the test) unless it exits 0
// with JSON and nothing on stderr.
JsonValue rvstat_json(std::vector<std::string> args)
{
	args.insert(args.begin(), "--json");
	ProcessResult r = rvstat(args);
	if (!r.ok() || !r.err.empty())
		throw std::runtime_error(
			"rvstat " + ::testing::PrintToString(args) + ": " +
			(r.exited ? "exit " + std::to_string(r.exit_code)
				  : "signal " + std::to_string(r.signal)) +
			", stderr: " + r.err);
	return JsonValue::parse(r.out);
}

// Lower-case hex without a 0x prefix.
std::string plain_hex(std::string s)
{
	if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s.erase(0, 2);
	for (char &c : s)
		c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	return s;
}

std::string key_hex(const rv::AttachParams &p)
{
	static constexpr char digits[] = "0123456789abcdef";
	std::string s;
	for (std::size_t i = 0; i < p.job_key_len && i < p.job_key.size(); i++) {
		s += digits[p.job_key[i] >> 4];
		s += digits[p.job_key[i] & 0xf];
	}
	return s;
}

// The jobs line of the job with p's key; nullptr if none.
const JsonValue *job_of(const JsonValue &v, const rv::AttachParams &p)
{
	for (const JsonValue &j : v.at("jobs").as_array())
		if (const JsonValue *k = j.find("job_key");
		    k && k->is_string() && plain_hex(k->as_string()) == key_hex(p))
			return &j;
	return nullptr;
}

// The procs lines of this process in job id.
std::vector<const JsonValue *> own_procs(const JsonValue &v, std::uint64_t job)
{
	std::vector<const JsonValue *> out;
	for (const JsonValue &p : v.at("procs").as_array())
		if (p.at("pid").as_uint() == static_cast<std::uint64_t>(::getpid()) &&
		    p.at("job").as_uint() == job)
			out.push_back(&p);
	return out;
}

void assert_debugfs_dir()
{
	ASSERT_TRUE(fs::is_directory(dir))
		<< dir << " is missing: rv.ko must create it "
		   "(docs/observability.md); is debugfs mounted?";
}

} // namespace

TEST(RvStat, DebugfsFilesExist)
{
	RV_ROOT_OR_SKIP();
	ASSERT_NO_FATAL_FAILURE(assert_debugfs_dir());
	for (rv::debugfs::Table t : rv::debugfs::tables)
		EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / rv::debugfs::name(t)))
			<< rv::debugfs::name(t);

	// Every line of every file parses, whatever is attached now.
	rv::debugfs::Snapshot s = rv::debugfs::read(dir);
	for (const rv::debugfs::Warning &w : s.warnings)
		ADD_FAILURE() << w.to_string();
}

TEST(RvStat, JsonPidShowsProcessCacheAndJob)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	ASSERT_NO_FATAL_FAILURE(assert_debugfs_dir());

	const rv::AttachParams p = rv::test::params_for(n);
	rv::Device dev = rv::test::attach_new(p);
	ASSERT_TRUE(dev.attachment());
	const rv::Attach a = dev.attachment()->out;
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	rv::MemoryRegion mr1 = dev.reg_mem(buf.data(), 64 * KiB, rv::access::psm3_recv);
	rv::MemoryRegion mr2 = dev.reg_mem(buf.data(), 64 * KiB, rv::access::psm3_recv);
	const rv::CacheStats cs = dev.cache_stats();
	ASSERT_EQ(cs.count, 1u) << rv::test::to_string(cs);

	JsonValue v = rvstat_json({"--pid", std::to_string(::getpid())});
	ASSERT_TRUE(v.is_object());

	const JsonValue *job = job_of(v, p);
	ASSERT_NE(job, nullptr) << "no job with key " << key_hex(p) << " in "
				<< v.at("jobs").size() << " jobs";
	const std::uint64_t id = job->at("job").as_uint();
	EXPECT_EQ(job->at("device").as_string(), n.dev);
	EXPECT_EQ(job->at("port").as_uint(), 1u);
	EXPECT_EQ(job->at("gid_index").as_uint(), n.gid_index);
	EXPECT_EQ(job->at("uid").as_uint(), ::geteuid());
	EXPECT_EQ(rv::debugfs::parse_u64(job->at("service_id").as_string()),
		  p.service_id);
	EXPECT_EQ(job->at("index_bits").as_uint(), unsigned{p.index_bits});
	EXPECT_EQ(job->at("q_depth").as_uint(), a.q_depth);
	EXPECT_EQ(job->at("reconnect_timeout").as_uint(), a.reconnect_timeout);
	EXPECT_GE(job->at("procs").as_uint(), 1u);
	EXPECT_EQ(job->at("conns").as_uint(), 0u);
	EXPECT_EQ(job->at("dead").as_uint(), 0u);

	std::vector<const JsonValue *> mine = own_procs(v, id);
	ASSERT_EQ(mine.size(), 1u) << "procs lines of pid " << ::getpid()
				   << " in job " << id;
	const JsonValue &pr = *mine[0];
	EXPECT_EQ(pr.at("rv_index").as_uint(), a.rv_index);
	EXPECT_EQ(pr.at("cache_count").as_uint(), cs.count);
	EXPECT_EQ(pr.at("cache_size").as_uint(), 64 * KiB);
	EXPECT_EQ(pr.at("cache_inuse").as_uint(), cs.inuse);
	EXPECT_EQ(pr.at("cache_hit").as_uint(), cs.hit);
	EXPECT_EQ(pr.at("cache_miss").as_uint(), cs.miss);
	EXPECT_EQ(pr.at("cache_limit").as_uint(),
		  std::uint64_t{cs.limit_cache_size} * MiB);
	if (p.cq_entries) {
		EXPECT_GT(pr.at("ring_entries").as_uint(), 0u);
	}
	EXPECT_EQ(pr.at("conns").as_uint(), 0u);
	EXPECT_EQ(pr.at("send_write_cqe").as_uint(), 0u);

	// --pid: only this process's lines, and its job's device.
	for (const JsonValue &x : v.at("procs").as_array())
		EXPECT_EQ(x.at("pid").as_uint(), static_cast<std::uint64_t>(::getpid()));
	bool device_listed = false;
	for (const JsonValue &d : v.at("devices").as_array())
		if (d.at("device").as_string() == n.dev) {
			device_listed = true;
			EXPECT_GE(d.at("jobs").as_uint(), 1u);
		}
	EXPECT_TRUE(device_listed) << n.dev;

	// --job selects the same job.
	JsonValue byjob = rvstat_json({"--job", std::to_string(id)});
	ASSERT_EQ(byjob.at("jobs").size(), 1u);
	EXPECT_EQ(byjob.at("jobs").at(std::size_t{0}).at("job").as_uint(), id);
	EXPECT_EQ(own_procs(byjob, id).size(), 1u);
}

TEST(RvStat, HumanPid)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	ASSERT_NO_FATAL_FAILURE(assert_debugfs_dir());

	rv::Device dev = rv::test::attach_new(rv::test::params_for(n));
	rv::Mapping buf = rv::Mapping::anonymous(MiB);
	rv::MemoryRegion mr = dev.reg_mem(buf.data(), 64 * KiB, rv::access::psm3_recv);

	ProcessResult r = rvstat({"--pid", std::to_string(::getpid())});
	ASSERT_TRUE(r.exited) << "signal " << r.signal;
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.err, "");
	EXPECT_THAT(r.out, HasSubstr("\nProcesses\nPID "));
	EXPECT_THAT(r.out, HasSubstr("\n" + std::to_string(::getpid()) + " "));
	EXPECT_THAT(r.out, HasSubstr("64KiB"));
	EXPECT_THAT(r.out, HasSubstr(": " + n.dev + " port 1 "));
}

TEST(RvStat, EveryNodeDeviceListed)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n0, 0);
	RV_NODE_OR_SKIP(n1, 1);
	ASSERT_NO_FATAL_FAILURE(assert_debugfs_dir());

	JsonValue v = rvstat_json({"--section", "devices"});
	ASSERT_EQ(v.size(), 1u);
	for (const std::string &want : {n0.dev, n1.dev}) {
		bool found = false;
		for (const JsonValue &d : v.at("devices").as_array())
			found = found || d.at("device").as_string() == want;
		EXPECT_TRUE(found) << want;
	}
}

TEST(RvStat, ClosedProcessGone)
{
	RV_ROOT_OR_SKIP();
	RV_NODE_OR_SKIP(n, 0);
	ASSERT_NO_FATAL_FAILURE(assert_debugfs_dir());

	const rv::AttachParams p = rv::test::params_for(n);
	std::uint64_t id = 0;
	{
		rv::Device dev = rv::test::attach_new(p);
		JsonValue v = rvstat_json({"--pid", std::to_string(::getpid())});
		const JsonValue *job = job_of(v, p);
		ASSERT_NE(job, nullptr);
		id = job->at("job").as_uint();
		ASSERT_EQ(own_procs(v, id).size(), 1u);
	}

	// The file is closed: its line goes (teardown may finish a little
	// after close()).
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
	std::size_t left = 1;
	while (left && std::chrono::steady_clock::now() < deadline) {
		left = own_procs(rvstat_json({}), id).size();
		if (left)
			std::this_thread::sleep_for(std::chrono::milliseconds(50));
	}
	EXPECT_EQ(left, 0u) << "pid " << ::getpid() << " still in job " << id;

	ProcessResult r = rvstat({"--pid", std::to_string(::getpid()), "--job",
				  std::to_string(id)});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_THAT(r.err, HasSubstr("no process"));
}
