/*
 * sort_test.cpp
 *    The sort backend (GpuopsBackend): the twin's order against
 *    std::stable_sort under PostgreSQL's comparison of each key kind (the
 *    order key_normalize.hpp promises: NaNs equal and above +Infinity, -0
 *    equal to 0, intervals by span, DESC and NULLS FIRST/LAST per key,
 *    ties in input order), its tie bitmap against the comparison, and the
 *    CUDA backend's order and ties against the twin's.  With parked rows
 *    (sort_park_*) the order and ties are read from the chunks of rows
 *    that come back, each row checked byte for byte.
 */
#include "sort_keys.h"

#include <algorithm>
#include <numeric>

namespace dt {
namespace {

struct SortCase
{
	std::vector<KeyCol> keys;
	uint64_t n = 0;
	int tie_keys = 0;		  /* > 0: ties over the first tie_keys keys */
	size_t budget = 0;		  /* device_memory_limit; 0: none */
	uint32_t batch_rows = 0;  /* submit at most this many rows at a time; 0: fill */
	bool expect_runs = false; /* the budget must cut the sort into runs */
	bool park = false;		  /* park rows (sort_park_*) and read the order from them */
};

struct SortResult
{
	uint64_t parked_bytes = 0; /* the chunks' bytes, with parked rows */
	std::vector<uint32_t> order;
	std::vector<uint8_t> ties;
	GpuopsStats stats;
};

uint32_t
tie_words(const SortCase &c)
{
	uint32_t words = 0;

	for (int k = 0; k < c.tie_keys; k++)
		words += 1 + gpuops_key_value_words(c.keys[k].kind);
	return words;
}

/* A parked row's bytes: length, row number, then filler made from both (8 to 60 bytes). */
uint32_t
park_len(uint32_t row)
{
	return 8 + (row * 7u) % 53;
}

uint8_t
park_filler(uint32_t row, uint32_t j)
{
	return static_cast<uint8_t>(row * 31u + j * 7u + 1);
}

/* Parks rows [first, first + n) as the protocol asks, a buffer at a time. */
void
park_rows(const GpuopsBackend *be, GpuopsSort *sort, uint64_t first, uint32_t n)
{
	uint32_t done = 0;

	while (done < n)
	{
		GpuopsParkBuffer buf;
		uint64_t bytes = 0;
		uint32_t rows = 0;

		memset(&buf, 0, sizeof(buf));
		wait_pending([&]() { return be->sort_park_stage(sort, &buf); }, "sort_park_stage");
		while (done < n && rows < buf.capacity_rows)
		{
			uint32_t row = static_cast<uint32_t>(first + done);
			uint32_t len = park_len(row);
			uint64_t padded = (len + 7u) & ~7u;

			if (bytes + padded > buf.capacity)
				break;
			memset(buf.data + bytes, 0, padded);
			memcpy(buf.data + bytes, &len, 4);
			memcpy(buf.data + bytes + 4, &row, 4);
			for (uint32_t j = 8; j < len; j++)
				buf.data[bytes + j] = park_filler(row, j);
			buf.offsets[rows++] = static_cast<uint32_t>(bytes);
			bytes += padded;
			done++;
		}
		if (rows == 0)
			throw CallFailed("sort_park_stage gave a buffer too small for a row");
		DT_CALL(be->sort_park_submit(sort, bytes, rows));
	}
}

/*
 * The parked rows back, in chunks: their row numbers are the order, each
 * row's bytes are checked, and the chunks' tie bits make the ties bitmap.
 */
void
read_parked(const GpuopsBackend *be, GpuopsSort *sort, uint64_t n, bool with_ties,
			std::vector<uint32_t> &order, std::vector<uint8_t> &ties, uint64_t &bytes)
{
	order.clear();
	if (with_ties)
		ties.assign((n + 7) / 8, 0);
	for (;;)
	{
		GpuopsParkChunk ch;
		size_t off = 0;

		DT_CALL(be->sort_park_next(sort, &ch));
		if (ch.rows == 0)
			break;
		bytes += ch.bytes;
		if (with_ties != (ch.ties != nullptr))
			throw CallFailed("a chunk's ties do not match the spec's tie_words");
		for (uint32_t i = 0; i < ch.rows; i++)
		{
			uint32_t len, row;

			if (off + 8 > ch.bytes)
				throw CallFailed("a chunk's rows overrun its bytes");
			memcpy(&len, ch.data + off, 4);
			memcpy(&row, ch.data + off + 4, 4);
			if (row >= n || len != park_len(row))
				throw CallFailed("parked row " + std::to_string(order.size()) + " is corrupt");
			for (uint32_t j = 8; j < len; j++)
				if (ch.data[off + j] != park_filler(row, j))
					throw CallFailed("parked row " + std::to_string(row) + " changed at byte " +
									 std::to_string(j));
			if (with_ties)
			{
				uint64_t b = ch.ties_bit0 + i;

				if ((ch.ties[b >> 5] >> (b & 31)) & 1u)
					set_bit(ties, order.size());
			}
			order.push_back(row);
			off += (len + 7u) & ~7u;
		}
		if (off != ch.bytes)
			throw CallFailed("a chunk's bytes do not add up");
	}
	if (order.size() != n)
		throw CallFailed("parked rows came back as " + std::to_string(order.size()) + " of " +
						 std::to_string(n));
}

/* The sort protocol: begin, stage/fill/submit per batch, finish, poll, result, ties, end. */
SortResult
run_sort(const GpuopsBackend *be, const SortCase &c)
{
	GpuopsSortSpec spec;
	GpuopsSettings st = settings_for(c.budget);
	EndGuard<GpuopsSort> sort(be->sort_end);
	SortResult r;
	uint64_t done = 0;

	memset(&spec, 0, sizeof(spec));
	spec.nkeys = static_cast<int>(c.keys.size());
	for (int k = 0; k < spec.nkeys; k++)
		spec.keys[k] = GpuopsSortKey{c.keys[k].kind, c.keys[k].desc, c.keys[k].nulls_first};
	spec.tie_words = tie_words(c);
	DT_CALL(be->sort_begin(&st, &spec, &sort.obj));
	while (done < c.n)
	{
		GpuopsStageBuffer buf;
		uint32_t m;

		memset(&buf, 0, sizeof(buf));
		wait_pending([&]() { return be->sort_stage(sort.obj, &buf); }, "sort_stage");
		if (buf.capacity_rows == 0)
			throw CallFailed("sort_stage gave a buffer of 0 rows");
		m = static_cast<uint32_t>(std::min<uint64_t>(buf.capacity_rows, c.n - done));
		if (c.batch_rows)
			m = std::min(m, c.batch_rows);
		for (int k = 0; k < spec.nkeys; k++)
		{
			uint32_t w = gpuops_key_raw_width(c.keys[k].kind);
			std::vector<uint8_t> bm = bitmap_of(c.keys[k].null, done, m);

			memcpy(buf.values[k], &c.keys[k].raw[done * w], static_cast<size_t>(m) * w);
			memcpy(buf.nulls[k], bm.data(), bm.size());
		}
		DT_CALL(be->sort_submit(sort.obj, m));
		if (c.park)
			park_rows(be, sort.obj, done, m);
		done += m;
	}
	DT_CALL(be->sort_finish(sort.obj));
	wait_pending([&]() { return be->sort_poll(sort.obj); }, "sort_poll");
	if (c.park)
	{
		read_parked(be, sort.obj, c.n, spec.tie_words != 0, r.order, r.ties, r.parked_bytes);
		be->sort_stats(sort.obj, &r.stats);
		return r;
	}
	r.order.resize(c.n + 1); /* + 1: a valid pointer for an empty result */
	DT_CALL(be->sort_result(sort.obj, r.order.data(), c.n));
	r.order.resize(c.n);
	if (spec.tie_words)
	{
		r.ties.assign((c.n + 7) / 8 + 1, 0);
		DT_CALL(be->sort_ties(sort.obj, r.ties.data(), c.n));
		r.ties.resize((c.n + 7) / 8);
	}
	be->sort_stats(sort.obj, &r.stats);
	return r;
}

std::string
show_row(const uint32_t &r)
{
	return "row " + std::to_string(r);
}

/* Tie bits 1..n-1 of got against want; bit 0 (no predecessor) is not compared. */
std::string
compare_ties(const std::vector<uint8_t> &got, const std::vector<uint8_t> &want, uint64_t n)
{
	for (uint64_t i = 1; i < n; i++)
		if (get_bit(got.data(), i) != get_bit(want.data(), i))
			return "tie bit " + std::to_string(i) + " is " +
				std::to_string(get_bit(got.data(), i)) + ", expected " +
				std::to_string(get_bit(want.data(), i));
	return "";
}

/* The twin against std::stable_sort and the comparison; then CUDA against the twin. */
void
check_sort(Outcome &out, const SortCase &c)
{
	std::vector<uint32_t> want(c.n);
	std::vector<uint8_t> want_ties((c.n + 7) / 8, 0);
	int nkeys = static_cast<int>(c.keys.size());

	std::iota(want.begin(), want.end(), 0u);
	std::stable_sort(want.begin(), want.end(),
					 [&](uint32_t x, uint32_t y) { return cmp_rows(c.keys, nkeys, x, y) < 0; });
	for (uint64_t i = 1; i < c.n && c.tie_keys; i++)
		if (cmp_rows(c.keys, c.tie_keys, want[i - 1], want[i]) == 0)
			set_bit(want_ties, i);

	SortResult cpu = run_sort(engines.cpu->sort, c);

	out.cpu = first_difference<uint32_t>(cpu.order, want, show_row);
	if (out.cpu.empty() && c.tie_keys)
		out.cpu = compare_ties(cpu.ties, want_ties, c.n);
	if (out.cpu.empty() && cpu.stats.rows != c.n)
		out.cpu = "stats.rows " + std::to_string(cpu.stats.rows);
	if (out.cpu.empty() && c.expect_runs && cpu.stats.runs < 2)
		out.cpu = "the budget did not cut runs (stats.runs " + std::to_string(cpu.stats.runs) + ")";
	/*
	 * bytes_from_device (gpuops_device.h): the twin counts the row numbers
	 * and tie bits it hands over; the CUDA backend copies at least those
	 * (a single run's exactly; runs bring their rows and key words back)
	 */
	uint64_t handed = c.n * sizeof(uint32_t) + (c.tie_keys ? (c.n + 7) / 8 : 0);

	/* parked rows: the chunks' rows (and their tie words, not counted here) instead */
	if (c.park)
		handed = cpu.parked_bytes;
	if (out.cpu.empty() &&
		(c.park ? cpu.stats.bytes_from_device < handed : cpu.stats.bytes_from_device != handed))
		out.cpu = "stats.bytes_from_device " + std::to_string(cpu.stats.bytes_from_device) +
			", expected " + std::to_string(handed);
	if (!engines.cuda)
		return;
	begin_cuda_side(out);

	SortResult gpu = run_sort(engines.cuda->sort, c);

	out.cuda = first_difference<uint32_t>(gpu.order, cpu.order, show_row);
	if (out.cuda.empty() && c.tie_keys)
		out.cuda = compare_ties(gpu.ties, cpu.ties, c.n);
	if (out.cuda.empty() && gpu.stats.bytes_from_device < handed)
		out.cuda = "stats.bytes_from_device " + std::to_string(gpu.stats.bytes_from_device) +
			", at least " + std::to_string(handed) + " expected";
	if (c.expect_runs && gpu.stats.runs != cpu.stats.runs)
		out.note = "cuda cut " + std::to_string(gpu.stats.runs) + " runs, cpu " +
			std::to_string(cpu.stats.runs);
}


/* One key column's recipe: built when the case runs, from the case's seed. */
struct KeyRecipe
{
	GpuopsKeyKind kind;
	int desc;
	int nulls_first;
	Dist dist;
	double null_frac;
};

struct Recipe
{
	std::string what; /* the edge case, for the title */
	std::vector<KeyRecipe> keys;
	uint64_t n;
	int tie_keys;
	size_t budget;
	uint32_t batch_rows;
	bool expect_runs;
};

/* "int8 desc nulls first + float8 asc nulls last" */
std::string
describe_keys(const Recipe &r)
{
	std::string s;

	for (const KeyRecipe &k : r.keys)
	{
		if (!s.empty())
			s += " + ";
		s += std::string(kind_name(k.kind)) + (k.desc ? " desc" : " asc") +
			(k.nulls_first ? " nulls first" : " nulls last");
	}
	return s;
}

SortCase
make_case(const Recipe &r, uint64_t seed)
{
	SortCase c;
	Rng rng(seed);

	for (const KeyRecipe &k : r.keys)
		c.keys.push_back(make_key(k.kind, k.desc, k.nulls_first, r.n, k.dist, k.null_frac, rng));
	c.n = r.n;
	c.tie_keys = r.tie_keys;
	c.budget = r.budget;
	c.batch_rows = r.batch_rows;
	c.expect_runs = r.expect_runs;
	return c;
}

void
run_recipe(const Recipe &r, uint64_t seed)
{
	std::string title = "sort " + describe_keys(r) + ", " + r.what + (r.what.empty() ? "" : ", ") +
		std::to_string(r.n) + (r.n == 1 ? " row" : " rows") + (r.tie_keys ? ", ties" : "");

	/* the input is made inside the case: only for the cases selected */
	run_case(title, [&](Outcome &out) { check_sort(out, make_case(r, seed)); });
}

} /* namespace */

void
sort_tests()
{
	const GpuopsKeyKind I2 = GPUOPS_KEY_INT2, I4 = GPUOPS_KEY_INT4, I8 = GPUOPS_KEY_INT8,
						F4 = GPUOPS_KEY_FLOAT4, F8 = GPUOPS_KEY_FLOAT8, B = GPUOPS_KEY_BOOL,
						U = GPUOPS_KEY_UUID, IV = GPUOPS_KEY_INTERVAL, BY = GPUOPS_KEY_BYTES16,
						NA = GPUOPS_KEY_NUMERIC_ABBREV, AU = GPUOPS_KEY_ABBREV_UNSIGNED;
	const size_t MB = 1u << 20;
	const std::vector<Recipe> recipes = {
		{"empty", {{I4, 0, 0, UNIFORM, 0}}, 0, 1, 0, 0, false},
		{"one row", {{I4, 0, 0, UNIFORM, 0}}, 1, 1, 0, 0, false},
		{"one NULL row", {{I8, 1, 1, UNIFORM, 1.0}}, 1, 1, 0, 0, false},
		{"all NULL", {{I8, 0, 0, UNIFORM, 1.0}}, 10000, 1, 0, 0, false},
		{"all NULL, two keys",
		 {{I4, 1, 1, UNIFORM, 1.0}, {F8, 0, 0, UNIFORM, 1.0}},
		 10000,
		 2,
		 0,
		 0,
		 false},
		{"int edges",
		 {{I8, 0, 0, SPECIAL, 0.1}, {I4, 1, 0, SPECIAL, 0.1}, {I2, 0, 1, SPECIAL, 0.1}},
		 20000,
		 3,
		 0,
		 0,
		 false},
		{"duplicates, batches of 4999", {{I4, 0, 1, DUPLICATES, 0.05}}, 200000, 1, 0, 4999, false},
		{"skew (one key in half the rows)", {{I8, 1, 0, SKEW, 0.05}}, 200000, 1, 0, 0, false},
		{"NaN/-0/inf", {{F8, 0, 0, SPECIAL, 0.05}}, 200000, 1, 0, 0, false},
		{"NaN/-0/inf", {{F8, 1, 1, SPECIAL, 0.05}}, 200000, 0, 0, 0, false},
		{"NaN/-0/inf", {{F4, 1, 0, SPECIAL, 0.05}}, 100000, 1, 0, 0, false},
		{"duplicates",
		 {{I2, 0, 1, DUPLICATES, 0.1}, {B, 1, 0, UNIFORM, 0.1}},
		 100000,
		 2,
		 0,
		 0,
		 false},
		{"duplicates",
		 {{I4, 1, 1, DUPLICATES, 0.1}, {F8, 0, 0, SPECIAL, 0.1}, {I8, 1, 0, DUPLICATES, 0.1}},
		 300000,
		 1,
		 0,
		 0,
		 false},
		{"duplicates",
		 {{U, 0, 0, DUPLICATES, 0.05}, {BY, 1, 1, DUPLICATES, 0.05}},
		 50000,
		 2,
		 0,
		 0,
		 false},
		{"equal spans", {{IV, 0, 0, DUPLICATES, 0.05}}, 50000, 1, 0, 0, false},
		{"wide spans", {{IV, 1, 1, UNIFORM, 0.05}}, 50000, 1, 0, 0, false},
		{"", {{NA, 1, 0, UNIFORM, 0.05}, {AU, 0, 0, UNIFORM, 0}}, 50000, 0, 0, 0, false},
		{"4 MB budget (runs merged)", {{I8, 0, 0, DUPLICATES, 0.05}}, 500000, 1, 4 * MB, 0, true},
		{"2 MB budget (runs merged)",
		 {{F8, 1, 0, SPECIAL, 0.05}, {I4, 0, 1, UNIFORM, 0.05}},
		 300000,
		 1,
		 2 * MB,
		 0,
		 true},
		{"", {{I8, 1, 1, UNIFORM, 0.01}}, 1000000, 0, 0, 0, false},
		{"", {{I4, 0, 0, UNIFORM, 0.01}}, 2000000, 1, 0, 0, false},
	};
	uint64_t seed = 1000;

	for (const Recipe &r : recipes)
		run_recipe(r, seed++);

	/*
	 * Parked rows: chunks of 4 MB (settings_for's batch), ties that the
	 * chunk ends must not split, runs merged under a budget, nothing at all.
	 */
	const std::vector<Recipe> parked = {
		{"parked, empty", {{I4, 0, 0, UNIFORM, 0}}, 0, 1, 0, 0, false},
		{"parked, one row", {{I8, 1, 0, UNIFORM, 0}}, 1, 1, 0, 0, false},
		{"parked, duplicates, batches of 4999",
		 {{I4, 0, 1, DUPLICATES, 0.05}},
		 300000,
		 1,
		 0,
		 4999,
		 false},
		{"parked, skew", {{I8, 1, 0, SKEW, 0.05}}, 400000, 1, 0, 0, false},
		{"parked, no ties asked", {{F8, 0, 0, SPECIAL, 0.05}}, 200000, 0, 0, 0, false},
		{"parked, 32 MB budget (runs merged)",
		 {{I8, 0, 0, DUPLICATES, 0.05}},
		 300000,
		 1,
		 32 * MB,
		 0,
		 true},
	};

	for (const Recipe &r : parked)
	{
		std::string title = "sort " + describe_keys(r) + ", " + r.what + ", " +
			std::to_string(r.n) + (r.n == 1 ? " row" : " rows") + (r.tie_keys ? ", ties" : "");
		uint64_t s = seed++;

		run_case(title, [&](Outcome &out) {
			SortCase c = make_case(r, s);

			c.park = true;
			check_sort(out, c);
		});
	}
}

} /* namespace dt */
