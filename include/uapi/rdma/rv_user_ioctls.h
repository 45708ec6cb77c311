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

/**
 * DOC: ioctls, callers and errors
 *
 * Any user may open RV_FILE_NAME. Every ioctl has type RV_MAGIC and a
 * number from 0xF1 to 0xFF (0xF2 and 0xF5 are unused). A command of
 * another type, or with a number rv does not define, fails with %ENOTTY;
 * a defined number with a direction or size that is none of the forms
 * this header defines for it fails with %EINVAL. 32-bit processes pass
 * the same structs (the module implements compat_ioctl).
 *
 * RV_IOCTL_CAPABILITY and RV_IOCTL_ATTACH, in each of their forms, may be
 * called by any process that has the file open. A successful
 * RV_IOCTL_ATTACH makes its caller the attached process of the file; every
 * other ioctl, and the mmap() of the event ring, is for that process
 * only (any of its threads). Before the attach they fail with %EINVAL;
 * afterwards another process (a child after fork(), the same process
 * after execve(), a process that received the fd) gets %EACCES. These two
 * checks come before any other.
 *
 * A failed ioctl returns -1 with errno set to one of the values listed
 * for it; RV_IOCTL_CONN_CONNECTED alone may also return 1. %EFAULT always
 * means that the argument could not be read or the result could not be
 * written.
 *
 * When the RDMA device of a job goes away (driver unload, rdma link
 * delete, hot unplug), the module frees every verbs object of the job at
 * once: its connections fail for good, its MRs are deregistered. Each file
 * stays attached until it is closed: RV_IOCTL_REG_MEM, RV_IOCTL_DEREG_MEM,
 * RV_IOCTL_EVICT, RV_IOCTL_CONN_CREATE and RV_IOCTL_CONN_CONNECT then fail
 * with %ENODEV, RV_IOCTL_POST_RDMA_WR_IMMED, RV_IOCTL_CONN_CONNECTED and
 * RV_IOCTL_CONN_GET_CONN_COUNT with %EIO, and the three statistics ioctls
 * keep working.
 *
 * Closing the file detaches the process once the last reference to the
 * file goes (a child that inherited the fd, or the mapping of the event
 * ring, keeps it): the process leaves the job, its connection handles
 * are dropped, and its MRs and event ring go once its writes in flight
 * have completed.
 */

/* Path of the device node; mode 0666: access is checked per job. */
#define RV_FILE_NAME "/dev/rv"
/* ioctl type of every rv command (RDMA_IOCTL_MAGIC). */
#define RV_MAGIC RDMA_IOCTL_MAGIC

/**
 * DOC: ABI versions
 *
 * RV_ABI_VERSION() packs a major and minor number into one integer that
 * can be compared in #if. A client declares the version it was built
 * against in RV_IOCTL_CAPABILITY; the module answers with its own.
 * RV_ABI_VER_MAJOR and RV_ABI_VER_MINOR are the version of this header,
 * RV_ABI_VERSION_CURRENT the two packed.
 */
#ifdef RV_UPSTREAM
/*
 * The event ring has the layout of 1.7, 64-byte entries: RV_IOCTL_CAPABILITY
 * refuses a client that declares an older version.
 */
#else
/*
 * 1.7 changes struct rv_event from the 65-byte packed layout of 1.6 and
 * earlier to 64 bytes with naturally aligned fields. The module lays a
 * file's event ring out for the version that file declared: a 65-byte
 * stride for 1.6 and older (and for RV_IOCTL_QUERY_R2, which means 1.2),
 * a 64-byte stride for 1.7 and newer. The layout is fixed when
 * RV_IOCTL_ATTACH creates the ring: the version recorded by the last
 * RV_IOCTL_CAPABILITY or RV_IOCTL_QUERY_R2 before it counts, and a file
 * that declared none gets the layout of 1.6.
 *
 * Modules older than 1.7 always write 65-byte entries. A client may use
 * the 64-byte layout only when the module's answer is 1.7 or newer;
 * otherwise it maps RV_RING_LEGACY_ALLOC_LEN() bytes and reads entries at
 * a RV_EVENT_LEGACY_SIZE stride.
 */
#endif

/**
 * RV_ABI_VERSION() - an ABI version as one integer
 * @maj: major number, 1 for every version so far
 * @min: minor number, below 65536
 *
 * Return: @maj in bits 16 and up, @min in bits 0 to 15; later versions
 * compare greater.
 */
#define RV_ABI_VERSION(maj, min) (((maj) << 16) | (min))
#define RV_ABI_VER_MAJOR 1	/* major number of this header's ABI */
#define RV_ABI_VER_MINOR 7	/* minor number of this header's ABI */
#define RV_ABI_VERSION_CURRENT RV_ABI_VERSION(RV_ABI_VER_MAJOR, RV_ABI_VER_MINOR)

#ifndef RV_UPSTREAM
/*
 * Named revisions, tested with #ifdef by PSM3 to pick older ioctl forms:
 * RV_ABI_VER_MAJOR_1 is 1 and RV_ABI_VER_MINOR_n is n, one for each
 * revision up to this header's.
 */
#define RV_ABI_VER_MAJOR_1 1
#define RV_ABI_VER_MINOR_1 1
#define RV_ABI_VER_MINOR_2 2
#define RV_ABI_VER_MINOR_3 3
#define RV_ABI_VER_MINOR_4 4
#define RV_ABI_VER_MINOR_5 5
#define RV_ABI_VER_MINOR_6 6
#define RV_ABI_VER_MINOR_7 7
#endif

/**
 * RV_CAP_USER_MR - capability bit: MRs in a user PD
 *
 * Would mean that RV_RDMA_MODE_USER attaches and user-mode MRs work. This
 * module never reports it: such an attach fails with %EOPNOTSUPP.
 */
#define RV_CAP_USER_MR (1ULL << 0)

/**
 * RV_CAP_EVICT - capability bit: RV_IOCTL_EVICT is implemented
 *
 * Reported by this module.
 */
#define RV_CAP_EVICT (1ULL << 1)

/**
 * struct rv_capability_params - argument of RV_IOCTL_CAPABILITY
 * @major_rev: in: ABI major the client was built with, not 0 (a major
 *	above the module's counts as the module's own version); out: the
 *	module's RV_ABI_VER_MAJOR
 * @minor_rev: in: ABI minor the client was built with; out: the module's
 *	RV_ABI_VER_MINOR
 * @resv1: reserved, must be 0; out: 0
 * @capability: in: ignored (clients pass the capabilities they intend to
 *	use); out: the RV_CAP_* bits the module implements
 * @resv2: reserved, must be 0; out: 0
 */
struct rv_capability_params {
	__u16 major_rev;
	__u16 minor_rev;
	__u32 resv1;
	__aligned_u64 capability;
	__aligned_u64 resv2[6];
};

/**
 * RV_IOCTL_CAPABILITY - exchange ABI versions and capabilities
 *
 * Context: any process that has the file open.
 *
 * Records the ABI version the client declares in struct
 * rv_capability_params for this file and overwrites the struct with the
 * module's version and capabilities. The version decides the layout of
 * the event ring a later RV_IOCTL_ATTACH of the file creates (see "ABI
 * versions"); after the attach it changes nothing. May be called any
 * number of times.
 *
 * Return:
 * * 0 - the answer is written.
 * * %EINVAL - major_rev is 0; resv1 or resv2 is not 0; or the module does
 *   not serve the version declared (see "ABI versions").
 * * %EFAULT - the struct cannot be read or written; nothing is recorded.
 */
#define RV_IOCTL_CAPABILITY _IOWR(RV_MAGIC, 0xFC, struct rv_capability_params)

#ifndef RV_UPSTREAM
/**
 * RV_IOCTL_QUERY_R2 - the ABI 1.2 form of RV_IOCTL_CAPABILITY
 *
 * Context: any process that has the file open.
 *
 * Reads nothing, writes the module's answer into struct
 * rv_capability_params and records the file as an ABI 1.2 client (65-byte
 * event ring entries).
 *
 * Return:
 * * 0 - the answer is written.
 * * %EFAULT - the struct cannot be written; nothing is recorded.
 */
