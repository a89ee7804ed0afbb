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
	uint64_t	per = (inner_rows + kNlMaxChunks - 1) / kNlMaxChunks;

	if (per < 2048)
		per = 2048;
	return (per + kNlTile - 1) / kNlTile * kNlTile;
}

inline uint64_t
nl_chunks(uint64_t inner_rows)
{
	uint64_t	per = nl_chunk_rows(inner_rows);

	return inner_rows == 0 ? 1 : (inner_rows + per - 1) / per;
}

/*
 * Budgets (0: none).  An inner block takes its words and null bytes (9
 * bytes a column a row) in half the budget; a probe's outer rows take
 * their columns and a count and offset per chunk (16 * 64 bytes at most) in
 * a quarter, the pair window the last quarter.  Inner row numbers keep
 * their top bit for GPUOPS_NL_RECHECK.
 */
inline uint64_t
nl_inner_rows_for_budget(uint64_t budget, int ncols)
{
	const uint64_t most = 1ull << 30;
	uint64_t	rows = budget == 0 ? most : budget / 2 / (9ull * (ncols > 0 ? ncols : 1));

	return rows < 1024 ? 1024 : rows > most ? most : rows;
}

inline uint32_t
nl_probe_rows_for_budget(uint64_t budget, int ncols)
{
	const uint64_t most = 65536;	/* the executor's batch */
	uint64_t	rows = budget == 0 ? most : budget / 4 / (9ull * ncols + 16 * kNlMaxChunks) / 8 * 8;

	return (uint32_t) (rows < 256 ? 256 : rows > most ? most : rows);
}

}								/* namespace gpuops */

#endif
