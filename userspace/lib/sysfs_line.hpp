// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Private to librv and the tools' toolkit: reading one sysfs attribute.
#ifndef RV_LIB_SYSFS_LINE_HPP
#define RV_LIB_SYSFS_LINE_HPP

#include <filesystem>
#include <optional>
#include <string>

namespace rv::detail {

// The first line of a sysfs attribute, without its newline; nullopt with
// errno set if it cannot be read (sysfs reports a failing show() as a
// read error, e.g. EINVAL for an unused GID type entry).
std::optional<std::string> read_sysfs_line(const std::filesystem::path &p);

} // namespace rv::detail

#endif // RV_LIB_SYSFS_LINE_HPP
