/*
 * topn_test.cpp
 *    The top-N backend (GpuopsTopnBackend): the bound first rows of a
 *    stream by int8 and float8 keys, ASC and DESC, NULLS FIRST and LAST,
 *    with many ties (the payload, compared last, decides among them), in
 *    batches of uneven sizes, and with a capacity small enough that the
 *    candidates are cut many times while the rows come (rows in order,
 *    reversed, random).  The twin's payloads must be the reference's: every
 *    row sorted by std::stable_sort with a comparator written out here on
 *    the raw values; the CUDA backend's must be the twin's.
 */
#include "device_test.h"

#include <algorithm>
#include <numeric>

namespace dt {
namespace {

enum Input
{
	RANDOM,
	ASCENDING, /* every row after the first cut loses to it */
	DESCENDING /* every row beats the cut: a cut at every capacity's worth */
};

struct TopnCase
{
	std::string what;
	uint64_t rows;
	uint64_t bound;
	uint64_t capacity; /* the spec's (the backend raises it to its minimum) */
	int nkeys;
	bool floats; /* key 1 is a float8 (else both int8) */
	bool desc0, nulls_first0, desc1, nulls_first1;
	double null_frac;
	int64_t distinct; /* key 0's values (ties) */
	Input input;
	uint32_t batch; /* rows per batch, the last one shorter */
};

struct Rows
{
	std::vector<uint64_t> w[2];
	std::vector<uint8_t> n[2];
	std::vector<uint64_t> pay;
};

Rows
make_rows(const TopnCase &c, Rng &rng)
{
	Rows r;

	for (int k = 0; k < 2; k++)
	{
		r.w[k].resize(c.rows);
		r.n[k].resize(c.rows);
	}
	r.pay.resize(c.rows);
	for (uint64_t i = 0; i < c.rows; i++)
	{
		int64_t v0 = c.input == RANDOM ? uniform(rng, 0, c.distinct - 1)
			: c.input == ASCENDING	   ? static_cast<int64_t>(i * c.distinct / c.rows)
								   : static_cast<int64_t>((c.rows - 1 - i) * c.distinct / c.rows);

		r.w[0][i] = static_cast<uint64_t>(
			chance(rng, 0.01) ? (chance(rng, 0.5) ? INT64_MAX : INT64_MIN) : v0 - c.distinct / 2);
		r.n[0][i] = chance(rng, c.null_frac);
		r.w[1][i] = c.floats
			? double_bits(chance(rng, 0.2) ? special_double(rng)
										   : static_cast<double>(uniform(rng, -50, 50)) / 4)
			: static_cast<uint64_t>(uniform(rng, -3, 3));
		r.n[1][i] = chance(rng, c.null_frac);
		/* payloads unique, in no order (a TID's word in GpuTopN) */
		r.pay[i] = (static_cast<uint64_t>(uniform(rng, 0, 1 << 20)) << 20) | i;
	}
	return r;
}

/* -1, 0, 1: key k of rows a and b in the case's order, on the raw values */
int
cmp_key(const TopnCase &c, const Rows &r, int k, uint64_t a, uint64_t b)
{
	bool desc = k == 0 ? c.desc0 : c.desc1;
	bool nf = k == 0 ? c.nulls_first0 : c.nulls_first1;
	bool na = r.n[k][a] != 0, nb = r.n[k][b] != 0;
	int v;

	if (na || nb)
		return na && nb ? 0 : (na ? (nf ? -1 : 1) : (nf ? 1 : -1));
	if (k == 1 && c.floats)
		v = pg_float_cmp(as_double(r.w[k][a]), as_double(r.w[k][b]));
	else
	{
		int64_t x = static_cast<int64_t>(r.w[k][a]), y = static_cast<int64_t>(r.w[k][b]);

		v = x < y ? -1 : x > y ? 1 : 0;
	}
	return desc ? -v : v;
}

std::vector<uint64_t>
reference(const TopnCase &c, const Rows &r)
{
	std::vector<uint64_t> idx(c.rows), out;

	std::iota(idx.begin(), idx.end(), uint64_t(0));
	std::stable_sort(idx.begin(), idx.end(), [&](uint64_t a, uint64_t b) {
		for (int k = 0; k < c.nkeys; k++)
		{
			int v = cmp_key(c, r, k, a, b);

			if (v != 0)
				return v < 0;
		}
		return r.pay[a] < r.pay[b];
	});
	for (uint64_t i = 0; i < std::min(c.rows, c.bound); i++)
		out.push_back(r.pay[idx[i]]);
	return out;
}

std::vector<uint64_t>
run_topn(const GpuopsTopnBackend *be, const TopnCase &c, const Rows &r, GpuopsTopnStats *stats)
{
	GpuopsSettings settings = settings_for(0);
	GpuopsTopnSpec spec;
	EndGuard<GpuopsTopn> t(be->topn_end);
	const uint64_t *payload = nullptr;
	uint64_t n = 0;

	memset(&spec, 0, sizeof(spec));
	spec.nkeys = c.nkeys;
	spec.keys[0] = {GPUOPS_KEY_INT8, c.desc0, c.nulls_first0};
	spec.keys[1] = {c.floats ? GPUOPS_KEY_FLOAT8 : GPUOPS_KEY_INT8, c.desc1, c.nulls_first1};
	spec.bound = c.bound;
	spec.capacity = c.capacity;
	DT_CALL(be->topn_begin(&settings, &spec, &t.obj));
	for (uint64_t first = 0; first < c.rows; first += c.batch)
	{
		GpuopsTopnBatch b;

		memset(&b, 0, sizeof(b));
		b.nrows = static_cast<uint32_t>(std::min<uint64_t>(c.batch, c.rows - first));
		for (int k = 0; k < c.nkeys; k++)
		{
			b.words[k] = r.w[k].data() + first;
			/* a batch without NULLs may say so */
			b.nulls[k] = c.null_frac > 0 ? r.n[k].data() + first : nullptr;
		}
		b.payload = r.pay.data() + first;
		DT_CALL(be->topn_add(t.obj, &b));
	}
	DT_CALL(be->topn_finish(t.obj, &n));
	DT_CALL(be->topn_result(t.obj, &payload));
	be->topn_stats(t.obj, stats);
	return std::vector<uint64_t>(payload, payload + n);
}

std::string
show_payload(const uint64_t &p)
{
	return std::to_string(p & ((1u << 20) - 1)) + " (row)";
}

void
check_topn(Outcome &out, const TopnCase &c, uint64_t seed)
{
	Rng rng(seed);
	Rows r = make_rows(c, rng);
	std::vector<uint64_t> want = reference(c, r);
	GpuopsTopnStats cs{}, gs{};
	std::vector<uint64_t> cpu = run_topn(engines.cpu->topn, c, r, &cs);

	out.cpu = first_difference<uint64_t>(cpu, want, show_payload);
	if (out.cpu.empty() && cs.rows != c.rows)
		out.cpu = "stats: " + std::to_string(cs.rows) + " rows added";
	out.info = std::to_string(cs.kept) + " kept, " + std::to_string(cs.cuts) + " cuts";
	if (!engines.cuda)
		return;
	begin_cuda_side(out);

	std::vector<uint64_t> gpu = run_topn(engines.cuda->topn, c, r, &gs);

	out.cuda = first_difference<uint64_t>(gpu, cpu, show_payload);
	if (out.cuda.empty() && gs.rows != c.rows)
		out.cuda = "stats: " + std::to_string(gs.rows) + " rows added";
}

} /* namespace */

void
topn_tests()
{
	const uint64_t small = 1 << 18; /* the backends' least capacity */
	const std::vector<TopnCase> cases = {
		{"no rows", 0, 10, 0, 1, false, false, false, false, false, 0.0, 100, RANDOM, 1000},
		{"fewer rows than the bound", 500, 1000, 0, 1, false, false, false, false, false, 0.1, 50,
		 RANDOM, 64},
		{"one key, random", 1000000, 1000, small, 1, false, false, false, false, false, 0.02,
		 1000000, RANDOM, 100000},
		{"one key DESC NULLS LAST, many ties at the bound", 700000, 5000, small, 1, false, true,
		 false, false, false, 0.05, 20, RANDOM, 65536},
		{"two keys, float8 second DESC NULLS FIRST", 900000, 20000, small, 2, true, false, false,
		 true, true, 0.03, 300, RANDOM, 250000},
		{"ascending input (the first cut keeps its rows)", 1000000, 100, small, 2, false, false,
		 true, false, false, 0.0, 1000000, ASCENDING, 131072},
		{"descending input (every row beats the cut)", 1000000, 60000, small, 2, true, false, false,
		 false, false, 0.0, 1000000, DESCENDING, 100000},
		{"a bound of 200000 (capacity 800000), batches of 1M", 3000000, 200000, 0, 2, true, true,
		 true, false, false, 0.01, 3000000, RANDOM, 1000000},
	};
	uint64_t seed = 7000;

	for (const TopnCase &c : cases)
	{
		std::string title = "topn " + c.what + ", " + std::to_string(c.rows) + " rows, bound " +
			std::to_string(c.bound);
		uint64_t s = seed++;

		run_case(title, [&](Outcome &out) { check_topn(out, c, s); });
	}
}

} /* namespace dt */
