/*
 * qual_order.cpp
 *    The order in which PostgreSQL's plans evaluate a list of quals
 *    (qual_order.h).
 */
extern "C" {
#include "postgres.h"

#include "nodes/pg_list.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
}

#include "qual_order.h"

namespace {

struct RankedQual
{
	Node *qual;
	Cost cost; /* per row */
	Index security_level;
};

/*
 * A leakproof qual that is cheap (under ten operators' cost) may run ahead
 * of quals of lower security levels, as createplan.c lets it: it then
 * ranks as level 0.
 */
Index
EffectiveSecurityLevel(Node *qual, Cost cost)
{
	if (!IsA(qual, RestrictInfo))
		return 0;
	RestrictInfo *rinfo = (RestrictInfo *) qual;

	if (rinfo->leakproof && cost < 10 * cpu_operator_cost)
		return 0;
	return rinfo->security_level;
}

bool
RanksBefore(const RankedQual &a, const RankedQual &b)
{
	if (a.security_level != b.security_level)
		return a.security_level < b.security_level;
	return a.cost < b.cost;
}

} /* namespace */

List *
GpuopsOrderQuals(PlannerInfo *root, List *quals)
{
	int n = list_length(quals);
	RankedQual *ranked;
	List *result = NIL;
	int i = 0;
	ListCell *lc;

	if (n <= 1)
		return list_copy(quals);
	ranked = (RankedQual *) palloc(sizeof(RankedQual) * n);
	foreach (lc, quals)
	{
		QualCost cost;

		cost_qual_eval_node(&cost, (Node *) lfirst(lc), root);
		ranked[i].qual = (Node *) lfirst(lc);
		ranked[i].cost = cost.per_tuple;
		ranked[i].security_level = EffectiveSecurityLevel(ranked[i].qual, cost.per_tuple);
		i++;
	}
	/* insertion sort: stable, and the lists are short */
	for (i = 1; i < n; i++)
	{
		RankedQual item = ranked[i];
		int j = i;

		for (; j > 0 && RanksBefore(item, ranked[j - 1]); j--)
			ranked[j] = ranked[j - 1];
		ranked[j] = item;
	}
	for (i = 0; i < n; i++)
		result = lappend(result, ranked[i].qual);
	pfree(ranked);
	return result;
}

bool
GpuopsHasPseudoconstant(List *rinfos)
{
	ListCell *lc;

	foreach (lc, rinfos)
		if (lfirst_node(RestrictInfo, lc)->pseudoconstant)
			return true;
	return false;
}
