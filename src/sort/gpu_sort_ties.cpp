/*
 * gpu_sort_ties.cpp
 *    GpuSort: PostgreSQL's comparators, for runs of rows whose key words tie
 *    (a text prefix, an abbreviated key) and for a bounded sort's cut.
 */
#include "gpu_sort_exec.h"

/* PostgreSQL's comparators for the sort keys, prepared once per node. */
void
GpuSortEnsureComparators(GpuSortState *st)
{
	if (st->ssup != NULL)
		return;
	st->ssup = (SortSupport) MemoryContextAllocZero(st->sort_cxt,
													sizeof(SortSupportData) * st->nkeys);
	for (int k = 0; k < st->nkeys; k++)
	{
		st->ssup[k].ssup_cxt = st->sort_cxt;
		st->ssup[k].ssup_collation = st->keys[k].collation;
		st->ssup[k].ssup_nulls_first = st->keys[k].nulls_first;
		st->ssup[k].abbreviate = false;
		PrepareSortSupportFromOrderingOp(st->keys[k].sortop, &st->ssup[k]);
	}
}

/* qsort_arg comparator over all sort keys, with PostgreSQL's comparators. */
static int
CompareRows(const void *a, const void *b, void *arg)
{
	GpuSortState *st = (GpuSortState *) arg;
	uint32 ra = *(const uint32 *) a;
	uint32 rb = *(const uint32 *) b;

	for (int k = 0; k < st->nkeys; k++)
	{
		bool na, nb;
		Datum da = GpuopsRowStoreDatum(st->store(), ra, st->keys[k].col, &na);
		Datum db = GpuopsRowStoreDatum(st->store(), rb, st->keys[k].col, &nb);
		int c = ApplySortComparator(da, na, db, nb, &st->ssup[k]);

		if (c != 0)
			return c;
	}
	return 0;
}

/*
 * Orders each run of rows whose key words tie (bit i of ties: sorted row i
 * ties with row i-1) and that holds a truncated text prefix, with the full
 * PostgreSQL comparison.  Runs are usually short: only equal prefixes tie.
 */
void
GpuSortResolveTies(GpuSortState *st, uint32 *order, const uint8 *ties)
{
	uint64 n = st->store()->nrows;

	GpuSortEnsureComparators(st);
	for (uint64 i = 1; i < n;)
	{
		uint64 start, end;
		bool need = false;

		if (!(ties[i / 8] & (1 << (i % 8))))
		{
			i++;
			continue;
		}
		start = i - 1;
		while (i < n && (ties[i / 8] & (1 << (i % 8))))
			i++;
		end = i;
		need = st->has_abbrev_keys;
		for (uint64 r = start; r < end && !need; r++)
			need = GpuSortIsTruncated(st, order[r]);
		if (need)
		{
			qsort_arg(order + start, end - start, sizeof(uint32), CompareRows, st);
			st->tie_runs++;
		}
		CHECK_FOR_INTERRUPTS();
	}
}
