/*
 * gpu_query_run.cpp
 *    GpuQuery's run: the table's pages through the reader (query_reader.h)
 *    into the query backend (gpuops_query.h), batch by batch, then the
 *    groups back.
 *
 * Three ways out besides the groups:
 *  - a device failure: the base's fallback (node.h) runs it all again on
 *    the CPU backend, the table read again from its start;
 *  - a row the device cannot decide (the backend's escape row), a value
 *    the reader cannot turn into words, a scan the reader cannot take
 *    (EvalPlanQual, a snapshot not in page mode), or no query backend at
 *    all: the node escapes to PostgreSQL's plan of the block (its child),
 *    so the answer, and any error, is PostgreSQL's;
 *  - an error or cancel: the reader's context callback and the device
 *    session's release (on the query context) clean up.
 * No frame here holds an object with a destructor: ereport may leave any.
 */
extern "C" {
#include "postgres.h"

#include "access/tableam.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
}

#include "device.h"
#include "device_expr.h"
#include "gpu_query_exec.h"
#include "guc.h"
#include "page_service.h"
#include "query_deform.h"

/* The node runs PostgreSQL's plan instead (why: a constant string). */
static void
Escape(GpuQueryState *st, const char *why)
{
	st->dev->end();
	st->escaping = true;
	st->escaped_ever = true;
	st->escape_why = why;
	st->done = true;
	elog(DEBUG1, "gpuops: GpuQuery runs PostgreSQL's plan: %s", why);
}

static const char *
EscapeWhat(const GpuQueryState *st, const GpuopsQueryStats *s)
{
	switch (s->escape_what)
	{
		case GPUOPS_QESC_VALUE:
			/* the pages form's: the words the host reader gives for the same value */
			return s->escape_index >= 0 && s->escape_index < st->plan->ncols &&
					st->cols[s->escape_index].form == QCOL_NUMERIC
				? QueryWhyNumericValue
				: QueryWhyTextValue;
		case GPUOPS_QESC_LONG_TEXT:
			return QueryWhyLongText;
		case GPUOPS_QESC_QUAL:
			return "the filter stopped at a row (an error or a value the device does not hold)";
		case GPUOPS_QESC_KEY:
			return "a group key stopped at a row";
		case GPUOPS_QESC_FILTER:
			return "an aggregate's FILTER stopped at a row";
		case GPUOPS_QESC_ARG:
			return "an aggregate argument the device cannot take exactly (NaN, overflow, scale)";
		case GPUOPS_QESC_DIM_KEY:
			return "a joined table's join key repeats (a fact row would join several rows)";
		case GPUOPS_QESC_DIM_RANGE:
			return "a joined table's join keys span every 64-bit value";
		default:
			return "a row the device cannot decide";
	}
}

/* Rows per batch: gpuops.batch_size worth of the columns' words, a multiple of 8. */
static uint32
BatchRows(const GpuQueryState *st)
{
	return QueryReaderBatchRows(st->cols, st->plan->ncols);
}

/* The spec: the plan's programs, the qual's Params bound to their values now. */
static void
FillSpec(GpuQueryState *st, GpuopsQuerySpec *spec)
{
	const GpuQueryPlan *plan = st->plan;

	memset(spec, 0, sizeof(*spec));
	spec->ncols = plan->ncols;
	for (int c = 0; c < plan->ncols; c++)
		spec->bytes16[c] = plan->forms[c] == QCOL_TEXT16 || plan->forms[c] == QCOL_BPCHAR16;
	if (st->qual != NULL)
	{
		DeviceExprBindParams(st->qual, st->param_states, st->param_slots, st->param_types,
							 st->css.ss.ps.ps_ExprContext);
		spec->qual = st->qual;
	}
	spec->nkeys = plan->nkeys;
	for (int k = 0; k < plan->nkeys; k++)
	{
		spec->keys[k].kind = plan->keys[k].kind;
		spec->keys[k].col = plan->keys[k].col;
		spec->keys[k].program = st->key_progs[k];
	}
	spec->naggs = plan->naggs;
	for (int a = 0; a < plan->naggs; a++)
	{
		GpuopsQueryAgg *q = &spec->aggs[a];

		q->kind = plan->aggs[a].kind;
		q->arg_type = plan->aggs[a].arg_type;
		q->arg_col = plan->aggs[a].arg_col;
		q->arg = st->arg_progs[a];
		q->filter = st->filter_progs[a];
		q->num_scale = plan->aggs[a].num_scale;
	}
	spec->group_capacity = (uint64) Max(Min(plan->groups, 16.0 * 1024 * 1024), 1.0);
	spec->tuple = st->read_pages == 1 ? &st->tuple : NULL;
	spec->pages_service = st->in_place && st->page_link.service != NULL ? &st->page_link : NULL;
	GpuQueryDimSpec(st, spec);
}

