// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
/*
 * A client of /dev/rv written the way PSM3's rendezvous module uses the
 * header (libfabric prov/psm3/psm3/psm_rndv_mod.c): <infiniband/verbs.h>
 * first, then the rv header, every macro and every member a client touches,
 * the same idioms (= {0}, memcpy of verbs structs into ABI structs, a
 * pointer assigned to in.udata, #if on the ABI version).
 *
 * run.sh compiles and links it as C11 and as C++20 with -Wall -Wextra
 * -Werror for x86_64, i386 and x32. It is never run: the functions take
 * an fd and make the ioctl and mmap calls, main only calls them when given
 * an argument.
 *
 * Written for this test; it is not PSM3 code.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* MAP_POPULATE; PSM3 builds with it too */
#endif
#include <infiniband/verbs.h>
#include <rdma/rv_user_ioctls.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef __cplusplus
#define USAGE_STATIC_ASSERT(e) static_assert(e, #e)
/*
 * PSM3 is C and writes "= {0}". g++ -Wextra warns about that idiom
 * (-Wmissing-field-initializers) for every struct of more than one
 * member, whatever the header does, so C++ clients write "= {}".
 */
#define USAGE_ZERO {}
#else
#define USAGE_STATIC_ASSERT(e) _Static_assert(e, #e)
#define USAGE_ZERO {0}
#endif

/*
 * PSM3 copies a struct ibv_ah_attr into in.ah (struct ib_uverbs_ah_attr)
 * with memcpy(..., sizeof(param.in.ah)): that is only right while the two
 * agree member by member.
 */
#define USAGE_SAME_OFFSET(m) \
	USAGE_STATIC_ASSERT(offsetof(struct ibv_ah_attr, m) == \
			    offsetof(struct ib_uverbs_ah_attr, m))
USAGE_STATIC_ASSERT(sizeof(struct ibv_ah_attr) == sizeof(struct ib_uverbs_ah_attr));

/*
 * PSM3 ORs IBV_ACCESS_KERNEL, the old name of RV_ACCESS_KERNEL, into its
 * access flags: it must stay the same bit, clear of libibverbs' own.
 */
USAGE_STATIC_ASSERT(IBV_ACCESS_KERNEL == RV_ACCESS_KERNEL);
USAGE_STATIC_ASSERT(!(RV_ACCESS_KERNEL & (IBV_ACCESS_LOCAL_WRITE |
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_RELAXED_ORDERING)));
USAGE_SAME_OFFSET(grh.dgid);
USAGE_SAME_OFFSET(grh.flow_label);
USAGE_SAME_OFFSET(grh.sgid_index);
USAGE_SAME_OFFSET(grh.hop_limit);
USAGE_SAME_OFFSET(grh.traffic_class);
USAGE_SAME_OFFSET(dlid);
USAGE_SAME_OFFSET(sl);
USAGE_SAME_OFFSET(src_path_bits);
USAGE_SAME_OFFSET(static_rate);
USAGE_SAME_OFFSET(is_global);
USAGE_SAME_OFFSET(port_num);

/* the older ioctl forms are prefixes of the current structs */
USAGE_STATIC_ASSERT(offsetof(struct rv_mem_params_r1, in.udata) ==
		    offsetof(struct rv_mem_params, in.udata));
USAGE_STATIC_ASSERT(offsetof(struct rv_attach_params_r5, in.hb_interval) ==
		    offsetof(struct rv_attach_params, in.hb_interval));
USAGE_STATIC_ASSERT(_IOC_TYPE(RV_IOCTL_ATTACH) == RV_MAGIC);

/* what the process knows about its rv file */
struct usage_rv {
	int fd;
	uint16_t major_rev;
	uint16_t minor_rev;
	uint64_t capability;
	uint32_t rv_index;
	uint64_t max_fmr_size;
	struct rv_ring_header *hdr;
	uint32_t ring_len;
	uint32_t ring_entries;
	size_t event_stride;
};

