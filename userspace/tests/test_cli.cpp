// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The command line every program parses (tools/cli.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"

using namespace rv::cli;
using ::testing::HasSubstr;

namespace {

// An argv for parse(): "prog" and args, writable as getopt_long wants.
class Argv {
public:
	Argv(std::initializer_list<std::string> args) : s_{"prog"}
	{
		s_.insert(s_.end(), args.begin(), args.end());
		for (auto &a : s_)
			p_.push_back(a.data());
		p_.push_back(nullptr);
	}
	Argv(const Argv &) = delete;
	Argv &operator=(const Argv &) = delete;

	int argc() const { return static_cast<int>(s_.size()); }
	char **argv() { return p_.data(); }

private:
	std::vector<std::string> s_;
	std::vector<char *> p_;
};

// The message of the UsageError f throws; "" if it throws none.
template <typename F>
std::string usage_error(F &&f)
{
	try {
		f();
	} catch (const UsageError &e) {
		return e.what();
	}
	return "";
}

struct Opts {
	bool json = false;
	unsigned procs = 4;
	std::uint64_t bytes = 0;
	double secs = 0;
	std::string device = "dflt";
	std::optional<std::string> progress;
	bool progress_seen = false;
};

Parsed parse_into(Opts &o, Argv a, std::vector<std::string> *operands = nullptr)
{
	const Option table[] = {
		flag("json", 'j', o.json),
		number("procs", 'n', o.procs, 1, 64),
		size("bytes", 0, o.bytes),
		seconds("seconds", 's', o.secs, 0, 3600),
		text("device", 'd', o.device),
		optional_value("progress", [&o](std::optional<std::string_view> v) {
			o.progress_seen = true;
			if (v)
				o.progress = std::string(*v);
		}),
	};
	return parse(a.argc(), a.argv(), table, operands);
}

} // namespace

TEST(CliUint, DecimalAndHex)
{
	EXPECT_EQ(parse_uint("--n", "0"), 0u);
	EXPECT_EQ(parse_uint("--n", "10000"), 10000u);
	EXPECT_EQ(parse_uint("--n", "010"), 10u);
	EXPECT_EQ(parse_uint("--n", "0x1f"), 31u);
	EXPECT_EQ(parse_uint("--n", "0X10"), 16u);
	EXPECT_EQ(parse_uint("--n", "18446744073709551615"), UINT64_MAX);
}

TEST(CliUint, Range)
{
	EXPECT_EQ(parse_uint("--procs", "1", 1, 64), 1u);
	EXPECT_EQ(parse_uint("--procs", "64", 1, 64), 64u);
	EXPECT_EQ(usage_error([] { (void)parse_uint("--procs", "65", 1, 64); }),
		  "invalid --procs '65': not in 1..64");
	EXPECT_EQ(usage_error([] { (void)parse_uint("--procs", "0", 1, 64); }),
		  "invalid --procs '0': not in 1..64");
}

TEST(CliUint, BadInput)
{
	for (const char *bad : {"", "+5", "-1", "5x", "x5", " 5", "5 ", "0x",
				"0xg", "1.5", "18446744073709551616"})
		EXPECT_THAT(usage_error([bad] { (void)parse_uint("--calls", bad); }),
			    HasSubstr(std::string("invalid --calls '") + bad +
				      "': not a whole number"))
			<< bad;
}

TEST(CliSize, Suffixes)
{
	EXPECT_EQ(parse_size("--b", "4096"), 4096u);
	EXPECT_EQ(parse_size("--b", "4K"), 4096u);
	EXPECT_EQ(parse_size("--b", "4k"), 4096u);
	EXPECT_EQ(parse_size("--b", "4KiB"), 4096u);
	EXPECT_EQ(parse_size("--b", "64KB"), 65536u);
	EXPECT_EQ(parse_size("--b", "1M"), 1048576u);
	EXPECT_EQ(parse_size("--b", "4MiB"), 4194304u);
	EXPECT_EQ(parse_size("--b", "2G"), 2147483648u);
	EXPECT_EQ(parse_size("--b", "100B"), 100u);
	EXPECT_EQ(parse_size("--b", "0", 0), 0u);
}

TEST(CliSize, BadInputAndRange)
{
	for (const char *bad : {"", "K", "-1", "4X", "4KX", "4 K", "4Kib2", "0x10",
				"99999999999999999999"})
		EXPECT_THAT(usage_error([bad] { (void)parse_size("--bytes", bad); }),
			    HasSubstr("': not a size"))
			<< bad;
	for (const char *big : {"0", "0K", "17179869184G"})
		EXPECT_THAT(usage_error([big] { (void)parse_size("--bytes", big); }),
			    HasSubstr("': not in 1.."))
			<< big;
	EXPECT_EQ(usage_error([] { (void)parse_size("--sizes", "2G", 1, 1 << 30); }),
		  "invalid --sizes '2G': not in 1..1073741824 bytes");
}

TEST(CliSize, List)
{
	EXPECT_EQ(parse_size_list("--sizes", "4K,64K,1M,4M"),
		  (std::vector<std::uint64_t>{4096, 65536, 1 << 20, 4 << 20}));
	EXPECT_EQ(parse_size_list("--sizes", "8K"), (std::vector<std::uint64_t>{8192}));
	for (const char *bad : {"", ",", "4K,", ",4K", "4K,,8K", "4K;8K"})
		EXPECT_THAT(usage_error([bad] { (void)parse_size_list("--sizes", bad); }),
			    HasSubstr("invalid --sizes"))
			<< bad;
}

