// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Names of the RV_CAP_* capability bits.
#ifndef RV_CAPABILITY_HPP
#define RV_CAPABILITY_HPP

#include <cstdint>
#include <string>
#include <vector>

#include <rv/uapi.hpp>

namespace rv {

// Name of a single capability bit (0..63): "user_mr" for RV_CAP_USER_MR,
// "evict" for RV_CAP_EVICT, and the bit's mask in hex ("0x4") for a bit
// this library does not know.
[[nodiscard]] std::string capability_bit_name(unsigned bit);

// Names of every bit set in caps, lowest bit first.
[[nodiscard]] std::vector<std::string> capability_names(std::uint64_t caps);

// The names joined with ", ", or "none" for 0.
[[nodiscard]] std::string format_capabilities(std::uint64_t caps);

} // namespace rv

#endif // RV_CAPABILITY_HPP
