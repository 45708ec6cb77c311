// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Raw MR-cache ioctls for the VM tests: exact bytes in, errno out.
#ifndef RV_TEST_VM_MR_UTIL_HPP
#define RV_TEST_VM_MR_UTIL_HPP

#include <cstdint>

#include <rv/device.hpp>
#include <rv/uapi.hpp>

#include "vm_env.hpp"

namespace rv::test {

inline constexpr std::uint64_t KiB = 1024;
inline constexpr std::uint64_t MiB = 1024 * KiB;

// REG_MEM with exactly these fields; 0 (and out filled) or the errno.
inline int reg_errno(int fd, std::uint64_t addr, std::uint64_t length,
		     std::uint32_t access, rv_mem_params_out *out = nullptr)
{
	rv_mem_params p{};
	p.in.addr = addr;
	p.in.length = length;
	p.in.access = access;
	int err = ioctl_errno(fd, RV_IOCTL_REG_MEM, &p);
	if (!err && out)
		*out = p.out;
	return err;
}

inline int dereg_errno(int fd, std::uint64_t handle, std::uint64_t addr,
		       std::uint64_t length, std::uint32_t access,
		       std::uint32_t resv1 = 0)
{
	rv_dereg_params_in p{};
	p.mr_handle = handle;
	p.addr = addr;
	p.length = length;
	p.access = access;
	p.resv1 = resv1;
	return ioctl_errno(fd, RV_IOCTL_DEREG_MEM, &p);
}

inline int dereg_errno(int fd, const rv::MrInfo &mr)
{
	return dereg_errno(fd, mr.handle, mr.addr, mr.length, mr.access);
}

inline int evict_errno(int fd, rv_evict_params &p)
{
	return ioctl_errno(fd, RV_IOCTL_EVICT, &p);
}

// A file attached to node n (mr_cache_size MB, 0 = default) without a
// ring.
inline rv::Device cache_device(const Node &n, std::uint32_t mr_cache_size = 0,
			       rv::Attach *out = nullptr)
{
	rv::AttachParams p = params_for(n);
	p.mr_cache_size = mr_cache_size;
	p.cq_entries = 0;
	rv::Device dev = open_declared();
	rv::Attach a = dev.attach(p);
	if (out)
		*out = a;
	return dev;
}

inline std::uint64_t addr_of(const void *p)
{
	return reinterpret_cast<std::uintptr_t>(p);
}

} // namespace rv::test

#endif // RV_TEST_VM_MR_UTIL_HPP
