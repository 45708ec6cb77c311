// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The rv uAPI header, as seen from C++.
//
// Include this instead of <rdma/rv_user_ioctls.h> directly. The header is
// C: struct rv_ring_header ends in a flexible array member, which ISO C++
// does not have (GCC and Clang accept it as an extension). Silencing
// -Wpedantic for this one include lets C++ code that uses the header still
// build with -Wpedantic.
#ifndef RV_UAPI_HPP
#define RV_UAPI_HPP

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#endif

#include <rdma/rv_user_ioctls.h>

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif // RV_UAPI_HPP
