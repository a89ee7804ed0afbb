/*
 * query_layout.cpp
 *    A query block spec checked and laid out for both backends
 *    (query_common.hpp): bad specs fail at begin, once, with what is wrong,
 *    rather than as a wrong answer or a fault in a kernel.
 */
#include "device_common.hpp"
#include "query_common.hpp"

namespace gpuops {
namespace {

/* A program reads no bytes column: its words are not the caller's to give. */
const char *
reads_no_bytes(const GpuopsQuerySpec &spec, const GpuopsExprProgram *p)
{
	for (int pc = 0; pc < p->nsteps; pc++)
		if (p->steps[pc].op == GPUOPS_EOP_OUTER && p->steps[pc].arg < spec.ncols &&
			spec.bytes16[p->steps[pc].arg])
			return "a program reads a bytes column";
	return nullptr;
}

/* p validated and copied into programs[*n]; its index, or -1 for none, in *index. */
const char *
add_program(const GpuopsQuerySpec &spec, int ncols_all, const GpuopsExprProgram *p,
			GpuopsExprProgram *programs, int *n, int16_t *index)
{
	const char *bad;

	*index = -1;
	if (p == nullptr)
		return nullptr;
	if ((bad = expr_validate(p, ncols_all, 0)) != nullptr ||
		(bad = reads_no_bytes(spec, p)) != nullptr)
		return bad;
	programs[*n] = *p;
	*index = static_cast<int16_t>((*n)++);
	return nullptr;
}

/* A column a key, an argument or a lookup reads as words: in range, not a bytes column. */
bool
word_column(const GpuopsQuerySpec &spec, int ncols_all, int c)
{
	return c >= 0 && c < ncols_all && !(c < spec.ncols && spec.bytes16[c]);
}

const char *
layout_key(const GpuopsQuerySpec &spec, int k, QueryLayout *L, GpuopsExprProgram *programs, int *n)
{
	const GpuopsQueryKey &key = spec.keys[k];

	L->key_kind[k] = static_cast<uint8_t>(key.kind);
	L->key_col[k] = static_cast<int8_t>(key.col < 0 ? -1 : key.col);
	L->key_prog[k] = -1;
	switch (key.kind)
	{
		case GPUOPS_QKEY_BYTES16:
			if (key.program || key.col < 0 || key.col >= spec.ncols || !spec.bytes16[key.col])
				return "a bytes key must be a bytes column";
			L->key_words += 2;
			return nullptr;
		case GPUOPS_QKEY_INT:
		case GPUOPS_QKEY_FLOAT:
			L->key_words += 1;
			if (key.program && key.col < 0)
				return add_program(spec, L->ncols_all, key.program, programs, n, &L->key_prog[k]);
			if (!key.program && word_column(spec, L->ncols_all, key.col))
				return nullptr;
			return "a key must be a column or a program";
		default:
			return "unknown key kind";
	}
}

const char *
layout_agg(const GpuopsQuerySpec &spec, int a, QueryLayout *L, GpuopsExprProgram *programs, int *n)
{
	const GpuopsQueryAgg &g = spec.aggs[a];
	bool has_arg = g.arg != nullptr || g.arg_col >= 0;
	const char *bad;

	L->agg_kind[a] = static_cast<uint8_t>(g.kind);
	L->arg_type[a] = static_cast<uint8_t>(g.arg_type);
	L->arg_col[a] = -1;
	L->num_scale[a] = 0;
	switch (g.kind)
	{
		case GPUOPS_QAGG_COUNT:
			break;
		case GPUOPS_QAGG_SUM_INT:
			if (g.arg_type != GPUOPS_ET_INT)
				return "an integer sum of a non-integer argument";
			break;
		case GPUOPS_QAGG_SUM_NUM:
			if (g.arg_type != GPUOPS_ET_NUM || g.num_scale < 0 || g.num_scale > 38)
				return "a numeric sum needs a numeric argument and a scale of 0 to 38";
			L->num_scale[a] = static_cast<uint8_t>(g.num_scale);
			break;
		case GPUOPS_QAGG_SUM_FLOAT:
			if (g.arg_type != GPUOPS_ET_FLOAT)
				return "a float sum of a non-float argument";
			break;
		case GPUOPS_QAGG_MIN:
		case GPUOPS_QAGG_MAX:
			if (g.arg_type != GPUOPS_ET_INT && g.arg_type != GPUOPS_ET_FLOAT)
				return "min and max take integer and float arguments";
			break;
		default:
			return "unknown aggregate kind";
	}
	if (g.kind != GPUOPS_QAGG_COUNT && !has_arg)
		return "an aggregate without an argument";
	if (g.arg != nullptr && g.arg_col >= 0)
		return "an argument that is both a column and a program";
	if (g.arg == nullptr && g.arg_col >= 0)
	{
		if (!word_column(spec, L->ncols_all, g.arg_col))
			return "an argument column out of range";
		L->arg_col[a] = static_cast<int8_t>(g.arg_col);
	}
	if ((bad = add_program(spec, L->ncols_all, g.arg, programs, n, &L->arg_prog[a])) != nullptr ||
		(bad = add_program(spec, L->ncols_all, g.filter, programs, n, &L->filter_prog[a])) !=
			nullptr)
		return bad;
	L->state_off[a] = static_cast<uint16_t>(L->state_words);
	L->state_words += query_state_words(g.kind);
	return nullptr;
}

/* The dimensions: their key columns, and where each payload column comes from. */
const char *
layout_dims(const GpuopsQuerySpec &spec, QueryLayout *L)
{
	int c = spec.ncols;

	if (spec.ndims < 0 || spec.ndims > GPUOPS_QUERY_MAX_DIMS)
		return "too many dimensions";
	L->ndims = spec.ndims;
	for (int i = 0; i < GPUOPS_QUERY_MAX_COLS; i++)
		L->col_dim[i] = L->col_pay[i] = -1;
	for (int d = 0; d < spec.ndims; d++)
	{
		const GpuopsQueryDim &dim = spec.dims[d];

		/* the key: a batch column or an earlier dimension's, as words */
		if (!word_column(spec, c, dim.key_col))
			return "a dimension's key column is not a column before it";
		if (dim.nrows > 0 && dim.keys == nullptr)
			return "a dimension without keys";
		if (dim.nrows >= UINT32_MAX)
			return "a dimension of 2^32 rows or more";
		if (dim.npayload < 0 || c + dim.npayload > GPUOPS_QUERY_MAX_COLS)
			return "too many columns with the dimensions'";
		if (dim.kind != GPUOPS_QDIM_INNER && dim.kind != GPUOPS_QDIM_SEMI &&
			dim.kind != GPUOPS_QDIM_ANTI)
			return "a dimension of an unknown kind";
		/* a semi or anti dimension's row is not one row (or none): nothing to read through */
		if (dim.kind != GPUOPS_QDIM_INNER && dim.npayload != 0)
			return "a semi or anti dimension with payload columns";
		L->dim_key_col[d] = static_cast<int8_t>(dim.key_col);
		for (int p = 0; p < dim.npayload; p++, c++)
		{
			if (dim.nrows > 0 && dim.words[p] == nullptr)
				return "a dimension's payload column without words";
			L->col_dim[c] = static_cast<int8_t>(d);
			L->col_pay[c] = static_cast<int8_t>(p);
		}
	}
	L->ncols_all = c;
	return nullptr;
}

} /* namespace */

const char *
query_layout(const GpuopsQuerySpec &spec, QueryLayout *L, GpuopsExprProgram *programs,
			 int *nprograms)
{
	int n = 0;
	int16_t qual = -1;
	const char *bad;

	memset(L, 0, sizeof(*L));
	*nprograms = 0;
	if (spec.ncols < 0 || spec.ncols > GPUOPS_QUERY_MAX_COLS || spec.nkeys < 0 ||
		spec.nkeys > GPUOPS_QUERY_MAX_KEYS || spec.naggs < 0 || spec.naggs > GPUOPS_MAX_AGGS)
		return "spec sizes out of range";
	L->ncols = spec.ncols;
	L->nkeys = spec.nkeys;
	L->naggs = spec.naggs;
	for (int c = 0; c < GPUOPS_QUERY_MAX_COLS; c++)
		L->bytes_slot[c] = static_cast<int8_t>(c < spec.ncols && spec.bytes16[c] ? L->nbytes++
																				 : -1);
	if ((bad = layout_dims(spec, L)) != nullptr)
		return bad;
	/* the qual reads the batch alone: it runs before the lookups */
	if ((bad = add_program(spec, spec.ncols, spec.qual, programs, &n, &qual)) != nullptr)
		return bad;
	L->qual = qual;
	if ((bad = add_program(spec, L->ncols_all, spec.join_qual, programs, &n, &qual)) != nullptr)
		return bad;
	L->join_qual = qual;
	for (int k = 0; k < spec.nkeys; k++)
		if ((bad = layout_key(spec, k, L, programs, &n)) != nullptr)
			return bad;
	if (spec.nkeys > 0)
		L->key_words += 1; /* the null word */
	for (int a = 0; a < spec.naggs; a++)
		if ((bad = layout_agg(spec, a, L, programs, &n)) != nullptr)
			return bad;
	if (L->key_words > GPUOPS_QUERY_MAX_KEY_WORDS)
		return "group key too wide";
	*nprograms = n;
	return nullptr;
}

void
query_check_batch(const QueryLayout &L, const GpuopsQueryBatch *b, bool has_shape, bool finished)
{
	if (finished)
		fail(GPUOPS_ERR_INTERNAL, "query batch after finish");
	if (b->cols.nrows != b->nrows || b->cols.ncols != L.ncols)
		fail(GPUOPS_ERR_INTERNAL, "query batch of %u rows, %d columns: columns of %llu rows, %d",
			 b->nrows, L.ncols, (unsigned long long) b->cols.nrows, b->cols.ncols);
	if (b->pages != nullptr && !has_shape)
		fail(GPUOPS_ERR_INTERNAL, "query pages batch without a tuple shape");
	for (int c = 0; c < L.ncols && b->nrows > 0 && b->pages == nullptr; c++)
		if (L.bytes_slot[c] >= 0 ? b->bytes16[c] == nullptr : b->cols.words[c] == nullptr)
			fail(GPUOPS_ERR_INTERNAL, "query batch without column %d", c);
}

} /* namespace gpuops */
