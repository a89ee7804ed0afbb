/*
 * query_pages.cpp
 *    A query case's rows as heap pages (gpuops_query.h's pages form), laid
 *    out as PostgreSQL's heap_fill_tuple lays them out, for the backends to
 *    deform (page_deform.hpp): the same case must give the same groups as
 *    its columns do.
 *
 * Each column becomes an attribute after fillers that move it about: a
 * 1-byte attribute (NULL every 11th row, so the null bitmap is there), and
 * before every other column a varlena aligned to 4 (1 to 6 bytes with a
 * short header, 130 bytes with a 4-byte one every 97th row, so padding
 * comes and goes).  A word column is an 8-byte attribute read whole (so
 * any word, integer, float or numeric, comes back as it was); a bytes
 * column a text of its bytes up to the last nonzero one.  Every 9th tuple
 * stored is one the batch does not list (a row the snapshot does not see).
 * Read in place (QCase.in_place), a batch's pages lie scattered in a pool
 * mapped for the device, as pages in shared buffers do.
 */
#include <cstdlib>
#include <cstring>

#include "gpuops_cuda.h"
#include "query_ref.h"

namespace dt {
namespace {

constexpr uint32_t kPage = 8192;
constexpr uint32_t kMaxTuples = 291;  /* MaxHeapTuplesPerPage */
constexpr uint32_t kPoolPages = 8192; /* the in-place pool: 64 MB */

/* The pool pages read in place lie in, mapped for the CUDA backend once it can be. */
uint8_t *
page_pool()
{
	static uint8_t *pool = nullptr;
	static bool mapped = false;

	if (pool == nullptr)
	{
		pool = static_cast<uint8_t *>(aligned_alloc(4096, (size_t) kPoolPages * kPage));
		if (pool == nullptr)
			throw std::runtime_error("no memory for the page pool");
	}
	/* (no context yet: the next batch tries again; the CPU backend needs none) */
	if (!mapped)
		mapped = gpuops_cuda_host_map(pool, (size_t) kPoolPages * kPage) != 0;
	return pool;
}

uint32_t
align_to(uint32_t off, uint32_t a)
{
	return (off + a - 1) & ~(a - 1);
}

/* The attributes of one column: its fillers first, then its own. */
struct ColumnAtts
{
	int first;	   /* the 1-byte filler */
	int varlena;   /* the varlena filler, or -1 */
	int attribute; /* the column's own */
};

struct Layout
{
	GpuopsQueryTuple tuple;
	std::vector<ColumnAtts> atts;
};

Layout
layout_of(const QCase &c)
{
	Layout L;
	int a = 0;

	memset(&L.tuple, 0, sizeof(L.tuple));
	for (size_t k = 0; k < c.cols.size(); k++)
	{
		ColumnAtts ca;

		ca.first = a;
		L.tuple.attlen[a] = 1;
		L.tuple.attalign[a++] = 1;
		ca.varlena = -1;
		if (k % 2 == 1)
		{
			ca.varlena = a;
			L.tuple.attlen[a] = -1;
			L.tuple.attalign[a++] = 4;
		}
		ca.attribute = a;
		L.tuple.attlen[a] = c.cols[k].bytes ? -1 : 8;
		L.tuple.attalign[a] = c.cols[k].bytes ? 4 : 8;
		L.tuple.attr[k] = static_cast<int16_t>(a++);
		L.tuple.form[k] = c.cols[k].bytes ? GPUOPS_QPF_TEXT16 : GPUOPS_QPF_INT;
		L.atts.push_back(ca);
	}
	L.tuple.natts = a;
	return L;
}

/* Appends a varlena of n bytes (x) at off, as heap_fill_tuple would. */
void
put_varlena(std::vector<uint8_t> &d, uint32_t &off, const uint8_t *x, uint32_t n, uint32_t align)
{
	if (n + 1 <= 127)
	{
		d.resize(off + 1 + n, 0);
		d[off] = static_cast<uint8_t>(((n + 1) << 1) | 1);
		memcpy(d.data() + off + 1, x, n);
		off += 1 + n;
		return;
	}
	off = align_to(off, align);
	d.resize(off + 4 + n, 0);
	uint32_t h = (n + 4) << 2;
	memcpy(d.data() + off, &h, 4);
	memcpy(d.data() + off + 4, x, n);
	off += 4 + n;
}

/* Row i of the case as a heap tuple (header, bitmap, data). */
std::vector<uint8_t>
tuple_of(const QCase &c, const Layout &L, uint64_t i)
{
	int natts = L.tuple.natts;
	std::vector<bool> isnull(natts, false);
	bool hasnull = false;
	std::vector<uint8_t> data;
	uint32_t off = 0;

	for (size_t k = 0; k < c.cols.size(); k++)
	{
		isnull[L.atts[k].first] = i % 11 == 0;
		isnull[L.atts[k].attribute] = c.cols[k].is_null(i);
	}
	for (int a = 0; a < natts; a++)
		hasnull = hasnull || isnull[a];
	for (size_t k = 0; k < c.cols.size(); k++)
	{
		const ColumnAtts &ca = L.atts[k];

		if (!isnull[ca.first])
		{
			data.resize(off + 1, 0);
			data[off++] = static_cast<uint8_t>(0x41 + (i + k) % 26);
		}
		if (ca.varlena >= 0)
		{
			uint8_t fill[130];
			uint32_t n = i % 97 == 0 ? 130 : 1 + (i + k) % 6;

			memset(fill, 'f', sizeof(fill));
			put_varlena(data, off, fill, n, 4);
		}
		if (isnull[ca.attribute])
			continue;
		if (c.cols[k].bytes)
		{
			uint8_t b[16];
			uint32_t n = 16;

			memcpy(b, &c.cols[k].w[2 * i], 16);
			while (n > 0 && b[n - 1] == 0)
				n--;
			put_varlena(data, off, b, n, 4);
		}
		else
		{
			off = align_to(off, 8);
			data.resize(off + 8, 0);
			memcpy(data.data() + off, &c.cols[k].w[i], 8);
			off += 8;
		}
	}

	uint32_t hoff = align_to(23 + (hasnull ? (natts + 7) / 8 : 0), 8);
	std::vector<uint8_t> t(hoff + data.size(), 0);
	uint16_t infomask2 = static_cast<uint16_t>(natts), infomask = hasnull ? 1 : 0;

	memcpy(t.data() + 18, &infomask2, 2);
	memcpy(t.data() + 20, &infomask, 2);
	t[22] = static_cast<uint8_t>(hoff);
	for (int a = 0; a < natts && hasnull; a++)
		if (!isnull[a])
			t[23 + a / 8] |= static_cast<uint8_t>(1u << (a % 8));
	memcpy(t.data() + hoff, data.data(), data.size());
	return t;
}

/* A page being filled: line pointers up from the header, tuples down from the end. */
struct PageFill
{
	std::vector<uint8_t> page = std::vector<uint8_t>(kPage, 0);
	uint32_t lower = 24, upper = kPage, nitems = 0;

