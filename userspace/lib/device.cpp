// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/device.hpp>

#include <cerrno>
#include <utility>

#include <fcntl.h>
#include <sys/ioctl.h>

#include <rv/error.hpp>
#include <rv/ioctl.hpp>

namespace rv {

static_assert(sizeof(rv_capability_params) == 64,
	      "struct rv_capability_params must be 64 bytes");

namespace {

Capability to_capability(const rv_capability_params &p) noexcept
{
	return {Version{p.major_rev, p.minor_rev}, p.capability};
}

} // namespace

Device::Device(std::string path) : path_(std::move(path))
{
	int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
	if (fd < 0)
		throw_errno("open " + path_);
	fd_.reset(fd);
}

int Device::call(unsigned long request, void *arg, std::string_view what)
{
	int ret = ::ioctl(fd_.get(), request, arg);
	if (ret < 0)
		throw_errno(std::string(what));
	return ret;
}

int Device::ioctl(unsigned long request, void *arg)
{
	return call(request, arg, ioctl_describe(request));
}

Capability Device::capability(Version client, std::uint64_t caps_wanted)
{
	rv_capability_params p{};

	p.major_rev = client.major;
	p.minor_rev = client.minor;
	p.capability = caps_wanted;
	call(RV_IOCTL_CAPABILITY, p, "RV_IOCTL_CAPABILITY");
	return to_capability(p);
}

Capability Device::query_r2()
{
	rv_capability_params p{};

	call(RV_IOCTL_QUERY_R2, p, "RV_IOCTL_QUERY_R2");
	return to_capability(p);
}

} // namespace rv
