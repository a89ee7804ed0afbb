/*
 * gpu_sort_exec.cpp
 *    GpuSort execution: a key-pointer sort.
 *
 * The child's rows are pulled into column batches (batch.h) that stay on the
 * host.  As each batch fills, its key columns (contiguous arrays; for
 * C-collation text a 16-byte prefix per row) and their null bitmaps are
 * copied into a pinned staging buffer and submitted to the device, so the
 * copy and the normalize kernel of one batch overlap the pulling of the
 * next.  The device orders the rows by their normalized key words and
 * returns row numbers.  Where a text key was longer than its prefix, runs of
 * rows whose words are all equal are then ordered with PostgreSQL's own
 * comparator (GPUTeraSort's tie resolution).  The columns are gathered into
 * that order and the rows emitted.
 *
 * Computed keys (gpu_sort.h): the batch stages the columns a key's
 * program reads instead of the key, the device computes the key, and its
 * values come back into the store's computed column after the sort, so
 * that tie resolution, spilling and the rows emitted see them as any other
 * column.  A row the device stops at is one PostgreSQL raises an error
 * for: its own evaluation of the key on that row raises it.
 *
 * Device failures: the failing call is reported once (GpuopsDeviceFailed);
 * with gpuops.cpu_fallback the store, which still holds every row, is sorted
 * again by the CPU backend.  Device resources are released through a
 * memory-context callback on the query context, since EndCustomScan is not
 * called when the query errors or is cancelled.
 */
extern "C" {
#include "postgres.h"

#include "access/detoast.h"
#include "access/parallel.h"
#include "catalog/pg_type_d.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/sortsupport.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/tuplestore.h"
}

#include "batch.h"
#include "boundary.h"
#include "device_expr.h"
#include "guarded_scan.h"
#include "device.h"
#include "device_session.h"
#include "explain_device.h"
#include "gpu_sort.h"
#include "gpu_stage.h"
#include "guc.h"
#include "sort_spill.h"

extern const CustomExecMethods gpu_sort_exec_methods;

/* The device sort in flight, freed by the callback if the query aborts. */
/* the sort's device session, and the staging buffer being filled */
struct GpuSortDevice : DeviceSession<GpuopsBackend, GpuopsSort, &GpuopsBackend::sort_end>
{
	GpuopsStageBuffer buf;
	uint32		buf_rows;		/* rows written into buf so far */
	bool		have_buf;
};

typedef struct GpuSortKeyInfo
{
	int			col;			/* index in the scan tuple */
	GpuopsKeyKind kind;
	bool		descending;
	bool		nulls_first;
	bool		prefix_only;	/* device sees a prefix: ties need the comparator */
	bool		bpchar;			/* trailing spaces do not count */
	Oid			sortop;
	Oid			collation;
	GpuopsExprProgram *program; /* a computed key's program, else NULL */
	ExprState  *check;			/* PostgreSQL's evaluation of it, for a stopped row */
} GpuSortKeyInfo;

typedef struct GpuSortState
{
	CustomScanState css;
	int			nkeys;
	GpuSortKeyInfo keys[GPUOPS_MAX_SORT_KEYS];
	int			key_cols[GPUOPS_MAX_SORT_KEYS];
	uint64		bound;			/* LIMIT + OFFSET: the rows asked for; 0 = all */
	uint64		compact_rows;	/* bounded: keep the best `bound` rows from this many */
	uint64		first_compact_rows; /* the same, before the cut is set */
	GpuopsRowCut cut;			/* bounded: rows the source drops as it reads */
	MemoryContext cut_cxt;		/* the cut's value */
	GpuSortPlacement placement;	/* where the plan asks it to sort */
	const GpuopsBackend *primary;	/* the backend this process sorts on */
	Size		mem_limit;		/* rows held on the host before a run is spilled */
	bool		random_access;	/* backward scans may come */
	bool		has_prefix_keys;
	bool		has_abbrev_keys;	/* lossy keys: every tie run is resolved */
	int			ncomputed;		/* computed keys: the store's last columns */
	List	   *checks;			/* the plan's computed keys, for their checks */
	int			prog_ncols;		/* the columns their programs read */
	int			prog_cols[GPUOPS_EXPR_MAX_COLS];
	Oid			prog_types[GPUOPS_EXPR_MAX_COLS];
	TupleTableSlot *check_slot; /* a child row, for the keys' check */
	SortSupport ssup;			/* per key, prepared when ties need resolving */
	SortSupport abbrev;			/* per key, abbreviation for NUMERIC_ABBREV keys */

	GpuopsBatchSource *source;
	GpuStageState *stage;		/* the child is a Gather of GpuStage, else NULL */
	bool		device_shared;	/* other processes of the query use the device too */
	GpuopsRowStore store;
	GpuSortDevice *dev;
	bool		healthy;		/* the device has not failed during this sort */
	int			staged_batches; /* leading store batches staged on the device */
	MemoryContext tmp_cxt;		/* detoasted text while staging, reset per batch */
	MemoryContext sort_cxt;		/* comparators and spill files, for the node's life */
	TupleTableSlot *scratch;	/* virtual slot for compaction */
	GpuopsSortRuns *spill;		/* sorted runs written to temporary files, or NULL */
	Tuplestorestate *replay;	/* the merged spilled runs, for backward scans */
	TupleTableSlot *replay_slot;

	/* rows whose text key is longer than the device's prefix */
	uint8	   *truncated;
	uint64		truncated_bytes;
	bool		any_truncated;

	bool		sorted;
	uint64		norder;
	uint64		pos;			/* next row forward */
	bool		eof;			/* ran off the end going forward */

	/* EXPLAIN ANALYZE */
	int			runs;
	const char *backend_name;
	char	   *fallback;		/* why it fell back, or NULL */
	GpuopsStats stats;
	double		staging_ms;
	double		reorder_ms;		/* laying the columns out in output order */
	instr_time	emit_start;		/* when the first row could go out (DEBUG1) */
	Size		host_memory;
	uint64		tie_runs;		/* runs re-sorted with the comparator */
	uint64		compactions;	/* bounded: times the store was cut to `bound` rows */
	int			spilled_runs;
	uint64		spilled_bytes;
} GpuSortState;