#define RV_IOCTL_QUERY_R2 _IOR(RV_MAGIC, 0xFC, struct rv_capability_params)
#endif

/* rdma_mode in struct rv_attach_params_in: a mode in RV_RDMA_MODE_MASK. */
#define RV_RDMA_MODE_USER 0	/* MRs in a user PD: EOPNOTSUPP */
#define RV_RDMA_MODE_KERNEL 1	/* kernel RC QPs and kernel MR cache */
#define RV_RDMA_MODE_MAX 1	/* highest mode; above it: EINVAL */
#define RV_RDMA_MODE_MASK 0x1f	/* the bits that hold the mode */
#ifndef RV_UPSTREAM
/*
 * The one other bit rdma_mode may hold, set by PSM3's GPU builds: the
 * module parameter mr_cache_size_gpu then takes the place of mr_cache_size
 * as the default and ceiling of the attach's mr_cache_size.
 */
#define RV_RDMA_MODE_UPSIZE_CPU 0x20
#endif

/* Limits of RV_IOCTL_ATTACH; beyond them it fails with EINVAL. */
#define RV_MAX_DEV_NAME_LEN IB_DEVICE_NAME_MAX	/* dev_name, with its NUL */
#define RV_MAX_NUM_CONN 16		/* num_conn */
#define RV_MAX_INDEX_BITS 12		/* index_bits */
#define RV_MAX_JOB_KEY_LEN 16		/* job_key_len */
#define RV_MAX_CQ_ENTRIES 10000		/* cq_entries */

/**
 * DOC: ATTACH input
 *
 * The members that __RV_ATTACH_PARAMS_IN_FIELDS declares, in each form of
 * RV_IOCTL_ATTACH's input. "The job agrees"
 * means that every process of the job-device must ask for the same value,
 * after the default and the module's limit are applied (else %EBUSY).
 *
 * @dev_name:
 *	name of the RDMA device, NUL-terminated, not empty (%EINVAL); no
 *	device of that name: %ENODEV.
 * @mr_cache_size:
 *	MB of MR cache for this process, at most 1048576 (%EINVAL). The
 *	module parameter mr_cache_size is both the default, for 0, and the
 *	ceiling: a larger request is cut to it, and the output says the
 *	size in use. It also bounds the largest MR (max_fmr_size).
 * @rdma_mode:
 *	RV_RDMA_MODE_KERNEL; RV_RDMA_MODE_USER: %EOPNOTSUPP; other modes:
 *	%EINVAL.
 * @port_num:
 *	port of dev_name: not a port of it: %EINVAL; not ACTIVE: %ENETDOWN.
 *	Part of the job's key. POST_RDMA_WR_IMMED's length is bounded by
 *	the port's largest message.
 * @num_conn:
 *	RC QPs per remote node, at most RV_MAX_NUM_CONN; 0: the module
 *	parameter num_conn. The job agrees.
 * @resv1:
 *	reserved, must be 0 (%EINVAL).
 * @loc_addr:
 *	local address (IPv4 in host order for RoCE), compared with a
 *	connection's rem_addr to pick the CM roles when the connection is
 *	not global. The job's first attach sets it; later ones are ignored.
 * @index_bits:
 *	top bits of an immediate that select the receiving process, at most
 *	RV_MAX_INDEX_BITS: the job holds at most 2^index_bits processes on
 *	this port (see "Immediate data"). The job agrees.
 * @resv2:
 *	reserved, must be 0 (%EINVAL).
 * @loc_gid_index:
 *	index of the local GID in the port's GID table. Part of the job's
 *	key.
 * @loc_gid:
 *	the local GID: it must be the one at loc_gid_index (%ENOENT). On
 *	RoCE its netdev must be in the caller's network namespace
 *	(%EADDRNOTAVAIL), as an address the caller could bind.
 * @job_key:
 *	identifies the job (a UUID for PSM3); bytes beyond job_key_len are
 *	ignored. Part of the job's key.
 * @job_key_len:
 *	bytes of job_key that count, at most RV_MAX_JOB_KEY_LEN.
 * @resv3:
 *	reserved, must be 0 (%EINVAL).
 * @service_id:
 *	IB CM service id the job listens and connects on; 0: the module
 *	parameter service_id. Part of the job's key. Any uid may use
 *	that default and the ids from the module parameters
 *	user_service_id_min to user_service_id_max (default
 *	0x1000125500000000 to 0x10001255ffffffff); others need
 *	CAP_NET_BIND_SERVICE in the initial user namespace (%EACCES), the
 *	IB CM's ids being global to the node. The ids of the RDMA CM's IP
 *	port spaces, 0x0000000001000000 to 0x0000000001ffffff, are refused
 *	to all (%EADDRNOTAVAIL).
 * @context:
 *	not used by the module.
 * @cq_entries:
 *	entries of the event ring, 2 to RV_MAX_CQ_ENTRIES (it holds one
 *	event fewer); 0: no ring, events are only counted (see
 *	RV_IOCTL_GET_EVENT_STATS). 1 is %EINVAL.
 * @q_depth:
 *	send queue depth of a connection, 16 to 65536, split over its
 *	num_conn QPs (rounded up, at least 8 per QP, at most what the device
 *	allows); 0: the module parameter q_depth. The job agrees.
 * @reconnect_timeout:
 *	seconds a lost QP has to connect again, cut to the module parameter
 *	max_reconnect_timeout; 0: no recovery, a lost QP has failed for
 *	good. The job agrees.
 * @hb_interval:
 *	milliseconds between heartbeats of an idle QP, raised to the module
 *	parameter min_hb_interval; 0: no heartbeats. When both are not 0,
 *	reconnect_timeout * 1000 must exceed hb_interval (%EINVAL, checked
 *	on the values passed). The job agrees.
 */
#define __RV_ATTACH_PARAMS_IN_FIELDS \
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
 * @__RV_ATTACH_PARAMS_IN_FIELDS: the members dev_name to hb_interval,
 *	described in "ATTACH input"
 * @fr_page_list_len: pages per fast-registration MR (ABI 1.6): the
 *	module uses the smaller of this and the device's page list length
 *	(max_fast_reg_page_list_len); 0: the device's; 1: %EINVAL. It
 *	bounds max_fmr_size.
 * @resv4: reserved, must be 0
 */
struct rv_attach_params_in {
	__RV_ATTACH_PARAMS_IN_FIELDS;
	__u32 fr_page_list_len;
	__u32 resv4;
};

#ifndef RV_UPSTREAM
/**
 * struct rv_attach_params_r5_in - input of RV_IOCTL_ATTACH_R5 (ABI 1.5)
 * @__RV_ATTACH_PARAMS_IN_FIELDS: the members dev_name to hb_interval,
 *	described in "ATTACH input"
 *
 * The ABI 1.5 form of struct rv_attach_params_in, without fr_page_list_len
 * and resv4.
 */
struct rv_attach_params_r5_in {
	__RV_ATTACH_PARAMS_IN_FIELDS;
};
#endif

/**
 * struct rv_attach_params_out - output of RV_IOCTL_ATTACH
 * @rv_index: index of this process within its job-device, below
 *	2^index_bits; the top index_bits bits of an immediate select it
 * @mr_cache_size: MB of MR cache in use
 * @q_depth: send queue depth per connection in use (the job's)
 * @reconnect_timeout: seconds in use (the job's)
 * @max_fmr_size: largest MR, in bytes, the module will register, at any
 *	address: one page less than the pages per fast-registration MR
 *	(see fr_page_list_len), so that a range of this length fits
 *	whatever its offset within a page; or the MR cache size, or the
 *	device's largest MR, if smaller
 */
struct rv_attach_params_out {
	__u32 rv_index;
	__u32 mr_cache_size;
	__u32 q_depth;
	__u32 reconnect_timeout;
	__aligned_u64 max_fmr_size;
};

/**
 * struct rv_attach_params - argument of RV_IOCTL_ATTACH
 * @in: what the client asks for
 * @out: what it got, written over @in on success
 */
struct rv_attach_params {
	union {
		struct rv_attach_params_in in;
		struct rv_attach_params_out out;
	};
};

#ifndef RV_UPSTREAM
/**
 * struct rv_attach_params_r5 - argument of RV_IOCTL_ATTACH_R5
 * @in: what the client asks for
 * @out: what it got, written over @in on success
 */
