// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// rvstat: the rv module's devices, jobs, connections and processes, with
// their state and counters, from its debugfs files
// (docs/observability.md).
#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <toolkit/debugfs.hpp>
#include <toolkit/json.hpp>

#include "cli.hpp"

namespace {

namespace dbg = rv::debugfs;
using dbg::Record;
using dbg::Snapshot;
using dbg::Table;

constexpr const char *prog = "rvstat";

struct Options {
	std::string dir{dbg::default_dir};
	bool json = false;
	std::optional<std::uint64_t> pid;
	std::optional<std::uint64_t> job;
	std::array<bool, dbg::tables.size()> sections{};	// none: all

	[[nodiscard]] bool shows(Table t) const
	{
		bool any = std::find(sections.begin(), sections.end(), true) !=
			   sections.end();
		return !any || sections[static_cast<std::size_t>(t)];
	}
};

void usage(std::FILE *f)
{
	std::fprintf(f,
"Usage: %s [OPTION]...\n"
"Show the rv module's devices, jobs, connections and processes with their\n"
"state and counters (from its debugfs files; needs root).\n"
"\n"
"  -p, --pid PID        only the process PID: its attachments (MR cache and\n"
"                       event statistics), their jobs, the connections it\n"
"                       holds and devices\n"
"  -J, --job ID         only job ID: it, its processes, connections, device\n"
"  -s, --section LIST   only these sections, comma separated:\n"
"                       devices, jobs, conns, procs (default: all)\n"
"  -j, --json           print one JSON object:\n"
"                         {\"devices\": [...], \"jobs\": [...], \"conns\": [...],\n"
"                          \"procs\": [...]}\n"
"                       one object per debugfs line with all its fields;\n"
"                       decimal numbers as numbers, everything else\n"
"                       (0x..., job_key, dgid, names) as strings\n"
"  -D, --debugfs DIR    read DIR instead of %s\n"
"  -h, --help           show this help and exit\n"
"\n"
"Exit status: 0 on success, 1 if the files could not be read or --pid or\n"
"--job matched nothing, 2 on a usage error.\n",
		prog, std::string(dbg::default_dir).c_str());
}

void parse_sections(Options &opts, std::string_view list)
{
	for (std::string_view n : rv::cli::split(list)) {
		auto t = dbg::table_named(n);
		if (!t)
			throw rv::cli::UsageError("invalid section '" + std::string(n) +
						  "' (devices, jobs, conns or procs)");
		opts.sections[static_cast<std::size_t>(*t)] = true;
	}
}

// Parses argv into opts (rv::cli::parse_command_line()).
rv::cli::Parsed parse_args(int argc, char **argv, Options &opts)
{
	const rv::cli::Option options[] = {
		rv::cli::value("pid", 'p', [&](std::string_view v) {
			opts.pid = rv::cli::parse_uint("--pid", v, 1, INT32_MAX);
		}),
		rv::cli::value("job", 'J', [&](std::string_view v) {
			opts.job = rv::cli::parse_uint("--job", v);
		}),
		rv::cli::value("section", 's', [&](std::string_view v) {
			parse_sections(opts, v);
		}),
		rv::cli::flag("json", 'j', opts.json),
		rv::cli::text("debugfs", 'D', opts.dir),
	};
	return rv::cli::parse(argc, argv, options);
}

// --- selection ------------------------------------------------------------

bool in(const std::set<std::uint64_t> &set, const Record &r, const char *key)
{
	auto v = r.get_u64(key);
	return v && set.count(*v);
}

// What --pid and --job select: the matching processes, the jobs they are
// in (with --job alone: that job), those jobs' connections and devices.
// nullopt if nothing matched.
std::optional<Snapshot> selected(const Snapshot &all, const Options &opts)
{
	if (!opts.pid && !opts.job)
		return all;

	Snapshot s;
	std::set<std::uint64_t> jobs;
	// With --pid: the (job, conn) pairs its processes hold, from
	// conn_ids; a module without conn_ids shows all of their jobs'.
	std::set<std::pair<std::uint64_t, std::uint64_t>> held;
	bool all_conns = !opts.pid;
	for (const Record &p : all.procs) {
		if ((opts.pid && p.get_u64("pid") != opts.pid) ||
		    (opts.job && p.get_u64("job") != opts.job))
			continue;
		s.procs.push_back(p);
		const std::uint64_t job = *p.get_u64("job");
		jobs.insert(job);
		const auto ids = p.get("conn_ids");
		if (!ids) {
			all_conns = true;
			continue;
		}
		for (std::string_view rest = *ids; !rest.empty();) {
			const std::size_t comma = rest.find(',');
			if (auto id = rv::debugfs::parse_u64(rest.substr(0, comma)))
				held.emplace(job, *id);
			rest = comma == std::string_view::npos ? std::string_view{}
							       : rest.substr(comma + 1);
		}
	}
	if (opts.pid && s.procs.empty())
		return std::nullopt;
	if (!opts.pid)
		jobs = {*opts.job};

	std::set<std::string> devices;
	for (const Record &j : all.jobs) {
		if (!in(jobs, j, "job"))
			continue;
		s.jobs.push_back(j);
		if (auto d = j.get("device"))
			devices.emplace(*d);
	}
	for (const Record &c : all.conns)
		if (in(jobs, c, "job") &&
		    (all_conns || held.count({c.u64_or("job", 0), c.u64_or("conn", 0)})))
			s.conns.push_back(c);
	for (const Record &d : all.devices)
		if (devices.count(std::string(d.get("device").value_or(""))))
			s.devices.push_back(d);

	if (!opts.pid && s.jobs.empty() && s.procs.empty() && s.conns.empty())
		return std::nullopt;
	return s;
}

// --- JSON -------------------------------------------------------------------

// Keys whose values are text even when they look like decimal numbers.
bool text_key(std::string_view key)
{
	for (std::string_view k : {"device", "job_key", "service_id",
				   "rem_addr", "dgid", "state"})
		if (key == k)
			return true;
	return false;
}

// A decimal number as the JSON number it is; anything else as a string.
void json_field(rv::json::Writer &w, const dbg::Field &f)
{
	w.key(f.key);
	std::string_view v = f.value;
	bool decimal = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
		return c >= '0' && c <= '9';
	});
	std::uint64_t n = 0;
	if (decimal && !text_key(f.key)) {
		auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
		if (ec == std::errc() && end == v.data() + v.size()) {
			w.value(n);
			return;
		}
	}
	w.value(v);
}

