/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * The one list of everything the ABI test measures in
 * include/uapi/rdma/rv_user_ioctls.h: every struct, every member (nested
 * ones by their full path), every ioctl number and every constant.
 *
 * This file is an X-macro table without include guard. The includer
 * defines, then includes it (inside a function body for layout.c):
 *
 *   ABI_STRUCT(T)           struct T: size, alignment, no hidden holes
 *   ABI_PACKED_STRUCT(T)    struct T, packed on purpose: holes allowed
 *   ABI_FIELD(T, path)      offset and size of T.path
 *   ABI_PTR_FIELD(T, path)  the same for a pointer (size differs per ABI)
 *   ABI_FLEX(T, path)       flexible array member: offset, element size
 *   ABI_IOCTL(NAME)         type, nr, direction and size of an ioctl
 *   ABI_CONST(NAME)         value of an integer constant macro
 *   ABI_CONSTX("LABEL", expr)  value of an expression (function-like
 *                           macros); LABEL is a string without spaces
 *   ABI_NONINT(NAME)        a macro that is not an integer constant and is
 *                           checked elsewhere (listed so that run.sh's
 *                           "every #define is listed" check passes)
 *
 * Missing something here is caught three ways by abi_check.py: every
 * "struct rv_*" tag and every #define of the header must be listed, the
 * DWARF debug info of layout.c must show no member that is not listed,
 * and the listed members of each struct must cover it with no hole.
 *
 * Fields shared by several structs are listed once, in the RVT_* group
 * macros below, which take the struct and a path prefix: "in.", "out." or
 * RVT_TOP (nothing) for the members of the struct itself.
 */

/* ---- shared field groups ---- */

#define RVT_TOP

#define RVT_ATTACH_IN_R5(T, p)				\
	ABI_FIELD(T, p dev_name)			\
	ABI_FIELD(T, p mr_cache_size)			\
	ABI_FIELD(T, p rdma_mode)			\
	ABI_FIELD(T, p port_num)			\
	ABI_FIELD(T, p num_conn)			\
	ABI_FIELD(T, p resv1)				\
	ABI_FIELD(T, p loc_addr)			\
	ABI_FIELD(T, p index_bits)			\
	ABI_FIELD(T, p resv2)				\
	ABI_FIELD(T, p loc_gid_index)			\
	ABI_FIELD(T, p loc_gid)				\
	ABI_FIELD(T, p job_key)				\
	ABI_FIELD(T, p job_key_len)			\
	ABI_FIELD(T, p resv3)				\
	ABI_FIELD(T, p service_id)			\
	ABI_FIELD(T, p context)				\
	ABI_FIELD(T, p cq_entries)			\
	ABI_FIELD(T, p q_depth)				\
	ABI_FIELD(T, p reconnect_timeout)		\
	ABI_FIELD(T, p hb_interval)

#define RVT_ATTACH_IN(T, p)				\
	RVT_ATTACH_IN_R5(T, p)				\
	ABI_FIELD(T, p fr_page_list_len)		\
	ABI_FIELD(T, p resv4)

#define RVT_ATTACH_OUT(T, p)				\
	ABI_FIELD(T, p rv_index)			\
	ABI_FIELD(T, p mr_cache_size)			\
	ABI_FIELD(T, p q_depth)				\
	ABI_FIELD(T, p reconnect_timeout)		\
	ABI_FIELD(T, p max_fmr_size)

#define RVT_MEM_IN_R1(T, p)				\
	ABI_FIELD(T, p ibv_pd_handle)			\
	ABI_FIELD(T, p cmd_fd_int)			\
	ABI_FIELD(T, p addr)				\
	ABI_FIELD(T, p length)				\
	ABI_FIELD(T, p access)				\
	ABI_FIELD(T, p resv1)				\
	ABI_FIELD(T, p ulen)				\
	ABI_PTR_FIELD(T, p udata)			\
	ABI_FIELD(T, p udata_u64)

