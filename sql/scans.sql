--
-- scans: fastbtree scans give btree's answers, in btree's order.
--
-- Every table exists twice, NAME_bt with a btree index and NAME_fbt with the
-- same index USING fastbtree, filled by the same deterministic INSERT so
-- that both heaps are identical, tuple for tuple (checked below).  cmp(q)
-- runs q with "_AM" replaced by "_bt" and by "_fbt" and reports:
--   scan        the index scans of the fastbtree plan, in plan order; the
--               btree plan is appended only if its shape differs
--   nrows       rows returned
--   same_order  both AMs returned the same rows in the same order (the
--               text of each row, in output order)
--   setdiff     rows in the symmetric difference of the two results
--               ((q_bt EXCEPT ALL q_fbt) UNION ALL (q_fbt EXCEPT ALL q_bt)),
--               run only when same_order is false: equal sequences have
--               an empty difference
--
-- Both indexes are built WITH (deduplicate_items = off).  With
-- deduplication, both return the heap TIDs of one posting list in
-- ascending order even in a backward scan, so the order of equal keys in
-- backward scans depends on where posting lists begin, which inserts need
-- not make the same in both.  Without it, both return equal keys in heap
-- TID order forward and in reverse heap TID order backward (the heap TID
-- is the last key).  That lets same_order compare whole rows, ties
-- included.  sql/dedup compares scans over posting lists.
--
-- This file: single-column int4 scans on a multi-level tree: every
-- strategy and scan kind, integer cross-type quals, redundant and
-- contradictory quals, ORDER BY ... LIMIT, min()/max(), scroll cursors,
-- 100000 duplicates of one key, deleted and dead entries before and after
-- VACUUM, inserts (page splits), deletes and updates under an open cursor,
-- merge joins with mark/restore, an int8 DESC key, parameterized
-- nested loops (NULL, cross-type and array parameters), BitmapOr, CLUSTER.
--
CREATE SCHEMA fbt_scans;
SET search_path = fbt_scans, public;
\i sql/include/scan_helpers.sql
-- t: 200000 rows; a is int4 with about two heap tuples per value, spread
-- over the heap, and a NULL every 1000 rows; 76246 is the one value in
-- 0..100002 that is missing.
--
CREATE VIEW t_src AS
SELECT CASE WHEN i % 1000 = 0 THEN NULL ELSE (i * 7919) % 100003 END AS a,
	i::int8 * 3 - 300000 AS b, i AS id, repeat('x', i % 20) AS pad
FROM generate_series(1, 200000) AS i;
CREATE TABLE t_bt (a int4, b int8, id int4, pad text) WITH (autovacuum_enabled = off);
CREATE TABLE t_fbt (a int4, b int8, id int4, pad text) WITH (autovacuum_enabled = off);
INSERT INTO t_bt SELECT * FROM t_src;
INSERT INTO t_fbt SELECT * FROM t_src;
CREATE INDEX t_bt_a ON t_bt USING btree (a) WITH (deduplicate_items = off);
CREATE INDEX t_fbt_a ON t_fbt USING fastbtree (a) WITH (deduplicate_items = off);
VACUUM ANALYZE t_bt;
VACUUM ANALYZE t_fbt;
-- the heaps are identical, so TIDs (the tiebreaker of equal keys) agree
SELECT count(*) AS ctid_mismatches
FROM t_bt b JOIN t_fbt f USING (id) WHERE b.ctid <> f.ctid;
-- a multi-level tree
SELECT level >= 2 AS three_levels_or_more FROM fastbtree_metap('t_fbt_a');

--
-- Every strategy, BETWEEN, IS [NOT] NULL, on present, missing and
-- extreme values, through each scan kind
--
CREATE TABLE quals (n int, qual text);
INSERT INTO quals VALUES
	(1, 'a < -1'), (2, 'a < 0'), (3, 'a <= 0'), (4, 'a < 1'), (5, 'a < 777'),
	(6, 'a <= 777'), (7, 'a = 777'), (8, 'a = 76246'), (9, 'a <= 76246 AND a > 75000'),
	(10, 'a < 76246 AND a > 76200'), (11, 'a >= 76246 AND a <= 76300'),
	(12, 'a >= 99500'), (13, 'a > 99500'), (14, 'a >= 100002'),
	(15, 'a > 100002'), (16, 'a = 100002'), (17, 'a = 0'), (18, 'a = -5'),
	(19, 'a BETWEEN 500 AND 1500'), (20, 'a BETWEEN 1500 AND 500'),
	(21, 'a BETWEEN 76246 AND 76246'), (22, 'a IS NULL'),
	(23, 'a IS NOT NULL AND a < 300');

CALL use_indexscan();
SELECT q.n, q.qual, c.*
FROM quals q, cmp('SELECT a, id FROM t_AM WHERE ' || q.qual || ' ORDER BY a') c
ORDER BY q.n;
SELECT q.n, q.qual, c.*
FROM quals q, cmp('SELECT a, id FROM t_AM WHERE ' || q.qual || ' ORDER BY a DESC') c
ORDER BY q.n;
-- whole index, both directions (NULLs last, then first)
SELECT * FROM cmp('SELECT a, id FROM t_AM ORDER BY a');
SELECT * FROM cmp('SELECT a, id FROM t_AM ORDER BY a DESC');
-- a few results in full
SELECT a, id FROM t_fbt WHERE a = 777 ORDER BY a;
SELECT a, id FROM t_fbt WHERE a BETWEEN 76244 AND 76248 ORDER BY a DESC;
SELECT a, id FROM t_fbt WHERE a < 2 ORDER BY a;
SELECT a, id FROM t_fbt WHERE a > 100000 ORDER BY a DESC;
SELECT a, id FROM t_fbt WHERE a IS NULL AND id > 197000 ORDER BY a;

