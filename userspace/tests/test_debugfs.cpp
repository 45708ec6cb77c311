// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::debugfs: the parser of the module's debugfs lines, and reading a
// fake /sys/kernel/debug/rv directory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <toolkit/debugfs.hpp>

#include "support/subprocess.hpp"

namespace fs = std::filesystem;
namespace dbg = rv::debugfs;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

// The errno a call throws as std::system_error (0 if it does not), and
// its what().
template <typename F>
std::pair<int, std::string> thrown(F f)
{
	try {
		f();
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().category(), std::generic_category());
		return {e.code().value(), e.what()};
	}
	return {0, ""};
}

std::vector<std::string> keys(const dbg::Record &r)
{
	std::vector<std::string> k;
	for (const dbg::Field &f : r.fields())
		k.push_back(f.key);
	return k;
}

class DebugfsDir : public testing::Test {
protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/rv-debugfs-XXXXXX";
		ASSERT_NE(::mkdtemp(tmpl), nullptr);
		root_ = tmpl;
		dir_ = root_ / "rv";
		fs::create_directory(dir_);
		for (const char *f : {"devices", "jobs", "conns", "procs"})
			write(f, "");
	}
	void TearDown() override
	{
		fs::permissions(dir_, fs::perms::owner_all,
				fs::perm_options::add);
		fs::remove_all(root_);
	}

	void write(const std::string &file, const std::string &text)
	{
		std::ofstream(dir_ / file) << text;
	}

	fs::path root_;
	fs::path dir_;
};

} // namespace

TEST(Debugfs, ParseU64)
{
	EXPECT_EQ(dbg::parse_u64("0"), 0u);
	EXPECT_EQ(dbg::parse_u64("4000"), 4000u);
	EXPECT_EQ(dbg::parse_u64("007"), 7u);
	EXPECT_EQ(dbg::parse_u64("0x1000125500000001"), 0x1000125500000001u);
	EXPECT_EQ(dbg::parse_u64("0XfF"), 255u);
	EXPECT_EQ(dbg::parse_u64("18446744073709551615"), UINT64_MAX);
	EXPECT_EQ(dbg::parse_u64("0xffffffffffffffff"), UINT64_MAX);
	for (const char *bad : {"", "0x", "-1", "+1", " 1", "1 ", "12a", "ff",
				"0x1g", "18446744073709551616",
				"0x10000000000000000", "1.5"})
		EXPECT_EQ(dbg::parse_u64(bad), std::nullopt) << "'" << bad << "'";
}

TEST(Debugfs, TableNames)
{
	for (dbg::Table t : dbg::tables)
		EXPECT_EQ(dbg::table_named(dbg::name(t)), t);
	EXPECT_EQ(dbg::name(dbg::Table::conns), "conns");
	EXPECT_EQ(dbg::table_named("proc"), std::nullopt);
	EXPECT_EQ(dbg::table_named(""), std::nullopt);
	EXPECT_THAT(dbg::id_keys(dbg::Table::conns),
		    ElementsAre("job", "conn", "qp"));
	EXPECT_THAT(dbg::id_keys(dbg::Table::procs), ElementsAre("job", "pid"));
}

