// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <toolkit/debugfs.hpp>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <rv/error.hpp>
#include <rv/gid.hpp>
#include <rv/unique_fd.hpp>

namespace rv::debugfs {

namespace {

// linux/magic.h's DEBUGFS_MAGIC.
constexpr unsigned long debugfs_magic = 0x64626720UL;

// At most this much of a field is quoted in a warning.
constexpr std::size_t quote_max = 40;

bool is_blank(char c) noexcept
{
	return c == ' ' || c == '\t';
}

std::string excerpt(std::string_view s)
{
	if (s.size() <= quote_max)
		return "'" + std::string(s) + "'";
	return "'" + std::string(s.substr(0, quote_max)) + "...'";
}

// The fields of one line; nullopt (and *why) if it is not an object.
std::optional<std::vector<Field>> split_fields(std::string_view line, Table t,
					       std::string *why)
{
	std::vector<Field> fields;
	std::size_t i = 0;

	while (i < line.size()) {
		while (i < line.size() && is_blank(line[i]))
			i++;
		if (i == line.size())
			break;
		std::size_t end = i;
		while (end < line.size() && !is_blank(line[end]))
			end++;
		std::string_view tok = line.substr(i, end - i);
		i = end;

		std::size_t eq = tok.find('=');
		std::string n = std::to_string(fields.size() + 1);
		if (eq == std::string_view::npos) {
			*why = "field " + n + " " + excerpt(tok) + " has no '='";
			return std::nullopt;
		}
		if (eq == 0) {
			*why = "field " + n + " " + excerpt(tok) +
			       " has an empty key";
			return std::nullopt;
		}
		std::string_view key = tok.substr(0, eq);
		if (std::any_of(fields.begin(), fields.end(),
				[&](const Field &f) { return f.key == key; })) {
			*why = "key " + excerpt(key) + " given twice";
			return std::nullopt;
		}
		fields.push_back({std::string(key), std::string(tok.substr(eq + 1))});
	}

	Record r(fields);
	for (std::string_view id : id_keys(t)) {
		const std::string *v = r.find(id);
		if (!v) {
			*why = "no " + excerpt(id);
			return std::nullopt;
		}
		if (is_numeric_id(id) ? !parse_u64(*v) : v->empty()) {
			*why = excerpt(id) + " is not " +
			       (is_numeric_id(id) ? "a number: " : "a name: ") +
			       excerpt(*v);
			return std::nullopt;
		}
	}
	return fields;
}

// All of fd's contents; throws naming path.
std::string read_all(int fd, const std::string &path)
{
	std::string text;
	char buf[65536];

	for (;;) {
		ssize_t n = ::read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			throw_errno(path);
		}
		if (n == 0)
			return text;
		text.append(buf, static_cast<std::size_t>(n));
	}
}

// s.devices, s.jobs, ... for a Snapshot or a const one.
template <typename S>
auto &table_of(S &s, Table t) noexcept
{
	switch (t) {
	case Table::devices:
		return s.devices;
	case Table::jobs:
		return s.jobs;
	case Table::conns:
		return s.conns;
	case Table::procs:
		break;
	}
	return s.procs;
}

// p without "." and ".." parts or a trailing '/'.
std::filesystem::path normal(const std::filesystem::path &p)
{
	std::filesystem::path n = p.lexically_normal();
	if (n.has_relative_path() && !n.has_filename())
		n = n.parent_path();
	return n;
}

bool on_debugfs(const std::filesystem::path &p) noexcept
{
	struct statfs st {};

	return ::statfs(p.c_str(), &st) == 0 &&
	       static_cast<unsigned long>(st.f_type) == debugfs_magic;
}

} // namespace

std::string_view name(Table t) noexcept
{
	switch (t) {
	case Table::devices:
		return "devices";
	case Table::jobs:
		return "jobs";
	case Table::conns:
		return "conns";
	case Table::procs:
		return "procs";
	}
	return "?";
}

std::optional<Table> table_named(std::string_view n) noexcept
{
	for (Table t : tables)
		if (name(t) == n)
			return t;
	return std::nullopt;
}

