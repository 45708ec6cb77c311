// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include "fault_inject.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rv/error.hpp>

namespace rv::test::fault {

namespace {

constexpr const char *fail_nth_path = "/proc/thread-self/fail-nth";

bool starts_with(std::string_view s, std::string_view p)
{
	return s.substr(0, p.size()) == p;
}

std::string_view trim(std::string_view s)
{
	while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
		s.remove_prefix(1);
	while (!s.empty() && (s.back() == ' ' || s.back() == '\n' ||
			      s.back() == '\r'))
		s.remove_suffix(1);
	return s;
}

} // namespace

// ------------------------------------------------------------ FailNth

namespace {

constexpr const char *make_it_fail_path = "/proc/thread-self/make-it-fail";
constexpr const char *dbg_failslab = "/sys/kernel/debug/failslab";
constexpr const char *dbg_fail_page_alloc = "/sys/kernel/debug/fail_page_alloc";

rv::UniqueFd open_rw(const std::string &path)
{
	rv::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
	if (!fd)
		rv::throw_errno("open " + path);
	return fd;
}

// Writes n to fd (the proc and debugfs files ignore the file position;
// debugfs's cannot seek); no allocation, no new memory touched.
void put_uint(int fd, unsigned n, const char *what)
{
	std::array<char, 16> buf{};
	auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size() - 1, n);
	if (ec != std::errc())
		rv::throw_errno(EINVAL, what);
	const auto len = static_cast<std::size_t>(end - buf.data());
	if (::write(fd, buf.data(), len) != static_cast<ssize_t>(len))
		rv::throw_errno(std::string("write ") + what);
}

} // namespace

FailNth::FailNth(unsigned burst) : burst_(burst ? burst : 1), fd_(open_rw(fail_nth_path))
{
	if (burst_ > 1) {
		make_it_fail_ = open_rw(make_it_fail_path);
		times_slab_ = open_rw(std::string(dbg_failslab) + "/times");
		times_page_ = open_rw(std::string(dbg_fail_page_alloc) + "/times");
	}
}

void FailNth::arm(unsigned n)
{
	if (burst_ > 1) {
		put_uint(times_slab_.get(), burst_, "failslab/times");
		put_uint(times_page_.get(), burst_, "fail_page_alloc/times");
		put_uint(make_it_fail_.get(), 1, "make-it-fail");
	}
	put_uint(fd_.get(), n, "fail-nth");
}

unsigned FailNth::value()
{
	std::array<char, 32> buf{};
	ssize_t got = ::pread(fd_.get(), buf.data(), buf.size() - 1, 0);
	if (got < 0)
		rv::throw_errno("read fail-nth");
	unsigned v = 0;
	const char *end = buf.data() + got;
	auto r = std::from_chars(buf.data(), end, v);
	if (r.ec != std::errc())
		rv::throw_errno(EBADMSG, "fail-nth: not a number");
	return v;
}

bool FailNth::disarm()
{
	// make-it-fail first: nothing of this task may fail any more.
	if (burst_ > 1)
		put_uint(make_it_fail_.get(), 0, "make-it-fail");
	const unsigned left = value();
	if (left)
		put_uint(fd_.get(), 0, "fail-nth");
	if (burst_ > 1) {
		put_uint(times_slab_.get(), 0, "failslab/times");
		put_uint(times_page_.get(), 0, "fail_page_alloc/times");
	}
	return left == 0;
}

BurstMode::BurstMode()
{
	for (const char *dir : {dbg_failslab, dbg_fail_page_alloc}) {
		for (const char *knob : {"times", "probability", "task-filter"}) {
			const std::string path = std::string(dir) + "/" + knob;
			std::ifstream in(path);
			std::string v;
			if (!in || !std::getline(in, v))
				rv::throw_errno(errno ? errno : ENOENT, "read " + path);
			saved_.emplace_back(path, v);
		}
		// times 0 first: nothing fails while the others change.
		for (const auto &[knob, value] :
		     {std::pair{"times", "0"}, {"task-filter", "Y"}, {"probability", "100"}}) {
			const std::string path = std::string(dir) + "/" + knob;
			std::ofstream out(path);
			out << value << std::flush;
			if (!out)
				rv::throw_errno(errno ? errno : EIO, "write " + path);
		}
	}
}