struct rv_attach_params_r5 {
	union {
		struct rv_attach_params_r5_in in;
		struct rv_attach_params_out out;
	};
};
#endif

/**
 * RV_IOCTL_ATTACH - join the caller's job on an RDMA device port
 *
 * Context: any process that has the file open.
 *
 * The processes of one job on one device port share a job-device, found
 * by its key: the device, port_num, loc_gid_index, the caller's effective
 * uid and network namespace, the job key and the service id (another uid
 * or namespace never shares one). The
 * first attach with a key creates the job-device, with a kernel PD and a
 * CM listener on the service id; later ones join it if they agree on its
 * parameters (see "ATTACH input"). The caller gets the lowest free
 * rv_index below 2^index_bits, an MR cache of mr_cache_size MB and, when
 * cq_entries is not 0, an event ring laid out for the ABI version the
 * file declared (see "ABI versions").
 *
 * The caller becomes the attached process of the file. A file is attached
 * at most once, until it is closed; after a failed attach it may be tried
 * again.
 *
 * Return:
 * * 0 - attached; struct rv_attach_params_out is written.
 * * %EBUSY - the file is already attached; or the job-device of this key
 *   exists and its num_conn, index_bits, q_depth, reconnect_timeout or
 *   hb_interval differ from the ones asked for.
 * * %EINVAL - a reserved member is not 0; rdma_mode has a mode above
 *   RV_RDMA_MODE_MAX or a bit beyond RV_RDMA_MODE_MASK not defined here;
 *   dev_name is empty or not NUL-terminated; num_conn, index_bits,
 *   job_key_len, cq_entries (or cq_entries is 1), q_depth or mr_cache_size
 *   is out of range; reconnect_timeout and hb_interval are both set and
 *   hb_interval is not below reconnect_timeout * 1000; port_num is not a
 *   port of the device.
 * * %EOPNOTSUPP - the mode is RV_RDMA_MODE_USER; or the device has no
 *   memory management extensions (fast registration, with a page list of
 *   at least 2 pages), with which rv registers memory.
 * * %EPROTONOSUPPORT - the port is iWARP, which has no RDMA WRITE with
 *   immediate.
 * * %ESOCKTNOSUPPORT - the port's transport has no RC QPs (neither
 *   InfiniBand, RoCE nor iWARP).
 * * %ENODEV - there is no RDMA device named dev_name.
 * * %EPERM - the device belongs to another network namespace and the RDMA
 *   subsystem's namespace mode is exclusive (as uverbs' open).
 * * %EACCES - the service id is outside the user range and the caller
 *   lacks CAP_NET_BIND_SERVICE (see "ATTACH input").
 * * %EADDRNOTAVAIL - the service id is in the RDMA CM's port spaces; or
 *   the RoCE GID's netdev is in another network namespace.
 * * %ENETDOWN - the port is not ACTIVE.
 * * %ENOENT - the port's GID at loc_gid_index is not loc_gid, or there is
 *   none.
 * * %ENOSPC - every rv_index below 2^index_bits is taken.
 * * %EDQUOT - a new job-device would pass the module parameter
 *   max_jobs_per_user for the caller's uid, and the caller lacks
 *   CAP_SYS_RESOURCE.
 * * %EAGAIN - the caller's rdma cgroup (rdma.max) has no hca_handle left
 *   (each attached process holds one, as a uverbs context does) or, for
 *   a new job-device, not 3 hca_object (its PD, registration QP and CQ).
 * * %ENOMEM - out of memory (the event ring included).
 * * %EFAULT - the argument cannot be read, or the output cannot be
 *   written (the attach is undone).
 * * other - an error of the RDMA core allocating the job's PD, its
 *   registration QP or its CM listener.
 *
 * The refusals of a device or port (%EOPNOTSUPP, %EPROTONOSUPPORT,
 * %ESOCKTNOSUPPORT) are decided from its attributes, never its driver's
 * name, and each logs one line in the kernel log that names what is
 * missing; docs/rdma-drivers.md lists what each driver gets.
 */
#define RV_IOCTL_ATTACH _IOWR(RV_MAGIC, 0xF1, struct rv_attach_params)

#ifndef RV_UPSTREAM
/**
 * RV_IOCTL_ATTACH_R5 - the ABI 1.5 form of RV_IOCTL_ATTACH
 *
 * Context: any process that has the file open.
 *
 * Takes struct rv_attach_params_r5_in, without fr_page_list_len and resv4,
 * and otherwise behaves as RV_IOCTL_ATTACH with fr_page_list_len 0,
 * errors included.
 *
 * Return: as RV_IOCTL_ATTACH.
 */
#define RV_IOCTL_ATTACH_R5 _IOWR(RV_MAGIC, 0xF1, struct rv_attach_params_r5)
#endif

/*
 * In rv_mem_params_in.access (and wherever an access of a cached MR is
 * given): register a kernel MR in the job's PD. Without it REG_MEM fails
 * with EOPNOTSUPP, POST_RDMA_WR_IMMED with EINVAL.
 */
#define RV_ACCESS_KERNEL 0x80000000
#ifndef RV_UPSTREAM
/* The name PSM3 uses for RV_ACCESS_KERNEL, in libibverbs' namespace. */
#define IBV_ACCESS_KERNEL RV_ACCESS_KERNEL
#endif

/**
 * DOC: REG_MEM input
 *
 * The members that __RV_MEM_PARAMS_IN_FIELDS declares, in each form of
 * RV_IOCTL_REG_MEM's input.
 *
 * @ibv_pd_handle:
 *	user PD of a user-mode MR; ignored (kernel MRs are in the job's PD).
 * @cmd_fd_int:
 *	verbs command fd of that PD; ignored.
 * @addr:
 *	start of the range of the caller's memory to register.
 * @length:
 *	bytes, 1 to max_fmr_size of the attach (above: %E2BIG); the range
 *	must not wrap.
 * @access:
 *	RV_ACCESS_KERNEL, ORed with any of libibverbs'
 *	IBV_ACCESS_LOCAL_WRITE (1), IBV_ACCESS_REMOTE_WRITE (2, only with
 *	IBV_ACCESS_LOCAL_WRITE) and IBV_ACCESS_REMOTE_READ (4); no other
 *	bit.
 * @resv1:
 *	reserved, must be 0.
 * @ulen:
 *	length of provider data for a user-mode MR; ignored.
 * @udata:
 *	pointer to that provider data; ignored.
 * @udata_u64:
 *	the same 8 bytes as an integer, so that the layout does not depend
 *	on the size of a pointer; ignored.
 */
#define __RV_MEM_PARAMS_IN_FIELDS \
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
 * @__RV_MEM_PARAMS_IN_FIELDS: the members ibv_pd_handle to udata,
 *	described in "REG_MEM input"
 * @resv2: reserved, both must be 0
 */
struct rv_mem_params_in {
	__RV_MEM_PARAMS_IN_FIELDS;
	__aligned_u64 resv2[2];
};

#ifndef RV_UPSTREAM
/**
 * struct rv_mem_params_r4_in - input of RV_IOCTL_REG_MEM_R4 (ABI 1.4)
 * @__RV_MEM_PARAMS_IN_FIELDS: the members ibv_pd_handle to udata,
 *	described in "REG_MEM input"
 * @resv2: reserved, must be 0
 */
struct rv_mem_params_r4_in {
	__RV_MEM_PARAMS_IN_FIELDS;
	__aligned_u64 resv2;
};

/**
 * struct rv_mem_params_r1_in - input of RV_IOCTL_REG_MEM_R1 (ABI 1.1)
 * @__RV_MEM_PARAMS_IN_FIELDS: the members ibv_pd_handle to udata,
 *	described in "REG_MEM input"
 */
struct rv_mem_params_r1_in {
	__RV_MEM_PARAMS_IN_FIELDS;
};
#endif

/**
 * struct rv_mem_params_out - output of RV_IOCTL_REG_MEM
 * @mr_handle: opaque id of the cached MR, never 0; a hit returns the id
 *	of the cached MR that contains the range, so several calls may get
 *	the same one
 * @iova: the device address of @addr as given to RV_IOCTL_REG_MEM (kernel
 *	MRs map virtual addresses 1:1, so it equals that addr, also when a
 *	larger cached MR served the request)
 * @lkey: local key of the cached MR
 * @rkey: remote key of the cached MR, for a peer's RDMA WRITE into it
 */
