// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "verbs.hpp"

#include <cerrno>
#include <cstring>

#include <rv/error.hpp>

namespace rv::verbs {

namespace {

struct DeviceListFreer {
	void operator()(ibv_device **list) const noexcept
	{
		ibv_free_device_list(list);
	}
};

} // namespace

Context open_device(const std::string &name)
{
	int n = 0;
	std::unique_ptr<ibv_device *, DeviceListFreer> list(
		ibv_get_device_list(&n));
	if (!list)
		throw_errno("ibv_get_device_list");

	for (int i = 0; i < n; i++) {
		ibv_device *dev = list.get()[i];
		if (name != ibv_get_device_name(dev))
			continue;
		Context ctx(ibv_open_device(dev));
		if (!ctx)
			throw_errno(errno ? errno : ENODEV,
				    "ibv_open_device " + name);
		return ctx;
	}
	throw_errno(ENODEV, "ibv_get_device_list: no RDMA device " + name);
}

Pd alloc_pd(ibv_context &ctx)
{
	Pd pd(ibv_alloc_pd(&ctx));
	if (!pd)
		throw_errno(errno ? errno : ENOMEM, "ibv_alloc_pd");
	return pd;
}

Mr reg_mr(ibv_pd &pd, void *addr, std::size_t len, unsigned int access)
{
	Mr mr(ibv_reg_mr(&pd, addr, len, access));
	if (!mr)
		throw_errno(errno ? errno : ENOMEM, "ibv_reg_mr");
	return mr;
}

Cq create_cq(ibv_context &ctx, int cqe)
{
	Cq cq(ibv_create_cq(&ctx, cqe, nullptr, nullptr, 0));
	if (!cq)
		throw_errno(errno ? errno : ENOMEM, "ibv_create_cq");
	return cq;
}

Qp create_qp(ibv_pd &pd, ibv_qp_init_attr &attr)
{
	Qp qp(ibv_create_qp(&pd, &attr));
	if (!qp)
		throw_errno(errno ? errno : ENOMEM, "ibv_create_qp");
	return qp;
}

} // namespace rv::verbs
