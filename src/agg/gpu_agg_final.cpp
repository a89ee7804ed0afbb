/*
 * gpu_agg_final.cpp
 *    Which aggregates GpuAgg runs, and how each one's device state becomes
 *    exactly PostgreSQL's result: the same result type, NULL for no input,
 *    the same arithmetic for the final step (numeric_div for avg of
 *    integers, the aggregate's own final function for float avg, variance
 *    and stddev) and the same overflow error.
 *
 * What is exact: integer sums and averages (128-bit sums, as PostgreSQL's
 * int128 accumulators), count, min, max, bool_and, bool_or.  Float sums and
 * the float (N, Sx, Sxx) states are combined in a tree, as PostgreSQL's
 * parallel aggregation combines them, so for data whose sums round they can
 * differ from a serial plan in the last digit; where every partial sum is
 * exact (integers, few significant bits) they agree.  sum(float4) is
 * accumulated in float8 and rounded once.
 */
extern "C" {
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "libpq/pqformat.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
}

#include <cmath>

#include "agg_common.hpp"
#include "gpu_agg.h"
#include "types.h"

static Oid
AggFinalFn(Oid aggfnoid)
{
	HeapTuple tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	Oid fn;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	fn = ((Form_pg_aggregate) GETSTRUCT(tup))->aggfinalfn;
	ReleaseSysCache(tup);
	return fn;
}

