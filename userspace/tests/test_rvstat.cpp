// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The rvstat tool on the host, over fake debugfs directories.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "support/json_value.hpp"
#include "support/subprocess.hpp"

#ifndef RVSTAT_PATH
#error "RVSTAT_PATH must name the built rvstat binary"
#endif

namespace fs = std::filesystem;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using rv::test::JsonValue;
using rv::test::ProcessResult;
using rv::test::run_process;

namespace {

ProcessResult rvstat(std::vector<std::string> args)
{
	args.insert(args.begin(), RVSTAT_PATH);
	return run_process(args);
}

// Two devices; job 3 on rxe0 with two processes and one connection of
// two QPs; job 5 on rxe1 with one process and no connection. Fields a
// newer module might add are mixed in.
const char *const devices_txt = "device=rxe0 jobs=1\n"
				"device=rxe1 jobs=1\n"
				"device=rxe2 jobs=0\n";
const char *const jobs_txt =
	"job=3 device=rxe0 port=1 gid_index=1 uid=0 "
	"job_key=00112233445566778899aabbccddeeff "
	"service_id=0x1000125500000001 num_conn=2 index_bits=9 q_depth=4000 "
	"reconnect_timeout=30 hb_interval=1000 procs=2 conns=1 dead=0 "
	"future_count=42\n"
	"job=5 device=rxe1 port=1 gid_index=3 uid=1000 job_key=0x1234 "
	"service_id=0x1000125500000002 num_conn=4 index_bits=9 q_depth=4000 "
	"reconnect_timeout=0 hb_interval=0 procs=1 conns=0 dead=1\n";
const char *const conns_txt =
	"job=3 conn=1 qp=0 rem_addr=0x0a4d0102 "
	"dgid=0000:0000:0000:0000:0000:ffff:0a4d:0102 server=0 "
	"state=connected qpn=17 users=2 outstanding=0 conn_count=1 "
	"conn_recovery=0 req_sent=1 post_write=100 post_write_fail=0 "
	"post_write_bytes=409600 send_write_cqe=100 send_write_cqe_fail=0 "
	"recv_write_cqe=50 recv_write_bytes=1024 recv_cqe_fail=0\n"
	"job=3 conn=1 qp=1 rem_addr=0x0a4d0102 "
	"dgid=0000:0000:0000:0000:0000:ffff:0a4d:0102 server=0 "
	"state=recovering qpn=18 users=2 outstanding=3 conn_count=2 "
	"conn_recovery=1 post_write=7 post_write_fail=1 "
	"post_write_bytes=28672 send_write_cqe=4 send_write_cqe_fail=0 "
	"recv_write_cqe=0 recv_write_bytes=0 recv_cqe_fail=0 "
	"new_state_detail=xyz\n";
const char *const procs_txt =
	"job=3 pid=1234 rv_index=0 conns=1 ring_entries=192 ring_overflow=0 "
	"cache_limit=268435456 cache_size=65536 cache_count=1 cache_inuse=1 "
	"cache_hit=3 cache_miss=1 cache_full=0 cache_failed=0 "
	"cache_remove=0 cache_evict=0 send_write_cqe=100 "
	"send_write_cqe_fail=0 send_write_bytes=409600 recv_write_cqe=50 "
	"recv_write_cqe_fail=0 recv_write_bytes=1024\n"
	"job=3 pid=1240 rv_index=1 conns=1 ring_entries=0 ring_overflow=0 "
	"cache_limit=1073741824 cache_size=1572864 cache_count=2 "
	"cache_inuse=0 cache_hit=0 cache_miss=0\n"
	"job=5 pid=1234 rv_index=0 conns=0 ring_entries=192 ring_overflow=2 "
	"cache_limit=268435456 cache_size=0 cache_count=0 cache_inuse=0 "
	"cache_hit=0 cache_miss=0\n";

class RvStat : public testing::Test {
protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/rv-rvstat-XXXXXX";
		ASSERT_NE(::mkdtemp(tmpl), nullptr);
		root_ = tmpl;
		dir_ = (root_ / "rv").string();
		fs::create_directory(dir_);
		write("devices", devices_txt);
		write("jobs", jobs_txt);
		write("conns", conns_txt);
		write("procs", procs_txt);
	}
	void TearDown() override { fs::remove_all(root_); }

