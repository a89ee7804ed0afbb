#!/usr/bin/python3
"""Compares two runs of PostgreSQL's regression suite: a baseline (no gpuops)
and a run with gpuops forced on. Standard library only.

usage: compare.py --suite DIR --schedule FILE BASE_RUN TEST_RUN
  each RUN directory holds results/<test>.out and server.log (test/pgsuite/run.sh)

pg_regress runs psql with every input line echoed, so an .out file is the
test's .sql file with each statement's output after the line that ends it.
Each .out is aligned with its .sql (difflib), which splits it into one output
chunk per input line; the two runs' chunks are compared per input line.
A chunk that differs is accepted only when
  - it is plan text: the statement mentions EXPLAIN (EXPLAIN itself, or a
    function of the suite that runs EXPLAIN and returns its lines), and the
    two runs raise the same errors; or
  - its result tables hold the same rows as multisets, the same messages are
    raised, and the statement has no ORDER BY (row order is then the plan's);
  - or it is in ALLOWED below, with the reason.
Everything else is a difference: other rows, an error only one run raises, a
different message, a missing output file. A crash is a server log line
"terminated by signal" (or PANIC) in the gpuops run, or a lost connection in
its outputs.
Exit status 0 when there is no difference and no crash. Last line:
  pgsuite: N tests, N queries compared, N differences, N crashes
"""

import argparse
import difflib
import os
import re
import sys
from collections import Counter

# (test, text the statement contains) -> why its output may differ between
# the runs. Keep this short: every entry hides a query from the comparison.
ALLOWED = {
    # ORDER BY f1 <-> '0,1': (1e+300,Infinity) and (Infinity,1e+300) are both
    # at distance Infinity, a tie whose order SQL leaves open
    ('create_index', "SELECT * FROM point_tbl ORDER BY f1 <-> '0,1';"): 'tie',
    # ORDER BY coalesce(a,0)+coalesce(b,0): rows (1,2) and (3,NULL) both sort as 3, a tie
    ('groupingsets', 'from gstest1 group by rollup (a,b) order by coalesce(a,0)+coalesce(b,0);'): 'tie',
    # a scroll cursor over tenk2 without ORDER BY: which row is last is the
    # plan's (parallel plans differ here without gpuops too)
    ('portals', 'FETCH ABSOLUTE -1 FROM foo25;'): 'unordered cursor',
    # a trigger prints EXPLAIN of a query over its transition tables with RAISE INFO: plan text
    ('plpgsql', "SET val = '*' || val || '*'"): 'plan text',
}

MESSAGE_RE = re.compile(r'^(ERROR|WARNING|NOTICE|INFO|DETAIL|HINT|CONTEXT|LINE \d+|QUERY|LOCATION|STATEMENT):  ?')
SEPARATOR_RE = re.compile(r'^-+(\+-+)*$|^-\[ RECORD \d+ \]')
ROWCOUNT_RE = re.compile(r'^\((\d+) rows?\)$')
CRASH_LOG_RE = re.compile(r'terminated by signal|was terminated by exception|PANIC:')
CRASH_OUT_RE = re.compile(r'server closed the connection unexpectedly|connection to server was lost')


