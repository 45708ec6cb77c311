# SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#
# What other projects build against: the pkg-config file rv.pc and the
# CMake package "rv" (find_package(rv), then rv::rv; rv::rvinfo,
# rv::rvstat and rv::rvbench are exported too).
include(CMakePackageConfigHelpers)

set(RV_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rv)

# The include directory of the installed uAPI header: relative to the
# prefix when this project installs it, else absolute.
if(RV_INSTALL_UAPI_HEADER)
	set(RV_PKG_UAPI_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
	set(RV_PKG_UAPI_INCLUDEDIR "${RV_UAPI_INSTALL_INCLUDEDIR}")
endif()

install(EXPORT rvTargets
	NAMESPACE rv::
	DESTINATION ${RV_CMAKE_INSTALL_DIR})

configure_package_config_file(
	${CMAKE_CURRENT_LIST_DIR}/rvConfig.cmake.in
	${CMAKE_CURRENT_BINARY_DIR}/rvConfig.cmake
	INSTALL_DESTINATION ${RV_CMAKE_INSTALL_DIR}
	PATH_VARS RV_PKG_UAPI_INCLUDEDIR)

# 0.x: every minor version may change the API.
if(PROJECT_VERSION_MAJOR EQUAL 0)
	set(RV_PKG_COMPATIBILITY SameMinorVersion)
else()
	set(RV_PKG_COMPATIBILITY SameMajorVersion)
endif()
write_basic_package_version_file(
	${CMAKE_CURRENT_BINARY_DIR}/rvConfigVersion.cmake
	VERSION ${PROJECT_VERSION}
	COMPATIBILITY ${RV_PKG_COMPATIBILITY})

install(FILES
	${CMAKE_CURRENT_BINARY_DIR}/rvConfig.cmake
	${CMAKE_CURRENT_BINARY_DIR}/rvConfigVersion.cmake
	DESTINATION ${RV_CMAKE_INSTALL_DIR})

# rv.pc holds absolute paths, so it is written when installing, for the
# prefix installed to (`cmake --install --prefix P` may differ from
# CMAKE_INSTALL_PREFIX at configure time).
install(CODE "
	set(RV_PC_IN [==[${CMAKE_CURRENT_LIST_DIR}/rv.pc.in]==])
	set(RV_PC_OUT [==[${CMAKE_CURRENT_BINARY_DIR}/rv.pc]==])
	set(RV_PC_VERSION [==[${PROJECT_VERSION}]==])
	set(RV_PC_LIBDIR [==[${CMAKE_INSTALL_LIBDIR}]==])
	set(RV_PC_INCLUDEDIR [==[${CMAKE_INSTALL_INCLUDEDIR}]==])
	set(RV_PC_UAPI_INCLUDEDIR [==[${RV_PKG_UAPI_INCLUDEDIR}]==])
	include([==[${CMAKE_CURRENT_LIST_DIR}/RvWritePc.cmake]==])
")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rv.pc
	DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