	/* the tuple's line pointer number, or 0 when it does not fit */
	uint32_t add(const std::vector<uint8_t> &t)
	{
		uint32_t need = align_to(static_cast<uint32_t>(t.size()), 8);

		if (nitems >= kMaxTuples || upper < lower + 4 + need)
			return 0;
		upper -= need;
		memcpy(page.data() + upper, t.data(), t.size());
		uint32_t lp = upper | (1u << 15) | (static_cast<uint32_t>(t.size()) << 17);
		memcpy(page.data() + lower, &lp, 4);
		lower += 4;
		return ++nitems;
	}
};

} /* namespace */

GpuopsQueryTuple
pages_tuple(const QCase &c)
{
	return layout_of(c).tuple;
}

void
pages_batches(const QCase &c, const std::function<void(GpuopsQueryBatch &)> &add)
{
	Layout L = layout_of(c);
	uint64_t i = 0, stored = 0;

	do
	{
		std::vector<uint8_t> pages;
		std::vector<uint32_t> first_row; /* of each closed page */
		std::vector<uint16_t> lineno;
		PageFill p;
		uint32_t rows = 0, page_first = 0;
		auto close_page = [&] {
			if (p.nitems == 0)
				return;
			pages.insert(pages.end(), p.page.begin(), p.page.end());
			first_row.push_back(page_first);
			p = PageFill();
			page_first = rows;
		};

		while (i < c.n && rows < c.batch_rows)
		{
			/* a tuple no snapshot sees: stored, not listed */
			if (stored++ % 9 == 8 && p.add(tuple_of(c, L, i)) > 0)
				continue;
			std::vector<uint8_t> t = tuple_of(c, L, i);
			uint32_t ln = p.add(t);

			if (ln == 0)
			{
				close_page();
				ln = p.add(t);
				if (ln == 0)
					throw std::runtime_error("a tuple larger than a page");
			}
			lineno.push_back(static_cast<uint16_t>(ln));
			rows++;
			i++;
		}
		close_page();
		first_row.push_back(rows);
		lineno.push_back(0);
		pages.resize(pages.size() + kPage, 0); /* a valid pointer also for no page */

		GpuopsQueryPages P;
		GpuopsQueryBatch b;
		std::vector<uint32_t> index;

		memset(&P, 0, sizeof(P));
		P.npages = static_cast<uint32_t>(first_row.size() - 1);
		P.page_size = kPage;
		P.pages = pages.data();
		P.first_row = first_row.data();
		P.lineno = lineno.data();
		if (c.in_place)
		{
			uint8_t *pool = page_pool();

			if (P.npages > kPoolPages)
				throw std::runtime_error("a batch of more pages than the pool holds");
			/* page k at an odd stride through the pool: out of order, none twice */
			for (uint32_t k = 0; k < P.npages; k++)
			{
				index.push_back((k * 7919u + i) % kPoolPages);
				memcpy(pool + (size_t) index.back() * kPage, pages.data() + (size_t) k * kPage,
					   kPage);
			}
			index.push_back(0); /* a valid pointer also for no page */
			P.pages = nullptr;
			P.base = pool;
			P.index = index.data();
		}
		memset(&b, 0, sizeof(b));
		b.nrows = rows;
		b.cols.ncols = static_cast<int>(c.cols.size());
		b.cols.nrows = rows;
		b.pages = &P;
		add(b);
		/* the backend must have copied them */
		std::fill(pages.begin(), pages.end(), 0x5a);
		for (uint32_t k = 0; c.in_place && k < P.npages; k++)
			memset(page_pool() + (size_t) index[k] * kPage, 0x5a, kPage);
		std::fill(lineno.begin(), lineno.end(), 0x5a5a);
	} while (i < c.n);
}

} /* namespace dt */
