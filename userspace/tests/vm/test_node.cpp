// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The device node: a character device any user may open.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rv/device.hpp>
#include <rv/unique_fd.hpp>

#include "vm_env.hpp"

using rv::test::device_path;

TEST(DeviceNode, CharDeviceMode0666)
{
	struct stat st {};
	const std::string path = device_path();

	ASSERT_EQ(::stat(path.c_str(), &st), 0)
		<< path << ": " << std::strerror(errno);
	EXPECT_TRUE(S_ISCHR(st.st_mode)) << std::oct << st.st_mode;
	EXPECT_EQ(st.st_mode & 07777, 0666u) << std::oct << (st.st_mode & 07777);
}

namespace {

constexpr uid_t nobody = 65534;
constexpr gid_t nogroup = 65534;

// What the unprivileged child reports back through a pipe.
struct ChildReport {
	int stage;	// the step that failed, or stage_done
	int err;	// its errno
	uid_t uid;
	uid_t euid;
	std::uint16_t major;
	std::uint16_t minor;
	std::uint64_t capability;
};

enum : int {
	stage_setgroups = 1,
	stage_setgid,
	stage_setuid,
	stage_uid_check,
	stage_open,
	stage_ioctl,
	stage_done,
};

const char *stage_name(int stage)
{
	switch (stage) {
	case stage_setgroups: return "setgroups";
	case stage_setgid: return "setgid";
	case stage_setuid: return "setuid";
	case stage_uid_check: return "uid check";
	case stage_open: return "open";
	case stage_ioctl: return "RV_IOCTL_CAPABILITY";
	case stage_done: return "done";
	default: return "?";
	}
}

// Drops to nobody when root (else runs as the caller), opens the device
// and asks CAPABILITY. Only async-signal-safe calls: this runs in a
// forked child.
ChildReport unprivileged_capability(const char *path, bool drop)
{
	ChildReport r{};
	auto fail = [&r](int stage, int err) {
		r.stage = stage;
		r.err = err;
		return r;
	};

	if (drop) {
		if (::setgroups(0, nullptr) < 0)
			return fail(stage_setgroups, errno);
		if (::setgid(nogroup) < 0)
			return fail(stage_setgid, errno);
		if (::setuid(nobody) < 0)
			return fail(stage_setuid, errno);
	}
	r.uid = ::getuid();
	r.euid = ::geteuid();
	if (r.uid == 0 || r.euid == 0)
		return fail(stage_uid_check, 0);

	int fd = ::open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail(stage_open, errno);

	rv_capability_params p{};
	p.major_rev = RV_ABI_VER_MAJOR;
	p.minor_rev = RV_ABI_VER_MINOR;
	int ret = ::ioctl(fd, RV_IOCTL_CAPABILITY, &p);
	int err = errno;
	::close(fd);
	if (ret < 0)
		return fail(stage_ioctl, err);
	r.major = p.major_rev;
	r.minor = p.minor_rev;
	r.capability = p.capability;
	r.stage = stage_done;
	return r;
}

} // namespace

TEST(DeviceNode, WorksForNonRootUser)
{
	const std::string path = device_path();
	const bool drop = ::geteuid() == 0;

	int fds[2];
	ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0) << std::strerror(errno);
	rv::UniqueFd rd(fds[0]);
	rv::UniqueFd wr(fds[1]);

	std::fflush(nullptr);
	pid_t pid = ::fork();
	ASSERT_GE(pid, 0) << "fork: " << std::strerror(errno);
	if (pid == 0) {
		ChildReport r = unprivileged_capability(path.c_str(), drop);
		bool sent = ::write(wr.get(), &r, sizeof(r)) ==
			    static_cast<ssize_t>(sizeof(r));
		::_exit(!sent ? 3 : r.stage == stage_done ? 0 : 1);
	}
	wr.reset();

	ChildReport r{};
	ssize_t n;
	do {
		n = ::read(rd.get(), &r, sizeof(r));
	} while (n < 0 && errno == EINTR);

	int status = 0;
	pid_t w;
	do {
		w = ::waitpid(pid, &status, 0);
	} while (w < 0 && errno == EINTR);
	ASSERT_EQ(w, pid);

	ASSERT_TRUE(WIFEXITED(status)) << "child status " << status;
	ASSERT_EQ(n, static_cast<ssize_t>(sizeof(r))) << "no report from child";
	EXPECT_EQ(WEXITSTATUS(status), 0)
		<< "failed at " << stage_name(r.stage) << ": "
		<< std::strerror(r.err);
	ASSERT_EQ(r.stage, stage_done)
		<< "failed at " << stage_name(r.stage) << ": "
		<< std::strerror(r.err);
	if (drop) {
		EXPECT_EQ(r.uid, nobody);
		EXPECT_EQ(r.euid, nobody);
	}
	EXPECT_EQ(r.major, 1);
	EXPECT_EQ(r.minor, 7);
	EXPECT_EQ(r.capability & RV_CAP_USER_MR, 0u);
}