struct rv_mem_params_out {
	__aligned_u64 mr_handle;
	__aligned_u64 iova;
	__u32 lkey;
	__u32 rkey;
};

/**
 * struct rv_mem_params - argument of RV_IOCTL_REG_MEM
 * @in: the range to register
 * @out: the MR, written over @in on success
 */
struct rv_mem_params {
	union {
		struct rv_mem_params_in in;
		struct rv_mem_params_out out;
	};
};

#ifndef RV_UPSTREAM
/**
 * struct rv_mem_params_r4 - argument of RV_IOCTL_REG_MEM_R4
 * @in: the range to register
 * @out: the MR, written over @in on success
 */
struct rv_mem_params_r4 {
	union {
		struct rv_mem_params_r4_in in;
		struct rv_mem_params_out out;
	};
};

/**
 * struct rv_mem_params_r1 - argument of RV_IOCTL_REG_MEM_R1
 * @in: the range to register
 * @out: the MR, written over @in on success
 */
struct rv_mem_params_r1 {
	union {
		struct rv_mem_params_r1_in in;
		struct rv_mem_params_out out;
	};
};
#endif

/**
 * RV_IOCTL_REG_MEM - register memory through the process's MR cache
 *
 * Context: only the attached process.
 *
 * A live cached MR that contains [addr, addr + length) with exactly this
 * access is a hit: it gets one more reference, and no verbs call is made.
 * Otherwise, a miss: unreferenced MRs are evicted, least recently used
 * first, until the new one fits in mr_cache_size; then the range is
 * pinned (charged to RLIMIT_MEMLOCK as a verbs registration is),
 * registered by fast registration in the job's PD, and cached with one
 * reference. The MR's lkey and rkey are valid when the call returns, and
 * its iova is addr. Each
 * successful call takes one reference, which RV_IOCTL_DEREG_MEM drops; a
 * referenced MR is never evicted.
 *
 * MR lifetime: an MR that RV_IOCTL_REG_MEM returned stays valid, for
 * RV_IOCTL_POST_RDMA_WR_IMMED and for the peer's writes to its rkey,
 * until the RV_IOCTL_DEREG_MEM of that reference, whatever happens to the
 * process's memory meanwhile: it keeps the pages it pinned. What the
 * memory does only decides whether a later RV_IOCTL_REG_MEM finds the MR
 * in the cache:
 * * munmap, mremap and mmap MAP_FIXED over it remove it from lookup at
 *   once;
 * * events that may or may not replace its pages (a huge page collapse
 *   attempt or split, reclaim, migration and compaction attempts, KSM,
 *   MADV_DONTNEED, MADV_FREE, copy-on-write) mark it: the next
 *   RV_IOCTL_REG_MEM that finds it compares its pages with those the
 *   process maps there now, with the same access check as a first
 *   registration, and misses if they differ;
 * * mprotect and NUMA balancing scans mark it too: the next
 *   RV_IOCTL_REG_MEM that finds it checks that the memory still allows
 *   the access it was made with (readable, and writable for a writable
 *   MR), and misses if not;
 * * fork (the parent keeps its pinned pages), writeback and soft-dirty
 *   tracking change nothing.
 * An MR removed from lookup while referenced is stale: it serves its
 * holders until their RV_IOCTL_DEREG_MEM, and the last one deregisters
 * it. Posting from memory that was unmapped or replaced sends the bytes
 * of the pages the MR pinned, as with any verbs MR.
 *
 * Each call that gets past the checks of its argument is counted in one
 * of hit, miss, full and failed of RV_IOCTL_GET_CACHE_STATS.
 *
 * Return:
 * * 0 - struct rv_mem_params_out is written.
 * * %EINVAL - the file is not attached; resv1 or resv2 is not 0; access
 *   has a bit not allowed, or IBV_ACCESS_REMOTE_WRITE without
 *   IBV_ACCESS_LOCAL_WRITE; length is 0, or the range wraps.
 * * %E2BIG - length is above max_fmr_size.
 * * %EACCES - the caller is not the attached process.
 * * %EOPNOTSUPP - access lacks RV_ACCESS_KERNEL: MRs in a user PD are
 *   not supported.
 * * %ENODEV - the job's RDMA device is gone.
 * * %ENOMEM - a miss found no room: referenced and stale MRs fill the
 *   cache (counted in full); or, counted in failed: pinning the range
 *   would pass RLIMIT_MEMLOCK without CAP_IPC_LOCK, the device has no
 *   MR left, or out of memory.
 * * %EAGAIN - the memory of the range changed while it was being
 *   registered; or the MR would pass the hca_object limit of the
 *   caller's rdma cgroup (rdma.max), to which each MR is charged as
 *   uverbs charges its own (both counted in failed); the call may be
 *   repeated.
 * * %EFAULT - the argument cannot be read; the output cannot be written
 *   (the reference is dropped again); or part of the range is not
 *   mapped, or not writable for a writable MR (counted in failed).
 * * %EIO - the device did not register the pages: its registration work
 *   request could not be posted or completed with an error (counted in
 *   failed; the kernel log says which). Nothing stays pinned; the call
 *   may be repeated.
 * * other - another error of the RDMA core pinning the range (counted
 *   in failed).
 */
#define RV_IOCTL_REG_MEM _IOWR(RV_MAGIC, 0xF3, struct rv_mem_params)

#ifndef RV_UPSTREAM
/**
 * RV_IOCTL_REG_MEM_R4 - the ABI 1.4 form of RV_IOCTL_REG_MEM
 *
 * Context: only the attached process.
 *
 * Takes struct rv_mem_params_r4_in, with one reserved word, and otherwise
 * behaves as RV_IOCTL_REG_MEM.
 *
 * Return: as RV_IOCTL_REG_MEM.
 */
#define RV_IOCTL_REG_MEM_R4 _IOWR(RV_MAGIC, 0xF3, struct rv_mem_params_r4)

/**
 * RV_IOCTL_REG_MEM_R1 - the ABI 1.1 form of RV_IOCTL_REG_MEM
 *
 * Context: only the attached process.
 *
 * Takes struct rv_mem_params_r1_in, without resv2, and otherwise behaves
 * as RV_IOCTL_REG_MEM.
 *
 * Return: as RV_IOCTL_REG_MEM.
 */
#define RV_IOCTL_REG_MEM_R1 _IOWR(RV_MAGIC, 0xF3, struct rv_mem_params_r1)
#endif

#ifdef RV_UPSTREAM
/**
 * struct rv_dereg_params_in - input of RV_IOCTL_DEREG_MEM
 * @mr_handle: from RV_IOCTL_REG_MEM
 * @addr: as given to RV_IOCTL_REG_MEM (any range inside the cached MR is
 *	accepted)
 * @length: as given to RV_IOCTL_REG_MEM
 * @access: as given to RV_IOCTL_REG_MEM: the MR's access, exactly
 * @resv1: reserved, must be 0
 */
#else
/**
 * struct rv_dereg_params_in - input of RV_IOCTL_DEREG_MEM
 * @mr_handle: from RV_IOCTL_REG_MEM
 * @addr: as given to RV_IOCTL_REG_MEM (any range inside the cached MR is
 *	accepted)
 * @length: as given to RV_IOCTL_REG_MEM
 * @access: as given to RV_IOCTL_REG_MEM: the MR's access, exactly
 * @resv1: ignored: deployed clients do not clear it
 */
#endif
struct rv_dereg_params_in {
	__aligned_u64 mr_handle;
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 access;
	__u32 resv1;
};

