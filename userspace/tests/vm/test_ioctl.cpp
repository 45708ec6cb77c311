// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// ioctl dispatch: unknown commands, wrong sizes and directions, and the
// one attach mode that must be refused.
#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <sys/ioctl.h>

#include <rv/device.hpp>

#include "vm_env.hpp"

using rv::test::device_path;
using rv::test::ioctl_errno;

namespace {

// Large enough for any argument size used below, zeroed.
struct Buffer {
	alignas(8) std::array<unsigned char, 512> bytes{};
	void *get() { return bytes.data(); }
};

} // namespace

TEST(Ioctl, UnknownNumberOnRvMagicIsEnotty)
{
	rv::Device dev(device_path());
	Buffer buf;

	EXPECT_EQ(ioctl_errno(dev.fd(),
			      _IOWR(RV_MAGIC, 0xE0, rv_capability_params),
			      buf.get()), ENOTTY);
	EXPECT_EQ(ioctl_errno(dev.fd(),
			      _IOWR(RV_MAGIC, 0xF0, rv_capability_params),
			      buf.get()), ENOTTY);
	EXPECT_EQ(ioctl_errno(dev.fd(), _IO(RV_MAGIC, 0x00), nullptr), ENOTTY);
}

TEST(Ioctl, OtherMagicIsEnotty)
{
	rv::Device dev(device_path());
	Buffer buf;

	EXPECT_EQ(ioctl_errno(dev.fd(), _IOR('x', 0xFC, rv_capability_params),
			      buf.get()), ENOTTY);
	EXPECT_EQ(ioctl_errno(dev.fd(), _IOWR('x', 0xFC, rv_capability_params),
			      buf.get()), ENOTTY);
	// A generic tty/file ioctl is not rv's either.
	EXPECT_EQ(ioctl_errno(dev.fd(), TCGETS, buf.get()), ENOTTY);
}

TEST(Ioctl, KnownNumberWrongSizeIsEinval)
{
	rv::Device dev(device_path());
	Buffer buf;

	EXPECT_EQ(ioctl_errno(dev.fd(), _IOWR(RV_MAGIC, 0xFC, char[60]),
			      buf.get()), EINVAL);
	EXPECT_EQ(ioctl_errno(dev.fd(), _IOWR(RV_MAGIC, 0xFC, char[72]),
			      buf.get()), EINVAL);
	EXPECT_EQ(ioctl_errno(dev.fd(), _IOWR(RV_MAGIC, 0xF1, char[100]),
			      buf.get()), EINVAL);
}

TEST(Ioctl, KnownNumberWrongDirectionIsEinval)
{
	rv::Device dev(device_path());
	Buffer buf;

	EXPECT_EQ(ioctl_errno(dev.fd(),
			      _IOW(RV_MAGIC, 0xF7, rv_cache_stats_params_out),
			      buf.get()), EINVAL);
	EXPECT_EQ(ioctl_errno(dev.fd(),
			      _IOW(RV_MAGIC, 0xFC, rv_capability_params),
			      buf.get()), EINVAL);
	EXPECT_EQ(ioctl_errno(dev.fd(), _IO(RV_MAGIC, 0xFC), nullptr), EINVAL);
}

TEST(Attach, UserModeIsEopnotsupp)
{
	rv::Device dev(device_path());
	ASSERT_EQ(dev.capability().abi, (rv::Version{1, 7}));

	// A complete, plausible request; only the mode is unsupported.
	rv_attach_params p{};
	static constexpr char name[] = "rxe0";
	static_assert(sizeof(name) <= sizeof(p.in.dev_name));
	std::memcpy(p.in.dev_name, name, sizeof(name));
	p.in.rdma_mode = RV_RDMA_MODE_USER;
	p.in.port_num = 1;
	p.in.index_bits = 8;
	p.in.job_key_len = RV_MAX_JOB_KEY_LEN;
	std::memset(p.in.job_key, 0x5a, sizeof(p.in.job_key));
	p.in.cq_entries = 0;

	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_ATTACH, &p), EOPNOTSUPP);

	try {
		rv::Device dev2(device_path());
		(void)dev2.capability();
		dev2.ioctl(RV_IOCTL_ATTACH, &p);
		ADD_FAILURE() << "RV_IOCTL_ATTACH in user mode succeeded";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EOPNOTSUPP) << e.what();
	}
}
