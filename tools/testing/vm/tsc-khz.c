// SPDX-License-Identifier: GPL-2.0
/*
 * tsc-khz: the rate of this CPU's time stamp counter, in kHz, measured
 * against CLOCK_MONOTONIC_RAW over 200 ms. Prints one number.
 *
 * vm-run gives it to TCG guests as tsc_early_khz=. Under TCG a guest's
 * RDTSC reads the host's counter, and the guest's own early calibration
 * against the emulated PIT goes far wrong when the host is busy: a guest
 * of the four-VM bed took its 2596 MHz counter for 56 MHz and ran its
 * clock 46 times too fast, so every timeout of its tests fired at once.
 * The kernel later refines the rate against the HPET only when that is
 * within 1% of the first value, so a wrong start stays.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

/* The counter and the clock read together: the tightest of 16 tries. */
static void sample(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	struct timespec ts;

	for (int i = 0; i < 16; i++) {
		uint64_t a = __rdtsc();

		clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
		uint64_t b = __rdtsc();

		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		}
	}
}

int main(void)
{
	const struct timespec pause = { 0, 200 * 1000 * 1000 };
	uint64_t t0, n0, t1, n1;

	sample(&t0, &n0);
	nanosleep(&pause, NULL);
	sample(&t1, &n1);
	if (n1 <= n0 || t1 <= t0)
		return 1;
	printf("%llu\n", (unsigned long long)((t1 - t0) * 1000000 / (n1 - n0)));
	return 0;
}
