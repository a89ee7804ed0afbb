/*
 * query_cpu.cpp
 *    The CPU twin of the query block backend (gpuops_query.h): each row's
 *    qual, packed group key and aggregate leaves as the CUDA kernel computes
 *    them (query_common.hpp), the groups in a host hash table keyed by the
 *    packed words, every state folded in row order (so a float sum is the
 *    serial loop's).  Serves gpuops.device = cpu and the fallback when the
 *    device fails, so it has no device budget to keep to.
 *
 *    The twin stops at the first row that escapes: rows are taken in
 *    order, so that row is the least, and the groups are incomplete from
 *    there on anyway.
 */
#include <chrono>
#include <vector>

#include "backend_tables.hpp"
#include "device_common.hpp"
#include "page_deform.hpp"
#include "query_common.hpp"
#include "query_dims.hpp"

namespace gpuops {
namespace {

/* One row of a batch as the interpreter and the key packing read it. */
struct BatchRow
{
	const GpuopsQueryBatch *b;
	uint64_t i;

	uint64_t word(int c) const { return b->cols.words[c][i]; }
	bool null(int c) const { return b->cols.nulls[c] && b->cols.nulls[c][i]; }
	uint64_t bytes(int c, int j) const { return b->bytes16[c][2 * i + j]; }
};

struct CpuQuery
{
	GpuopsSettings settings;
	QueryLayout L;
	std::vector<GpuopsExprProgram> programs;
	std::vector<QueryDimHost> dims;
	QueryDims views = {};
	std::vector<uint32_t> slots;  /* open addressing: group + 1, 0 empty */
	std::vector<uint64_t> keys;	  /* key_words a group */
	std::vector<uint64_t> states; /* state_words a group */
	uint64_t ngroups = 0;
	bool finished = false;
	std::vector<GpuopsAggResult> results;
	GpuopsQueryStats stats = {};
	bool has_shape = false; /* pages batches come (spec->tuple) */
	PageShape shape;
	std::vector<uint64_t> page_words, page_bytes; /* a pages batch's columns */
	std::vector<uint8_t> page_nulls;
	/*
	 * The batch held over one add (GpuopsQueryPages.may_hold), as the CUDA
	 * engine holds one while the page service gathers it: the twin only
	 * adds it later, so that the caller's side (its pins kept, the slots
	 * released one add late, never waiting meanwhile) runs without a GPU.
	 */
	bool held = false;
	GpuopsQueryBatch held_batch;
	GpuopsQueryPages held_pages;

	/* the entry points (backend_tables.hpp) */
	CpuQuery(const GpuopsSettings *settings, const GpuopsQuerySpec *spec);
	GpuopsStatus query_add(const GpuopsQueryBatch *b);
	void add(const GpuopsQueryBatch *b);
	void add_held();
	void add_rows(const GpuopsQueryBatch *b, uint32_t nrows);
	uint32_t deform_pages(const GpuopsQueryBatch *b, GpuopsQueryBatch *cols, uint32_t *code);
	GpuopsStatus query_finish(uint64_t *ngroups_out);
	GpuopsStatus query_groups(const uint64_t **key_words, const GpuopsAggResult **results_out);
	void query_stats(GpuopsQueryStats *out) const;

