/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ATTACH's request once checked, for rv_user.c (ATTACH), rv_job.c (the
 * job it joins) and the KUnit suite of ATTACH's checks (rv_attach_test.c).
 */
#ifndef RV_JOB_H
#define RV_JOB_H

#include "rv.h"

/* The attach request after defaults and policy are applied. */
struct rv_attach_req {
	char dev_name[RV_MAX_DEV_NAME_LEN];
	u8 gid[16];
	enum ib_gid_type gid_type;	/* of the GID at key.gid_index */
	struct rv_job_key key;
	struct rv_job_params params;
	u32 mr_cache_mb;
	u32 fr_page_list_len;		/* 0: the device's */
	u32 cq_entries;
	u32 loc_addr;
	u32 max_msg_sz;			/* the port's */
};

struct rv_job_dev *rv_job_get(struct rv_device *dev,
			      const struct rv_attach_req *req);

#if IS_ENABLED(CONFIG_KUNIT)
int rv_attach_parse(const struct rv_attach_params_in *in,
		    struct rv_attach_req *req);
int rv_service_id_check(u64 service_id);
bool rv_job_matches(const struct rv_job_dev *jdev, const struct rv_device *dev,
		    const struct rv_job_key *key, kuid_t uid,
		    const struct net *net);
#endif

#endif /* RV_JOB_H */