	void write(const std::string &file, const std::string &text)
	{
		std::ofstream(fs::path(dir_) / file) << text;
	}

	// rvstat -D dir args...
	ProcessResult run(std::vector<std::string> args)
	{
		args.insert(args.begin(), {"-D", dir_});
		return rvstat(args);
	}

	// rvstat -D dir --json args...: must succeed with one line of JSON.
	JsonValue json(std::vector<std::string> args)
	{
		args.insert(args.begin(), "--json");
		ProcessResult r = run(args);
		EXPECT_TRUE(r.exited);
		EXPECT_EQ(r.exit_code, 0) << r.err;
		EXPECT_EQ(r.err, "");
		EXPECT_FALSE(r.out.empty());
		EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "not one line";
		return JsonValue::parse(r.out);
	}

	fs::path root_;
	std::string dir_;
};

// The values of key in the objects of array a, as text.
std::vector<std::string> column(const JsonValue &a, const std::string &key)
{
	std::vector<std::string> v;
	for (const JsonValue &o : a.as_array()) {
		const JsonValue &x = o.at(key);
		v.push_back(x.is_string() ? x.as_string() : x.number_text());
	}
	return v;
}

std::vector<std::string> members(const JsonValue &o)
{
	std::vector<std::string> k;
	for (const auto &m : o.as_object())
		k.push_back(m.first);
	return k;
}

} // namespace

TEST(RvStatCli, Help)
{
	for (const char *opt : {"--help", "-h"}) {
		SCOPED_TRACE(opt);
		ProcessResult r = rvstat({opt});
		ASSERT_TRUE(r.exited);
		EXPECT_EQ(r.exit_code, 0);
		EXPECT_THAT(r.out, StartsWith("Usage: rvstat"));
		for (const char *o : {"--pid", "--job", "--section", "--json",
				      "--debugfs", "/sys/kernel/debug/rv"})
			EXPECT_THAT(r.out, HasSubstr(o));
		EXPECT_EQ(r.err, "");
	}
}

TEST(RvStatCli, UsageErrorsExit2)
{
	for (const auto &args : std::vector<std::vector<std::string>>{
		     {"--bogus"}, {"-x"}, {"--pid"}, {"--pid", "abc"},
		     {"--pid", "0"}, {"--pid", "-1"}, {"--pid", "12x"},
		     {"--pid", "2147483648"}, {"--pid", ""}, {"--job", "x"},
		     {"--job", "18446744073709551616"}, {"--section", "foo"},
		     {"--section", "jobs,"}, {"-s", ""}, {"--debugfs", ""},
		     {"extra"}, {"--json", "x"}}) {
		SCOPED_TRACE(::testing::PrintToString(args));
		ProcessResult r = rvstat(args);
		ASSERT_TRUE(r.exited);
		EXPECT_EQ(r.exit_code, 2);
		EXPECT_EQ(r.out, "");
		EXPECT_THAT(r.err, StartsWith("rvstat: "));
		EXPECT_THAT(r.err, HasSubstr("--help"));
	}
}

TEST(RvStatCli, MissingDirExits1)
{
	const std::string missing = "/nonexistent-rv-test/rv";

	for (bool json : {false, true}) {
		std::vector<std::string> args = {"--debugfs", missing};
		if (json)
			args.push_back("--json");
		ProcessResult r = rvstat(args);
		ASSERT_TRUE(r.exited);
		EXPECT_EQ(r.exit_code, 1);
		EXPECT_EQ(r.out, "");	// no partial JSON
		EXPECT_EQ(r.err, "rvstat: " + missing +
					 ": No such file or directory (is debugfs "
					 "mounted and rv loaded? mount -t debugfs "
					 "none /sys/kernel/debug; modprobe rv)\n");
	}
}