#ifdef RV_UPSTREAM
/**
 * RV_IOCTL_DEREG_MEM - drop a reference taken by RV_IOCTL_REG_MEM
 *
 * Context: only the attached process.
 *
 * Drops one reference taken by RV_IOCTL_REG_MEM; the MR stays cached,
 * and once it holds no reference it may be evicted. A stale MR (see
 * RV_IOCTL_REG_MEM) is deregistered on its last reference.
 *
 * Return:
 * * 0 - the reference is dropped.
 * * %EINVAL - the file is not attached; resv1 is not 0; mr_handle is 0,
 *   above U32_MAX or not a cached or stale MR of this process;
 *   [addr, addr + length) is empty, wraps or is not inside that MR;
 *   access is not the MR's; the MR holds no reference of
 *   RV_IOCTL_REG_MEM.
 * * %EACCES - the caller is not the attached process.
 * * %ENODEV - the job's RDMA device is gone.
 * * %EFAULT - the argument cannot be read.
 */
#else
/**
 * RV_IOCTL_DEREG_MEM - drop a reference taken by RV_IOCTL_REG_MEM
 *
 * Context: only the attached process.
 *
 * Drops one reference taken by RV_IOCTL_REG_MEM; the MR stays cached,
 * and once it holds no reference it may be evicted. A stale MR (see
 * RV_IOCTL_REG_MEM) is deregistered on its last reference.
 *
 * Return:
 * * 0 - the reference is dropped.
 * * %EINVAL - the file is not attached; mr_handle is 0, above U32_MAX or
 *   not a cached or stale MR of this process; [addr, addr + length) is
 *   empty, wraps or is not inside that MR; access is not the MR's; the MR
 *   holds no reference of RV_IOCTL_REG_MEM.
 * * %EACCES - the caller is not the attached process.
 * * %ENODEV - the job's RDMA device is gone.
 * * %EFAULT - the argument cannot be read.
 */
#endif
#define RV_IOCTL_DEREG_MEM _IOW(RV_MAGIC, 0xF4, struct rv_dereg_params_in)

/* RV_IOCTL_EVICT types: what rv_evict_params_in.type selects. */
#define RV_EVICT_TYPE_SEARCH_EXACT 1	/* the MR of this addr, length, access */
#define RV_EVICT_TYPE_SEARCH_RANGE 2	/* every MR overlapping the range */
#define RV_EVICT_TYPE_AMOUNT 3		/* LRU first, until enough */

/**
 * struct rv_evict_params_in - input of RV_IOCTL_EVICT
 * @type: RV_EVICT_TYPE_*
 * @pad: reserved, must be 0
 * @search: for RV_EVICT_TYPE_SEARCH_EXACT and RV_EVICT_TYPE_SEARCH_RANGE
 * @search.addr: start of the range
 * @search.length: bytes, not 0; the range must not wrap
 * @search.access: SEARCH_EXACT: the MR's access; ignored by SEARCH_RANGE
 * @search.resv1: reserved, must be 0
 * @amount: for RV_EVICT_TYPE_AMOUNT
 * @amount.bytes: evict until at least this many bytes ...
 * @amount.count: ... and at least this many MRs are evicted
 * @amount.resv1: reserved, must be 0
 */
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

/**
 * struct rv_evict_params_out - output of RV_IOCTL_EVICT
 * @bytes: bytes evicted
 * @count: MRs evicted
 * @resv1: 0
 */
struct rv_evict_params_out {
	__aligned_u64 bytes;
	__u32 count;
	__u32 resv1;
};

/**
 * struct rv_evict_params - argument of RV_IOCTL_EVICT
 * @in: what to evict
 * @out: what was evicted, written over @in on success
 */
struct rv_evict_params {
	union {
		struct rv_evict_params_in in;
		struct rv_evict_params_out out;
	};
};

/**
 * RV_IOCTL_EVICT - remove unreferenced MRs from the process's MR cache
 *
 * Context: only the attached process.
 *
 * Evicts cached MRs that hold no reference (neither of RV_IOCTL_REG_MEM
 * nor of a write in flight):
 *
 * - RV_EVICT_TYPE_SEARCH_EXACT: the one with exactly this addr, length
 *   and access;
 * - RV_EVICT_TYPE_SEARCH_RANGE: every one overlapping
 *   [addr, addr + length), whatever its access;
 * - RV_EVICT_TYPE_AMOUNT: least recently used first, until at least
 *   amount.bytes bytes and at least amount.count MRs were evicted, or
 *   none is left.
 *
 * Evicted MRs are deregistered before the call returns, and counted in
 * evict of RV_IOCTL_GET_CACHE_STATS. Present when RV_CAP_EVICT is
 * reported.
 *
 * Return:
 * * 0 - at least one MR was evicted; struct rv_evict_params_out is
 *   written.
 * * %ENOENT - nothing was evicted (also AMOUNT with bytes and count 0);
 *   the output is not written.
 * * %EINVAL - the file is not attached; pad, or resv1 of the member of
 *   the union that type uses, is not 0; type is none of
 *   RV_EVICT_TYPE_*; a SEARCH range is empty or wraps.
 * * %EACCES - the caller is not the attached process.
 * * %ENODEV - the job's RDMA device is gone.
 * * %EFAULT - the argument cannot be read or cannot be written;
 *   nothing is evicted.
 */
#define RV_IOCTL_EVICT _IOWR(RV_MAGIC, 0xF6, struct rv_evict_params)

/**
 * struct rv_cache_stats_params_out - RV_IOCTL_GET_CACHE_STATS
 * @cache_size: bytes now cached, live and stale MRs
 * @max_cache_size: highest @cache_size seen
 * @limit_cache_size: MB allowed: the mr_cache_size of the attach
 * @count: MRs now cached, live and stale
 * @max_count: highest @count seen
 * @inuse: cached MRs holding a reference (of REG_MEM or of a write in
 *	flight)
 * @max_inuse: highest @inuse seen
 * @resv1: 0
 * @inuse_bytes: bytes of the MRs counted in @inuse
 * @max_inuse_bytes: highest @inuse_bytes seen
 * @max_refcount: highest reference count of one MR seen
 * @resv2: 0
 * @hit: REG_MEM found a cached MR
 * @miss: REG_MEM registered and cached a new MR
 * @full: REG_MEM missed and the cache could not make room
 * @failed: REG_MEM missed and the registration failed
 * @remove: MRs removed by invalidation (stale ones on their last
 *	reference) or teardown
 * @evict: MRs evicted to make room or by RV_IOCTL_EVICT
 *
 * Counts since the attach. Valid REG_MEM calls = @hit + @miss + @full +
 * @failed, and @count = @miss - @evict - @remove.
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

/**
 * RV_IOCTL_GET_CACHE_STATS - read the statistics of the process's MR cache
 *
 * Context: only the attached process.
 *
 * Writes struct rv_cache_stats_params_out; also works after the job's
 * RDMA device is gone.
 *
 * Return:
 * * 0 - the statistics are written.
 * * %EINVAL - the file is not attached.
 * * %EACCES - the caller is not the attached process.
 * * %EFAULT - the output cannot be written.
 */
#define RV_IOCTL_GET_CACHE_STATS \
	_IOR(RV_MAGIC, 0xF7, struct rv_cache_stats_params_out)

/**
 * struct rv_conn_create_params_in - input of RV_IOCTL_CONN_CREATE
 * @ah: address of the remote node. Global (is_global 1): grh.dgid, not 0
 *	and not the job's own GID, with grh.sgid_index the attach's
 *	loc_gid_index. Not global (is_global 0, InfiniBand only): dlid, not
 *	0. port_num must be the attach's. The other members are not used;
 *	its reserved bytes are ignored: a struct ibv_ah_attr has padding
 *	there.
 * @rem_addr: remote address, compared with loc_addr when not global: the
 *	side with the smaller one listens (with equal ones both initiate, and
 *	the connection fails); used only by the call that creates the
 *	connection
 * @resv1: reserved, must be 0
 * @context: not used by the module
 */
struct rv_conn_create_params_in {
	struct ib_uverbs_ah_attr ah;
	__u32 rem_addr;
	__u32 resv1;
	__aligned_u64 context;
};

/**
 * struct rv_conn_create_params_out - output of RV_IOCTL_CONN_CREATE
 * @handle: this process's handle for the connection, never 0
 * @conn_handle: id of the shared connection, never 0, echoed in
 *	completion events
 */
struct rv_conn_create_params_out {
	__aligned_u64 handle;
	__aligned_u64 conn_handle;
};

/**
 * struct rv_conn_create_params - argument of RV_IOCTL_CONN_CREATE
 * @in: the remote node
 * @out: the handles, written over @in on success
 */
