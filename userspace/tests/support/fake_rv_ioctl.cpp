// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// LD_PRELOAD shim for host tests of the tools: answers rv ioctls on any
// file the way the module's dispatch does, so that the tools' output (and
// the logic of the VM tests, run with RV_DEVICE=/dev/null) can be checked
// without rv.ko. Active only while RV_FAKE_MAJOR is set in the
// environment:
//
//   RV_FAKE_MAJOR, RV_FAKE_MINOR  the version to report
//   RV_FAKE_CAPS                  capability bits to report (strtoull, base 0)
//   RV_FAKE_ERRNO                 fail the ioctl with this errno instead
//   RV_FAKE_MODULE                emulate ATTACH, the ring, the MR cache
//                                 (fake_rv_module.cpp) instead of
//                                 answering EOPNOTSUPP
//
// An ioctl of another type goes to libc. For RV_MAGIC: a number rv does
// not define is ENOTTY, a defined number in a form the header does not
// define is EINVAL, an argument pointer in the first page is EFAULT,
// CAPABILITY with a reserved field set (or no major) is EINVAL, and every
// other defined command is EOPNOTSUPP (ATTACH: user mode unsupported,
// the rest not implemented).
//
// <sys/ioctl.h> is deliberately not included: its declaration of ioctl()
// would clash with this definition.
#include <cerrno>
#include <cstdarg>
#include <cstdlib>

#include <cstdint>

#include <dlfcn.h>

#include <rv/ioctl.hpp>
#include <rv/uapi.hpp>

#include "fake_rv_module.hpp"

namespace {

using ioctl_fn = int (*)(int, unsigned long, ...);

unsigned long long env_number(const char *name)
{
	const char *v = std::getenv(name);
	return v ? std::strtoull(v, nullptr, 0) : 0;
}

bool is_zero(const rv_capability_params &p)
{
	if (p.resv1)
		return false;
	for (auto r : p.resv2)
		if (r)
			return false;
	return true;
}

int fail(int err)
{
	errno = err;
	return -1;
}

// Numbers the header defines: 0xF1, 0xF3, 0xF4, 0xF6 to 0xFF.
bool defined_nr(unsigned nr)
{
	return nr == 0xF1 || nr == 0xF3 || nr == 0xF4 ||
	       (nr >= 0xF6 && nr <= 0xFF);
}

int fake(int fd, unsigned long request, void *arg)
{
	if (!defined_nr(_IOC_NR(request)))
		return fail(ENOTTY);
	if (rv::ioctl_name(request).empty())
		return fail(EINVAL);
	if (const char *e = std::getenv("RV_FAKE_ERRNO"))
		return fail(std::atoi(e));
	if (reinterpret_cast<std::uintptr_t>(arg) < 4096)
		return fail(EFAULT);
	if (request != RV_IOCTL_CAPABILITY && request != RV_IOCTL_QUERY_R2) {
		if (rv::test::fake::module_active())
			return rv::test::fake::module_ioctl(fd, request, arg);
		return fail(EOPNOTSUPP);
	}

	auto *p = static_cast<rv_capability_params *>(arg);
	if (request == RV_IOCTL_CAPABILITY && (!is_zero(*p) || !p->major_rev))
		return fail(EINVAL);
	const __u16 declared_major = p->major_rev;
	const __u16 declared_minor = p->minor_rev;
	*p = rv_capability_params{};
	p->major_rev = static_cast<__u16>(env_number("RV_FAKE_MAJOR"));
	p->minor_rev = static_cast<__u16>(env_number("RV_FAKE_MINOR"));
	p->capability = env_number("RV_FAKE_CAPS");
	if (rv::test::fake::module_active())
		rv::test::fake::record_abi(
			fd, request == RV_IOCTL_QUERY_R2
				? RV_ABI_VERSION(1u, 2u)
				: RV_ABI_VERSION(std::uint32_t{declared_major},
						 std::uint32_t{declared_minor}));
	return 0;
}

} // namespace

extern "C" __attribute__((visibility("default"))) int
ioctl(int fd, unsigned long request, ...)
{
	va_list ap;

	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);

	if (std::getenv("RV_FAKE_MAJOR") && _IOC_TYPE(request) == RV_MAGIC)
		return fake(fd, request, arg);

	static auto real = reinterpret_cast<ioctl_fn>(dlsym(RTLD_NEXT, "ioctl"));
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	return real(fd, request, arg);
}
