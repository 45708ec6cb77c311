// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Opening and closing /dev/rv without attaching.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include <rv/device.hpp>

#include "vm_env.hpp"

using rv::test::device_path;

TEST(Open, OpenClose100Times)
{
	for (int i = 0; i < 100; i++) {
		SCOPED_TRACE(i);
		int fd;
		{
			rv::Device dev(device_path());
			fd = dev.fd();
			ASSERT_GE(fd, 0);
		}
		errno = 0;
		ASSERT_EQ(::fcntl(fd, F_GETFD), -1);
		ASSERT_EQ(errno, EBADF);
	}
}

TEST(Open, OpenClose100TimesRaw)
{
	const std::string path = device_path();

	for (int i = 0; i < 100; i++) {
		SCOPED_TRACE(i);
		int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
		ASSERT_GE(fd, 0) << "open: " << std::strerror(errno);
		ASSERT_EQ(::close(fd), 0) << "close: " << std::strerror(errno);
	}
}

TEST(Open, TwoFilesAtOnce)
{
	rv::Device a(device_path());
	rv::Device b(device_path());

	ASSERT_GE(a.fd(), 0);
	ASSERT_GE(b.fd(), 0);
	EXPECT_NE(a.fd(), b.fd());

	// Each file answers on its own, in either order, and closing one
	// leaves the other working.
	rv::Capability cb = b.capability();
	rv::Capability ca = a.capability(rv::test::upstream_form()
						 ? rv::Version{1, 8}
						 : rv::Version{1, 6});
	EXPECT_EQ(ca, cb);
	a.close();
	EXPECT_EQ(b.capability(), cb);
}