/* what PSM3 passes to its open */
struct usage_attach_info {
	const char *dev_name;
	uint32_t mr_cache_size;
	uint8_t rdma_mode;
	uint8_t port_num;
	uint8_t num_conn;
	uint32_t loc_addr;
	uint8_t index_bits;
	uint16_t loc_gid_index;
	union ibv_gid loc_gid;
	uint8_t job_key[RV_MAX_JOB_KEY_LEN];
	uint8_t job_key_len;
	uint64_t service_id;
	void *context;
	uint32_t cq_entries;
	uint32_t q_depth;
	uint32_t reconnect_timeout;
	uint32_t hb_interval;
	uint32_t fr_page_list_len;
	int upsize;
};

/* provider data for a user MR, as PSM3 passes it in udata */
struct usage_vendor_reg_req {
	uint16_t reg_type;
	uint16_t cq_pages;
	uint16_t rq_pages;
	uint16_t sq_pages;
};

static uint64_t usage_sink;

static void usage_stat(const char *name, uint64_t v)
{
	usage_sink += v + (uint64_t)strlen(name);
}

static const char *usage_abi_name(uint16_t major, uint16_t minor)
{
	if (major != RV_ABI_VER_MAJOR_1)
		return "unknown";
	switch (minor) {
	case RV_ABI_VER_MINOR_1: return "1.1";
	case RV_ABI_VER_MINOR_2: return "1.2";
	case RV_ABI_VER_MINOR_3: return "1.3";
	case RV_ABI_VER_MINOR_4: return "1.4";
	case RV_ABI_VER_MINOR_5: return "1.5";
	case RV_ABI_VER_MINOR_6: return "1.6";
	case RV_ABI_VER_MINOR_7: return "1.7";
	default: return "1.x";
	}
}

/* ABI version and capabilities; the module answers with its own. */
static int usage_query(struct usage_rv *rv, uint8_t rdma_mode)
{
	struct rv_capability_params q = USAGE_ZERO;
	unsigned int declared = RV_ABI_VERSION_CURRENT;

	q.major_rev = RV_ABI_VER_MAJOR;
	q.minor_rev = RV_ABI_VER_MINOR;
	q.capability = RV_CAP_EVICT;
	if ((rdma_mode & RV_RDMA_MODE_MASK) == RV_RDMA_MODE_USER)
		q.capability |= RV_CAP_USER_MR;
	if (ioctl(rv->fd, RV_IOCTL_CAPABILITY, &q) != 0) {
		if (errno != ENOTTY && errno != EINVAL)
			return -1;
		/* module older than the CAPABILITY ioctl: we count as 1.2 */
		memset(&q, 0, sizeof(q));
		if (ioctl(rv->fd, RV_IOCTL_QUERY_R2, &q) != 0)
			return -1;
		declared = RV_ABI_VERSION(RV_ABI_VER_MAJOR_1, RV_ABI_VER_MINOR_2);
	}
	rv->major_rev = q.major_rev;
	rv->minor_rev = q.minor_rev;
	rv->capability = q.capability;
	usage_stat(usage_abi_name(rv->major_rev, rv->minor_rev), rv->minor_rev);
	if (rv->major_rev != RV_ABI_VER_MAJOR_1)
		return -1;
	/*
	 * The ring has 64-byte events only if both sides are 1.7 or newer: a
	 * module of 1.6 or older ignores what the client declared and always
	 * writes 65-byte entries.
	 */
	if (declared >= RV_ABI_VERSION(1, 7) &&
	    RV_ABI_VERSION(rv->major_rev, rv->minor_rev) >= RV_ABI_VERSION(1, 7))
		rv->event_stride = sizeof(struct rv_event);
	else
		rv->event_stride = RV_EVENT_LEGACY_SIZE;
	return 0;
}

static int usage_map_ring(struct usage_rv *rv, uint32_t entries)
{
	void *p;

	if (rv->event_stride == sizeof(struct rv_event))
		rv->ring_len = RV_RING_ALLOC_LEN(entries);
	else	/* what older headers' RV_RING_ALLOC_LEN() gave */
		rv->ring_len = RV_RING_LEGACY_ALLOC_LEN(entries);
	p = mmap(NULL, rv->ring_len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_POPULATE, rv->fd, 0);
	if (p == MAP_FAILED)
		return -1;
	rv->hdr = (struct rv_ring_header *)p;
	rv->ring_entries = entries;
	return 0;
}

