// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::Mapping: sole owner of one mmap(2)ed range, unmapped on destruction.
#ifndef RV_MAPPING_HPP
#define RV_MAPPING_HPP

#include <cstddef>
#include <cstdint>
#include <span>

#include <sys/mman.h>
#include <sys/types.h>

namespace rv {

class Mapping {
public:
	Mapping() noexcept = default;
	~Mapping() { reset(); }

	Mapping(const Mapping &) = delete;
	Mapping &operator=(const Mapping &) = delete;
	Mapping(Mapping &&other) noexcept
		: addr_(other.addr_), len_(other.len_)
	{
		other.addr_ = nullptr;
		other.len_ = 0;
	}
	Mapping &operator=(Mapping &&other) noexcept
	{
		if (this != &other) {
			reset();
			addr_ = other.addr_;
			len_ = other.len_;
			other.addr_ = nullptr;
			other.len_ = 0;
		}
		return *this;
	}

	// mmap(addr, len, prot, flags, fd, offset). Throws std::system_error
	// ("mmap") with its errno.
	static Mapping map(std::size_t len, int prot, int flags, int fd = -1,
			   off_t offset = 0, void *addr = nullptr);

	// Private anonymous read-write memory; populate touches every page.
	static Mapping anonymous(std::size_t len, bool populate = true);

	// Takes ownership of an existing mapping.
	static Mapping adopt(void *addr, std::size_t len) noexcept
	{
		Mapping m;
		m.addr_ = addr;
		m.len_ = len;
		return m;
	}

	[[nodiscard]] void *data() const noexcept { return addr_; }
	[[nodiscard]] std::byte *bytes() const noexcept
	{
		return static_cast<std::byte *>(addr_);
	}
	[[nodiscard]] std::uint64_t addr() const noexcept
	{
		return reinterpret_cast<std::uintptr_t>(addr_);
	}
	[[nodiscard]] std::size_t size() const noexcept { return len_; }
	[[nodiscard]] std::span<std::byte> span() const noexcept
	{
		return {bytes(), len_};
	}
	[[nodiscard]] bool valid() const noexcept { return addr_ != nullptr; }
	explicit operator bool() const noexcept { return valid(); }

	// munmap now; throws std::system_error ("munmap"). Empty afterwards
	// (also when munmap fails).
	void unmap();

	// Gives up ownership without unmapping.
	void *release() noexcept
	{
		void *a = addr_;
		addr_ = nullptr;
		len_ = 0;
		return a;
	}

	// munmap, errors ignored.
	void reset() noexcept;

private:
	void *addr_ = nullptr;
	std::size_t len_ = 0;
};

// The system page size.
[[nodiscard]] std::size_t page_size() noexcept;

} // namespace rv

#endif // RV_MAPPING_HPP
