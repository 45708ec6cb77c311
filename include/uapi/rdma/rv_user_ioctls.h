/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * rv: shared kernel RC connections and MR caching for PSM3 rendezvous.
 *
 * This is the complete userspace ABI of /dev/rv. It is consumed by PSM3
 * (libfabric prov/psm3, psm_rndv_mod.c) and by librv.
 *
 * Layout rules, checked by tools/testing/abi:
 *  - every struct has the same size and field offsets on x86_64, i386
 *    and x32: 64-bit fields are __aligned_u64 and every hole is a named
 *    reserved field;
 *  - no pointers, size_t, long or volatile (the one exception is the
 *    udata union in struct rv_mem_params_in, which overlays a pointer on
 *    an __aligned_u64 so that existing callers can assign a pointer);
 *  - reserved fields must be zero on input unless stated otherwise.
 *
 * Handles (handle, conn_handle, mr_handle) are opaque ids that mean
 * something only to the file that received them; they are never kernel
 * addresses.
 */
#ifndef _UAPI_RDMA_RV_USER_IOCTLS_H
#define _UAPI_RDMA_RV_USER_IOCTLS_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <rdma/rdma_user_ioctl.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#define RV_FILE_NAME "/dev/rv"
#define RV_MAGIC RDMA_IOCTL_MAGIC

/**
 * DOC: ABI versions
 *
 * RV_ABI_VERSION() packs a major and minor number into one integer that
 * can be compared in #if. A client declares the version it was built
 * against in RV_IOCTL_CAPABILITY; the module answers with its own.
 *
 * 1.7 changes struct rv_event from the 65-byte packed layout of 1.6 and
 * earlier to 64 bytes with naturally aligned fields. The module lays a
 * file's event ring out for the version that file declared: a 65-byte
 * stride for 1.6 and older (and for RV_IOCTL_QUERY_R2, which means 1.2),
 * a 64-byte stride for 1.7 and newer.
 *
 * Modules older than 1.7 always write 65-byte entries. A client may use
 * the 64-byte layout only when the module's answer is 1.7 or newer;
 * otherwise it maps RV_RING_LEGACY_ALLOC_LEN() bytes and reads entries at
 * a RV_EVENT_LEGACY_SIZE stride.
 */
#define RV_ABI_VERSION(maj, min) (((maj) << 16) | (min))
#define RV_ABI_VER_MAJOR 1
#define RV_ABI_VER_MINOR 7
#define RV_ABI_VERSION_CURRENT RV_ABI_VERSION(RV_ABI_VER_MAJOR, RV_ABI_VER_MINOR)

/* Named revisions, tested with #ifdef by PSM3 to pick older ioctl forms. */
#define RV_ABI_VER_MAJOR_1 1
#define RV_ABI_VER_MINOR_1 1
#define RV_ABI_VER_MINOR_2 2
#define RV_ABI_VER_MINOR_3 3
#define RV_ABI_VER_MINOR_4 4
#define RV_ABI_VER_MINOR_5 5
#define RV_ABI_VER_MINOR_6 6
#define RV_ABI_VER_MINOR_7 7

/* Capability bits */
#define RV_CAP_USER_MR (1ULL << 0)	/* MRs in a user PD (never offered) */
#define RV_CAP_EVICT (1ULL << 1)	/* RV_IOCTL_EVICT works */

/**
 * struct rv_capability_params - RV_IOCTL_CAPABILITY and RV_IOCTL_QUERY_R2
 * @major_rev: in: ABI major the client was built with, not 0; out: the
 *	module's
 * @minor_rev: in: ABI minor the client was built with; out: the module's
 * @resv1: reserved, zero
 * @capability: in: capabilities the client intends to use; out: the
 *	RV_CAP_* bits the module implements
 * @resv2: reserved, zero
 *
 * RV_IOCTL_QUERY_R2 reads nothing from userspace and records the file as
 * an ABI 1.2 client.
 */