TEST(RvStatCli, DefaultDirIsSysKernelDebugRv)
{
	if (::access("/sys/kernel/debug/rv", F_OK) == 0)
		GTEST_SKIP() << "rv's debugfs directory exists on this host";
	ProcessResult r = rvstat({});

	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_EQ(r.out, "");
	EXPECT_THAT(r.err, StartsWith("rvstat: /sys/kernel/debug/rv: "));
}

TEST_F(RvStat, MissingFileExits1)
{
	fs::remove(fs::path(dir_) / "procs");
	ProcessResult r = run({});

	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_EQ(r.out, "");
	EXPECT_THAT(r.err, StartsWith("rvstat: " + dir_ +
				      "/procs: No such file or directory"));
}

// As a user who may not read the directory (as debugfs is for anyone but
// root); when the test runs as root, rvstat runs as nobody.
TEST_F(RvStat, PermissionDeniedExits1)
{
	fs::permissions(dir_, fs::perms::none);
	std::vector<std::string> args = {RVSTAT_PATH, "-D", dir_};
	if (::geteuid() == 0) {
		if (::access("/usr/bin/setpriv", X_OK) != 0)
			GTEST_SKIP() << "root, and no setpriv to drop privileges";
		args.insert(args.begin(),
			    {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
			     "--clear-groups"});
	}
	ProcessResult r = run_process(args);
	fs::permissions(dir_, fs::perms::owner_all);

	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_EQ(r.out, "");
	EXPECT_EQ(r.err, "rvstat: " + dir_ + ": Permission denied (run as root)\n");
}

TEST_F(RvStat, Human)
{
	ProcessResult r = run({});

	ASSERT_TRUE(r.exited);
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.err, "");
	const std::string &o = r.out;

	EXPECT_THAT(o, StartsWith("Devices\n"
				  "DEVICE  JOBS\n"
				  "rxe0       1\n"
				  "rxe1       1\n"
				  "rxe2       0\n"
				  "\n"
				  "Jobs\n"
				  "job 3: rxe0 port 1 gid_index 1, uid 0\n"
				  "  job_key 00112233445566778899aabbccddeeff "
				  "service_id 0x1000125500000001\n"
				  "  num_conn 2 index_bits 9 q_depth 4000 "
				  "reconnect_timeout 30s hb_interval 1000ms\n"
				  "  procs 2 conns 1\n"
				  "job 5: rxe1 port 1 gid_index 3, uid 1000, dead\n"));
	EXPECT_THAT(o, HasSubstr(
		"\nConnections\n"
		"job 3 conn 1: client, dgid "
		"0000:0000:0000:0000:0000:ffff:0a4d:0102 rem_addr 0x0a4d0102, "
		"users 2\n"
		"  QP  STATE       QPN  OUTST  CONN_COUNT  RECOVERY  POST  "
		"POST_FAIL  POST_BYTES  CQE  CQE_FAIL  RECV  RECV_BYTES  "
		"RECV_FAIL\n"
		"   0  connected    17      0           1         0   100  "
		"        0      409600  100         0    50        1024  "
		"        0\n"
		"   1  recovering   18      3           2         1     7  "
		"        1       28672    4         0     0           0  "
		"        0\n"));
	EXPECT_THAT(o, HasSubstr(
		"\nProcesses\n"
		"PID   JOB  RV_INDEX  CONNS  RING  OVERFLOW\n"
		"1234    3         0      1   192         0\n"
		"1240    3         1      1     0         0\n"
		"1234    5         0      0   192         2\n"));
	// Sizes in IEC units, the hit ratio, "-" for what a line lacks.
	EXPECT_THAT(o, HasSubstr(
		"\nMR cache\n"
		"PID   JOB    SIZE   LIMIT  COUNT  INUSE  HIT  MISS   HIT%  "
		"FULL  FAILED  EVICT  REMOVE\n"
		"1234    3   64KiB  256MiB      1      1    3     1  75.0%  "
		"   0       0      0       0\n"
		"1240    3  1.5MiB    1GiB      2      0    0     0      -  "
		"   -       -      -       -\n"
		"1234    5      0B  256MiB      0      0    0     0      -  "
		"   -       -      -       -\n"));
	EXPECT_THAT(o, HasSubstr(
		"\nWrite events\n"
		"PID   JOB  SEND_CQE  SEND_FAIL  SEND_BYTES  RECV_CQE  "
		"RECV_FAIL  RECV_BYTES\n"
		"1234    3       100          0      409600        50  "
		"        0        1024\n"));
	EXPECT_EQ(o.back(), '\n');
	// Lines end without padding.
	EXPECT_THAT(o, Not(HasSubstr(" \n")));
}