CALL use_indexonlyscan();
SELECT q.n, q.qual, c.*
FROM quals q, cmp('SELECT a FROM t_AM WHERE ' || q.qual || ' ORDER BY a') c
ORDER BY q.n;
SELECT q.n, q.qual, c.*
FROM quals q, cmp('SELECT a FROM t_AM WHERE ' || q.qual || ' ORDER BY a DESC') c
ORDER BY q.n;
SELECT * FROM cmp('SELECT a FROM t_AM ORDER BY a DESC');
SELECT * FROM cmp('SELECT count(*), count(a), sum(a) FROM t_AM');
EXPLAIN (COSTS OFF) SELECT a FROM t_fbt WHERE a > 99500 ORDER BY a DESC;

CALL use_bitmapscan();
SELECT q.n, q.qual, c.*
FROM quals q, cmp('SELECT a, id FROM t_AM WHERE ' || q.qual) c
ORDER BY q.n;
SELECT * FROM cmp('SELECT a, id FROM t_AM WHERE a IS NOT NULL');
EXPLAIN (COSTS OFF) SELECT a, id FROM t_fbt WHERE a BETWEEN 500 AND 1500;

--
-- Integer cross-type quals: int2 and int8 constants, including int8
-- constants outside the int4 range
--
CALL use_indexscan();
SELECT q.qual, c.*
FROM (VALUES ('a < 777::int8'), ('a <= 777::int2'), ('a = 777::int8'),
			 ('a = 777::int2'), ('a >= 99500::int8'), ('a > 32000::int2 AND a < 32100::int2'),
			 ('a BETWEEN 500::int2 AND 1500::int8'), ('a < 5000000000::int8 AND a > 99990'),
			 ('a > -5000000000::int8 AND a < 3'), ('a = 5000000000::int8'),
			 ('a > 5000000000::int8'), ('a <= -5000000000::int8'),
			 ('a = (-32768)::int2'), ('a <= 4294967296::int8 AND a >= 4294967295::int8')) q(qual),
	cmp('SELECT a, id FROM t_AM WHERE ' || q.qual || ' ORDER BY a') c;
SELECT q.qual, c.*
FROM (VALUES ('a < 777::int8'), ('a >= 99500::int8'),
			 ('a BETWEEN 500::int2 AND 1500::int8'), ('a < 5000000000::int8 AND a > 99990'),
			 ('a > -5000000000::int8 AND a < 3')) q(qual),
	cmp('SELECT a, id FROM t_AM WHERE ' || q.qual || ' ORDER BY a DESC') c;
EXPLAIN (COSTS OFF)
SELECT a, id FROM t_fbt WHERE a > -5000000000::int8 AND a < 3::int2 ORDER BY a DESC;

--
-- Redundant and contradictory quals, also across types
--
SELECT q.qual, c.*
FROM (VALUES ('a > 5 AND a > 7 AND a < 20'), ('a > 7 AND a > 5 AND a < 20'),
			 ('a >= 7 AND a > 7::int8 AND a < 20'), ('a < 20 AND a < 15 AND a <= 15::int2 AND a > 0'),
			 ('a = 1 AND a = (SELECT 2)'), ('a = 2 AND a = 2::int8'), ('a = 2 AND a >= 2 AND a <= 2'),
			 ('a = 2 AND a > 2'), ('a = 2 AND a < 2::int8'),
			 ('a > 10 AND a < 5'), ('a >= 5 AND a <= 5'), ('a > 5 AND a < 5'),
			 ('a < 10 AND a > 5000000000::int8'), ('a IS NULL AND a = 1'),
			 ('a IS NULL AND a IS NOT NULL'), ('a IS NOT NULL AND a > 99990'),
			 ('a = 99999 AND a IS NOT NULL'), ('a BETWEEN 10 AND 20 AND a BETWEEN 15 AND 30')) q(qual),
	cmp('SELECT a, id FROM t_AM WHERE ' || q.qual || ' ORDER BY a') c;
SELECT q.qual, c.*
FROM (VALUES ('a > 5 AND a > 7 AND a < 20'), ('a < 20 AND a < 15 AND a <= 15::int2 AND a > 0'),
			 ('a = 1 AND a = (SELECT 2)'), ('a > 10 AND a < 5'),
			 ('a IS NOT NULL AND a > 99990'), ('a BETWEEN 10 AND 20 AND a BETWEEN 15 AND 30')) q(qual),
	cmp('SELECT a, id FROM t_AM WHERE ' || q.qual || ' ORDER BY a DESC') c;
SELECT a, id FROM t_fbt WHERE a > 5 AND a > 7 AND a < 12 AND a <= 11::int8 ORDER BY a;

--
-- ORDER BY ... LIMIT, both directions, and min()/max()
--
SELECT q.q, c.*
FROM (VALUES ('SELECT a, id FROM t_AM ORDER BY a LIMIT 5'),
			 ('SELECT a, id FROM t_AM ORDER BY a DESC LIMIT 5'),
			 ('SELECT a, id FROM t_AM ORDER BY a DESC NULLS FIRST LIMIT 5'),
			 ('SELECT a, id FROM t_AM ORDER BY a NULLS LAST LIMIT 5'),
			 ('SELECT a, id FROM t_AM WHERE a > 50000 ORDER BY a LIMIT 700'),
			 ('SELECT a, id FROM t_AM WHERE a < 50000 ORDER BY a DESC LIMIT 700'),
			 ('SELECT a, id FROM t_AM WHERE a > 50000 ORDER BY a DESC LIMIT 3'),
			 ('SELECT a, id FROM t_AM ORDER BY a DESC OFFSET 199795 LIMIT 10')) q(q),
	cmp(q.q) c;
SELECT a, id FROM t_fbt ORDER BY a LIMIT 5;
SELECT a, id FROM t_fbt WHERE a IS NOT NULL ORDER BY a DESC LIMIT 5;
SELECT a, id FROM t_fbt ORDER BY a DESC NULLS FIRST LIMIT 3;

