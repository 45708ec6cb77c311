// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// What each call may legitimately return.
//
// For every ioctl the set of errnos comes from reading the module
// (drivers/infiniband/ulp/rv/*.c) and the kernel code it calls; the
// comments in oracle.cpp name the paths. On top of the set, the argument
// alone often decides the outcome: a command number rv does not define
// can only fail with ENOTTY, a defined number in a form it does not
// accept only with EINVAL, an unreadable argument only with EFAULT, a
// malformed field only with the errno of that check; and some arguments
// can never succeed (a REG_MEM without IBV_ACCESS_KERNEL, an mmap at a
// non-zero offset, EVICT of nothing). The oracle reads the argument the
// way the kernel copies it and narrows the expectation accordingly.
//
// Whether the file is attached, by which process and to what is not
// known to the oracle: other threads and processes race on the same
// files, and fd numbers are reused. So every ioctl that needs an attach
// may also fail as an unattached file (EINVAL) or another process's
// (EACCES) would, and every call on a descriptor may find it closed
// (EBADF).
#ifndef RV_FUZZ_ORACLE_HPP
#define RV_FUZZ_ORACLE_HPP

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ops.hpp"

namespace rvfuzz {

inline constexpr int max_errno = 160;
using ErrnoSet = std::bitset<max_errno>;

[[nodiscard]] ErrnoSet errnos(std::initializer_list<int> list);
// "EINVAL" (or "E123" for a number without a name).
[[nodiscard]] std::string errno_name(int err);
// "{EBADF,EINVAL}"
[[nodiscard]] std::string to_string(const ErrnoSet &set);

// How the kernel can access an ioctl argument of the command's size.
struct ArgAccess {
	bool readable = true;	// copy_from_user of the whole struct works
	bool writable = true;	// copy_to_user of it works
};

struct Expect {
	ErrnoSet allowed;		// errnos that are not a failure
	bool success_ok = true;		// may the call succeed at all
	const char *why = "";		// why it cannot succeed
	long max_ret = 0;		// success returns 0..max_ret
};

// What the oracle knows about the machine.
struct OracleEnv {
	std::vector<std::string> devices;	// RDMA devices (sysfs)
	std::vector<unsigned> ports;		// port count of each
	bool all_roce = true;			// every port is RoCE (rxe)
};

// The rv op an exact ioctl command number is, if it is one.
[[nodiscard]] std::optional<Op> op_of_cmd(unsigned int cmd) noexcept;
// The command number of an ioctl op.
[[nodiscard]] unsigned int cmd_of_op(Op op) noexcept;

// ioctl(fd, cmd, arg) on an rv file. bytes: what the argument holds
// (at least _IOC_SIZE(cmd) bytes, or the size of the op's struct if
// larger) as the kernel would read it.
[[nodiscard]] Expect expect_ioctl(const OracleEnv &env, unsigned int cmd,
				  std::span<const std::byte> bytes,
				  ArgAccess acc);

// An fd that cannot be open (negative, or above any limit).
[[nodiscard]] Expect expect_bad_fd();

[[nodiscard]] Expect expect_open();
[[nodiscard]] Expect expect_close(bool fd_valid);
[[nodiscard]] Expect expect_dup();

struct MmapArgs {
	std::uint64_t addr = 0;
	std::uint64_t len = 0;
	int prot = 0;
	int flags = 0;
	std::uint64_t off = 0;
	bool addr_mapped = false;	// [addr, addr + len) is mapped
};

[[nodiscard]] Expect expect_mmap(const MmapArgs &a);
[[nodiscard]] Expect expect_munmap(std::uint64_t addr, std::uint64_t len);
// mremap of an event ring mapping of old_len bytes (rings cannot grow),
// new_addr its fifth argument.
[[nodiscard]] Expect expect_mremap(std::uint64_t addr, std::uint64_t old_len,
				   std::uint64_t new_len, int flags,
				   std::uint64_t new_addr);

// The largest mapping an event ring can need: RV_MAX_CQ_ENTRIES entries
// of the legacy layout, page aligned.
[[nodiscard]] std::uint64_t max_ring_len() noexcept;

// The end of the largest user address space (5-level paging); a range
// ending above it can never be pinned.
inline constexpr std::uint64_t user_space_end = 1ULL << 56;

} // namespace rvfuzz

#endif // RV_FUZZ_ORACLE_HPP