TEST_F(RvStat, Json)
{
	JsonValue v = json({});

	ASSERT_TRUE(v.is_object());
	EXPECT_THAT(members(v), ElementsAre("devices", "jobs", "conns", "procs"));
	EXPECT_THAT(column(v.at("devices"), "device"),
		    ElementsAre("rxe0", "rxe1", "rxe2"));
	EXPECT_THAT(column(v.at("jobs"), "job"), ElementsAre("3", "5"));
	EXPECT_THAT(column(v.at("conns"), "qp"), ElementsAre("0", "1"));
	EXPECT_THAT(column(v.at("procs"), "pid"),
		    ElementsAre("1234", "1240", "1234"));

	// Every field in its order, unknown ones included; decimal numbers
	// as numbers, hex, GIDs and names as strings.
	const JsonValue &j = v.at("jobs").at(std::size_t{0});
	EXPECT_THAT(members(j),
		    ElementsAre("job", "device", "port", "gid_index", "uid",
				"job_key", "service_id", "num_conn",
				"index_bits", "q_depth", "reconnect_timeout",
				"hb_interval", "procs", "conns", "dead",
				"future_count"));
	EXPECT_EQ(j.at("job").as_uint(), 3u);
	EXPECT_EQ(j.at("device").as_string(), "rxe0");
	EXPECT_EQ(j.at("q_depth").as_uint(), 4000u);
	// All decimal digits, but a hex key: still a string.
	EXPECT_EQ(j.at("job_key").as_string(), "00112233445566778899aabbccddeeff");
	EXPECT_EQ(j.at("service_id").as_string(), "0x1000125500000001");
	EXPECT_EQ(j.at("future_count").as_uint(), 42u);
	EXPECT_EQ(v.at("jobs").at(1).at("job_key").as_string(), "0x1234");

	const JsonValue &q = v.at("conns").at(1);
	EXPECT_EQ(q.at("rem_addr").as_string(), "0x0a4d0102");
	EXPECT_EQ(q.at("dgid").as_string(),
		  "0000:0000:0000:0000:0000:ffff:0a4d:0102");
	EXPECT_EQ(q.at("state").as_string(), "recovering");
	EXPECT_EQ(q.at("post_write_bytes").as_uint(), 28672u);
	EXPECT_EQ(q.at("new_state_detail").as_string(), "xyz");
	EXPECT_EQ(v.at("conns").at(std::size_t{0}).at("req_sent").as_uint(), 1u);

	const JsonValue &p = v.at("procs").at(std::size_t{0});
	EXPECT_EQ(p.size(), 22u);
	EXPECT_EQ(p.at("cache_limit").as_uint(), 268435456u);
	EXPECT_EQ(p.at("cache_hit").as_uint(), 3u);
	EXPECT_EQ(p.at("recv_write_bytes").as_uint(), 1024u);
}

TEST_F(RvStat, PidSelectsItsAttachmentsJobsConnsDevices)
{
	JsonValue v = json({"--pid", "1234"});

	// Attached to jobs 3 and 5.
	EXPECT_THAT(column(v.at("procs"), "job"), ElementsAre("3", "5"));
	EXPECT_THAT(column(v.at("procs"), "pid"), ElementsAre("1234", "1234"));
	EXPECT_THAT(column(v.at("jobs"), "job"), ElementsAre("3", "5"));
	EXPECT_THAT(column(v.at("conns"), "job"), ElementsAre("3", "3"));
	EXPECT_THAT(column(v.at("devices"), "device"), ElementsAre("rxe0", "rxe1"));

	v = json({"--pid", "1240"});
	EXPECT_THAT(column(v.at("procs"), "rv_index"), ElementsAre("1"));
	EXPECT_THAT(column(v.at("jobs"), "job"), ElementsAre("3"));
	EXPECT_EQ(v.at("conns").size(), 2u);
	EXPECT_THAT(column(v.at("devices"), "device"), ElementsAre("rxe0"));

	ProcessResult r = run({"-p", "1240", "-s", "procs"});
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_THAT(r.out, HasSubstr("\n1240    3         1      1     0         0\n"));
	EXPECT_THAT(r.out, Not(HasSubstr("1234")));
}