std::string json(const Snapshot &s, const Options &opts)
{
	rv::json::Writer w;

	w.begin_object();
	for (Table t : dbg::tables) {
		if (!opts.shows(t))
			continue;
		w.key(dbg::name(t)).begin_array();
		for (const Record &r : s[t]) {
			w.begin_object();
			for (const dbg::Field &f : r.fields())
				json_field(w, f);
			w.end_object();
		}
		w.end_array();
	}
	w.end_object();
	return w.str() + "\n";
}

// --- text -------------------------------------------------------------------

// The value of key, "-" if absent.
std::string val(const Record &r, std::string_view key)
{
	return std::string(r.get(key).value_or("-"));
}

// 268435456 -> "256MiB", 1536 -> "1.5KiB", 100 -> "100B".
std::string bytes(std::optional<std::uint64_t> v)
{
	static constexpr const char *units[] = {"B", "KiB", "MiB", "GiB",
						"TiB", "PiB", "EiB"};
	if (!v)
		return "-";
	std::size_t u = 0;
	std::uint64_t scale = 1;
	while (u + 1 < std::size(units) && *v / scale >= 1024) {
		scale *= 1024;
		u++;
	}
	char buf[32];
	if (*v % scale == 0)
		std::snprintf(buf, sizeof(buf), "%" PRIu64 "%s", *v / scale,
			      units[u]);
	else
		std::snprintf(buf, sizeof(buf), "%.1f%s",
			      static_cast<double>(*v) / static_cast<double>(scale),
			      units[u]);
	return buf;
}

// part / whole as "12.5%"; "-" if whole is 0 or unknown.
std::string percent(std::optional<std::uint64_t> part,
		    std::optional<std::uint64_t> whole)
{
	if (!part || !whole || *whole == 0)
		return "-";
	char buf[16];
	std::snprintf(buf, sizeof(buf), "%.1f%%",
		      100.0 * static_cast<double>(*part) /
			      static_cast<double>(*whole));
	return buf;
}

std::optional<std::uint64_t> sum(std::optional<std::uint64_t> a,
				 std::optional<std::uint64_t> b)
{
	if (!a || !b)
		return std::nullopt;
	return *a + *b;
}

// A column of a TextTable: its header and alignment.
struct Column {
	std::string name;
	bool left = false;	// else right-aligned
};

