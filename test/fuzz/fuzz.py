#!/usr/bin/env python3
"""test/fuzz/fuzz.py: gpuops' differential tester.  The oracle is
PostgreSQL: each generated query runs with gpuops off and on (fuzz.sql,
on the server) and the answers are compared, as a multiset of rows and,
where the query orders, as the sequence of its sort keys.

  fuzz.py [--seed S] [--queries N] [--out DIR]

Talks to the server named by PGHOST/PGPORT/PGUSER/PGDATABASE through psql
(no driver: the GPU machine has none).  Tables of every type gpuops
takes, with NULLs, NaN, -0, infinities, duplicates, skew, an empty table,
text under "C" and the database's collation; queries aimed at each
operator family (GpuSort, GpuHashJoin, GpuMergeJoin, GpuNestLoop, GpuAgg,
GpuQuery over joins: "star"),
with the settings that steer the planner to it.  A mismatch, an error on
one side only, or a crash is reported with a reduced reproducer.  Per
family it reports the share of its queries whose plan used its node; the
run fails on any mismatch or crash, or a family below 50%.  The last line
is "fuzz: ...".
"""
import argparse
import os
import random
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PSQL = os.environ.get("PSQL", "psql")

# (name, type, generator of one value's SQL literal from rng and row i)
def _int(lo, hi, typ):
    def g(r, i):
        x = r.random()
        if x < 0.08:
            return "NULL"
        if x < 0.12:
            return "'%d'::%s" % (lo if r.random() < 0.5 else hi, typ)
        if x < 0.45:
            return "'%d'::%s" % (r.randint(-5, 5), typ)      # skew: few values
        return "'%d'::%s" % (r.randint(-3000, 3000), typ)
    return g

def _float(typ):
    def g(r, i):
        x = r.random()
        if x < 0.07:
            return "NULL"
        if x < 0.10:
            return "'NaN'::" + typ
        if x < 0.13:
            return "'-0'::" + typ
        if x < 0.15:
            return r.choice(["'Infinity'::", "'-Infinity'::"]) + typ
        if x < 0.45:
            return "'%d'::%s" % (r.randint(-5, 5), typ)
        return "'%s'::%s" % (repr(round(r.uniform(-1000, 1000), r.randint(0, 4))), typ)
    return g

def _numeric(r, i):
    x = r.random()
    if x < 0.08:
        return "NULL"
    if x < 0.10:
        return "'NaN'::numeric"
    if x < 0.4:
        return "'%d'::numeric" % r.randint(-5, 5)
    return "'%s'::numeric" % repr(round(r.uniform(-100000, 100000), r.randint(0, 6)))

WORDS = ["", "a", "A", "b", "ab", "abc", "Abc", "zeta", "éclair", "eclair", "x y", "x-y", "10", "9", "ß", "strasse"]

def _text(r, i):
    x = r.random()
    if x < 0.08:
        return "NULL"
    if x < 0.6:
        return "'%s'" % r.choice(WORDS).replace("'", "''")
    return "'%s'" % "".join(r.choice("abcXYZ019 -") for _ in range(r.randint(0, 24)))

def _date(r, i):
    if r.random() < 0.08:
        return "NULL"
    return "(date '2020-01-01' + %d)" % r.randint(-400, 400)

def _ts(typ):
    def g(r, i):
        if r.random() < 0.08:
            return "NULL"
        return "(%s '2020-01-01 00:00' + interval '%d minutes')" % (typ, r.randint(-100000, 100000))
    return g

def _bool(r, i):
    x = r.random()
    return "NULL" if x < 0.1 else ("true" if x < 0.55 else "false")

COLUMNS = [
    ("i2", "int2", _int(-32768, 32767, "int2")),
    ("i4", "int4", _int(-2147483648, 2147483647, "int4")),
    ("i8", "int8", _int(-9223372036854775808, 9223372036854775807, "int8")),
    ("f4", "float4", _float("float4")),
    ("f8", "float8", _float("float8")),
    ("n", "numeric", _numeric),
    ("t", "text", _text),
    ("d", "date", _date),
    ("ts", "timestamp", _ts("timestamp")),
    ("tz", "timestamptz", _ts("timestamptz")),
    ("b", "bool", _bool),
]
TYPE = {c: t for c, t, _ in COLUMNS}
INTS = ["i2", "i4", "i8"]
NUMS = INTS + ["f4", "f8", "n"]
KEYABLE = ["i2", "i4", "i8", "f4", "f8", "n", "t", "d", "ts", "tz", "b"]
TABLES = {"fa": 1200, "fb": 300, "fc": 80, "fd": 25, "fe": 0}