bool
GpuAggClassify(Oid aggfnoid, Oid, GpuopsAggKind *kind, GpuAggFinal *final, Oid *final_fn)
{
	*final_fn = InvalidOid;
	switch (aggfnoid)
	{
		case F_COUNT_:
		case F_COUNT_ANY:
			*kind = GPUOPS_AGG_COUNT;
			*final = GPUAGG_FINAL_COUNT;
			return true;
		case F_SUM_INT2:
		case F_SUM_INT4:
			*kind = GPUOPS_AGG_SUM_INT;
			*final = GPUAGG_FINAL_SUM_INT8;
			return true;
		case F_SUM_INT8:
			*kind = GPUOPS_AGG_SUM_INT;
			*final = GPUAGG_FINAL_SUM_NUMERIC;
			return true;
		case F_AVG_INT2:
		case F_AVG_INT4:
		case F_AVG_INT8:
			*kind = GPUOPS_AGG_SUM_INT;
			*final = GPUAGG_FINAL_AVG_NUMERIC;
			return true;
		case F_SUM_NUMERIC:
			/* exact: the device sums scaled integers, the host numerics it cannot */
			*kind = GPUOPS_AGG_SUM_INT;
			*final = GPUAGG_FINAL_SUM_SCALED;
			return true;
		case F_AVG_NUMERIC:
			*kind = GPUOPS_AGG_SUM_INT;
			*final = GPUAGG_FINAL_AVG_SCALED;
			return true;
		case F_SUM_FLOAT4:
			*kind = GPUOPS_AGG_FLOAT;
			*final = GPUAGG_FINAL_SUM_FLOAT4;
			return true;
		case F_SUM_FLOAT8:
			*kind = GPUOPS_AGG_FLOAT;
			*final = GPUAGG_FINAL_SUM_FLOAT8;
			return true;
		case F_AVG_FLOAT4:
		case F_AVG_FLOAT8:
		case F_VARIANCE_FLOAT4:
		case F_VARIANCE_FLOAT8:
		case F_VAR_SAMP_FLOAT4:
		case F_VAR_SAMP_FLOAT8:
		case F_VAR_POP_FLOAT4:
		case F_VAR_POP_FLOAT8:
		case F_STDDEV_FLOAT4:
		case F_STDDEV_FLOAT8:
		case F_STDDEV_SAMP_FLOAT4:
		case F_STDDEV_SAMP_FLOAT8:
		case F_STDDEV_POP_FLOAT4:
		case F_STDDEV_POP_FLOAT8:
			/* float8_accum's {N, Sx, Sxx}, then the aggregate's own final function */
			*kind = GPUOPS_AGG_FLOAT;
			*final = GPUAGG_FINAL_FLOAT_FN;
			*final_fn = AggFinalFn(aggfnoid);
			return OidIsValid(*final_fn);
		case F_VARIANCE_INT2:
		case F_VARIANCE_INT4:
		case F_VAR_SAMP_INT2:
		case F_VAR_SAMP_INT4:
		case F_VAR_POP_INT2:
		case F_VAR_POP_INT4:
		case F_STDDEV_INT2:
		case F_STDDEV_INT4:
		case F_STDDEV_SAMP_INT2:
		case F_STDDEV_SAMP_INT4:
		case F_STDDEV_POP_INT2:
		case F_STDDEV_POP_INT4:
		case F_VARIANCE_INT8:
		case F_VAR_SAMP_INT8:
		case F_VAR_POP_INT8:
		case F_STDDEV_INT8:
		case F_STDDEV_SAMP_INT8:
		case F_STDDEV_POP_INT8:
			/* (N, sumX, sumX2) exact, then the aggregate's own final function */
			*kind = GPUOPS_AGG_SUMSQ_INT;
			*final = GPUAGG_FINAL_POLY_FN;
			*final_fn = AggFinalFn(aggfnoid);
			return OidIsValid(*final_fn);
		case F_VARIANCE_NUMERIC:
		case F_VAR_SAMP_NUMERIC:
		case F_VAR_POP_NUMERIC:
		case F_STDDEV_NUMERIC:
		case F_STDDEV_SAMP_NUMERIC:
		case F_STDDEV_POP_NUMERIC:
			/* scaled: (N, sumX, sumX2) exact at the inputs' scale (gpu_agg_numeric.cpp) */
			*kind = GPUOPS_AGG_SUMSQ_INT;
			*final = GPUAGG_FINAL_VAR_SCALED;
			*final_fn = AggFinalFn(aggfnoid);
			return OidIsValid(*final_fn);
		case F_MIN_INT2:
		case F_MIN_INT4:
		case F_MIN_INT8:
		case F_MIN_FLOAT4:
		case F_MIN_FLOAT8:
		case F_MIN_DATE:
		case F_MIN_TIME:
		case F_MIN_TIMESTAMP:
		case F_MIN_TIMESTAMPTZ:
		case F_MIN_INTERVAL:
		case F_MIN_TEXT:
		case F_MIN_NUMERIC:
		case F_MIN_BPCHAR:
		case F_BOOL_AND:
		case F_EVERY:
			*kind = GPUOPS_AGG_MIN;
			*final = GPUAGG_FINAL_VALUE;
			return true;
		case F_MAX_INT2:
		case F_MAX_INT4:
		case F_MAX_INT8:
		case F_MAX_FLOAT4:
		case F_MAX_FLOAT8:
		case F_MAX_DATE:
		case F_MAX_TIME:
		case F_MAX_TIMESTAMP:
		case F_MAX_TIMESTAMPTZ:
		case F_MAX_INTERVAL:
		case F_MAX_TEXT:
		case F_MAX_NUMERIC:
		case F_MAX_BPCHAR:
		case F_BOOL_OR:
			*kind = GPUOPS_AGG_MAX;
			*final = GPUAGG_FINAL_VALUE;
			return true;
		case F_PERCENTILE_DISC_FLOAT8_ANYELEMENT:
			*kind = GPUOPS_AGG_PERCENTILE_DISC;
			*final = GPUAGG_FINAL_VALUE;
			return true;
		case F_PERCENTILE_CONT_FLOAT8_FLOAT8:
		case F_PERCENTILE_CONT_FLOAT8_INTERVAL:
			*kind = GPUOPS_AGG_PERCENTILE_CONT;
			*final = GPUAGG_FINAL_PERCENTILE_CONT;
			return true;
		default:
			return false;
	}
}

/* int128 -> numeric, as int128_to_numericvar does (scale 0) */
static Datum
Int128Numeric(int64 hi, uint64 lo)
{
	__int128 v = gpuops::agg_int128(hi, lo);
	unsigned __int128 u;
	char buf[48];
	char *p = buf + sizeof(buf) - 1;

	if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
		return NumericGetDatum(int64_to_numeric((int64) v));
	u = v < 0 ? (unsigned __int128) 0 - (unsigned __int128) v : (unsigned __int128) v;
	*p = '\0';
	do
	{
		*--p = (char) ('0' + (int) (u % 10));
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(p), ObjectIdGetDatum(InvalidOid),
							   Int32GetDatum(-1));
}

