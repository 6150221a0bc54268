--
-- parallel_scan: parallel index and index-only scans give btree's answers,
-- with btree's plans.
--
-- Tables exist twice (NAME_bt with a btree index, NAME_fbt with the same
-- index USING fastbtree, identical heaps); pcmp(q) runs q on both with
-- parallel plans made cheap and reports the fastbtree plan's parallel
-- nodes, whether the plans are the same once the suffixes are masked, the
-- rows, and whether both returned the same rows (in the same order when q
-- has ORDER BY on unique keys; as a multiset otherwise, since Gather
-- returns the workers' rows in the order they come).  Workers may not all
-- start on a busy machine: the plans and the rows are the same with fewer.
-- Scans with = ANY and skip arrays hand out their primitive scans too
-- (README.design, "Parallel scans"): in array mode with the arrays'
-- positions, and with fastbtree.skip_scan off one element combination
-- after the other.
--
CREATE SCHEMA fbt_pscan;
SET search_path = fbt_pscan, public;
\i sql/include/scan_helpers.sql
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_index_scan_size = 0;
SET min_parallel_table_scan_size = 0;
-- (Gather Merge's comparisons made free too)
SET cpu_operator_cost = 0;
SET enable_bitmapscan = off;
SET enable_seqscan = off;

-- t: 200000 rows, about two per key, NULLs; u: unique keys; m: two columns
CREATE TABLE t_bt (a int4, b int8, id int4) WITH (autovacuum_enabled = off);
CREATE TABLE t_fbt (a int4, b int8, id int4) WITH (autovacuum_enabled = off);
INSERT INTO t_bt SELECT CASE WHEN i % 1000 = 0 THEN NULL ELSE (i * 7919) % 100003 END,
	i % 97, i FROM generate_series(1, 200000) i;
INSERT INTO t_fbt SELECT * FROM t_bt;
CREATE INDEX t_bt_a ON t_bt USING btree (a);
CREATE INDEX t_fbt_a ON t_fbt USING fastbtree (a);
CREATE TABLE u_bt (a int4, pad text) WITH (autovacuum_enabled = off);
CREATE TABLE u_fbt (a int4, pad text) WITH (autovacuum_enabled = off);
INSERT INTO u_bt SELECT i * 3, repeat('x', i % 30) FROM generate_series(1, 100000) i;
INSERT INTO u_fbt SELECT * FROM u_bt;
CREATE INDEX u_bt_a ON u_bt USING btree (a);
CREATE INDEX u_fbt_a ON u_fbt USING fastbtree (a);
CREATE TABLE m_bt (g int4, v int4) WITH (autovacuum_enabled = off);
CREATE TABLE m_fbt (g int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO m_bt SELECT i % 10, i FROM generate_series(1, 100000) i;
INSERT INTO m_fbt SELECT * FROM m_bt;
CREATE INDEX m_bt_gv ON m_bt USING btree (g, v);
CREATE INDEX m_fbt_gv ON m_fbt USING fastbtree (g, v);
-- s: a text column to skip (skip arrays' values handed out by reference)
CREATE TABLE s_bt (s text, v int4) WITH (autovacuum_enabled = off);
CREATE TABLE s_fbt (s text, v int4) WITH (autovacuum_enabled = off);
INSERT INTO s_bt SELECT CASE WHEN i % 41 = 0 THEN NULL
	ELSE repeat(chr(97 + i % 23), 1 + i % 5) || (i % 7) END, i
	FROM generate_series(1, 100000) i;
INSERT INTO s_fbt SELECT * FROM s_bt;
CREATE INDEX s_bt_sv ON s_bt USING btree (s COLLATE "C", v);
CREATE INDEX s_fbt_sv ON s_fbt USING fastbtree (s COLLATE "C", v);
VACUUM ANALYZE t_bt, t_fbt, u_bt, u_fbt, m_bt, m_fbt, s_bt, s_fbt;

-- pcmp(q): see the file header
CREATE FUNCTION pcmp(q text, OUT nodes text, OUT same_plan bool,
	OUT nrows int, OUT same_rows bool)
LANGUAGE plpgsql AS $$
DECLARE
	qb text := replace(q, '_AM', '_bt');
	qf text := replace(q, '_AM', '_fbt');
	l text;
	rb text[];
	rf text[];
BEGIN
	nodes := '';
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || qf LOOP
		IF l ~ '(Parallel|Gather)' THEN
			nodes := nodes || CASE WHEN nodes = '' THEN '' ELSE ' / ' END ||
				btrim(regexp_replace(l, '^\s*->\s*', ''));
		END IF;
	END LOOP;
	same_plan := plan_conds(qb, '_bt') = plan_conds(qf, '_fbt');
	EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', qb) INTO rb;
	EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', qf) INTO rf;
	nrows := coalesce(cardinality(rf), 0);
	IF q ~* 'order by' THEN
		same_rows := rb IS NOT DISTINCT FROM rf;
	ELSE
		same_rows := (SELECT array_agg(x ORDER BY x) FROM unnest(rb) x) IS
			NOT DISTINCT FROM (SELECT array_agg(x ORDER BY x) FROM unnest(rf) x);
	END IF;
END
$$;

-- forward scans, plain and index-only, ranges and inequalities
SELECT * FROM pcmp('SELECT count(*), sum(id), min(a), max(a) FROM t_AM WHERE a BETWEEN 1000 AND 90000');
SELECT * FROM pcmp('SELECT count(*), sum(b) FROM t_AM WHERE a > 50000');
SELECT * FROM pcmp('SELECT count(*) FROM t_AM WHERE a >= 0');
SELECT * FROM pcmp('SELECT a, b, id FROM t_AM WHERE a BETWEEN 40000 AND 40100');
SELECT * FROM pcmp('SELECT count(*), sum(id) FROM t_AM WHERE a IS NULL');
SELECT * FROM pcmp('SELECT count(*) FROM t_AM WHERE a > 200000');
SELECT * FROM pcmp('SELECT count(*), sum(length(pad)) FROM u_AM WHERE a < 150000');
-- ordered: Gather Merge over forward and backward scans
SELECT * FROM pcmp('SELECT a FROM u_AM WHERE a BETWEEN 3000 AND 120000 ORDER BY a');
SELECT * FROM pcmp('SELECT a, length(pad) FROM u_AM WHERE a < 200000 ORDER BY a DESC');
SELECT * FROM pcmp('SELECT a FROM u_AM ORDER BY a DESC');
-- arrays and skip scans, forward and backward, in array mode and (skip
-- scan off) one element combination at a time
SELECT * FROM pcmp('SELECT count(*), sum(v) FROM m_AM WHERE g = ANY(''{2,4,6,8}'') AND v > 10');
SELECT * FROM pcmp('SELECT count(*), sum(v) FROM m_AM WHERE g IN (1, 3, 7) AND v < 50000');
SELECT * FROM pcmp('SELECT count(*), sum(v) FROM m_AM WHERE v BETWEEN 100 AND 20000');
SELECT * FROM pcmp('SELECT g, v FROM m_AM WHERE g IN (0, 5, 9) AND v % 1000 < 30 ORDER BY g, v');
SELECT * FROM pcmp('SELECT g, v FROM m_AM WHERE g IN (0, 5, 9) AND v BETWEEN 300 AND 90000 ORDER BY g DESC, v DESC');
SELECT * FROM pcmp('SELECT count(*), sum(v), count(s) FROM s_AM WHERE v BETWEEN 20000 AND 30000');
SELECT * FROM pcmp('SELECT s, v FROM s_AM WHERE v % 1000 = 0 AND v > 5000 ORDER BY s COLLATE "C", v');
SELECT * FROM pcmp('SELECT s, v FROM s_AM WHERE s COLLATE "C" > ''m'' AND v < 60000 ORDER BY s COLLATE "C" DESC, v DESC');
SELECT * FROM pcmp('SELECT count(*), sum(v) FROM s_AM WHERE s IS NULL AND v > 50000');
SET fastbtree.skip_scan = off;
SELECT * FROM pcmp('SELECT count(*), sum(v) FROM m_AM WHERE g = ANY(''{2,4,6,8}'') AND v > 10');
SELECT * FROM pcmp('SELECT g, v FROM m_AM WHERE g IN (0, 5, 9) AND v BETWEEN 300 AND 90000 ORDER BY g DESC, v DESC');
RESET fastbtree.skip_scan;
-- the workers alone
SET parallel_leader_participation = off;
SELECT * FROM pcmp('SELECT count(*), sum(id) FROM t_AM WHERE a BETWEEN 1000 AND 90000');
SELECT * FROM pcmp('SELECT a FROM u_AM WHERE a < 200000 ORDER BY a DESC');
SELECT * FROM pcmp('SELECT count(*), sum(v) FROM m_AM WHERE g IN (1, 3, 7) AND v < 50000');
SELECT * FROM pcmp('SELECT count(*), sum(v), count(s) FROM s_AM WHERE v BETWEEN 20000 AND 30000');
SET fastbtree.skip_scan = off;
SELECT * FROM pcmp('SELECT count(*), sum(v) FROM m_AM WHERE g IN (1, 3, 7) AND v < 50000');
RESET fastbtree.skip_scan;
RESET parallel_leader_participation;
-- rescans: a Gather on the inner side of a nested loop, run once per
-- outer row (amparallelrescan each time)
SET enable_material = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT * FROM pcmp('SELECT count(*), sum(c), sum(x) FROM (VALUES (1), (2), (3)) v(x) LEFT JOIN (SELECT a c FROM u_AM WHERE a > 250000) s ON s.c % 7 = v.x');
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;
-- the plans themselves
SELECT explain('SELECT count(*), sum(b) FROM t_fbt WHERE a > 50000');
SELECT explain('SELECT a, length(pad) FROM u_fbt WHERE a < 200000 ORDER BY a DESC');

-- after deletes and VACUUM (empty leaves deleted), and inserts (splits)
DELETE FROM u_bt WHERE a BETWEEN 30000 AND 150000;
DELETE FROM u_fbt WHERE a BETWEEN 30000 AND 150000;
VACUUM u_bt, u_fbt;
INSERT INTO u_bt SELECT i * 3 + 1, 'y' FROM generate_series(1, 20000) i;
INSERT INTO u_fbt SELECT i * 3 + 1, 'y' FROM generate_series(1, 20000) i;
SELECT * FROM pcmp('SELECT a FROM u_AM WHERE a < 250000 ORDER BY a');
SELECT * FROM pcmp('SELECT a FROM u_AM WHERE a < 250000 ORDER BY a DESC');
SELECT * FROM pcmp('SELECT count(*), sum(a) FROM u_AM WHERE a > 10');

\i sql/include/check_all.sql
DROP SCHEMA fbt_pscan CASCADE;
