// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "cli.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include <getopt.h>

#include <toolkit/debugfs.hpp>

namespace rv::cli {

namespace {

[[noreturn]] void invalid(std::string_view what, std::string_view text,
			  const std::string &why)
{
	throw UsageError("invalid " + std::string(what) + " '" + std::string(text) +
			 "': " + why);
}

std::string range(std::uint64_t min, std::uint64_t max)
{
	return std::to_string(min) + ".." + std::to_string(max);
}

// The decimal digits at the start of text as a number; nullopt if there
// are none or they overflow. rest: what follows them.
std::optional<std::uint64_t> leading_number(std::string_view text, std::string_view &rest)
{
	std::uint64_t v = 0;
	auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
	if (ec != std::errc() || end == text.data())
		return std::nullopt;
	rest = text.substr(static_cast<std::size_t>(end - text.data()));
	return v;
}

// The shift of a size unit ("K", "KiB", "KB", "B", ""); nullopt for none.
std::optional<unsigned> unit_shift(std::string_view unit)
{
	if (unit.empty() || unit == "B" || unit == "b")
		return 0u;
	unsigned shift = 0;
	switch (unit.front()) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	default: return std::nullopt;
	}
	unit.remove_prefix(1);
	if (unit.empty() || unit == "B" || unit == "iB" || unit == "b" || unit == "ib")
		return shift;
	return std::nullopt;
}

} // namespace

std::uint64_t parse_uint(std::string_view what, std::string_view text,
			 std::uint64_t min, std::uint64_t max)
{
	const auto v = rv::debugfs::parse_u64(text);
	if (!v)
		invalid(what, text, "not a whole number in " + range(min, max));
	if (*v < min || *v > max)
		invalid(what, text, "not in " + range(min, max));
	return *v;
}

std::uint64_t parse_size(std::string_view what, std::string_view text,
			 std::uint64_t min, std::uint64_t max)
{
	std::string_view unit;
	auto v = !text.empty() && text.front() >= '0' && text.front() <= '9'
			 ? leading_number(text, unit) : std::nullopt;
	auto shift = v ? unit_shift(unit) : std::nullopt;
	if (!shift)
		invalid(what, text, "not a size (bytes, or a number with K, M or G)");
	if (*v > (UINT64_MAX >> *shift) || (*v << *shift) < min || (*v << *shift) > max)
		invalid(what, text, "not in " + range(min, max) + " bytes");
	return *v << *shift;
}

std::vector<std::uint64_t> parse_size_list(std::string_view what, std::string_view text,
					   std::uint64_t min, std::uint64_t max)
{
	std::vector<std::uint64_t> out;
	for (std::string_view item : split(text))
		out.push_back(parse_size(what, item, min, max));
	return out;
}

double parse_seconds(std::string_view what, std::string_view text, double min, double max)
{
	const std::string s(text);
	char *end = nullptr;
	const double v = s.empty() || s.front() == '+' || s.front() == '-' ||
				 std::isspace(static_cast<unsigned char>(s.front()))
			 ? NAN : std::strtod(s.c_str(), &end);
	if (std::isnan(v) || *end || !std::isfinite(v))
		invalid(what, text, "not a number of seconds");
	if (v < min || v > max) {
		char buf[64];
		std::snprintf(buf, sizeof(buf), "not in %g..%g seconds", min, max);
		invalid(what, text, buf);
	}
	return v;
}

std::vector<std::string_view> split(std::string_view text, char sep)
{
	std::vector<std::string_view> out;
	for (;;) {
		const std::size_t at = text.find(sep);
		out.push_back(text.substr(0, at));
		if (at == std::string_view::npos)
			return out;
		text.remove_prefix(at + 1);
	}
}

// --- options -----------------------------------------------------------

Option flag(std::string name, char short_name, bool &to)
{
	return flag(std::move(name), short_name, [&to] { to = true; });
}

Option flag(std::string name, char short_name, std::function<void()> f)
{
	return {std::move(name), short_name, Arg::none,
		[fn = std::move(f)](std::optional<std::string_view>) { fn(); }};
}

Option value(std::string name, char short_name, std::function<void(std::string_view)> f)
{
	return {std::move(name), short_name, Arg::required,
		[fn = std::move(f)](std::optional<std::string_view> v) { fn(v.value_or("")); }};
}

