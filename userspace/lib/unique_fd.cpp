// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/unique_fd.hpp>

#include <unistd.h>

namespace rv {

void UniqueFd::reset(int fd) noexcept
{
	int old = fd_;

	fd_ = fd;
	// Not retried on EINTR: Linux releases the descriptor even then,
	// and a retry could close one another thread just opened.
	if (old >= 0 && old != fd)
		::close(old);
}

} // namespace rv