struct rv_capability_params {
	__u16 major_rev;
	__u16 minor_rev;
	__u32 resv1;
	__aligned_u64 capability;
	__aligned_u64 resv2[6];
};

#define RV_IOCTL_CAPABILITY _IOWR(RV_MAGIC, 0xFC, struct rv_capability_params)
#define RV_IOCTL_QUERY_R2 _IOR(RV_MAGIC, 0xFC, struct rv_capability_params)

/* rdma_mode in struct rv_attach_params_in */
#define RV_RDMA_MODE_USER 0	/* MRs in a user PD: not supported */
#define RV_RDMA_MODE_KERNEL 1	/* kernel RC QPs and kernel MR cache */
#define RV_RDMA_MODE_MAX 1
#define RV_RDMA_MODE_MASK 0x1f
#define RV_RDMA_MODE_UPSIZE_CPU 0x20	/* use the module's upsized cache */

#define RV_MAX_DEV_NAME_LEN IB_DEVICE_NAME_MAX
#define RV_MAX_NUM_CONN 16
#define RV_MAX_INDEX_BITS 12
#define RV_MAX_JOB_KEY_LEN 16
#define RV_MAX_CQ_ENTRIES 10000

/*
 * Fields shared by struct rv_attach_params_in and its ABI 1.5 form.
 * dev_name: RDMA device, NUL-terminated.
 * mr_cache_size: MB of MR cache for this process, 0 = module default.
 * rdma_mode: RV_RDMA_MODE_*, optionally ORed with RV_RDMA_MODE_UPSIZE_CPU.
 * port_num: port of dev_name.
 * num_conn: RC QPs per remote node, 0 = module default.
 * loc_addr: local address, compared with rem_addr to pick the CM roles
 *	when the connection is not global (IPv4 in host order for RoCE).
 * index_bits: top bits of an immediate that select the receiving process.
 * loc_gid_index, loc_gid: local GID and its index; they must agree.
 * job_key, job_key_len: identify the job (a UUID for PSM3).
 * service_id: CM service id, 0 = module default.
 * context: opaque to the module.
 * cq_entries: event ring entries, 0 = no ring.
 * q_depth: send queue depth per connection, 0 = module default.
 * reconnect_timeout: seconds allowed to recover a lost connection.
 * hb_interval: milliseconds between heartbeats, 0 = none.
 */
#define __RV_ATTACH_PARAMS_IN_R5_FIELDS \
	char dev_name[RV_MAX_DEV_NAME_LEN]; \
	__u32 mr_cache_size; \
	__u8 rdma_mode; \
	__u8 port_num; \
	__u8 num_conn; \
	__u8 resv1; \
	__u32 loc_addr; \
	__u8 index_bits; \
	__u8 resv2; \
	__u16 loc_gid_index; \
	__u8 loc_gid[16]; \
	__u8 job_key[RV_MAX_JOB_KEY_LEN]; \
	__u8 job_key_len; \
	__u8 resv3[7]; \
	__aligned_u64 service_id; \
	__aligned_u64 context; \
	__u32 cq_entries; \
	__u32 q_depth; \
	__u32 reconnect_timeout; \
	__u32 hb_interval

/**
 * struct rv_attach_params_in - input of RV_IOCTL_ATTACH
 *
 * The fields are described at __RV_ATTACH_PARAMS_IN_R5_FIELDS, plus
 * @fr_page_list_len: page list length a client would use for fast
 * registration (ABI 1.6); informational.
 * @resv4: reserved, zero.
 */
struct rv_attach_params_in {
	__RV_ATTACH_PARAMS_IN_R5_FIELDS;
	__u32 fr_page_list_len;
	__u32 resv4;
};

/* Input of RV_IOCTL_ATTACH_R5: the ABI 1.5 form, without fr_page_list_len. */
struct rv_attach_params_r5_in {
	__RV_ATTACH_PARAMS_IN_R5_FIELDS;
};

