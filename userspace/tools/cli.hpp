// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The command line of every rv program (the tools and the VM test
// programs): a table of options parsed by getopt_long(), the number
// parsers behind their values, and what main() does with --help and a
// usage error. Host unit tests: tests/test_cli.cpp.
//
//	Options o;
//	const rv::cli::Option table[] = {
//		rv::cli::flag("json", 'j', o.json),
//		rv::cli::number("procs", 'n', o.procs, 1, 64),
//		rv::cli::size("max-size", 0, o.max_size),
//	};
//	if (auto rc = rv::cli::parse_command_line(prog, usage, [&] {
//		    return rv::cli::parse(argc, argv, table);
//	    }))
//		return *rc;
//
// A program's main() keeps the table and its own checks in a function
// Parsed parse_args(int argc, char **argv, Options &o), and hands it to
// parse_command_line() with argc, argv and o.
#ifndef RV_TOOLS_CLI_HPP
#define RV_TOOLS_CLI_HPP

#include <concepts>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rv::cli {

// The exit status of a usage error.
inline constexpr int exit_usage = 2;

// A command line error. Its message names the option and the value:
// "invalid --procs '99': not in 1..64".
class UsageError : public std::runtime_error {
public:
	using std::runtime_error::runtime_error;
};

// --- values ------------------------------------------------------------
// Each parser takes what the value is for (an option, "--procs") and
// throws UsageError for anything but a value of its kind in [min, max].

// A whole number: decimal, or hexadecimal after 0x. No sign.
[[nodiscard]] std::uint64_t parse_uint(std::string_view what, std::string_view text,
				       std::uint64_t min = 0,
				       std::uint64_t max = UINT64_MAX);

// A number of bytes: "4096", "4K", "4k", "4KiB", "64KB", "1M", "1MiB",
// "2G", "100B"; the multiples are binary (K = 1024).
[[nodiscard]] std::uint64_t parse_size(std::string_view what, std::string_view text,
				       std::uint64_t min = 1,
				       std::uint64_t max = UINT64_MAX);

// Comma-separated parse_size() values, at least one, no empty item.
[[nodiscard]] std::vector<std::uint64_t>
parse_size_list(std::string_view what, std::string_view text,
		std::uint64_t min = 1, std::uint64_t max = UINT64_MAX);

// Seconds, as a decimal number with an optional fraction ("0.5", "30").
[[nodiscard]] double parse_seconds(std::string_view what, std::string_view text,
				   double min = 0,
				   double max = std::numeric_limits<double>::max());

// The items of a sep-separated list ("a,b,c"); empty items are kept.
[[nodiscard]] std::vector<std::string_view> split(std::string_view text, char sep = ',');

// --- options -----------------------------------------------------------

enum class Arg { none, required, optional };

struct Option {
	std::string name;	// the long name, without "--"
	char short_name = 0;	// 0: none
	Arg arg = Arg::none;
	// Called with the option's argument (nullopt: none given).
	std::function<void(std::optional<std::string_view>)> set;
};

// --NAME (-S) without an argument.
[[nodiscard]] Option flag(std::string name, char short_name, bool &to);
[[nodiscard]] Option flag(std::string name, char short_name, std::function<void()> f);

// --NAME (-S) with an argument, handed to f.
[[nodiscard]] Option value(std::string name, char short_name,
			   std::function<void(std::string_view)> f);

// --NAME[=ARG]: f gets nullopt without an argument.
[[nodiscard]] Option optional_value(std::string name,
				    std::function<void(std::optional<std::string_view>)> f);

// A string that must not be empty.
[[nodiscard]] Option text(std::string name, char short_name, std::string &to);

// parse_uint() into an unsigned integer of any width (max: at most T's).
template <std::unsigned_integral T>
[[nodiscard]] Option number(std::string name, char short_name, T &to,
			    std::uint64_t min = 0,
			    std::uint64_t max = std::numeric_limits<T>::max())
{
	std::string what = "--" + name;
	if (max > std::numeric_limits<T>::max())
		max = std::numeric_limits<T>::max();
	return value(std::move(name), short_name, [&to, what, min, max](std::string_view v) {
		to = static_cast<T>(parse_uint(what, v, min, max));
	});
}

// parse_size() and parse_seconds() into to.
[[nodiscard]] Option size(std::string name, char short_name, std::uint64_t &to,
			  std::uint64_t min = 1, std::uint64_t max = UINT64_MAX);
[[nodiscard]] Option seconds(std::string name, char short_name, double &to,
			     double min, double max);

enum class Parsed { run, help };

// getopt_long() over argv[1..argc) with options, and -h/--help, which
// every program has: help at its first sight. An unknown option, a
// missing argument or an argument that is no option (unless operands
// collects them) is a UsageError; so is whatever an option's set throws.
// Long options may be abbreviated and take their argument as "--x=V" or
// "--x V"; options and operands may come in any order.
[[nodiscard]] Parsed parse(int argc, char **argv, std::span<const Option> options,
			   std::vector<std::string> *operands = nullptr);

// Writes a program's usage text to the stream.
using Usage = std::function<void(std::FILE *)>;

// What main() does with its command line: parse_fn parses it (parse() and
// the program's own checks, which throw UsageError). On --help the usage
// goes to stdout and the result is 0 (1 if stdout cannot be written); on a
// UsageError "PROG: MESSAGE" and a hint at --help go to stderr and the
// result is exit_usage. nullopt: the program goes on.
[[nodiscard]] std::optional<int> parse_command_line(std::string_view prog,
						    const Usage &usage,
						    const std::function<Parsed()> &parse_fn);

// The same for parse(argc, argv, out...), a program's parser that fills
// out (its options): in main(),
//	if (auto rc = rv::cli::parse_command_line(prog, usage, parse_args, argc, argv, o))
//		return *rc;
template <typename... Out>
[[nodiscard]] std::optional<int> parse_command_line(std::string_view prog, const Usage &usage,
						    Parsed (*parse)(int, char **, Out &...),
						    int argc, char **argv, Out &...out)
{
	return parse_command_line(prog, usage, [&] { return parse(argc, argv, out...); });
}

} // namespace rv::cli

#endif // RV_TOOLS_CLI_HPP
