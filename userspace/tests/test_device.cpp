// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::Device on the host, without the module: error paths and ownership
// of the descriptor.
#include <gtest/gtest.h>

#include <rv/device.hpp>
#include <rv/error.hpp>
#include <rv/ioctl.hpp>
#include <rv/unique_fd.hpp>

#include <cerrno>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace {

// fcntl(F_GETFD) succeeds exactly while fd is open.
bool fd_is_open(int fd)
{
	return ::fcntl(fd, F_GETFD) != -1;
}

bool fd_is_closed(int fd)
{
	errno = 0;
	return ::fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

// Runs f, which must throw std::system_error; returns it.
template <typename F>
std::system_error catch_system_error(F &&f)
{
	try {
		f();
	} catch (const std::system_error &e) {
		return e;
	}
	ADD_FAILURE() << "no std::system_error thrown";
	return std::system_error(0, std::generic_category());
}

} // namespace

TEST(Error, ThrowErrno)
{
	auto e = catch_system_error([] { rv::throw_errno(EINVAL, "OP"); });
	EXPECT_EQ(e.code().value(), EINVAL);
	EXPECT_EQ(e.code().category(), std::generic_category());
	EXPECT_EQ(e.code(), std::errc::invalid_argument);
	EXPECT_EQ(std::string(e.what()).rfind("OP: ", 0), 0u) << e.what();

	auto e2 = catch_system_error([] {
		errno = ENOENT;
		rv::throw_errno("OTHER");
	});
	EXPECT_EQ(e2.code(), std::errc::no_such_file_or_directory);
}

TEST(IoctlName, KnownAndUnknown)
{
	EXPECT_EQ(rv::ioctl_name(RV_IOCTL_CAPABILITY), "RV_IOCTL_CAPABILITY");
	EXPECT_EQ(rv::ioctl_name(RV_IOCTL_QUERY_R2), "RV_IOCTL_QUERY_R2");
	EXPECT_EQ(rv::ioctl_name(RV_IOCTL_ATTACH_R5), "RV_IOCTL_ATTACH_R5");
	EXPECT_EQ(rv::ioctl_name(RV_IOCTL_REG_MEM_R1), "RV_IOCTL_REG_MEM_R1");
	EXPECT_EQ(rv::ioctl_name(RV_IOCTL_CONN_GET_CONN_COUNT),
		  "RV_IOCTL_CONN_GET_CONN_COUNT");
	EXPECT_EQ(rv::ioctl_name(_IO('x', 1)), "");
	EXPECT_EQ(rv::ioctl_describe(_IO('x', 1)), "ioctl 0x7801");
	EXPECT_EQ(rv::ioctl_describe(RV_IOCTL_EVICT), "RV_IOCTL_EVICT");
}

TEST(UniqueFd, ClosesAndReleases)
{
	int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	{
		rv::UniqueFd u(fd);
		EXPECT_TRUE(u.valid());
		EXPECT_EQ(u.get(), fd);
	}
	EXPECT_TRUE(fd_is_closed(fd));

	fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	{
		rv::UniqueFd u(fd);
		EXPECT_EQ(u.release(), fd);
		EXPECT_FALSE(u.valid());
	}
	EXPECT_TRUE(fd_is_open(fd));
	::close(fd);
}

TEST(Device, DefaultPathIsRvFileName)
{
	EXPECT_EQ(rv::Device::default_path, RV_FILE_NAME);
	EXPECT_EQ(rv::Device::default_path, "/dev/rv");
}

TEST(Device, MissingPathThrowsEnoent)
{
	const std::string path = "/nonexistent-rv-test/rv";
	auto e = catch_system_error([&] { rv::Device dev(path); });

	EXPECT_EQ(e.code().value(), ENOENT);
	EXPECT_EQ(e.code().category(), std::generic_category());
	EXPECT_NE(std::string(e.what()).find(path), std::string::npos)
		<< e.what();
}

TEST(Device, DirectoryThrowsEisdir)
{
	auto e = catch_system_error([] { rv::Device dev("/"); });
	EXPECT_EQ(e.code().value(), EISDIR);
}

TEST(Device, OpensReadWriteCloexec)
{
	rv::Device dev("/dev/null");

	ASSERT_TRUE(dev.is_open());
	EXPECT_EQ(dev.path(), "/dev/null");
	int fl = ::fcntl(dev.fd(), F_GETFL);
	ASSERT_NE(fl, -1);
	EXPECT_EQ(fl & O_ACCMODE, O_RDWR);
	int fdfl = ::fcntl(dev.fd(), F_GETFD);
	ASSERT_NE(fdfl, -1);
	EXPECT_TRUE(fdfl & FD_CLOEXEC);
}