static int usage_attach(struct usage_rv *rv, const struct usage_attach_info *info)
{
	struct rv_attach_params aparams;
	unsigned long cmd = RV_IOCTL_ATTACH;

	if (info->num_conn > RV_MAX_NUM_CONN ||
	    info->index_bits > RV_MAX_INDEX_BITS ||
	    info->cq_entries > RV_MAX_CQ_ENTRIES ||
	    info->job_key_len > RV_MAX_JOB_KEY_LEN ||
	    (info->rdma_mode & RV_RDMA_MODE_MASK) > RV_RDMA_MODE_MAX) {
		errno = EINVAL;
		return -1;
	}
	memset(&aparams, 0, sizeof(aparams));
	snprintf(aparams.in.dev_name, RV_MAX_DEV_NAME_LEN, "%s", info->dev_name);
	aparams.in.mr_cache_size = info->mr_cache_size;
	aparams.in.rdma_mode = info->rdma_mode;
	if ((aparams.in.rdma_mode & RV_RDMA_MODE_MASK) == RV_RDMA_MODE_USER) {
		errno = EOPNOTSUPP;	/* user MRs are not offered */
		return -1;
	}
	if (info->upsize)
		aparams.in.rdma_mode = RV_RDMA_MODE_KERNEL | RV_RDMA_MODE_UPSIZE_CPU;
	aparams.in.port_num = info->port_num;
	aparams.in.num_conn = info->num_conn;
	aparams.in.loc_addr = info->loc_addr;
	aparams.in.index_bits = info->index_bits;
	aparams.in.loc_gid_index = info->loc_gid_index;
	memcpy(&aparams.in.loc_gid, &info->loc_gid, sizeof(aparams.in.loc_gid));
	aparams.in.job_key_len = info->job_key_len;
	memcpy(&aparams.in.job_key, info->job_key, sizeof(aparams.in.job_key));
	aparams.in.service_id = info->service_id;
	aparams.in.context = (uint64_t)(uintptr_t)info->context;
	aparams.in.cq_entries = info->cq_entries;
	aparams.in.q_depth = info->q_depth;
	aparams.in.reconnect_timeout = info->reconnect_timeout;
	aparams.in.hb_interval = info->hb_interval;
#if RV_ABI_VERSION_CURRENT > RV_ABI_VERSION(1, 5)
	aparams.in.fr_page_list_len = info->fr_page_list_len;
	if (rv->minor_rev < RV_ABI_VER_MINOR_6)
		cmd = RV_IOCTL_ATTACH_R5;	/* no fr_page_list_len */
#else
	cmd = RV_IOCTL_ATTACH_R5;
#endif
	if (ioctl(rv->fd, cmd, &aparams) != 0)
		return -1;
	rv->rv_index = aparams.out.rv_index;
	usage_stat("mr_cache_size", aparams.out.mr_cache_size);
	usage_stat("q_depth", aparams.out.q_depth);
	usage_stat("reconnect_timeout", aparams.out.reconnect_timeout);
	rv->max_fmr_size = aparams.out.max_fmr_size;
	if (info->cq_entries)
		return usage_map_ring(rv, info->cq_entries);
	return 0;
}

static int usage_open(struct usage_rv *rv, const struct usage_attach_info *info)
{
	memset(rv, 0, sizeof(*rv));
	rv->fd = open(RV_FILE_NAME, O_RDWR);
	if (rv->fd < 0)
		return -1;
	if (usage_query(rv, info->rdma_mode) || usage_attach(rv, info)) {
		close(rv->fd);
		rv->fd = -1;
		return -1;
	}
	return 0;
}

struct usage_mr {
	uint64_t mr_handle;
	uint64_t iova;
	uint32_t lkey;
	uint32_t rkey;
	uint64_t addr;
	uint64_t length;
	uint32_t access;
};