/*
 * A 128-bit integer divided by 10^scale as a numeric of display scale
 * `scale`: exact, through its decimal text.
 */
static Datum
ScaledNumeric(int64 hi, uint64 lo, int scale)
{
	__int128 v = gpuops::agg_int128(hi, lo);
	unsigned __int128 u = v < 0 ? (unsigned __int128) 0 - (unsigned __int128) v
								: (unsigned __int128) v;
	char buf[80];
	char *p = buf + sizeof(buf) - 1;
	int digits = 0;

	if (scale == 0)
		return Int128Numeric(hi, lo);
	*p = '\0';
	while (u != 0 || digits <= scale)
	{
		if (digits == scale)
			*--p = '.';
		*--p = (char) ('0' + (int) (u % 10));
		u /= 10;
		digits++;
	}
	if (v < 0)
		*--p = '-';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(p), ObjectIdGetDatum(InvalidOid),
							   Int32GetDatum(-1));
}

/*
 * A magnitude of up to 192 bits (limbs most significant first) divided by
 * 10^dscale, as numericvar_serialize writes a NumericVar: ndigits, weight,
 * sign, dscale as int32, then the base-10000 digits as int16, most
 * significant first.  The digits are aligned at the decimal point, so the
 * magnitude is first multiplied by 10 until its fractional digits fill
 * whole base-10000 digits.
 */
static void
SendScaledVar(StringInfo buf, bool neg, uint64 top, uint64 hi, uint64 lo, int dscale)
{
	/* NUMERIC_POS and NUMERIC_NEG (numeric.c) */
	const int32 numeric_pos = 0x0000;
	const int32 numeric_neg = 0x4000;
	uint64 limb[3] = {top, hi, lo};
	int pad = (4 - dscale % 4) % 4;
	int frac = (dscale + pad) / 4;
	int16 digits[20]; /* 2^192 * 1000 has 61 decimal digits */
	int nd = 0;

	for (int k = 0; k < pad; k++)
	{
		unsigned __int128 carry = 0;

		for (int i = 2; i >= 0; i--)
		{
			unsigned __int128 cur = (unsigned __int128) limb[i] * 10 + carry;

			limb[i] = (uint64) cur;
			carry = cur >> 64;
		}
	}
	do
	{
		unsigned __int128 rem = 0;

		/* limb /= 10000, most significant limb first */
		for (int i = 0; i < 3; i++)
		{
			unsigned __int128 cur = (rem << 64) | limb[i];

			limb[i] = (uint64) (cur / 10000);
			rem = cur % 10000;
		}
		digits[nd++] = (int16) rem;
	} while (limb[0] != 0 || limb[1] != 0 || limb[2] != 0);
	pq_sendint32(buf, nd);
	pq_sendint32(buf, nd - 1 - frac);
	pq_sendint32(buf, neg ? numeric_neg : numeric_pos);
	pq_sendint32(buf, dscale);
	for (int i = nd - 1; i >= 0; i--)
		pq_sendint16(buf, digits[i]);
}

/* A signed 128-bit sum, at scale dscale, as a serialized NumericVar. */
static void
SendInt128Var(StringInfo buf, int64 hi, uint64 lo, int dscale)
{
	__int128 v = gpuops::agg_int128(hi, lo);
	unsigned __int128 u = v < 0 ? (unsigned __int128) 0 - (unsigned __int128) v
								: (unsigned __int128) v;

	SendScaledVar(buf, v < 0, 0, (uint64) (u >> 64), (uint64) u, dscale);
}

/*
 * The serialized state of sum/avg(int8) (int8_avg_serialize's
 * PolyNumAggState: N, sumX), of variance/stddev of int2/int4
 * (numeric_poly_serialize: N, sumX, sumX2) and of int8 (numeric_serialize's
 * NumericAggState: N, sumX, sumX2, maxScale, maxScaleCount and the NaN and
 * infinity counts; integers have scale 0, and a numeric's scaled sums the
 * one scale of all its inputs, so every input counts at the maximum scale):
 * their partial states, and what the final step reads back.
 */