TEST(Debugfs, FieldsInOrderUnknownKeysKept)
{
	std::vector<dbg::Warning> w;
	auto recs = dbg::parse("job=3 device=rxe0 newkey=0x2a port=1 "
			       "later=abc job_key=00ff\n",
			       dbg::Table::jobs, &w);

	ASSERT_EQ(recs.size(), 1u);
	EXPECT_TRUE(w.empty());
	const dbg::Record &r = recs[0];
	EXPECT_THAT(keys(r), ElementsAre("job", "device", "newkey", "port",
					 "later", "job_key"));
	EXPECT_EQ(r.line(), 1u);
	EXPECT_TRUE(r.has("newkey"));
	EXPECT_FALSE(r.has("dead"));
	EXPECT_EQ(r.get("device"), "rxe0");
	EXPECT_EQ(r.get("later"), "abc");
	EXPECT_EQ(r.get("dead"), std::nullopt);
	ASSERT_NE(r.find("job_key"), nullptr);
	EXPECT_EQ(*r.find("job_key"), "00ff");
	EXPECT_EQ(r.find("nope"), nullptr);
	EXPECT_EQ(r.get_u64("job"), 3u);
	EXPECT_EQ(r.get_u64("newkey"), 42u);
	EXPECT_EQ(r.get_u64("later"), std::nullopt);	// not a number
	EXPECT_EQ(r.get_u64("dead"), std::nullopt);	// absent
	EXPECT_EQ(r.u64_or("dead", 9), 9u);
	EXPECT_EQ(r.u64_or("port", 9), 1u);
}

TEST(Debugfs, LayoutTolerated)
{
	std::vector<dbg::Warning> w;
	// Blank lines, runs of blanks, trailing blanks, '=' in a value, an
	// empty value, no newline at the end.
	auto recs = dbg::parse("\n"
			       "device=rxe0  jobs=1 \n"
			       "   \n"
			       "device=rxe1\tjobs=0 odd=a=b empty=\n"
			       "device=rxe2 jobs=2",
			       dbg::Table::devices, &w);

	EXPECT_TRUE(w.empty()) << w.front().to_string();
	ASSERT_EQ(recs.size(), 3u);
	EXPECT_EQ(recs[0].line(), 2u);
	EXPECT_THAT(keys(recs[0]), ElementsAre("device", "jobs"));
	EXPECT_EQ(recs[1].line(), 4u);
	EXPECT_EQ(recs[1].get("odd"), "a=b");
	EXPECT_EQ(recs[1].get("empty"), "");
	EXPECT_EQ(recs[1].get_u64("empty"), std::nullopt);
	EXPECT_EQ(recs[2].line(), 5u);
	EXPECT_EQ(recs[2].get_u64("jobs"), 2u);

	EXPECT_TRUE(dbg::parse("", dbg::Table::procs, &w).empty());
	EXPECT_TRUE(w.empty());
}

// The format is not stable: a line may lack every key but its ids, and
// hold keys no reader knows; both parse without a warning.
TEST(Debugfs, OnlyIdKeysRequired)
{
	std::vector<dbg::Warning> w;
	const std::tuple<dbg::Table, const char *, std::size_t> lines[] = {
		{dbg::Table::devices, "device=rxe0\n", 1},
		{dbg::Table::jobs, "job=3\n", 1},
		{dbg::Table::conns, "qp=0 conn=1 job=3\n", 3},
		{dbg::Table::procs, "pid=1234 job=3 zz_new=1\n", 3},
	};

	for (const auto &[t, text, n] : lines) {
		SCOPED_TRACE(text);
		auto recs = dbg::parse(text, t, &w);
		ASSERT_EQ(recs.size(), 1u);
		EXPECT_EQ(recs[0].fields().size(), n);
		EXPECT_FALSE(recs[0].has("state"));
		EXPECT_EQ(recs[0].get_u64("cache_hit"), std::nullopt);
	}
	EXPECT_TRUE(w.empty()) << w.front().to_string();
}

