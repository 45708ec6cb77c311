// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
/*
 * The header must compile on its own, included first: it brings every
 * header it needs. run.sh compiles this with -Wpadded as well, so any
 * implicit padding in a struct of the header is an error (a second,
 * compiler-made check that every hole is a named reserved field).
 */
#include <rdma/rv_user_ioctls.h>

struct rv_event rv_abi_standalone_event;