static void
DeviceRelease(void *arg)
{
	GpuSortDevice *dev = (GpuSortDevice *) arg;

	dev->end();
	dev->have_buf = false;
}

/* Starts a device sort; injected faults hit the first (primary) run only. */
static GpuopsStatus
DeviceBegin(GpuSortState *st, const GpuopsBackend *backend, bool primary)
{
	GpuopsSettings settings = GpuopsSettingsFor(st->device_shared);
	GpuopsSortSpec spec;

	DeviceRelease(st->dev);
	if (!primary)
		settings.fault = GPUOPS_FAULT_NONE;
	st->dev->backend = backend;
	memset(&spec, 0, sizeof(spec));
	spec.nkeys = st->nkeys;
	for (int k = 0; k < st->nkeys; k++)
	{
		spec.keys[k].kind = st->keys[k].kind;
		spec.keys[k].descending = st->keys[k].descending;
		spec.keys[k].nulls_first = st->keys[k].nulls_first;
		spec.programs[k] = st->keys[k].program;
	}
	spec.program_ncols = st->prog_ncols;
	/*
	 * Runs to re-sort: rows equal in every word through the first key the
	 * device sees only a prefix of.  Past that key the device's order means
	 * nothing (the full values there decide first), so the comparator
	 * orders such a run by all keys.
	 */
	spec.tie_words = 0;
	for (int k = 0, words = 0; k < st->nkeys && spec.tie_words == 0; k++)
	{
		words += 1 + gpuops_key_value_words(st->keys[k].kind);
		if (st->keys[k].prefix_only)
			spec.tie_words = words;
	}
	return backend->sort_begin(&settings, &spec, &st->dev->handle);
}

static void
MarkTruncated(GpuSortState *st, uint64 row)
{
	uint64		need = row / 8 + 1;

	if (need > st->truncated_bytes)
	{
		uint64		bytes = Max(need, Max(st->truncated_bytes * 2, (uint64) 8192));

		st->truncated = (uint8 *) (st->truncated
								   ? repalloc_huge(st->truncated, bytes)
								   : MemoryContextAllocHuge(st->store.cxt, bytes));
		memset(st->truncated + st->truncated_bytes, 0, bytes - st->truncated_bytes);
		st->truncated_bytes = bytes;
	}
	st->truncated[row / 8] |= (uint8) (1 << (row % 8));
	st->any_truncated = true;
}