def tables_sql(seed):
    r = random.Random(seed)
    out = []
    for name, n in TABLES.items():
        cols = ", ".join("%s %s" % (c, t) for c, t, _ in COLUMNS)
        out.append("DROP TABLE IF EXISTS %s;" % name)
        out.append("CREATE TABLE %s (id int, %s);" % (name, cols))
        rows = []
        for i in range(1, n + 1):
            rows.append("(%d, %s)" % (i, ", ".join(g(r, i) for _, _, g in COLUMNS)))
            if len(rows) == 500:
                out.append("INSERT INTO %s VALUES %s;" % (name, ", ".join(rows)))
                rows = []
        if rows:
            out.append("INSERT INTO %s VALUES %s;" % (name, ", ".join(rows)))
        out.append("ANALYZE %s;" % name)
    return "\n".join(out)

# comparisons a device program may hold, and ones it cannot (rechecked by PostgreSQL)
def same_kind_pairs():
    pairs = [(a, b) for a in INTS for b in INTS]
    pairs += [("f4", "f8"), ("f8", "f8"), ("f8", "f4"), ("n", "n"), ("n", "i4"), ("i8", "n"),
              ("d", "d"), ("ts", "ts"), ("tz", "tz"), ("ts", "tz"), ("d", "ts"), ("t", "t"),
              ("b", "b")]
    return pairs

PAIRS = same_kind_pairs()