/* resv2 is __u64[2] in the current form and a single __u64 in the r4 one */
#define RVT_MEM_IN(T, p)				\
	RVT_MEM_IN_R1(T, p)				\
	ABI_FIELD(T, p resv2)

#define RVT_MEM_OUT(T, p)				\
	ABI_FIELD(T, p mr_handle)			\
	ABI_FIELD(T, p iova)				\
	ABI_FIELD(T, p lkey)				\
	ABI_FIELD(T, p rkey)

#define RVT_EVICT_IN(T, p)				\
	ABI_FIELD(T, p type)				\
	ABI_FIELD(T, p pad)				\
	ABI_FIELD(T, p search)				\
	ABI_FIELD(T, p search.addr)			\
	ABI_FIELD(T, p search.length)			\
	ABI_FIELD(T, p search.access)			\
	ABI_FIELD(T, p search.resv1)			\
	ABI_FIELD(T, p amount)				\
	ABI_FIELD(T, p amount.bytes)			\
	ABI_FIELD(T, p amount.count)			\
	ABI_FIELD(T, p amount.resv1)

#define RVT_EVICT_OUT(T, p)				\
	ABI_FIELD(T, p bytes)				\
	ABI_FIELD(T, p count)				\
	ABI_FIELD(T, p resv1)

#define RVT_CONN_CREATE_IN(T, p)			\
	ABI_FIELD(T, p ah)				\
	ABI_FIELD(T, p rem_addr)			\
	ABI_FIELD(T, p resv1)				\
	ABI_FIELD(T, p context)

#define RVT_CONN_CREATE_OUT(T, p)			\
	ABI_FIELD(T, p handle)				\
	ABI_FIELD(T, p conn_handle)

/* the input of CONN_GET_CONN_COUNT and of CONN_GET_STATS */
#define RVT_HANDLE_INDEX_IN(T, p)			\
	ABI_FIELD(T, p handle)				\
	ABI_FIELD(T, p index)				\
	ABI_FIELD(T, p resv1)

#define RVT_CONN_COUNT_OUT(T, p)			\
	ABI_FIELD(T, p count)

#define RVT_CONN_STATS_OUT(T, p)			\
	ABI_FIELD(T, p index)				\
	ABI_FIELD(T, p flags)				\
	ABI_FIELD(T, p resv1)				\
	ABI_FIELD(T, p num_conn)			\
	ABI_FIELD(T, p req_error)			\
	ABI_FIELD(T, p req_recv)			\
	ABI_FIELD(T, p rep_error)			\
	ABI_FIELD(T, p rep_recv)			\
	ABI_FIELD(T, p rtu_recv)			\
	ABI_FIELD(T, p established)			\
	ABI_FIELD(T, p dreq_error)			\
	ABI_FIELD(T, p dreq_recv)			\
	ABI_FIELD(T, p drep_recv)			\
	ABI_FIELD(T, p timewait)			\
	ABI_FIELD(T, p mra_recv)			\
	ABI_FIELD(T, p rej_recv)			\
	ABI_FIELD(T, p lap_error)			\
	ABI_FIELD(T, p lap_recv)			\
	ABI_FIELD(T, p apr_recv)			\
	ABI_FIELD(T, p unexp_event)			\
	ABI_FIELD(T, p req_sent)			\
	ABI_FIELD(T, p rep_sent)			\
	ABI_FIELD(T, p rtu_sent)			\
	ABI_FIELD(T, p rej_sent)			\
	ABI_FIELD(T, p dreq_sent)			\
	ABI_FIELD(T, p drep_sent)			\
	ABI_FIELD(T, p wait_time)			\
	ABI_FIELD(T, p resolve_time)			\
	ABI_FIELD(T, p connect_time)			\
	ABI_FIELD(T, p connected_time)			\
	ABI_FIELD(T, p resolve)				\
	ABI_FIELD(T, p resolve_fail)			\
	ABI_FIELD(T, p conn_recovery)			\
	ABI_FIELD(T, p resv2)				\
	ABI_FIELD(T, p rewait_time)			\
	ABI_FIELD(T, p reresolve_time)			\
	ABI_FIELD(T, p reconnect_time)			\
	ABI_FIELD(T, p max_rewait_time)			\
	ABI_FIELD(T, p max_reresolve_time)		\
	ABI_FIELD(T, p max_reconnect_time)		\
	ABI_FIELD(T, p reresolve)			\
	ABI_FIELD(T, p reresolve_fail)			\
	ABI_FIELD(T, p post_write)			\
	ABI_FIELD(T, p post_write_fail)			\
	ABI_FIELD(T, p post_write_bytes)		\
	ABI_FIELD(T, p outstand_send_write)		\
	ABI_FIELD(T, p recv_drop)			\
	ABI_FIELD(T, p send_write_cqe)			\
	ABI_FIELD(T, p send_write_cqe_fail)		\
	ABI_FIELD(T, p recv_write_cqe)			\
	ABI_FIELD(T, p recv_write_bytes)		\
	ABI_FIELD(T, p recv_cqe_fail)			\
	ABI_FIELD(T, p post_hb)				\
	ABI_FIELD(T, p post_hb_fail)			\
	ABI_FIELD(T, p send_hb_cqe)			\
	ABI_FIELD(T, p send_hb_cqe_fail)		\
	ABI_FIELD(T, p recv_hb_cqe)