// With conn_ids, --pid shows only the connections its processes hold.
TEST_F(RvStat, PidSelectsTheConnectionsItHolds)
{
	write("conns", std::string(conns_txt) +
			       "job=3 conn=2 qp=0 rem_addr=0x0a4d0103 state=waiting qpn=19 users=1\n");
	write("procs", "job=3 pid=1234 rv_index=0 conn_ids=1,2 conns=2\n"
		       "job=3 pid=1240 rv_index=1 conn_ids=2 conns=1\n"
		       "job=3 pid=1250 rv_index=2 conn_ids= conns=0\n");
	JsonValue v = json({"--pid", "1234"});
	EXPECT_THAT(column(v.at("conns"), "conn"), ElementsAre("1", "1", "2"));
	v = json({"--pid", "1240"});
	EXPECT_THAT(column(v.at("conns"), "conn"), ElementsAre("2"));
	EXPECT_THAT(column(v.at("jobs"), "job"), ElementsAre("3"));
	v = json({"--pid", "1250"});
	EXPECT_EQ(v.at("conns").size(), 0u);
	EXPECT_THAT(column(v.at("procs"), "conn_ids"), ElementsAre(""));
	// --job still shows every connection of the job.
	v = json({"--job", "3"});
	EXPECT_EQ(v.at("conns").size(), 3u);
}

TEST_F(RvStat, JobSelectsItsProcsConnsDevice)
{
	JsonValue v = json({"--job", "5"});

	EXPECT_THAT(column(v.at("jobs"), "job"), ElementsAre("5"));
	EXPECT_THAT(column(v.at("procs"), "pid"), ElementsAre("1234"));
	EXPECT_EQ(v.at("conns").size(), 0u);
	EXPECT_THAT(column(v.at("devices"), "device"), ElementsAre("rxe1"));

	v = json({"-J", "3"});
	EXPECT_THAT(column(v.at("procs"), "pid"), ElementsAre("1234", "1240"));
	EXPECT_EQ(v.at("conns").size(), 2u);

	// Both: the process's attachment to that job.
	v = json({"--job", "3", "--pid", "1234"});
	ASSERT_EQ(v.at("procs").size(), 1u);
	EXPECT_EQ(v.at("procs").at(std::size_t{0}).at("job").as_uint(), 3u);
	EXPECT_THAT(column(v.at("jobs"), "job"), ElementsAre("3"));
}

TEST_F(RvStat, NothingMatchedExits1)
{
	for (const auto &[args, msg] :
	     std::vector<std::pair<std::vector<std::string>, std::string>>{
		     {{"--pid", "999"}, "no process 999 attached to rv"},
		     {{"--pid", "1240", "--job", "5"},
		      "no process 1240 attached to rv in job 5"},
		     {{"--job", "4"}, "no job 4"},
		     {{"--json", "--job", "4"}, "no job 4"}}) {
		SCOPED_TRACE(::testing::PrintToString(args));
		ProcessResult r = run(args);
		ASSERT_TRUE(r.exited);
		EXPECT_EQ(r.exit_code, 1);
		EXPECT_EQ(r.out, "");
		EXPECT_EQ(r.err, "rvstat: " + msg + "\n");
	}
}

