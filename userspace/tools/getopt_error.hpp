// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The usage errors getopt_long() leaves to its caller (with opterr = 0),
// worded the same way in every tool.
#ifndef RV_TOOLS_GETOPT_ERROR_HPP
#define RV_TOOLS_GETOPT_ERROR_HPP

#include <optional>
#include <string>

#include <getopt.h>

namespace rv::tools {

// What getopt_long() returning c (':' or '?') means, as a message.
inline std::string getopt_error(int c, char *const argv[])
{
	if (c == ':')
		return std::string("option '") + argv[optind - 1] + "' requires an argument";
	if (optopt)
		return std::string("invalid option '-") + static_cast<char>(optopt) + "'";
	return std::string("unrecognized option '") + argv[optind - 1] + "'";
}

// After the options: a message for the first argument left, if any.
inline std::optional<std::string> extra_argument(int argc, char *const argv[])
{
	if (optind < argc)
		return std::string("unexpected argument '") + argv[optind] + "'";
	return std::nullopt;
}

} // namespace rv::tools

#endif // RV_TOOLS_GETOPT_ERROR_HPP