#define RVT_POST_WRITE_IN(T, p)				\
	ABI_FIELD(T, p handle)				\
	ABI_FIELD(T, p loc_addr)			\
	ABI_FIELD(T, p loc_mr_handle)			\
	ABI_FIELD(T, p loc_mr_addr)			\
	ABI_FIELD(T, p loc_mr_length)			\
	ABI_FIELD(T, p loc_mr_access)			\
	ABI_FIELD(T, p rkey)				\
	ABI_FIELD(T, p rem_addr)			\
	ABI_FIELD(T, p length)				\
	ABI_FIELD(T, p wr_id)				\
	ABI_FIELD(T, p immed)				\
	ABI_FIELD(T, p resv1)

#define RVT_POST_WRITE_OUT(T, p)			\
	ABI_FIELD(T, p sconn_index)			\
	ABI_FIELD(T, p resv1)				\
	ABI_FIELD(T, p conn_count)

#define RVT_EVENT_WC(T, p)				\
	ABI_FIELD(T, p resv0)				\
	ABI_FIELD(T, p status)				\
	ABI_FIELD(T, p resv1)				\
	ABI_FIELD(T, p imm_data)			\
	ABI_FIELD(T, p wr_id)				\
	ABI_FIELD(T, p conn_handle)			\
	ABI_FIELD(T, p byte_len)			\
	ABI_FIELD(T, p resv2)

/* ---- capability ---- */

ABI_STRUCT(rv_capability_params)
ABI_FIELD(rv_capability_params, major_rev)
ABI_FIELD(rv_capability_params, minor_rev)
ABI_FIELD(rv_capability_params, resv1)
ABI_FIELD(rv_capability_params, capability)
ABI_FIELD(rv_capability_params, resv2)

/* ---- attach ---- */

ABI_STRUCT(rv_attach_params_in)
RVT_ATTACH_IN(rv_attach_params_in, RVT_TOP)

#ifndef RV_UPSTREAM
ABI_STRUCT(rv_attach_params_r5_in)
RVT_ATTACH_IN_R5(rv_attach_params_r5_in, RVT_TOP)
#endif

ABI_STRUCT(rv_attach_params_out)
RVT_ATTACH_OUT(rv_attach_params_out, RVT_TOP)

ABI_STRUCT(rv_attach_params)
ABI_FIELD(rv_attach_params, in)
RVT_ATTACH_IN(rv_attach_params, in.)
ABI_FIELD(rv_attach_params, out)
RVT_ATTACH_OUT(rv_attach_params, out.)

#ifndef RV_UPSTREAM
ABI_STRUCT(rv_attach_params_r5)
ABI_FIELD(rv_attach_params_r5, in)
RVT_ATTACH_IN_R5(rv_attach_params_r5, in.)
ABI_FIELD(rv_attach_params_r5, out)
RVT_ATTACH_OUT(rv_attach_params_r5, out.)
#endif