class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def pick(self, seq):
        return self.r.choice(seq)

    def pred(self, a, cols=None):
        """a filter on one table alias"""
        r = self.r
        c = self.pick(cols or KEYABLE)
        t = TYPE[c]
        k = r.random()
        if k < 0.2:
            return "%s.%s IS %sNULL" % (a, c, "" if r.random() < 0.3 else "NOT ")
        if t in ("int2", "int4", "int8"):
            return "%s.%s %s %d" % (a, c, self.pick(["<", ">", "<=", ">=", "=", "<>"]), r.randint(-50, 50))
        if t in ("float4", "float8", "numeric"):
            return "%s.%s %s %s" % (a, c, self.pick(["<", ">", "<=", ">="]), self.pick(["0", "1.5", "-2", "'NaN'"]))
        if t == "text":
            return "%s.%s %s '%s'" % (a, c, self.pick(["<", ">", "=", "<>"]), self.pick(WORDS))
        if t == "bool":
            return "%s.%s" % (a, c)
        return "%s.%s > %s" % (a, c, {"date": "date '2020-01-01'", "timestamp": "timestamp '2020-01-01'",
                                       "timestamptz": "timestamptz '2020-01-01 00:00+00'"}[t])

    def text_test(self, a):
        """a test of a.t against constants (GpuQuery computes these off the device)"""
        r = self.r
        coll = ' COLLATE "C"' if r.random() < 0.2 else ""
        w = lambda: "'%s'" % self.pick(WORDS).replace("'", "''")
        k = r.random()
        if k < 0.3:
            return "%s.t%s %s %s" % (a, coll, self.pick(["=", "<>"]), w())
        if k < 0.55:
            vals = [w() for _ in range(r.randint(1, 4))] + (["NULL"] if r.random() < 0.2 else [])
            return "%s.t%s %sIN (%s)" % (a, coll, self.pick(["", "NOT "]), ", ".join(vals))
        pat = self.pick(["a%", "%b%", "_b%", "%c", "x_y", "%", "", "é%", "%\\%%", "__", "%a%b%", "A_c"])
        return "%s.t%s %sLIKE '%s'" % (a, coll, self.pick(["", "NOT "]), pat)

    def join_clause(self, a, b, equi):
        r = self.r
        x, y = self.pick(PAIRS)
        if equi:
            cl = "%s.%s = %s.%s" % (a, x, b, y)
        else:
            cl = "%s.%s %s %s.%s" % (a, x, self.pick(["<", ">", "<=", ">=", "<>"]), b, y)
        extra = []
        if r.random() < 0.4:
            u, v = self.pick(PAIRS)
            extra.append("%s.%s %s %s.%s" % (a, u, self.pick(["<", ">", "<>"]), b, v))
        if r.random() < 0.25:   # one the device cannot run: PostgreSQL rechecks it
            extra.append(self.pick(["md5(%s.t) > md5(%s.t)" % (a, b), "%s.ts <= %s.tz" % (a, b),
                                    "length(%s.t || %s.t) %% 3 <> 0" % (a, b)]))
        return " AND ".join([cl] + extra)

    def table(self, big=True):
        return self.pick(["fa", "fb", "fc"] if big else ["fb", "fc", "fd", "fe"])

    # --- families: (node, settings, keys, sql) ---
    def sort(self):
        r = self.r
        t = self.table()
        cols = r.sample(KEYABLE, r.randint(1, 4))
        sel = ["s.%s AS c%d" % (c, i) for i, c in enumerate(cols)]
        keys = []
        for i, c in enumerate(cols[:r.randint(1, len(cols))]):
            if c == "t" and r.random() < 0.4:
                keys.append(('c%d COLLATE "C"' % i, "c%d" % i, ' COLLATE "C"'))
            else:
                keys.append(("c%d" % i, "c%d" % i, ""))
        order = ", ".join(k[0] + self.pick(["", " DESC", " NULLS FIRST", " DESC NULLS LAST"]) for k in keys)
        where = " WHERE " + self.pred("s") if r.random() < 0.4 else ""
        q = "SELECT s.id, %s FROM %s s%s ORDER BY %s" % (", ".join(sel), t, where, order)
        keyexprs = ", ".join(k[1] for k in keys)
        if r.random() < 0.35:
            q += ", s.id LIMIT %d" % r.randint(0, 200)   # ties broken: the rows are determined
            keyexprs += ", id"
        return ("GpuSort", "", keyexprs, q)

    def join(self, node):
        r = self.r
        equi = node != "GpuNestLoop"
        a, b = self.table(), self.table(big=False)
        clause = self.join_clause("x", "y", equi)
        kind = r.random()
        where = " WHERE " + self.pred("x") if r.random() < 0.3 else ""
        if kind < 0.3:
            jt = self.pick(["JOIN", "LEFT JOIN", "RIGHT JOIN"] + (["FULL JOIN"] if equi else []))
            q = "SELECT x.id AS xid, y.id AS yid FROM %s x %s %s y ON %s%s" % (a, jt, b, clause, where)
        elif kind < 0.5:
            q = "SELECT x.id, x.t FROM %s x WHERE %sEXISTS (SELECT 1 FROM %s y WHERE %s)" % (
                a, self.pick(["", "NOT "]), b, clause)
        elif kind < 0.6 and equi:
            c = self.pick(INTS)
            q = "SELECT x.id FROM %s x WHERE x.%s %sIN (SELECT y.%s FROM %s y%s)" % (
                a, c, self.pick(["", "NOT "]), self.pick(INTS), b,
                " WHERE " + self.pred("y") if r.random() < 0.5 else "")
        elif kind < 0.8:
            c = self.table(big=False)
            if not equi:
                a, b, c = "fc", "fd", "fd"   # inequalities: every pair may match, keep it small
            q = ("SELECT x.id AS xid, y.id AS yid, z.id AS zid FROM %s x JOIN %s y ON %s "
                 "%s %s z ON %s%s" % (a, b, clause, self.pick(["JOIN", "LEFT JOIN"]), c,
                                      self.join_clause("y", "z", equi), where))
        else:
            q = ("SELECT count(*), count(y.id), sum(x.i4) FROM %s x %s %s y ON %s%s" %
                 (a, self.pick(["JOIN", "LEFT JOIN"]), b, clause, where))
        # GpuQuery (on by default) would take the counting joins: this family tests the join nodes
        settings = {"GpuHashJoin": "enable_hashjoin=off,enable_mergejoin=off,gpuops.enable_mergejoin=off,gpuops.enable_nestloop=off",
                    "GpuMergeJoin": "enable_hashjoin=off,gpuops.enable_hashjoin=off,gpuops.enable_nestloop=off",
                    "GpuNestLoop": "enable_hashjoin=off,enable_mergejoin=off"}[node] + ",gpuops.enable_query=off"
        return (node, settings, "", q)

    def agg(self):
        r = self.r
        t = self.table()
        keys = r.sample(KEYABLE, r.randint(0, 3))
        aggs = []
        for _ in range(r.randint(1, 4)):
            c = self.pick(NUMS)
            f = self.pick(["count(*)", "count(s.%s)" % c, "sum(s.%s)" % self.pick(INTS + ["n"]),
                           "avg(s.%s)" % self.pick(INTS + ["n"]), "min(s.%s)" % self.pick(KEYABLE),
                           "max(s.%s)" % self.pick(KEYABLE), "count(DISTINCT s.%s)" % self.pick(KEYABLE),
                           "variance(s.%s)" % self.pick(INTS + ["n"]), "stddev_pop(s.%s)" % self.pick(INTS),
                           "bool_and(s.b)", "bool_or(s.i4 > 0)"])
            aggs.append(f)
        sel = ["s.%s AS g%d" % (k, i) for i, k in enumerate(keys)] + ["%s AS a%d" % (f, i) for i, f in enumerate(aggs)]
        q = "SELECT %s FROM %s s" % (", ".join(sel), t)
        if r.random() < 0.3:
            q += " WHERE " + self.pred("s")
        if keys:
            q += " GROUP BY " + ", ".join("s.%s" % k for k in keys)
            if r.random() < 0.3:
                q += " HAVING count(*) > %d" % r.randint(0, 3)
        if r.random() < 0.15:
            q = "SELECT DISTINCT %s FROM %s s" % (", ".join("s.%s" % k for k in (keys or ["i2"])), t)
        # GpuQuery (on by default) would take most of these: this family tests GpuAgg
        return ("GpuAgg", "gpuops.enable_query=off", "", q)

    def star(self):
        """GpuQuery over joins: x read, y (and z) looked up by their unique id, maybe a semi or anti join."""
        r = self.r
        x, y = self.table(), self.table(big=False)
        frm = "%s x JOIN %s y ON x.%s = y.id" % (x, y, self.pick(["id", "id", "i2", "i4"]))
        cols = [("x", c) for c in ("i2", "i4", "i8", "d", "ts", "b")] + [("y", c) for c in ("t", "i4", "d", "b")]
        if r.random() < 0.4:
            # a third table: a star (from x) or a snowflake (from y), maybe a filter between them
            z = self.table(big=False)
            frm += " JOIN %s z ON %s.id = z.id" % (z, self.pick(["x", "y"]))
            if r.random() < 0.3:
                frm += " AND %s" % self.pick(["y.i4 <> z.i4", "z.i2 < x.i2", "y.d >= z.d"])
            cols += [("z", c) for c in ("t", "i8", "d")]
        keys = r.sample(cols, r.randint(0, 3))
        aggs = []
        for _ in range(r.randint(1, 4)):
            a, c = self.pick([("x", "i4"), ("x", "i8"), ("x", "i2"), ("y", "i4")])
            t = self.text_test(self.pick(["x", "y"]))
            aggs.append(self.pick(["count(*)", "count(%s.%s)" % (a, c), "sum(%s.%s)" % (a, c),
                                   "avg(%s.%s)" % (a, c), "min(%s.%s)" % (a, c),
                                   "max(%s.d)" % self.pick(["x", "y"]),
                                   "count(*) FILTER (WHERE %s)" % t,
                                   "sum(CASE WHEN %s THEN %s.%s ELSE 0 END)" % (t, a, c),
                                   # scales 3 and 0: the sum shows the largest it added
                                   "sum(CASE WHEN %s THEN x.i4::numeric(12,2) * 1.5 ELSE 0 END)" % t]))
        sel = ["%s.%s AS g%d" % (a, c, i) for i, (a, c) in enumerate(keys)] + \
              ["%s AS a%d" % (f, i) for i, f in enumerate(aggs)]
        q = "SELECT %s FROM %s" % (", ".join(sel), frm)
        # x's filter runs on the device; y's alone is PostgreSQL's, in y's own scan
        preds = [self.pred("x", ["i2", "i4", "i8", "d", "ts", "f8"])] if r.random() < 0.35 else []
        preds += [self.pred("y")] if r.random() < 0.35 else []
        # text tests: x's in the reader, y's in the join filter with x's columns
        preds += [self.text_test("x")] if r.random() < 0.3 else []
        if r.random() < 0.25:
            preds.append("(%s OR %s)" % (self.text_test("y"), self.pred("x", ["i2", "i4", "d"])))
        if r.random() < 0.3:
            # a semi or anti join of a fourth table: its keys repeat, NULLs on both sides
            w, wc, xc = self.table(big=False), self.pick(["i2", "i4", "id"]), self.pick(["i2", "i4", "i8", "id"])
            own = " AND %s" % self.pred("w") if r.random() < 0.4 else ""
            preds.append(self.pick([
                "EXISTS (SELECT 1 FROM %s w WHERE w.%s = x.%s%s)" % (w, wc, xc, own),
                "NOT EXISTS (SELECT 1 FROM %s w WHERE w.%s = x.%s%s)" % (w, wc, xc, own),
                "x.%s IN (SELECT w.%s FROM %s w WHERE true%s)" % (xc, wc, w, own)]))
        if preds:
            q += " WHERE " + " AND ".join(preds)
        if keys:
            q += " GROUP BY " + ", ".join("%s.%s" % k for k in keys)
            if r.random() < 0.2:
                q += " HAVING count(*) > %d" % r.randint(0, 3)
        return ("GpuQuery", "gpuops.enable_query=on,gpuops.query_page_cost=0,gpuops.enable_agg=off,"
                "gpuops.enable_hashjoin=off,gpuops.enable_mergejoin=off,gpuops.enable_nestloop=off", "", q)

    def query(self, family):
        if family == "sort":
            return self.sort()
        if family == "agg":
            return self.agg()
        if family == "star":
            return self.star()
        return self.join({"hashjoin": "GpuHashJoin", "mergejoin": "GpuMergeJoin",
                          "nestloop": "GpuNestLoop"}[family])