TEST(Device, CapabilityOnNonRvFileThrowsEnotty)
{
	rv::Device dev("/dev/null");

	auto e = catch_system_error([&] { (void)dev.capability(); });
	EXPECT_EQ(e.code().value(), ENOTTY);
	EXPECT_EQ(e.code().category(), std::generic_category());
	EXPECT_NE(std::string(e.what()).find("RV_IOCTL_CAPABILITY"),
		  std::string::npos) << e.what();

	auto e2 = catch_system_error([&] { (void)dev.capability(1, 6, 0); });
	EXPECT_EQ(e2.code().value(), ENOTTY);

	auto e3 = catch_system_error([&] { (void)dev.query_r2(); });
	EXPECT_EQ(e3.code().value(), ENOTTY);
	EXPECT_NE(std::string(e3.what()).find("RV_IOCTL_QUERY_R2"),
		  std::string::npos) << e3.what();
}

TEST(Device, RawIoctlNamesTheRequest)
{
	rv::Device dev("/dev/null");
	rv_capability_params p{};

	auto e = catch_system_error(
		[&] { dev.ioctl(RV_IOCTL_CAPABILITY, &p); });
	EXPECT_EQ(e.code().value(), ENOTTY);
	EXPECT_NE(std::string(e.what()).find("RV_IOCTL_CAPABILITY"),
		  std::string::npos) << e.what();

	auto e2 = catch_system_error([&] { dev.ioctl(_IO('x', 1), nullptr); });
	EXPECT_EQ(e2.code().value(), ENOTTY);
	EXPECT_NE(std::string(e2.what()).find("ioctl 0x7801"),
		  std::string::npos) << e2.what();
}

TEST(Device, RawIoctlReturnsResult)
{
	// FIONREAD on a pipe: a successful ioctl that writes its argument.
	int fds[2];
	ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
	rv::UniqueFd w(fds[1]);
	ASSERT_EQ(::write(w.get(), "abc", 3), 3);

	std::string path = "/proc/self/fd/" + std::to_string(fds[0]);
	rv::UniqueFd r(fds[0]);
	// The read end reopened O_RDWR through /proc is the same pipe.
	rv::Device dev(path);
	int avail = -1;
	EXPECT_EQ(dev.ioctl(FIONREAD, &avail), 0);
	EXPECT_EQ(avail, 3);
}

TEST(Device, DestructorClosesFd)
{
	int fd;
	{
		rv::Device dev("/dev/null");
		fd = dev.fd();
		ASSERT_GE(fd, 0);
		EXPECT_TRUE(fd_is_open(fd));
	}
	EXPECT_TRUE(fd_is_closed(fd));
}

TEST(Device, ExplicitClose)
{
	rv::Device dev("/dev/null");
	int fd = dev.fd();

	dev.close();
	EXPECT_FALSE(dev.is_open());
	EXPECT_EQ(dev.fd(), -1);
	EXPECT_TRUE(fd_is_closed(fd));
	dev.close();	// harmless twice

	auto e = catch_system_error([&] { (void)dev.capability(); });
	EXPECT_EQ(e.code().value(), EBADF);
}

TEST(Device, MoveConstructTransfersOwnership)
{
	int fd;
	std::optional<rv::Device> to;
	{
		rv::Device from("/dev/null");
		fd = from.fd();
		to.emplace(std::move(from));
		EXPECT_EQ(from.fd(), -1);	// NOLINT(bugprone-use-after-move)
		EXPECT_FALSE(from.is_open());
		EXPECT_EQ(to->fd(), fd);
		EXPECT_EQ(to->path(), "/dev/null");
	}
	// The moved-from Device is gone and did not close the descriptor.
	EXPECT_TRUE(fd_is_open(fd));
	to.reset();
	EXPECT_TRUE(fd_is_closed(fd));
}

TEST(Device, MoveAssignClosesTheOldFd)
{
	rv::Device a("/dev/null");
	rv::Device b("/dev/zero");
	int fa = a.fd();
	int fb = b.fd();

	ASSERT_NE(fa, fb);
	b = std::move(a);
	EXPECT_TRUE(fd_is_closed(fb));	// b's own file closed at once
	EXPECT_EQ(b.fd(), fa);
	EXPECT_EQ(b.path(), "/dev/null");
	EXPECT_EQ(a.fd(), -1);	// NOLINT(bugprone-use-after-move)
	EXPECT_TRUE(fd_is_open(fa));

	{
		rv::Device c(std::move(b));
		EXPECT_EQ(b.fd(), -1);	// NOLINT(bugprone-use-after-move)
	}
	EXPECT_TRUE(fd_is_closed(fa));
}