static bytea *
PolyNumSerialized(const GpuopsAggResult *r, bool with_squares, bool numeric_state, int scale)
{
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, (int64) r->count);
	SendInt128Var(&buf, r->sum_hi, r->sum_lo, scale);
	/* do_numeric_accum squares X at scale 2 * X.dscale */
	if (with_squares)
		SendScaledVar(&buf, false, r->sum2_top, r->sum2_hi, r->sum2_lo, 2 * scale);
	if (numeric_state)
	{
		pq_sendint32(&buf, scale);			  /* maxScale */
		pq_sendint64(&buf, (int64) r->count); /* maxScaleCount */
		pq_sendint64(&buf, 0);				  /* NaNcount */
		pq_sendint64(&buf, 0);				  /* pInfcount */
		pq_sendint64(&buf, 0);				  /* nInfcount */
	}
	return pq_endtypsend(&buf);
}

/*
 * variance and stddev: of int8 and of numeric (scaled), numeric_serialize's
 * state; else numeric_poly_serialize's
 */
static bytea *
VarianceSerialized(const GpuAggDesc *desc, const GpuopsAggResult *r)
{
	if (desc->final == GPUAGG_FINAL_VAR_SCALED)
		return PolyNumSerialized(r, true, true, desc->scale);
	return PolyNumSerialized(r, true, desc->value_kind == GPUOPS_KEY_INT8, 0);
}

static Datum
Int8AvgSerialized(const GpuopsAggResult *r)
{
	return PointerGetDatum(PolyNumSerialized(r, false, false, 0));
}

/*
 * variance/stddev of integers: the aggregate's own final function (e.g.
 * numeric_poly_var_samp, numeric_var_samp for int8) on the state its
 * deserialization function makes of our sums.  Deserialization insists on
 * being called by an aggregate: a bare AggState stands in (it reads no
 * field of it).
 */
static Datum
PolyNumFinal(const GpuAggDesc *desc, const GpuopsAggResult *r, bool *isnull)
{
	/* one stand-in for the process, not one per group */
	static AggState *caller = NULL;
	LOCAL_FCINFO(fcinfo, 1);
	Datum state;

	if (caller == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		caller = makeNode(AggState);
		MemoryContextSwitchTo(old);
	}
	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, (Node *) caller, NULL);
	fcinfo->args[0].value = PointerGetDatum(VarianceSerialized(desc, r));
	fcinfo->args[0].isnull = false;
	state = desc->value_kind == GPUOPS_KEY_INT8 ? numeric_deserialize(fcinfo)
												: numeric_poly_deserialize(fcinfo);
	InitFunctionCallInfoData(*fcinfo, const_cast<FmgrInfo *>(&desc->final_flinfo), 1, InvalidOid,
							 (Node *) caller, NULL);
	fcinfo->args[0].value = state;
	fcinfo->args[0].isnull = false;
	state = FunctionCallInvoke(fcinfo);
	*isnull = fcinfo->isnull;
	return state;
}

/* float8_accum's transition value {N, Sx, Sxx} */
static ArrayType *
FloatAccumArray(const GpuopsAggResult *r)
{
	Datum elems[3];

	elems[0] = Float8GetDatum((double) r->count);
	/* float8_accum adds to an initial 0: its Sx is never -0 */
	elems[1] = Float8GetDatum(r->sx + 0.0);
	elems[2] = Float8GetDatum(r->sxx);
	return construct_array(elems, 3, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

/* float_overflow_error()'s report */
static void
FloatOverflow(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE), errmsg("value out of range: overflow")));
}

/*
 * The aggregate's result in one group.  row_value is the value of the row
 * the state points at (min, max, bool_and, bool_or, percentiles), row2_value
 * that of percentile_cont's upper row.
 */
