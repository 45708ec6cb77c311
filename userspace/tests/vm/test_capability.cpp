// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// RV_IOCTL_CAPABILITY and RV_IOCTL_QUERY_R2 against the module. Every
// test opens its own file, since the ioctls record the client ABI per
// file.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <rv/device.hpp>

#include "vm_env.hpp"

using rv::test::device_path;
using rv::test::ioctl_errno;

TEST(Capability, CurrentAbi)
{
	rv::Device dev(device_path());
	rv::Capability cap = dev.capability();

	EXPECT_EQ(cap.abi.major, 1);
	EXPECT_EQ(cap.abi.minor, 7);
	EXPECT_EQ(cap.abi, rv::Version::header());
	EXPECT_FALSE(cap.capability & RV_CAP_USER_MR)
		<< "capability 0x" << std::hex << cap.capability;
}

TEST(Capability, ReportsEvict)
{
	// RV_IOCTL_EVICT works from issue 3 on.
	rv::Device dev(device_path());
	rv::Capability cap = dev.capability();

	EXPECT_TRUE(cap.has(RV_CAP_EVICT)) << "capability 0x" << std::hex
					   << cap.capability;
	if (rv::test::upstream_form())
		return; // the older forms: OlderClientAbi..., QueryR2...
	EXPECT_TRUE(rv::Device(device_path()).query_r2().has(RV_CAP_EVICT));
	EXPECT_TRUE(rv::Device(device_path())
			    .capability(rv::Version{1, 6}, RV_CAP_EVICT)
			    .has(RV_CAP_EVICT));
}

TEST(Capability, RawStructOutput)
{
	rv::Device dev(device_path());
	rv_capability_params p{};

	p.major_rev = RV_ABI_VER_MAJOR;
	p.minor_rev = RV_ABI_VER_MINOR;
	ASSERT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_CAPABILITY, &p), 0);
	EXPECT_EQ(p.major_rev, 1);
	EXPECT_EQ(p.minor_rev, 7);
	EXPECT_EQ(p.capability & RV_CAP_USER_MR, 0u);
}

TEST(Capability, OlderClientAbiStillGetsModuleVersion)
{
	rv::Capability current = rv::Device(device_path()).capability();

	for (rv::Version client : {rv::Version{1, 6}, rv::Version{1, 2}}) {
		SCOPED_TRACE(client.to_string());
		rv::Device dev(device_path());
		if (rv::test::upstream_form()) {
			// It would read 64-byte events as 65-byte ones.
			rv_capability_params p{};
			p.major_rev = client.major;
			p.minor_rev = client.minor;
			EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_CAPABILITY, &p),
				  EINVAL);
			continue;
		}
		rv::Capability cap = dev.capability(client);
		EXPECT_EQ(cap.abi, (rv::Version{1, 7}));
		EXPECT_EQ(cap.capability, current.capability);
	}
}

TEST(Capability, QueryR2MatchesCapability)
{
	rv::Capability cap = rv::Device(device_path()).capability();
	if (rv::test::upstream_form()) {
		rv_capability_params p{};
		EXPECT_EQ(ioctl_errno(rv::Device(device_path()).fd(),
				      RV_IOCTL_QUERY_R2, &p),
			  EINVAL);
		return;
	}
	rv::Capability r2 = rv::Device(device_path()).query_r2();

	EXPECT_EQ(r2.abi, (rv::Version{1, 7}));
	EXPECT_EQ(r2.abi, cap.abi);
	EXPECT_EQ(r2.capability, cap.capability);
}

TEST(Capability, QueryR2IgnoresInput)
{
	// QUERY_R2 reads nothing: garbage in the struct must not matter.
	RV_OOT_FORM_OR_SKIP();
	rv::Device dev(device_path());
	rv_capability_params p;

	std::memset(&p, 0xa5, sizeof(p));
	ASSERT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_QUERY_R2, &p), 0);
	EXPECT_EQ(p.major_rev, 1);
	EXPECT_EQ(p.minor_rev, 7);
	EXPECT_EQ(p.capability & RV_CAP_USER_MR, 0u);
}

TEST(Capability, NonZeroResv1IsEinval)
{
	rv::Device dev(device_path());
	rv_capability_params p{};

	p.major_rev = RV_ABI_VER_MAJOR;
	p.minor_rev = RV_ABI_VER_MINOR;
	p.resv1 = 1;
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_CAPABILITY, &p), EINVAL);

	p.resv1 = 0x80000000u;
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_CAPABILITY, &p), EINVAL);
}

TEST(Capability, NonZeroResv2IsEinval)
{
	rv::Device dev(device_path());
	constexpr std::size_t n = sizeof(rv_capability_params::resv2) /
				  sizeof(rv_capability_params::resv2[0]);

	for (std::size_t i = 0; i < n; i++) {
		for (std::uint64_t v : {std::uint64_t{1},
					std::uint64_t{1} << 63}) {
			SCOPED_TRACE(testing::Message() << "resv2[" << i
							<< "] = " << v);
			rv_capability_params p{};
			p.major_rev = RV_ABI_VER_MAJOR;
			p.minor_rev = RV_ABI_VER_MINOR;
			p.resv2[i] = v;
			EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_CAPABILITY, &p),
				  EINVAL);
		}
	}
	// And the same file still accepts a well-formed request.
	EXPECT_EQ(dev.capability().abi, (rv::Version{1, 7}));
}

TEST(Capability, LibraryReportsEinval)
{
	// Through rv::Device the failure is a system_error with the errno.
	rv::Device dev(device_path());
	rv_capability_params p{};

	p.major_rev = RV_ABI_VER_MAJOR;
	p.resv1 = 1;
	try {
		dev.ioctl(RV_IOCTL_CAPABILITY, &p);
		FAIL() << "no exception";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EINVAL);
		EXPECT_EQ(e.code().category(), std::generic_category());
		EXPECT_NE(std::string(e.what()).find("RV_IOCTL_CAPABILITY"),
			  std::string::npos) << e.what();
	}
}

TEST(Capability, BadPointerIsEfault)
{
	rv::Device dev(device_path());
	void *bad = reinterpret_cast<void *>(std::uintptr_t{1});

	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_CAPABILITY, bad), EFAULT);
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_CAPABILITY, nullptr), EFAULT);
	EXPECT_EQ(ioctl_errno(dev.fd(), RV_IOCTL_QUERY_R2, bad),
		  rv::test::older_form_errno(EFAULT));
}
