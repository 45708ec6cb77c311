// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/device.hpp>

#include <cerrno>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/ioctl.h>

#include <rv/error.hpp>
#include <rv/ioctl.hpp>

#include "ioctl_call.hpp"

namespace rv {

static_assert(sizeof(rv_capability_params) == 64,
	      "struct rv_capability_params must be 64 bytes");
static_assert(sizeof(rv_attach_params) == 160);
static_assert(sizeof(rv_attach_params_r5) == 152);
static_assert(sizeof(rv_mem_params) == 64);
static_assert(sizeof(rv_mem_params_r4) == 56);
static_assert(sizeof(rv_mem_params_r1) == 48);

namespace detail {

int checked_ioctl(int fd, unsigned long request, void *arg)
{
	int ret = ::ioctl(fd, request, arg);
	if (ret < 0)
		throw_errno(ioctl_describe(request));
	return ret;
}

} // namespace detail

namespace {

Capability to_capability(const rv_capability_params &p) noexcept
{
	return {Version{p.major_rev, p.minor_rev}, p.capability};
}

// REG_MEM in one of its forms: the input fields common to all of them,
// then the shared output.
template <typename Params>
rv_mem_params_out reg_mem_as(Device &dev, unsigned long request,
			     std::uint64_t addr, std::uint64_t length,
			     std::uint32_t access)
{
	Params p{};

	p.in.addr = addr;
	p.in.length = length;
	p.in.access = access;
	dev.ioctl(request, &p);
	return p.out;
}

} // namespace

Device::Device(std::string path) : path_(std::move(path))
{
	int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
	if (fd < 0)
		throw_errno("open " + path_);
	fd_ = std::make_shared<UniqueFd>(fd);
}

void Device::close() noexcept
{
	if (fd_)
		fd_->reset();
	attachment_.reset();
}

int Device::ioctl(unsigned long request, void *arg)
{
	return detail::checked_ioctl(fd(), request, arg);
}

Capability Device::capability(Version client, std::uint64_t caps_wanted)
{
	rv_capability_params p{};

	p.major_rev = client.major;
	p.minor_rev = client.minor;
	p.capability = caps_wanted;
	call(RV_IOCTL_CAPABILITY, p);
	Capability cap = to_capability(p);
	declared_abi_ = client;
	module_abi_ = cap.abi;
	return cap;
}

Capability Device::query_r2()
{
	rv_capability_params p{};

	call(RV_IOCTL_QUERY_R2, p);
	Capability cap = to_capability(p);
	declared_abi_ = Version{1, 2};
	module_abi_ = cap.abi;
	return cap;
}

Attach Device::attach(const AttachParams &params, AttachForm form)
{
	Attach out;

	if (form == AttachForm::r5) {
		rv_attach_params_r5 p{};
		p.in = params.to_uapi_r5();
		call(RV_IOCTL_ATTACH_R5, p);
		out = Attach::from_uapi(p.out);
	} else {
		rv_attach_params p{};
		p.in = params.to_uapi();
		call(RV_IOCTL_ATTACH, p);
		out = Attach::from_uapi(p.out);
	}
	attachment_ = Attachment{form, params.rdma_mode, params.cq_entries,
				 out};
	return out;
}

MemoryRegion Device::reg_mem(std::uint64_t addr, std::uint64_t length,
			     std::uint32_t access, RegMemForm form)
{
	rv_mem_params_out out;

	access |= IBV_ACCESS_KERNEL;
	switch (form) {
	case RegMemForm::r4:
		out = reg_mem_as<rv_mem_params_r4>(*this, RV_IOCTL_REG_MEM_R4,
						   addr, length, access);
		break;
	case RegMemForm::r1:
		out = reg_mem_as<rv_mem_params_r1>(*this, RV_IOCTL_REG_MEM_R1,
						   addr, length, access);
		break;
	case RegMemForm::current:
	default:
		out = reg_mem_as<rv_mem_params>(*this, RV_IOCTL_REG_MEM, addr,
						length, access);
		break;
	}
	return MemoryRegion(fd_, MrInfo{out.mr_handle, out.iova, out.lkey,
					out.rkey, addr, length, access});
}

void Device::dereg_mem(std::uint64_t mr_handle, std::uint64_t addr,
		       std::uint64_t length, std::uint32_t access)
{
	rv_dereg_params_in p{};

	p.mr_handle = mr_handle;
	p.addr = addr;
	p.length = length;
	p.access = access;
	call(RV_IOCTL_DEREG_MEM, p);
}

std::optional<Evicted> Device::evict(rv_evict_params &p)
{
	try {
		call(RV_IOCTL_EVICT, p);
	} catch (const std::system_error &e) {
		if (e.code().value() == ENOENT &&
		    e.code().category() == std::generic_category())
			return std::nullopt;
		throw;
	}
	return Evicted{p.out.bytes, p.out.count};
}

std::optional<Evicted> Device::evict_exact(std::uint64_t addr,
					   std::uint64_t length,
					   std::uint32_t access)
{
	rv_evict_params p{};

	p.in.type = RV_EVICT_TYPE_SEARCH_EXACT;
	p.in.search.addr = addr;
	p.in.search.length = length;
	p.in.search.access = access | IBV_ACCESS_KERNEL;
	return evict(p);
}

std::optional<Evicted> Device::evict_range(std::uint64_t addr,
					   std::uint64_t length)
{
	rv_evict_params p{};

	p.in.type = RV_EVICT_TYPE_SEARCH_RANGE;
	p.in.search.addr = addr;
	p.in.search.length = length;
	return evict(p);
}

std::optional<Evicted> Device::evict_amount(std::uint64_t bytes,
					    std::uint32_t count)
{
	rv_evict_params p{};

	p.in.type = RV_EVICT_TYPE_AMOUNT;
	p.in.amount.bytes = bytes;
	p.in.amount.count = count;
	return evict(p);
}

CacheStats Device::cache_stats()
{
	CacheStats s{};

	call(RV_IOCTL_GET_CACHE_STATS, s);
	return s;
}

EventStats Device::event_stats()
{
	EventStats s{};

	call(RV_IOCTL_GET_EVENT_STATS, s);
	return s;
}

// MemoryRegion lives here, next to the helper it shares with Device.

MemoryRegion::MemoryRegion(MemoryRegion &&other) noexcept
	: file_(std::move(other.file_)), info_(other.info_),
	  valid_(std::exchange(other.valid_, false))
{
}

MemoryRegion &MemoryRegion::operator=(MemoryRegion &&other) noexcept
{
	if (this != &other) {
		reset();
		file_ = std::move(other.file_);
		info_ = other.info_;
		valid_ = std::exchange(other.valid_, false);
	}
	return *this;
}

void MemoryRegion::release()
{
	if (!valid_)
		return;
	valid_ = false;

	rv_dereg_params_in p{};
	p.mr_handle = info_.handle;
	p.addr = info_.addr;
	p.length = info_.length;
	p.access = info_.access;

	std::shared_ptr<UniqueFd> fd = file_.lock();
	file_.reset();
	if (!fd || !fd->valid())
		throw_errno(EBADF, ioctl_describe(RV_IOCTL_DEREG_MEM));
	detail::checked_ioctl(fd->get(), RV_IOCTL_DEREG_MEM, &p);
}

void MemoryRegion::reset() noexcept
{
	try {
		release();
	} catch (...) {
		// The destructor's contract: DEREG_MEM failures are dropped.
	}
}

} // namespace rv
