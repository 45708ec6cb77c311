// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Names of the rv ioctl commands, for messages.
#ifndef RV_IOCTL_HPP
#define RV_IOCTL_HPP

#include <string>
#include <string_view>

namespace rv {

// "RV_IOCTL_CAPABILITY" for RV_IOCTL_CAPABILITY, and so on for every
// command of rv_user_ioctls.h (including the _R1/_R4/_R5/_R2 forms); an
// empty view for any other request.
[[nodiscard]] std::string_view ioctl_name(unsigned long request) noexcept;

// ioctl_name(), or "ioctl 0x<request>" for an unknown request.
[[nodiscard]] std::string ioctl_describe(unsigned long request);

} // namespace rv

#endif // RV_IOCTL_HPP
