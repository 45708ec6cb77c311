/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * Test only: the completion event as ABI 1.6 and older declared it, under
 * another tag so that it can sit next to the 1.7 struct rv_event. The
 * module still writes this 65-byte layout into the event ring of a file
 * that declared ABI <= 1.6 (RV_EVENT_LEGACY_SIZE), so its figures are
 * part of the ABI even though the 1.7 header no longer declares it.
 *
 * GCC keeps the 8-byte alignment of __aligned_u64 inside the packed wc
 * struct, relative to the start of wc, while the packed outer struct puts
 * wc at byte 1: hence wr_id at 9, not 8, and 65 bytes in all.
 */
#ifndef RV_ABI_TEST_LEGACY_EVENT_H
#define RV_ABI_TEST_LEGACY_EVENT_H

#include <linux/types.h>

struct rv_event_legacy {
	__u8 event_type;
	union {
		struct {
			__u8 status;
			__u16 resv1;
			__u32 imm_data;
			__aligned_u64 wr_id;
			__aligned_u64 conn_handle;
			__u32 byte_len;
			__u32 resv2;
		} __attribute__((__packed__)) wc;
		struct {
			__u8 pad[7];
			__u64 pad2[7];
		} __attribute__((__packed__)) cache_align;
	};
} __attribute__((__packed__));

#endif
