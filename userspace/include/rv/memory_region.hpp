// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::MemoryRegion: one reference on a kernel MR of the rv MR cache.
//
// Each successful RV_IOCTL_REG_MEM takes a reference on a cached MR (a
// hit returns the same MR again, with another reference); each
// RV_IOCTL_DEREG_MEM drops one and leaves the MR cached. A MemoryRegion
// owns exactly one such reference: its destructor sends DEREG_MEM with
// the addr, length and access given to REG_MEM (errors ignored: use
// release() to see them).
//
// A MemoryRegion does not keep its Device's file open: once the Device
// is closed or destroyed (which releases every MR in the kernel) the
// destructor does nothing and release() fails with EBADF.
#ifndef RV_MEMORY_REGION_HPP
#define RV_MEMORY_REGION_HPP

#include <cstdint>
#include <memory>
#include <utility>

#include <rv/unique_fd.hpp>
#include <rv/uapi.hpp>

namespace rv {

// Access flags of REG_MEM: the IBV_ACCESS_* values the module accepts.
namespace access {
inline constexpr std::uint32_t local_write = 1;	// IBV_ACCESS_LOCAL_WRITE
inline constexpr std::uint32_t remote_write = 2;	// IBV_ACCESS_REMOTE_WRITE
inline constexpr std::uint32_t remote_read = 4;	// IBV_ACCESS_REMOTE_READ
inline constexpr std::uint32_t kernel = IBV_ACCESS_KERNEL;
// What PSM3 registers a rendezvous receive buffer with.
inline constexpr std::uint32_t psm3_recv = kernel | local_write | remote_write;
// What PSM3 registers a send buffer with.
inline constexpr std::uint32_t psm3_send = kernel | local_write;
} // namespace access

// Which ioctl form REG_MEM is sent in; the semantics are the same.
enum class RegMemForm : std::uint8_t {
	current,	// RV_IOCTL_REG_MEM, 64 bytes in
	r4,		// RV_IOCTL_REG_MEM_R4, 56 bytes
	r1,		// RV_IOCTL_REG_MEM_R1, 48 bytes
};

// What REG_MEM was asked and answered.
struct MrInfo {
	std::uint64_t handle = 0;	// mr_handle, never 0 when valid
	std::uint64_t iova = 0;
	std::uint32_t lkey = 0;
	std::uint32_t rkey = 0;
	std::uint64_t addr = 0;		// as given to REG_MEM
	std::uint64_t length = 0;	// as given to REG_MEM
	std::uint32_t access = 0;	// as given, IBV_ACCESS_KERNEL included

	friend bool operator==(const MrInfo &, const MrInfo &) = default;
};

class MemoryRegion {
public:
	// An empty handle (valid() is false).
	MemoryRegion() noexcept = default;
	~MemoryRegion() { reset(); }

	MemoryRegion(const MemoryRegion &) = delete;
	MemoryRegion &operator=(const MemoryRegion &) = delete;
	MemoryRegion(MemoryRegion &&other) noexcept;
	MemoryRegion &operator=(MemoryRegion &&other) noexcept;

	[[nodiscard]] bool valid() const noexcept { return valid_; }
	explicit operator bool() const noexcept { return valid_; }

	[[nodiscard]] const MrInfo &info() const noexcept { return info_; }
	[[nodiscard]] std::uint64_t handle() const noexcept { return info_.handle; }
	[[nodiscard]] std::uint64_t iova() const noexcept { return info_.iova; }
	[[nodiscard]] std::uint32_t lkey() const noexcept { return info_.lkey; }
	[[nodiscard]] std::uint32_t rkey() const noexcept { return info_.rkey; }
	[[nodiscard]] std::uint64_t addr() const noexcept { return info_.addr; }
	[[nodiscard]] std::uint64_t length() const noexcept { return info_.length; }
	[[nodiscard]] std::uint32_t access() const noexcept { return info_.access; }

	// DEREG_MEM now. Throws std::system_error ("RV_IOCTL_DEREG_MEM")
	// with the errno; the handle is empty afterwards either way. Does
	// nothing on an empty handle.
	void release();

	// DEREG_MEM now, errors ignored (what the destructor does).
	void reset() noexcept;

	// Forgets the reference without DEREG_MEM (the kernel drops it when
	// the file is closed).
	void abandon() noexcept { valid_ = false; }

private:
	friend class Device;
	MemoryRegion(std::weak_ptr<UniqueFd> file, const MrInfo &info) noexcept
		: file_(std::move(file)), info_(info), valid_(true) {}

	std::weak_ptr<UniqueFd> file_;
	MrInfo info_;
	bool valid_ = false;
};

} // namespace rv

#endif // RV_MEMORY_REGION_HPP