Option optional_value(std::string name,
		      std::function<void(std::optional<std::string_view>)> f)
{
	return {std::move(name), 0, Arg::optional, std::move(f)};
}

Option text(std::string name, char short_name, std::string &to)
{
	std::string what = "--" + name;
	return value(std::move(name), short_name, [&to, what](std::string_view v) {
		if (v.empty())
			throw UsageError("empty " + what);
		to = std::string(v);
	});
}

Option size(std::string name, char short_name, std::uint64_t &to, std::uint64_t min,
	    std::uint64_t max)
{
	std::string what = "--" + name;
	return value(std::move(name), short_name, [&to, what, min, max](std::string_view v) {
		to = parse_size(what, v, min, max);
	});
}

Option seconds(std::string name, char short_name, double &to, double min, double max)
{
	std::string what = "--" + name;
	return value(std::move(name), short_name, [&to, what, min, max](std::string_view v) {
		to = parse_seconds(what, v, min, max);
	});
}

namespace {

// Values of getopt_long() for options without a short name.
constexpr int long_only = 0x100;

int has_arg(Arg a)
{
	return a == Arg::none ? no_argument
	     : a == Arg::required ? required_argument : optional_argument;
}

// getopt_long()'s short and long option tables for options (and -h).
struct Tables {
	std::string shortopts = ":";
	std::vector<option> longopts;

	explicit Tables(std::span<const Option> options)
	{
		for (std::size_t i = 0; i < options.size(); i++) {
			const Option &o = options[i];
			const int val = o.short_name ? o.short_name
						     : long_only + static_cast<int>(i);
			if (o.short_name)
				shortopts += std::string(1, o.short_name) +
					     (o.arg == Arg::required ? ":" :
					      o.arg == Arg::optional ? "::" : "");
			longopts.push_back({o.name.c_str(), has_arg(o.arg), nullptr, val});
		}
		shortopts += "h";
		longopts.push_back({"help", no_argument, nullptr, 'h'});
		longopts.push_back({nullptr, 0, nullptr, 0});
	}
};

// getopt_long() returned c, ':' or '?': what was wrong.
std::string getopt_error(int c, char **argv)
{
	const std::string arg = argv[optind - 1];
	const bool is_long = arg.rfind("--", 0) == 0;
	const std::string name = is_long ? arg.substr(0, arg.find('='))
					 : std::string("-") + static_cast<char>(optopt);
	if (c == ':')
		return "option '" + name + "' requires an argument";
	if (!is_long)
		return "invalid option '" + name + "'";
	// A known long option given an argument it does not take.
	if (optopt)
		return "option '" + name + "' takes no argument";
	return "unrecognized option '" + arg + "'";
}

const Option *option_for(std::span<const Option> options, int c)
{
	if (c >= long_only && static_cast<std::size_t>(c - long_only) < options.size())
		return &options[static_cast<std::size_t>(c - long_only)];
	for (const Option &o : options)
		if (o.short_name && o.short_name == c)
			return &o;
	return nullptr;
}

} // namespace

Parsed parse(int argc, char **argv, std::span<const Option> options,
	     std::vector<std::string> *operands)
{
	const Tables t(options);
	int c;

	optind = 0;	// a new argv: getopt_long starts over
	opterr = 0;
	while ((c = getopt_long(argc, argv, t.shortopts.c_str(), t.longopts.data(),
				nullptr)) != -1) {
		if (c == 'h')
			return Parsed::help;
		const Option *o = c == '?' || c == ':' ? nullptr : option_for(options, c);
		if (!o)
			throw UsageError(getopt_error(c, argv));
		o->set(optarg ? std::optional<std::string_view>(optarg) : std::nullopt);
	}
	for (int i = optind; i < argc; i++) {
		if (!operands)
			throw UsageError(std::string("unexpected argument '") + argv[i] + "'");
		operands->emplace_back(argv[i]);
	}
	return Parsed::run;
}

std::optional<int> parse_command_line(std::string_view prog, const Usage &usage,
				      const std::function<Parsed()> &parse_fn)
{
	const std::string p(prog);
	try {
		if (parse_fn() == Parsed::run)
			return std::nullopt;
	} catch (const UsageError &e) {
		std::fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n",
			     p.c_str(), e.what(), p.c_str());
		return exit_usage;
	}
	usage(stdout);
	return std::fflush(stdout) == 0 && !std::ferror(stdout) ? 0 : 1;
}

} // namespace rv::cli