// Columns padded to their widest cell, two spaces apart; numbers
// right-aligned, names left-aligned.
class TextTable {
public:
	explicit TextTable(std::vector<Column> columns)
		: columns_(std::move(columns))
	{
		std::vector<std::string> header;
		for (const Column &c : columns_)
			header.push_back(c.name);
		rows_.push_back(std::move(header));
	}

	void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

	[[nodiscard]] std::string str(std::string_view indent) const
	{
		std::size_t n = columns_.size();
		std::vector<std::size_t> width(n, 0);
		for (const auto &row : rows_)
			for (std::size_t i = 0; i < row.size() && i < n; i++)
				width[i] = std::max(width[i], row[i].size());

		std::string out;
		for (const auto &row : rows_) {
			std::string line(indent);
			for (std::size_t i = 0; i < row.size() && i < n; i++) {
				std::string pad(width[i] - row[i].size(), ' ');
				if (i)
					line += "  ";
				line += columns_[i].left ? row[i] + pad
							 : pad + row[i];
			}
			while (!line.empty() && line.back() == ' ')
				line.pop_back();
			out += line + "\n";
		}
		return out;
	}

private:
	std::vector<Column> columns_;
	std::vector<std::vector<std::string>> rows_;
};

std::string devices_text(const std::vector<Record> &devices)
{
	TextTable t({{"DEVICE", true}, {"JOBS"}});
	for (const Record &d : devices)
		t.add({val(d, "device"), val(d, "jobs")});
	return t.str("");
}

std::string jobs_text(const std::vector<Record> &jobs)
{
	std::string out;
	for (const Record &j : jobs) {
		out += "job " + val(j, "job") + ": " + val(j, "device") +
		       " port " + val(j, "port") + " gid_index " +
		       val(j, "gid_index") + ", uid " + val(j, "uid");
		if (j.get_u64("dead").value_or(0))
			out += ", dead";
		out += "\n";
		out += "  job_key " + val(j, "job_key") + " service_id " +
		       val(j, "service_id") + "\n";
		out += "  num_conn " + val(j, "num_conn") + " index_bits " +
		       val(j, "index_bits") + " q_depth " + val(j, "q_depth") +
		       " reconnect_timeout " + val(j, "reconnect_timeout") +
		       "s hb_interval " + val(j, "hb_interval") + "ms\n";
		out += "  procs " + val(j, "procs") + " conns " +
		       val(j, "conns") + "\n";
	}
	return out;
}

// The QPs of each connection under a line that names it, in file order.
std::string conns_text(const std::vector<Record> &conns)
{
	std::string out;
	std::vector<bool> done(conns.size(), false);

	for (std::size_t i = 0; i < conns.size(); i++) {
		if (done[i])
			continue;
		const Record &c = conns[i];
		auto job = c.get_u64("job");
		auto conn = c.get_u64("conn");
		out += "job " + val(c, "job") + " conn " + val(c, "conn") + ": " +
		       (c.get_u64("server").value_or(0) ? "server" : "client") +
		       ", dgid " + val(c, "dgid") + " rem_addr " +
		       val(c, "rem_addr") + ", users " + val(c, "users") + "\n";

		TextTable t({{"QP"}, {"STATE", true}, {"QPN"}, {"OUTST"},
			     {"CONN_COUNT"}, {"RECOVERY"}, {"POST"},
			     {"POST_FAIL"}, {"POST_BYTES"}, {"CQE"},
			     {"CQE_FAIL"}, {"RECV"}, {"RECV_BYTES"},
			     {"RECV_FAIL"}});
		for (std::size_t k = i; k < conns.size(); k++) {
			const Record &q = conns[k];
			if (q.get_u64("job") != job || q.get_u64("conn") != conn)
				continue;
			done[k] = true;
			t.add({val(q, "qp"), val(q, "state"), val(q, "qpn"),
			       val(q, "outstanding"), val(q, "conn_count"),
			       val(q, "conn_recovery"), val(q, "post_write"),
			       val(q, "post_write_fail"),
			       val(q, "post_write_bytes"),
			       val(q, "send_write_cqe"),
			       val(q, "send_write_cqe_fail"),
			       val(q, "recv_write_cqe"),
			       val(q, "recv_write_bytes"),
			       val(q, "recv_cqe_fail")});
		}
		out += t.str("  ");
	}
	return out;
}

