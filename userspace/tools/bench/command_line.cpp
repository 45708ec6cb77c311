// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "bench/command_line.hpp"

namespace rvbench {

std::vector<rv::cli::Option> common_options(CommonOptions &o)
{
	return {
		rv::cli::text("device", 'd', o.device),
		rv::cli::number("port", 0, o.port, 1, 255),
		rv::cli::text("rv", 0, o.rv_path),
		rv::cli::text("sysfs", 0, o.sysfs),
		rv::cli::flag("json", 'j', o.json),
		rv::cli::flag("verbose", 'v', o.verbose),
		rv::cli::optional_value("progress", [&o](std::optional<std::string_view> v) {
			o.progress = rv::bench::ProgressMode::on;
			// 0: a line at every step (for tests).
			if (v)
				o.progress_interval_ns = static_cast<std::uint64_t>(
					rv::cli::parse_seconds("--progress", *v, 0, 86400) * 1e9);
		}),
		rv::cli::flag("no-progress", 0, [&o] { o.progress = rv::bench::ProgressMode::off; }),
	};
}

} // namespace rvbench