TEST_F(RvStat, Sections)
{
	JsonValue v = json({"--section", "procs,devices"});
	EXPECT_THAT(members(v), ElementsAre("devices", "procs"));

	v = json({"-s", "conns", "-s", "jobs"});
	EXPECT_THAT(members(v), ElementsAre("jobs", "conns"));

	ProcessResult r = run({"--section", "devices"});
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.out, "Devices\nDEVICE  JOBS\nrxe0       1\nrxe1       1\n"
			 "rxe2       0\n");

	r = run({"--section", "jobs,conns"});
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_THAT(r.out, StartsWith("Jobs\n"));
	EXPECT_THAT(r.out, HasSubstr("\n\nConnections\n"));
	EXPECT_THAT(r.out, Not(HasSubstr("Devices")));
	EXPECT_THAT(r.out, Not(HasSubstr("Processes")));
}

TEST_F(RvStat, EmptyFiles)
{
	for (const char *f : {"devices", "jobs", "conns", "procs"})
		write(f, "");

	ProcessResult r = run({});
	ASSERT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.out, "Devices\n(none)\n\nJobs\n(none)\n\nConnections\n"
			 "(none)\n\nProcesses\n(none)\n");

	JsonValue v = json({});
	for (const char *k : {"devices", "jobs", "conns", "procs"}) {
		ASSERT_TRUE(v.at(k).is_array()) << k;
		EXPECT_EQ(v.at(k).size(), 0u) << k;
	}
}

// The debugfs format is not stable (docs/observability.md): a key rvstat
// does not know changes nothing in its text, is passed through by
// --json, and is never an error.
TEST_F(RvStat, UnknownKeysTolerated)
{
	write("devices", "device=rxe0 jobs=1 zz_new=7\n");
	write("jobs", "zz_first=x job=3 device=rxe0 port=1 zz_new=0x10\n");
	write("conns", "job=3 conn=1 qp=0 state=connected zz_new=1\n");
	write("procs", "job=3 pid=1234 zz_new= cache_hit=3\n");

	ProcessResult r = run({});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.err, "");
	EXPECT_THAT(r.out, Not(HasSubstr("zz_")));
	EXPECT_THAT(r.out, HasSubstr("job 3: rxe0 port 1 gid_index -, uid -\n"));

	JsonValue v = json({});
	EXPECT_EQ(v.at("devices").at(std::size_t{0}).at("zz_new").as_uint(), 7u);
	const JsonValue &j = v.at("jobs").at(std::size_t{0});
	EXPECT_THAT(members(j), ElementsAre("zz_first", "job", "device", "port",
					    "zz_new"));
	EXPECT_EQ(j.at("zz_new").as_string(), "0x10");
	EXPECT_EQ(v.at("conns").at(std::size_t{0}).at("zz_new").as_uint(), 1u);
	EXPECT_EQ(v.at("procs").at(std::size_t{0}).at("zz_new").as_string(), "");
}

