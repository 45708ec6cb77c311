// SPDX-License-Identifier: GPL-2.0
/*
 * cx16-flags: does this CPU's CMPXCHG16B keep EFLAGS sound?
 *
 * A guest-side check of the emulated CPU the VM bench boots. QEMU 7.2's
 * TCG (Debian 12) computes the flags of CMPXCHG16B from the lazy flags
 * state it last stored, not from the one the preceding instructions left:
 * after an iret (an interrupt taken just before), an ADD followed by
 * CMPXCHG16B takes the ADD's source operand as the saved EFLAGS. Garbage
 * then reaches the real flags (TF, DF, AC, IOPL, reserved bits) at the
 * next pushf or exception frame. In a 6.12 guest that is SLUB's
 * allocation fast path, and the guest dies (README, "Supported kernels").
 *
 * The loop here does ADD (source: EFLAGS bits 22 and 23, reserved),
 * CMPXCHG16B, PUSHF and counts flags with a reserved bit set. The timer
 * interrupt lands before the loop's ADD often enough to show the bug in
 * seconds. A CMPXCHG loop, whose flags TCG computes inline, is the
 * control.
 *
 *   cx16-flags [SECONDS [cmpxchg16b|cmpxchg]]
 *
 * Prints "cx16 0|1" and "iterations N corrupted N first 0xFLAGS".
 * Exit status: 0 no corrupted flags, 1 corrupted flags, 2 the CPU has no
 * CMPXCHG16B (nothing run), 64 usage.
 */
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RESERVED_BITS 0xffc00000u	/* EFLAGS 22..31 */

static unsigned __int128 target __attribute__((aligned(16)));
static uint64_t target8;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static uint64_t step_cmpxchg16b(uint64_t magic)
{
	uint64_t fl, x = 0, lo = 0, hi = 0;

	asm volatile("add %[m], %[x]\n\t"
		     "lock cmpxchg16b %[t]\n\t"
		     "pushfq\n\t"
		     "pop %[fl]"
		     : [fl] "=r"(fl), [x] "+r"(x), [t] "+m"(target),
		       "+a"(lo), "+d"(hi)
		     : [m] "r"(magic), "b"(0UL), "c"(0UL)
		     : "cc");
	return fl;
}

static uint64_t step_cmpxchg(uint64_t magic)
{
	uint64_t fl, x = 0, lo = 0;

	asm volatile("add %[m], %[x]\n\t"
		     "lock cmpxchg %%rbx, %[t]\n\t"
		     "pushfq\n\t"
		     "pop %[fl]"
		     : [fl] "=r"(fl), [x] "+r"(x),
		       [t] "+m"(target8), "+a"(lo)
		     : [m] "r"(magic), "b"(0UL)
		     : "cc");
	return fl;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, end;
	const char *op = argc > 2 ? argv[2] : "cmpxchg16b";
	uint64_t (*step)(uint64_t);
	uint64_t n = 0, bad = 0, first = 0;
	unsigned int a, b, c, d;
	int cx16;

	if (!strcmp(op, "cmpxchg16b"))
		step = step_cmpxchg16b;
	else if (!strcmp(op, "cmpxchg"))
		step = step_cmpxchg;
	else
		step = NULL;
	if (!step || secs <= 0) {
		fprintf(stderr, "usage: cx16-flags [SECONDS [cmpxchg16b|cmpxchg]]\n");
		return 64;
	}
	cx16 = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_CMPXCHG16B);
	printf("cx16 %d\n", cx16);
	if (step == step_cmpxchg16b && !cx16)
		return 2;
	for (end = now() + secs; now() < end;) {
		for (int k = 0; k < 100000; k++, n++) {
			uint64_t fl = step(0x00c00000);

			if ((fl & RESERVED_BITS) && !bad++)
				first = fl;
		}
	}
	printf("iterations %llu corrupted %llu first 0x%llx\n",
	       (unsigned long long)n, (unsigned long long)bad,
	       (unsigned long long)first);
	return bad ? 1 : 0;
}
