// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvbench's commands, each called with argv[0] the command's name; they
// throw UsageError on a bad command line and return the exit status.
#ifndef RV_BENCH_COMMANDS_HPP
#define RV_BENCH_COMMANDS_HPP

namespace rvbench {

// reg: REG_MEM cost, MR cache hit vs miss vs ibv_reg_mr (bench/reg.cpp).
int run_reg(int argc, char **argv);

// attach: ATTACH cost, threads at once, new jobs or one (bench/attach.cpp).
int run_attach(int argc, char **argv);

// bw and lat: RDMA WRITE with immediate between two nodes
// (bench/transfer.cpp).
int run_bw(int argc, char **argv);
int run_lat(int argc, char **argv);

} // namespace rvbench

#endif // RV_BENCH_COMMANDS_HPP
