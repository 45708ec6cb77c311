// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvinfo: report the ABI version and capabilities of the rv module.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <system_error>

#include <rv/capability.hpp>
#include <rv/device.hpp>
#include <rv/version.hpp>

#include <toolkit/json.hpp>

#include "cli.hpp"

namespace {

constexpr const char *prog = "rvinfo";

struct Options {
	std::string device{rv::Device::default_path};
	bool json = false;
	bool query_r2 = false;
};

void usage(std::FILE *f)
{
	std::fprintf(f,
"Usage: %s [OPTION]...\n"
"Show the ABI version and capabilities of the rv kernel module.\n"
"\n"
"  -d, --device PATH  rv device node (default %s)\n"
"  -j, --json         print one JSON object:\n"
"                       {\"device\": PATH, \"abi\": {\"major\": M, \"minor\": N},\n"
"                        \"header_abi\": {...}, \"capability\": BITS,\n"
"                        \"capabilities\": [NAME, ...]}\n"
"  -r, --query-r2     ask with the legacy RV_IOCTL_QUERY_R2 (declares ABI 1.2)\n"
"                     instead of RV_IOCTL_CAPABILITY (declares ABI %s)\n"
"  -h, --help         show this help and exit\n"
"\n"
"Exit status: 0 on success, 1 if the module could not be queried,\n"
"2 on a usage error.\n",
		prog, RV_FILE_NAME, rv::Version::header().to_string().c_str());
}

// Parses argv into opts (rv::cli::parse_command_line()).
rv::cli::Parsed parse_args(int argc, char **argv, Options &opts)
{
	const rv::cli::Option options[] = {
		rv::cli::text("device", 'd', opts.device),
		rv::cli::flag("json", 'j', opts.json),
		rv::cli::flag("query-r2", 'r', opts.query_r2),
	};
	return rv::cli::parse(argc, argv, options);
}

// "rvinfo: <device>: [<op>: ]<strerror>[ (<hint>)]" on stderr.
int report(const Options &opts, const std::system_error &e, bool opening)
{
	int err = e.code().value();
	std::string msg = std::string(prog) + ": " + opts.device + ": ";

	if (!opening) {
		// what() is "<op>: <strerror>"; keep the op.
		std::string what = e.what();
		auto colon = what.find(": ");
		if (colon != std::string::npos)
			msg += what.substr(0, colon) + ": ";
	}
	msg += std::strerror(err);

	if (opening && (err == ENOENT || err == ENODEV || err == ENXIO))
		msg += " (is the rv module loaded?)";
	else if (opening && (err == EACCES || err == EPERM))
		msg += " (check the permissions of " + opts.device + ")";
	else if (!opening && err == ENOTTY)
		msg += " (is " + opts.device + " the rv device?)";

	std::fprintf(stderr, "%s\n", msg.c_str());
	return 1;
}

std::string human(const rv::Capability &cap)
{
	char bits[32];

	std::snprintf(bits, sizeof(bits), "0x%016" PRIx64, cap.capability);
	return "rv ABI " + cap.abi.to_string() + " (header " +
	       rv::Version::header().to_string() + ")\n" +
	       "capabilities: " + bits + " (" +
	       rv::format_capabilities(cap.capability) + ")\n";
}

void write_version(rv::json::Writer &w, rv::Version v)
{
	w.begin_object()
		.member("major", v.major)
		.member("minor", v.minor)
		.end_object();
}

std::string json(const Options &opts, const rv::Capability &cap)
{
	rv::json::Writer w;

	w.begin_object().member("device", opts.device);
	w.key("abi");
	write_version(w, cap.abi);
	w.key("header_abi");
	write_version(w, rv::Version::header());
	w.member("capability", cap.capability);
	w.key("capabilities").begin_array();
	for (const auto &name : rv::capability_names(cap.capability))
		w.value(name);
	w.end_array().end_object();
	return w.str() + "\n";
}

int run(const Options &opts)
{
	std::optional<rv::Device> dev;
	rv::Capability cap;

	try {
		dev.emplace(opts.device);
	} catch (const std::system_error &e) {
		return report(opts, e, true);
	}
	try {
		cap = opts.query_r2 ? dev->query_r2() : dev->capability();
	} catch (const std::system_error &e) {
		return report(opts, e, false);
	}

	std::string out = opts.json ? json(opts, cap) : human(cap);
	if (std::fputs(out.c_str(), stdout) == EOF || std::fflush(stdout) != 0) {
		std::fprintf(stderr, "%s: write error: %s\n", prog,
			     std::strerror(errno));
		return 1;
	}
	if (cap.abi.major != rv::Version::header().major)
		std::fprintf(stderr,
			     "%s: warning: the module's ABI major %u differs "
			     "from this build's %u\n",
			     prog, unsigned{cap.abi.major},
			     unsigned{rv::Version::header().major});
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	try {
		Options opts;
		if (auto rc = rv::cli::parse_command_line(prog, usage, parse_args,
							  argc, argv, opts))
			return *rc;
		return run(opts);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", prog, e.what());
		return 1;
	}
}
