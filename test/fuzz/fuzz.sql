-- test/fuzz: the server side of the differential tester (fuzz.py).  Each
-- query runs with gpuops off (PostgreSQL, the oracle) and on, in one
-- function call, and the two answers are compared as digests: of the rows
-- as a multiset, and, where the query orders, of its sort keys in order.
-- An error on one side only, or two different errors, is a mismatch too.

CREATE TABLE IF NOT EXISTS fuzz_q (
  id int PRIMARY KEY, family text, node text, settings text, keys text, q text);
CREATE TABLE IF NOT EXISTS fuzz_result (
  id int PRIMARY KEY, used bool, verdict text, detail text);

-- fuzz_settings(s): 'name=value,...' for the current transaction only
CREATE OR REPLACE FUNCTION fuzz_settings(s text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE kv text;
BEGIN
  IF s IS NULL OR s = '' THEN RETURN; END IF;
  FOREACH kv IN ARRAY string_to_array(s, ',') LOOP
    PERFORM set_config(split_part(kv, '=', 1), split_part(kv, '=', 2), true);
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION fuzz_norm(t text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT regexp_replace(t, '([(,])-0(?=[,)])', '\10', 'g')
$$;

-- fuzz_answer(q, keys): 'rows=N set=<md5> order=<md5>' or 'error=<sqlstate>'
CREATE OR REPLACE FUNCTION fuzz_answer(q text, keys text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint; s text; o text;
BEGIN
  -- -0 and 0 are equal (a group's key, a sort's tie) and either may be
  -- the one PostgreSQL shows, depending on its plan: digests read both as 0
  EXECUTE format('SELECT count(*), md5(coalesce(string_agg(fuzz_norm(r__::text), E''\n'' ORDER BY fuzz_norm(r__::text)), '''')) FROM (%s) r__', q)
    INTO n, s;
  o := '';
  IF keys IS NOT NULL AND keys <> '' THEN
    EXECUTE format('SELECT md5(coalesce(string_agg(fuzz_norm(ROW(%s)::text), E''\n''), '''')) FROM (%s) r__', keys, q) INTO o;
  END IF;
  RETURN format('rows=%s set=%s order=%s', n, s, o);
EXCEPTION WHEN OTHERS THEN
  RETURN 'error=' || SQLSTATE;
END $$;

-- fuzz_uses(q, node): does q's plan use Custom Scan (node)?
CREATE OR REPLACE FUNCTION fuzz_uses(q text, node text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line LIKE '%Custom Scan (' || node || ')%' THEN RETURN true; END IF;
  END LOOP;
  RETURN false;
EXCEPTION WHEN OTHERS THEN
  RETURN false;
END $$;

-- fuzz_compare(q, keys, settings, node): 'ok', or what differs;
-- and whether gpuops planned node
CREATE OR REPLACE FUNCTION fuzz_compare(q text, keys text, settings text, node text,
                                        OUT used bool, OUT verdict text, OUT detail text)
LANGUAGE plpgsql AS $$
DECLARE a_off text; a_on text;
BEGIN
  PERFORM fuzz_settings(settings);
  PERFORM set_config('gpuops.enabled', 'off', true);
  a_off := fuzz_answer(q, keys);
  PERFORM set_config('gpuops.enabled', 'on', true);
  used := fuzz_uses(q, node);
  a_on := fuzz_answer(q, keys);
  PERFORM set_config('gpuops.enabled', 'off', true);
  detail := 'off: ' || a_off || ' on: ' || a_on;
  IF a_off = a_on THEN
    verdict := 'ok';
  ELSIF a_off LIKE 'error=%' OR a_on LIKE 'error=%' THEN
    verdict := 'error';
  ELSIF split_part(a_off, ' order=', 1) = split_part(a_on, ' order=', 1) THEN
    verdict := 'order';
  ELSE
    verdict := 'rows';
  END IF;
END $$;

CREATE OR REPLACE FUNCTION fuzz_check(qid int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r record; c record;
BEGIN
  SELECT * INTO r FROM fuzz_q WHERE id = qid;
  SELECT * INTO c FROM fuzz_compare(r.q, r.keys, r.settings, r.node);
  INSERT INTO fuzz_result VALUES (qid, c.used, c.verdict, c.detail)
    ON CONFLICT (id) DO UPDATE SET used = EXCLUDED.used, verdict = EXCLUDED.verdict, detail = EXCLUDED.detail;
  RETURN c.verdict;
END $$;