BurstMode::~BurstMode()
{
	// probability and the task filter before times, in reverse.
	for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
		std::ofstream out(it->first);
		out << it->second << std::flush;
	}
}

// ------------------------------------------------------------ sites

namespace {

// Frames of the allocator and of fault injection itself: not where the
// allocation was asked for.
constexpr std::string_view allocator_frames[] = {
	"dump_stack_", "fail_dump", "should_fail_", "__should_fail_",
	"should_failslab", "__should_failslab",
	"prepare_alloc_pages", "__alloc_pages", "alloc_pages",
	"__get_free_pages", "get_zeroed_page", "alloc_page_interleave",
	"vma_alloc_folio", "folio_alloc", "__folio_alloc", "__alloc_pages_node",
	"alloc_pages_node", "slab_pre_alloc_hook", "slab_alloc", "__slab_alloc",
	"___slab_alloc", "kmem_cache_alloc_", "__kmem_cache_alloc_",
	"kmalloc_", "__kmalloc_", "kzalloc", "kcalloc", "kvmalloc_",
	"kvzalloc", "__kvmalloc_", "new_slab", "allocate_slab", "vmalloc",
	"__vmalloc_", "vzalloc", "vmalloc_user", "vm_area_alloc_pages",
	"alloc_vmap_area", "__get_vm_area_node", "kasan_populate_vmalloc",
	"__kasan_populate_vmalloc", "apply_to_", "__apply_to_", "xas_", "xa_",
	"__xa_", "__xas_", "radix_tree_", "idr_", "ida_", "mas_", "mt_",
	"mtree_", "kmemdup", "memdup_user", "kstrdup", "krealloc",
	"__do_krealloc", "pte_alloc_one", "__pte_alloc", "__pmd_alloc",
	"__pud_alloc", "__p4d_alloc", "pmd_alloc", "pud_alloc", "walk_to_pmd",
	"get_locked_pte", "__get_locked_pte", "vm_insert_page", "insert_page",
	"vmap_", "__vmap_", "sg_kmalloc", "__sg_alloc_table", "sg_alloc_table",
};

// Allocations for a debugging facility's own metadata.
struct MetaFrames {
	std::string_view prefix;
	const char *kind;
};
constexpr MetaFrames meta_frames[] = {
	{"kmemleak", "kmemleak"},
	{"create_object", "kmemleak"},
	{"__create_object", "kmemleak"},
	{"mem_pool_alloc", "kmemleak"},
	{"stack_depot", "kasan"},
	{"__stack_depot", "kasan"},
	{"kasan_save", "kasan"},
	{"__kasan_", "kasan"},
	{"kasan_set_track", "kasan"},
};

bool is_allocator(std::string_view fn)
{
	// "func.constprop.0", "func.isra.0": the name before the dot.
	fn = fn.substr(0, fn.find('.'));
	for (std::string_view a : allocator_frames) {
		// "name_": a prefix; also matches "name" itself.
		if (a.back() == '_' ? starts_with(fn, a) || fn == a.substr(0, a.size() - 1)
				    : fn == a)
			return true;
	}
	return false;
}

const char *meta_kind(std::string_view fn)
{
	for (const auto &m : meta_frames)
		if (starts_with(fn, m.prefix))
			return m.kind;
	return nullptr;
}

std::string_view frame_func(std::string_view frame)
{
	return frame.substr(0, frame.find(' '));
}

std::string_view frame_module(std::string_view frame)
{
	auto b = frame.find('[');
	auto e = frame.find(']');
	if (b == std::string_view::npos || e == std::string_view::npos || e < b)
		return {};
	return frame.substr(b + 1, e - b - 1);
}

bool is_entry(std::string_view fn)
{
	return starts_with(fn, "do_syscall") || starts_with(fn, "entry_SYSCALL") ||
	       starts_with(fn, "__x64_sys") || starts_with(fn, "__do_sys") ||
	       starts_with(fn, "__se_sys");
}

// The index of the allocating frame, and the metadata kind seen on the
// way (before it).
std::size_t alloc_frame(const std::vector<std::string> &frames,
			std::string *kind)
{
	for (std::size_t i = 0; i < frames.size(); i++) {
		std::string_view fn = frame_func(frames[i]);
		if (const char *k = meta_kind(fn)) {
			if (kind && kind->empty())
				*kind = k;
			continue;
		}
		if (!is_allocator(fn))
			return i;
	}
	return frames.size();
}

} // namespace