static bool
IsTruncated(GpuSortState *st, uint64 row)
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
	Size		len;

	memset(out, 0, 16);
	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
	{
		MemoryContext old = MemoryContextSwitchTo(st->tmp_cxt);

		if (!bpchar)
		{
			Size		total = toast_raw_datum_size(d) - VARHDRSZ;
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
StageAbbreviated(GpuSortState *st, int k, GpuopsBatch *batch, uint32 from, uint32 n,
				 uint8 *out)
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
		bool		isnull;
		Datum		d = GpuopsBatchDatum(&st->store, batch, key->col, from + i, &isnull);
		Datum		a = isnull ? (Datum) 0 : ssup->abbrev_converter(d, ssup);

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
StageRows(GpuSortState *st, GpuopsBatch *batch, uint64 batch_first_row, uint32 from,
		  uint32 n, GpuopsStageBuffer *buf, uint32 at)
{
	Assert(from % 8 == 0 && at % 8 == 0);
	for (int k = 0; k < st->nkeys; k++)
	{
		const GpuSortKeyInfo *key = &st->keys[k];
		const uint8 *nulls = batch->nulls[key->col];
		uint8	   *dst_nulls = buf->nulls[k] + at / 8;

		if (key->program)
			continue;			/* the device computes it from the program columns */
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
			uint32		w = gpuops_key_raw_width(key->kind);

			memcpy((char *) buf->values[k] + (Size) at * w,
				   batch->values[key->col] + (Size) from * w, (Size) n * w);
			continue;
		}
		for (uint32 i = 0; i < n; i++)
		{
			uint8	   *out = (uint8 *) buf->values[k] + (Size) (at + i) * 16;
			bool		isnull;
			Datum		d = GpuopsBatchDatum(&st->store, batch, key->col, from + i, &isnull);

			if (isnull)
				memset(out, 0, 16);
			else if (TextPrefix(st, d, key->bpchar, out))
				MarkTruncated(st, batch_first_row + from + i);
		}
	}
	if (st->prog_ncols > 0)
		DeviceExprStageInto(&st->store, batch, from, n, st->prog_cols, st->prog_types,
							st->prog_ncols, buf->input_words, buf->input_nulls, at);
	MemoryContextReset(st->tmp_cxt);
}

/* Stages one batch's key columns, submitting buffers as they fill. */
static GpuopsStatus
DeviceStageBatch(GpuSortState *st, GpuopsBatch *batch, uint64 batch_first_row)
{
	GpuSortDevice *dev = st->dev;
	uint32		done = 0;
	GpuopsStatus rc;

	while (done < batch->nrows)
	{
		uint32		n;

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

/* A bounded or spilling sort sorts several times: EXPLAIN shows the totals. */
static void
AddStats(GpuopsStats *sum, const GpuopsStats *one)
{
	sum->rows += one->rows;
	sum->batches += one->batches;
	sum->key_words = one->key_words;
	sum->runs += one->runs;
	sum->sort_passes = Max(sum->sort_passes, one->sort_passes);
	sum->sort_bits = Max(sum->sort_bits, one->sort_bits);
	sum->copy_ms += one->copy_ms;
	sum->kernel_ms += one->kernel_ms;
	sum->device_bytes = Max(sum->device_bytes, one->device_bytes);
}

/*
 * A row whose computed key the device stopped at: PostgreSQL evaluates the
 * keys there, in order, and raises the error the device saw.  The device
 * stops only where PostgreSQL raises one (DeviceExprCompileInput), so
 * returning is a bug, reported as such.
 */
static void
RaiseKeyError(GpuSortState *st, uint64 row)
{
	TupleTableSlot *slot = st->check_slot;
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;

	if (row >= st->store.nrows)
		elog(ERROR, "GpuSort: the device stopped at row " UINT64_FORMAT " of " UINT64_FORMAT,
			 row, st->store.nrows);
	GpuopsRowStoreFetchRow(&st->store, row, slot);
	econtext->ecxt_outertuple = slot;
	for (int k = 0; k < st->nkeys; k++)
	{
		bool		isnull;

		if (st->keys[k].check != NULL)
			(void) ExecEvalExpr(st->keys[k].check, econtext, &isnull);
	}
	elog(ERROR, "GpuSort: the device could not compute a sort key that PostgreSQL computes");
}

/*
 * The sorted rows' computed keys: raises the error of a row the device
 * stopped at, else stores the device's values in the keys' columns.
 */
static GpuopsStatus
FetchComputed(GpuSortState *st)
{
	GpuSortDevice *dev = st->dev;
	GpuopsStatus rc;
	uint64		stop;

	if ((rc = dev->backend->sort_recheck(dev->handle, &stop)) != GPUOPS_OK)
		return rc;
	if (stop != GPUOPS_SORT_NO_RECHECK)
		RaiseKeyError(st, stop);
	for (int k = 0; k < st->nkeys; k++)
	{
		int			col = st->keys[k].col;

		if (st->keys[k].program == NULL)
			continue;
		for (int b = 0; b < st->store.nbatches; b++)
		{
			GpuopsBatch *batch = st->store.batches[b];

			if (batch->nrows == 0)
				continue;
			if (batch->nulls[col] == NULL)
				batch->nulls[col] = (uint8 *) MemoryContextAllocZero(st->store.cxt,
																	 (batch->capacity + 7) / 8);
			rc = dev->backend->sort_values(dev->handle, k, (uint64) b << GPUOPS_BATCH_SHIFT,
										   batch->nrows, batch->values[col], batch->nulls[col]);
			if (rc != GPUOPS_OK)
				return rc;
		}
	}
	return GPUOPS_OK;
}

/*
 * Submits the last partial buffer, sorts, and fetches the order and, when
 * text keys were truncated, which sorted rows tie with their predecessor;
 * and the computed keys' values.
 */
static GpuopsStatus
DeviceFinish(GpuSortState *st, uint32 *order, uint8 **ties)
{
	GpuSortDevice *dev = st->dev;
	GpuopsStatus rc;

	*ties = NULL;
	if (dev->have_buf)
	{
		dev->have_buf = false;
		if (dev->buf_rows > 0 &&
			(rc = dev->backend->sort_submit(dev->handle, dev->buf_rows)) != GPUOPS_OK)
			return rc;
	}
	if ((rc = dev->backend->sort_finish(dev->handle)) != GPUOPS_OK)
		return rc;
	while ((rc = dev->backend->sort_poll(dev->handle)) == GPUOPS_PENDING)
		GpuopsWaitForDevice();
	if (rc != GPUOPS_OK)
		return rc;
	if (st->ncomputed > 0 && (rc = FetchComputed(st)) != GPUOPS_OK)
		return rc;
	if ((rc = dev->backend->sort_result(dev->handle, order, st->store.nrows)) != GPUOPS_OK)
		return rc;
	if ((st->any_truncated || st->has_abbrev_keys) && st->store.nrows > 1)
	{
		*ties = (uint8 *) MemoryContextAllocHuge(st->store.cxt, (st->store.nrows + 7) / 8);
		if ((rc = dev->backend->sort_ties(dev->handle, *ties, st->store.nrows)) != GPUOPS_OK)
			return rc;
	}
	{
		GpuopsStats one;

		memset(&one, 0, sizeof(one));
		dev->backend->sort_stats(dev->handle, &one);
		AddStats(&st->stats, &one);
	}
	return GPUOPS_OK;
}

/* Sorts everything already in the store on the CPU backend. */
static void
SortStoredOnCpu(GpuSortState *st, uint32 *order, uint8 **ties)
{
	GpuopsStatus rc = DeviceBegin(st, gpuops_cpu_device()->sort, false);

	for (int b = 0; rc == GPUOPS_OK && b < st->store.nbatches; b++)
		rc = DeviceStageBatch(st, st->store.batches[b], (uint64) b << GPUOPS_BATCH_SHIFT);
	if (rc == GPUOPS_OK)
		rc = DeviceFinish(st, order, ties);
	if (rc != GPUOPS_OK)
		GpuopsDeviceFailed(GPUSORT_NAME, rc, false);	/* raises */
}

/* PostgreSQL's comparators for the sort keys, prepared once per node. */
static void
EnsureComparators(GpuSortState *st)
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
	uint32		ra = *(const uint32 *) a;
	uint32		rb = *(const uint32 *) b;

	for (int k = 0; k < st->nkeys; k++)
	{
		bool		na,
					nb;
		Datum		da = GpuopsRowStoreDatum(&st->store, ra, st->keys[k].col, &na);
		Datum		db = GpuopsRowStoreDatum(&st->store, rb, st->keys[k].col, &nb);
		int			c = ApplySortComparator(da, na, db, nb, &st->ssup[k]);

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
static void
ResolveTies(GpuSortState *st, uint32 *order, const uint8 *ties)
{
	uint64		n = st->store.nrows;

	EnsureComparators(st);
	for (uint64 i = 1; i < n;)
	{
		uint64		start,
					end;
		bool		need = false;

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
			need = IsTruncated(st, order[r]);
		if (need)
		{
			qsort_arg(order + start, end - start, sizeof(uint32), CompareRows, st);
			st->tie_runs++;
		}
		CHECK_FOR_INTERRUPTS();
	}
}

/* Reports a device failure once; the rest of the sort runs on the CPU. */
static void
DeviceFailedMidway(GpuSortState *st, GpuopsStatus rc)
{
	GpuopsDeviceFailed(GPUSORT_NAME, rc, true);	/* raises unless falling back */
	if (st->fallback == NULL)
		st->fallback = MemoryContextStrdup(st->sort_cxt, gpuops_last_error());
	DeviceRelease(st->dev);
	st->healthy = false;
}

/* Starts the device sort of the rows staged from now on. */
static void
StartDeviceSort(GpuSortState *st, bool primary)
{
	GpuopsStatus rc;

	if (!st->healthy)
		return;
	rc = DeviceBegin(st, st->primary, primary);
	if (rc != GPUOPS_OK)
		DeviceFailedMidway(st, rc);
}

/*
 * Stages the store's batches not yet staged for the current device sort:
 * the full ones, or with `all` the last, partial one too.  Staging offsets
 * must stay multiples of 8 rows, so a partial batch is staged only when the
 * sort is about to finish.
 */
static void
StagePending(GpuSortState *st, bool all)
{
	while (st->staged_batches < st->store.nbatches)
	{
		GpuopsBatch *batch = st->store.batches[st->staged_batches];

		if (!all && batch->nrows < GPUOPS_BATCH_ROWS)
			break;
		if (st->healthy && batch->nrows > 0)
		{
			GpuopsStatus rc = DeviceStageBatch(st, batch,
											   (uint64) st->staged_batches << GPUOPS_BATCH_SHIFT);

			if (rc != GPUOPS_OK)
				DeviceFailedMidway(st, rc);
		}
		st->staged_batches++;
	}
}

/* The store's rows changed wholesale: staging and truncation marks start over. */
static void
ForgetTruncated(GpuSortState *st)
{
	st->staged_batches = 0;
	st->truncated = NULL;		/* it lived in the store's memory */
	st->truncated_bytes = 0;
	st->any_truncated = false;
}

/*
 * Sorts every row now in the store (on the device when healthy, else on the
 * CPU backend) and returns their order, ties resolved; the device sort is
 * released.
 */
static uint32 *
SortStoredRows(GpuSortState *st)
{
	uint32	   *sorted;
	uint8	   *ties = NULL;

	if (st->store.nrows > UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gpuops: GpuSort cannot hold more than %u rows in memory", UINT32_MAX),
				 errhint("Lower gpuops.host_memory_limit so that sorted runs are spilled sooner.")));
	sorted = (uint32 *) MemoryContextAllocHuge(st->store.cxt,
											   Max(st->store.nrows, 1) * sizeof(uint32));
	StagePending(st, true);
	if (st->healthy)
	{
		GpuopsStatus rc = DeviceFinish(st, sorted, &ties);

		if (rc != GPUOPS_OK)
			DeviceFailedMidway(st, rc);
	}
	if (!st->healthy)
		SortStoredOnCpu(st, sorted, &ties);
	st->backend_name = st->dev->backend->name;
	DeviceRelease(st->dev);		/* free device memory before emitting */
	if (ties)
	{
		ResolveTies(st, sorted, ties);
		pfree(ties);
	}
	st->host_memory = Max(st->host_memory, GpuopsRowStoreMemory(&st->store) +
						  (st->stage ? GpuStageBytes(st->stage) : 0));
	return sorted;
}

/*
 * After a compaction the store's rows are the best `bound` so far, in
 * order: the last one's first key becomes the cut, and the source drops
 * every row whose first key sorts after it without copying the row.  On
 * input in random order only about bound * ln(rows / bound) rows pass, so
 * a top-N reads its input at the cost of one key comparison a row, as
 * PostgreSQL's bounded heap does (whose rows are copied before they are
 * compared).
 */
static void
SetCut(GpuSortState *st)
{
	const GpuopsColumnDesc *col = &st->store.cols[st->keys[0].col];
	Datum		d;
	bool		isnull;

	if (st->store.nrows < st->bound || st->source->cut == NULL)
		return;
	EnsureComparators(st);
	d = GpuopsRowStoreDatum(&st->store, st->bound - 1, st->keys[0].col, &isnull);
	MemoryContextReset(st->cut_cxt);
	/*
	 * The store's memory goes at the next compaction: keep a copy, and a
	 * plain one of a toasted value, which every comparison would otherwise
	 * fetch and decompress again.
	 */
	if (!isnull)
	{
		MemoryContext old = MemoryContextSwitchTo(st->cut_cxt);

		if (col->typlen == -1)
			d = PointerGetDatum(pg_detoast_datum_copy((struct varlena *) DatumGetPointer(d)));
		else
			d = datumCopy(d, col->typbyval, col->typlen);
		MemoryContextSwitchTo(old);
	}
	st->cut.value = isnull ? (Datum) 0 : d;
	st->cut.isnull = isnull;
	st->cut.ssup = &st->ssup[0];
	st->cut.active = true;
}

/*
 * Bounded sort (top-N): the store has grown to compact_rows; keep only the
 * best `bound` rows and go on.  The kept rows are staged again (full batches
 * now; the last, partial one when it fills) for the next device sort.
 */
static void
KeepBestRows(GpuSortState *st)
{
	uint32	   *order = SortStoredRows(st);

	GpuopsRowStoreKeep(&st->store, order, Min(st->bound, st->store.nrows), st->scratch);
	ForgetTruncated(st);
	st->compactions++;
	SetCut(st);
	StartDeviceSort(st, false);
	StagePending(st, false);
}

/*
 * The store holds more than gpuops.host_memory_limit: sort it, write it out
 * as a run (only the first `bound` rows when bounded) and start over.
 */
static void
SpillRun(GpuSortState *st)
{
	uint32	   *order = SortStoredRows(st);
	uint64		n = st->bound ? Min(st->bound, st->store.nrows) : st->store.nrows;

	EnsureComparators(st);
	if (st->spill == NULL)
		st->spill = GpuopsSortRunsCreate(st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
										 st->nkeys, st->key_cols, st->ssup, st->sort_cxt);
	GpuopsRowStorePermute(&st->store, order, n);
	GpuopsSortRunsWrite(st->spill, &st->store, n);
	GpuopsRowStoreReset(&st->store);
	ForgetTruncated(st);
	st->spilled_runs = GpuopsSortRunsCount(st->spill);
	st->spilled_bytes = GpuopsSortRunsBytes(st->spill);
	StartDeviceSort(st, false);
}

/* With spilled runs: start merging them with the in-memory run. */
static void
BeginSpillMerge(GpuSortState *st)
{
	GpuopsSortRunsBeginMerge(st->spill, &st->store, st->norder, st->bound);
	if (!st->random_access)
		return;
	/* backward scans: keep the merged output in a tuplestore (it spills too) */
	st->replay = tuplestore_begin_heap(true, false, work_mem);
	while (GpuopsSortRunsNext(st->spill, st->replay_slot))
	{
		tuplestore_puttupleslot(st->replay, st->replay_slot);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Below a Gather of GpuStage: running the Gather makes the workers (and the
 * leader) read every row into shared memory, and it returns none; the
 * chunks then become the store's batches, full ones in place.  They are
 * not spilled however large (the planner offers this plan only when the
 * estimate fits the host memory limit): their memory is already taken, and
 * only Gather's shutdown frees it.
 */
static void
CollectStaged(GpuSortState *st)
{
	PlanState  *child = (PlanState *) linitial(st->css.custom_ps);

	if (!TupIsNull(ExecProcNode(child)))
		elog(ERROR, "GpuSort: a row came through the Gather of GpuStage");
	GpuStageCollect(st->stage, &st->store);
}

static void
GpuSortExecute(GpuSortState *st)
{
	bool		more = st->stage == NULL;
	uint32	   *sorted;
	instr_time	t0,
				t1;

	INSTR_TIME_SET_CURRENT(t0);
	st->healthy = true;
	st->staged_batches = 0;
	/*
	 * Staged input: the workers read every row before the device sees one,
	 * so the device starts after them.  Starting it first would wait for
	 * the CUDA context (made on the prewarm thread) before launching them.
	 */
	if (st->stage != NULL)
		CollectStaged(st);
	StartDeviceSort(st, true);
	while (more)
	{
		GpuopsBatch *batch = GpuopsRowStoreOpenBatch(&st->store);

		/* fill returns with the batch full, or at the end of the input */
		more = st->source->fill(st->source, &st->store, batch);
		StagePending(st, !more);
		CHECK_FOR_INTERRUPTS();
		if (!more)
			break;
		/*
		 * Bounded: compact at the row count, or when the rows outgrow the
		 * memory limit and compacting at least halves them (spilling would
		 * write only `bound` rows of them anyway).
		 */
		if (st->bound > 0 &&
			(st->store.nrows >= (st->cut.active ? st->compact_rows : st->first_compact_rows) ||
			 (st->store.nrows >= 2 * st->bound &&
			  GpuopsRowStoreMemory(&st->store) > st->mem_limit)))
			KeepBestRows(st);
		if (GpuopsRowStoreMemory(&st->store) > st->mem_limit)
			SpillRun(st);
	}
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	st->staging_ms += INSTR_TIME_GET_MILLISEC(t1);

	sorted = SortStoredRows(st);
	st->norder = st->bound ? Min(st->bound, st->store.nrows) : st->store.nrows;
	/* rows go out in order: lay the columns out in that order first */
	INSTR_TIME_SET_CURRENT(t0);
	GpuopsRowStorePermute(&st->store, sorted, st->norder);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	st->reorder_ms += INSTR_TIME_GET_MILLISEC(t1);
	pfree(sorted);
	if (st->spill)
		BeginSpillMerge(st);
	st->runs++;
	st->sorted = true;
	st->pos = 0;
	st->eof = false;
	INSTR_TIME_SET_CURRENT(st->emit_start);
}

/* DEBUG1: how long returning the rows took, the nodes above included. */
static void
ReportEmission(GpuSortState *st)
{
	instr_time	now;

	if (!message_level_is_interesting(DEBUG1))
		return;
	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, st->emit_start);
	elog(DEBUG1, "GpuSort: " UINT64_FORMAT " rows returned in %.3f ms",
		 st->norder, INSTR_TIME_GET_MILLISEC(now));
}

static TupleTableSlot *
GpuSortNext(ScanState *ss)
{
	GpuSortState *st = (GpuSortState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	uint64		row;

	if (!st->sorted)
		GpuSortExecute(st);
	if (st->replay)
	{
		/* spilled, with backward scans allowed: read the merged tuplestore */
		if (!tuplestore_gettupleslot(st->replay,
									 ScanDirectionIsForward(ss->ps.state->es_direction),
									 false, st->replay_slot))
			return ExecClearTuple(slot);
		return ExecCopySlot(slot, st->replay_slot);
	}
	if (st->spill)
	{
		Assert(ScanDirectionIsForward(ss->ps.state->es_direction));
		GpuopsSortRunsNext(st->spill, slot);
		return slot;
	}
	if (ScanDirectionIsForward(ss->ps.state->es_direction))
	{
		if (st->pos >= st->norder)
		{
			if (!st->eof)
				ReportEmission(st);
			st->eof = true;
			return ExecClearTuple(slot);
		}
		row = st->pos++;
	}
	else
	{
		/* as tuplesort: after EOF the last row, else the one before the last returned */
		if (st->pos == 0)
			return ExecClearTuple(slot);
		if (st->eof)
			st->eof = false;
		else if (--st->pos == 0)
			return ExecClearTuple(slot);
		row = st->pos - 1;
	}
	/* no prefetch: the permutation laid every column, values too, out in this order */
	GpuopsRowStoreFetchOutput(&st->store, row, slot);
	return slot;
}

static Node *
CreateGpuSortStateImpl(CustomScan *cscan)
{
	GpuSortState *st = NewCustomScanState<GpuSortState>(cscan, &gpu_sort_exec_methods);
	GpuSortPlan *plan = GpuSortReadPlan(cscan->custom_private);

	st->nkeys = plan->nkeys;
	st->bound = (uint64) plan->bound;
	/*
	 * bounded: sort and cut at twice the bound (amortizing each cut over as
	 * many new rows as it keeps), and at least every 4 batches (256K rows)
	 */
	st->compact_rows = Max(2 * st->bound, (uint64) 4 * GPUOPS_BATCH_ROWS);
	/* the first compaction sets the cut: the sooner, the fewer rows copied */
	st->first_compact_rows = Max(2 * st->bound, (uint64) GPUOPS_BATCH_ROWS);
	st->placement = plan->placement;
	for (int k = 0; k < st->nkeys; k++)
	{
		GpuSortKeyInfo *key = &st->keys[k];
		const GpuSortKeyPlan *kp = &plan->keys[k];
		TargetEntry *tle;

		key->col = kp->col;
		key->kind = kp->kind;
		key->descending = kp->descending;
		key->nulls_first = kp->nulls_first;
		key->prefix_only = kp->prefix_only;
		key->sortop = kp->sortop;
		key->collation = kp->collation;
		st->key_cols[k] = key->col;
		tle = (TargetEntry *) list_nth(cscan->custom_scan_tlist, key->col);
		key->bpchar = exprType((Node *) tle->expr) == BPCHAROID;
		st->has_prefix_keys |= key->prefix_only;
		st->has_abbrev_keys |= key->kind == GPUOPS_KEY_NUMERIC_ABBREV ||
			key->kind == GPUOPS_KEY_ABBREV_UNSIGNED;
	}
	if (plan->programs != NIL)
	{
		st->prog_ncols = plan->prog_ncols;
		memcpy(st->prog_cols, plan->prog_cols, sizeof(int) * plan->prog_ncols);
		memcpy(st->prog_types, plan->prog_types, sizeof(Oid) * plan->prog_ncols);
		for (int k = 0; k < st->nkeys; k++)
		{
			List	   *prog = (List *) list_nth(plan->programs, k);

			if (prog == NIL)
				continue;
			st->keys[k].program = (GpuopsExprProgram *) palloc(sizeof(GpuopsExprProgram));
			DeviceExprProgramFromList(prog, st->keys[k].program);
			st->ncomputed++;
		}
	}
	st->checks = plan->checks;
	pfree(plan);
	return (Node *) st;
}

static void
BeginGpuSortImpl(CustomScanState *node, EState *estate, int eflags)
{
	GpuSortState *st = (GpuSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	PlanState  *child;

	/* the store holds every row: the child never needs to go backward */
	child = ExecInitNode((Plan *) linitial(cscan->custom_plans), estate,
						 eflags & ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
	node->custom_ps = list_make1(child);
	st->source = GpuopsChildPlanSource(child);
	st->stage = GpuStageBelow(child);
	/*
	 * Over GpuStage the workers only read rows, and a bounded sort's
	 * workers sort on the CPU: the device budget and the pinned pool are
	 * this process's alone, not a share of them.
	 */
	st->device_shared = st->placement == GPUSORT_ON_DEVICE &&
		GpuStageDeviceShared(st->stage);
	/*
	 * A bounded sort planned so sorts its few rows (what passes the cut)
	 * with the CPU backend, in every process or in parallel workers only: it
	 * opens no CUDA context, which would take longer than reading its share.
	 */
	st->primary = st->placement == GPUSORT_ON_HOST ||
		(st->placement == GPUSORT_WORKERS_ON_HOST && IsParallelWorker()) ?
		gpuops_cpu_device()->sort : GpuopsPrimaryDevice()->sort;
	if (st->primary != gpuops_cpu_device()->sort)
		GpuopsPrewarmDeviceFor(eflags, st->device_shared);
	/*
	 * No cut with computed keys: a row dropped unread would never have its
	 * keys computed, where PostgreSQL computes (and may fail on) every one.
	 */
	if (st->bound > 0 && st->ncomputed == 0)
	{
		st->cut.col = st->keys[0].col;
		st->source->cut = &st->cut;
	}
	GpuopsRowStoreInit(&st->store, node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
					   estate->es_query_cxt);
	if (st->ncomputed > 0)
	{
		List	   *checks = st->checks;
		int			j = 0;

		/* the computed keys are the scan tuple's last columns, filled after the sort */
		GpuopsRowStoreSetInputColumns(&st->store, st->store.ncols - st->ncomputed);
		for (int k = 0; k < st->nkeys; k++)
		{
			Expr	   *e;

			if (st->keys[k].program == NULL)
				continue;
			e = (Expr *) copyObject(list_nth(checks, j++));
			fix_opfuncids((Node *) e);
			st->keys[k].check = ExecInitExpr(e, &node->ss.ps);
		}
		st->check_slot = ExecInitExtraTupleSlot(estate, ExecGetResultType(child), &TTSOpsVirtual);
	}
	st->tmp_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuSort staging",
										ALLOCSET_DEFAULT_SIZES);
	st->sort_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuSort",
										 ALLOCSET_DEFAULT_SIZES);
	st->cut_cxt = AllocSetContextCreate(st->sort_cxt, "GpuSort cut", ALLOCSET_SMALL_SIZES);
	st->scratch = ExecAllocTableSlot(&estate->es_tupleTable,
									 node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
									 &TTSOpsVirtual);
	st->replay_slot = ExecAllocTableSlot(&estate->es_tupleTable,
										 node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
										 &TTSOpsMinimalTuple);
	st->mem_limit = GpuopsHostMemoryLimit();
	st->random_access = (eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) != 0;
	st->dev = NewQueryDevice<GpuSortDevice, DeviceRelease>(estate);
}

static TupleTableSlot *
ExecGpuSortImpl(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;

	/*
	 * Sorted rows in memory, nothing to filter or project, no EvalPlanQual
	 * recheck (the usual case): the next row straight from the store,
	 * without ExecScan's per-row checks and context reset.  Emission bounds
	 * a large sort (50M rows at about 60 ns each).
	 */
	if (st->sorted && st->spill == NULL && st->replay == NULL && node->ss.ps.qual == NULL &&
		node->ss.ps.ps_ProjInfo == NULL && node->ss.ps.state->es_epq_active == NULL)
	{
		CHECK_FOR_INTERRUPTS();
		return GpuSortNext(&node->ss);
	}
	return ExecScan(&node->ss, GpuSortNext, GpuopsScanRecheck);
}

/* Closes (deletes) the spilled runs and their replay store. */
static void
ForgetSpill(GpuSortState *st)
{
	if (st->replay)
		tuplestore_end(st->replay);
	st->replay = NULL;
	if (st->spill)
		GpuopsSortRunsClose(st->spill);
	st->spill = NULL;
}

static void
EndGpuSortImpl(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;
	instr_time	t0,
				t1;

	INSTR_TIME_SET_CURRENT(t0);
	DeviceRelease(st->dev);
	ForgetSpill(st);
	ExecEndNode((PlanState *) linitial(node->custom_ps));
	GpuopsRowStoreFree(&st->store);
	/* DEBUG1, beside ReportEmission's: only for a sort that ran */
	if (st->runs > 0 && message_level_is_interesting(DEBUG1))
	{
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		elog(DEBUG1, "GpuSort: ended in %.3f ms", INSTR_TIME_GET_MILLISEC(t1));
	}
}

static void
ReScanGpuSortImpl(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;
	PlanState  *child = (PlanState *) linitial(node->custom_ps);

	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(child, node->ss.ps.chgParam);
	if (!st->sorted)
		return;
	/*
	 * Staged rows (and the text values the sorted columns point to) live in
	 * the parallel query's shared memory, which a Limit above may have
	 * released already (ExecShutdownNode): read them again.
	 */
	if (child->chgParam == NULL && st->stage == NULL)
	{
		/* same input: replay the sorted rows */
		st->pos = 0;
		st->eof = false;
		if (st->replay)
			tuplestore_rescan(st->replay);
		else if (st->spill)
			GpuopsSortRunsBeginMerge(st->spill, &st->store, st->norder, st->bound);
		return;
	}
	/* the input changes with the new parameters: sort again */
	DeviceRelease(st->dev);
	ForgetSpill(st);
	GpuopsRowStoreReset(&st->store);
	st->source->rescan(st->source);
	ForgetTruncated(st);
	st->cut.active = false;		/* the new input's rows decide it again */
	st->norder = 0;
	st->sorted = false;
}

static void
ExplainGpuSortImpl(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuSortState *st = (GpuSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	List	   *keys = NIL;
	List	   *computed = NIL;
	int			words = 0;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	for (int k = 0; k < st->nkeys; k++)
	{
		const GpuSortKeyInfo *key = &st->keys[k];
		TargetEntry *tle = (TargetEntry *) list_nth(cscan->custom_scan_tlist, key->col);
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoString(&buf, deparse_expression((Node *) tle->expr, context,
														list_length(es->rtable) > 1 || es->verbose,
														false));
		if (key->program != NULL)
			computed = lappend(computed, pstrdup(buf.data));
		/* as PostgreSQL's show_sortorder_options */
		if (OidIsValid(key->collation) && key->collation != exprCollation((Node *) tle->expr))
		{
			char	   *name = get_collation_name(key->collation);

			if (name)
				appendStringInfo(&buf, " COLLATE %s", quote_identifier(name));
		}
		if (key->descending)
			appendStringInfoString(&buf, " DESC");
		if (key->nulls_first && !key->descending)
			appendStringInfoString(&buf, " NULLS FIRST");
		else if (!key->nulls_first && key->descending)
			appendStringInfoString(&buf, " NULLS LAST");
		keys = lappend(keys, buf.data);
		words += 1 + gpuops_key_value_words(key->kind);
	}
	ExplainPropertyList("Sort Key", keys, es);
	if (computed != NIL)
		ExplainPropertyList("Keys Computed on Device", computed, es);
	ExplainPropertyText("Sort Method",
						psprintf("radix on %d-byte keys%s%s", words * 8,
								 st->has_prefix_keys ? ", ties by comparator" : "",
								 st->bound ? ", top-N" : ""),
						es);
	if (st->bound)
		ExplainPropertyInteger("Row Bound", NULL, (int64) st->bound, es);
	if (st->placement == GPUSORT_ON_HOST)
		ExplainPropertyText("Sorts On", "cpu (small bound)", es);
	else if (st->placement == GPUSORT_WORKERS_ON_HOST)
		ExplainPropertyText("Sorts On", "device in the leader, cpu in workers", es);

	if (es->analyze && st->runs > 0)
	{
		GpuopsExplainDeviceRun(es, st->backend_name, st->fallback, &st->stats,
							   st->staging_ms, st->host_memory);
		if (es->timing)
			ExplainPropertyFloat("Reorder Time", "ms", st->reorder_ms, 3, es);
		if (st->has_prefix_keys)
			ExplainPropertyInteger("Tie Runs", NULL, (int64) st->tie_runs, es);
		if (st->bound)
		{
			ExplainPropertyInteger("Compactions", NULL, (int64) st->compactions, es);
			ExplainPropertyInteger("Rows Removed by Bound", NULL, (int64) st->cut.dropped, es);
		}
		if (st->spilled_runs > 0)
		{
			ExplainPropertyInteger("Spilled Runs", NULL, st->spilled_runs, es);
			ExplainPropertyInteger("Spilled Disk", "kB", (int64) (st->spilled_bytes / 1024), es);
		}
	}
	GpuopsExplainDirectRows(es, st->source, NULL);
}

/* The boundary: every callback PostgreSQL calls runs through GpuopsGuard. */
const CustomExecMethods gpu_sort_exec_methods = {
	GPUSORT_NAME,
	GuardedBegin<BeginGpuSortImpl>,
	GuardedExec<ExecGpuSortImpl>,
	GuardedEnd<EndGpuSortImpl>,
	GuardedReScan<ReScanGpuSortImpl>,
	NULL,						/* MarkPosCustomScan */
	NULL,						/* RestrPosCustomScan */
	NULL,						/* EstimateDSMCustomScan */
	NULL,						/* InitializeDSMCustomScan */
	NULL,						/* ReInitializeDSMCustomScan */
	NULL,						/* InitializeWorkerCustomScan */
	NULL,						/* ShutdownCustomScan */
	GuardedExplain<ExplainGpuSortImpl>,
};

const CustomScanMethods gpu_sort_scan_methods = {
	GPUSORT_NAME,
	GuardedCreateState<CreateGpuSortStateImpl>,
};

void
GpuSortRegister(void)
{
	RegisterCustomScanMethods(&gpu_sort_scan_methods);
}