CALL use_indexonlyscan();
RESET enable_sort;
SELECT explain('SELECT min(a), max(a) FROM t_fbt');
SELECT q.q, c.*
FROM (VALUES ('SELECT min(a), max(a) FROM t_AM'),
			 ('SELECT min(a) FROM t_AM WHERE a > 76245'),
			 ('SELECT max(a) FROM t_AM WHERE a < 76247'),
			 ('SELECT max(a) FROM t_AM WHERE a < 0'),
			 ('SELECT min(a), max(a) FROM t_AM WHERE a BETWEEN 76246 AND 76246')) q(q),
	cmp(q.q) c;
SELECT min(a), max(a) FROM t_fbt;
SELECT max(a) FROM t_fbt WHERE a < 76247;
CALL use_indexscan();

--
-- Scroll cursors: a small range printed in full, then long walks over the
-- whole index that change direction mid-page and across pages and fall
-- off both ends
--
BEGIN;
DECLARE c_bt SCROLL CURSOR FOR
	SELECT a, id FROM t_bt WHERE a BETWEEN 1000 AND 1010 ORDER BY a;
DECLARE c_fbt SCROLL CURSOR FOR
	SELECT a, id FROM t_fbt WHERE a BETWEEN 1000 AND 1010 ORDER BY a;
FETCH FORWARD 4 FROM c_fbt;
FETCH BACKWARD 2 FROM c_fbt;
FETCH ABSOLUTE 7 FROM c_fbt;
FETCH RELATIVE -3 FROM c_fbt;
MOVE FORWARD 100 FROM c_fbt;
FETCH BACKWARD 3 FROM c_fbt;
FETCH FORWARD ALL FROM c_fbt;
FETCH FORWARD 1 FROM c_fbt;
FETCH BACKWARD ALL FROM c_fbt;
FETCH BACKWARD 1 FROM c_fbt;
FETCH NEXT FROM c_fbt;
FETCH LAST FROM c_fbt;
FETCH ABSOLUTE -5 FROM c_fbt;
FETCH RELATIVE 0 FROM c_fbt;
MOVE ABSOLUTE 0 FROM c_fbt;
FETCH PRIOR FROM c_fbt;
FETCH FIRST FROM c_fbt;
-- the same on btree
FETCH FORWARD 4 FROM c_bt;
FETCH BACKWARD 2 FROM c_bt;
FETCH ABSOLUTE 7 FROM c_bt;
FETCH RELATIVE -3 FROM c_bt;
MOVE FORWARD 100 FROM c_bt;
FETCH BACKWARD 3 FROM c_bt;
FETCH FORWARD ALL FROM c_bt;
FETCH FORWARD 1 FROM c_bt;
FETCH BACKWARD ALL FROM c_bt;
FETCH BACKWARD 1 FROM c_bt;
FETCH NEXT FROM c_bt;
FETCH LAST FROM c_bt;
FETCH ABSOLUTE -5 FROM c_bt;
FETCH RELATIVE 0 FROM c_bt;
MOVE ABSOLUTE 0 FROM c_bt;
FETCH PRIOR FROM c_bt;
FETCH FIRST FROM c_bt;
COMMIT;

SELECT unnest(cursor_trace(
	'SELECT a, id FROM t_fbt WHERE a > 99990 ORDER BY a DESC',
	'{next,next,prior,prior,prior,next,next,next,"relative 5",last,next,next,prior,prior,"absolute 2","relative -1","relative -1",next,"forward 3","backward 1",next}'));

CREATE TABLE walks (name text, steps text[]);
INSERT INTO walks VALUES
	-- a leaf holds a few hundred int4 items: these cross many pages
	('zigzag', '{next,"forward 350",next,prior,prior,next,"forward 400",prior,"backward 800",prior,next,"relative 1000","relative -999","relative 2","relative -3"}'),
	('ends', '{prior,next,prior,prior,next,next,forwardall,next,prior,next,next,prior,backwardall,prior,next,prior,next,last,prior,first,next}'),
	('absolute', '{"absolute 30000","absolute 100","absolute -1","absolute -39000","absolute 1","absolute 50000",prior,"absolute 0",next,"absolute -50000",next,prior}'),
	('pageturns', '{"forward 366",next,prior,next,next,prior,prior,prior,next,"forward 733",prior,next,"backward 1100",prior,prior,next}');
-- 40000 rows, about 100 leaf pages
SELECT w.name, o.ord, c.*
FROM walks w,
	(VALUES ('ORDER BY a'), ('ORDER BY a DESC')) o(ord),
	cursor_cmp('SELECT a, id FROM t_AM WHERE a BETWEEN 20000 AND 39999 ' || o.ord, w.steps) c
ORDER BY w.name, o.ord;
-- the whole index, ends included
SELECT w.name, o.ord, c.*
FROM walks w,
	(VALUES ('ORDER BY a'), ('ORDER BY a DESC')) o(ord),
	cursor_cmp('SELECT a, id FROM t_AM ' || o.ord, w.steps) c
WHERE w.name IN ('zigzag', 'pageturns')
ORDER BY w.name, o.ord;
-- with quals, index-only, and one = ANY
SELECT q.q, c.*
FROM (VALUES ('SELECT a, id FROM t_AM WHERE a >= 40000 AND a < 41000 ORDER BY a'),
			 ('SELECT a, id FROM t_AM WHERE a >= 40000 AND a < 41000 ORDER BY a DESC'),
			 ('SELECT a, id FROM t_AM WHERE a IS NULL ORDER BY a'),
			 ('SELECT a, id FROM t_AM WHERE a = 777 ORDER BY a'),
			 ('SELECT a, id FROM t_AM WHERE a = ANY(''{5,40000,40001,99999,76246,3}'') ORDER BY a'),
			 ('SELECT a, id FROM t_AM WHERE a = ANY(''{5,40000,40001,99999,76246,3}'') ORDER BY a DESC')) q(q),
	walks w,
	cursor_cmp(q.q, w.steps) c
