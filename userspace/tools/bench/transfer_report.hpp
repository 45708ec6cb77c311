// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// What rvbench bw and lat print: the client's results as a table or JSON,
// the server's summary.
#ifndef RV_BENCH_TRANSFER_REPORT_HPP
#define RV_BENCH_TRANSFER_REPORT_HPP

#include <string>

#include "bench/transfer_options.hpp"
#include "bench/two_node.hpp"

namespace rvbench {

std::string transfer_json(const TransferOptions &o, const rv::bench::ClientReport &r);
std::string transfer_table(const TransferOptions &o, const rv::bench::ClientReport &r);
// --json or not, as the options say.
std::string server_text(const TransferOptions &o, const rv::bench::ServerReport &r);

} // namespace rvbench

#endif // RV_BENCH_TRANSFER_REPORT_HPP