struct rv_conn_create_params {
	union {
		struct rv_conn_create_params_in in;
		struct rv_conn_create_params_out out;
	};
};

/**
 * RV_IOCTL_CONN_CREATE - get a handle on the job's connection to a node
 *
 * Context: only the attached process.
 *
 * The processes of a job-device share one connection per remote node
 * (its GID, or its LID when not global): num_conn RC QPs. The first call
 * for a node creates it, without any traffic; later calls of any process
 * of the job take a reference on it. The connection lives while a process
 * holds a handle on it; the handles of a process go when it closes the
 * file.
 *
 * Return:
 * * 0 - struct rv_conn_create_params_out is written.
 * * %EINVAL - the file is not attached; resv1 is not 0; ah.port_num is
 *   not the attach's; ah.is_global is above 1; not global on a RoCE port,
 *   or dlid 0; global with grh.sgid_index not loc_gid_index, or grh.dgid
 *   0 or the job's own GID.
 * * %EACCES - the caller is not the attached process.
 * * %EBUSY - this process already has a handle on that connection.
 * * %EDQUOT - a new connection would pass the module parameter
 *   max_conns_per_user, or its num_conn QPs max_qps_per_user, for the
 *   job's uid, and the caller lacks CAP_SYS_RESOURCE.
 * * %EAGAIN - a new connection's QPs and CQs (two rdma cgroup objects
 *   per QP, charged to the caller's rdma cgroup for the connection's
 *   life) would pass its hca_object limit.
 * * %ENODEV - the job's RDMA device is gone.
 * * %ENOMEM - out of memory.
 * * %EFAULT - the argument cannot be read, or the output cannot be
 *   written (the handle is dropped again).
 */
#define RV_IOCTL_CONN_CREATE _IOWR(RV_MAGIC, 0xF8, struct rv_conn_create_params)

/**
 * struct rv_conn_connect_params_in - input of RV_IOCTL_CONN_CONNECT
 * @handle: from RV_IOCTL_CONN_CREATE
 * @path: path to the remote node, multi-byte members in network byte
 *	order. sgid must be the attach's loc_gid; when the connection is
 *	global, dgid must be its remote GID; mtu is IB_MTU_256 (1) to
 *	IB_MTU_4096 (5). The rest goes into the primary path of the CM REQ
 *	(numb_path 0 counts as 1).
 */
struct rv_conn_connect_params_in {
	__aligned_u64 handle;
	struct ib_user_path_rec path;
};

/**
 * RV_IOCTL_CONN_CONNECT - give the connection its path and start it
 *
 * Context: only the attached process.
 *
 * The first call for a connection, by any process of the job, records the
 * path, creates the QPs and starts them without waiting: on each QP the
 * side with the smaller GID (or, when not global, the smaller of loc_addr
 * and rem_addr) waits for the peer's CM REQ, the other resolves the destination and
 * sends one, and tries again after a failed attempt or a reject that
 * allows it (20 ms, doubling up to 1 s). Each QP must connect within
 * reconnect_timeout seconds of this call (60 when it is 0); past that, or
 * on a final reject, it has failed for good. Poll
 * RV_IOCTL_CONN_CONNECTED to learn when it is up.
 *
 * A later call with a byte-identical path does nothing and returns 0,
 * whatever became of the connection; another path is %EEXIST. After an
 * error nothing is started, and the call may be repeated.
 *
 * Return:
 * * 0 - started, or already started with this path.
 * * %EINVAL - the file is not attached; handle is 0, above U32_MAX or not
 *   one of this process; path.sgid is not loc_gid; the connection is
 *   global and path.dgid is not its remote GID; path.mtu is out of range.
 * * %EACCES - the caller is not the attached process.
 * * %ENODEV - the job's RDMA device is gone (checked after handle).
 * * %EEXIST - the connection was started with another path.
 * * %ENOENT - the port's GID table no longer has loc_gid at
 *   loc_gid_index.
 * * %EFAULT - the argument cannot be read.
 * * other - an error of the RDMA core creating a QP or its CQ, e.g.
 *   %ENOMEM.
 */
#define RV_IOCTL_CONN_CONNECT \
	_IOW(RV_MAGIC, 0xF9, struct rv_conn_connect_params_in)

/**
 * struct rv_conn_connected_params_in - input of RV_IOCTL_CONN_CONNECTED
 * @handle: from RV_IOCTL_CONN_CREATE
 */
struct rv_conn_connected_params_in {
	__aligned_u64 handle;
};

/**
 * RV_IOCTL_CONN_CONNECTED - is the connection up?
 *
 * Context: only the attached process.
 *
 * Return:
 * * 1 - every QP of the connection is connected, or recovering after
 *   having connected.
 * * 0 - not yet: some QP has never connected (also before
 *   RV_IOCTL_CONN_CONNECT).
 * * %EIO - some QP has failed for good: it missed its deadline, was
 *   rejected for good, was lost with reconnect_timeout 0, or the job's
 *   RDMA device is gone.
 * * %EINVAL - the file is not attached; handle is 0, above U32_MAX or
 *   not one of this process.
 * * %EACCES - the caller is not the attached process.
 * * %EFAULT - the argument cannot be read.
 */
#define RV_IOCTL_CONN_CONNECTED \
	_IOW(RV_MAGIC, 0xFA, struct rv_conn_connected_params_in)

/**
 * struct rv_conn_get_conn_count_params_in - input of
 *	RV_IOCTL_CONN_GET_CONN_COUNT
 * @handle: from RV_IOCTL_CONN_CREATE
 * @index: a QP of the connection, below num_conn
 * @resv1: reserved, must be 0
 */
struct rv_conn_get_conn_count_params_in {
	__aligned_u64 handle;
	__u8 index;
	__u8 resv1[7];
};

/**
 * struct rv_conn_get_conn_count_params_out - output of
 *	RV_IOCTL_CONN_GET_CONN_COUNT
 * @count: how often QP index has been established: 0 before its first
 *	connection, one more after each recovery
 */
struct rv_conn_get_conn_count_params_out {
	__u32 count;
};

/**
 * struct rv_conn_get_conn_count_params - argument of
 *	RV_IOCTL_CONN_GET_CONN_COUNT
 * @in: the QP
 * @out: its count, written over @in on success
 */
struct rv_conn_get_conn_count_params {
	union {
		struct rv_conn_get_conn_count_params_in in;
		struct rv_conn_get_conn_count_params_out out;
	};
};

/**
 * RV_IOCTL_CONN_GET_CONN_COUNT - how often a QP has been (re)established
 *
 * Context: only the attached process.
 *
 * A count that changed between two reads means the QP was lost and
 * connected again meanwhile, and that the writes it held completed with an
 * error status.
 *
 * Return:
 * * 0 - struct rv_conn_get_conn_count_params_out is written.
 * * %EIO - that QP has failed for good; nothing is written.
 * * %EINVAL - the file is not attached; handle is 0, above U32_MAX or
 *   not one of this process; index is not below num_conn; resv1 is not
 *   0.
 * * %EACCES - the caller is not the attached process.
 * * %EFAULT - the argument cannot be read or the output written.
 */
#define RV_IOCTL_CONN_GET_CONN_COUNT \
	_IOWR(RV_MAGIC, 0xFF, struct rv_conn_get_conn_count_params)

/* index for the aggregate of all QPs of a connection */
#define RV_CONN_STATS_AGGREGATE 255

/**
 * struct rv_conn_get_stats_params_in - input of RV_IOCTL_CONN_GET_STATS
 * @handle: from RV_IOCTL_CONN_CREATE; 0 asks for the aggregate of all of
 *	the caller's connections
 * @index: with a handle, a QP index below num_conn or
 *	RV_CONN_STATS_AGGREGATE; ignored (but echoed) without one
 * @resv1: reserved, must be 0
 */
struct rv_conn_get_stats_params_in {
	__aligned_u64 handle;
	__u8 index;
	__u8 resv1[7];
};

/* flags; aggregates may carry several */
#define RV_CONN_STAT_FLAG_SERVER 0x01		/* listens: waits for REQs */
#define RV_CONN_STAT_FLAG_CLIENT 0x02		/* initiates: sends REQs */
#define RV_CONN_STAT_FLAG_WAS_CONNECTED 0x04	/* connected at least once */

