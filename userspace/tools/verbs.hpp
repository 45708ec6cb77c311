// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// Owning handles for the few libibverbs objects the tools use (rvbench's
// user MRs, rv_sizing's user QPs). Every failure is a std::system_error
// with the errno libibverbs reported.
#ifndef RV_TOOLS_VERBS_HPP
#define RV_TOOLS_VERBS_HPP

#include <cstddef>
#include <memory>
#include <string>

#include <infiniband/verbs.h>

namespace rv::verbs {

struct ContextCloser {
	void operator()(ibv_context *c) const noexcept { ibv_close_device(c); }
};
struct PdDeallocator {
	void operator()(ibv_pd *pd) const noexcept { ibv_dealloc_pd(pd); }
};
struct MrDeregisterer {
	void operator()(ibv_mr *mr) const noexcept { ibv_dereg_mr(mr); }
};
struct CqDestroyer {
	void operator()(ibv_cq *cq) const noexcept { ibv_destroy_cq(cq); }
};
struct QpDestroyer {
	void operator()(ibv_qp *qp) const noexcept { ibv_destroy_qp(qp); }
};

using Context = std::unique_ptr<ibv_context, ContextCloser>;
using Pd = std::unique_ptr<ibv_pd, PdDeallocator>;
using Mr = std::unique_ptr<ibv_mr, MrDeregisterer>;
using Cq = std::unique_ptr<ibv_cq, CqDestroyer>;
using Qp = std::unique_ptr<ibv_qp, QpDestroyer>;

// Opens the RDMA device called name (ENODEV if there is none).
[[nodiscard]] Context open_device(const std::string &name);

[[nodiscard]] Pd alloc_pd(ibv_context &ctx);

// ibv_reg_mr, for holding an MR; the benchmark loop calls libibverbs
// directly so that nothing but the verbs is timed.
[[nodiscard]] Mr reg_mr(ibv_pd &pd, void *addr, std::size_t len,
			 unsigned int access);

// A CQ of at least cqe entries, without a channel.
[[nodiscard]] Cq create_cq(ibv_context &ctx, int cqe);

// A QP as attr asks (libibverbs writes the capabilities it got there).
[[nodiscard]] Qp create_qp(ibv_pd &pd, ibv_qp_init_attr &attr);

} // namespace rv::verbs

#endif // RV_TOOLS_VERBS_HPP