def read_lines(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read().split('\n')


def chunks_by_input_line(sql, out):
    """Output lines following each echoed input line: {sql index: [lines]},
    with -1 for output before the first echo. psql echoes every input line
    but a blank one, so blank input lines take no part in the alignment."""
    idx = [k for k, line in enumerate(sql) if line.strip() != '']
    sm = difflib.SequenceMatcher(None, [sql[k] for k in idx], out, autojunk=False)
    echo = {}
    for a, b, n in sm.get_matching_blocks():
        for k in range(n):
            echo[b + k] = idx[a + k]
    chunks = {}
    cur = -1
    for o, line in enumerate(out):
        if o in echo:
            cur = echo[o]
            chunks.setdefault(cur, [])
        else:
            chunks.setdefault(cur, []).append(line)
    return {k: strip_blank(v) for k, v in chunks.items()}


def strip_blank(lines):
    i, j = 0, len(lines)
    while i < j and lines[i].strip() == '':
        i += 1
    while j > i and lines[j - 1].strip() == '':
        j -= 1
    return lines[i:j]


DOLLAR_RE = re.compile(r'\$([A-Za-z_][A-Za-z_0-9]*)?\$')
COPY_STDIN_RE = re.compile(r'^\s*\\?copy\b.*\bfrom\s+stdin\b', re.I | re.S)


def statement_ends(sql):
    """Indexes of the input lines that end a statement or a psql command, as
    psql's lexer splits them: a semicolon outside quotes, comments and
    parentheses, or a backslash command; COPY FROM STDIN data lines (to the
    line \\.) belong to their COPY."""
    ends = set()
    text_start = 0
    depth = 0
    state = None            # None, "'", 'E', '"', '$tag$', '/*'
    comment_depth = 0
    k = 0
    while k < len(sql):
        line = sql[k]
        i = 0
        ended = False
        while i < len(line):
            c = line[i]
            if state is None:
                if line.startswith('--', i):
                    break
                if line.startswith('/*', i):
                    state, comment_depth = '/*', 1
                    i += 2
                    continue
                if c == "'":
                    prev = line[i - 1] if i > 0 else ''
                    state = 'E' if prev in 'eE' and (i < 2 or not (line[i - 2].isalnum() or line[i - 2] == '_')) else "'"
                elif c == '"':
                    state = '"'
                elif c == '$':
                    m = DOLLAR_RE.match(line, i)
                    if m and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == '_')):
                        state = m.group(0)
                        i = m.end()
                        continue
                elif c == '(':
                    depth += 1
                elif c == ')':
                    depth = max(0, depth - 1)
                elif c == ';' and depth == 0:
                    ended = True
                elif c == '\\':
                    if line.startswith('\\;', i):
                        i += 2
                        continue
                    ended = True
                    break
            elif state == '/*':
                if line.startswith('*/', i):
                    comment_depth -= 1
                    i += 2
                    if comment_depth == 0:
                        state = None
                    continue
                if line.startswith('/*', i):
                    comment_depth += 1
                    i += 2
                    continue
            elif state in ("'", 'E'):
                if state == 'E' and c == '\\':
                    i += 2
                    continue
                if c == "'":
                    if line.startswith("''", i):
                        i += 2
                        continue
                    state = None
            elif state == '"':
                if c == '"':
                    state = None
            elif line.startswith(state, i):
                i += len(state)
                state = None
                continue
            i += 1
        if ended:
            ends.add(k)
            stmt = '\n'.join(sql[text_start:k + 1])
            depth = 0
            text_start = k + 1
            if COPY_STDIN_RE.match(strip_comments(stmt)):
                while k + 1 < len(sql) and sql[k + 1] != '\\.':
                    k += 1
                if k + 1 < len(sql):
                    k += 1
                ends.add(k)
                text_start = k + 1
        k += 1
    return ends


def statement_text(sql, ends, j):
    """The input lines of the statement that ends at line j (comments and
    blank lines before it included)."""
    i = j
    while i > 0 and (i - 1) not in ends:
        i -= 1
    return '\n'.join(sql[i:j + 1])


def strip_comments(text):
    return re.sub(r'--[^\n]*', '', text)