std::string Site::summary() const
{
	if (frames.empty())
		return injector.empty() ? "silent" : injector + " (no stack)";
	std::size_t i = alloc_frame(frames, nullptr);
	std::string s = kind.empty() ? "" : kind + " metadata: ";
	if (i == frames.size())
		return s + frames.front();
	// The allocator's entry point, if it shows: "kmalloc_trace in ".
	if (i > 0) {
		std::string_view call = frame_func(frames[i - 1]);
		if (!meta_kind(call) && !starts_with(call, "should_fail") &&
		    !starts_with(call, "dump_stack"))
			s += std::string(call) + " in ";
	}
	s += frames[i];
	if (frame_module(frames[i]) == "rv")
		return s;
	for (std::size_t j = i + 1; j < frames.size(); j++) {
		if (is_entry(frame_func(frames[j])))
			break;
		if (frame_module(frames[j]) == "rv") {
			s += " < ";
			s += frames[j];
			break;
		}
	}
	return s;
}

std::string Site::owner() const
{
	std::size_t i = alloc_frame(frames, nullptr);
	if (i == frames.size())
		return {};
	std::string_view m = frame_module(frames[i]);
	return m.empty() ? "kernel" : std::string(m);
}

KernelLog::KernelLog() : fd_(::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC))
{
	if (fd_)
		(void)::lseek(fd_.get(), 0, SEEK_END);
}

std::vector<std::string> KernelLog::read_new()
{
	std::vector<std::string> out;
	if (!fd_)
		return out;
	std::array<char, 8192> buf{};
	for (;;) {
		ssize_t n = ::read(fd_.get(), buf.data(), buf.size());
		if (n < 0 && (errno == EPIPE || errno == EINTR))
			continue;	// EPIPE: records overwritten, go on
		if (n <= 0)
			break;
		std::string_view rec(buf.data(), static_cast<std::size_t>(n));
		auto semi = rec.find(';');
		if (semi == std::string_view::npos)
			continue;
		std::string_view msg = rec.substr(semi + 1);
		// The message ends at the first newline (then come its keys);
		// newlines inside it are escaped as \x0a.
		out.emplace_back(msg.substr(0, msg.find('\n')));
	}
	return out;
}

std::optional<Site> KernelLog::find_site(const std::vector<std::string> &records)
{
	std::optional<Site> site;
	bool in_trace = false;
	for (const std::string &r : records) {
		std::string_view t = trim(r);
		if (!site) {
			if (t.find("FAULT_INJECTION: forcing a failure") ==
			    std::string_view::npos)
				continue;
			site.emplace();
		}
		if (site->injector.empty()) {
			if (t.find("name failslab") != std::string_view::npos)
				site->injector = "failslab";
			else if (t.find("name fail_page_alloc") != std::string_view::npos)
				site->injector = "fail_page_alloc";
		}
		if (!in_trace) {
			in_trace = t == "Call Trace:";
			continue;
		}
		if (t == "<TASK>")
			continue;
		if (t == "</TASK>" || t.empty())
			break;
		if (starts_with(t, "?"))
			continue;	// unreliable frame
		auto plus = t.find("+0x");
		if (plus == std::string_view::npos)
			continue;	// "RIP: ...", register dumps
		std::string frame(t.substr(0, plus));
		std::string_view mod = frame_module(t);
		if (!mod.empty())
			frame += " [" + std::string(mod) + "]";
		site->frames.push_back(std::move(frame));
	}
	if (site)
		(void)alloc_frame(site->frames, &site->kind);
	return site;
}

