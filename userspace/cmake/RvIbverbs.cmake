# SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#
# libibverbs (Debian: libibverbs-dev), for rvbench and rv_sizing: the
# imported target rv_ibverbs when the header and the library are found.
find_path(IBVERBS_INCLUDE_DIR infiniband/verbs.h)
find_library(IBVERBS_LIBRARY ibverbs)
if(IBVERBS_INCLUDE_DIR AND IBVERBS_LIBRARY AND NOT TARGET rv_ibverbs)
	add_library(rv_ibverbs INTERFACE IMPORTED)
	set_target_properties(rv_ibverbs PROPERTIES
		INTERFACE_INCLUDE_DIRECTORIES "${IBVERBS_INCLUDE_DIR}"
		INTERFACE_LINK_LIBRARIES "${IBVERBS_LIBRARY}")
endif()