static int usage_reg_mem(struct usage_rv *rv, void *addr, uint64_t length,
			 int access, struct usage_mr *mr)
{
	struct rv_mem_params mparams;
	struct usage_vendor_reg_req req;
	unsigned long cmd = RV_IOCTL_REG_MEM;

	memset(&mparams, 0, sizeof(mparams));
	memset(&req, 0, sizeof(req));
	mparams.in.addr = (uint64_t)(uintptr_t)addr;
	mparams.in.length = length;
	mparams.in.access = (uint32_t)access;
	if (!(mparams.in.access & IBV_ACCESS_KERNEL)) {
		/* a user MR (never offered) would name a user PD ... */
		mparams.in.ibv_pd_handle = 0;
		mparams.in.cmd_fd_int = (uint32_t)-1;
	}
	/* ... and carry provider data */
	mparams.in.udata = &req;
	mparams.in.ulen = sizeof(req);
#ifdef RV_ABI_VER_MINOR_4
	/* the module takes the form of the version it reported */
	if (rv->minor_rev == RV_ABI_VER_MINOR_4)
		cmd = RV_IOCTL_REG_MEM_R4;
	else if (rv->minor_rev < RV_ABI_VER_MINOR_4)
		cmd = RV_IOCTL_REG_MEM_R1;
#else
	cmd = RV_IOCTL_REG_MEM_R1;
#endif
	if (ioctl(rv->fd, cmd, &mparams) != 0)
		return -1;
	mr->mr_handle = mparams.out.mr_handle;
	mr->iova = mparams.out.iova;
	mr->lkey = mparams.out.lkey;
	mr->rkey = mparams.out.rkey;
	mr->addr = (uint64_t)(uintptr_t)addr;
	mr->length = length;
	mr->access = (uint32_t)access;
	return 0;
}

static int usage_dereg_mem(struct usage_rv *rv, const struct usage_mr *mr)
{
	struct rv_dereg_params_in dparams;

	memset(&dparams, 0, sizeof(dparams));
	dparams.mr_handle = mr->mr_handle;
	dparams.addr = mr->addr;
	dparams.length = mr->length;
	dparams.access = mr->access;
	return ioctl(rv->fd, RV_IOCTL_DEREG_MEM, &dparams);
}

