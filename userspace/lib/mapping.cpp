// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/mapping.hpp>

#include <cerrno>

#include <unistd.h>

#include <rv/error.hpp>

namespace rv {

Mapping Mapping::map(std::size_t len, int prot, int flags, int fd,
		     off_t offset, void *addr)
{
	void *p = ::mmap(addr, len, prot, flags, fd, offset);
	if (p == MAP_FAILED)
		throw_errno("mmap");
	return adopt(p, len);
}

Mapping Mapping::anonymous(std::size_t len, bool populate)
{
	return map(len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0));
}

void Mapping::unmap()
{
	std::size_t len = len_;
	void *a = release();

	if (a && ::munmap(a, len) < 0)
		throw_errno("munmap");
}

void Mapping::reset() noexcept
{
	if (addr_)
		::munmap(addr_, len_);
	addr_ = nullptr;
	len_ = 0;
}

std::size_t page_size() noexcept
{
	static const std::size_t size = [] {
		long v = ::sysconf(_SC_PAGESIZE);
		return v > 0 ? static_cast<std::size_t>(v) : std::size_t{4096};
	}();
	return size;
}

} // namespace rv