// A line with nothing but its ids (every other key removed by a later
// module): shown with "-" in the text, the keys absent from --json, exit
// status 0 and no warning.
TEST_F(RvStat, MissingKeysShownAsAbsent)
{
	write("devices", "device=rxe0\n");
	write("jobs", "job=3\n");
	write("conns", "job=3 conn=1 qp=0\n");
	write("procs", "job=3 pid=1234\n");

	ProcessResult r = run({});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 0) << r.err;
	EXPECT_EQ(r.err, "");
	EXPECT_EQ(r.out,
		  "Devices\n"
		  "DEVICE  JOBS\n"
		  "rxe0       -\n"
		  "\n"
		  "Jobs\n"
		  "job 3: - port - gid_index -, uid -\n"
		  "  job_key - service_id -\n"
		  "  num_conn - index_bits - q_depth - reconnect_timeout -s "
		  "hb_interval -ms\n"
		  "  procs - conns -\n"
		  "\n"
		  "Connections\n"
		  "job 3 conn 1: client, dgid - rem_addr -, users -\n"
		  "  QP  STATE  QPN  OUTST  CONN_COUNT  RECOVERY  POST  POST_FAIL  "
		  "POST_BYTES  CQE  CQE_FAIL  RECV  RECV_BYTES  RECV_FAIL\n"
		  "   0  -        -      -           -         -     -          -  "
		  "         -    -         -     -           -          -\n"
		  "\n"
		  "Processes\n"
		  "PID   JOB  RV_INDEX  CONNS  RING  OVERFLOW\n"
		  "1234    3         -      -     -         -\n"
		  "\n"
		  "MR cache\n"
		  "PID   JOB  SIZE  LIMIT  COUNT  INUSE  HIT  MISS  HIT%  FULL  "
		  "FAILED  EVICT  REMOVE\n"
		  "1234    3     -      -      -      -    -     -     -     -  "
		  "     -      -       -\n"
		  "\n"
		  "Write events\n"
		  "PID   JOB  SEND_CQE  SEND_FAIL  SEND_BYTES  RECV_CQE  "
		  "RECV_FAIL  RECV_BYTES\n"
		  "1234    3         -          -           -         -  "
		  "        -           -\n");

	JsonValue v = json({});
	EXPECT_THAT(members(v.at("devices").at(std::size_t{0})),
		    ElementsAre("device"));
	EXPECT_THAT(members(v.at("jobs").at(std::size_t{0})), ElementsAre("job"));
	EXPECT_THAT(members(v.at("conns").at(std::size_t{0})),
		    ElementsAre("job", "conn", "qp"));
	EXPECT_THAT(members(v.at("procs").at(std::size_t{0})),
		    ElementsAre("job", "pid"));

	// --pid and --job still select by the ids; the job names no device,
	// so none is selected with it.
	r = run({"--pid", "1234"});
	EXPECT_EQ(r.exit_code, 0) << r.err;
	EXPECT_THAT(r.out, HasSubstr("job 3 conn 1: client"));
	r = run({"--job", "3", "--json"});
	EXPECT_EQ(r.exit_code, 0) << r.err;
	v = JsonValue::parse(r.out);
	EXPECT_EQ(v.at("jobs").size(), 1u);
	EXPECT_EQ(v.at("devices").size(), 0u);
}

TEST_F(RvStat, MalformedLinesSkippedWithWarning)
{
	write("procs", std::string(procs_txt) + "job=3 pid=4321 junk\n" +
			       "pid=4322 rv_index=2\n");

	for (bool as_json : {false, true}) {
		SCOPED_TRACE(as_json ? "json" : "text");
		std::vector<std::string> args;
		if (as_json)
			args.push_back("--json");
		ProcessResult r = run(args);
		ASSERT_TRUE(r.exited);
		EXPECT_EQ(r.exit_code, 0);
		EXPECT_EQ(r.err, "rvstat: warning: " + dir_ +
					 "/procs:4: field 3 'junk' has no '='; "
					 "line skipped\n"
					 "rvstat: warning: " + dir_ +
					 "/procs:5: no 'job'; line skipped\n");
		EXPECT_THAT(r.out, Not(HasSubstr("4321")));
		EXPECT_THAT(r.out, Not(HasSubstr("4322")));
		if (as_json) {
			EXPECT_EQ(JsonValue::parse(r.out).at("procs").size(), 3u);
		}
	}

	// The skipped process is not found.
	ProcessResult r = run({"--pid", "4321"});
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_THAT(r.err, HasSubstr("rvstat: no process 4321 attached to rv\n"));
}

TEST_F(RvStat, StringsEscapedInJson)
{
	write("devices", "device=rx\"e\\0 jobs=1 odd=\x01\xff\n");

	JsonValue v = json({"-s", "devices"});
	const JsonValue &d = v.at("devices").at(std::size_t{0});
	EXPECT_EQ(d.at("device").as_string(), "rx\"e\\0");
	EXPECT_EQ(d.at("odd").as_string(), "\x01\xef\xbf\xbd");	// U+FFFD
}

TEST_F(RvStat, WriteErrorExits1)
{
	if (::access("/dev/full", W_OK) != 0)
		GTEST_SKIP() << "no /dev/full";
	ProcessResult r = run_process(
		{"/bin/sh", "-c", std::string("exec '") + RVSTAT_PATH +
					  "' -D '" + dir_ + "' >/dev/full"});
	ASSERT_TRUE(r.exited);
	EXPECT_EQ(r.exit_code, 1);
	EXPECT_THAT(r.err, HasSubstr("rvstat: write error: "));
}
