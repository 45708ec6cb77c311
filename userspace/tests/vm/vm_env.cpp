// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "vm_env.hpp"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <sys/ioctl.h>
#include <unistd.h>

#include <rv/uapi.hpp>

namespace rv::test {

std::string device_path()
{
	const char *env = std::getenv("RV_DEVICE");
	return env && *env ? env : RV_FILE_NAME;
}

std::string rvinfo_path()
{
	if (const char *env = std::getenv("RV_RVINFO"); env && *env)
		return env;
#ifdef RVINFO_PATH
	if (::access(RVINFO_PATH, X_OK) == 0)
		return RVINFO_PATH;
#endif
	std::error_code ec;
	auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
	if (!ec) {
		for (const char *rel : {"rvinfo", "../tools/rvinfo",
					"../../tools/rvinfo"}) {
			auto p = self.parent_path() / rel;
			if (::access(p.c_str(), X_OK) == 0)
				return p.lexically_normal().string();
		}
	}
	return "rvinfo";	// fails visibly in the test that runs it
}

int ioctl_errno(int fd, unsigned long request, void *arg)
{
	errno = 0;
	if (::ioctl(fd, request, arg) < 0)
		return errno ? errno : -1;
	return 0;
}

} // namespace rv::test