/**
 * struct rv_attach_params_out - output of RV_IOCTL_ATTACH
 * @rv_index: index of this process within its job on this device
 * @mr_cache_size: MB of MR cache in use
 * @q_depth: send queue depth in use
 * @reconnect_timeout: seconds in use
 * @max_fmr_size: largest MR, in bytes, the module will register
 */
struct rv_attach_params_out {
	__u32 rv_index;
	__u32 mr_cache_size;
	__u32 q_depth;
	__u32 reconnect_timeout;
	__aligned_u64 max_fmr_size;
};

struct rv_attach_params {
	union {
		struct rv_attach_params_in in;
		struct rv_attach_params_out out;
	};
};

struct rv_attach_params_r5 {
	union {
		struct rv_attach_params_r5_in in;
		struct rv_attach_params_out out;
	};
};

#define RV_IOCTL_ATTACH _IOWR(RV_MAGIC, 0xF1, struct rv_attach_params)
#define RV_IOCTL_ATTACH_R5 _IOWR(RV_MAGIC, 0xF1, struct rv_attach_params_r5)

/* In rv_mem_params_in.access: register a kernel MR in the job's PD. */
#define IBV_ACCESS_KERNEL 0x80000000

/*
 * Fields shared by every form of struct rv_mem_params_in.
 * ibv_pd_handle, cmd_fd_int: user PD and its verbs fd (user mode only).
 * addr, length: the caller's virtual range to register.
 * access: IBV_ACCESS_* flags, with IBV_ACCESS_KERNEL for a kernel MR.
 * ulen, udata: provider-specific data for a user MR; ignored for kernel
 *	MRs. udata overlays a pointer on a 64-bit field.
 */
#define __RV_MEM_PARAMS_IN_R1_FIELDS \
	__u32 ibv_pd_handle; \
	__u32 cmd_fd_int; \
	__aligned_u64 addr; \
	__aligned_u64 length; \
	__u32 access; \
	__u32 resv1; \
	__aligned_u64 ulen; \
	union { \
		void *udata; \
		__aligned_u64 udata_u64; \
	}

/**
 * struct rv_mem_params_in - input of RV_IOCTL_REG_MEM
 *
 * Fields as described at __RV_MEM_PARAMS_IN_R1_FIELDS, plus @resv2:
 * reserved, zero.
 */
struct rv_mem_params_in {
	__RV_MEM_PARAMS_IN_R1_FIELDS;
	__aligned_u64 resv2[2];
};

/* Input of RV_IOCTL_REG_MEM_R4 (ABI 1.4). */
struct rv_mem_params_r4_in {
	__RV_MEM_PARAMS_IN_R1_FIELDS;
	__aligned_u64 resv2;
};

/* Input of RV_IOCTL_REG_MEM_R1 (ABI 1.1). */
struct rv_mem_params_r1_in {
	__RV_MEM_PARAMS_IN_R1_FIELDS;
};

/**
 * struct rv_mem_params_out - output of RV_IOCTL_REG_MEM
 * @mr_handle: opaque id of the cached MR
 * @iova: the device address of @addr as given to RV_IOCTL_REG_MEM (kernel
 *	MRs map virtual addresses 1:1, so it equals that addr, also when a
 *	larger cached MR served the request)
 * @lkey: local key
 * @rkey: remote key
 */
struct rv_mem_params_out {
	__aligned_u64 mr_handle;
	__aligned_u64 iova;
	__u32 lkey;
	__u32 rkey;
};

struct rv_mem_params {
	union {
		struct rv_mem_params_in in;
		struct rv_mem_params_out out;
	};
};

struct rv_mem_params_r4 {
	union {
		struct rv_mem_params_r4_in in;
		struct rv_mem_params_out out;
	};
};

struct rv_mem_params_r1 {
	union {
		struct rv_mem_params_r1_in in;
		struct rv_mem_params_out out;
	};
};

#define RV_IOCTL_REG_MEM _IOWR(RV_MAGIC, 0xF3, struct rv_mem_params)
#define RV_IOCTL_REG_MEM_R4 _IOWR(RV_MAGIC, 0xF3, struct rv_mem_params_r4)
#define RV_IOCTL_REG_MEM_R1 _IOWR(RV_MAGIC, 0xF3, struct rv_mem_params_r1)