def parse_chunk(lines):
    """Splits a chunk into messages and result rows: (messages, tables), a
    table being (header, Counter of rows, row list, row count line)."""
    messages, tables, other = [], [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        if MESSAGE_RE.match(line):
            messages.append(line)
            i += 1
            continue
        if i + 1 < len(lines) and SEPARATOR_RE.match(lines[i + 1]):
            header = line
            i += 2
            rows, cur = [], None
            while i < len(lines) and not ROWCOUNT_RE.match(lines[i]):
                if MESSAGE_RE.match(lines[i]):
                    break
                # a multi-line value continues with '+' at the column's edge
                cur = lines[i] if cur is None else cur + '\n' + lines[i]
                if not (lines[i].rstrip().endswith('+') or '+|' in lines[i]):
                    rows.append(cur)
                    cur = None
                i += 1
            if cur is not None:
                rows.append(cur)
            count = lines[i] if i < len(lines) and ROWCOUNT_RE.match(lines[i]) else ''
            if count:
                i += 1
            tables.append((header, Counter(rows), rows, count))
            continue
        other.append(line)
        i += 1
    return messages, tables, other


def same_multiset(a, b):
    ma, ta, oa = parse_chunk(a)
    mb, tb, ob = parse_chunk(b)
    if ma != mb or Counter(oa) != Counter(ob) or len(ta) != len(tb):
        return False
    return all(x[0] == y[0] and x[1] == y[1] and x[3] == y[3] for x, y in zip(ta, tb))


def top_level(code):
    """The statement with every parenthesized part replaced by "()"."""
    prev = None
    while prev != code:
        prev = code
        code = re.sub(r'\([^()]*\)', '\x01', code)
    return code.replace('\x01', '()')


def order_keys(code):
    """The top-level ORDER BY list of a statement, split into keys."""
    top = top_level(code)
    m = None
    for m in re.finditer(r'\border\s+by\b', top, re.I):
        pass
    if not m:
        return None
    tail = re.split(r'\b(limit|offset|fetch|for\s+update|for\s+share)\b|;', top[m.end():], flags=re.I)[0]
    keys = []
    for k in tail.split(','):
        k = re.sub(r'\s+(asc|desc|nulls\s+first|nulls\s+last|using\s+\S+)\b', '', k.strip(), flags=re.I)
        keys.append(k.strip().strip('"').lower())
    return keys


def order_respected(stmt, a, b):
    """Whether two results with the same rows list them in an order both
    consistent with the statement's ORDER BY: true when the keys that name
    output columns (by name or position), up to the first that names none,
    take the same sequence of values in both (rows equal in them are ties,
    whose order SQL leaves open). False when no key names a column: then the
    order cannot be checked here."""
    keys = order_keys(strip_comments(stmt))
    ta, tb = parse_chunk(a)[1], parse_chunk(b)[1]
    if not keys or len(ta) != 1 or len(tb) != 1:
        return False
    header = [h.strip().lower() for h in ta[0][0].split('|')]
    cols = []
    for k in keys:
        name = k.split('.')[-1].strip('"')
        if k.isdigit() and 1 <= int(k) <= len(header):
            cols.append(int(k) - 1)
        elif name in header and header.count(name) == 1:
            cols.append(header.index(name))
        elif re.match(r'^(\w+)\s*\(', k) and header.count(re.match(r'^(\w+)', k).group(1)) == 1:
            # a function call is named after the function: rank() OVER w is "rank"
            cols.append(header.index(re.match(r'^(\w+)', k).group(1)))
        else:
            break
    if not cols:
        return False

    def seq(rows):
        out = []
        for r in rows:
            cells = [c.strip() for c in r.split('|')]
            if len(cells) != len(header):
                return None
            out.append(tuple(cells[c] for c in cols))
        return out
    sa, sb = seq(ta[0][2]), seq(tb[0][2])
    return sa is not None and sa == sb


def errors_of(chunk):
    return [m for m in parse_chunk(chunk)[0] if m.startswith('ERROR')]


def classify(test, stmt, a, b, plan_functions):
    """None when the difference is accepted, else a short reason."""
    for (t, needle), _why in ALLOWED.items():
        if t == test and needle in stmt:
            return None
    code = strip_comments(stmt).lower()
    errs_a, errs_b = errors_of(a), errors_of(b)
    if errs_b != errs_a:
        if errs_b:
            return 'error only with gpuops: ' + errs_b[0]
        return 'error only without gpuops: ' + errs_a[0]
    # plan text: EXPLAIN, or a function of the suite that runs it
    if re.search(r'\bexplain\b', code) or any(re.search(r'\b%s\s*\(' % re.escape(f), code) for f in plan_functions):
        return None
    if same_multiset(a, b):
        if order_keys(code) is None or order_respected(stmt, a, b):
            return None
        return 'same rows in another order under ORDER BY (keys not checkable here)'
    if parse_chunk(a)[0] != parse_chunk(b)[0]:
        return 'messages differ'
    return 'rows differ'


def plan_functions_of(suite):
    """Functions the suite defines that run EXPLAIN (their results are plan text)."""
    names = set()
    sqldir = os.path.join(suite, 'sql')
    for fn in sorted(os.listdir(sqldir)):
        if not fn.endswith('.sql'):
            continue
        sql = read_lines(os.path.join(sqldir, fn))
        ends = sorted(statement_ends(sql))
        start = 0
        for e in ends:
            text = strip_comments('\n'.join(sql[start:e + 1]))
            start = e + 1
            m = re.search(r'create\s+(or\s+replace\s+)?function\s+([\w.]+)', text, re.I)
            if m and re.search(r'\bexplain\b', text, re.I):
                names.add(m.group(2).split('.')[-1].lower())
    return names


def schedule_tests(path):
    tests = []
    for line in read_lines(path):
        m = re.match(r'^test:\s*(.*)$', line)
        if m:
            tests.extend(m.group(1).split())
    return tests


GPU_NODE_RE = re.compile(r'Custom Scan \(Gpu\w+\)')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--suite', required=True)
    ap.add_argument('--schedule', required=True)
    ap.add_argument('--max-shown', type=int, default=40, help='differences printed in full')
    ap.add_argument('base')
    ap.add_argument('test')
    args = ap.parse_args()

    tests = schedule_tests(args.schedule)
    plan_functions = plan_functions_of(args.suite)
    compared = 0
    diffs = []
    crashes = []
    gpu_nodes = Counter()
    for t in tests:
        sql_path = os.path.join(args.suite, 'sql', t + '.sql')
        pa = os.path.join(args.base, 'results', t + '.out')
        pb = os.path.join(args.test, 'results', t + '.out')
        if not os.path.exists(pb) or not os.path.exists(pa):
            diffs.append((t, 0, '', 'output missing (%s)' % ('gpuops run' if not os.path.exists(pb) else 'baseline'), [], []))
            continue
        sql = read_lines(sql_path)
        ends = statement_ends(sql)
        a, b = read_lines(pa), read_lines(pb)
        for line in b:
            if CRASH_OUT_RE.search(line):
                crashes.append('%s: %s' % (t, line.strip()))
                break
            for m in GPU_NODE_RE.finditer(line):
                gpu_nodes[m.group(0)[13:-1]] += 1
        ca = chunks_by_input_line(sql, a)
        cb = chunks_by_input_line(sql, b)
        for j in sorted(set(ca) | set(cb)):
            xa, xb = ca.get(j, []), cb.get(j, [])
            if xa or xb:
                compared += 1
            if xa == xb:
                continue
            stmt = statement_text(sql, ends, j) if j >= 0 else ''
            why = classify(t, stmt, xa, xb, plan_functions)
            if why:
                diffs.append((t, j + 1, stmt, why, xa, xb))

    log_path = os.path.join(args.test, 'server.log')
    if os.path.exists(log_path):
        for line in read_lines(log_path):
            if CRASH_LOG_RE.search(line):
                crashes.append('server log: ' + line.strip())

    name = os.path.basename(os.path.normpath(args.test))
    for n, (t, lineno, stmt, why, xa, xb) in enumerate(diffs):
        if n >= args.max_shown:
            print('... %d more differences' % (len(diffs) - n))
            break
        print('=== %s.sql:%d: %s' % (t, lineno, why))
        for s in stmt.strip('\n').split('\n')[-12:]:
            print('    ' + s)
        for line in list(difflib.unified_diff(xa, xb, 'baseline', name, lineterm='', n=2))[:60]:
            print('  ' + line)
    for c in crashes[:20]:
        print('=== crash: ' + c)
    print('pgsuite: %s vs %s: gpuops nodes in plan output: %s' % (
        name, os.path.basename(os.path.normpath(args.base)),
        ', '.join('%s %d' % kv for kv in sorted(gpu_nodes.items())) or 'none'))
    print('pgsuite: %d tests, %d queries compared, %d differences, %d crashes'
          % (len(tests), compared, len(diffs), len(crashes)))
    return 0 if not diffs and not crashes else 1


if __name__ == '__main__':
    sys.exit(main())