TEST(Debugfs, MalformedLinesSkippedWithWarnings)
{
	std::vector<dbg::Warning> w;
	auto recs = dbg::parse("job=1 pid=10 rv_index=0\n"
			       "job=1 pid=11 garbage\n"
			       "job=1 =5 pid=12\n"
			       "job=1 pid=13 pid=14\n"
			       "pid=15 rv_index=0\n"
			       "job=x pid=16\n"
			       "job=1 pid=0x11 rv_index=1\n"
			       "job=1 pid=-17\n",
			       dbg::Table::procs, &w, "/d/procs");

	ASSERT_EQ(recs.size(), 2u);
	EXPECT_EQ(recs[0].get_u64("pid"), 10u);
	EXPECT_EQ(recs[1].get_u64("pid"), 0x11u);	// hex ids are numbers too
	EXPECT_EQ(recs[1].line(), 7u);

	std::vector<std::string> msgs;
	for (const dbg::Warning &x : w)
		msgs.push_back(x.to_string());
	EXPECT_THAT(msgs,
		    ElementsAre("/d/procs:2: field 3 'garbage' has no '='; line skipped",
				"/d/procs:3: field 2 '=5' has an empty key; line skipped",
				"/d/procs:4: key 'pid' given twice; line skipped",
				"/d/procs:5: no 'job'; line skipped",
				"/d/procs:6: 'job' is not a number: 'x'; line skipped",
				"/d/procs:8: 'pid' is not a number: '-17'; line skipped"));
	EXPECT_EQ(w[0].file, "/d/procs");
	EXPECT_EQ(w[0].line, 2u);
}

TEST(Debugfs, IdKeysOfEachTable)
{
	std::vector<dbg::Warning> w;

	EXPECT_EQ(dbg::parse("device= jobs=1\njobs=1\n", dbg::Table::devices,
			     &w).size(), 0u);
	EXPECT_EQ(dbg::parse("job=1 conn=2\njob=1 qp=0\njob=1 conn=2 qp=0\n",
			     dbg::Table::conns, &w).size(), 1u);
	EXPECT_EQ(dbg::parse("device=rxe0\njob=7\n", dbg::Table::jobs, &w)
			  .size(), 1u);
	ASSERT_EQ(w.size(), 5u);
	// Without a file name the warnings name the table.
	EXPECT_EQ(w[0].to_string(),
		  "devices:1: 'device' is not a name: ''; line skipped");
	EXPECT_EQ(w[1].to_string(), "devices:2: no 'device'; line skipped");
	EXPECT_EQ(w[2].to_string(), "conns:1: no 'qp'; line skipped");
	EXPECT_EQ(w[3].to_string(), "conns:2: no 'conn'; line skipped");
	EXPECT_EQ(w[4].to_string(), "jobs:1: no 'job'; line skipped");

	// Without a warning list the lines are skipped all the same.
	EXPECT_TRUE(dbg::parse("x y z\n", dbg::Table::jobs).empty());
}

TEST(Debugfs, LongFieldQuotedShort)
{
	std::vector<dbg::Warning> w;
	std::string junk(200, 'z');

	EXPECT_TRUE(dbg::parse("job=1 " + junk, dbg::Table::jobs, &w).empty());
	ASSERT_EQ(w.size(), 1u);
	EXPECT_EQ(w[0].reason, "field 2 '" + std::string(40, 'z') +
				       "...' has no '='; line skipped");
}

TEST_F(DebugfsDir, ReadAllFour)
{
	write("devices", "device=rxe0 jobs=1\ndevice=rxe1 jobs=0\n");
	write("jobs", "job=3 device=rxe0 port=1 extra=1\n");
	write("conns", "job=3 conn=1 qp=0 state=connected\n"
		       "job=3 conn=1 qp=1 state=waiting\n");
	write("procs", "job=3 pid=100 rv_index=0\nbad\n");

	dbg::Snapshot s = dbg::read(dir_);
	ASSERT_EQ(s.devices.size(), 2u);
	ASSERT_EQ(s.jobs.size(), 1u);
	ASSERT_EQ(s.conns.size(), 2u);
	ASSERT_EQ(s.procs.size(), 1u);
	EXPECT_EQ(s.devices[1].get("device"), "rxe1");
	EXPECT_EQ(s.jobs[0].get("extra"), "1");
	EXPECT_EQ(s.conns[1].get("state"), "waiting");
	EXPECT_EQ(s[dbg::Table::procs][0].get_u64("pid"), 100u);
	EXPECT_EQ(&s[dbg::Table::devices], &s.devices);
	EXPECT_EQ(&s[dbg::Table::jobs], &s.jobs);
	EXPECT_EQ(&s[dbg::Table::conns], &s.conns);
	ASSERT_EQ(s.warnings.size(), 1u);
	EXPECT_EQ(s.warnings[0].to_string(),
		  (dir_ / "procs").string() +
			  ":2: field 1 'bad' has no '='; line skipped");
}