/**
 * struct rv_dereg_params_in - input of RV_IOCTL_DEREG_MEM
 * @mr_handle: from RV_IOCTL_REG_MEM
 * @addr: as given to RV_IOCTL_REG_MEM
 * @length: as given to RV_IOCTL_REG_MEM
 * @access: as given to RV_IOCTL_REG_MEM
 * @resv1: ignored: deployed clients do not clear it
 *
 * Drops one reference taken by RV_IOCTL_REG_MEM; the MR stays cached.
 */
struct rv_dereg_params_in {
	__aligned_u64 mr_handle;
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 access;
	__u32 resv1;
};

#define RV_IOCTL_DEREG_MEM _IOW(RV_MAGIC, 0xF4, struct rv_dereg_params_in)

/*
 * RV_IOCTL_EVICT removes cached MRs that hold no reference:
 *  SEARCH_EXACT - the entry with exactly this addr, length and access;
 *  SEARCH_RANGE - every entry overlapping [addr, addr + length);
 *  AMOUNT - least recently used entries until at least @bytes and at
 *	least @count were evicted.
 */
#define RV_EVICT_TYPE_SEARCH_EXACT 1
#define RV_EVICT_TYPE_SEARCH_RANGE 2
#define RV_EVICT_TYPE_AMOUNT 3

struct rv_evict_params_in {
	__u8 type;
	__u8 pad[7];
	union {
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 access;
			__u32 resv1;
		} search;
		struct {
			__aligned_u64 bytes;
			__u32 count;
			__u32 resv1;
		} amount;
	};
};

/* What was actually evicted. */
struct rv_evict_params_out {
	__aligned_u64 bytes;
	__u32 count;
	__u32 resv1;
};

struct rv_evict_params {
	union {
		struct rv_evict_params_in in;
		struct rv_evict_params_out out;
	};
};

#define RV_IOCTL_EVICT _IOWR(RV_MAGIC, 0xF6, struct rv_evict_params)

/**
 * struct rv_cache_stats_params_out - RV_IOCTL_GET_CACHE_STATS
 * @cache_size: bytes now cached
 * @max_cache_size: highest @cache_size seen
 * @limit_cache_size: MB allowed
 * @count: MRs now cached
 * @max_count: highest @count seen
 * @inuse: cached MRs holding a reference
 * @max_inuse: highest @inuse seen
 * @resv1: reserved
 * @inuse_bytes: bytes of the MRs counted in @inuse
 * @max_inuse_bytes: highest @inuse_bytes seen
 * @max_refcount: highest reference count of one MR seen
 * @resv2: reserved
 * @hit: REG_MEM found a cached MR
 * @miss: REG_MEM registered and cached a new MR
 * @full: REG_MEM missed and the cache could not make room
 * @failed: REG_MEM missed and the registration failed
 * @remove: MRs removed by invalidation or teardown
 * @evict: MRs evicted to make room or by RV_IOCTL_EVICT
 *
 * Valid REG_MEM calls = @hit + @miss + @full + @failed.
 */
struct rv_cache_stats_params_out {
	__aligned_u64 cache_size;
	__aligned_u64 max_cache_size;
	__u32 limit_cache_size;
	__u32 count;
	__u32 max_count;
	__u32 inuse;
	__u32 max_inuse;
	__u32 resv1;
	__aligned_u64 inuse_bytes;
	__aligned_u64 max_inuse_bytes;
	__u32 max_refcount;
	__u32 resv2;
	__aligned_u64 hit;
	__aligned_u64 miss;
	__aligned_u64 full;
	__aligned_u64 failed;
	__aligned_u64 remove;
	__aligned_u64 evict;
};

#define RV_IOCTL_GET_CACHE_STATS \
	_IOR(RV_MAGIC, 0xF7, struct rv_cache_stats_params_out)

