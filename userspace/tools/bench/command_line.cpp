// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "bench/command_line.hpp"

#include <cmath>

namespace rvbench {

std::uint64_t count_arg(const char *what, const std::string &arg,
			std::uint64_t min, std::uint64_t max)
{
	auto v = rv::bench::parse_count(arg, min, max);
	if (!v)
		throw UsageError(std::string("invalid ") + what + " '" + arg + "'");
	return *v;
}

std::uint64_t size_arg(const char *what, const std::string &arg)
{
	auto v = rv::bench::parse_size(arg);
	if (!v)
		throw UsageError(std::string("invalid ") + what + " '" + arg + "'");
	return *v;
}

std::vector<std::uint64_t> size_list_arg(const std::string &arg)
{
	auto v = rv::bench::parse_size_list(arg);
	if (!v)
		throw UsageError("invalid --sizes '" + arg + "'");
	return *v;
}

double seconds_arg(const char *what, const std::string &arg, double max)
{
	char *end = nullptr;
	const double v = std::strtod(arg.c_str(), &end);
	if (arg.empty() || *end || !(v > 0) || !std::isfinite(v) || v > max)
		throw UsageError(std::string("invalid ") + what + " '" + arg + "'");
	return v;
}

bool common_option(int c, CommonOptions &o)
{
	switch (c) {
	case 'd':
		o.device = optarg;
		if (o.device.empty())
			throw UsageError("empty --device");
		return true;
	case opt_port:
		o.port = static_cast<unsigned>(count_arg("--port", optarg, 1, 255));
		return true;
	case opt_rv:
		o.rv_path = optarg;
		if (o.rv_path.empty())
			throw UsageError("empty --rv");
		return true;
	case opt_sysfs:
		o.sysfs = optarg;
		if (o.sysfs.empty())
			throw UsageError("empty --sysfs");
		return true;
	case 'j':
		o.json = true;
		return true;
	case 'v':
		o.verbose = true;
		return true;
	case opt_progress:
		o.progress = rv::bench::ProgressMode::on;
		if (optarg) {
			// 0: a line at every step (for tests).
			char *end = nullptr;
			const double v = std::strtod(optarg, &end);
			if (!*optarg || *end || !(v >= 0) || v > 86400)
				throw UsageError(std::string("invalid --progress '") +
						 optarg + "' (seconds)");
			o.progress_interval_ns = static_cast<std::uint64_t>(v * 1e9);
		}
		return true;
	case opt_no_progress:
		o.progress = rv::bench::ProgressMode::off;
		return true;
	default:
		return false;
	}
}

[[noreturn]] void bad_option(int c, char **argv)
{
	throw UsageError(rv::tools::getopt_error(c, argv));
}

} // namespace rvbench