Datum
GpuAggResultDatum(const GpuAggDesc *desc, const GpuopsAggResult *r, Datum row_value,
				  Datum row2_value, bool *isnull)
{
	*isnull = false;
	if (desc->final == GPUAGG_FINAL_COUNT)
		return Int64GetDatum((int64) r->count);
	if (r->count == 0)
	{
		/*
		 * no input: NULL, as every other supported aggregate's final step
		 * gives.  A NULL partial state is one the combine step skips (its
		 * combine function is strict, or takes NULL as no input).
		 */
		*isnull = true;
		return (Datum) 0;
	}
	switch (desc->final)
	{
		case GPUAGG_FINAL_SUM_INT8:
			/* int4_sum adds in int64 (wrapping, as PostgreSQL's -fwrapv build does) */
			return Int64GetDatum((int64) r->sum_lo);
		case GPUAGG_FINAL_SUM_NUMERIC:
			if (desc->partial)
				return Int8AvgSerialized(r);
			return Int128Numeric(r->sum_hi, r->sum_lo);
		case GPUAGG_FINAL_AVG_NUMERIC:
			if (desc->partial && desc->value_kind == GPUOPS_KEY_INT8)
				return Int8AvgSerialized(r);
			if (desc->partial)
			{
				/* int2/int4_avg_accum's int8[] {N, sum}: the sum of 32-bit values fits */
				Datum elems[2] = {Int64GetDatum((int64) r->count),
								  Int64GetDatum((int64) r->sum_lo)};

				return PointerGetDatum(construct_array(elems, 2, INT8OID, sizeof(int64),
													   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
			}
			return DirectFunctionCall2(numeric_div, Int128Numeric(r->sum_hi, r->sum_lo),
									   NumericGetDatum(int64_to_numeric((int64) r->count)));
		case GPUAGG_FINAL_SUM_FLOAT4:
			{
				float4 f = (float4) r->sx;

				/* float4pl: finite inputs must not give an infinite sum */
				if ((r->overflow & 1) || (std::isinf(f) && !std::isinf(r->sx)))
					FloatOverflow();
				return Float4GetDatum(f);
			}
		case GPUAGG_FINAL_SUM_FLOAT8:
			if (r->overflow & 1)
				FloatOverflow();
			return Float8GetDatum(r->sx);
		case GPUAGG_FINAL_FLOAT_FN:
			{
				ArrayType *arr;
				LOCAL_FCINFO(fcinfo, 1);
				Datum result;

				/* float8_accum raises on an overflow of Sx or Sxx */
				if (r->overflow)
					FloatOverflow();
				arr = FloatAccumArray(r);
				if (desc->partial)
					return PointerGetDatum(arr);
				InitFunctionCallInfoData(*fcinfo, const_cast<FmgrInfo *>(&desc->final_flinfo), 1,
										 InvalidOid, NULL, NULL);
				fcinfo->args[0].value = PointerGetDatum(arr);
				fcinfo->args[0].isnull = false;
				result = FunctionCallInvoke(fcinfo);
				*isnull = fcinfo->isnull;
				return result;
			}
		case GPUAGG_FINAL_SUM_SCALED:
			return ScaledNumeric(r->sum_hi, r->sum_lo, desc->scale);
		case GPUAGG_FINAL_AVG_SCALED:
			/* numeric_avg: sumX (its scale the inputs') / N */
			return DirectFunctionCall2(numeric_div,
									   ScaledNumeric(r->sum_hi, r->sum_lo, desc->scale),
									   NumericGetDatum(int64_to_numeric((int64) r->count)));
		case GPUAGG_FINAL_VAR_SCALED:
			/* numeric_accum's state (never partial: the planner offers no partial path) */
			return PolyNumFinal(desc, r, isnull);
		case GPUAGG_FINAL_POLY_FN:
			if (desc->partial)
				return PointerGetDatum(VarianceSerialized(desc, r));
			return PolyNumFinal(desc, r, isnull);
		case GPUAGG_FINAL_VALUE:
			return row_value;
		case GPUAGG_FINAL_PERCENTILE_CONT:
			{
				/* percentile_cont_final_common, then float8_lerp or interval_lerp */
				double f = desc->fraction;
				double first_row = floor(f * (double) (r->count - 1));
				double proportion;

				if ((int64) first_row == (int64) ceil(f * (double) (r->count - 1)))
					return row_value;
				proportion = (f * (double) (r->count - 1)) - (double) (int64) first_row;
				if (desc->value_kind == GPUOPS_KEY_INTERVAL)
					return DirectFunctionCall2(
						interval_pl,
						DirectFunctionCall2(interval_mul,
											DirectFunctionCall2(interval_mi, row2_value, row_value),
											Float8GetDatum(proportion)),
						row_value);
				return Float8GetDatum(
					DatumGetFloat8(row_value) +
					(proportion * (DatumGetFloat8(row2_value) - DatumGetFloat8(row_value))));
			}
		default:
			elog(ERROR, "GpuAgg: unknown final step %d", (int) desc->final);
	}
	return (Datum) 0;
}
