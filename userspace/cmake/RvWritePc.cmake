# SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#
# Runs at install time (from RvPackage.cmake): writes rv.pc from rv.pc.in
# for CMAKE_INSTALL_PREFIX, the prefix being installed to. Relative
# directories become ${prefix}/DIR, absolute ones stay as they are.
foreach(v LIBDIR INCLUDEDIR UAPI_INCLUDEDIR)
	if(NOT IS_ABSOLUTE "${RV_PC_${v}}")
		set(RV_PC_${v} "\${prefix}/${RV_PC_${v}}")
	endif()
endforeach()
set(RV_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")

# The uAPI header's directory only when it is not the library's.
set(RV_PC_CFLAGS "-I\${includedir}")
if(NOT RV_PC_UAPI_INCLUDEDIR STREQUAL RV_PC_INCLUDEDIR)
	string(APPEND RV_PC_CFLAGS " -I\${uapiincludedir}")
endif()

configure_file("${RV_PC_IN}" "${RV_PC_OUT}" @ONLY)