/*
 * Batches of pages read in place that may be pinned at once: every slot of
 * the parallel read (QueryParallelSlots) and the leader's own buffer.
 */
static int
PinnedBatches(const GpuQueryState *st)
{
	return QueryParallelSlots(Max(st->plan->nworkers, 0), true) + 1;
}

/*
 * Pages a batch of the pages form holds: gpuops.batch_size of them, fewer
 * for a small table so that every process gets some of it.
 */
static uint32
BatchPages(const GpuQueryState *st, int nprocs)
{
	double relpages = st->css.ss.ss_currentRelation->rd_rel->relpages;
	double pages = Max(((double) ((size_t) gpuops_batch_size_mb << 20)) / BLCKSZ, 16.0);

	/*
	 * Gathered by the page service, a batch is one request (32 MB of
	 * pages), so that the CUDA engine can hold it while the service
	 * gathers it (GpuopsQueryPages.may_hold): the leader's hand-offs then
	 * overlap the gathers.  Waited for in turn, batches of 64 MB (two
	 * requests) had beaten 16 MB ones: a batch costs round trips whatever
	 * its size.
	 */
	if (st->in_place && st->page_link.service != NULL)
		pages = GPUOPS_PAGE_SERVICE_PAGES;
	if (relpages > 0)
		pages = Min(pages, Max(16.0, relpages / (2.0 * nprocs)));
	/*
	 * Read in place, every slot and the leader's buffer may hold their
	 * pages pinned at once: together at most a quarter of shared buffers,
	 * so that other backends always find one to evict (ReadPages checks
	 * there is room for 16 pages each).
	 */
	if (st->in_place)
		pages = Min(pages, (double) NBuffers / (4.0 * PinnedBatches(st)));
	return (uint32) pages;
}

/* Pages this process's GpuQuery runs copied for the GPU (theirs and their workers'). */
static double pages_copied = 0;

/* Whether this table reads in place once shared buffers are mapped: a quarter of them or more. */
static bool
LargeEnough(const GpuQueryState *st)
{
	return gpuops_query_pages_in_place == GPUOPS_READ_PAGES_ON ||
		(gpuops_query_pages_in_place == GPUOPS_READ_PAGES_AUTO &&
		 st->css.ss.ss_currentRelation->rd_rel->relpages >= NBuffers / 4);
}

/*
 * Whether to start mapping shared buffers (auto): for such a table, once
 * this process has copied as many pages as shared buffers hold.  Mapping
 * costs the driver 0.15-0.7 s a GB of shared_buffers (16 GB on the H100:
 * 2.3 s, 9.7-11.3 s on a fresh server whose pages it first faults in),
 * during which the session's queries run up to 2x slower; reading in place
 * saves ~2 us a page of each process's walk (Q6 at TPC-H SF 10: 655 ->
 * 395 ms).  A session that has read that much reads more: it pays off
 * there, and a short one never pays it.
 */
static bool
WorthMapping(const GpuQueryState *st)
{
	return LargeEnough(st) &&
		(gpuops_query_pages_in_place == GPUOPS_READ_PAGES_ON || pages_copied >= NBuffers);
}

/* The node's page service channel goes with its memory: at the executor's end or an abort. */
static void
ReleasePageLink(void *arg)
{
	GpuopsPageServiceRelease((GpuopsPageLink *) arg);
}

/* A channel of the page service for this node's pages in place (false: none free, or no service). */
static bool
ClaimPageService(GpuQueryState *st)
{
	if (!GpuopsPageServiceClaim(&st->page_link))
		return false;
	st->page_link_cb.func = ReleasePageLink;
	st->page_link_cb.arg = &st->page_link;
	MemoryContextRegisterResetCallback(st->run_cxt, &st->page_link_cb);
	return true;
}

/*
 * Whether this node's runs read the pages form: gpuops.query_read_pages,
 * the backend (auto: the GPU's), and columns that have one; and whether
 * they read the pages in place: gpuops.query_pages_in_place, room for the
 * pins, and on the GPU a channel of the page service or shared buffers
 * mapped already by this process.  Decided once, so that a fallback's
 * reader reads as the first run's did; a node that finds neither copies,
 * and may start mapping shared buffers for later queries (RunOn,
 * WorthMapping).
 */
