// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
/*
 * Measures the rv ABI without running anything: compiled with -S (and -g)
 * once per ABI (-m64, -m32, -mx32), it leaves one assembler line per
 * measurement, in the manner of the kernel's asm-offsets:
 *
 *   .ascii "->S <struct> <size> <align> <holecheck>"
 *   .ascii "->F <struct> <path> <offset> <size>"       (P: a pointer)
 *   .ascii "->X <struct> <path> <offset> <element size>" (flexible array)
 *   .ascii "->I <name> <type> <nr> <dir> <size> <low16> <high16>"
 *   .ascii "->K <name> <bits 0-15> <16-31> <32-47> <48-63>"
 *   .ascii "->N <name>"
 *
 * abi_check.py reads these lines; what is measured is listed in
 * abi_table.h.
 */
#include <stddef.h>
#include <rdma/rv_user_ioctls.h>
#ifndef RV_UPSTREAM
#include "legacy_event.h"
#endif

/* %c prints a bare integer; every operand is a compile-time constant. */
#define ABI_EMIT(fmt, ...) asm volatile("\n.ascii \"->" fmt "\"" :: __VA_ARGS__)

#define ABI_FSIZE(T, path) sizeof(((struct T *)0)->path)

#define ABI_STRUCT(T)							\
	ABI_EMIT("S " #T " %c0 %c1 1",					\
		 "i"(sizeof(struct T)), "i"(_Alignof(struct T)));
#define ABI_PACKED_STRUCT(T)						\
	ABI_EMIT("S " #T " %c0 %c1 0",					\
		 "i"(sizeof(struct T)), "i"(_Alignof(struct T)));
#define ABI_FIELD(T, path)						\
	ABI_EMIT("F " #T " " #path " %c0 %c1",				\
		 "i"(offsetof(struct T, path)), "i"(ABI_FSIZE(T, path)));
#define ABI_PTR_FIELD(T, path)						\
	ABI_EMIT("P " #T " " #path " %c0 %c1",				\
		 "i"(offsetof(struct T, path)), "i"(ABI_FSIZE(T, path)));
#define ABI_FLEX(T, path)						\
	ABI_EMIT("X " #T " " #path " %c0 %c1",				\
		 "i"(offsetof(struct T, path)), "i"(ABI_FSIZE(T, path[0])));
/* numbers are split in 16-bit pieces so that they print as positive */
#define ABI_IOCTL(NAME)							\
	ABI_EMIT("I " #NAME " %c0 %c1 %c2 %c3 %c4 %c5",			\
		 "i"(_IOC_TYPE(NAME)), "i"(_IOC_NR(NAME)),		\
		 "i"(_IOC_DIR(NAME)), "i"(_IOC_SIZE(NAME)),		\
		 "i"((NAME) & 0xffffU), "i"(((NAME) >> 16) & 0xffffU));
#define ABI_U16(v, n) "i"((unsigned int)(((unsigned long long)(v) >> (16 * (n))) & 0xffffU))
#define ABI_CONSTX(LABEL, expr)						\
	ABI_EMIT("K " LABEL " %c0 %c1 %c2 %c3",				\
		 ABI_U16(expr, 0), ABI_U16(expr, 1),			\
		 ABI_U16(expr, 2), ABI_U16(expr, 3));
#define ABI_CONST(NAME) ABI_CONSTX(#NAME, NAME)
#define ABI_NONINT(NAME) asm volatile("\n.ascii \"->N " #NAME "\"");

void rv_abi_layout(void)
{
#include "abi_table.h"
}
