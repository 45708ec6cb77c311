// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The module emulation of the LD_PRELOAD shim (fake_rv_module.cpp).
#ifndef RV_TEST_FAKE_RV_MODULE_HPP
#define RV_TEST_FAKE_RV_MODULE_HPP

#include <cstdint>

namespace rv::test::fake {

// RV_FAKE_MODULE is set.
bool module_active();

// CAPABILITY / QUERY_R2 succeeded on fd declaring abi (RV_ABI_VERSION).
void record_abi(int fd, std::uint32_t abi);

// Every rv ioctl but CAPABILITY/QUERY_R2 once the dispatch checks passed:
// ioctl(2)'s return value with errno set.
int module_ioctl(int fd, unsigned long request, void *arg);

} // namespace rv::test::fake

#endif // RV_TEST_FAKE_RV_MODULE_HPP
