/*
 * plan_fields.cpp
 *    PlanFields: a node's plan struct to and from a flat List (plan_fields.h).
 */
extern "C" {
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/value.h"
}

#include "plan_fields.h"

PlanFields::PlanFields() : list_(NIL), pos_(-1), node_("")
{
}

PlanFields::PlanFields(List *list, const char *node) : list_(list), pos_(0), node_(node)
{
}

/* Reading: the next field, which must be of kind tag (T_List also takes NIL). */
Node *
PlanFields::next(NodeTag tag)
{
	Node *n;

	if (pos_ >= list_length(list_))
		elog(ERROR, "gpuops: malformed %s plan: %d fields, more expected", node_, pos_);
	n = (Node *) list_nth(list_, pos_);
	if (tag == T_List ? (n != NULL && !IsA(n, List) && !IsA(n, IntList) && !IsA(n, OidList))
					  : (n == NULL || nodeTag(n) != tag))
		elog(ERROR, "gpuops: malformed %s plan: field %d is not of the expected kind", node_, pos_);
	pos_++;
	return n;
}

void
PlanFields::field(int *v)
{
	if (reading())
		*v = intVal(next(T_Integer));
	else
		list_ = lappend(list_, makeInteger(*v));
}

void
PlanFields::field(bool *v)
{
	int i = *v ? 1 : 0;

	field(&i);
	*v = i != 0;
}

/* its 64 bits, as two integers: exact, NaN and -0 included */
void
PlanFields::field(double *v)
{
	uint64 bits;
	int hi, lo;

	memcpy(&bits, v, sizeof(bits));
	hi = (int) (uint32) (bits >> 32);
	lo = (int) (uint32) bits;
	field(&hi);
	field(&lo);
	bits = ((uint64) (uint32) hi << 32) | (uint64) (uint32) lo;
	memcpy(v, &bits, sizeof(bits));
}

void
PlanFields::field(List **v)
{
	if (reading())
		*v = (List *) next(T_List);
	else
		list_ = lappend(list_, *v);
}

void
PlanFields::ints(int *v, int *n, int max)
{
	if (reading())
	{
		List *l = (List *) next(T_List);
		ListCell *lc;

		if (l != NIL && !IsA(l, IntList))
			elog(ERROR, "gpuops: malformed %s plan: field %d is not an integer list", node_,
				 pos_ - 1);
		if (list_length(l) > max)
			elog(ERROR, "gpuops: malformed %s plan: %d values where at most %d fit", node_,
				 list_length(l), max);
		*n = 0;
		foreach (lc, l)
			v[(*n)++] = lfirst_int(lc);
	}
	else
	{
		List *l = NIL;

		for (int i = 0; i < *n; i++)
			l = lappend_int(l, v[i]);
		list_ = lappend(list_, l);
	}
}

void
PlanFields::done()
{
	if (reading() && pos_ != list_length(list_))
		elog(ERROR, "gpuops: malformed %s plan: %d fields, %d read", node_, list_length(list_),
			 pos_);
}