/**
 * struct rv_conn_create_params_in - input of RV_IOCTL_CONN_CREATE
 * @ah: address of the remote node (grh.dgid for RoCE, dlid for IB);
 *	port_num and grh.sgid_index must match the attach. Its reserved
 *	bytes are ignored: a struct ibv_ah_attr has padding there.
 * @rem_addr: remote address, compared with loc_addr when not global
 * @resv1: reserved, zero
 * @context: opaque to the module
 */
struct rv_conn_create_params_in {
	struct ib_uverbs_ah_attr ah;
	__u32 rem_addr;
	__u32 resv1;
	__aligned_u64 context;
};

/**
 * struct rv_conn_create_params_out - output of RV_IOCTL_CONN_CREATE
 * @handle: this process's handle for the connection
 * @conn_handle: id of the shared connection, echoed in completion events
 */
struct rv_conn_create_params_out {
	__aligned_u64 handle;
	__aligned_u64 conn_handle;
};

struct rv_conn_create_params {
	union {
		struct rv_conn_create_params_in in;
		struct rv_conn_create_params_out out;
	};
};

#define RV_IOCTL_CONN_CREATE _IOWR(RV_MAGIC, 0xF8, struct rv_conn_create_params)

/* Starts connecting; @path.sgid must be the attach GID. */
struct rv_conn_connect_params_in {
	__aligned_u64 handle;
	struct ib_user_path_rec path;
};

#define RV_IOCTL_CONN_CONNECT \
	_IOW(RV_MAGIC, 0xF9, struct rv_conn_connect_params_in)

/*
 * RV_IOCTL_CONN_CONNECTED returns 1 when every QP of the connection is
 * connected (or recovering after having connected), 0 when not yet, and
 * -1 with errno EIO when the connection failed for good.
 */
struct rv_conn_connected_params_in {
	__aligned_u64 handle;
};

#define RV_IOCTL_CONN_CONNECTED \
	_IOW(RV_MAGIC, 0xFA, struct rv_conn_connected_params_in)

/*
 * RV_IOCTL_CONN_GET_CONN_COUNT: @count grows on every (re)establishment
 * of QP @index of the connection; EIO once the connection failed for good.
 */
struct rv_conn_get_conn_count_params_in {
	__aligned_u64 handle;
	__u8 index;
	__u8 resv1[7];
};

struct rv_conn_get_conn_count_params_out {
	__u32 count;
};

struct rv_conn_get_conn_count_params {
	union {
		struct rv_conn_get_conn_count_params_in in;
		struct rv_conn_get_conn_count_params_out out;
	};
};

#define RV_IOCTL_CONN_GET_CONN_COUNT \
	_IOWR(RV_MAGIC, 0xFF, struct rv_conn_get_conn_count_params)

/* index for the aggregate of all QPs of a connection */
#define RV_CONN_STATS_AGGREGATE 255

/*
 * @handle 0 asks for the aggregate of all of the caller's connections;
 * otherwise @index is a QP index or RV_CONN_STATS_AGGREGATE.
 */
struct rv_conn_get_stats_params_in {
	__aligned_u64 handle;
	__u8 index;
	__u8 resv1[7];
};

/* flags; aggregates may carry several */
#define RV_CONN_STAT_FLAG_SERVER 0x01
#define RV_CONN_STAT_FLAG_CLIENT 0x02
#define RV_CONN_STAT_FLAG_WAS_CONNECTED 0x04

/**
 * struct rv_conn_get_stats_params_out - RV_IOCTL_CONN_GET_STATS output
 *
 * @index echoes the input, @flags are RV_CONN_STAT_FLAG_*, @num_conn is
 * the number of QPs counted. The *_error, *_recv and unexp_event fields
 * count CM events received by type; *_sent count CM messages sent. Times
 * are in microseconds: wait, resolve and connect time of the first
 * connection and the time connected; re* and max_re* the same for
 * recoveries. resolve/reresolve count address resolutions and their
 * hard failures, conn_recovery the recoveries. post_write* count RDMA
 * WRITE posts, outstand_send_write those awaiting completion, and the
 * *_cqe fields completions by kind and status; *_hb* the heartbeats.
 */