WHERE w.name IN ('zigzag', 'ends')
ORDER BY q.q, w.name;
CALL use_indexonlyscan();
SELECT w.name, c.*
FROM walks w,
	cursor_cmp('SELECT a FROM t_AM WHERE a BETWEEN 1000 AND 20000 ORDER BY a DESC', w.steps) c
ORDER BY w.name;
CALL use_indexscan();

--
-- 100000 copies of one key between a few neighbours: = and ranges,
-- forward and backward, cursors through the middle of the run
--
CREATE VIEW d_src AS
SELECT CASE WHEN i <= 100000 THEN 500
			ELSE 495 + (i % 11) END AS k,
	i AS id
FROM generate_series(1, 100110) AS i;
CREATE TABLE d_bt (k int4, id int4) WITH (autovacuum_enabled = off);
CREATE TABLE d_fbt (k int4, id int4) WITH (autovacuum_enabled = off);
-- this tree is built by inserts: splits among equal keys
CREATE INDEX d_bt_k ON d_bt USING btree (k) WITH (deduplicate_items = off);
CREATE INDEX d_fbt_k ON d_fbt USING fastbtree (k) WITH (deduplicate_items = off);
INSERT INTO d_bt SELECT * FROM d_src ORDER BY (id * 7) % 100110;
INSERT INTO d_fbt SELECT * FROM d_src ORDER BY (id * 7) % 100110;
VACUUM ANALYZE d_bt;
VACUUM ANALYZE d_fbt;
SELECT k, count(*) FROM d_fbt GROUP BY k ORDER BY k;
SELECT q.qual, o.ord, c.*
FROM (VALUES ('k = 500'), ('k < 500'), ('k <= 500'), ('k > 500'), ('k >= 500'),
			 ('k = 499'), ('k = 501'), ('k BETWEEN 499 AND 501'),
			 ('k > 499 AND k < 501'), ('k = 500 AND k > 499'),
			 ('k = ANY(''{499,500,501}'')')) q(qual),
	(VALUES ('ORDER BY k'), ('ORDER BY k DESC')) o(ord),
	cmp('SELECT k, id FROM d_AM WHERE ' || q.qual || ' ' || o.ord) c;
SELECT k, id FROM d_fbt WHERE k > 499 ORDER BY k LIMIT 3;
SELECT k, id FROM d_fbt WHERE k < 501 ORDER BY k DESC LIMIT 3;
SELECT k, id FROM d_fbt WHERE k >= 500 ORDER BY k DESC OFFSET 50 LIMIT 3;
SELECT k, id FROM d_fbt WHERE k <= 500 ORDER BY k OFFSET 50 LIMIT 3;
SELECT w.name, c.*
FROM walks w,
	cursor_cmp('SELECT k, id FROM d_AM WHERE k = 500 ORDER BY k DESC', w.steps) c
WHERE w.name <> 'absolute'
ORDER BY w.name;
SELECT * FROM cursor_cmp('SELECT k, id FROM d_AM WHERE k >= 500 ORDER BY k',
	'{"forward 50000",next,prior,"relative 30000",prior,"absolute 99999",next,next,next,prior,"absolute 100000",prior,"relative -49999"}');
CALL use_indexonlyscan();
SELECT * FROM cmp('SELECT k FROM d_AM WHERE k >= 500 ORDER BY k DESC');
SELECT * FROM cmp('SELECT count(*) FROM d_AM WHERE k = 500');
CALL use_bitmapscan();
SELECT * FROM cmp('SELECT k, id FROM d_AM WHERE k = 500');
SELECT * FROM cmp('SELECT count(*) FROM d_AM WHERE k <= 500');
-- the default btree (with deduplication) agrees too, except on the order
-- of equal keys in backward scans (see the file header): compare the keys
-- alone there
CALL use_indexscan();
DROP INDEX d_bt_k;
CREATE INDEX d_bt_k ON d_bt USING btree (k);
SELECT * FROM cmp('SELECT k, id FROM d_AM WHERE k BETWEEN 499 AND 501 ORDER BY k');
SELECT * FROM cmp('SELECT k FROM (SELECT k, id FROM d_AM WHERE k BETWEEN 499 AND 501 ORDER BY k DESC) s');
SELECT * FROM cmp('SELECT count(*), sum(id) FROM (SELECT k, id FROM d_AM WHERE k BETWEEN 499 AND 501 ORDER BY k DESC) s');

--
-- Dead and deleted entries: a range of keys deleted (whole leaf pages
-- emptied) and keys moved by non-HOT updates; scanned before VACUUM (the
-- heap decides visibility) and after it (the index entries are gone)
--
CREATE VIEW h_src AS
SELECT (i * 7) % 60000 AS k, i AS id FROM generate_series(1, 60000) AS i;
CREATE TABLE h_bt (k int4, id int4) WITH (autovacuum_enabled = off);
CREATE TABLE h_fbt (k int4, id int4) WITH (autovacuum_enabled = off);
INSERT INTO h_bt SELECT * FROM h_src;
INSERT INTO h_fbt SELECT * FROM h_src;
CREATE INDEX h_bt_k ON h_bt USING btree (k) WITH (deduplicate_items = off);
CREATE INDEX h_fbt_k ON h_fbt USING fastbtree (k) WITH (deduplicate_items = off);
DELETE FROM h_bt WHERE k BETWEEN 10000 AND 40000 OR k % 5 = 1;
DELETE FROM h_fbt WHERE k BETWEEN 10000 AND 40000 OR k % 5 = 1;
UPDATE h_bt SET k = k + 30000 WHERE k % 100 = 0 AND k < 10000;
UPDATE h_fbt SET k = k + 30000 WHERE k % 100 = 0 AND k < 10000;
SELECT count(*) AS ctid_mismatches
FROM h_bt b FULL JOIN h_fbt f USING (id) WHERE b.ctid IS DISTINCT FROM f.ctid;
CREATE TABLE hquals (n int, qual text);
INSERT INTO hquals VALUES
	(1, 'k BETWEEN 9990 AND 40010'), (2, 'k >= 9000 AND k < 41000'),
	(3, 'k BETWEEN 20000 AND 30000'), (4, 'k = 30100'), (5, 'k % 5 = 1'),
	(6, 'k > 39000 AND k < 39100'), (7, 'k = ANY(''{9999,10000,30000,30100,40001}'')');