/* ---- reg mem ---- */

ABI_STRUCT(rv_mem_params_in)
RVT_MEM_IN(rv_mem_params_in, RVT_TOP)

#ifndef RV_UPSTREAM
ABI_STRUCT(rv_mem_params_r4_in)
RVT_MEM_IN(rv_mem_params_r4_in, RVT_TOP)

ABI_STRUCT(rv_mem_params_r1_in)
RVT_MEM_IN_R1(rv_mem_params_r1_in, RVT_TOP)
#endif

ABI_STRUCT(rv_mem_params_out)
RVT_MEM_OUT(rv_mem_params_out, RVT_TOP)

ABI_STRUCT(rv_mem_params)
ABI_FIELD(rv_mem_params, in)
RVT_MEM_IN(rv_mem_params, in.)
ABI_FIELD(rv_mem_params, out)
RVT_MEM_OUT(rv_mem_params, out.)

#ifndef RV_UPSTREAM
ABI_STRUCT(rv_mem_params_r4)
ABI_FIELD(rv_mem_params_r4, in)
RVT_MEM_IN(rv_mem_params_r4, in.)
ABI_FIELD(rv_mem_params_r4, out)
RVT_MEM_OUT(rv_mem_params_r4, out.)

ABI_STRUCT(rv_mem_params_r1)
ABI_FIELD(rv_mem_params_r1, in)
RVT_MEM_IN_R1(rv_mem_params_r1, in.)
ABI_FIELD(rv_mem_params_r1, out)
RVT_MEM_OUT(rv_mem_params_r1, out.)
#endif

/* ---- dereg mem ---- */

ABI_STRUCT(rv_dereg_params_in)
ABI_FIELD(rv_dereg_params_in, mr_handle)
ABI_FIELD(rv_dereg_params_in, addr)
ABI_FIELD(rv_dereg_params_in, length)
ABI_FIELD(rv_dereg_params_in, access)
ABI_FIELD(rv_dereg_params_in, resv1)

/* ---- evict ---- */

ABI_STRUCT(rv_evict_params_in)
RVT_EVICT_IN(rv_evict_params_in, RVT_TOP)

ABI_STRUCT(rv_evict_params_out)
RVT_EVICT_OUT(rv_evict_params_out, RVT_TOP)

ABI_STRUCT(rv_evict_params)
ABI_FIELD(rv_evict_params, in)
RVT_EVICT_IN(rv_evict_params, in.)
ABI_FIELD(rv_evict_params, out)
RVT_EVICT_OUT(rv_evict_params, out.)

/* ---- cache stats ---- */

ABI_STRUCT(rv_cache_stats_params_out)
ABI_FIELD(rv_cache_stats_params_out, cache_size)
ABI_FIELD(rv_cache_stats_params_out, max_cache_size)
ABI_FIELD(rv_cache_stats_params_out, limit_cache_size)
ABI_FIELD(rv_cache_stats_params_out, count)
ABI_FIELD(rv_cache_stats_params_out, max_count)
ABI_FIELD(rv_cache_stats_params_out, inuse)
ABI_FIELD(rv_cache_stats_params_out, max_inuse)
ABI_FIELD(rv_cache_stats_params_out, resv1)
ABI_FIELD(rv_cache_stats_params_out, inuse_bytes)
ABI_FIELD(rv_cache_stats_params_out, max_inuse_bytes)
ABI_FIELD(rv_cache_stats_params_out, max_refcount)
ABI_FIELD(rv_cache_stats_params_out, resv2)
ABI_FIELD(rv_cache_stats_params_out, hit)
ABI_FIELD(rv_cache_stats_params_out, miss)
ABI_FIELD(rv_cache_stats_params_out, full)
ABI_FIELD(rv_cache_stats_params_out, failed)
ABI_FIELD(rv_cache_stats_params_out, remove)
ABI_FIELD(rv_cache_stats_params_out, evict)

/* ---- connections ---- */

