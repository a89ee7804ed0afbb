/*
 * qual_order.h
 *    The order in which PostgreSQL's plans evaluate a list of quals.
 */
#ifndef GPUOPS_QUAL_ORDER_H
#define GPUOPS_QUAL_ORDER_H

extern "C" {
#include "postgres.h"

#include "nodes/pathnodes.h"
}

/*
 * quals (RestrictInfos or bare clauses) in the order createplan.c's
 * order_qual_clauses gives a plan node: by security level, then by cost,
 * equal ones as written.  Evaluation stops at the first false qual, so the
 * order decides which quals a row reaches, and with it whether a qual that
 * can fail (integer overflow, division by zero) raises its error: a gpuops
 * node must stop where PostgreSQL's would.  A new list; the input is kept.
 */
extern List *GpuopsOrderQuals(PlannerInfo *root, List *quals);

/*
 * Whether a list of RestrictInfos holds a pseudoconstant one: a qual on no
 * column of its level, which PostgreSQL's plan evaluates once, in a gating
 * Result, before reading anything (so its error, if any, is raised even
 * over an empty table).  A node that would evaluate it per row keeps
 * PostgreSQL's plan; get_actual_clauses asserts there is none.
 */
extern bool GpuopsHasPseudoconstant(List *rinfos);

#endif