SELECT q.n, q.qual, o.ord, c.*
FROM hquals q, (VALUES ('ORDER BY k'), ('ORDER BY k DESC')) o(ord),
	cmp('SELECT k, id FROM h_AM WHERE ' || q.qual || ' ' || o.ord) c
ORDER BY q.n, o.ord;
SELECT o.ord, c.*
FROM (VALUES ('ORDER BY k'), ('ORDER BY k DESC')) o(ord),
	cursor_cmp('SELECT k, id FROM h_AM WHERE k > 9900 AND k < 40100 ' || o.ord,
		'{next,"forward 10",next,"forward 40",prior,"backward 45",next,next,last,prior,"backward 20",next,first,next}') c;
CALL use_indexonlyscan();
SELECT * FROM cmp('SELECT k FROM h_AM WHERE k BETWEEN 9000 AND 41000 ORDER BY k DESC');
VACUUM h_bt;
VACUUM h_fbt;
SELECT * FROM cmp('SELECT k FROM h_AM WHERE k BETWEEN 9000 AND 41000 ORDER BY k DESC');
SELECT * FROM cmp('SELECT k FROM h_AM WHERE k BETWEEN 9000 AND 41000 ORDER BY k');
CALL use_indexscan();
SELECT q.n, q.qual, o.ord, c.*
FROM hquals q, (VALUES ('ORDER BY k'), ('ORDER BY k DESC')) o(ord),
	cmp('SELECT k, id FROM h_AM WHERE ' || q.qual || ' ' || o.ord) c
ORDER BY q.n, o.ord;
SELECT o.ord, c.*
FROM (VALUES ('ORDER BY k'), ('ORDER BY k DESC')) o(ord),
	cursor_cmp('SELECT k, id FROM h_AM WHERE k > 9900 AND k < 40100 ' || o.ord,
		'{next,"forward 10",next,"forward 40",prior,"backward 45",next,next,last,prior,"backward 20",next,first,next}') c;
SELECT k, id FROM h_fbt WHERE k BETWEEN 9990 AND 40010 ORDER BY k;

--
-- Changes under an open cursor: between fetches the scanning transaction
-- inserts keys into the leaf pages the cursor is on (splitting them),
-- deletes and updates rows ahead of and behind it; the cursor's snapshot
-- sees none of that, in either direction
--
CREATE VIEW sp_src AS
SELECT i * 2 AS k, i AS id FROM generate_series(0, 19999) AS i;
CREATE TABLE sp_bt (k int4, id int4) WITH (autovacuum_enabled = off);
CREATE TABLE sp_fbt (k int4, id int4) WITH (autovacuum_enabled = off);
INSERT INTO sp_bt SELECT * FROM sp_src;
INSERT INTO sp_fbt SELECT * FROM sp_src;
CREATE INDEX sp_bt_k ON sp_bt USING btree (k) WITH (deduplicate_items = off);
CREATE INDEX sp_fbt_k ON sp_fbt USING fastbtree (k) WITH (deduplicate_items = off);
VACUUM ANALYZE sp_bt;
VACUUM ANALYZE sp_fbt;
CREATE TABLE spwalks (name text, steps text[]);
INSERT INTO spwalks VALUES
	('insert', '{next,"forward 300",next,"exec INSERT INTO sp_AM SELECT 10001 + 2 * i, -i FROM generate_series(0, 1999) i",next,prior,"backward 200",prior,next,"forward 700",next,"exec INSERT INTO sp_AM SELECT 10501, -1 FROM generate_series(1, 600)",next,prior,"backward 500",backwardall,next,forwardall,prior,"backward 1500",next}'),
	('delete', '{next,"forward 500",next,"exec DELETE FROM sp_AM WHERE k BETWEEN 10000 AND 13000",prior,"backward 100",next,"forward 900",next,"exec UPDATE sp_AM SET k = 20000 - k WHERE k BETWEEN 9000 AND 14000",prior,next,backwardall,next,forwardall,prior}');
