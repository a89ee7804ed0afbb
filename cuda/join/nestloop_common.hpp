/*
 * nestloop_common.hpp
 *    What both nested-loop backends must agree on so that they return the
 *    same pairs in the same windows: how the inner side is cut into chunks
 *    (a SEMI or ANTI join's pairs stop at the first match within each
 *    chunk), and the budgets.
 */
#ifndef GPUOPS_NESTLOOP_COMMON_HPP
#define GPUOPS_NESTLOOP_COMMON_HPP

#include "expr_eval.hpp"
#include "join_hash.hpp"

namespace gpuops {

/* Inner rows a CUDA block stages in shared memory at a time. */
constexpr uint32_t kNlTile = 256;

/* Most chunks an inner block is cut into (a probe counts per outer row and chunk). */
constexpr uint64_t kNlMaxChunks = 64;

/*
 * Inner rows per chunk: at least 2048 (each thread tests that many pairs
 * before its count is written), at most 64 chunks, a multiple of the tile.
 */
inline uint64_t
nl_chunk_rows(uint64_t inner_rows)
{
	uint64_t per = (inner_rows + kNlMaxChunks - 1) / kNlMaxChunks;

	if (per < 2048)
		per = 2048;
	return (per + kNlTile - 1) / kNlTile * kNlTile;
}

inline uint64_t
nl_chunks(uint64_t inner_rows)
{
	uint64_t per = nl_chunk_rows(inner_rows);

	return inner_rows == 0 ? 1 : (inner_rows + per - 1) / per;
}

/*
 * Budgets (0: none).  An inner block takes its words and null bytes (9
 * bytes a column a row) in half the budget; sorting it for the indexed
 * form holds them twice while the sorted copy is gathered, or once with
 * the keys, row numbers and the radix sort's buffers (64 bytes a row at
 * most).  A probe's outer rows take their columns and a count and offset
 * per chunk (16 * 64 bytes at most) in a quarter, the pair window the last
 * quarter.  Inner row numbers keep their top bit for GPUOPS_NL_RECHECK.
 */
inline uint64_t
nl_inner_rows_for_budget(uint64_t budget, int ncols, bool indexed)
{
	const uint64_t most = 1ull << 30;
	uint64_t per_row = 9ull * (ncols > 0 ? ncols : 1);
	uint64_t rows = budget == 0 ? most : budget / 2 / (indexed ? 2 * per_row + 64 : per_row);

	return rows < 1024 ? 1024 : rows > most ? most : rows;
}

inline uint32_t
nl_probe_rows_for_budget(uint64_t budget, int ncols)
{
	const uint64_t most = 65536; /* the executor's batch */
	uint64_t rows = budget == 0 ? most : budget / 4 / (9ull * ncols + 16 * kNlMaxChunks) / 8 * 8;

	return (uint32_t) (rows < 256 ? 256 : rows > most ? most : rows);
}

/*
 * Indexed nested loop (GpuopsNestLoopIndex).  The unsigned word whose
 * order is the index column's: integers offset by 2^63; floats in IEEE
 * order with every NaN one value above +Infinity and -0 as 0, as
 * float8_cmp_internal has them.
 */
GPUOPS_HD uint64_t
nl_index_key(uint64_t w, int is_float)
{
	if (!is_float)
		return w ^ 0x8000000000000000ull;
	if (isnan(expr_as_double(w)))
		w = 0x7ff8000000000000ull;
	else if (expr_as_double(w) == 0)
		w = 0;
	return (w & 0x8000000000000000ull) ? ~w : (w | 0x8000000000000000ull);
}

/* The first of keys[0, n) (ascending) that is >= k, or > k with `after`. */
GPUOPS_HD uint64_t
nl_index_search(const uint64_t *keys, uint64_t n, uint64_t k, bool after)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi)
	{
		uint64_t mid = lo + (hi - lo) / 2;

		if (keys[mid] < k || (after && keys[mid] == k))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The inner side of a bound program: it reads none. */
struct NlNoInner
{
	GPUOPS_HD uint64_t word(int) const { return 0; }
	GPUOPS_HD bool null(int) const { return true; }
};

/*
 * The candidates of one outer row: positions [*s, *e) of the sorted block,
 * whose first nkeys rows have the column non-NULL (keys ascending) and
 * whose other nall - nkeys rows have it NULL.  Both bounds are evaluated
 * first: if either cannot be computed, every row is a candidate (the
 * program then meets the same failure in PostgreSQL's clause order);
 * otherwise a NULL bound leaves none.
 */
template <class Outer>
GPUOPS_HD void
nl_index_range(const GpuopsNestLoopIndex *ix, const Outer &orow, const uint64_t *keys,
			   uint64_t nkeys, uint64_t nall, uint64_t *s, uint64_t *e)
{
	uint64_t lv = 0, uv = 0;
	bool ln = false, un = false;
	uint64_t lo = 0, hi = nkeys;

	if ((ix->has_lower &&
		 expr_eval(ix->lower.steps, ix->lower.nsteps, ix->lower.consts, ix->lower.const_null, orow,
				   NlNoInner{}, &lv, &ln) == GPUOPS_EXPR_RECHECK) ||
		(ix->has_upper &&
		 expr_eval(ix->upper.steps, ix->upper.nsteps, ix->upper.consts, ix->upper.const_null, orow,
				   NlNoInner{}, &uv, &un) == GPUOPS_EXPR_RECHECK))
	{
		*s = 0;
		*e = nall;
		return;
	}
	if (ln || un)
	{
		*s = *e = 0;
		return;
	}
	if (ix->has_lower)
		lo = nl_index_search(keys, nkeys, nl_index_key(lv, ix->is_float), ix->lower_strict != 0);
	if (ix->has_upper)
		hi = nl_index_search(keys, nkeys, nl_index_key(uv, ix->is_float), ix->upper_strict == 0);
	*s = lo;
	*e = hi < lo ? lo : hi;
}

/* Checks a spec's programs before a backend runs them: NULL or what is wrong. */
inline const char *
nl_validate(const GpuopsNestLoopSpec *spec)
{
	const GpuopsNestLoopIndex &ix = spec->index;
	const char *bad = expr_validate(&spec->program, spec->outer_ncols, spec->inner_ncols);

	if (bad || ix.column < 0)
		return bad;
	if (ix.column >= spec->inner_ncols)
		return "index column out of range";
	if (ix.has_lower && (bad = expr_validate(&ix.lower, spec->outer_ncols, 0)) != nullptr)
		return bad;
	if (ix.has_upper && (bad = expr_validate(&ix.upper, spec->outer_ncols, 0)) != nullptr)
		return bad;
	return nullptr;
}

/* Work items (chunks of candidates) of a range of `len` candidates. */
GPUOPS_HD uint64_t
nl_index_items(uint64_t len, uint64_t chunk)
{
	return (len + chunk - 1) / chunk;
}

} /* namespace gpuops */

#endif
