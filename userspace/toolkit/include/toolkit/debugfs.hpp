// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
//
// The rv module's debugfs files (docs/observability.md), read into
// records:
//
//	rv::debugfs::Snapshot s = rv::debugfs::read();	// /sys/kernel/debug/rv
//	for (const rv::debugfs::Record &p : s.procs)
//		if (p.get("pid") == std::to_string(getpid()))
//			std::cout << p.u64_or("cache_count", 0) << '\n';
//
// Each file (devices, jobs, conns, procs) holds one object a line as
// `key=value` fields separated by spaces. The format is not ABI: a later
// module may add, rename or remove any key, so only the ids below are
// required and callers treat every other key as optional. A Record keeps
// every field of its line, in order, keys the reader does not know
// included; values stay text, and get_u64() reads the numbers (decimal,
// or hex after 0x).
//
// A line that is not such an object is skipped, never half-read, and
// described in Snapshot::warnings: a field without '=' or with an empty
// key, a key given twice, or a missing or non-numeric id (devices:
// `device`; jobs: `job`; conns: `job`, `conn`, `qp`; procs: `job`, `pid`).
// Empty lines are ignored. What cannot be read at all (the directory or
// one of its files) throws std::system_error in std::generic_category()
// carrying the errno, what() naming the path: ENOENT when debugfs is not
// mounted or rv is not loaded, EACCES for anyone but root. hint() says
// what to do about it.
#ifndef RV_TOOLKIT_DEBUGFS_HPP
#define RV_TOOLKIT_DEBUGFS_HPP

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rv::debugfs {

inline constexpr std::string_view default_dir = "/sys/kernel/debug/rv";

// The files, in the order Snapshot holds them.
enum class Table : std::uint8_t { devices, jobs, conns, procs };
inline constexpr std::array<Table, 4> tables = {
	Table::devices, Table::jobs, Table::conns, Table::procs};

// The file's name: "devices", "jobs", "conns", "procs".
[[nodiscard]] std::string_view name(Table t) noexcept;
// The table of that file name; nullopt for any other.
[[nodiscard]] std::optional<Table> table_named(std::string_view name) noexcept;
// The keys that name an object of the table; a line must have them.
[[nodiscard]] std::vector<std::string_view> id_keys(Table t);
// Of the id keys, those that hold a number (all but `device`).
[[nodiscard]] bool is_numeric_id(std::string_view key) noexcept;

// "123" or "0x7b" (either case after 0x) to a number; nullopt for
// anything else, a sign, spaces or a value above 2^64 - 1 included.
[[nodiscard]] std::optional<std::uint64_t> parse_u64(std::string_view text) noexcept;

struct Field {
	std::string key;
	std::string value;

	friend bool operator==(const Field &, const Field &) = default;
};

// One line: its fields in the order the module wrote them.
class Record {
public:
	Record() = default;
	explicit Record(std::vector<Field> fields, unsigned line = 0)
		: fields_(std::move(fields)), line_(line) {}

	[[nodiscard]] const std::vector<Field> &fields() const noexcept
	{
		return fields_;
	}
	// 1-based line of the file it came from; 0 if made by hand.
	[[nodiscard]] unsigned line() const noexcept { return line_; }

	[[nodiscard]] bool has(std::string_view key) const noexcept
	{
		return find(key) != nullptr;
	}
	// The value of key; nullptr if the line does not have it.
	[[nodiscard]] const std::string *find(std::string_view key) const noexcept;
	// The same as an optional view.
	[[nodiscard]] std::optional<std::string_view> get(std::string_view key) const noexcept;
	// The value as a number (parse_u64); nullopt if absent or not one.
	[[nodiscard]] std::optional<std::uint64_t> get_u64(std::string_view key) const noexcept;
	// get_u64(key), or fallback.
	[[nodiscard]] std::uint64_t u64_or(std::string_view key,
					   std::uint64_t fallback) const noexcept
	{
		return get_u64(key).value_or(fallback);
	}

	friend bool operator==(const Record &a, const Record &b)
	{
		return a.fields_ == b.fields_;
	}

private:
	std::vector<Field> fields_;
	unsigned line_ = 0;
};

// A line that was skipped.
struct Warning {
	std::string file;	// the file's path as read, or the table's name
	unsigned line = 0;	// 1-based
	std::string reason;	// "field 3 'abc' has no '='"

	// "FILE:LINE: REASON"
	[[nodiscard]] std::string to_string() const;
};

// The objects of one file's text. Lines that are not objects are left out
// and described in *warnings (if given), under the name file.
[[nodiscard]] std::vector<Record> parse(std::string_view text, Table t,
					std::vector<Warning> *warnings = nullptr,
					std::string_view file = {});

struct Snapshot {
	std::vector<Record> devices;
	std::vector<Record> jobs;
	std::vector<Record> conns;
	std::vector<Record> procs;
	std::vector<Warning> warnings;	// lines skipped, in file order

	[[nodiscard]] std::vector<Record> &operator[](Table t) noexcept;
	[[nodiscard]] const std::vector<Record> &operator[](Table t) const noexcept;
};

// Reads the four files under dir. Throws std::system_error (see above):
// the directory's errno naming dir (ENOENT, EACCES, ENOTDIR, ...), or a
// file's naming that file.
[[nodiscard]] Snapshot read(const std::filesystem::path &dir =
				    std::filesystem::path(default_dir));

// Advice for an errno that read(dir) threw. EACCES or EPERM: "run as
// root". ENOENT of the default directory: to mount debugfs (when
// /sys/kernel/debug is not a debugfs mount) and to load rv (when
// /sys/module/rv does not exist); of another directory: both, as
// questions. Empty when there is nothing to suggest.
[[nodiscard]] std::string hint(int err, const std::filesystem::path &dir =
					       std::filesystem::path(default_dir));

} // namespace rv::debugfs

#endif // RV_TOOLKIT_DEBUGFS_HPP