struct rv_conn_get_stats_params_out {
	__u8 index;
	__u8 flags;
	__u16 resv1;
	__u32 num_conn;

	/* CM events received */
	__u32 req_error;
	__u32 req_recv;
	__u32 rep_error;
	__u32 rep_recv;
	__u32 rtu_recv;
	__u32 established;
	__u32 dreq_error;
	__u32 dreq_recv;
	__u32 drep_recv;
	__u32 timewait;
	__u32 mra_recv;
	__u32 rej_recv;
	__u32 lap_error;
	__u32 lap_recv;
	__u32 apr_recv;
	__u32 unexp_event;

	/* CM messages sent */
	__u32 req_sent;
	__u32 rep_sent;
	__u32 rtu_sent;
	__u32 rej_sent;
	__u32 dreq_sent;
	__u32 drep_sent;

	__aligned_u64 wait_time;
	__aligned_u64 resolve_time;
	__aligned_u64 connect_time;
	__aligned_u64 connected_time;
	__u32 resolve;
	__u32 resolve_fail;
	__u32 conn_recovery;
	__u32 resv2;
	__aligned_u64 rewait_time;
	__aligned_u64 reresolve_time;
	__aligned_u64 reconnect_time;
	__aligned_u64 max_rewait_time;
	__aligned_u64 max_reresolve_time;
	__aligned_u64 max_reconnect_time;
	__u32 reresolve;
	__u32 reresolve_fail;

	__aligned_u64 post_write;
	__aligned_u64 post_write_fail;
	__aligned_u64 post_write_bytes;
	__u32 outstand_send_write;
	__u32 recv_drop;		/* inbound writes for no attached process */
	__aligned_u64 send_write_cqe;
	__aligned_u64 send_write_cqe_fail;

	__aligned_u64 recv_write_cqe;
	__aligned_u64 recv_write_bytes;
	__aligned_u64 recv_cqe_fail;

	__aligned_u64 post_hb;
	__aligned_u64 post_hb_fail;
	__aligned_u64 send_hb_cqe;
	__aligned_u64 send_hb_cqe_fail;
	__aligned_u64 recv_hb_cqe;
};

struct rv_conn_get_stats_params {
	union {
		struct rv_conn_get_stats_params_in in;
		struct rv_conn_get_stats_params_out out;
	};
};

#define RV_IOCTL_CONN_GET_STATS \
	_IOWR(RV_MAGIC, 0xFD, struct rv_conn_get_stats_params)

/* Per-process completion counts: RV_IOCTL_GET_EVENT_STATS. */
struct rv_event_stats_params_out {
	__aligned_u64 send_write_cqe;
	__aligned_u64 send_write_cqe_fail;
	__aligned_u64 send_write_bytes;

	__aligned_u64 recv_write_cqe;
	__aligned_u64 recv_write_cqe_fail;
	__aligned_u64 recv_write_bytes;
};

#define RV_IOCTL_GET_EVENT_STATS \
	_IOR(RV_MAGIC, 0xFE, struct rv_event_stats_params_out)

/**
 * struct rv_post_write_params_in - input of RV_IOCTL_POST_RDMA_WR_IMMED
 * @handle: connection handle from RV_IOCTL_CONN_CREATE
 * @loc_addr: start of the local data
 * @loc_mr_handle: cached MR holding [loc_addr, loc_addr + length)
 * @loc_mr_addr: addr the MR was registered with
 * @loc_mr_length: length the MR was registered with
 * @loc_mr_access: access the MR was registered with
 * @rkey: remote key
 * @rem_addr: remote address
 * @length: bytes to write
 * @wr_id: echoed in the send completion event
 * @immed: immediate data; its top index_bits select the remote process
 * @resv1: reserved, zero
 */
