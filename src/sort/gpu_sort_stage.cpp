/*
 * gpu_sort_stage.cpp
 *    GpuSort: the sort keys of each batch into the device's staging buffer
 *    (text as a prefix, with the rows whose text was longer marked;
 *    PostgreSQL's abbreviated keys; computed keys' input columns).
 */
#include "gpu_sort_exec.h"

static void
MarkTruncated(GpuSortState *st, uint64 row)
{
	uint64 need = row / 8 + 1;

	if (need > st->truncated_bytes)
	{
		uint64 bytes = Max(need, Max(st->truncated_bytes * 2, (uint64) 8192));

		st->truncated = (uint8 *) (st->truncated ? repalloc_huge(st->truncated, bytes)
												 : MemoryContextAllocHuge(st->store()->cxt, bytes));
		memset(st->truncated + st->truncated_bytes, 0, bytes - st->truncated_bytes);
		st->truncated_bytes = bytes;
	}
	st->truncated[row / 8] |= (uint8) (1 << (row % 8));
	st->any_truncated = true;
}

bool
GpuSortIsTruncated(GpuSortState *st, uint64 row)
{
	return row / 8 < st->truncated_bytes && (st->truncated[row / 8] & (1 << (row % 8)));
}

/*
 * The first 16 bytes of a text value, zero padded; returns whether the value
 * is longer.  bpchar's trailing spaces do not count (bpcharcmp ignores them).
 * Compressed or out-of-line text is sliced, not detoasted whole.
 */
static bool
TextPrefix(GpuSortState *st, Datum d, bool bpchar, uint8 *out)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);
	const char *data;
	Size len;

	memset(out, 0, 16);
	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
	{
		MemoryContext old = MemoryContextSwitchTo(st->tmp_cxt);

		if (!bpchar)
		{
			Size total = toast_raw_datum_size(d) - VARHDRSZ;
			struct varlena *slice = detoast_attr_slice(v, 0, 16);

			memcpy(out, VARDATA_ANY(slice), Min(VARSIZE_ANY_EXHDR(slice), 16));
			MemoryContextSwitchTo(old);
			return total > 16;
		}
		v = detoast_attr(v);
		MemoryContextSwitchTo(old);
	}
	data = VARDATA_ANY(v);
	len = VARSIZE_ANY_EXHDR(v);
	if (bpchar)
		while (len > 0 && data[len - 1] == ' ')
			len--;
	memcpy(out, data, Min(len, 16));
	return len > 16;
}

/*
 * PostgreSQL's abbreviated keys (numeric, text under ICU collations): the
 * type's own abbrev_converter,
 * prepared once per key; its output is exact up to ties, which the full
 * comparator resolves afterwards.
 */
static void
StageAbbreviated(GpuSortState *st, int k, GpuopsBatch *batch, uint32 from, uint32 n, uint8 *out)
{
	const GpuSortKeyInfo *key = &st->keys[k];
	SortSupport ssup;
	MemoryContext old;

	if (st->abbrev == NULL)
		st->abbrev = (SortSupport) MemoryContextAllocZero(st->sort_cxt,
														  sizeof(SortSupportData) * st->nkeys);
	ssup = &st->abbrev[k];
	if (ssup->abbrev_converter == NULL)
	{
		ssup->ssup_cxt = st->sort_cxt;
		ssup->ssup_collation = key->collation;
		ssup->ssup_nulls_first = key->nulls_first;
		ssup->abbreviate = true;
		PrepareSortSupportFromOrderingOp(key->sortop, ssup);
		if (ssup->abbrev_converter == NULL)
			elog(ERROR, "gpuops: no abbreviated keys for sort operator %u", key->sortop);
	}
	old = MemoryContextSwitchTo(st->tmp_cxt);
	for (uint32 i = 0; i < n; i++)
	{
		bool isnull;
		Datum d = GpuopsBatchDatum(st->store(), batch, key->col, from + i, &isnull);
		Datum a = isnull ? (Datum) 0 : ssup->abbrev_converter(d, ssup);

		memcpy(out + (Size) i * 8, &a, 8);
	}
	MemoryContextSwitchTo(old);
}

/*
 * Copies rows [from, from + n) of one batch's key columns into the staging
 * buffer at row `at`: fixed-width values and null bitmaps by memcpy (row
 * offsets are multiples of 8 here, so bitmaps stay byte-aligned), text as
 * prefixes.
 */
static void
StageRows(GpuSortState *st, GpuopsBatch *batch, uint64 batch_first_row, uint32 from, uint32 n,
		  GpuopsStageBuffer *buf, uint32 at)
{
	Assert(from % 8 == 0 && at % 8 == 0);
	for (int k = 0; k < st->nkeys; k++)
	{
		const GpuSortKeyInfo *key = &st->keys[k];
		const uint8 *nulls = batch->nulls[key->col];
		uint8 *dst_nulls = buf->nulls[k] + at / 8;

		if (key->program)
			continue; /* the device computes it from the program columns */
		if (nulls)
			memcpy(dst_nulls, nulls + from / 8, (n + 7) / 8);
		else
			memset(dst_nulls, 0, (n + 7) / 8);
		if (key->kind == GPUOPS_KEY_NUMERIC_ABBREV || key->kind == GPUOPS_KEY_ABBREV_UNSIGNED)
		{
			StageAbbreviated(st, k, batch, from, n, (uint8 *) buf->values[k] + (Size) at * 8);
			continue;
		}
		if (key->kind != GPUOPS_KEY_BYTES16)
		{
			uint32 w = gpuops_key_raw_width(key->kind);

			memcpy((char *) buf->values[k] + (Size) at * w,
				   batch->values[key->col] + (Size) from * w, (Size) n * w);
			continue;
		}
		for (uint32 i = 0; i < n; i++)
		{
			uint8 *out = (uint8 *) buf->values[k] + (Size) (at + i) * 16;
			bool isnull;
			Datum d = GpuopsBatchDatum(st->store(), batch, key->col, from + i, &isnull);

			if (isnull)
				memset(out, 0, 16);
			else if (TextPrefix(st, d, key->bpchar, out))
				MarkTruncated(st, batch_first_row + from + i);
		}
	}
	if (st->prog_ncols > 0)
		DeviceExprStageInto(st->store(), batch, from, n, st->prog_cols, st->prog_types,
							st->prog_ncols, buf->input_words, buf->input_nulls, at);
	MemoryContextReset(st->tmp_cxt);
}

/* Stages one batch's key columns, submitting buffers as they fill. */
GpuopsStatus
GpuSortStageBatch(GpuSortState *st, GpuopsBatch *batch, uint64 batch_first_row)
{
	GpuSortDevice *dev = st->dev;
	uint32 done = 0;
	GpuopsStatus rc;

	while (done < batch->nrows)
	{
		uint32 n;

		if (!dev->have_buf)
		{
			while ((rc = dev->backend->sort_stage(dev->handle, &dev->buf)) == GPUOPS_PENDING)
				GpuopsWaitForDevice();
			if (rc != GPUOPS_OK)
				return rc;
			dev->have_buf = true;
			dev->buf_rows = 0;
		}
		n = Min(batch->nrows - done, dev->buf.capacity_rows - dev->buf_rows);
		StageRows(st, batch, batch_first_row, done, n, &dev->buf, dev->buf_rows);
		dev->buf_rows += n;
		done += n;
		if (dev->buf_rows == dev->buf.capacity_rows)
		{
			dev->have_buf = false;
			if ((rc = dev->backend->sort_submit(dev->handle, dev->buf_rows)) != GPUOPS_OK)
				return rc;
		}
	}
	return GPUOPS_OK;
}
