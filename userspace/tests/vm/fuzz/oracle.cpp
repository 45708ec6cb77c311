// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "oracle.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

#include <linux/mman.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rv/uapi.hpp>

namespace rvfuzz {

ErrnoSet errnos(std::initializer_list<int> list)
{
	ErrnoSet s;

	for (int e : list)
		if (e > 0 && e < max_errno)
			s.set(static_cast<std::size_t>(e));
	return s;
}

std::string errno_name(int err)
{
	if (const char *n = ::strerrorname_np(err))
		return n;
	return "E" + std::to_string(err);
}

std::string to_string(const ErrnoSet &set)
{
	std::string s = "{";

	for (int e = 1; e < max_errno; e++) {
		if (!set.test(static_cast<std::size_t>(e)))
			continue;
		if (s.size() > 1)
			s += ',';
		s += errno_name(e);
	}
	return s + "}";
}

namespace {

constexpr std::uint32_t access_ok_bits = IBV_ACCESS_KERNEL | 1 | 2 | 4;
constexpr std::uint32_t local_write = 1;
constexpr std::uint32_t remote_write = 2;

struct CmdForm {
	unsigned int cmd;
	Op op;
};

constexpr std::array cmd_forms{
	CmdForm{RV_IOCTL_CAPABILITY, Op::capability},
	CmdForm{RV_IOCTL_QUERY_R2, Op::query_r2},
	CmdForm{RV_IOCTL_ATTACH, Op::attach},
	CmdForm{RV_IOCTL_ATTACH_R5, Op::attach_r5},
	CmdForm{RV_IOCTL_REG_MEM, Op::reg_mem},
	CmdForm{RV_IOCTL_REG_MEM_R4, Op::reg_mem_r4},
	CmdForm{RV_IOCTL_REG_MEM_R1, Op::reg_mem_r1},
	CmdForm{RV_IOCTL_DEREG_MEM, Op::dereg_mem},
	CmdForm{RV_IOCTL_EVICT, Op::evict},
	CmdForm{RV_IOCTL_GET_CACHE_STATS, Op::cache_stats},
	CmdForm{RV_IOCTL_GET_EVENT_STATS, Op::event_stats},
	CmdForm{RV_IOCTL_CONN_CREATE, Op::conn_create},
	CmdForm{RV_IOCTL_CONN_CONNECT, Op::conn_connect},
	CmdForm{RV_IOCTL_CONN_CONNECTED, Op::conn_connected},
	CmdForm{RV_IOCTL_CONN_GET_CONN_COUNT, Op::conn_count},
	CmdForm{RV_IOCTL_CONN_GET_STATS, Op::conn_stats},
	CmdForm{RV_IOCTL_POST_RDMA_WR_IMMED, Op::post_write},
};

// rv_ioctl(): the numbers with a table entry. 0xF2 and 0xF5 are inside
// the table's range but have no entry: ENOTTY like any other number.
bool nr_defined(unsigned int nr) noexcept
{
	return std::any_of(cmd_forms.begin(), cmd_forms.end(),
			   [nr](const CmdForm &f) { return _IOC_NR(f.cmd) == nr; });
}

// Reads a struct the way copy_from_user(&p, uarg, n) into a zeroed p
// sees it: the first n bytes of the argument, the rest zero.
template <typename T>
T read_arg(std::span<const std::byte> bytes, std::size_t n = sizeof(T))
{
	T v{};

	std::memcpy(&v, bytes.data(), std::min({n, sizeof(T), bytes.size()}));
	return v;
}

bool all_zero(const void *p, std::size_t n)
{
	const auto *b = static_cast<const unsigned char *>(p);

	return std::all_of(b, b + n, [](unsigned char c) { return c == 0; });
}

// The caller's range [addr, addr + len): empty or wrapping (the MR
// cache's rv_mr_bad_range()).
bool bad_range(std::uint64_t addr, std::uint64_t len)
{
	return !len || addr + len - 1 < addr;
}

bool in_user_space(std::uint64_t addr, std::uint64_t len)
{
	return len && len <= user_space_end && addr <= user_space_end - len;
}

// A result that can only be a failure with one of errs (plus EBADF,
// which a racing close can always cause).
Expect fails_with(std::initializer_list<int> errs, const char *why)
{
	Expect e;

	e.allowed = errnos(errs) | errnos({EBADF});
	e.success_ok = false;
	e.why = why;
	return e;
}

Expect may_succeed(std::initializer_list<int> errs)
{
	Expect e;

	e.allowed = errnos(errs) | errnos({EBADF});
	return e;
}

// rv_ioctl(): an ioctl that needs the caller's attach may fail as an
// unattached file (EINVAL) or as another process's attach (EACCES).
Expect attached(Expect e)
{
	e.allowed |= errnos({EINVAL, EACCES});
	return e;
}

// Succeeds only if the output can be written back.
Expect unless_unwritable(Expect e, ArgAccess acc)
{
	if (!acc.writable) {
		e.allowed |= errnos({EFAULT});
		if (e.success_ok) {
			e.success_ok = false;
			e.why = "the argument is not writable";
		}
	}
	return e;
}

// --- CAPABILITY, QUERY_R2 (rv_file.c: rv_ioctl_capability) ----------------

Expect expect_capability(std::span<const std::byte> bytes, ArgAccess acc)
{
	if (!acc.readable)
		return fails_with({EFAULT}, "the argument is not readable");
	auto p = read_arg<rv_capability_params>(bytes);
	if (p.resv1 || !all_zero(p.resv2, sizeof(p.resv2)) || !p.major_rev)
		return fails_with({EINVAL}, "reserved field set or major_rev 0");
	return unless_unwritable(may_succeed({}), acc);
}

Expect expect_query_r2(ArgAccess acc)
{
	return unless_unwritable(may_succeed({}), acc);
}

// --- ATTACH (rv_user.c: rv_ioctl_attach, rv_attach_parse) ------------------

// rv_attach_parse(): 0 or the errno of the first check that fails.
int attach_parse_errno(const rv_attach_params_in &in, bool r5)
{
	const std::uint8_t mode = in.rdma_mode & RV_RDMA_MODE_MASK;

	if (in.resv1 || in.resv2 || !all_zero(in.resv3, sizeof(in.resv3)) ||
	    (!r5 && in.resv4))
		return EINVAL;
	if (in.rdma_mode & ~(RV_RDMA_MODE_MASK | RV_RDMA_MODE_UPSIZE_CPU))
		return EINVAL;
	if (mode == RV_RDMA_MODE_USER)
		return EOPNOTSUPP;
	if (mode > RV_RDMA_MODE_MAX)
		return EINVAL;
	if (!in.dev_name[0] || !std::memchr(in.dev_name, 0, sizeof(in.dev_name)))
		return EINVAL;
	if (in.num_conn > RV_MAX_NUM_CONN || in.index_bits > RV_MAX_INDEX_BITS ||
	    in.job_key_len > RV_MAX_JOB_KEY_LEN ||
	    in.cq_entries > RV_MAX_CQ_ENTRIES || in.cq_entries == 1 ||
	    (in.q_depth && (in.q_depth < 16 || in.q_depth > 65536)) ||
	    in.mr_cache_size > 1048576)
		return EINVAL;
	if (in.reconnect_timeout && in.hb_interval &&
	    static_cast<std::uint64_t>(in.reconnect_timeout) * 1000 <= in.hb_interval)
		return EINVAL;
	return 0;
}

Expect expect_attach(const OracleEnv &env, unsigned int cmd,
		     std::span<const std::byte> bytes, ArgAccess acc)
{
	const bool r5 = cmd == RV_IOCTL_ATTACH_R5;

	// copy_from_user() comes first, before the already-attached check.
	if (!acc.readable)
		return fails_with({EFAULT}, "the argument is not readable");
	auto in = read_arg<rv_attach_params_in>(bytes, _IOC_SIZE(cmd));
	// EBUSY: the file is attached already (any time after the copy).
	if (int err = attach_parse_errno(in, r5))
		return fails_with({EBUSY, err}, "rv_attach_parse() refuses it");
	// rv_service_id_check(): the RDMA CM's service ids are nobody's
	// (the fuzzer runs as root, which may use any other).
	if (in.service_id >= 0x0000000001000000ULL &&
	    in.service_id <= 0x0000000001ffffffULL)
		return fails_with({EBUSY, EADDRNOTAVAIL},
				  "a service id of the RDMA CM's port spaces");
	// A page list of one page holds no range at any offset: EINVAL,
	// unless a check of the device or port comes first.
	if (!r5 && in.fr_page_list_len == 1)
		return fails_with({EBUSY, EINVAL, ENODEV, ENETDOWN, ENOENT},
				  "fr_page_list_len 1");

	const std::string_view name(in.dev_name);
	auto dev = std::find(env.devices.begin(), env.devices.end(), name);
	if (dev == env.devices.end())
		return fails_with({EBUSY, ENODEV}, "no such RDMA device");
	const unsigned ports = env.ports[static_cast<std::size_t>(
		dev - env.devices.begin())];
	if (!in.port_num || in.port_num > ports)
		return fails_with({EBUSY, EINVAL}, "no such port");

	// rv_attach_check_port(): ENETDOWN, ENOENT (GID); rv_job_get():
	// EBUSY (parameters differ from the job's), ENOMEM, and what
	// ib_alloc_pd() and ib_cm_insert_listen() return (EINVAL for a
	// full PD pool of rxe, a service id the CM refuses, or a listener
	// of another handler on it); xa_alloc(): ENOSPC (no rv_index
	// left), ENOMEM; rv_ring_init(): ENOMEM.
	return unless_unwritable(
		may_succeed({EBUSY, EINVAL, ENETDOWN, ENOENT, ENOMEM, ENOSPC,
			     ENODEV}), acc);
}

// --- REG_MEM, DEREG_MEM, EVICT, GET_CACHE_STATS (rv_mr.c) ------------------

Expect expect_reg_mem(unsigned int cmd, std::span<const std::byte> bytes,
		      ArgAccess acc)
{
	// rv_job_dead() first: ENODEV once the device is gone.
	if (!acc.readable)
		return attached(fails_with({ENODEV, EFAULT},
					   "the argument is not readable"));
	auto in = read_arg<rv_mem_params_in>(bytes, _IOC_SIZE(cmd));
	if (in.resv1 || in.resv2[0] || in.resv2[1])
		return attached(fails_with({ENODEV, EINVAL}, "reserved field set"));
	// rv_mr_check_range()
	if (!(in.access & IBV_ACCESS_KERNEL))
		return attached(fails_with({ENODEV, EOPNOTSUPP},
					   "no IBV_ACCESS_KERNEL"));
	if (in.access & ~access_ok_bits)
		return attached(fails_with({ENODEV, EINVAL}, "unknown access bits"));
	if ((in.access & remote_write) && !(in.access & local_write))
		return attached(fails_with({ENODEV, EINVAL},
					   "remote write without local write"));
	if (!in.length || in.addr + in.length < in.addr)
		return attached(fails_with({ENODEV, EINVAL}, "empty or wrapping range"));

	// E2BIG: longer than max_fmr_size; ENOMEM: the cache is full of
	// referenced MRs, or an allocation failed; EAGAIN: invalidated
	// while being registered; from ib_umem_get() (pinning): EFAULT (not
	// mapped, or not writable with local write), ENOMEM (memlock limit),
	// EPERM (no memlock allowance at all); from ib_alloc_mr(): EINVAL (a
	// full MR pool of rxe).
	Expect e = attached(may_succeed({ENODEV, EINVAL, E2BIG, ENOMEM, EAGAIN,
					 EFAULT, EPERM}));
	if (!in_user_space(in.addr, in.length)) {
		e.success_ok = false;
		e.why = "the range is not in user space";
	} else if (in.length > (1ULL << 40)) {
		// max_fmr_size <= mr_cache_size <= 1048576 MB
		e.success_ok = false;
		e.why = "longer than any max_fmr_size";
	}
	return unless_unwritable(e, acc);
}

Expect expect_dereg_mem(std::span<const std::byte> bytes, ArgAccess acc)
{
	if (!acc.readable)
		return attached(fails_with({ENODEV, EFAULT},
					   "the argument is not readable"));
	auto in = read_arg<rv_dereg_params_in>(bytes);
	if (in.mr_handle > UINT32_MAX)
		return attached(fails_with({ENODEV, EINVAL}, "mr_handle > U32_MAX"));
	Expect e = attached(may_succeed({ENODEV, EINVAL}));
	// rv_mr_cache_dereg(): a handle, a range inside the entry and
	// exactly its access (entries always have IBV_ACCESS_KERNEL).
	if (!in.mr_handle || bad_range(in.addr, in.length) ||
	    !(in.access & IBV_ACCESS_KERNEL) || (in.access & ~access_ok_bits) ||
	    !in_user_space(in.addr, in.length)) {
		e.success_ok = false;
		e.why = "no cached MR can match";
	}
	return e;
}

Expect expect_evict(std::span<const std::byte> bytes, ArgAccess acc)
{
	if (!acc.readable)
		return attached(fails_with({ENODEV, EFAULT},
					   "the argument is not readable"));
	auto in = read_arg<rv_evict_params_in>(bytes);
	if (!all_zero(in.pad, sizeof(in.pad)))
		return attached(fails_with({ENODEV, EINVAL}, "pad set"));

	// ENOENT: nothing evictable matched.
	Expect e = attached(may_succeed({ENODEV, ENOENT}));
	switch (in.type) {
	case RV_EVICT_TYPE_SEARCH_EXACT:
	case RV_EVICT_TYPE_SEARCH_RANGE:
		if (in.search.resv1)
			return attached(fails_with({ENODEV, EINVAL}, "resv1 set"));
		if (bad_range(in.search.addr, in.search.length))
			return attached(fails_with({ENODEV, EINVAL},
						   "empty or wrapping range"));
		if (in.type == RV_EVICT_TYPE_SEARCH_EXACT &&
		    (!(in.search.access & IBV_ACCESS_KERNEL) ||
		     !in_user_space(in.search.addr, in.search.length))) {
			e.success_ok = false;
			e.why = "no cached MR can match exactly";
		}
		if (in.search.addr >= user_space_end) {
			e.success_ok = false;
			e.why = "the range is not in user space";
		}
		break;
	case RV_EVICT_TYPE_AMOUNT:
		if (in.amount.resv1)
			return attached(fails_with({ENODEV, EINVAL}, "resv1 set"));
		if (!in.amount.bytes && !in.amount.count) {
			e.success_ok = false;
			e.why = "asks to evict nothing";
		}
		break;
	default:
		return attached(fails_with({ENODEV, EINVAL}, "unknown type"));
	}
	return unless_unwritable(e, acc);
}

Expect expect_stats(ArgAccess acc)
{
	// rv_ioctl_get_cache_stats(), rv_ioctl_get_event_stats(): only
	// copy_to_user() can fail.
	return unless_unwritable(attached(may_succeed({})), acc);
}

// --- connections (rv_conn.c, rv_qp.c) ------------------------------------

Expect expect_conn_create(const OracleEnv &env, std::span<const std::byte> bytes,
			  ArgAccess acc)
{
	if (!acc.readable)
		return attached(fails_with({ENODEV, EFAULT},
					   "the argument is not readable"));
	auto in = read_arg<rv_conn_create_params_in>(bytes);
	const unsigned max_port = env.ports.empty() ? 0 :
		*std::max_element(env.ports.begin(), env.ports.end());
	// rv_conn_check_ah()
	if (in.resv1)
		return attached(fails_with({ENODEV, EINVAL}, "resv1 set"));
	if (!in.ah.port_num || in.ah.port_num > max_port || in.ah.is_global > 1)
		return attached(fails_with({ENODEV, EINVAL},
					   "port not the attach's, or is_global > 1"));
	if (!in.ah.is_global && env.all_roce)
		return attached(fails_with({ENODEV, EINVAL}, "RoCE needs a GRH"));
	if (in.ah.is_global && all_zero(in.ah.grh.dgid, sizeof(in.ah.grh.dgid)))
		return attached(fails_with({ENODEV, EINVAL}, "dgid zero"));
	// EINVAL: sgid_index or port not the attach's, dgid the local
	// GID; EBUSY: this process has a handle on it already; ENOMEM.
	return unless_unwritable(
		attached(may_succeed({ENODEV, EINVAL, EBUSY, ENOMEM})), acc);
}

bool bad_handle(std::uint64_t h)
{
	return !h || h > UINT32_MAX;
}

Expect expect_conn_connect(std::span<const std::byte> bytes, ArgAccess acc)
{
	// copy_from_user(), then the handle, then rv_job_dead().
	if (!acc.readable)
		return attached(fails_with({EFAULT}, "the argument is not readable"));
	auto in = read_arg<rv_conn_connect_params_in>(bytes);
	if (bad_handle(in.handle))
		return attached(fails_with({EINVAL}, "handle 0 or > U32_MAX"));
	if (in.path.mtu < 1 || in.path.mtu > 5)
		return attached(fails_with({ENODEV, EINVAL}, "mtu out of range"));
	// EINVAL: no such handle, sgid not the attach GID, dgid not the
	// connection's; EEXIST: another path was given first; ENOENT: the
	// GID went from the table; ENOMEM, EINVAL: creating the QPs.
	return attached(may_succeed({ENODEV, EINVAL, EEXIST, ENOENT, ENOMEM}));
}

Expect expect_conn_connected(std::span<const std::byte> bytes, ArgAccess acc)
{
	if (!acc.readable)
		return attached(fails_with({EFAULT}, "the argument is not readable"));
	auto in = read_arg<rv_conn_connected_params_in>(bytes);
	if (bad_handle(in.handle))
		return attached(fails_with({EINVAL}, "handle 0 or > U32_MAX"));
	// EIO: failed for good. Success returns 0 (not yet) or 1.
	Expect e = attached(may_succeed({EINVAL, EIO}));
	e.max_ret = 1;
	return e;
}

Expect expect_conn_count(std::span<const std::byte> bytes, ArgAccess acc)
{
	if (!acc.readable)
		return attached(fails_with({EFAULT}, "the argument is not readable"));
	auto in = read_arg<rv_conn_get_conn_count_params_in>(bytes);
	if (bad_handle(in.handle) || in.index >= RV_MAX_NUM_CONN ||
	    !all_zero(in.resv1, sizeof(in.resv1)))
		return attached(fails_with({EINVAL},
					   "bad handle, index or resv1"));
	return unless_unwritable(attached(may_succeed({EINVAL, EIO})), acc);
}

Expect expect_conn_stats(std::span<const std::byte> bytes, ArgAccess acc)
{
	if (!acc.readable)
		return attached(fails_with({EFAULT}, "the argument is not readable"));
	auto in = read_arg<rv_conn_get_stats_params_in>(bytes);
	if (!all_zero(in.resv1, sizeof(in.resv1)))
		return attached(fails_with({EINVAL}, "resv1 set"));
	if (!in.handle)		// the aggregate of all connections
		return unless_unwritable(attached(may_succeed({})), acc);
	if (in.handle > UINT32_MAX ||
	    (in.index >= RV_MAX_NUM_CONN && in.index != RV_CONN_STATS_AGGREGATE))
		return attached(fails_with({EINVAL}, "bad handle or index"));
	return unless_unwritable(attached(may_succeed({EINVAL})), acc);
}

Expect expect_post_write(std::span<const std::byte> bytes, ArgAccess acc)
{
	// rv_job_dead() first: EIO.
	if (!acc.readable)
		return attached(fails_with({EIO, EFAULT},
					   "the argument is not readable"));
	auto in = read_arg<rv_post_write_params_in>(bytes);
	if (in.resv1 || bad_handle(in.handle) || !in.length ||
	    in.length > UINT32_MAX || in.loc_mr_handle > UINT32_MAX ||
	    !(in.loc_mr_access & IBV_ACCESS_KERNEL) ||
	    in.loc_addr < in.loc_mr_addr ||
	    in.loc_addr + in.length < in.loc_addr ||
	    in.loc_mr_addr + in.loc_mr_length < in.loc_mr_addr ||
	    in.loc_addr + in.length > in.loc_mr_addr + in.loc_mr_length)
		return attached(fails_with({EIO, EINVAL},
					   "rv_ioctl_post_write() refuses it"));
	// EINVAL: no such connection or MR (or stale); EMSGSIZE: longer
	// than the port's max_msg_sz (checked once the connection is
	// found); EBUSY: no send credit; EAGAIN: not connected yet or
	// recovering; EIO: failed for good; EFAULT: the argument cannot be
	// written (checked before anything is posted).
	Expect e = attached(may_succeed({EIO, EINVAL, EMSGSIZE, EBUSY, EAGAIN}));
	if (!in_user_space(in.loc_mr_addr, in.loc_mr_length) ||
	    bad_handle(in.loc_mr_handle)) {
		e.success_ok = false;
		e.why = "no cached MR can match";
	}
	return unless_unwritable(e, acc);
}

} // namespace

std::optional<Op> op_of_cmd(unsigned int cmd) noexcept
{
	for (const auto &f : cmd_forms)
		if (f.cmd == cmd)
			return f.op;
	return std::nullopt;
}

unsigned int cmd_of_op(Op op) noexcept
{
	for (const auto &f : cmd_forms)
		if (f.op == op)
			return f.cmd;
	return 0;
}

Expect expect_ioctl(const OracleEnv &env, unsigned int cmd,
		    std::span<const std::byte> bytes, ArgAccess acc)
{
	// rv_ioctl(): the type and the number first, then the form.
	if (_IOC_TYPE(cmd) != RV_MAGIC || !nr_defined(_IOC_NR(cmd)))
		return fails_with({ENOTTY}, "not an rv ioctl number");
	auto op = op_of_cmd(cmd);
	if (!op)
		return fails_with({EINVAL}, "not a form the ABI defines");

	switch (*op) {
	case Op::capability:
		return expect_capability(bytes, acc);
	case Op::query_r2:
		return expect_query_r2(acc);
	case Op::attach:
	case Op::attach_r5:
		return expect_attach(env, cmd, bytes, acc);
	case Op::reg_mem:
	case Op::reg_mem_r4:
	case Op::reg_mem_r1:
		return expect_reg_mem(cmd, bytes, acc);
	case Op::dereg_mem:
		return expect_dereg_mem(bytes, acc);
	case Op::evict:
		return expect_evict(bytes, acc);
	case Op::cache_stats:
	case Op::event_stats:
		return expect_stats(acc);
	case Op::conn_create:
		return expect_conn_create(env, bytes, acc);
	case Op::conn_connect:
		return expect_conn_connect(bytes, acc);
	case Op::conn_connected:
		return expect_conn_connected(bytes, acc);
	case Op::conn_count:
		return expect_conn_count(bytes, acc);
	case Op::conn_stats:
		return expect_conn_stats(bytes, acc);
	case Op::post_write:
		return expect_post_write(bytes, acc);
	default:
		return fails_with({EINVAL}, "not an ioctl op");
	}
}

Expect expect_bad_fd()
{
	return fails_with({EBADF}, "the fd is not open");
}

Expect expect_open()
{
	return may_succeed({ENOMEM, EMFILE, ENFILE});
}

Expect expect_close(bool fd_valid)
{
	if (!fd_valid)
		return expect_bad_fd();
	// The slot owned the descriptor: nobody else closes it.
	Expect e;
	return e;
}

Expect expect_dup()
{
	return may_succeed({EMFILE});
}

std::uint64_t max_ring_len() noexcept
{
	const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
	const std::uint64_t n = sizeof(rv_ring_header) +
		std::uint64_t{RV_MAX_CQ_ENTRIES} * RV_EVENT_LEGACY_SIZE;

	return (n + page - 1) / page * page;
}

Expect expect_mmap(const MmapArgs &a)
{
	// The mmap path (arch sys_mmap, ksys_mmap_pgoff, do_mmap,
	// mmap_region) and rv_mmap()/rv_ring_mmap(): EINVAL (offset not
	// page aligned, length 0, bad MAP_TYPE, MAP_HUGETLB or
	// MAP_GROWSDOWN on a file, MAP_FIXED not aligned; rv: not attached,
	// no ring, offset not 0, not exactly the ring's pages, not shared,
	// mapped already), EBADF, EACCES (fd not readable, PROT_WRITE
	// shared without write access; rv: another process's attach),
	// ENOMEM (no room, PAGE_ALIGN overflow), EOVERFLOW (offset +
	// length), EPERM (PROT_EXEC on a noexec mount, MAP_LOCKED without
	// allowance), EAGAIN (mlock limit), EOPNOTSUPP (MAP_SHARED_VALIDATE
	// with flags the file does not support), EEXIST
	// (MAP_FIXED_NOREPLACE over a mapping).
	Expect e = may_succeed({EINVAL, EACCES, ENOMEM, EOVERFLOW, EPERM,
				EAGAIN, EOPNOTSUPP, EEXIST});
	constexpr std::uint64_t legacy = MAP_SHARED | MAP_PRIVATE | MAP_FIXED |
		MAP_ANONYMOUS | MAP_DENYWRITE | MAP_EXECUTABLE | 0x4000000 |
		MAP_GROWSDOWN | MAP_LOCKED | MAP_NORESERVE | MAP_POPULATE |
		MAP_NONBLOCK | MAP_STACK | MAP_HUGETLB | MAP_32BIT |
		MAP_HUGE_2MB | MAP_HUGE_1GB;
	const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
	const std::uint64_t flags = static_cast<std::uint32_t>(a.flags);
	const std::uint64_t type = flags & MAP_TYPE;

	auto cannot = [&e](const char *why) {
		if (e.success_ok) {
			e.success_ok = false;
			e.why = why;
		}
	};
	if (a.off)
		cannot("rv maps only at offset 0");
	if (!a.len || a.len > max_ring_len())
		cannot("no ring has this length");
	if (type != MAP_SHARED && type != MAP_SHARED_VALIDATE)
		cannot("not a shared mapping");
	if (type == MAP_SHARED_VALIDATE && (flags & ~legacy))
		cannot("MAP_SHARED_VALIDATE with flags rv does not support");
	if (flags & (MAP_HUGETLB | MAP_GROWSDOWN | MAP_ANONYMOUS))
		cannot("MAP_HUGETLB, MAP_GROWSDOWN or MAP_ANONYMOUS");
	if ((flags & MAP_FIXED) && (a.addr % page))
		cannot("MAP_FIXED at an unaligned address");
	if ((flags & MAP_FIXED_NOREPLACE) && a.addr_mapped)
		cannot("MAP_FIXED_NOREPLACE over a mapping");
	return e;
}

Expect expect_munmap(std::uint64_t addr, std::uint64_t len)
{
	const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));

	if (addr % page || !len)
		return fails_with({EINVAL}, "unaligned address or length 0");
	// ENOMEM: splitting a mapping would exceed the map count.
	return may_succeed({ENOMEM});
}

