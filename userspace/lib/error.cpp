// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <rv/error.hpp>

namespace rv {

void throw_errno(int err, const std::string &what)
{
	throw std::system_error(err, std::generic_category(), what);
}

} // namespace rv
