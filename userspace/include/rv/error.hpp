// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Error reporting: every failed system call in librv becomes a
// std::system_error in std::generic_category() carrying the errno value,
// with what() naming the operation ("RV_IOCTL_CAPABILITY: Invalid
// argument"). Callers test e.code() == std::errc::... or
// e.code().value() == EINVAL.
#ifndef RV_ERROR_HPP
#define RV_ERROR_HPP

#include <cerrno>
#include <string>
#include <string_view>
#include <system_error>

namespace rv {

// Throws std::system_error(err, std::generic_category(), what).
[[noreturn]] void throw_errno(int err, const std::string &what);

// Same, with the current errno. Read errno before anything can clobber it.
[[noreturn]] inline void throw_errno(const std::string &what)
{
	throw_errno(errno, what);
}

} // namespace rv

#endif // RV_ERROR_HPP
