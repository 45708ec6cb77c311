// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Environment of the VM tests, which need the rv module loaded.
//
//   RV_DEVICE  device node to test (default RV_FILE_NAME, /dev/rv)
//   RV_RVINFO  rvinfo binary (default: the one built with these tests,
//              else an rvinfo next to rv_vm_tests)
#ifndef RV_TEST_VM_ENV_HPP
#define RV_TEST_VM_ENV_HPP

#include <string>

namespace rv::test {

[[nodiscard]] std::string device_path();
[[nodiscard]] std::string rvinfo_path();

// ioctl(fd, request, arg): 0 on success, else the errno. For checking
// the exact error of malformed requests without the library's checks.
[[nodiscard]] int ioctl_errno(int fd, unsigned long request, void *arg);

} // namespace rv::test

#endif // RV_TEST_VM_ENV_HPP