TEST(CliSeconds, ValuesAndBadInput)
{
	EXPECT_EQ(parse_seconds("--s", "30"), 30.0);
	EXPECT_EQ(parse_seconds("--s", "0.5"), 0.5);
	EXPECT_EQ(parse_seconds("--s", "0"), 0.0);
	for (const char *bad : {"", "x", "1s", "-1", "+1", " 1", "nan", "inf", "1e999"})
		EXPECT_THAT(usage_error([bad] { (void)parse_seconds("--s", bad); }),
			    HasSubstr("not a number of seconds"))
			<< bad;
	EXPECT_EQ(usage_error([] { (void)parse_seconds("--hang", "0.5", 1, 60); }),
		  "invalid --hang '0.5': not in 1..60 seconds");
}

TEST(CliSplit, KeepsEmptyItems)
{
	EXPECT_EQ(split("a,b"), (std::vector<std::string_view>{"a", "b"}));
	EXPECT_EQ(split(""), (std::vector<std::string_view>{""}));
	EXPECT_EQ(split("a:,b", ':'), (std::vector<std::string_view>{"a", ",b"}));
}

TEST(CliParse, LongShortAndEqualsForms)
{
	Opts o;
	EXPECT_EQ(parse_into(o, {"-j", "--procs=8", "--bytes", "1M", "-s", "2.5",
				 "-d", "mlx5_0", "--progress"}),
		  Parsed::run);
	EXPECT_TRUE(o.json);
	EXPECT_EQ(o.procs, 8u);
	EXPECT_EQ(o.bytes, 1u << 20);
	EXPECT_EQ(o.secs, 2.5);
	EXPECT_EQ(o.device, "mlx5_0");
	EXPECT_TRUE(o.progress_seen);
	EXPECT_FALSE(o.progress);

	Opts p;
	EXPECT_EQ(parse_into(p, {"-n3", "--progress=7", "--proc", "5"}), Parsed::run);
	EXPECT_EQ(p.procs, 5u);	// abbreviated, and the last one counts
	EXPECT_EQ(p.progress, "7");
	EXPECT_FALSE(p.json);
}

TEST(CliParse, RangeAndValueErrorsNameTheOption)
{
	Opts o;
	EXPECT_EQ(usage_error([&] { (void)parse_into(o, {"--procs", "65"}); }),
		  "invalid --procs '65': not in 1..64");
	EXPECT_THAT(usage_error([&] { (void)parse_into(o, {"-n", "x"}); }),
		    HasSubstr("invalid --procs 'x'"));
	EXPECT_THAT(usage_error([&] { (void)parse_into(o, {"--bytes=4X"}); }),
		    HasSubstr("invalid --bytes '4X'"));
	EXPECT_EQ(usage_error([&] { (void)parse_into(o, {"--device", ""}); }),
		  "empty --device");
}

TEST(CliParse, UnknownOptionMissingArgumentOperand)
{
	Opts o;
	EXPECT_EQ(usage_error([&] { (void)parse_into(o, {"--bogus"}); }),
		  "unrecognized option '--bogus'");
	EXPECT_EQ(usage_error([&] { (void)parse_into(o, {"-x"}); }),
		  "invalid option '-x'");
	EXPECT_EQ(usage_error([&] { (void)parse_into(o, {"--procs"}); }),
		  "option '--procs' requires an argument");
	EXPECT_EQ(usage_error([&] { (void)parse_into(o, {"--json=1"}); }),
		  "option '--json' takes no argument");
	EXPECT_EQ(usage_error([&] { (void)parse_into(o, {"-jn"}); }),
		  "option '-n' requires an argument");
	EXPECT_EQ(usage_error([&] { (void)parse_into(o, {"-j", "extra"}); }),
		  "unexpected argument 'extra'");
}

TEST(CliParse, Operands)
{
	Opts o;
	std::vector<std::string> ops;
	EXPECT_EQ(parse_into(o, {"send", "--procs", "2", "x", "--", "--json"}, &ops),
		  Parsed::run);
	EXPECT_EQ(ops, (std::vector<std::string>{"send", "x", "--json"}));
	EXPECT_FALSE(o.json);
	EXPECT_EQ(o.procs, 2u);
}

TEST(CliParse, HelpWinsAtFirstSight)
{
	Opts o;
	EXPECT_EQ(parse_into(o, {"--help"}), Parsed::help);
	EXPECT_EQ(parse_into(o, {"-j", "-h", "--bogus"}), Parsed::help);
	EXPECT_TRUE(o.json);
	// An error before --help is the error.
	EXPECT_THAT(usage_error([&] { (void)parse_into(o, {"--bogus", "--help"}); }),
		    HasSubstr("--bogus"));
}

TEST(CliParse, ParsesAgainInTheSameProcess)
{
	for (int i = 0; i < 3; i++) {
		Opts o;
		EXPECT_EQ(parse_into(o, {"-n", std::to_string(i + 1)}), Parsed::run);
		EXPECT_EQ(o.procs, static_cast<unsigned>(i + 1));
	}
}

TEST(CliParseCommandLine, ExitStatuses)
{
	int usages = 0;
	const Usage usage = [&](std::FILE *) { usages++; };

	::testing::internal::CaptureStdout();
	EXPECT_EQ(parse_command_line("prog", usage, [] { return Parsed::help; }), 0);
	(void)::testing::internal::GetCapturedStdout();
	EXPECT_EQ(usages, 1);

	EXPECT_FALSE(parse_command_line("prog", usage, [] { return Parsed::run; }));

	::testing::internal::CaptureStderr();
	EXPECT_EQ(parse_command_line("prog", usage, []() -> Parsed {
			  throw UsageError("invalid --x '1': not in 2..3");
		  }),
		  exit_usage);
	EXPECT_EQ(::testing::internal::GetCapturedStderr(),
		  "prog: invalid --x '1': not in 2..3\n"
		  "Try 'prog --help' for more information.\n");
	EXPECT_EQ(usages, 1);
}