ABI_STRUCT(rv_conn_create_params_in)
RVT_CONN_CREATE_IN(rv_conn_create_params_in, RVT_TOP)

ABI_STRUCT(rv_conn_create_params_out)
RVT_CONN_CREATE_OUT(rv_conn_create_params_out, RVT_TOP)

ABI_STRUCT(rv_conn_create_params)
ABI_FIELD(rv_conn_create_params, in)
RVT_CONN_CREATE_IN(rv_conn_create_params, in.)
ABI_FIELD(rv_conn_create_params, out)
RVT_CONN_CREATE_OUT(rv_conn_create_params, out.)

ABI_STRUCT(rv_conn_connect_params_in)
ABI_FIELD(rv_conn_connect_params_in, handle)
ABI_FIELD(rv_conn_connect_params_in, path)

ABI_STRUCT(rv_conn_connected_params_in)
ABI_FIELD(rv_conn_connected_params_in, handle)

ABI_STRUCT(rv_conn_get_conn_count_params_in)
RVT_HANDLE_INDEX_IN(rv_conn_get_conn_count_params_in, RVT_TOP)

ABI_STRUCT(rv_conn_get_conn_count_params_out)
RVT_CONN_COUNT_OUT(rv_conn_get_conn_count_params_out, RVT_TOP)

ABI_STRUCT(rv_conn_get_conn_count_params)
ABI_FIELD(rv_conn_get_conn_count_params, in)
RVT_HANDLE_INDEX_IN(rv_conn_get_conn_count_params, in.)
ABI_FIELD(rv_conn_get_conn_count_params, out)
RVT_CONN_COUNT_OUT(rv_conn_get_conn_count_params, out.)

ABI_STRUCT(rv_conn_get_stats_params_in)
RVT_HANDLE_INDEX_IN(rv_conn_get_stats_params_in, RVT_TOP)

ABI_STRUCT(rv_conn_get_stats_params_out)
RVT_CONN_STATS_OUT(rv_conn_get_stats_params_out, RVT_TOP)

ABI_STRUCT(rv_conn_get_stats_params)
ABI_FIELD(rv_conn_get_stats_params, in)
RVT_HANDLE_INDEX_IN(rv_conn_get_stats_params, in.)
ABI_FIELD(rv_conn_get_stats_params, out)
RVT_CONN_STATS_OUT(rv_conn_get_stats_params, out.)

/* ---- event stats ---- */

ABI_STRUCT(rv_event_stats_params_out)
ABI_FIELD(rv_event_stats_params_out, send_write_cqe)
ABI_FIELD(rv_event_stats_params_out, send_write_cqe_fail)
ABI_FIELD(rv_event_stats_params_out, send_write_bytes)
ABI_FIELD(rv_event_stats_params_out, recv_write_cqe)
ABI_FIELD(rv_event_stats_params_out, recv_write_cqe_fail)
ABI_FIELD(rv_event_stats_params_out, recv_write_bytes)

/* ---- post write ---- */

ABI_STRUCT(rv_post_write_params_in)
RVT_POST_WRITE_IN(rv_post_write_params_in, RVT_TOP)

ABI_STRUCT(rv_post_write_params_out)
RVT_POST_WRITE_OUT(rv_post_write_params_out, RVT_TOP)

ABI_STRUCT(rv_post_write_params)
ABI_FIELD(rv_post_write_params, in)
RVT_POST_WRITE_IN(rv_post_write_params, in.)
ABI_FIELD(rv_post_write_params, out)
RVT_POST_WRITE_OUT(rv_post_write_params, out.)

/* ---- event ring ---- */

ABI_STRUCT(rv_event_wc)
RVT_EVENT_WC(rv_event_wc, RVT_TOP)

ABI_STRUCT(rv_event)
ABI_FIELD(rv_event, event_type)
ABI_FIELD(rv_event, wc)
RVT_EVENT_WC(rv_event, wc.)
ABI_FIELD(rv_event, resv)

