// SPDX-License-Identifier: GPL-2.0
/*
 * rv tracepoints: the one place they are instantiated (rv_trace.h).
 */
#define CREATE_TRACE_POINTS
#include "rv_trace.h"