-- (the walks run one after the other, in this order, in one transaction,
-- each seeing the rows the previous ones wrote: the order is fixed before
-- the function runs, not left to the join's plan)
SELECT x.name, x.ord, c.*
FROM (SELECT w.name, w.steps, o.ord
	  FROM spwalks w, (VALUES ('ORDER BY k'), ('ORDER BY k DESC')) o(ord)
	  ORDER BY w.name DESC, o.ord OFFSET 0) x,
	LATERAL cursor_cmp('SELECT k, id FROM sp_AM WHERE k BETWEEN 10000 AND 14000 ' || x.ord, x.steps) c;
SELECT count(*) AS ctid_mismatches
FROM sp_bt b FULL JOIN sp_fbt f ON b.ctid = f.ctid AND b.k = f.k AND b.id = f.id
WHERE b.ctid IS NULL OR f.ctid IS NULL;
SELECT * FROM cmp('SELECT k, id FROM sp_AM WHERE k BETWEEN 9000 AND 15000 ORDER BY k');
SELECT * FROM cmp('SELECT k, id FROM sp_AM WHERE k BETWEEN 9000 AND 15000 ORDER BY k DESC');

--
-- Merge joins with a fastbtree index scan as the inner side: the outer side
-- repeats each key three times, the inner side has 500 heap tuples per key
-- (more than a leaf holds), so every outer duplicate restores the mark,
-- often onto a page the scan has already left
--
CREATE TABLE mj_outer (k int4, o int4) WITH (autovacuum_enabled = off);
INSERT INTO mj_outer SELECT i / 3, i FROM generate_series(-6, 41) i;
INSERT INTO mj_outer VALUES (7, 1000), (1000, 1001), (1001, 1002);
CREATE INDEX mj_outer_k ON mj_outer USING btree (k);
CREATE VIEW mj_src AS
SELECT i / 500 AS k, i AS v, CASE WHEN i % 3 = 0 THEN 'x' END AS f
FROM generate_series(0, 199999) AS i;
CREATE TABLE mj_bt (k int4, v int4, f text) WITH (autovacuum_enabled = off);
CREATE TABLE mj_fbt (k int4, v int4, f text) WITH (autovacuum_enabled = off);
INSERT INTO mj_bt SELECT * FROM mj_src ORDER BY (v * 31) % 200000;
INSERT INTO mj_fbt SELECT * FROM mj_src ORDER BY (v * 31) % 200000;
CREATE INDEX mj_bt_k ON mj_bt USING btree (k) WITH (deduplicate_items = off);
CREATE INDEX mj_fbt_k ON mj_fbt USING fastbtree (k) WITH (deduplicate_items = off);
VACUUM ANALYZE mj_outer;
VACUUM ANALYZE mj_bt;
VACUUM ANALYZE mj_fbt;
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_material = off;
SET enable_sort = off;
SET enable_indexonlyscan = on;
-- Merge Join, inner Index Scan on the fastbtree index, no Materialize
EXPLAIN (COSTS OFF)
SELECT o.k, o.o, i.v FROM mj_outer o JOIN mj_fbt i ON i.k = o.k;
-- the inner scan returns far more rows than mj_fbt holds: restores happened
SELECT explain('SELECT o.k, o.o, i.v FROM mj_outer o JOIN mj_fbt i ON i.k = o.k',
			   'ANALYZE, TIMING OFF, SUMMARY OFF');
EXPLAIN (COSTS OFF)
SELECT o.k, o.o, i.v FROM mj_outer o JOIN mj_fbt i ON i.k = o.k
ORDER BY o.k DESC;
SELECT q.q, c.*
FROM (VALUES ('SELECT o.k, o.o, i.v FROM mj_outer o JOIN mj_AM i ON i.k = o.k'),
			 ('SELECT o.k, o.o, i.v FROM mj_outer o JOIN mj_AM i ON i.k = o.k ORDER BY o.k DESC'),
			 ('SELECT o.k, o.o, i.k FROM mj_outer o JOIN mj_AM i ON i.k = o.k'),
			 ('SELECT o.k, o.o, i.k FROM mj_outer o JOIN mj_AM i ON i.k = o.k ORDER BY o.k DESC'),
			 ('SELECT o.k, o.o, i.v FROM mj_outer o JOIN mj_AM i ON i.k = o.k WHERE i.f IS NULL'),
			 ('SELECT o.k, o.o, i.v FROM mj_outer o JOIN mj_AM i ON i.k = o.k AND i.k > 6'),
			 ('SELECT o.k, o.o, i.v FROM mj_outer o JOIN mj_AM i ON i.k = o.k AND i.k < 6 ORDER BY o.k DESC'),
			 ('SELECT o.k, o.o, i.v FROM mj_outer o JOIN mj_AM i ON i.k = o.k AND i.k = ANY(''{-1,0,7,8,12,13,14,20,1000}'')'),
			 ('SELECT o.k, o.o, i.v FROM mj_outer o JOIN mj_AM i ON i.k = o.k AND i.k = ANY(''{-1,0,7,8,12,13,14,20,1000}'') ORDER BY o.k DESC'),
			 ('SELECT o.k, o.o, i.v FROM mj_outer o LEFT JOIN mj_AM i ON i.k = o.k'),
			 ('SELECT o.k, o.o, i.v FROM mj_outer o LEFT JOIN mj_AM i ON i.k = o.k AND i.v % 500 < 3')) q(q),
	cmp(q.q) c;
EXPLAIN (COSTS OFF)
SELECT o.k, o.o, i.v FROM mj_outer o JOIN mj_fbt i ON i.k = o.k
	AND i.k = ANY('{-1,0,7,8,12,13,14,20,1000}');
SELECT o.k, count(*), sum(i.v), min(i.v), max(i.v)
FROM mj_outer o JOIN mj_fbt i ON i.k = o.k
WHERE o.k BETWEEN 6 AND 8
GROUP BY o.k ORDER BY o.k;
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_material;
CALL use_indexscan();

--
-- An int8 key in DESC order (t.b is unique, -299997..300000), against
-- int8, int4 and int2 constants
--
CREATE INDEX t_bt_b ON t_bt USING btree (b DESC) WITH (deduplicate_items = off);
CREATE INDEX t_fbt_b ON t_fbt USING fastbtree (b DESC) WITH (deduplicate_items = off);
SELECT q.qual, o.ord, c.*
FROM (VALUES ('b < -299000'), ('b <= -299997::int4'), ('b = 3'), ('b = 3::int2'),
			 ('b = 4'), ('b >= 299000::int8'), ('b > 299997::int4'),
			 ('b BETWEEN -1000::int2 AND 1000::int4'), ('b > 2147483647::int4'),
			 ('b < (-2147483648)::int4'), ('b = ANY(''{3,6,-3,4,300000}''::int4[])'),
			 ('b > 32767::int2 AND b < 33000'), ('b IS NULL'), ('b > -300 AND b < -200 AND b > -250')) q(qual),
	(VALUES ('ORDER BY b DESC'), ('ORDER BY b')) o(ord),
	cmp('SELECT b, id FROM t_AM WHERE ' || q.qual || ' ' || o.ord) c;
SELECT b, id FROM t_fbt WHERE b BETWEEN -9::int2 AND 9::int4 ORDER BY b DESC;
SELECT b, id FROM t_fbt WHERE b > 299990 ORDER BY b;

--
-- Nested loops with parameterized fastbtree scans (one rescan per outer
-- row, with new key values each time): equality, range, redundant and
-- contradictory parameters, NULL parameters (the key can match nothing
-- for that outer row only), cross-type and array parameters, LIMIT per
-- outer row in both directions
--
CREATE TABLE nl_outer (k int4, k8 int8, arr int4[]) WITH (autovacuum_enabled = off);
INSERT INTO nl_outer VALUES (5, 6, '{5,3,5}'), (NULL, NULL, NULL),
	(777, 777, '{}'), (NULL, 10, '{NULL}'), (76246, 76246, '{777,NULL,1}'),
	(100002, NULL, '{100002}'), (-1, -5000000000, '{-1,0}'),
	(99999, 5000000000, '{}'), (1000, -299997, '{2,1,0}'), (0, 0, NULL),
	(50000, 3, '{50000,50001,49999,76246}');
ANALYZE nl_outer;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_memoize = off;
SELECT explain('SELECT o.k, t.a, t.id FROM mj_outer o JOIN t_fbt t ON t.a = o.k * 7');
SELECT explain('SELECT o.k, t.a, t.id FROM nl_outer o LEFT JOIN t_fbt t ON t.a = ANY(ARRAY[o.k, o.k + 1, NULL])');
SELECT q.q, c.*
FROM (VALUES ('SELECT o.k, t.a, t.id FROM mj_outer o JOIN t_AM t ON t.a = o.k * 7'),
			 ('SELECT o.k, t.a, t.id FROM mj_outer o JOIN t_AM t ON t.a > o.k * 1000 AND t.a <= o.k * 1000 + 4'),
			 ('SELECT o.k, t.a, t.id FROM mj_outer o JOIN t_AM t ON t.a = o.k * 7 AND t.a = ANY(''{0,7,14,70,700,7000}'')'),
			 ('SELECT o.k, x.a, x.id FROM mj_outer o, LATERAL (SELECT a, id FROM t_AM t WHERE t.a >= o.k * 2999 ORDER BY a LIMIT 3) x'),
			 ('SELECT o.k, x.a, x.id FROM mj_outer o, LATERAL (SELECT a, id FROM t_AM t WHERE t.a <= o.k * 2999 ORDER BY a DESC LIMIT 3) x'),
			 ('SELECT o.k, x.a FROM mj_outer o, LATERAL (SELECT a FROM t_AM t WHERE t.a < o.k ORDER BY a DESC LIMIT 2) x'),
			 ('SELECT o.k, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a = o.k'),
			 ('SELECT o.k8, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a = o.k8'),
			 ('SELECT o.k, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a > o.k AND t.a <= o.k + 3'),
			 ('SELECT o.k8, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a >= o.k8 AND t.a < 3'),
			 ('SELECT o.k, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a = ANY(ARRAY[o.k, o.k + 1, NULL])'),
			 ('SELECT o.k8, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a = ANY(ARRAY[o.k8, 7, o.k8])'),
			 ('SELECT o.k, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a < ANY(ARRAY[o.k, 2]) AND t.a > o.k - 3'),
			 ('SELECT o.arr, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a = ANY(o.arr)'),
			 ('SELECT o.arr, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a = ANY(o.arr) AND t.a >= o.k'),
			 ('SELECT o.arr, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a > ANY(o.arr) AND t.a < o.k + 3 AND t.a > o.k - 3'),
			 ('SELECT o.k, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a = o.k AND t.a = o.k8'),
			 ('SELECT o.k, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a >= o.k AND t.a <= o.k8'),
			 ('SELECT o.k, t.a, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.a IS NULL AND o.k IS NULL AND t.id > 199000'),
			 ('SELECT o.k, x.a, x.id FROM nl_outer o LEFT JOIN LATERAL (SELECT a, id FROM t_AM t WHERE t.a > o.k AND t.a > 50000 ORDER BY a LIMIT 2) x ON true'),
			 ('SELECT o.k, x.a, x.id FROM nl_outer o LEFT JOIN LATERAL (SELECT a, id FROM t_AM t WHERE t.a < o.k AND t.a < 1000 ORDER BY a DESC LIMIT 2) x ON true'),
			 ('SELECT o.k8, x.b, x.id FROM nl_outer o LEFT JOIN LATERAL (SELECT b, id FROM t_AM t WHERE t.b <= o.k8 ORDER BY b DESC LIMIT 2) x ON true'),
			 ('SELECT o.k8, x.b, x.id FROM nl_outer o LEFT JOIN LATERAL (SELECT b, id FROM t_AM t WHERE t.b > o.k8 ORDER BY b LIMIT 2) x ON true'),
			 ('SELECT o.k8, t.b, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.b = o.k8'),
			 ('SELECT o.k, t.b, t.id FROM nl_outer o LEFT JOIN t_AM t ON t.b < o.k AND t.b > o.k - 10')) q(q),
	cmp(q.q) c;
SELECT o.k, x.a, x.id
FROM (VALUES (0), (25415), (76246), (100002)) o(k),
	LATERAL (SELECT a, id FROM t_fbt t WHERE t.a >= o.k ORDER BY a LIMIT 3) x
ORDER BY o.k, x.a, x.id;
SELECT o.k, o.k8, t.a, t.id
FROM nl_outer o LEFT JOIN t_fbt t ON t.a = ANY(ARRAY[o.k, o.k8, NULL])
ORDER BY o.k, o.k8, t.a, t.id;
SELECT o.arr, t.a, t.id
FROM nl_outer o LEFT JOIN t_fbt t ON t.a = ANY(o.arr)
ORDER BY o.arr, t.a, t.id;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_memoize;

--
-- Bitmap scans combining fastbtree indexes (BitmapOr)
--
CALL use_bitmapscan();
EXPLAIN (COSTS OFF)
SELECT a, b, id FROM t_fbt WHERE (a < 100 OR b < -299000) AND id > 100;
SELECT q.qual, c.*
FROM (VALUES ('a < 100 OR b < -299000'), ('a IS NULL OR a < 10'), ('a < 50000 AND b < -270000'),
			 ('a = ANY(''{1,2,3,4}'') OR b = ANY(''{0,3,-3}'')'),
			 ('(a < 100 OR b < -299000) AND id > 100'),
			 ('a IS NULL OR b > 299990')) q(qual),
	cmp('SELECT a, b, id FROM t_AM WHERE ' || q.qual) c;
CALL use_indexscan();

--
-- CLUSTER: the heap order afterwards is the index order.  (With
-- enable_sort = off btree clusters by an index scan as fastbtree always
-- does, so equal keys keep their heap order in both.)
--
CREATE VIEW cl_src AS
SELECT (i * 7919) % 20011 AS k, i % 7 AS g, i AS id
FROM generate_series(1, 20000) AS i;
CREATE TABLE cl_bt (k int4, g int4, id int4) WITH (autovacuum_enabled = off);
CREATE TABLE cl_fbt (k int4, g int4, id int4) WITH (autovacuum_enabled = off);
INSERT INTO cl_bt SELECT * FROM cl_src;
INSERT INTO cl_fbt SELECT * FROM cl_src;
CREATE INDEX cl_bt_k ON cl_bt USING btree (k DESC);
CREATE INDEX cl_fbt_k ON cl_fbt USING fastbtree (k DESC);
CREATE INDEX cl_bt_g ON cl_bt USING btree (g) WITH (deduplicate_items = off);
CREATE INDEX cl_fbt_g ON cl_fbt USING fastbtree (g) WITH (deduplicate_items = off);
CLUSTER cl_bt USING cl_bt_k;
CLUSTER cl_fbt USING cl_fbt_k;
SELECT (SELECT array_agg(id ORDER BY ctid) FROM cl_bt) =
	(SELECT array_agg(id ORDER BY ctid) FROM cl_fbt) AS same_heap_order;
SELECT k, id FROM cl_fbt ORDER BY ctid LIMIT 3;
SELECT indexrelid::regclass, indisclustered FROM pg_index
WHERE indrelid = 'cl_fbt'::regclass ORDER BY indexrelid::regclass::text;
-- the rebuilt indexes scan as before
SELECT * FROM cmp('SELECT k, id FROM cl_AM WHERE k > 19000 ORDER BY k DESC');
SELECT * FROM cmp('SELECT g, id FROM cl_AM WHERE g = 3 ORDER BY g');
-- on a key with duplicates
CLUSTER cl_bt USING cl_bt_g;
CLUSTER cl_fbt USING cl_fbt_g;
SELECT (SELECT array_agg(id ORDER BY ctid) FROM cl_bt) =
	(SELECT array_agg(id ORDER BY ctid) FROM cl_fbt) AS same_heap_order;
SELECT g, k, id FROM cl_fbt ORDER BY ctid LIMIT 3;
-- CLUSTER with no USING reuses the marked index
CLUSTER cl_fbt;
SELECT (SELECT array_agg(g ORDER BY ctid) FROM cl_fbt) =
	(SELECT array_agg(g ORDER BY g, id) FROM cl_fbt) AS heap_in_g_order;

--
-- "Index Searches" of EXPLAIN ANALYZE (PostgreSQL 18): one per descent,
-- as btree counts them, for index, index-only and bitmap scans and the
-- rescans of a nested loop; before 18 the line does not exist
--
RESET ALL;
SET search_path = fbt_scans, public;
CALL use_indexscan();
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_memoize = off;
SET enable_material = off;
SELECT v.q,
	index_searches(replace(v.q, '_AM', '_bt')) IS NOT DISTINCT FROM
		index_searches(replace(v.q, '_AM', '_fbt')) AS same_as_btree,
	(index_searches(replace(v.q, '_AM', '_fbt')) IS NOT NULL) =
		(current_setting('server_version_num')::int >= 180000) AS shown_as_expected,
	coalesce(index_searches(replace(v.q, '_AM', '_fbt')), v.n) = v.n AS count_as_expected
FROM (VALUES ('SELECT * FROM t_AM WHERE a = 42', 1),
			 ('SELECT count(id) FROM t_AM WHERE a BETWEEN 100 AND 5000', 1),
			 ('SELECT a, id FROM t_AM WHERE a > 99000 ORDER BY a DESC', 1),
			 ('SELECT count(*) FROM t_AM WHERE a IS NULL', 1),
			 ('SELECT count(t.id) FROM generate_series(1, 50) g JOIN t_AM t ON t.a = g * 3', 50)) v(q, n);
CALL use_indexonlyscan();
SELECT v.q,
	index_searches(replace(v.q, '_AM', '_bt')) IS NOT DISTINCT FROM
		index_searches(replace(v.q, '_AM', '_fbt')) AS same_as_btree
FROM (VALUES ('SELECT count(a) FROM t_AM WHERE a < 1000'),
			 ('SELECT a FROM t_AM ORDER BY a DESC LIMIT 3')) v(q);
CALL use_bitmapscan();
SELECT v.q,
	index_searches(replace(v.q, '_AM', '_bt')) IS NOT DISTINCT FROM
		index_searches(replace(v.q, '_AM', '_fbt')) AS same_as_btree
FROM (VALUES ('SELECT count(id) FROM t_AM WHERE a < 1000 OR a > 99000')) v(q);

RESET ALL;
SET client_min_messages = warning;
\i sql/include/check_all.sql
DROP SCHEMA fbt_scans CASCADE;