FAMILIES = ["sort", "hashjoin", "mergejoin", "nestloop", "agg", "star"]
FORCE = ("-c gpuops.min_rows=0 -c gpuops.startup_cost=0 -c gpuops.tuple_cost=0 "
         "-c gpuops.cpu_fallback=on -c max_parallel_workers_per_gather=0 -c timezone=UTC")

def q(s):
    return "'" + s.replace("'", "''") + "'"

def psql(sql, out_file=None, timeout=None):
    env = dict(os.environ)
    env["PGOPTIONS"] = (env.get("PGOPTIONS", "") + " " + FORCE).strip()
    p = subprocess.run([PSQL, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-f", "-"], input=sql,
                       capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr

def compare(query, keys, settings, node):
    rc, out, err = psql("SELECT verdict || '|' || used || '|' || detail FROM fuzz_compare(%s, %s, %s, %s);"
                        % (q(query), q(keys), q(settings), q(node)))
    if rc != 0:
        return "crash" if "terminated" in err or "closed the connection" in err else "error", err.strip()
    v = out.strip().split("|", 2)
    return v[0], v[2] if len(v) > 2 else ""

def reduce(item, verdict):
    """Greedy: drop clauses and columns while the query still fails alike."""
    node, settings, keys, query = item
    def still(qq):
        v, _ = compare(qq, keys, settings, node)
        return v == verdict
    cur = query
    steps = 0
    changed = True
    while changed and steps < 40:
        changed = False
        # candidate edits: drop an AND-ed clause, a WHERE, a LIMIT, a select column
        cands = []
        for m in re.finditer(r" AND [^()]*?(?= AND | WHERE | ORDER | GROUP | HAVING |\)|$)", cur):
            cands.append(cur[:m.start()] + cur[m.end():])
        m = re.search(r" WHERE [^()]*?(?= ORDER | GROUP |\)|$)", cur)
        if m:
            cands.append(cur[:m.start()] + cur[m.end():])
        m = re.search(r" LIMIT \d+", cur)
        if m:
            cands.append(cur[:m.start()] + cur[m.end():])
        for cand in cands:
            steps += 1
            if cand != cur and still(cand):
                cur, changed = cand, True
                break
    return cur

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--queries", type=int, default=3000)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "results", "fuzz"))
    ap.add_argument("--seconds", type=float, default=0,
                    help="stop starting batches after this long (0: none); the summary counts what ran")
    ap.add_argument("--families", default=",".join(FAMILIES),
                    help="comma-separated families to draw from (default: all)")
    args = ap.parse_args()
    fams = [f for f in FAMILIES if f in args.families.split(",")]
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()

    rc, out, err = psql("SET client_min_messages = warning;\nCREATE EXTENSION IF NOT EXISTS gpuops;\n" + tables_sql(args.seed) + "\n" +
                        open(os.path.join(HERE, "fuzz.sql")).read() + "\nTRUNCATE fuzz_q, fuzz_result;")
    if rc != 0:
        print(err)
        print("fuzz: setup failed")
        return 1

    g = Gen(args.seed)
    items = []
    for i in range(args.queries):
        items.append((fams[i % len(fams)],) + g.query(fams[i % len(fams)]))
    with open(os.path.join(args.out, "queries.sql"), "w") as f:
        for i, (fam, node, settings, keys, query) in enumerate(items):
            f.write("-- %d %s [%s] keys=%s\n%s;\n" % (i + 1, fam, settings, keys, query))

    # load the catalog, then check every query, a batch per psql call
    crashes = []
    batch = 200
    for start in range(0, len(items), batch):
        if args.seconds and time.time() - t0 > args.seconds:
            print("fuzz: time budget spent after %d queries" % start, flush=True)
            items = items[:start]
            break
        chunk = items[start:start + batch]
        sql = "".join("INSERT INTO fuzz_q VALUES (%d, %s, %s, %s, %s, %s);\n" %
                      (start + j + 1, q(fam), q(node), q(settings), q(keys), q(query))
                      for j, (fam, node, settings, keys, query) in enumerate(chunk))
        sql += "".join("SELECT fuzz_check(%d);\n" % (start + j + 1) for j in range(len(chunk)))
        rc, out, err = psql(sql)
        print("fuzz: %d queries run, %.0f s" % (start + len(chunk), time.time() - t0), flush=True)
        if rc != 0:
            # a crash (or a lost connection): find the statement, keep going
            crashes.append((start, err.strip()[-500:]))
            for j in range(len(chunk)):
                qid = start + j + 1
                rc2, _, err2 = psql("SELECT fuzz_check(%d);" % qid)
                if rc2 != 0:
                    crashes.append((qid, err2.strip()[-300:]))
                    time.sleep(2)   # the server restarts after a crash

    rc, out, err = psql("SELECT r.id, q.family, r.used, r.verdict, r.detail FROM fuzz_result r "
                        "JOIN fuzz_q q USING (id) ORDER BY r.id;")
    results = [l.split("|", 4) for l in out.splitlines() if l]
    share = {}
    bad = []
    for rid, fam, used, verdict, detail in results:
        s = share.setdefault(fam, [0, 0])
        s[1] += 1
        s[0] += used == "t"
        if verdict != "ok":
            bad.append((int(rid), verdict, detail))

    report = open(os.path.join(args.out, "report.txt"), "w")
    for rid, verdict, detail in bad[:20]:
        fam, node, settings, keys, query = items[rid - 1]
        small = reduce(items[rid - 1][1:], verdict)
        msg = ("mismatch (%s) in query %d (%s, settings %s):\n  %s\n  reduced: %s\n  %s\n" %
               (verdict, rid, fam, settings or "none", query, small, detail))
        print(msg)
        report.write(msg)
    for c in crashes:
        print("crash: %s" % (c,))
        report.write("crash: %s\n" % (c,))
    checked = len(results)
    mism = sum(1 for b in bad if b[1] in ("rows", "order"))
    errs = sum(1 for b in bad if b[1] == "error")
    low = [f for f in FAMILIES if f in share and share[f][0] * 2 < share[f][1]]
    plans = " ".join("%s %d%% (%d/%d)" % (f, 100 * share[f][0] // max(share[f][1], 1), share[f][0], share[f][1])
                     for f in FAMILIES if f in share)
    line = ("fuzz: seed %d, %d queries checked, %d mismatches, %d one-side or different errors, %d crashes; "
            "plans on their node: %s; %.0f s" % (args.seed, checked, mism, errs, len(crashes), plans, time.time() - t0))
    report.write(line + "\n")
    if low:
        print("fuzz: below 50%% of their queries on their node: %s" % ", ".join(low))
    print(line)
    return 0 if (not bad and not crashes and not low and checked == len(items)) else 1

if __name__ == "__main__":
    sys.exit(main())