struct rv_post_write_params_in {
	__aligned_u64 handle;
	__aligned_u64 loc_addr;
	__aligned_u64 loc_mr_handle;
	__aligned_u64 loc_mr_addr;
	__aligned_u64 loc_mr_length;
	__u32 loc_mr_access;
	__u32 rkey;
	__aligned_u64 rem_addr;
	__aligned_u64 length;
	__aligned_u64 wr_id;
	__u32 immed;
	__u32 resv1;
};

/* Which QP of the connection was used, and its connection count. */
struct rv_post_write_params_out {
	__u8 sconn_index;
	__u8 resv1[3];
	__u32 conn_count;
};

struct rv_post_write_params {
	union {
		struct rv_post_write_params_in in;
		struct rv_post_write_params_out out;
	};
};

#define RV_IOCTL_POST_RDMA_WR_IMMED \
	_IOWR(RV_MAGIC, 0xFB, struct rv_post_write_params)

/* rv_event.event_type */
#define RV_WC_RDMA_WRITE 0		/* send completion of a posted write */
#define RV_WC_RECV_RDMA_WITH_IMM 1	/* an inbound write with immediate */

/**
 * struct rv_event_wc - completion carried by an event
 * @resv0: overlays rv_event.event_type
 * @status: enum ib_wc_status
 * @resv1: reserved
 * @imm_data: immediate data in host order (receive only)
 * @wr_id: wr_id of the post (send only)
 * @conn_handle: the connection's conn_handle
 * @byte_len: bytes written
 * @resv2: reserved
 */
struct rv_event_wc {
	__u8 resv0;
	__u8 status;
	__u16 resv1;
	__u32 imm_data;
	__aligned_u64 wr_id;
	__aligned_u64 conn_handle;
	__u32 byte_len;
	__u32 resv2;
};

/**
 * struct rv_event - one 64-byte entry of the event ring (ABI 1.7)
 * @event_type: RV_WC_*
 * @wc: the completion; wc.status is at byte 1, after event_type
 * @resv: sizes the entry to one cache line
 *
 * Offsets: event_type 0, wc.status 1, wc.imm_data 4, wc.wr_id 8,
 * wc.conn_handle 16, wc.byte_len 24.
 *
 * Clients of ABI 1.6 and older get RV_EVENT_LEGACY_SIZE-byte entries
 * instead: event_type 0, status 1, imm_data 4, wr_id 9, conn_handle 17,
 * byte_len 25, all unaligned.
 */
struct rv_event {
	union {
		__u8 event_type;
		struct rv_event_wc wc;
		__aligned_u64 resv[8];
	};
};

#define RV_EVENT_LEGACY_SIZE 65

/**
 * struct rv_ring_header - start of the mmap'd event ring
 * @head: next entry the consumer reads; written only by the consumer
 * @tail: next entry the producer writes; written only by the module
 * @overflow_cnt: events dropped because the ring was full
 * @resv: pads the header to 64 bytes
 * @entries: cq_entries events
 *
 * The ring holds cq_entries - 1 events: it is empty when head == tail and
 * full when the entry after tail is head. The module writes an entry
 * completely before it publishes the new tail with release ordering, so a
 * consumer must read tail, then (acquire barrier) the entries before it,
 * then (release barrier) store the new head. The module reads head only
 * to bound its writes; a bad head loses the caller's own events, nothing
 * more.
 */
struct rv_ring_header {
	__u32 head;
	__u32 tail;
	__aligned_u64 overflow_cnt;
	__aligned_u64 resv[6];
	struct rv_event entries[];
};

/* mmap length, at offset 0, of a ring with @n entries (ABI 1.7 layout) */
#define RV_RING_ALLOC_LEN(n) \
	((__u32)((n) * sizeof(struct rv_event) + sizeof(struct rv_ring_header)))

/* mmap length of a ring with @n entries in the layout of ABI 1.6 and older */
#define RV_RING_LEGACY_ALLOC_LEN(n) \
	((__u32)((n) * RV_EVENT_LEGACY_SIZE + sizeof(struct rv_ring_header)))

#endif /* _UAPI_RDMA_RV_USER_IOCTLS_H */
