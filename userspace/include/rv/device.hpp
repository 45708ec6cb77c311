// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::Device: one open file of the rv character device.
//
// Everything rv does is per open file: the ABI a client declares, its
// attach, MRs and connections all belong to the file and go away when it
// is closed. A Device owns that file descriptor.
#ifndef RV_DEVICE_HPP
#define RV_DEVICE_HPP

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <rv/attach.hpp>
#include <rv/memory_region.hpp>
#include <rv/unique_fd.hpp>
#include <rv/uapi.hpp>
#include <rv/version.hpp>

namespace rv {

// What RV_IOCTL_CAPABILITY / RV_IOCTL_QUERY_R2 report about the module.
struct Capability {
	Version abi;			// the module's ABI version
	std::uint64_t capability = 0;	// RV_CAP_* bits it implements

	[[nodiscard]] constexpr bool has(std::uint64_t bits) const noexcept
	{
		return (capability & bits) == bits;
	}
	friend constexpr bool operator==(const Capability &,
					 const Capability &) = default;
};

// Layout of the event ring entries of a file.
enum class EventLayout : std::uint8_t {
	abi_1_7,	// struct rv_event, 64 bytes
	legacy,		// RV_EVENT_LEGACY_SIZE (65) bytes, ABI 1.6 and older
};

// The layout the module uses for a file that declared client_abi (nullopt:
// nothing declared; QUERY_R2 declares 1.2) when the module itself is
// module_abi (nullopt: not asked, assumed current). 64-byte entries need
// both at 1.7 or newer.
[[nodiscard]] constexpr EventLayout
event_layout_for(std::optional<Version> client_abi,
		 std::optional<Version> module_abi) noexcept
{
	constexpr Version v1_7{1, 7};

	if (!client_abi || *client_abi < v1_7)
		return EventLayout::legacy;
	if (module_abi && *module_abi < v1_7)
		return EventLayout::legacy;
	return EventLayout::abi_1_7;
}

// A successful ATTACH of this file: what was asked and answered.
struct Attachment {
	AttachForm form = AttachForm::current;
	std::uint8_t rdma_mode = 0;
	std::uint32_t cq_entries = 0;
	Attach out;
};

// RV_IOCTL_GET_CACHE_STATS and RV_IOCTL_GET_EVENT_STATS answer these
// structs as they are.
using CacheStats = rv_cache_stats_params_out;
using EventStats = rv_event_stats_params_out;

// What RV_IOCTL_EVICT removed.
struct Evicted {
	std::uint64_t bytes = 0;
	std::uint32_t count = 0;

	friend bool operator==(const Evicted &, const Evicted &) = default;
};

class Device {
public:
	static constexpr std::string_view default_path = RV_FILE_NAME;

	// Opens path O_RDWR | O_CLOEXEC. Throws std::system_error
	// ("open <path>") with the errno of open(2).
	explicit Device(std::string path = std::string(default_path));

	Device(Device &&) noexcept = default;
	Device &operator=(Device &&) noexcept = default;
	Device(const Device &) = delete;
	Device &operator=(const Device &) = delete;
	~Device() = default;

	// The descriptor, or -1 once moved from or closed.
	[[nodiscard]] int fd() const noexcept { return fd_ ? fd_->get() : -1; }
	[[nodiscard]] bool is_open() const noexcept { return fd() >= 0; }
	[[nodiscard]] const std::string &path() const noexcept { return path_; }

	// Closes the file now (the destructor does it otherwise). The rv
	// state of the file is released by the kernel (once any ring mapping
	// of it is gone too). MemoryRegions of this file become inert.
	void close() noexcept;

	// RV_IOCTL_CAPABILITY: declares the client ABI (which decides, e.g.,
	// the event ring layout of this file) and the capabilities the
	// client intends to use; returns the module's version and
	// capabilities.
	Capability capability(Version client = Version::header(),
			      std::uint64_t caps_wanted = 0);
	Capability capability(std::uint16_t abi_major, std::uint16_t abi_minor,
			      std::uint64_t caps_wanted = 0)
	{
		return capability(Version{abi_major, abi_minor}, caps_wanted);
	}

	// RV_IOCTL_QUERY_R2: the legacy query, which declares ABI 1.2.
	Capability query_r2();

	// The client ABI this file declared by a successful CAPABILITY (1.2
	// for QUERY_R2), and the module's answer; nullopt before.
	[[nodiscard]] std::optional<Version> declared_abi() const noexcept
	{
		return declared_abi_;
	}
	[[nodiscard]] std::optional<Version> module_abi() const noexcept
	{
		return module_abi_;
	}
	// event_layout_for(declared_abi(), module_abi()).
	[[nodiscard]] EventLayout event_layout() const noexcept
	{
		return event_layout_for(declared_abi_, module_abi_);
	}

	// RV_IOCTL_ATTACH (or _R5). Throws std::system_error with the errno.
	Attach attach(const AttachParams &params,
		      AttachForm form = AttachForm::current);
	// The successful attach of this file, if any.
	[[nodiscard]] const std::optional<Attachment> &attachment() const noexcept
	{
		return attachment_;
	}

	// RV_IOCTL_REG_MEM (or _R4/_R1) of [addr, addr + length) with
	// access | IBV_ACCESS_KERNEL (user-PD MRs are not supported).
	MemoryRegion reg_mem(std::uint64_t addr, std::uint64_t length,
			     std::uint32_t access,
			     RegMemForm form = RegMemForm::current);
	MemoryRegion reg_mem(const void *addr, std::uint64_t length,
			     std::uint32_t access,
			     RegMemForm form = RegMemForm::current)
	{
		return reg_mem(reinterpret_cast<std::uintptr_t>(addr), length,
			       access, form);
	}

	// RV_IOCTL_DEREG_MEM with exactly these fields (no access bits
	// added): for references not held by a MemoryRegion.
	void dereg_mem(std::uint64_t mr_handle, std::uint64_t addr,
		       std::uint64_t length, std::uint32_t access);

	// RV_IOCTL_EVICT. When the module answers ENOENT (nothing it may
	// evict matched) these return nullopt; every other error throws.
	// evict_exact() adds IBV_ACCESS_KERNEL to access, as reg_mem() does.
	std::optional<Evicted> evict_exact(std::uint64_t addr,
					   std::uint64_t length,
					   std::uint32_t access);
	std::optional<Evicted> evict_range(std::uint64_t addr,
					   std::uint64_t length);
	std::optional<Evicted> evict_amount(std::uint64_t bytes,
					    std::uint32_t count);

	// RV_IOCTL_GET_CACHE_STATS, RV_IOCTL_GET_EVENT_STATS.
	CacheStats cache_stats();
	EventStats event_stats();

	// Any ioctl on this file: returns ioctl(2)'s non-negative result or
	// throws std::system_error naming the request (ioctl_describe()).
	int ioctl(unsigned long request, void *arg);

private:
	template <typename T>
		requires(!std::is_pointer_v<T>)
	int call(unsigned long request, T &arg)
	{
		return ioctl(request, static_cast<void *>(&arg));
	}

	std::optional<Evicted> evict(rv_evict_params &p);

	// Connection::create() takes a weak reference on fd_.
	friend class Connection;

	std::string path_;
	// Shared only with this file's MemoryRegions and Connections, which
	// hold weak references: the Device alone keeps the descriptor open.
	std::shared_ptr<UniqueFd> fd_;
	std::optional<Version> declared_abi_;
	std::optional<Version> module_abi_;
	std::optional<Attachment> attachment_;
};

} // namespace rv

#endif // RV_DEVICE_HPP