std::vector<std::string_view> id_keys(Table t)
{
	switch (t) {
	case Table::devices:
		return {"device"};
	case Table::jobs:
		return {"job"};
	case Table::conns:
		return {"job", "conn", "qp"};
	case Table::procs:
		return {"job", "pid"};
	}
	return {};
}

bool is_numeric_id(std::string_view key) noexcept
{
	return key == "job" || key == "conn" || key == "qp" || key == "pid";
}

std::optional<std::uint64_t> parse_u64(std::string_view text) noexcept
{
	unsigned base = 10;

	if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		base = 16;
		text.remove_prefix(2);
	}
	if (text.empty())
		return std::nullopt;

	std::uint64_t v = 0;
	for (char c : text) {
		int d = hex_digit(c);
		if (d < 0 || static_cast<unsigned>(d) >= base)
			return std::nullopt;
		auto ud = static_cast<std::uint64_t>(d);
		if (v > (UINT64_MAX - ud) / base)
			return std::nullopt;
		v = v * base + ud;
	}
	return v;
}

const std::string *Record::find(std::string_view key) const noexcept
{
	for (const Field &f : fields_)
		if (f.key == key)
			return &f.value;
	return nullptr;
}

std::optional<std::string_view> Record::get(std::string_view key) const noexcept
{
	if (const std::string *v = find(key))
		return std::string_view(*v);
	return std::nullopt;
}

std::optional<std::uint64_t> Record::get_u64(std::string_view key) const noexcept
{
	if (const std::string *v = find(key))
		return parse_u64(*v);
	return std::nullopt;
}

std::string Warning::to_string() const
{
	return file + ":" + std::to_string(line) + ": " + reason;
}

std::vector<Record> parse(std::string_view text, Table t,
			  std::vector<Warning> *warnings, std::string_view file)
{
	std::vector<Record> records;
	unsigned line_no = 0;

	while (!text.empty()) {
		std::size_t nl = text.find('\n');
		std::string_view line = text.substr(0, nl);
		text.remove_prefix(nl == std::string_view::npos ? text.size()
								: nl + 1);
		line_no++;

		if (std::all_of(line.begin(), line.end(), is_blank))
			continue;
		std::string why;
		auto fields = split_fields(line, t, &why);
		if (fields)
			records.emplace_back(std::move(*fields), line_no);
		else if (warnings)
			warnings->push_back(
				{std::string(file.empty() ? name(t) : file),
				 line_no, why + "; line skipped"});
	}
	return records;
}

std::vector<Record> &Snapshot::operator[](Table t) noexcept
{
	return table_of(*this, t);
}

const std::vector<Record> &Snapshot::operator[](Table t) const noexcept
{
	return table_of(*this, t);
}

Snapshot read(const std::filesystem::path &dir)
{
	UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (!dfd)
		throw_errno(dir.string());

	Snapshot s;
	for (Table t : tables) {
		std::string path = (dir / name(t)).string();
		UniqueFd fd(::openat(dfd.get(), std::string(name(t)).c_str(),
				     O_RDONLY | O_CLOEXEC));
		if (!fd)
			throw_errno(path);
		s[t] = parse(read_all(fd.get(), path), t, &s.warnings, path);
	}
	return s;
}

std::string hint(int err, const std::filesystem::path &dir)
{
	if (err == EACCES || err == EPERM)
		return "run as root";
	if (err != ENOENT)
		return {};

	std::filesystem::path d = normal(dir);
	if (d != std::filesystem::path(default_dir))
		return "is debugfs mounted and rv loaded? mount -t debugfs none "
		       "/sys/kernel/debug; modprobe rv";

	std::error_code ec;
	bool loaded = std::filesystem::exists("/sys/module/rv", ec);
	if (on_debugfs(d.parent_path()))
		return loaded ? "rv is loaded but has no debugfs directory"
			      : "rv is not loaded: modprobe rv";
	std::string h = "debugfs is not mounted: mount -t debugfs none " +
			d.parent_path().string();
	if (!loaded)
		h += "; rv is not loaded: modprobe rv";
	return h;
}

} // namespace rv::debugfs