static bool
ReadPages(GpuQueryState *st, const GpuopsQueryBackend *primary)
{
	if (st->read_pages < 0)
	{
		Relation rel = st->css.ss.ss_currentRelation;
		QueryDeformShape shape;
		bool cuda = primary == gpuops_cuda_device()->query;
		bool want = gpuops_query_read_pages == GPUOPS_READ_PAGES_ON ||
			(gpuops_query_read_pages == GPUOPS_READ_PAGES_AUTO && cuda);
		MemoryContext old = MemoryContextSwitchTo(st->run_cxt);

		QueryDeformShapeInit(&shape, RelationGetDescr(rel), st->cols, st->plan->ncols);
		st->read_pages = want && QueryDeformPagesShape(&shape, &st->tuple) ? 1 : 0;
		MemoryContextSwitchTo(old);
		st->in_place = st->read_pages == 1 && QueryPagesInPlacePossible(rel) &&
			gpuops_query_pages_in_place != GPUOPS_READ_PAGES_OFF &&
			NBuffers / (4 * PinnedBatches(st)) >= 16 &&
			/*
			 * On the GPU: through the page service, whatever the table's
			 * size (it costs nothing to set up), or this process's own
			 * mapping (on: the tests' mode, which waits for one under way)
			 */
			(cuda ? ClaimPageService(st) ||
					 (LargeEnough(st) &&
					  QueryPagesMapped(gpuops_query_pages_in_place == GPUOPS_READ_PAGES_ON))
				  : gpuops_query_pages_in_place == GPUOPS_READ_PAGES_ON);
		if (st->in_place && cuda && st->page_link.service == NULL)
			st->map_ms = GpuopsHostMemoryMapMs(); /* (EXPLAIN: what the mapping took) */
	}
	return st->read_pages == 1;
}

/* The serial reader over st->scan, made the first time a run reads alone. */
static void
SerialReader(GpuQueryState *st)
{
	if (st->reader == NULL)
	{
		st->reader = QueryReaderBegin(st->scan, st->cols, st->plan->ncols,
									  st->read_pages == 1 ? 0 : gpuops_reader_threads,
									  BatchRows(st), st->run_cxt);
		if (st->read_pages == 1)
		{
			uint32 pages = BatchPages(st, 1);

			QueryReaderUsePages(st->reader, pages,
								QueryPagesRows(st->css.ss.ss_currentRelation, pages), st->in_place);
		}
	}
}

/* The table from its start (after a failed run). */
static void
RestartScan(GpuQueryState *st)
{
	table_rescan(st->scan, NULL);
	QueryReaderRescan(st->reader);
}

/*
 * Rows of a worker's slot: a batch's worth (gpuops.batch_size), fewer for
 * a small table, so that every process gets some of it.
 */
static uint32
SlotRows(const GpuQueryState *st, int nworkers)
{
	double reltuples = st->css.ss.ss_currentRelation->rd_rel->reltuples;
	double rows = BatchRows(st);

	if (reltuples > 0)
		rows = Min(rows, Max(1024.0, reltuples / (2.0 * (nworkers + 1))));
	return ((uint32) rows + 7) & ~7u;
}

/*
 * Starts the workers for this run when the plan asks for them and the
 * executor is in parallel mode (a cursor or a function that runs the plan
 * piecemeal is not: it reads alone).  False: the run reads alone.
 */