/**
 * struct rv_conn_get_stats_params_out - RV_IOCTL_CONN_GET_STATS output
 * @index: the input index, echoed
 * @flags: RV_CONN_STAT_FLAG_*, ORed over the QPs of an aggregate
 * @resv1: 0
 * @num_conn: number of QPs counted
 * @req_error: CM REQ errors (a REQ sent got no answer)
 * @req_recv: CM REQs received
 * @rep_error: CM REP errors (a REP sent got no answer)
 * @rep_recv: CM REPs received
 * @rtu_recv: CM RTUs received
 * @established: CM user-established events: data arrived before the RTU
 * @dreq_error: CM DREQ errors (a DREQ sent got no answer)
 * @dreq_recv: CM DREQs received
 * @drep_recv: CM DREPs received
 * @timewait: CM timewait exits
 * @mra_recv: CM MRAs received
 * @rej_recv: CM REJs received
 * @lap_error: CM LAP errors
 * @lap_recv: CM LAPs received
 * @apr_recv: CM APRs received
 * @unexp_event: other CM events received
 * @req_sent: CM REQs sent
 * @rep_sent: CM REPs sent
 * @rtu_sent: CM RTUs sent
 * @rej_sent: CM REJs sent
 * @dreq_sent: CM DREQs sent
 * @drep_sent: CM DREPs sent
 * @wait_time: listener, first connection: time waiting for the REQ
 * @resolve_time: initiator, first connection: time resolving addresses
 * @connect_time: first connection: time from the REQ sent or accepted to
 *	the connection
 * @connected_time: time connected, the current connection included
 * @resolve: address resolutions before the first connection
 * @resolve_fail: those that failed or could not start
 * @conn_recovery: recoveries started by the loss of a connected QP
 * @resv2: 0
 * @rewait_time: as @wait_time, summed over the recoveries
 * @reresolve_time: as @resolve_time, summed over the recoveries
 * @reconnect_time: as @connect_time, summed over the recoveries
 * @max_rewait_time: the longest of those waits
 * @max_reresolve_time: the longest of those resolutions
 * @max_reconnect_time: the longest of those connects
 * @reresolve: address resolutions during recoveries
 * @reresolve_fail: those that failed or could not start
 * @post_write: RDMA WRITEs with immediate posted
 * @post_write_fail: posts the QP refused (it was going down)
 * @post_write_bytes: bytes of the writes posted
 * @outstand_send_write: writes posted and not completed yet
 * @recv_drop: inbound writes for no attached process (see "Immediate
 *	data"): no event is generated
 * @send_write_cqe: send completions of writes, successful
 * @send_write_cqe_fail: send completions of writes with an error status
 * @recv_write_cqe: inbound writes with immediate received
 * @recv_write_bytes: bytes of those writes
 * @recv_cqe_fail: receive completions with an error status, flushes left
 *	out
 * @post_hb: heartbeats (zero-length SENDs) posted
 * @post_hb_fail: heartbeat posts the QP refused
 * @send_hb_cqe: heartbeat send completions, successful
 * @send_hb_cqe_fail: heartbeat send completions with an error status
 * @recv_hb_cqe: heartbeats received
 *
 * Times are in microseconds. An aggregate adds up the counters and times
 * of its QPs and takes the largest of each max_* time.
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

/**
 * struct rv_conn_get_stats_params - argument of RV_IOCTL_CONN_GET_STATS
 * @in: what to count
 * @out: the statistics, written over @in on success
 */
struct rv_conn_get_stats_params {
	union {
		struct rv_conn_get_stats_params_in in;
		struct rv_conn_get_stats_params_out out;
	};
};

/**
 * RV_IOCTL_CONN_GET_STATS - read the statistics of connections
 *
 * Context: only the attached process.
 *
 * One QP of a connection, all QPs of a connection, or all QPs of all of
 * the caller's connections; they count since each connection was created,
 * for every process of the job. Also works after the job's RDMA device is
 * gone.
 *
 * Return:
 * * 0 - struct rv_conn_get_stats_params_out is written.
 * * %EINVAL - the file is not attached; resv1 is not 0; handle is not 0
 *   and not one of this process (or above U32_MAX); index is neither
 *   below num_conn nor RV_CONN_STATS_AGGREGATE.
 * * %EACCES - the caller is not the attached process.
 * * %EFAULT - the argument cannot be read or the output written.
 */
#define RV_IOCTL_CONN_GET_STATS \
	_IOWR(RV_MAGIC, 0xFD, struct rv_conn_get_stats_params)

/**
 * struct rv_event_stats_params_out - output of RV_IOCTL_GET_EVENT_STATS
 * @send_write_cqe: RV_WC_RDMA_WRITE events, successful
 * @send_write_cqe_fail: RV_WC_RDMA_WRITE events with an error status
 * @send_write_bytes: bytes of the successful ones
 * @recv_write_cqe: RV_WC_RECV_RDMA_WITH_IMM events, successful
 * @recv_write_cqe_fail: RV_WC_RECV_RDMA_WITH_IMM events with an error
 *	status
 * @recv_write_bytes: bytes of the successful ones
 *
 * The events of this process since the attach, counted whether or not
 * they found room in the event ring, and also without a ring.
 */
struct rv_event_stats_params_out {
	__aligned_u64 send_write_cqe;
	__aligned_u64 send_write_cqe_fail;
	__aligned_u64 send_write_bytes;

	__aligned_u64 recv_write_cqe;
	__aligned_u64 recv_write_cqe_fail;
	__aligned_u64 recv_write_bytes;
};

/**
 * RV_IOCTL_GET_EVENT_STATS - read the process's completion counts
 *
 * Context: only the attached process.
 *
 * Writes struct rv_event_stats_params_out; also works after the job's
 * RDMA device is gone.
 *
 * Return:
 * * 0 - the counts are written.
 * * %EINVAL - the file is not attached.
 * * %EACCES - the caller is not the attached process.
 * * %EFAULT - the output cannot be written.
 */
#define RV_IOCTL_GET_EVENT_STATS \
	_IOR(RV_MAGIC, 0xFE, struct rv_event_stats_params_out)

/**
 * struct rv_post_write_params_in - input of RV_IOCTL_POST_RDMA_WR_IMMED
 * @handle: connection handle from RV_IOCTL_CONN_CREATE
 * @loc_addr: start of the local data, which must lie within
 *	[loc_mr_addr, loc_mr_addr + loc_mr_length)
 * @loc_mr_handle: cached MR holding [loc_addr, loc_addr + length)
 * @loc_mr_addr: addr the MR was registered with
 * @loc_mr_length: length the MR was registered with
 * @loc_mr_access: access the MR was registered with (RV_ACCESS_KERNEL
 *	included)
 * @rkey: remote key
 * @rem_addr: remote address
 * @length: bytes to write, 1 to U32_MAX
 * @wr_id: echoed in the send completion event
 * @immed: immediate data, in host order; its top index_bits select the
 *	remote process (see "Immediate data")
 * @resv1: reserved, must be 0
 *
 * The MR is named as RV_IOCTL_REG_MEM was given it, but any range inside
 * the cached MR, with its exact access, is accepted.
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

/**
 * struct rv_post_write_params_out - output of RV_IOCTL_POST_RDMA_WR_IMMED
 * @sconn_index: which QP of the connection was used; after a failure, the
 *	first one tried
 * @resv1: 0
 * @conn_count: that QP's connection count (see
 *	RV_IOCTL_CONN_GET_CONN_COUNT) at the post
 */
struct rv_post_write_params_out {
	__u8 sconn_index;
	__u8 resv1[3];
	__u32 conn_count;
};

/**
 * struct rv_post_write_params - argument of RV_IOCTL_POST_RDMA_WR_IMMED
 * @in: the write
 * @out: where it went, written over @in also when the post fails
 *	(unless the argument was rejected as %EINVAL or %EMSGSIZE, or the
 *	device is gone)
 */
struct rv_post_write_params {
	union {
		struct rv_post_write_params_in in;
		struct rv_post_write_params_out out;
	};
};

