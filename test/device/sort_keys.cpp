/*
 * sort_keys.cpp
 *    Sort key columns: values drawn per kind and distribution, and the
 *    reference comparison.
 */
#include "sort_keys.h"

namespace dt {

namespace {

/* One value of `kind` drawn from `dist` into dst (raw width bytes). */
void
draw_value(GpuopsKeyKind kind, Dist dist, Rng &rng, uint8_t *dst)
{
	bool dup = dist == DUPLICATES;
	bool special = dist == SPECIAL;

	switch (kind)
	{
		case GPUOPS_KEY_INT2:
			{
				const int16_t edges[] = {INT16_MIN, INT16_MAX, -1, 0, 1};
				int16_t v = special
					? edges[uniform(rng, 0, 4)]
					: static_cast<int16_t>(dup ? uniform(rng, -8, 8)
											   : uniform(rng, INT16_MIN, INT16_MAX));

				memcpy(dst, &v, 2);
				break;
			}
		case GPUOPS_KEY_INT4:
			{
				const int32_t edges[] = {INT32_MIN, INT32_MAX, -1, 0, 1};
				int32_t v = special
					? edges[uniform(rng, 0, 4)]
					: static_cast<int32_t>(dup ? uniform(rng, -8, 8)
											   : uniform(rng, INT32_MIN, INT32_MAX));

				memcpy(dst, &v, 4);
				break;
			}
		case GPUOPS_KEY_INT8:
		case GPUOPS_KEY_NUMERIC_ABBREV:
		case GPUOPS_KEY_ABBREV_UNSIGNED:
			{
				const int64_t edges[] = {INT64_MIN, INT64_MAX, -1, 0, 1};
				int64_t v = special ? edges[uniform(rng, 0, 4)]
					: dup			? uniform(rng, -8, 8)
									: uniform(rng, INT64_MIN, INT64_MAX);

				memcpy(dst, &v, 8);
				break;
			}
		case GPUOPS_KEY_FLOAT4:
		case GPUOPS_KEY_FLOAT8:
			{
				double d = special ? special_double(rng)
					: dup		   ? static_cast<double>(uniform(rng, -4, 4)) / 4
								   : std::uniform_real_distribution<double>(-1e6, 1e6)(rng);

				if (kind == GPUOPS_KEY_FLOAT4)
				{
					float f = static_cast<float>(d);

					memcpy(dst, &f, 4);
				}
				else
					memcpy(dst, &d, 8);
				break;
			}
		case GPUOPS_KEY_BOOL:
			dst[0] = static_cast<uint8_t>(uniform(rng, 0, 1));
			break;
		case GPUOPS_KEY_UUID:
		case GPUOPS_KEY_BYTES16:
			{
				/* duplicates: bytes from {00, 7f, 80, ff}, so that the compare must be unsigned */
				const uint8_t alphabet[] = {0x00, 0x7f, 0x80, 0xff};

				for (int i = 0; i < 16; i++)
					dst[i] = dup ? (i < 3 ? alphabet[uniform(rng, 0, 3)] : 0)
								 : static_cast<uint8_t>(uniform(rng, 0, 255));
				break;
			}
		case GPUOPS_KEY_INTERVAL:
			{
				/* duplicates: equal spans written differently (1 month = 30 days = 720 h) */
				int64_t time = dup ? uniform(rng, -2, 2) * 86400000000ll
								   : uniform(rng, -(1ll << 50), 1ll << 50);
				int32_t day = static_cast<int32_t>(dup ? uniform(rng, -31, 31)
													   : uniform(rng, -1000, 1000));
				int32_t month = static_cast<int32_t>(dup ? uniform(rng, -1, 1)
														 : uniform(rng, -100, 100));

				memcpy(dst, &time, 8);
				memcpy(dst + 8, &day, 4);
				memcpy(dst + 12, &month, 4);
				break;
			}
	}
}

} /* namespace */

KeyCol
make_key(GpuopsKeyKind kind, int desc, int nulls_first, uint64_t n, Dist dist, double null_frac,
		 Rng &rng)
{
	KeyCol k;
	uint32_t w = gpuops_key_raw_width(kind);
	std::vector<uint8_t> hot(w);

	k.kind = kind;
	k.desc = desc;
	k.nulls_first = nulls_first;
	k.raw.resize(n * w);
	k.null.resize(n);
	draw_value(kind, UNIFORM, rng, hot.data());
	for (uint64_t i = 0; i < n; i++)
	{
		k.null[i] = chance(rng, null_frac);
		if (k.null[i])
			draw_value(kind, UNIFORM, rng, &k.raw[i * w]); /* ignored, or NULLs leave input order */
		else if (dist == SKEW && chance(rng, 0.5))
			memcpy(&k.raw[i * w], hot.data(), w);
		else
			draw_value(kind, dist == SKEW ? UNIFORM : dist, rng, &k.raw[i * w]);
	}
	return k;
}

namespace {

template <class T>
int
cmp_as(const uint8_t *a, const uint8_t *b)
{
	T x, y;

	memcpy(&x, a, sizeof(T));
	memcpy(&y, b, sizeof(T));
	return x < y ? -1 : (x > y ? 1 : 0);
}

__int128
interval_span(const uint8_t *p)
{
	int64_t time;
	int32_t day, month;

	memcpy(&time, p, 8);
	memcpy(&day, p + 8, 4);
	memcpy(&month, p + 12, 4);
	return static_cast<__int128>(time) +
		(static_cast<__int128>(month) * 30 + day) * static_cast<__int128>(86400000000ll);
}

} /* namespace */

/* PostgreSQL's comparison of two non-NULL values of a kind, written from the types' rules. */
int
cmp_value(GpuopsKeyKind kind, const uint8_t *a, const uint8_t *b)
{
	switch (kind)
	{
		case GPUOPS_KEY_INT2:
			return cmp_as<int16_t>(a, b);
		case GPUOPS_KEY_INT4:
			return cmp_as<int32_t>(a, b);
		case GPUOPS_KEY_INT8:
			return cmp_as<int64_t>(a, b);
		case GPUOPS_KEY_FLOAT4:
			{
				float x, y;

				memcpy(&x, a, 4);
				memcpy(&y, b, 4);
				return pg_float_cmp(x, y);
			}
		case GPUOPS_KEY_FLOAT8:
			{
				double x, y;

				memcpy(&x, a, 8);
				memcpy(&y, b, 8);
				return pg_float_cmp(x, y);
			}
		case GPUOPS_KEY_BOOL:
			return (a[0] != 0) - (b[0] != 0);
		case GPUOPS_KEY_UUID:
		case GPUOPS_KEY_BYTES16:
			{
				int c = memcmp(a, b, 16);

				return c < 0 ? -1 : (c > 0 ? 1 : 0);
			}
		case GPUOPS_KEY_INTERVAL:
			{
				__int128 x = interval_span(a), y = interval_span(b);

				return x < y ? -1 : (x > y ? 1 : 0);
			}
		case GPUOPS_KEY_NUMERIC_ABBREV:
			return -cmp_as<int64_t>(a, b); /* the abbreviation's signed order is reversed */
		case GPUOPS_KEY_ABBREV_UNSIGNED:
			return cmp_as<uint64_t>(a, b);
	}
	return 0;
}

/* Rows x and y under the first nkeys keys: NULLS FIRST/LAST, then the value, DESC inverted. */
int
cmp_rows(const std::vector<KeyCol> &keys, int nkeys, uint32_t x, uint32_t y)
{
	for (int k = 0; k < nkeys; k++)
	{
		const KeyCol &c = keys[k];
		uint32_t w = gpuops_key_raw_width(c.kind);
		bool nx = c.null[x], ny = c.null[y];
		int r;

		if (nx != ny)
			return nx == (c.nulls_first != 0) ? -1 : 1;
		if (nx)
			continue;
		r = cmp_value(c.kind, &c.raw[x * w], &c.raw[y * w]);
		if (r != 0)
			return c.desc ? -r : r;
	}
	return 0;
}


const char *
kind_name(GpuopsKeyKind kind)
{
	switch (kind)
	{
		case GPUOPS_KEY_INT2:
			return "int2";
		case GPUOPS_KEY_INT4:
			return "int4";
		case GPUOPS_KEY_INT8:
			return "int8";
		case GPUOPS_KEY_FLOAT4:
			return "float4";
		case GPUOPS_KEY_FLOAT8:
			return "float8";
		case GPUOPS_KEY_BOOL:
			return "bool";
		case GPUOPS_KEY_UUID:
			return "uuid";
		case GPUOPS_KEY_INTERVAL:
			return "interval";
		case GPUOPS_KEY_BYTES16:
			return "bytes16";
		case GPUOPS_KEY_NUMERIC_ABBREV:
			return "numeric-abbrev";
		case GPUOPS_KEY_ABBREV_UNSIGNED:
			return "abbrev-unsigned";
	}
	return "?";
}
} /* namespace dt */