static bool
ParallelBegin(GpuQueryState *st)
{
	EState *estate = st->css.ss.ps.state;
	Relation rel = st->css.ss.ss_currentRelation;
	int nworkers = st->plan->nworkers;
	uint32 pages = 0, slot_rows;
	MemoryContext old;

	st->workers_launched = 0;
	if (nworkers <= 0 || !estate->es_use_parallel_mode || !QueryParallelPossible() ||
		!IsMVCCSnapshot(estate->es_snapshot))
		return false;
	/* a slot of pages has room for the rows such pages hold */
	if (st->read_pages == 1)
		pages = BatchPages(st, nworkers + 1);
	slot_rows = pages > 0 ? QueryPagesRows(rel, pages) : SlotRows(st, nworkers);
	st->par_cxt = AllocSetContextCreate(st->run_cxt, "GpuQuery parallel read",
										ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(st->par_cxt);
	/*
	 * The reader threads are shared out among the processes, at least one
	 * each (a worker alone both walks and deforms: the deforming then
	 * bounds it), none where there are none (CI's mode).
	 */
	st->par = QueryParallelBegin(rel, estate->es_snapshot, st->cols, st->plan->ncols, nworkers,
								 slot_rows, pages, st->in_place,
								 st->read_pages == 1 ? 0
									 : gpuops_reader_threads > 0
									 ? Max(gpuops_reader_threads / (nworkers + 1), 1)
									 : 0,
								 NULL, 0);
	st->slots_pinned = false;
	/* the leader's own batches are small: it ships the workers' first */
	st->leader_reader = QueryReaderBegin(QueryParallelLeaderScan(st->par), st->cols,
										 st->plan->ncols, 0, Max(slot_rows / 4, 1024u) & ~7u,
										 st->par_cxt);
	if (pages > 0)
	{
		uint32 own = Max(pages / 4, 16u);

		QueryReaderUsePages(st->leader_reader, own, QueryPagesRows(rel, own), st->in_place);
	}
	MemoryContextSwitchTo(old);
	st->workers_launched = QueryParallelLaunched(st->par);
	st->own_done = false;
	return true;
}

/* Ends a run's workers (when it had them); *workers: their reading. */
static void
ParallelEnd(GpuQueryState *st, QueryReaderStats *workers)
{
	memset(workers, 0, sizeof(*workers));
	if (st->par == NULL)
		return;
	if (st->leader_reader != NULL)
		QueryReaderEnd(st->leader_reader);
	st->leader_reader = NULL;
	QueryParallelEnd(st->par, workers);
	st->par = NULL;
	MemoryContextDelete(st->par_cxt);
	st->par_cxt = NULL;
}

/*
 * The next batch for the backend: with workers, one they filled (released
 * once the backend has read it: ReleaseBatches) or, when none waits, one
 * of the leader's own share; alone, the serial reader's.  False at the
 * end, or with *why set.  *from_worker: a worker's.  With blocked (the
 * backend holds a worker's batch), false with *blocked set where it would
 * wait for the workers.
 */
static bool
NextBatch(GpuQueryState *st, GpuopsQueryBatch *batch, const char **why, bool *from_worker,
		  bool *blocked)
{
	*why = NULL;
	*from_worker = false;
	if (blocked != NULL)
		*blocked = false;
	if (st->par == NULL)
		return QueryReaderNext(st->reader, batch, why);
	if (QueryParallelNextBatch(st->par, st->leader_reader, &st->own_done, batch, why, from_worker,
							   blocked))
		return true;
	if (*why != NULL)
	{
		/* it outlives the workers' context (EXPLAIN) */
		strlcpy(st->par_why, *why, sizeof(st->par_why));
		*why = st->par_why;
	}
	return false;
}

/*
 * The pins of the batches the backend has read go: every worker's slot but
 * the last one added while the backend holds it (held), and the leader's
 * own batch (never held).
 */
static void
ReleaseBatches(GpuQueryState *st, uint32 held)
{
	if (st->par != NULL)
	{
		while (QueryParallelHeld(st->par) > (int) held)
			QueryParallelRelease(st->par);
		QueryReaderUnpinPages(st->leader_reader);
	}
	else
		QueryReaderUnpinPages(st->reader);
}

/* The run's reading for EXPLAIN (the readers count over their life: less `base`). */
static void
RunReadStats(GpuQueryState *st, const QueryReaderStats *base)
{
	QueryReaderStats w;

	if (st->par != NULL)
	{
		QueryReaderStatsGet(st->leader_reader, &st->rstats);
		ParallelEnd(st, &w);
		st->rstats.pages += w.pages;
		st->rstats.rows += w.rows;
		st->rstats.batches += w.batches;
		st->rstats.walk_ms += w.walk_ms; /* the processes' walks together */
		st->rstats.threads += w.threads;
		st->workers_read_ms = w.read_ms;
		return;
	}
	QueryReaderStatsGet(st->reader, &st->rstats);
	st->rstats.pages -= base->pages;
	st->rstats.rows -= base->rows;
	st->rstats.batches -= base->batches;
	st->rstats.read_ms -= base->read_ms;
	st->rstats.walk_ms -= base->walk_ms;
}

/*
 * One run on `backend`: every batch added, then the groups.  An escape
 * returns GPUOPS_OK with st->escaping set.
 */
static GpuopsStatus
RunOn(GpuQueryState *st, const GpuopsQueryBackend *backend, bool restart)
{
	GpuopsSettings settings = GpuopsNodeSettings<&GpuopsDevice::query>(
		st, GpuopsSettingsFor(st->device_shared), backend);
	GpuopsQuerySpec spec;
	GpuopsQueryBatch batch;
	GpuopsStatus rc;
	const char *why = NULL;
	uint64 ngroups = 0;

	QueryReaderStats base;
	instr_time start, end;
	bool parallel;
	double finish_ms = 0; /* query_finish's part of st->finish_ms */

	st->dev->end();
	if (restart)
	{
		/* again from the start, alone: the workers' rows went to the failed run */
		ParallelEnd(st, &base);
		SerialReader(st);
		RestartScan(st);
	}
	memset(&base, 0, sizeof(base));
	if (st->par == NULL)
		QueryReaderStatsGet(st->reader, &base);
	FillSpec(st, &spec);
	st->dev->backend = backend;
	st->backend_name = backend->name;
	INSTR_TIME_SET_CURRENT(start);
	rc = backend->query_begin(&settings, &spec, &st->dev->handle);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	st->begin_ms = INSTR_TIME_GET_MILLISEC(end);
	if (rc != GPUOPS_OK)
		return rc;
	/* the CUDA engine's context is up now: the workers' slots copy at pinned speed */
	if (st->par != NULL && backend == gpuops_cuda_device()->query)
		st->slots_pinned = QueryParallelPin(st->par);
	/*
	 * and so do the pages of a run that reads alone.  The leader's own share
	 * beside workers is small: one registration a query is enough (each is
	 * a driver call that no cancel interrupts).
	 */
	if (st->read_pages == 1 && st->par == NULL && backend == gpuops_cuda_device()->query)
		(void) QueryReaderPinPages(st->reader);
	/*
	 * Shared buffers mapped for the GPU, once a context, for later queries
	 * to read in place (this one's readers are laid out already), on a
	 * thread of the runtime's, in pieces: the driver holds the backend's
	 * device calls back while it pins one (WorthMapping).
	 */
	if (st->read_pages == 1 && !st->in_place && backend == gpuops_cuda_device()->query &&
		QueryPagesInPlacePossible(st->css.ss.ss_currentRelation) && WorthMapping(st) &&
		!QueryPagesMapped(false))
		st->map_started = QueryPagesMapStart();
	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		GpuopsQueryPages pages;
		bool from_worker, blocked = false;

		CHECK_FOR_INTERRUPTS();
		/* an escape (from the start: a dimension's repeated key) ends the reading */
		backend->query_stats(st->dev->handle, &st->stats);
		if (st->stats.escape_row != GPUOPS_QUERY_NO_ESCAPE)
			break;
		if (!NextBatch(st, &batch, &why, &from_worker, st->stats.pages_held ? &blocked : NULL))
		{
			if (!blocked)
				break;
			/*
			 * The worker whose slot the backend holds may be waiting for it
			 * before it can end: an empty batch makes the backend read the
			 * held one, and the slot goes before the leader waits.
			 */
			memset(&batch, 0, sizeof(batch));
			batch.cols.ncols = st->plan->ncols;
			rc = backend->query_add(st->dev->handle, &batch);
			backend->query_stats(st->dev->handle, &st->stats);
			ReleaseBatches(st, 0);
			if (rc != GPUOPS_OK)
				return rc;
			continue;
		}
		/*
		 * A worker's slot keeps its pins until released, so the backend may
		 * hold it over this add (the leader's own buffer is refilled next)
		 */
		if (batch.pages != NULL)
		{
			pages = *batch.pages;
			pages.may_hold = from_worker;
			batch.pages = &pages;
		}
		rc = backend->query_add(st->dev->handle, &batch);
		backend->query_stats(st->dev->handle, &st->stats);
		ReleaseBatches(st, rc == GPUOPS_OK ? st->stats.pages_held : 0);
		if (rc != GPUOPS_OK)
			return rc;
	}
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	/*
	 * The batch the backend still holds is read by the finish, which comes
	 * before the workers end: they drop their slots' pins then.
	 */
	if (why == NULL && st->stats.escape_row == GPUOPS_QUERY_NO_ESCAPE)
	{
		instr_time finish_start, finish_end;

		INSTR_TIME_SET_CURRENT(finish_start);
		rc = backend->query_finish(st->dev->handle, &ngroups);
		ReleaseBatches(st, 0);
		if (rc != GPUOPS_OK)
			return rc;
		backend->query_stats(st->dev->handle, &st->stats);
		INSTR_TIME_SET_CURRENT(finish_end);
		INSTR_TIME_SUBTRACT(finish_end, finish_start);
		finish_ms = INSTR_TIME_GET_MILLISEC(finish_end);
	}
	else
		ReleaseBatches(st, 0);
	parallel = st->par != NULL;
	RunReadStats(st, &base);
	if (st->read_pages == 1 && !st->in_place && backend == gpuops_cuda_device()->query)
		pages_copied += st->rstats.pages;
	if (parallel)
		st->rstats.read_ms = INSTR_TIME_GET_MILLISEC(end); /* the leader's whole loop */
	if (why != NULL)
	{
		Escape(st, why);
		return GPUOPS_OK;
	}
	if (st->stats.escape_row != GPUOPS_QUERY_NO_ESCAPE)
	{
		Escape(st, EscapeWhat(st, &st->stats));
		return GPUOPS_OK;
	}
	INSTR_TIME_SET_CURRENT(start);
	rc = backend->query_groups(st->dev->handle, &st->group_keys, &st->results);
	if (rc != GPUOPS_OK)
		return rc;
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	st->finish_ms = INSTR_TIME_GET_MILLISEC(end) + finish_ms;
	st->ngroups = ngroups;
	st->key_words = (int) st->stats.key_words;
	return GPUOPS_OK;
}

