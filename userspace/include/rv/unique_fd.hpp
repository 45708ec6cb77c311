// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rv::UniqueFd: sole owner of a file descriptor, closed on destruction.
#ifndef RV_UNIQUE_FD_HPP
#define RV_UNIQUE_FD_HPP

namespace rv {

class UniqueFd {
public:
	UniqueFd() noexcept = default;
	// Takes ownership of fd (which may be -1).
	explicit UniqueFd(int fd) noexcept : fd_(fd) {}
	~UniqueFd() { reset(); }

	UniqueFd(const UniqueFd &) = delete;
	UniqueFd &operator=(const UniqueFd &) = delete;

	UniqueFd(UniqueFd &&other) noexcept : fd_(other.release()) {}
	UniqueFd &operator=(UniqueFd &&other) noexcept
	{
		if (this != &other)
			reset(other.release());
		return *this;
	}

	[[nodiscard]] int get() const noexcept { return fd_; }
	[[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
	explicit operator bool() const noexcept { return valid(); }

	// Gives up ownership without closing; returns the descriptor.
	[[nodiscard]] int release() noexcept
	{
		int fd = fd_;

		fd_ = -1;
		return fd;
	}

	// Closes the owned descriptor (errors ignored: on Linux the
	// descriptor is gone even when close() fails) and owns fd instead.
	void reset(int fd = -1) noexcept;

private:
	int fd_ = -1;
};

} // namespace rv

#endif // RV_UNIQUE_FD_HPP