TEST_F(DebugfsDir, EmptyFiles)
{
	dbg::Snapshot s = dbg::read(dir_);
	for (dbg::Table t : dbg::tables)
		EXPECT_TRUE(s[t].empty()) << dbg::name(t);
	EXPECT_TRUE(s.warnings.empty());
}

TEST_F(DebugfsDir, MissingDirIsEnoent)
{
	fs::path missing = root_ / "nothere";
	auto [err, what] = thrown([&] { (void)dbg::read(missing); });

	EXPECT_EQ(err, ENOENT);
	EXPECT_EQ(what, missing.string() + ": No such file or directory");
}

TEST_F(DebugfsDir, MissingFileIsEnoentNamingIt)
{
	fs::remove(dir_ / "conns");
	auto [err, what] = thrown([&] { (void)dbg::read(dir_); });

	EXPECT_EQ(err, ENOENT);
	EXPECT_EQ(what, (dir_ / "conns").string() + ": No such file or directory");
}

TEST_F(DebugfsDir, NotADirectory)
{
	auto [err, what] = thrown([&] { (void)dbg::read(dir_ / "jobs"); });

	EXPECT_EQ(err, ENOTDIR);
}

// Another user than root cannot read debugfs; when the test runs as
// root, a child drops to nobody.
TEST_F(DebugfsDir, UnreadableIsEacces)
{
	fs::permissions(dir_, fs::perms::none);
	int err = 0;
	if (::geteuid() != 0) {
		std::string what;
		std::tie(err, what) = thrown([&] { (void)dbg::read(dir_); });
		EXPECT_EQ(what, dir_.string() + ": Permission denied");
	} else {
		pid_t pid = ::fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			if (::setgroups(0, nullptr) != 0 ||
			    ::setresgid(65534, 65534, 65534) != 0 ||
			    ::setresuid(65534, 65534, 65534) != 0)
				::_exit(255);
			try {
				(void)dbg::read(dir_);
			} catch (const std::system_error &e) {
				::_exit(e.code().value());
			}
			::_exit(0);
		}
		rv::test::ExitStatus st = rv::test::wait_exit(pid);
		ASSERT_TRUE(st.exited);
		ASSERT_NE(st.exit_code, 255) << "could not become nobody";
		err = st.exit_code;
	}
	EXPECT_EQ(err, EACCES);
	EXPECT_EQ(dbg::hint(err, dir_), "run as root");
}

TEST(Debugfs, Hints)
{
	EXPECT_EQ(dbg::hint(EACCES, "/x/rv"), "run as root");
	EXPECT_EQ(dbg::hint(EPERM), "run as root");
	EXPECT_EQ(dbg::hint(EIO, "/x/rv"), "");
	EXPECT_EQ(dbg::hint(ENOENT, "/tmp/nonexistent-rv/rv"),
		  "is debugfs mounted and rv loaded? mount -t debugfs none "
		  "/sys/kernel/debug; modprobe rv");

	// The default directory: what is missing depends on the host; the
	// advice names a command either way.
	std::string h = dbg::hint(ENOENT);
	EXPECT_TRUE(h.find("mount -t debugfs none /sys/kernel/debug") !=
			    std::string::npos ||
		    h.find("modprobe rv") != std::string::npos ||
		    h == "rv is loaded but has no debugfs directory")
		<< h;
	EXPECT_EQ(dbg::hint(ENOENT, "/sys/kernel/debug/rv/"), h);
	EXPECT_EQ(dbg::hint(ENOENT, "/sys/kernel/debug/./rv"), h);
}
