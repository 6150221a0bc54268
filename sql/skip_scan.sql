--
-- skip_scan: skip arrays on columns without an equality key that come
-- before a column with one, and = ANY arrays advanced along the leaves
-- (fbtarray.c), give btree's answers in btree's order, on every major:
-- PostgreSQL 18's btree skips the same way, 15's reads the whole range.
--
-- The setup, helpers and conventions are those of scans.sql (cmp(q) runs
-- q on the _bt and _fbt twins and compares rows and order; cursor_cmp
-- scrolls a cursor on both).
--
-- Skip arrays go on every column without an equality before the last
-- column with a key, whether that key is an equality or a range.
--
-- Covered: a leading int4 column with gaps, NULLs and the extreme values
-- (the next-value step and its overflow), a leading text column (no
-- next-value step), DESC and NULLS FIRST leading columns, two skipped
-- columns, skip arrays with ranges on their column, = ANY and IS NULL on
-- the later column, cross-type keys, forward and backward, index-only and
-- bitmap scans, cursors scrolling both ways, a merge join restoring marks,
-- a unique leading column (a value per tuple); skipped date, timestamp,
-- uuid, oid, "char" and boolean columns (skip support on 18); that the
-- scan skips (it
-- reads a fraction of the pages of the same scan with
-- fastbtree.skip_scan off); and everything again with the switch off.
--
CREATE SCHEMA fbt_skip;
SET search_path = fbt_skip, public;
\i sql/include/scan_helpers.sql
-- the switch on, whatever the suite's settings (CI runs it off once)
SET fastbtree.skip_scan = on;