static int usage_evict(struct usage_rv *rv, int type, uint64_t addr_or_bytes,
		       uint64_t length_or_count, uint32_t access)
{
	struct rv_evict_params eparams;

	if (!(rv->capability & RV_CAP_EVICT)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	memset(&eparams, 0, sizeof(eparams));
	eparams.in.type = (uint8_t)type;
	switch (type) {
	case RV_EVICT_TYPE_SEARCH_EXACT:
		eparams.in.search.access = access;
		/* fall through */
	case RV_EVICT_TYPE_SEARCH_RANGE:
		eparams.in.search.addr = addr_or_bytes;
		eparams.in.search.length = length_or_count;
		break;
	case RV_EVICT_TYPE_AMOUNT:
		eparams.in.amount.bytes = addr_or_bytes;
		eparams.in.amount.count = (uint32_t)length_or_count;
		break;
	default:
		errno = EINVAL;
		return -1;
	}
	if (ioctl(rv->fd, RV_IOCTL_EVICT, &eparams) != 0)
		return -1;
	usage_stat("evicted bytes", eparams.out.bytes);
	usage_stat("evicted count", eparams.out.count);
	return 0;
}

static int usage_cache_stats(struct usage_rv *rv)
{
	struct rv_cache_stats_params_out s;

	memset(&s, 0, sizeof(s));
	if (ioctl(rv->fd, RV_IOCTL_GET_CACHE_STATS, &s) != 0)
		return -1;
	usage_stat("cache_size", s.cache_size);
	usage_stat("max_cache_size", s.max_cache_size);
	usage_stat("limit_cache_size", s.limit_cache_size);
	usage_stat("count", s.count);
	usage_stat("max_count", s.max_count);
	usage_stat("inuse", s.inuse);
	usage_stat("max_inuse", s.max_inuse);
	usage_stat("inuse_bytes", s.inuse_bytes);
	usage_stat("max_inuse_bytes", s.max_inuse_bytes);
	usage_stat("max_refcount", s.max_refcount);
	usage_stat("hit", s.hit);
	usage_stat("miss", s.miss);
	usage_stat("full", s.full);
	usage_stat("failed", s.failed);
	usage_stat("remove", s.remove);
	usage_stat("evict", s.evict);
	return 0;
}

struct usage_conn {
	uint64_t handle;
	uint64_t conn_handle;
};

static int usage_create_conn(struct usage_rv *rv, struct ibv_ah_attr *ah_attr,
			     uint32_t rem_addr, struct usage_conn *conn)
{
	struct rv_conn_create_params param;

	memset(&param, 0, sizeof(param));
	memcpy(&param.in.ah, ah_attr, sizeof(param.in.ah));
	param.in.rem_addr = rem_addr;
	param.in.context = 0;
	if (ioctl(rv->fd, RV_IOCTL_CONN_CREATE, &param) != 0)
		return -1;
	conn->handle = param.out.handle;
	conn->conn_handle = param.out.conn_handle;
	return 0;
}

static int usage_connect(struct usage_rv *rv, struct usage_conn *conn,
			 const struct ib_user_path_rec *path)
{
	struct rv_conn_connect_params_in param;
	int ret;

	memset(&param, 0, sizeof(param));
	param.handle = conn->handle;
	memcpy(&param.path, path, sizeof(param.path));
	ret = ioctl(rv->fd, RV_IOCTL_CONN_CONNECT, &param);
	if (ret)
		conn->handle = 0;
	return ret;
}

/* 1 connected, 0 not yet, -1 with errno */
static int usage_connected(struct usage_rv *rv, const struct usage_conn *conn)
{
	struct rv_conn_connected_params_in param;

	memset(&param, 0, sizeof(param));
	param.handle = conn->handle;
	return ioctl(rv->fd, RV_IOCTL_CONN_CONNECTED, &param);
}

static int usage_get_conn_count(struct usage_rv *rv, const struct usage_conn *conn,
				uint8_t index, uint32_t *count)
{
	struct rv_conn_get_conn_count_params params;

	memset(&params, 0, sizeof(params));
	if (conn)
		params.in.handle = conn->handle;
	params.in.index = index;
	if (ioctl(rv->fd, RV_IOCTL_CONN_GET_CONN_COUNT, &params) != 0)
		return -1;
	*count = params.out.count;
	return 0;
}

#define USAGE_CONN_STAT(f) usage_stat(#f, params.out.f)

static int usage_get_conn_stats(struct usage_rv *rv, const struct usage_conn *conn,
				uint8_t index)
{
	struct rv_conn_get_stats_params params;

	memset(&params, 0, sizeof(params));
	if (conn) {
		params.in.handle = conn->handle;
		params.in.index = index;
	} else {
		params.in.index = RV_CONN_STATS_AGGREGATE;
	}
	if (ioctl(rv->fd, RV_IOCTL_CONN_GET_STATS, &params) != 0)
		return -1;
	if (params.out.index != params.in.index && conn)
		return -1;
	if (params.out.flags & RV_CONN_STAT_FLAG_SERVER)
		usage_stat("server", 1);
	if (params.out.flags & RV_CONN_STAT_FLAG_CLIENT)
		usage_stat("client", 1);
	if (params.out.flags & RV_CONN_STAT_FLAG_WAS_CONNECTED)
		usage_stat("was connected", 1);
	USAGE_CONN_STAT(index);
	USAGE_CONN_STAT(num_conn);
	USAGE_CONN_STAT(req_error);
	USAGE_CONN_STAT(req_recv);
	USAGE_CONN_STAT(rep_error);
	USAGE_CONN_STAT(rep_recv);
	USAGE_CONN_STAT(rtu_recv);
	USAGE_CONN_STAT(established);
	USAGE_CONN_STAT(dreq_error);
	USAGE_CONN_STAT(dreq_recv);
	USAGE_CONN_STAT(drep_recv);
	USAGE_CONN_STAT(timewait);
	USAGE_CONN_STAT(mra_recv);
	USAGE_CONN_STAT(rej_recv);
	USAGE_CONN_STAT(lap_error);
	USAGE_CONN_STAT(lap_recv);
	USAGE_CONN_STAT(apr_recv);
	USAGE_CONN_STAT(unexp_event);
	USAGE_CONN_STAT(req_sent);
	USAGE_CONN_STAT(rep_sent);
	USAGE_CONN_STAT(rtu_sent);
	USAGE_CONN_STAT(rej_sent);
	USAGE_CONN_STAT(dreq_sent);
	USAGE_CONN_STAT(drep_sent);
	USAGE_CONN_STAT(wait_time);
	USAGE_CONN_STAT(resolve_time);
	USAGE_CONN_STAT(connect_time);
	USAGE_CONN_STAT(connected_time);
	USAGE_CONN_STAT(resolve);
	USAGE_CONN_STAT(resolve_fail);
	USAGE_CONN_STAT(conn_recovery);
	USAGE_CONN_STAT(rewait_time);
	USAGE_CONN_STAT(reresolve_time);
	USAGE_CONN_STAT(reconnect_time);
	USAGE_CONN_STAT(max_rewait_time);
	USAGE_CONN_STAT(max_reresolve_time);
	USAGE_CONN_STAT(max_reconnect_time);
	USAGE_CONN_STAT(reresolve);
	USAGE_CONN_STAT(reresolve_fail);
	USAGE_CONN_STAT(post_write);
	USAGE_CONN_STAT(post_write_fail);
	USAGE_CONN_STAT(post_write_bytes);
	USAGE_CONN_STAT(outstand_send_write);
	USAGE_CONN_STAT(send_write_cqe);
	USAGE_CONN_STAT(send_write_cqe_fail);
	USAGE_CONN_STAT(recv_write_cqe);
	USAGE_CONN_STAT(recv_write_bytes);
	USAGE_CONN_STAT(recv_cqe_fail);
	USAGE_CONN_STAT(post_hb);
	USAGE_CONN_STAT(post_hb_fail);
	USAGE_CONN_STAT(send_hb_cqe);
	USAGE_CONN_STAT(send_hb_cqe_fail);
	USAGE_CONN_STAT(recv_hb_cqe);
	return 0;
}

static int usage_get_event_stats(struct usage_rv *rv)
{
	struct rv_event_stats_params_out s;

	memset(&s, 0, sizeof(s));
	if (ioctl(rv->fd, RV_IOCTL_GET_EVENT_STATS, &s) != 0)
		return -1;
	usage_stat("send_write_cqe", s.send_write_cqe);
	usage_stat("send_write_cqe_fail", s.send_write_cqe_fail);
	usage_stat("send_write_bytes", s.send_write_bytes);
	usage_stat("recv_write_cqe", s.recv_write_cqe);
	usage_stat("recv_write_cqe_fail", s.recv_write_cqe_fail);
	usage_stat("recv_write_bytes", s.recv_write_bytes);
	return 0;
}

static int usage_post_write(struct usage_rv *rv, const struct usage_conn *conn,
			    const struct usage_mr *mr, const void *buf,
			    uint64_t rem_addr, uint32_t rkey, uint64_t length,
			    uint32_t immed, uint64_t wr_id, uint8_t *sconn_index,
			    uint32_t *conn_count)
{
	struct rv_post_write_params pparams;

	memset(&pparams, 0, sizeof(pparams));
	pparams.in.handle = conn->handle;
	pparams.in.loc_addr = (uint64_t)(uintptr_t)buf;
	pparams.in.loc_mr_handle = mr->mr_handle;
	pparams.in.loc_mr_addr = mr->addr;
	pparams.in.loc_mr_length = mr->length;
	pparams.in.loc_mr_access = mr->access;
	pparams.in.rkey = rkey;
	pparams.in.rem_addr = rem_addr;
	pparams.in.length = length;
	pparams.in.wr_id = wr_id;
	pparams.in.immed = immed;
	if (ioctl(rv->fd, RV_IOCTL_POST_RDMA_WR_IMMED, &pparams) != 0)
		return -1;
	*sconn_index = pparams.out.sconn_index;
	*conn_count = pparams.out.conn_count;
	return 0;
}

/* Consume the events the module published; returns how many. */
static int usage_poll_events(struct usage_rv *rv, const struct usage_conn *conn)
{
	struct rv_ring_header *hdr = rv->hdr;
	uint32_t head, tail;
	int n = 0;

	if (!hdr || rv->event_stride != sizeof(struct rv_event))
		return 0;
	head = hdr->head;
	tail = hdr->tail;
	/* read tail before the entries (PSM3 uses lfence) */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (tail >= rv->ring_entries)
		return -1;
	while (head != tail) {
		uint32_t next = head;
		struct rv_event ev = hdr->entries[next];

		if (ev.event_type == RV_WC_RDMA_WRITE) {
			usage_stat("wr_id", ev.wc.wr_id);
		} else if (ev.event_type == RV_WC_RECV_RDMA_WITH_IMM) {
			usage_stat("imm_data", ev.wc.imm_data);
			usage_stat("byte_len", ev.wc.byte_len);
		}
		if (ev.wc.status != IBV_WC_SUCCESS)
			usage_stat("status", ev.wc.status);
		if (ev.wc.conn_handle != conn->conn_handle)
			usage_stat("other connection", ev.wc.conn_handle);
		head = next + 1 == rv->ring_entries ? 0 : next + 1;
		n++;
	}
	/* the entries are read before the module may reuse them */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	hdr->head = head;
	if (hdr->overflow_cnt)
		usage_stat("overflow_cnt", hdr->overflow_cnt);
	return n;
}

static void usage_close(struct usage_rv *rv)
{
	if (rv->hdr)
		munmap(rv->hdr, rv->ring_len);
	if (rv->fd >= 0)
		close(rv->fd);
	rv->hdr = NULL;
	rv->fd = -1;
}

int main(int argc, char **argv)
{
	struct usage_attach_info info;
	struct usage_rv rv;
	struct usage_mr mr;
	struct usage_conn conn;
	struct ibv_ah_attr ah;
	struct ib_user_path_rec path;
	static char buf[4096];
	uint32_t count = 0, conn_count = 0;
	uint8_t sconn_index = 0;

	if (argc < 2)
		return 0;	/* built to be compiled, not run */

	memset(&info, 0, sizeof(info));
	info.dev_name = argv[1];
	info.rdma_mode = RV_RDMA_MODE_KERNEL;
	info.port_num = 1;
	info.num_conn = 4;
	info.index_bits = 8;
	info.cq_entries = 1024;
	info.job_key_len = RV_MAX_JOB_KEY_LEN;
	info.fr_page_list_len = 256;
	memset(&ah, 0, sizeof(ah));
	memset(&path, 0, sizeof(path));

	if (usage_open(&rv, &info))
		return 1;
	if (usage_reg_mem(&rv, buf, sizeof(buf),
			  IBV_ACCESS_KERNEL | IBV_ACCESS_LOCAL_WRITE, &mr) == 0) {
		if (usage_create_conn(&rv, &ah, 0x0a000001, &conn) == 0 &&
		    usage_connect(&rv, &conn, &path) == 0 &&
		    usage_connected(&rv, &conn) == 1) {
			usage_get_conn_count(&rv, &conn, 0, &count);
			usage_post_write(&rv, &conn, &mr, buf, 0x1000, 0x1234,
					 sizeof(buf), 7, 42, &sconn_index,
					 &conn_count);
			usage_poll_events(&rv, &conn);
			usage_get_conn_stats(&rv, &conn, RV_CONN_STATS_AGGREGATE);
			usage_get_conn_stats(&rv, NULL, 0);
		}
		usage_dereg_mem(&rv, &mr);
		usage_evict(&rv, RV_EVICT_TYPE_SEARCH_EXACT, mr.addr, mr.length, mr.access);
		usage_evict(&rv, RV_EVICT_TYPE_SEARCH_RANGE, mr.addr, mr.length, 0);
		usage_evict(&rv, RV_EVICT_TYPE_AMOUNT, 1 << 20, 1, 0);
	}
	usage_cache_stats(&rv);
	usage_get_event_stats(&rv);
	usage_close(&rv);
	printf("%llu %u %u %u\n", (unsigned long long)usage_sink, count,
	       conn_count, sconn_index);
	return 0;
}