/**
 * RV_IOCTL_POST_RDMA_WR_IMMED - post an RDMA WRITE with immediate
 *
 * Context: only the attached process.
 *
 * Posts the write on one QP of the connection, taken round robin, that is
 * connected and has a free send slot (a QP has q_depth / num_conn of
 * them, rounded up). The local MR keeps a reference until the write
 * completes. Each successful post yields exactly one RV_WC_RDMA_WRITE
 * event in this process's event ring, with an error status if the write
 * failed or was flushed by the recovery or teardown of its QP.
 *
 * Return:
 * * 0 - posted; struct rv_post_write_params_out is written.
 * * %EBUSY - a QP is connected but none has a free slot: slots come back
 *   with completions.
 * * %EAGAIN - no QP is connected and some are not failed: not connected
 *   yet (also before RV_IOCTL_CONN_CONNECT) or recovering, or the post
 *   failed because the QP is going down.
 * * %EIO - every QP has failed for good, or the job's RDMA device is
 *   gone.
 * * %EINVAL - the file is not attached; resv1 is not 0; handle is 0,
 *   above U32_MAX or not one of this process; length is 0 or above
 *   U32_MAX; loc_mr_handle is above U32_MAX; loc_mr_access lacks
 *   RV_ACCESS_KERNEL; a range wraps, or the data is not inside
 *   [loc_mr_addr, loc_mr_addr + loc_mr_length); no live cached MR of
 *   this process has loc_mr_handle and contains that range with exactly
 *   loc_mr_access, or the MR holds no reference of RV_IOCTL_REG_MEM
 *   (a stale MR serves until its last RV_IOCTL_DEREG_MEM: see "MR
 *   lifetime" at RV_IOCTL_REG_MEM).
 * * %EMSGSIZE - length is above the port's largest message (its
 *   max_msg_sz).
 * * %EACCES - the caller is not the attached process.
 * * %EFAULT - the argument cannot be read or cannot be written;
 *   nothing is posted.
 */
#define RV_IOCTL_POST_RDMA_WR_IMMED \
	_IOWR(RV_MAGIC, 0xFB, struct rv_post_write_params)

/**
 * DOC: Immediate data
 *
 * The 32-bit immediate of a write (immed of RV_IOCTL_POST_RDMA_WR_IMMED,
 * host order) reaches the remote node. There its top index_bits bits, of
 * the receiving job, select the process: its rv_index is
 * immed >> (32 - index_bits), or 0 when index_bits is 0. That process gets
 * an RV_WC_RECV_RDMA_WITH_IMM event whose imm_data is the whole
 * immediate; the low 32 - index_bits bits are the client's own. A write
 * for an rv_index that no process of the job holds is counted in
 * recv_drop of RV_IOCTL_CONN_GET_STATS and produces no event; its sender
 * still gets a successful RV_WC_RDMA_WRITE event.
 */

/**
 * RV_WC_RDMA_WRITE - event type: send completion of a posted write
 *
 * One per successful RV_IOCTL_POST_RDMA_WR_IMMED, in the poster's ring:
 * status, wr_id, conn_handle and byte_len (the length posted) are set.
 */
#define RV_WC_RDMA_WRITE 0

/**
 * RV_WC_RECV_RDMA_WITH_IMM - event type: an inbound write with immediate
 *
 * In the ring of the process the immediate selects (see "Immediate
 * data"): status IB_WC_SUCCESS, imm_data, conn_handle and byte_len (bytes
 * written). In a job with reconnect_timeout 0, a failed receive also
 * yields one, with an error status, the conn_handle, imm_data 0 and
 * byte_len 0, once per QP in the ring of every process of the job on this
 * node.
 */
#define RV_WC_RECV_RDMA_WITH_IMM 1

/**
 * struct rv_event_wc - completion carried by an event
 * @resv0: overlays rv_event.event_type
 * @status: enum ib_wc_status: IB_WC_SUCCESS (0) or an error, e.g.
 *	IB_WC_WR_FLUSH_ERR for a write flushed by the recovery or teardown
 *	of its QP
 * @resv1: 0
 * @imm_data: immediate data in host order (receive only, else 0)
 * @wr_id: wr_id of the post (send only, else 0)
 * @conn_handle: the connection's conn_handle
 * @byte_len: bytes written; for a send, the length posted, also when it
 *	failed
 * @resv2: 0
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
 * @resv: sizes the entry to one cache line; the module does not write
 *	bytes 32 to 63
 *
 * Offsets: event_type 0, wc.status 1, wc.imm_data 4, wc.wr_id 8,
 * wc.conn_handle 16, wc.byte_len 24.
 */
struct rv_event {
	union {
		__u8 event_type;
		struct rv_event_wc wc;
		__aligned_u64 resv[8];
	};
};

#ifndef RV_UPSTREAM
/*
 * Bytes of an event ring entry for a file of ABI 1.6 and older. Its
 * members: event_type 0, status 1, imm_data 4, wr_id 9, conn_handle 17,
 * byte_len 25, all unaligned; the other bytes are 0.
 */
#define RV_EVENT_LEGACY_SIZE 65
#endif

/**
 * DOC: The event ring
 *
 * After an RV_IOCTL_ATTACH with cq_entries > 0 the attached process maps
 * the file's event ring once::
 *
 *	mmap(NULL, RV_RING_ALLOC_LEN(cq_entries), PROT_READ | PROT_WRITE,
 *	     MAP_SHARED, fd, 0)
 *
 * The offset must be 0 and the length must round up to the ring's number of
 * pages. The ring starts zeroed: head = tail = 0. The mapping is not
 * inherited by fork() (the child gets no mapping there), cannot be grown
 * with mremap() and is left out of core dumps. Only one mmap() of a file
 * succeeds, even after munmap(): the ring cannot be mapped again.
 *
 * mmap() fails with %EINVAL when the file is not attached, has no ring,
 * the offset is not 0, the length has another number of pages, the
 * mapping is not MAP_SHARED or the ring was mapped before; with %EACCES
 * when the caller is not the attached process; %ENOMEM (or another error
 * of mapping the pages) may be retried.
 *
 * The module is the only producer: it writes entries, tail and
 * overflow_cnt; the process is the only consumer and writes head. See
 * struct rv_ring_header for the protocol.
 */

/**
 * struct rv_ring_header - start of the mmap'd event ring
 * @head: next entry the consumer reads; written only by the consumer
 * @tail: next entry the producer writes; written only by the module
 * @overflow_cnt: events dropped because the ring was full; written only
 *	by the module, from its own count
 * @resv: pads the header to 64 bytes; 0, unused
 * @entries: cq_entries events
 *
 * The ring holds cq_entries - 1 events: it is empty when head == tail and
 * full when the entry after tail is head. The module writes an entry
 * completely before it publishes the new tail with release ordering, so a
 * consumer must read tail, then (acquire barrier) the entries before it,
 * then (release barrier) store the new head. The module reads head only
 * to bound its writes; a bad head loses the caller's own events, nothing
 * more: one of cq_entries or more makes the module write on, over unread
 * entries.
 */
struct rv_ring_header {
	__u32 head;
	__u32 tail;
	__aligned_u64 overflow_cnt;
	__aligned_u64 resv[6];
	struct rv_event entries[];
};

/**
 * RV_RING_ALLOC_LEN() - mmap length of an event ring (ABI 1.7 layout)
 * @n: entries: cq_entries of the attach
 *
 * Return: bytes to map, at offset 0, for a file of ABI 1.7 and newer.
 */
#define RV_RING_ALLOC_LEN(n) \
	((__u32)((n) * sizeof(struct rv_event) + sizeof(struct rv_ring_header)))

#ifndef RV_UPSTREAM
/**
 * RV_RING_LEGACY_ALLOC_LEN() - mmap length of an event ring (legacy)
 * @n: entries: cq_entries of the attach
 *
 * Return: bytes to map, at offset 0, for a file of ABI 1.6 and older,
 * whose entries are RV_EVENT_LEGACY_SIZE bytes.
 */
#define RV_RING_LEGACY_ALLOC_LEN(n) \
	((__u32)((n) * RV_EVENT_LEGACY_SIZE + sizeof(struct rv_ring_header)))
#endif

#endif /* _UAPI_RDMA_RV_USER_IOCTLS_H */
