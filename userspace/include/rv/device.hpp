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
#include <string>
#include <string_view>
#include <type_traits>

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
	[[nodiscard]] int fd() const noexcept { return fd_.get(); }
	[[nodiscard]] bool is_open() const noexcept { return fd_.valid(); }
	[[nodiscard]] const std::string &path() const noexcept { return path_; }

	// Closes the file now (the destructor does it otherwise). The rv
	// state of the file is released by the kernel.
	void close() noexcept { fd_.reset(); }

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

	// Any ioctl on this file: returns ioctl(2)'s non-negative result or
	// throws std::system_error naming the request (ioctl_describe()).
	int ioctl(unsigned long request, void *arg);

private:
	// The one place that calls ioctl(2). Every typed wrapper goes
	// through here; what names the operation in the exception.
	int call(unsigned long request, void *arg, std::string_view what);

	template <typename T>
		requires(!std::is_pointer_v<T>)
	int call(unsigned long request, T &arg, std::string_view what)
	{
		return call(request, static_cast<void *>(&arg), what);
	}

	std::string path_;
	UniqueFd fd_;
};

} // namespace rv

#endif // RV_DEVICE_HPP
