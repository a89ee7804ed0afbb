-- The page walk's two cheaper steps (src/input/heap_pages.h): a page whose
-- PD_ALL_VISIBLE flag is set has its normal line pointers listed without
-- a visibility call per tuple, and every page is pinned through the
-- recent-buffer table (src/input/recent_buffers.h) where it knows the
-- buffer.  Each result is compared with PostgreSQL's under the same
-- snapshot (check_pages), reading pages in place, copied, and through the
-- host form: on pages all-visible; on pages another session changed
-- (dblink) after this one's REPEATABLE READ snapshot was taken, serial and
-- parallel; in a SERIALIZABLE transaction (which takes heapgetpage's path);
-- and after TRUNCATE gave the table new blocks.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.cpu_fallback = off;
SET gpuops.enable_query = on;
SET gpuops.query_read_pages = on;
SET gpuops.query_pages_in_place = on;
SET max_parallel_workers_per_gather = 0;

CREATE EXTENSION dblink;
SELECT dblink_connect('hw', format('host=%s port=%s dbname=%s user=%s',
       split_part(current_setting('unix_socket_directories'), ',', 1),
       current_setting('port'), current_database(), current_user)) AS connected;

-- vacuum_visible(t): VACUUM t (through the dblink session, so that it can
-- be retried from here) until every page is all-visible, which VACUUM can
-- only make a page whose rows no running snapshot may still miss (an
-- autovacuum's ANALYZE of another table can hold one); false after 60 s.
CREATE FUNCTION vacuum_visible(t text) RETURNS bool
LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..600 LOOP
    PERFORM dblink_exec('hw', format('VACUUM %I', t));
    IF (SELECT relallvisible = relpages FROM pg_class WHERE oid = t::regclass) THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.1);
  END LOOP;
  RETURN false;
END $$;

CREATE TABLE hw (id int4, g int4, v int8, t text) WITH (autovacuum_enabled = off);
INSERT INTO hw
SELECT i, i % 97, i * 7, CASE WHEN i % 13 = 0 THEN NULL ELSE 'r' || i END
FROM generate_series(1, 60000) i;
ANALYZE hw;
-- every page all-visible (so the listing without visibility calls reads them)
SELECT vacuum_visible('hw') AS all_visible;
SELECT relpages > 300 AS many_pages FROM pg_class WHERE relname = 'hw';

SELECT check_pages('SELECT g, count(*), sum(v), min(id), max(id) FROM hw GROUP BY g');
SELECT check_pages('SELECT count(*), sum(v) FROM hw WHERE id % 5 = 0 AND t LIKE ''r1%''');

-- Another session deletes, updates (HOT and not) and inserts after this
-- transaction's snapshot: those pages lose PD_ALL_VISIBLE, and the rows
-- this snapshot sees are the old ones.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) AS before_change FROM hw;
SELECT dblink_exec('hw', 'DELETE FROM hw WHERE id BETWEEN 20000 AND 30000 AND id % 10 = 0');
SELECT dblink_exec('hw', 'UPDATE hw SET v = -v WHERE id BETWEEN 40000 AND 41000');
SELECT dblink_exec('hw', 'UPDATE hw SET t = repeat(''u'', 40) WHERE id BETWEEN 50000 AND 50100');
SELECT dblink_exec('hw', 'INSERT INTO hw SELECT i, i % 97, i, ''new'' FROM generate_series(60001, 61000) i');
SELECT count(*) AS same_snapshot, sum(v) FILTER (WHERE v < 0) AS negated FROM hw;
SELECT check_pages('SELECT g, count(*), sum(v), min(id), max(id) FROM hw GROUP BY g');
SELECT check_pages('SELECT count(*), sum(v) FROM hw WHERE id % 5 = 0 AND t LIKE ''r1%''');
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL gpuops.tuple_cost = 0;
SELECT check_pages('SELECT g, count(*), sum(v), min(id), max(id) FROM hw GROUP BY g');
COMMIT;

-- a new snapshot sees the changes: changed pages and all-visible ones mixed
ANALYZE hw;
SELECT relallvisible < relpages AS some_not_all_visible FROM pg_class WHERE relname = 'hw';
SELECT count(*) AS after_change, sum(v) FILTER (WHERE v < 0) AS negated FROM hw;
SELECT check_pages('SELECT g, count(*), sum(v), min(id), max(id) FROM hw GROUP BY g');
SELECT check_pages('SELECT count(*), sum(v) FROM hw WHERE id % 5 = 0 AND t LIKE ''r1%''');

-- SERIALIZABLE: every page takes heapgetpage's path (its conflict checks);
-- only the rows are checked here, which either path gives alike
SELECT vacuum_visible('hw') AS all_visible;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT check_pages('SELECT g, count(*), sum(v), min(id), max(id) FROM hw GROUP BY g');
COMMIT;

-- new blocks in new buffers: what the recent-buffer table held for the old
-- file names no buffer of the new one
TRUNCATE hw;
INSERT INTO hw
SELECT i, i % 31, i * 3, 's' || i FROM generate_series(1, 40000) i;
SELECT vacuum_visible('hw') AS all_visible;
SELECT check_pages('SELECT g, count(*), sum(v), min(id), max(id) FROM hw GROUP BY g');
-- and a second table read in between, then the first again
CREATE TABLE hw2 AS SELECT i AS id, i % 31 AS g, i::int8 AS v, 'x' AS t
FROM generate_series(1, 50000) i;
SELECT vacuum_visible('hw2') AS all_visible;
SELECT check_pages('SELECT g, count(*), sum(v) FROM hw2 GROUP BY g');
SELECT check_pages('SELECT g, count(*), sum(v), min(id), max(id) FROM hw GROUP BY g');

SELECT dblink_disconnect('hw');
DROP TABLE hw, hw2;
DROP FUNCTION vacuum_visible(text);
DROP EXTENSION dblink;