std::vector<std::string> KernelLog::bad_lines(const std::vector<std::string> &records)
{
	// As tools/testing/vm/dmesg-check.
	static constexpr std::string_view patterns[] = {
		"BUG:", "WARNING:", "Oops", "KASAN:", "possible circular locking",
		"suspicious RCU", "refcount_t", "suspected memory leaks",
		"general protection fault", "Kernel panic",
	};
	std::vector<std::string> out;
	for (std::size_t i = 0; i < records.size(); i++) {
		const std::string &r = records[i];
		bool bad = std::any_of(std::begin(patterns), std::end(patterns),
				       [&](std::string_view p) {
					       return r.find(p) != std::string::npos;
				       });
		if (!bad)
			continue;
		std::string s = std::string(trim(r));
		for (std::size_t j = i + 1; j < records.size() && j <= i + 16; j++) {
			s += " | ";
			s += trim(records[j]);
		}
		out.push_back(std::move(s));
	}
	return out;
}

// ------------------------------------------------------------ knobs

namespace {

std::optional<long> read_knob(const std::string &path)
{
	std::ifstream in(path);
	std::string s;
	if (!in || !std::getline(in, s))
		return std::nullopt;
	s = std::string(trim(s));
	if (s == "Y" || s == "y")
		return 1;
	if (s == "N" || s == "n")
		return 0;
	char *end = nullptr;
	long v = std::strtol(s.c_str(), &end, 10);
	if (end == s.c_str())
		return std::nullopt;
	return v;
}

std::string knob_str(const char *name, const std::optional<long> &v)
{
	return std::string(name) + "=" + (v ? std::to_string(*v) : "?");
}

} // namespace

FaultKnobs FaultKnobs::read(const std::string &dir)
{
	FaultKnobs k;
	struct stat st{};
	k.dir = dir;
	k.present = ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
	if (!k.present)
		return k;
	k.probability = read_knob(dir + "/probability");
	k.verbose = read_knob(dir + "/verbose");
	k.ignore_gfp_wait = read_knob(dir + "/ignore-gfp-wait");
	k.ignore_gfp_highmem = read_knob(dir + "/ignore-gfp-highmem");
	k.min_order = read_knob(dir + "/min-order");
	return k;
}

std::string FaultKnobs::str() const
{
	if (!present)
		return dir + ": missing";
	std::string s = dir + ": " + knob_str("probability", probability) + " " +
			knob_str("verbose", verbose) + " " +
			knob_str("ignore-gfp-wait", ignore_gfp_wait);
	if (ignore_gfp_highmem)
		s += " " + knob_str("ignore-gfp-highmem", ignore_gfp_highmem);
	if (min_order)
		s += " " + knob_str("min-order", min_order);
	return s;
}

FaultSetup FaultSetup::probe()
{
	FaultSetup s;
	s.failslab = FaultKnobs::read("/sys/kernel/debug/failslab");
	s.fail_page_alloc = FaultKnobs::read("/sys/kernel/debug/fail_page_alloc");
	s.fail_nth = ::access(fail_nth_path, W_OK) == 0;

	if (!s.fail_nth)
		s.problems.push_back(std::string(fail_nth_path) +
				     " missing or not writable (no CONFIG_FAULT_INJECTION?)");
	for (const FaultKnobs *k : {&s.failslab, &s.fail_page_alloc}) {
		if (!k->present) {
			s.problems.push_back(k->dir + " missing (no CONFIG_FAULT_INJECTION_DEBUG_FS,"
						      " or debugfs not mounted)");
			continue;
		}
		if (k->ignore_gfp_wait.value_or(1))
			s.problems.push_back(k->dir + "/ignore-gfp-wait is not N: GFP_KERNEL "
						      "allocations are never failed");
		if (k->probability.value_or(0))
			s.problems.push_back(k->dir + "/probability is not 0: random faults "
						      "besides fail-nth");
	}
	if (s.fail_page_alloc.present) {
		if (s.fail_page_alloc.ignore_gfp_highmem.value_or(1))
			s.problems.push_back(s.fail_page_alloc.dir +
					     "/ignore-gfp-highmem is not N");
		if (s.fail_page_alloc.min_order.value_or(1))
			s.problems.push_back(s.fail_page_alloc.dir +
					     "/min-order is not 0: order-0 pages are never failed");
	}
	return s;
}

int FaultSetup::verbose() const
{
	long a = failslab.verbose.value_or(0);
	long b = fail_page_alloc.verbose.value_or(0);
	return static_cast<int>(std::min(a, b));
}

} // namespace rv::test::fault