ABI_STRUCT(rv_ring_header)
ABI_FIELD(rv_ring_header, head)
ABI_FIELD(rv_ring_header, tail)
ABI_FIELD(rv_ring_header, overflow_cnt)
ABI_FIELD(rv_ring_header, resv)
ABI_FLEX(rv_ring_header, entries)

#ifndef RV_UPSTREAM
/* The ABI <= 1.6 event, declared by legacy_event.h (test only). */
ABI_PACKED_STRUCT(rv_event_legacy)
ABI_FIELD(rv_event_legacy, event_type)
ABI_FIELD(rv_event_legacy, wc)
ABI_FIELD(rv_event_legacy, wc.status)
ABI_FIELD(rv_event_legacy, wc.resv1)
ABI_FIELD(rv_event_legacy, wc.imm_data)
ABI_FIELD(rv_event_legacy, wc.wr_id)
ABI_FIELD(rv_event_legacy, wc.conn_handle)
ABI_FIELD(rv_event_legacy, wc.byte_len)
ABI_FIELD(rv_event_legacy, wc.resv2)
ABI_FIELD(rv_event_legacy, cache_align)
ABI_FIELD(rv_event_legacy, cache_align.pad)
ABI_FIELD(rv_event_legacy, cache_align.pad2)
#endif

/* ---- ioctls ---- */

ABI_IOCTL(RV_IOCTL_CAPABILITY)
#ifndef RV_UPSTREAM
ABI_IOCTL(RV_IOCTL_QUERY_R2)
#endif
ABI_IOCTL(RV_IOCTL_ATTACH)
#ifndef RV_UPSTREAM
ABI_IOCTL(RV_IOCTL_ATTACH_R5)
#endif
ABI_IOCTL(RV_IOCTL_REG_MEM)
#ifndef RV_UPSTREAM
ABI_IOCTL(RV_IOCTL_REG_MEM_R4)
ABI_IOCTL(RV_IOCTL_REG_MEM_R1)
#endif
ABI_IOCTL(RV_IOCTL_DEREG_MEM)
ABI_IOCTL(RV_IOCTL_EVICT)
ABI_IOCTL(RV_IOCTL_GET_CACHE_STATS)
ABI_IOCTL(RV_IOCTL_CONN_CREATE)
ABI_IOCTL(RV_IOCTL_CONN_CONNECT)
ABI_IOCTL(RV_IOCTL_CONN_CONNECTED)
ABI_IOCTL(RV_IOCTL_CONN_GET_CONN_COUNT)
ABI_IOCTL(RV_IOCTL_CONN_GET_STATS)
ABI_IOCTL(RV_IOCTL_GET_EVENT_STATS)
ABI_IOCTL(RV_IOCTL_POST_RDMA_WR_IMMED)

/* ---- constants ---- */