void
GpuQueryRun(GpuQueryState *st)
{
	EState *estate = st->css.ss.ps.state;
	const GpuopsQueryBackend *primary = GpuopsPrimaryDevice()->query;
	const GpuopsQueryBackend *cpu = gpuops_cpu_device()->query;
	bool restart = false;
	GpuopsStatus rc;

	st->done = true;
	st->escaping = false;
	st->ngroups = st->next_group = 0;
	st->empty_row_done = false;
	/* gpuops.stat: an earlier run's figures (a rescan) */
	GpuopsNodeStatDevice(st, st->rstats.rows, st->stats.copy_ms, st->stats.kernel_ms,
						 st->stats.bytes_from_device);
	st->rstats.rows = 0; /* set again when this run has read */
	memset(&st->stats, 0, sizeof(st->stats));
	st->stats.escape_row = GPUOPS_QUERY_NO_ESCAPE;
	if (cpu == NULL)
	{
		Escape(st, "no query backend");
		return;
	}
	if (estate->es_epq_active != NULL)
	{
		Escape(st, "EvalPlanQual recheck");
		return;
	}
	if (st->scan == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);

		st->scan = table_beginscan(st->css.ss.ss_currentRelation, estate->es_snapshot, 0, NULL);
		MemoryContextSwitchTo(old);
	}
	else
		table_rescan(st->scan, NULL);
	if (!QueryReaderUsable(st->scan))
	{
		Escape(st, "a scan the reader cannot take (snapshot, direction)");
		return;
	}
	/*
	 * The dimensions first: one read from its pages starts workers of its
	 * own, which the table's would otherwise hold (max_parallel_workers),
	 * and the table's workers could only fill their few slots meanwhile.
	 */
	GpuQueryStageDims(st);
	(void) ReadPages(st, primary != NULL ? primary : cpu);
	if (!ParallelBegin(st))
	{
		if (st->reader == NULL)
			SerialReader(st);
		else
			QueryReaderRescan(st->reader);
	}
	else if (st->reader != NULL)
		QueryReaderRescan(st->reader); /* a later fallback restarts it */
	if (primary == NULL)
		primary = cpu;
	rc = RunOn(st, primary, false);
	if (rc != GPUOPS_OK)
	{
		/* the CPU backend, the table from its start; its failure raises */
		GpuopsNodeFailed(st, rc);
		st->stats.escape_row = GPUOPS_QUERY_NO_ESCAPE;
		restart = true;
		rc = RunOn(st, cpu, restart);
		if (rc != GPUOPS_OK)
			GpuopsDeviceFailed(GpuopsNodeName(st), rc, false);
	}
}

void
GpuQueryEndRun(GpuQueryState *st)
{
	QueryReaderStats ignored;

	st->dev->end();
	ParallelEnd(st, &ignored);
	if (st->reader != NULL)
		QueryReaderEnd(st->reader);
	st->reader = NULL;
	if (st->scan != NULL)
		table_endscan(st->scan);
	st->scan = NULL;
}
