// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "sysfs_line.hpp"

#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

#include <rv/unique_fd.hpp>

namespace rv::detail {

std::optional<std::string> read_sysfs_line(const std::filesystem::path &p)
{
	UniqueFd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd)
		return std::nullopt;

	std::string text;
	char buf[256];
	for (;;) {
		ssize_t n = ::read(fd.get(), buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return std::nullopt;
		}
		if (n == 0)
			break;
		text.append(buf, static_cast<std::size_t>(n));
		if (text.find('\n') != std::string::npos || text.size() > 4096)
			break;
	}
	return text.substr(0, text.find('\n'));
}

} // namespace rv::detail
