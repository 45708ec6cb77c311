// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Private to librv: the one place that calls ioctl(2).
#ifndef RV_LIB_IOCTL_CALL_HPP
#define RV_LIB_IOCTL_CALL_HPP

namespace rv::detail {

// ioctl(fd, request, arg); on failure throws std::system_error with the
// errno, what() naming the request (ioctl_describe()). Returns ioctl's
// non-negative result.
int checked_ioctl(int fd, unsigned long request, void *arg);

} // namespace rv::detail

#endif // RV_LIB_IOCTL_CALL_HPP
