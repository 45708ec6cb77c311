// SPDX-License-Identifier: GPL-2.0
/*
 * CM private data of rv's REQs and REJs (rv_wire.h).
 */
#include <kunit/visibility.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "rv_wire.h"

void rv_req_pdata_init(struct rv_req_pdata *pd, const struct rv_req_info *info)
{
	memset(pd, 0, sizeof(*pd));
	pd->magic = cpu_to_be32(RV_CM_MAGIC);
	pd->version = RV_CM_VERSION;
	pd->index = info->index;
	pd->num_conn = info->num_conn;
	pd->job_key_len = min_t(u8, info->job_key_len, RV_MAX_JOB_KEY_LEN);
	memcpy(pd->job_key, info->job_key, pd->job_key_len);
	pd->uid = cpu_to_be32(info->uid);
}
EXPORT_SYMBOL_IF_KUNIT(rv_req_pdata_init);

/**
 * rv_req_pdata_parse - check a REQ's private data
 * @data: the private data the CM received (may be NULL)
 * @info: filled on success
 *
 * Return: 0, or -EPROTO when it is not rv's (magic, version) or is
 * malformed (job key length); the listener rejects it with RV_REJ_VERSION.
 */
int rv_req_pdata_parse(const void *data, struct rv_req_info *info)
{
	const struct rv_req_pdata *pd = data;

	if (!pd || be32_to_cpu(pd->magic) != RV_CM_MAGIC ||
	    pd->version != RV_CM_VERSION ||
	    pd->job_key_len > RV_MAX_JOB_KEY_LEN)
		return -EPROTO;
	memset(info, 0, sizeof(*info));
	info->index = pd->index;
	info->num_conn = pd->num_conn;
	info->job_key_len = pd->job_key_len;
	memcpy(info->job_key, pd->job_key, pd->job_key_len);
	info->uid = be32_to_cpu(pd->uid);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rv_req_pdata_parse);

void rv_rej_pdata_init(struct rv_rej_pdata *pd, u8 reason)
{
	memset(pd, 0, sizeof(*pd));
	pd->magic = cpu_to_be32(RV_CM_MAGIC);
	pd->version = RV_CM_VERSION;
	pd->reason = reason;
}
EXPORT_SYMBOL_IF_KUNIT(rv_rej_pdata_init);

/* The reason a consumer-defined REJ's private data gives; 0 if not rv's. */
u8 rv_rej_pdata_reason(const void *data)
{
	const struct rv_rej_pdata *pd = data;

	if (!pd || be32_to_cpu(pd->magic) != RV_CM_MAGIC)
		return 0;
	return pd->reason;
}
EXPORT_SYMBOL_IF_KUNIT(rv_rej_pdata_reason);

/*
 * The private data of a consumer-defined REJ: may the initiator try
 * again? Not if it is not rv's, or says so.
 */
bool rv_rej_pdata_is_final(const void *data)
{
	u8 reason = rv_rej_pdata_reason(data);

	return reason != RV_REJ_RETRY && reason != RV_REJ_LOCAL;
}
EXPORT_SYMBOL_IF_KUNIT(rv_rej_pdata_is_final);