std::string procs_text(const std::vector<Record> &procs)
{
	TextTable p({{"PID", true}, {"JOB"}, {"RV_INDEX"}, {"CONNS"},
		     {"RING"}, {"OVERFLOW"}});
	TextTable c({{"PID", true}, {"JOB"}, {"SIZE"}, {"LIMIT"}, {"COUNT"},
		     {"INUSE"}, {"HIT"}, {"MISS"}, {"HIT%"}, {"FULL"},
		     {"FAILED"}, {"EVICT"}, {"REMOVE"}});
	TextTable e({{"PID", true}, {"JOB"}, {"SEND_CQE"}, {"SEND_FAIL"},
		     {"SEND_BYTES"}, {"RECV_CQE"}, {"RECV_FAIL"},
		     {"RECV_BYTES"}});

	for (const Record &r : procs) {
		std::string pid = val(r, "pid"), job = val(r, "job");
		p.add({pid, job, val(r, "rv_index"), val(r, "conns"),
		       val(r, "ring_entries"), val(r, "ring_overflow")});
		auto hit = r.get_u64("cache_hit");
		c.add({pid, job, bytes(r.get_u64("cache_size")),
		       bytes(r.get_u64("cache_limit")), val(r, "cache_count"),
		       val(r, "cache_inuse"), val(r, "cache_hit"),
		       val(r, "cache_miss"),
		       percent(hit, sum(hit, r.get_u64("cache_miss"))),
		       val(r, "cache_full"), val(r, "cache_failed"),
		       val(r, "cache_evict"), val(r, "cache_remove")});
		e.add({pid, job, val(r, "send_write_cqe"),
		       val(r, "send_write_cqe_fail"), val(r, "send_write_bytes"),
		       val(r, "recv_write_cqe"), val(r, "recv_write_cqe_fail"),
		       val(r, "recv_write_bytes")});
	}
	return p.str("") + "\nMR cache\n" + c.str("") + "\nWrite events\n" +
	       e.str("");
}

std::string text(const Snapshot &s, const Options &opts)
{
	static constexpr std::array<const char *, dbg::tables.size()> titles = {
		"Devices", "Jobs", "Connections", "Processes"};
	std::string out;

	for (Table t : dbg::tables) {
		if (!opts.shows(t))
			continue;
		if (!out.empty())
			out += "\n";
		out += titles[static_cast<std::size_t>(t)];
		out += "\n";
		const std::vector<Record> &r = s[t];
		if (r.empty()) {
			out += "(none)\n";
			continue;
		}
		switch (t) {
		case Table::devices:
			out += devices_text(r);
			break;
		case Table::jobs:
			out += jobs_text(r);
			break;
		case Table::conns:
			out += conns_text(r);
			break;
		case Table::procs:
			out += procs_text(r);
			break;
		}
	}
	return out;
}

// --- main -------------------------------------------------------------------

// "rvstat: <path>: <strerror>[ (<hint>)]" on stderr.
int report(const Options &opts, const std::system_error &e)
{
	std::string msg = std::string(prog) + ": " + e.what();
	std::string h = dbg::hint(e.code().value(), opts.dir);

	if (!h.empty())
		msg += " (" + h + ")";
	std::fprintf(stderr, "%s\n", msg.c_str());
	return 1;
}

int run(const Options &opts)
{
	Snapshot all;

	try {
		all = dbg::read(opts.dir);
	} catch (const std::system_error &e) {
		return report(opts, e);
	}
	for (const dbg::Warning &w : all.warnings)
		std::fprintf(stderr, "%s: warning: %s\n", prog,
			     w.to_string().c_str());

	std::optional<Snapshot> s = selected(all, opts);
	if (!s) {
		std::string what;
		if (opts.pid)
			what = "no process " + std::to_string(*opts.pid) +
			       " attached to rv";
		else
			what = "no job " + std::to_string(*opts.job);
		if (opts.pid && opts.job)
			what += " in job " + std::to_string(*opts.job);
		std::fprintf(stderr, "%s: %s\n", prog, what.c_str());
		return 1;
	}

	std::string out = opts.json ? json(*s, opts) : text(*s, opts);
	if (std::fputs(out.c_str(), stdout) == EOF || std::fflush(stdout) != 0) {
		std::fprintf(stderr, "%s: write error: %s\n", prog,
			     std::strerror(errno));
		return 1;
	}
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	try {
		Options opts;
		if (auto rc = rv::cli::parse_command_line(prog, usage, parse_args,
							  argc, argv, opts))
			return *rc;
		return run(opts);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", prog, e.what());
		return 1;
	}
}