Expect expect_mremap(std::uint64_t addr, std::uint64_t old_len,
		     std::uint64_t new_len, int flags, std::uint64_t new_addr)
{
	const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
	const auto known = static_cast<std::uint64_t>(MREMAP_MAYMOVE |
						      MREMAP_FIXED |
						      MREMAP_DONTUNMAP);
	const auto f = static_cast<std::uint64_t>(static_cast<unsigned>(flags));

	if (addr % page || !new_len || (f & ~known) ||
	    ((f & MREMAP_FIXED) && (!(f & MREMAP_MAYMOVE) || new_addr % page)))
		return fails_with({EINVAL}, "bad address, length or flags");
	// EFAULT: not mapped, or growing a VM_DONTEXPAND mapping (the ring);
	// ENOMEM: no room to move; EAGAIN: mlock limit; EINVAL:
	// MREMAP_DONTUNMAP with a length change.
	Expect e = may_succeed({EINVAL, EFAULT, ENOMEM, EAGAIN});
	const std::uint64_t old_pages = (old_len + page - 1) / page;
	const std::uint64_t new_pages = (new_len + page - 1) / page;
	if (new_pages > old_pages) {
		e.success_ok = false;
		e.why = "an event ring cannot grow";
	} else if (f & MREMAP_DONTUNMAP) {
		e.success_ok = false;
		e.why = "MREMAP_DONTUNMAP of a VM_DONTEXPAND mapping";
	}
	return e;
}

} // namespace rvfuzz