ABI_CONST(RV_MAGIC)
ABI_CONST(RV_ABI_VER_MAJOR)
ABI_CONST(RV_ABI_VER_MINOR)
ABI_CONST(RV_ABI_VERSION_CURRENT)
ABI_CONSTX("RV_ABI_VERSION(1,6)", RV_ABI_VERSION(1, 6))
ABI_CONSTX("RV_ABI_VERSION(2,0)", RV_ABI_VERSION(2, 0))
#ifndef RV_UPSTREAM
ABI_CONST(RV_ABI_VER_MAJOR_1)
ABI_CONST(RV_ABI_VER_MINOR_1)
ABI_CONST(RV_ABI_VER_MINOR_2)
ABI_CONST(RV_ABI_VER_MINOR_3)
ABI_CONST(RV_ABI_VER_MINOR_4)
ABI_CONST(RV_ABI_VER_MINOR_5)
ABI_CONST(RV_ABI_VER_MINOR_6)
ABI_CONST(RV_ABI_VER_MINOR_7)
#endif
ABI_CONST(RV_CAP_USER_MR)
ABI_CONST(RV_CAP_EVICT)
ABI_CONST(RV_RDMA_MODE_USER)
ABI_CONST(RV_RDMA_MODE_KERNEL)
ABI_CONST(RV_RDMA_MODE_MAX)
ABI_CONST(RV_RDMA_MODE_MASK)
#ifndef RV_UPSTREAM
ABI_CONST(RV_RDMA_MODE_UPSIZE_CPU)
#endif
ABI_CONST(RV_MAX_DEV_NAME_LEN)
ABI_CONST(RV_MAX_NUM_CONN)
ABI_CONST(RV_MAX_INDEX_BITS)
ABI_CONST(RV_MAX_JOB_KEY_LEN)
ABI_CONST(RV_MAX_CQ_ENTRIES)
ABI_CONST(RV_ACCESS_KERNEL)
#ifndef RV_UPSTREAM
ABI_CONST(IBV_ACCESS_KERNEL)
#endif
ABI_CONST(RV_EVICT_TYPE_SEARCH_EXACT)
ABI_CONST(RV_EVICT_TYPE_SEARCH_RANGE)
ABI_CONST(RV_EVICT_TYPE_AMOUNT)
ABI_CONST(RV_CONN_STATS_AGGREGATE)
ABI_CONST(RV_CONN_STAT_FLAG_SERVER)
ABI_CONST(RV_CONN_STAT_FLAG_CLIENT)
ABI_CONST(RV_CONN_STAT_FLAG_WAS_CONNECTED)
ABI_CONST(RV_WC_RDMA_WRITE)
ABI_CONST(RV_WC_RECV_RDMA_WITH_IMM)
#ifndef RV_UPSTREAM
ABI_CONST(RV_EVENT_LEGACY_SIZE)
#endif
ABI_CONSTX("RV_RING_ALLOC_LEN(0)", RV_RING_ALLOC_LEN(0))
ABI_CONSTX("RV_RING_ALLOC_LEN(1)", RV_RING_ALLOC_LEN(1))
ABI_CONSTX("RV_RING_ALLOC_LEN(RV_MAX_CQ_ENTRIES)",
	   RV_RING_ALLOC_LEN(RV_MAX_CQ_ENTRIES))
#ifndef RV_UPSTREAM
ABI_CONSTX("sizeof(struct_rv_event_legacy)", sizeof(struct rv_event_legacy))
#endif

ABI_NONINT(RV_FILE_NAME)		/* value checked by abi_check.py */
ABI_NONINT(RV_ABI_VERSION)		/* via the ABI_CONSTX lines above */
#ifndef RV_UPSTREAM
ABI_CONSTX("RV_RING_LEGACY_ALLOC_LEN(1)", RV_RING_LEGACY_ALLOC_LEN(1))
ABI_CONSTX("RV_RING_LEGACY_ALLOC_LEN(RV_MAX_CQ_ENTRIES)",
	   RV_RING_LEGACY_ALLOC_LEN(RV_MAX_CQ_ENTRIES))
ABI_NONINT(RV_RING_LEGACY_ALLOC_LEN)	/* via the ABI_CONSTX lines above */
#endif
ABI_NONINT(RV_RING_ALLOC_LEN)		/* via the ABI_CONSTX lines above */
ABI_NONINT(__RV_ATTACH_PARAMS_IN_FIELDS)	/* via the structs */
ABI_NONINT(__RV_MEM_PARAMS_IN_FIELDS)	/* via the structs */
ABI_NONINT(_UAPI_RDMA_RV_USER_IOCTLS_H)	/* include guard */

#undef RVT_TOP
#undef RVT_ATTACH_IN_R5
#undef RVT_ATTACH_IN
#undef RVT_ATTACH_OUT
#undef RVT_MEM_IN_R1
#undef RVT_MEM_IN
#undef RVT_MEM_OUT
#undef RVT_EVICT_IN
#undef RVT_EVICT_OUT
#undef RVT_CONN_CREATE_IN
#undef RVT_CONN_CREATE_OUT
#undef RVT_HANDLE_INDEX_IN
#undef RVT_CONN_COUNT_OUT
#undef RVT_CONN_STATS_OUT
#undef RVT_POST_WRITE_IN
#undef RVT_POST_WRITE_OUT
#undef RVT_EVENT_WC
