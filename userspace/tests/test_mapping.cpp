// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

#include <rv/mapping.hpp>

namespace {

// Whether [p, p + len) is mapped: madvise fails with ENOMEM on a hole.
bool mapped(void *p, std::size_t len)
{
	return ::madvise(p, len, MADV_NORMAL) == 0;
}

} // namespace

TEST(Mapping, AnonymousIsUnmappedOnDestruction)
{
	void *p;
	std::size_t len = 4 * rv::page_size();
	{
		rv::Mapping m = rv::Mapping::anonymous(len);
		ASSERT_TRUE(m.valid());
		EXPECT_EQ(m.size(), len);
		EXPECT_EQ(m.addr() % rv::page_size(), 0u);
		p = m.data();
		std::memset(m.data(), 1, len);
		EXPECT_TRUE(mapped(p, len));
	}
	EXPECT_FALSE(mapped(p, len));
}

TEST(Mapping, MoveAndRelease)
{
	const std::size_t len = rv::page_size();
	rv::Mapping a = rv::Mapping::anonymous(len);
	void *p = a.data();
	rv::Mapping b(std::move(a));
	EXPECT_FALSE(a.valid());	// NOLINT(bugprone-use-after-move)
	EXPECT_EQ(b.data(), p);

	rv::Mapping c = rv::Mapping::anonymous(len);
	void *q = c.data();
	c = std::move(b);
	EXPECT_FALSE(mapped(q, len)) << "move-assign unmaps the old range";
	EXPECT_EQ(c.data(), p);

	void *r = c.release();
	EXPECT_EQ(r, p);
	EXPECT_FALSE(c.valid());
	EXPECT_TRUE(mapped(p, len));
	rv::Mapping d = rv::Mapping::adopt(r, len);
	d.unmap();
	EXPECT_FALSE(d.valid());
	EXPECT_FALSE(mapped(p, len));
	EXPECT_NO_THROW(d.unmap());
}

TEST(Mapping, ErrorsCarryErrno)
{
	try {
		(void)rv::Mapping::map(rv::page_size(), PROT_READ, MAP_SHARED, -1);
		ADD_FAILURE() << "mapped fd -1";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EBADF);
		EXPECT_NE(std::string(e.what()).find("mmap"), std::string::npos);
	}
	try {
		(void)rv::Mapping::map(0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
		ADD_FAILURE() << "mapped 0 bytes";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EINVAL);
	}
}