	uint64_t group_of(const uint64_t *key);
	void grow();
};

CpuQuery::CpuQuery(const GpuopsSettings *settings, const GpuopsQuerySpec *spec)
{
	int nprograms = 0, repeated;
	uint64_t want = 16;
	const char *bad;

	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings->fault);
	this->settings = *settings;
	programs.resize(kQueryMaxPrograms);
	if ((bad = query_layout(*spec, &L, programs.data(), &nprograms)) != nullptr)
		fail(GPUOPS_ERR_INTERNAL, "bad query spec: %s", bad);
	programs.resize(nprograms);
	stats.escape_row = GPUOPS_QUERY_NO_ESCAPE;
	stats.escape_index = -1;
	if (spec->tuple != nullptr)
	{
		if ((bad = page_shape_init(*spec->tuple, spec->ncols, spec->bytes16, &shape)) != nullptr)
			fail(GPUOPS_ERR_INTERNAL, "bad query spec: %s", bad);
		has_shape = true;
	}
	repeated = query_dims_build(*spec, &dims);
	if (repeated >= 0)
	{
		/* a repeated key: the caller runs the block another way */
		stats.escape_row = 0;
		stats.escape_what = GPUOPS_QESC_DIM_KEY;
		stats.escape_index = repeated;
	}
	else
		for (int d = 0; d < spec->ndims; d++)
			views.d[d] = query_dim_view(dims[d]);
	/* the planner's estimate at half load, within reason: the table grows */
	while (want < 2 * spec->group_capacity && want < (1u << 20))
		want *= 2;
	slots.assign(want, 0);
	stats.key_words = static_cast<uint32_t>(L.key_words);
}

/* Doubles the table and places every group again. */
void
CpuQuery::grow()
{
	std::vector<uint32_t> bigger(slots.size() * 2, 0);
	uint64_t mask = bigger.size() - 1;

	for (uint64_t g = 0; g < ngroups; g++)
	{
		uint64_t pos = query_hash(&keys[g * L.key_words], L.key_words) & mask;

		while (bigger[pos] != 0)
			pos = (pos + 1) & mask;
		bigger[pos] = static_cast<uint32_t>(g + 1);
	}
	slots.swap(bigger);
	stats.grows++;
}

/* The group of a packed key, made (states at their start) when new. */
uint64_t
CpuQuery::group_of(const uint64_t *key)
{
	int kw = L.key_words;
	uint64_t mask = slots.size() - 1;
	uint64_t pos = query_hash(key, kw) & mask;

	for (;; pos = (pos + 1) & mask)
	{
		uint32_t s = slots[pos];

		if (s == 0)
			break;
		if (kw == 0 || memcmp(&keys[(s - 1) * static_cast<uint64_t>(kw)], key, kw * 8) == 0)
			return s - 1;
	}
	if (ngroups >= UINT32_MAX - 1)
		fail(GPUOPS_ERR_UNSUPPORTED, "query of more than %u groups", UINT32_MAX - 1);
	slots[pos] = static_cast<uint32_t>(ngroups + 1);
	keys.insert(keys.end(), key, key + kw);
	states.resize(states.size() + L.state_words);
	query_state_init(L, &states[ngroups * L.state_words]);
	ngroups++;
	/* at most half full, so every probe ends soon */
	if (2 * ngroups > slots.size())
		grow();
	return ngroups - 1;
}

/*
 * A pages batch's rows as columns (cols, over this backend's buffers):
 * returns how many rows come before the first value that escapes, whose
 * code goes to *code (kQueryPass: none escapes).
 */
uint32_t
CpuQuery::deform_pages(const GpuopsQueryBatch *b, GpuopsQueryBatch *cols, uint32_t *code)
{
	uint64_t n = b->nrows;
	PageOut o;

	page_words.resize(L.ncols * n + 1);
	page_nulls.resize(L.ncols * n + 1);
	page_bytes.resize(L.nbytes * n * 2 + 2);
	o = PageOut{page_words.data(), page_nulls.data(), page_bytes.data(), n};
	*cols = GpuopsQueryBatch{};
	cols->nrows = b->nrows;
	cols->cols.ncols = L.ncols;
	cols->cols.nrows = n;
	for (int c = 0; c < L.ncols; c++)
	{
		cols->cols.words[c] = page_words.data() + c * n;
		cols->cols.nulls[c] = page_nulls.data() + c * n;
		if (shape.bytes_slot[c] >= 0)
			cols->bytes16[c] = page_bytes.data() + shape.bytes_slot[c] * n * 2;
	}
	*code = kQueryPass;
	for (uint32_t pg = 0, i = 0; pg < b->pages->npages; pg++)
		for (i = b->pages->first_row[pg]; i < b->pages->first_row[pg + 1]; i++)
		{
			check_interrupt_every(i);
			*code = page_deform_row(shape, *b->pages, pg, i, o);
			if (*code != kQueryPass)
				return i;
		}
	return b->nrows;
}

GpuopsStatus
CpuQuery::query_add(const GpuopsQueryBatch *b)
{
	query_check_batch(L, b, has_shape, finished);
	if (b->nrows > 0 || !held)
		stats.batches++; /* (an empty one after a held batch only reads it) */
	add_held();
	if (b->pages != nullptr && b->pages->may_hold && b->pages->base != nullptr && b->nrows > 0)
	{
		held = true;
		held_batch = *b;
		held_pages = *b->pages;
		held_batch.pages = &held_pages;
		stats.pages_held = 1;
		return GPUOPS_OK;
	}
	add(b);
	return GPUOPS_OK;
}

/* The held batch added. */
void
CpuQuery::add_held()
{
	if (!held)
		return;
	held = false;
	stats.pages_held = 0;
	add(&held_batch);
}

/* One batch's rows through the qual, the lookups and the groups. */
void
CpuQuery::add(const GpuopsQueryBatch *b)
{
	auto t0 = std::chrono::steady_clock::now();

	if (b->pages != nullptr && stats.escape_row == GPUOPS_QUERY_NO_ESCAPE)
	{
		GpuopsQueryBatch cols;
		uint32_t code;
		uint32_t good = deform_pages(b, &cols, &code);

		/* the rows before the value that escaped: one of them may escape first */
		add_rows(&cols, good);
		if (stats.escape_row == GPUOPS_QUERY_NO_ESCAPE && code != kQueryPass)
		{
			stats.escape_row = stats.rows + good;
			stats.escape_what = query_escape_what(code);
			stats.escape_index = query_escape_index(code);
		}
	}
	else if (b->pages == nullptr)
		add_rows(b, b->nrows);
	stats.rows += b->nrows;
	stats.kernel_ms += ms_since(t0);
}

/* Rows 0 .. nrows - 1 of a columns batch (stats.rows: the batch's first row). */
void
CpuQuery::add_rows(const GpuopsQueryBatch *b, uint32_t nrows)
{
	uint64_t key[GPUOPS_QUERY_MAX_KEY_WORDS];

	for (uint32_t i = 0; i < nrows && stats.escape_row == GPUOPS_QUERY_NO_ESCAPE; i++)
	{
		BatchRow row{b, i};
		uint32_t at[GPUOPS_QUERY_MAX_DIMS];
		JoinedRow<BatchRow> jr{row, L, views.d, at};
		uint64_t r = stats.rows + i;
		uint32_t code;

		check_interrupt_every(i);
		code = query_row_join(L, programs.data(), views.d, row, at);
		if (code == kQuerySkip)
			continue;
		if (code == kQueryPass)
			code = query_row_key(L, programs.data(), jr, key);
		if (code == kQueryPass)
		{
			/* the group is made by its first row that the qual keeps, as on the device */
			uint64_t g = group_of(key);
			uint64_t *s = states.data() + g * L.state_words;

			stats.passed++;
			for (int a = 0; a < L.naggs && code < kQueryEscape; a++)
			{
				uint64_t lo = 0, hi = 0;

				code = query_row_leaf(L, programs.data(), a, jr, &lo, &hi);
				if (code == kQueryPass)
					query_accumulate(L, a, lo, hi, s + L.state_off[a]);
			}
		}
		if (code >= kQueryEscape)
		{
			stats.escape_row = r;
			stats.escape_what = query_escape_what(code);
			stats.escape_index = query_escape_index(code);
		}
	}
}


GpuopsStatus
CpuQuery::query_finish(uint64_t *ngroups_out)
{
	add_held();
	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	results.resize(ngroups * L.naggs);
	for (uint64_t g = 0; g < ngroups; g++)
	{
		check_interrupt_every(g);
		for (int a = 0; a < L.naggs; a++)
			query_result(L, a, &states[g * L.state_words + L.state_off[a]],
						 &results[g * L.naggs + a]);
	}
	finished = true;
	/* what query_groups hands over (gpuops_device.h): the group keys and results */
	stats.bytes_from_device += keys.size() * sizeof(uint64_t) +
		results.size() * sizeof(GpuopsAggResult);
	stats.groups = ngroups;
	stats.capacity = slots.size();
	*ngroups_out = ngroups;
	return GPUOPS_OK;
}

GpuopsStatus
CpuQuery::query_groups(const uint64_t **key_words, const GpuopsAggResult **results_out)
{
	if (!finished)
		fail(GPUOPS_ERR_INTERNAL, "query groups before finish");
	*key_words = keys.data();
	*results_out = results.data();
	return GPUOPS_OK;
}

void
CpuQuery::query_stats(GpuopsQueryStats *out) const
{
	*out = stats;
	out->groups = ngroups;
	out->capacity = slots.size();
}

constexpr GpuopsQueryBackend cpu_query_backend = shell::make_query_backend<CpuQuery>("cpu");

} /* namespace */
} /* namespace gpuops */

extern "C" const GpuopsQueryBackend *
gpuops_cpu_query_backend(void) noexcept
{
	return &gpuops::cpu_query_backend;
}