-- shared blocks (hit + read) of q's plan, run
CREATE FUNCTION blocks(q text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	p jsonb;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q
		INTO p;
	RETURN (p -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint +
		(p -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
END
$$;

-- k: (a int4, b int4, t text, c int4): a takes 12 values with gaps, the
-- extremes of int4 and NULL; t 9 words and NULL; b 0 .. 1999 within each
-- a, NULL now and then; c 0 .. 3
CREATE VIEW k_src AS
SELECT (ARRAY[-2147483648, -5, 0, 1, 2, 3, 10, 11, 100, 2147483646,
			  2147483647, NULL])[1 + i % 12] AS a,
	CASE WHEN i % 97 = 0 THEN NULL ELSE (i / 12) % 2000 END AS b,
	CASE WHEN i % 89 = 0 THEN NULL
		 ELSE (ARRAY['ash', 'birch', 'cedar', 'elm', 'fir', 'oak', 'pine',
					 'spruce', 'yew'])[1 + i % 9] END AS t,
	(i / 7) % 4 AS c,
	i AS id
FROM generate_series(0, 47999) AS i;
CREATE TABLE k_bt (a int4, b int4, t text, c int4, id int4) WITH (autovacuum_enabled = off);
CREATE TABLE k_fbt (a int4, b int4, t text, c int4, id int4) WITH (autovacuum_enabled = off);
INSERT INTO k_bt SELECT * FROM k_src;
INSERT INTO k_fbt SELECT * FROM k_src;
CREATE INDEX k_bt_ab ON k_bt USING btree (a, b);
CREATE INDEX k_fbt_ab ON k_fbt USING fastbtree (a, b);
CREATE INDEX k_bt_tb ON k_bt USING btree (t COLLATE "C", b);
CREATE INDEX k_fbt_tb ON k_fbt USING fastbtree (t COLLATE "C", b);
CREATE INDEX k_bt_dn ON k_bt USING btree (a DESC NULLS LAST, c, b DESC);
CREATE INDEX k_fbt_dn ON k_fbt USING fastbtree (a DESC NULLS LAST, c, b DESC);
CREATE INDEX k_bt_nf ON k_bt USING btree (t NULLS FIRST, c, b);
CREATE INDEX k_fbt_nf ON k_fbt USING fastbtree (t NULLS FIRST, c, b);
VACUUM ANALYZE k_bt;
VACUUM ANALYZE k_fbt;

CREATE TABLE squals (n int, idx text, qual text);
INSERT INTO squals VALUES
	(1, 'ab', 'b = 777'),
	(2, 'ab', 'b = 0'),
	(3, 'ab', 'b = 1999'),
	(4, 'ab', 'b IS NULL'),
	(5, 'ab', 'b = ANY(''{5,1999,17,NULL}'')'),
	(6, 'ab', 'b = 777::int8'),
	(7, 'ab', 'a > 2 AND b = 777'),
	(8, 'ab', 'a BETWEEN -5 AND 10 AND b = 42'),
	(9, 'ab', 'a >= 2147483646 AND b = 42'),
	(10, 'ab', 'a <= -2147483648 AND b = 42'),
	(11, 'ab', 'a IS NOT NULL AND b = 1000'),
	(12, 'ab', 'a < 1 AND b = ANY(''{3,4,1500}'') AND b < 1000'),
	(13, 'ab', 'a = ANY(''{0,11,100,7}'') AND b = 1234'),
	(14, 'ab', 'b = 12345'),
	(15, 'tb', 't > ''birch'' AND b = 314'),
	(16, 'tb', 'b = 314'),
	(17, 'tb', 't < ''oak'' AND b = ANY(''{1,314,1998}'')'),
	(18, 'dn', 'c < 2 AND b = 1500'),
	(19, 'dn', 'b = 1500'),
	(20, 'dn', 'a > 0 AND c = ANY(''{1,3}'') AND b = 8'),
	(21, 'dn', 'c = 3 AND b IS NULL'),
	(22, 'nf', 'c = 1 AND b = 600'),
	(23, 'nf', 'c = 0 AND b = ANY(''{601,602}'') AND t IS NOT NULL'),
	(24, 'nf', 'b = 77'),
	(25, 'nf', 'c = 2 AND b < 1000'),
	(26, 'ab', 'b < 3'),
	(27, 'ab', 'b BETWEEN 1990 AND 2100'),
	(28, 'ab', 'a > 0 AND b >= 1998'),
	(29, 'ab', 'b IS NOT NULL AND b > 1997'),
	(30, 'dn', 'c = 1 AND b > 1990'),
	(31, 'dn', 'c < 2 AND b < 5'),
	(32, 'nf', 'c = 3 AND b IS NOT NULL AND b < 3');

CALL use_indexscan();
SELECT q.n, q.qual, c.*
FROM squals q,
	cmp('SELECT a, b, t, c, id FROM k_AM WHERE ' || q.qual ||
		CASE q.idx WHEN 'ab' THEN ' ORDER BY a, b'
				   WHEN 'tb' THEN ' ORDER BY t COLLATE "C", b'
				   WHEN 'dn' THEN ' ORDER BY a DESC NULLS LAST, c, b DESC'
				   ELSE ' ORDER BY t NULLS FIRST, c, b' END) c
ORDER BY q.n;
SELECT q.n, q.qual, c.*
FROM squals q,
	cmp('SELECT a, b, t, c, id FROM k_AM WHERE ' || q.qual ||
		CASE q.idx WHEN 'ab' THEN ' ORDER BY a DESC, b DESC'
				   WHEN 'tb' THEN ' ORDER BY t COLLATE "C" DESC, b DESC'
				   WHEN 'dn' THEN ' ORDER BY a NULLS FIRST, c DESC, b'
				   ELSE ' ORDER BY t DESC NULLS LAST, c DESC, b DESC' END) c
ORDER BY q.n;

CALL use_indexonlyscan();
SELECT q.n, q.qual, c.*
FROM squals q,
	cmp('SELECT a, b FROM k_AM WHERE ' || q.qual || ' ORDER BY a, b') c
WHERE q.idx = 'ab'
ORDER BY q.n;
SELECT q.n, q.qual, c.*
FROM squals q,
	cmp('SELECT a, b FROM k_AM WHERE ' || q.qual || ' ORDER BY a DESC, b DESC') c
WHERE q.idx = 'ab'
ORDER BY q.n;

-- (which index the bitmap scan takes is the planner's choice, and on 15,
-- where btree cannot skip, not always btree's: only the rows are compared)
CALL use_bitmapscan();
SELECT q.n, q.qual, c.nrows, c.same_order, c.setdiff
FROM squals q, cmp('SELECT a, b, t, c, id FROM k_AM WHERE ' || q.qual) c
ORDER BY q.n;

-- the skip scan reads a fraction of the pages of the range scan it
-- replaces (index-only: the heap is not read)
CALL use_indexonlyscan();
CREATE TEMP TABLE skip_blocks AS
SELECT q.n, blocks('SELECT a, b FROM k_fbt WHERE ' || q.qual || ' ORDER BY a, b') AS b
FROM squals q
WHERE q.n IN (1, 4, 11, 14, 26);
SET fastbtree.skip_scan = off;
SELECT q.n, q.qual,
	s.b * 2 < blocks('SELECT a, b FROM k_fbt WHERE ' || q.qual || ' ORDER BY a, b')
		AS skips
FROM squals q JOIN skip_blocks s USING (n)
ORDER BY q.n;
SET fastbtree.skip_scan = on;

-- cursors scrolling both ways over skip scans
CALL use_indexscan();
SELECT w.q, c.*
FROM (VALUES
		('SELECT a, b, id FROM k_AM WHERE b = ANY(''{3,1999}'') ORDER BY a, b'),
		('SELECT a, b, id FROM k_AM WHERE a > -10 AND b = 5 ORDER BY a DESC, b DESC'),
		('SELECT t, b, id FROM k_AM WHERE b = 314 ORDER BY t COLLATE "C", b'),
		('SELECT a, c, b, id FROM k_AM WHERE c = 2 AND b = 700 ORDER BY a DESC NULLS LAST, c, b DESC')) w(q),
	cursor_cmp(w.q, ARRAY['next', 'next', 'next', 'prior', 'prior', 'prior',
						  'next', 'relative 4', 'prior', 'last', 'prior',
						  'prior', 'first', 'next', 'absolute 7', 'next',
						  'backward 3', 'next', 'forwardall', 'prior',
						  'backwardall', 'next']) c;

-- a merge join restoring marks on a skip scan (outer keys repeat; no
-- Material node between, so the index scan itself marks and restores)
CREATE TABLE mo (x int4);
INSERT INTO mo VALUES (-5), (0), (0), (3), (3), (3), (11), (2147483647), (NULL);
CREATE INDEX mo_x ON mo (x);
VACUUM ANALYZE mo;
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_material = off;
SELECT c.*
FROM cmp('SELECT o.x, s.a, s.b, s.id FROM mo o
	JOIN k_AM s ON s.a = o.x WHERE s.b = 1700 ORDER BY o.x, s.a, s.b') c;
SELECT explain('SELECT o.x, s.a, s.b, s.id FROM mo o
	JOIN k_fbt s ON s.a = o.x WHERE s.b = 1700 ORDER BY o.x, s.a, s.b');
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_material;

-- a unique leading column: a value per tuple, the skip array moves on
-- every tuple and the scan goes along the leaves
CREATE TABLE u_bt (a int4, b int4) WITH (autovacuum_enabled = off);
CREATE TABLE u_fbt (a int4, b int4) WITH (autovacuum_enabled = off);
INSERT INTO u_bt SELECT i, i % 50 FROM generate_series(1, 30000) i;
INSERT INTO u_fbt SELECT * FROM u_bt;
CREATE INDEX u_bt_ab ON u_bt USING btree (a, b);
CREATE INDEX u_fbt_ab ON u_fbt USING fastbtree (a, b);
CREATE TABLE u_bt_t (a text, b int4) WITH (autovacuum_enabled = off);
CREATE TABLE u_fbt_t (a text, b int4) WITH (autovacuum_enabled = off);
INSERT INTO u_bt_t SELECT md5(i::text), i % 50 FROM generate_series(1, 30000) i;
INSERT INTO u_fbt_t SELECT * FROM u_bt_t;
CREATE INDEX u_bt_t_ab ON u_bt_t USING btree (a, b);
CREATE INDEX u_fbt_t_ab ON u_fbt_t USING fastbtree (a, b);
VACUUM ANALYZE u_bt, u_fbt, u_bt_t, u_fbt_t;
CALL use_indexonlyscan();
SELECT w.q, c.*
FROM (VALUES ('SELECT a, b FROM u_AM WHERE b = 7 ORDER BY a, b'),
			 ('SELECT a, b FROM u_AM WHERE b = 7 ORDER BY a DESC, b DESC'),
			 ('SELECT a, b FROM u_AM WHERE a > 20000 AND b = ANY(''{1,2,49}'') ORDER BY a, b'),
			 ('SELECT a, b FROM u_AM_t WHERE b = 7 ORDER BY a, b'),
			 ('SELECT a, b FROM u_AM_t WHERE b = 7 ORDER BY a DESC, b DESC')) w(q),
	cmp(w.q) c;

-- skipped columns of the types whose operator classes have skip support
-- on 18 (support function 6: the next value without a probe), each with
-- its extreme values (the step's overflow): date and timestamp with
-- infinities, uuid (by reference) from nil to max, oid to 4294967295,
-- "char" across 127/128 (compared unsigned), boolean; a DESC one
CREATE TABLE t_bt (d date, ts timestamp, u uuid, o oid, ch "char", f bool,
	b int4) WITH (autovacuum_enabled = off);
CREATE TABLE t_fbt (d date, ts timestamp, u uuid, o oid, ch "char", f bool,
	b int4) WITH (autovacuum_enabled = off);
INSERT INTO t_bt
SELECT CASE WHEN i % 41 = 0 THEN NULL WHEN i % 40 = 1 THEN '-infinity'::date
			WHEN i % 40 = 2 THEN 'infinity'::date
			ELSE date '2026-01-01' + (i % 37) END,
	CASE WHEN i % 40 = 3 THEN '-infinity'::timestamp
		 WHEN i % 40 = 4 THEN 'infinity'::timestamp
		 ELSE timestamp '2026-01-01' + (i % 29) * interval '1 microsecond' END,
	CASE WHEN i % 40 = 5 THEN '00000000-0000-0000-0000-000000000000'::uuid
		 WHEN i % 40 = 6 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid
		 ELSE ('00000000-0000-0000-0000-0000000000' ||
			   lpad(to_hex(i % 31), 2, '0'))::uuid END,
	CASE WHEN i % 40 = 7 THEN 4294967295::oid ELSE (i % 23)::oid END,
	chr(120 + i % 15)::"char",
	i % 3 = 0,
	(i / 40) % 300
FROM generate_series(0, 11999) AS i;
INSERT INTO t_fbt SELECT * FROM t_bt;
CREATE INDEX t_bt_db ON t_bt USING btree (d, b);
CREATE INDEX t_fbt_db ON t_fbt USING fastbtree (d, b);
CREATE INDEX t_bt_tsb ON t_bt USING btree (ts, b);
CREATE INDEX t_fbt_tsb ON t_fbt USING fastbtree (ts, b);
CREATE INDEX t_bt_ub ON t_bt USING btree (u DESC, b);
CREATE INDEX t_fbt_ub ON t_fbt USING fastbtree (u DESC, b);
CREATE INDEX t_bt_ob ON t_bt USING btree (o, b);
CREATE INDEX t_fbt_ob ON t_fbt USING fastbtree (o, b);
CREATE INDEX t_bt_cfb ON t_bt USING btree (ch, f, b);
CREATE INDEX t_fbt_cfb ON t_fbt USING fastbtree (ch, f, b);
VACUUM ANALYZE t_bt, t_fbt;
CALL use_indexonlyscan();
SELECT w.q, c.*
FROM (VALUES ('SELECT d, b FROM t_AM WHERE b = 7 ORDER BY d, b'),
			 ('SELECT d, b FROM t_AM WHERE b = 7 ORDER BY d DESC, b DESC'),
			 ('SELECT d, b FROM t_AM WHERE d > ''2026-01-30'' AND b < 2 ORDER BY d, b'),
			 ('SELECT ts, b FROM t_AM WHERE b = 299 ORDER BY ts, b'),
			 ('SELECT ts, b FROM t_AM WHERE b = 299 ORDER BY ts DESC, b DESC'),
			 ('SELECT u, b FROM t_AM WHERE b = 11 ORDER BY u DESC, b'),
			 ('SELECT u, b FROM t_AM WHERE b = 11 ORDER BY u, b DESC'),
			 ('SELECT o, b FROM t_AM WHERE b = ANY(''{0,150,299}'') ORDER BY o, b'),
			 ('SELECT o, b FROM t_AM WHERE b = 150 ORDER BY o DESC, b DESC'),
			 ('SELECT ch, f, b FROM t_AM WHERE b = 5 ORDER BY ch, f, b'),
			 ('SELECT ch, f, b FROM t_AM WHERE ch > ''~'' AND b = 5 ORDER BY ch DESC, f DESC, b DESC')) w(q),
	cmp(w.q) c;
-- with skip support (18) the next date is found by one descent per value
-- of d (20 values of 1,000 rows, several leaves each); probing for it (15)
-- takes two
CREATE TABLE dd_bt (d date, b int4) WITH (autovacuum_enabled = off);
CREATE TABLE dd_fbt (d date, b int4) WITH (autovacuum_enabled = off);
INSERT INTO dd_bt SELECT date '2026-01-01' + i / 1000, i % 1000
FROM generate_series(0, 19999) AS i;
INSERT INTO dd_fbt SELECT * FROM dd_bt;
CREATE INDEX dd_bt_db ON dd_bt USING btree (d, b);
CREATE INDEX dd_fbt_db ON dd_fbt USING fastbtree (d, b);
VACUUM ANALYZE dd_bt, dd_fbt;
SELECT * FROM cmp('SELECT d, b FROM dd_AM WHERE b = 500 ORDER BY d, b');
CREATE TEMP TABLE d0 AS SELECT descents FROM fastbtree_stats();
SELECT count(*) FROM dd_fbt WHERE b = 500;
SELECT (SELECT descents FROM fastbtree_stats()) - descents BETWEEN 20 AND
	CASE WHEN current_setting('server_version_num')::int >= 180000
	THEN 22 ELSE 41 END AS descents_as_expected
FROM d0;

-- the same with fastbtree.skip_scan off: one descent per = ANY element
-- combination, the range of the leading columns read whole
SET fastbtree.skip_scan = off;
CALL use_indexscan();
SELECT q.n, q.qual, c.*
FROM squals q,
	cmp('SELECT a, b, t, c, id FROM k_AM WHERE ' || q.qual ||
		CASE q.idx WHEN 'ab' THEN ' ORDER BY a, b'
				   WHEN 'tb' THEN ' ORDER BY t COLLATE "C", b'
				   WHEN 'dn' THEN ' ORDER BY a DESC NULLS LAST, c, b DESC'
				   ELSE ' ORDER BY t NULLS FIRST, c, b' END) c
ORDER BY q.n;
SET fastbtree.skip_scan = on;

-- with the planner's defaults, fastbtree's cost model (18's, also on 15)
-- takes the skip scan for an equality on the second column
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_sort;
CREATE TEMP TABLE skip_costs AS
SELECT q, scan_plan(q) ~ 'Index' AS uses_index,
	plan_value(q, 'Total Cost') AS cost
FROM unnest(ARRAY['SELECT a, b, id FROM k_fbt WHERE b = 777',
				  'SELECT a, b, id FROM k_fbt WHERE b = 777 AND a > 0']) q;
SET fastbtree.skip_scan = off;
SELECT q, uses_index, cost * 2 < plan_value(q, 'Total Cost') AS half_the_cost
FROM skip_costs ORDER BY q;
SET fastbtree.skip_scan = on;

DROP SCHEMA fbt_skip CASCADE;
