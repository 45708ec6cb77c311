/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rv puts on the wire besides the data: the private data of its CM
 * REQs and REJs, and the process index in a write's immediate. Pure
 * encoding and checking, no verbs: KUnit tests it (rv_wire_test.c).
 *
 * Every multi-byte field of the private data is in network byte order.
 */
#ifndef RV_WIRE_H
#define RV_WIRE_H

#include <asm/byteorder.h>
#include <linux/types.h>
#include <rdma/rv_user_ioctls.h>

#define RV_CM_MAGIC 0x72763463		/* "rv4c" */
#define RV_CM_VERSION 1

/* REQ private data (at most IB_CM_REQ_PRIVATE_DATA_SIZE bytes). */
struct rv_req_pdata {
	__be32 magic;
	u8 version;
	u8 index;			/* QP index within the connection */
	u8 num_conn;
	u8 job_key_len;
	u8 job_key[RV_MAX_JOB_KEY_LEN];
	__be32 uid;			/* in the initial user namespace */
	__be32 resv;
};

/* A REQ's private data, checked and in host order. */
struct rv_req_info {
	u8 index;
	u8 num_conn;
	u8 job_key_len;
	u8 job_key[RV_MAX_JOB_KEY_LEN];
	u32 uid;
};

/* REJ private data, sent with IB_CM_REJ_CONSUMER_DEFINED. */
struct rv_rej_pdata {
	__be32 magic;
	u8 version;
	u8 reason;			/* enum rv_rej_reason */
	u8 resv[2];
};

/* Reasons in a REJ's private data. */
enum rv_rej_reason {
	RV_REJ_RETRY = 1,		/* not ready yet: try again */
	RV_REJ_VERSION,			/* unknown magic or version */
	RV_REJ_UID,			/* final; no longer sent: a job of
					 * another uid is RV_REJ_RETRY
					 */
	RV_REJ_INDEX,			/* QP index or num_conn disagree */
	RV_REJ_ROLE,			/* this side initiates, not listens */
	RV_REJ_LOCAL,			/* a local failure: try again */
};

void rv_req_pdata_init(struct rv_req_pdata *pd, const struct rv_req_info *info);
int rv_req_pdata_parse(const void *data, struct rv_req_info *info);
void rv_rej_pdata_init(struct rv_rej_pdata *pd, u8 reason);
bool rv_rej_pdata_is_final(const void *data);
u8 rv_rej_pdata_reason(const void *data);

/*
 * The rv_index an immediate is for: its top @index_bits bits (all to
 * index 0 when the job has none).
 */
static inline u32 rv_imm_index(u32 imm, u8 index_bits)
{
	return index_bits ? imm >> (32 - index_bits) : 0;
}

#endif /* RV_WIRE_H */
