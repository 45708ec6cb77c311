# SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#
# rv_set_warnings(<target>): the project's warning flags, applied PRIVATE so
# that they never leak into consumers of installed targets.
#
# -Wpedantic is on: the one construct of rv_user_ioctls.h that ISO C++
# rejects (the flexible array member of struct rv_ring_header) is
# silenced locally by rv/uapi.hpp, the only place that includes it.
function(rv_set_warnings target)
	target_compile_options(${target} PRIVATE
		-Wall -Wextra -Wpedantic
		-Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
		-Wformat=2 -Wundef -Wconversion -Wsign-conversion
		$<$<BOOL:${RV_WERROR}>:-Werror>)
endfunction()
