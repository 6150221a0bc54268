--
-- scans_multicol: fastbtree scans on multi-column, mixed-order, INCLUDE,
-- partial and expression indexes give btree's answers, in btree's order.
--
-- The setup, helpers and conventions are those of scans.sql: NAME_bt and
-- NAME_fbt are identical tables, with a btree index and the same index
-- USING fastbtree (both built WITH (deduplicate_items = off)); cmp(q)
-- runs q with "_AM" replaced by "_bt" and by "_fbt" and reports the index
-- scans of the fastbtree plan, the row count, whether both AMs returned
-- the same rows in the same order, and the size of the symmetric
-- difference.
--
-- Covered: a 3-column index with every subset of columns constrained
-- (including only the 2nd or 3rd), IS [NOT] NULL on every column,
-- = ANY(array) on every column (NULL elements, duplicates, empty and NULL
-- arrays, cross-type arrays, several arrays, arrays with inequalities),
-- < ANY, > ANY, ALL, row comparisons, every ASC/DESC x NULLS FIRST/LAST
-- combination scanned both ways, mixed-order 3-column indexes, INCLUDE
-- columns with index-only scans, partial and expression indexes, single
-- fixed-width keys (int4, int8, float8, date) with a nullable INCLUDE
-- column.
--
CREATE SCHEMA fbt_scans_mc;
SET search_path = fbt_scans_mc, public;
\i sql/include/scan_helpers.sql
-- m: (a int4, b text, c int8), 72000 rows, every (a, b, c) combination
-- at least once, NULLs in each column (all three NULL in one row)
--
CREATE VIEW m_src AS
SELECT CASE WHEN i % 101 = 0 THEN NULL ELSE i % 20 END AS a,
	CASE WHEN i % 103 = 0 THEN NULL
		 ELSE 'k' || lpad(((i / 20) % 30)::text, 2, '0') END AS b,
	CASE WHEN i % 107 = 0 THEN NULL ELSE ((i / 600) % 100)::int8 END AS c,
	i AS id
FROM generate_series(0, 71999) AS i;
CREATE TABLE m_bt (a int4, b text, c int8, id int4) WITH (autovacuum_enabled = off);
CREATE TABLE m_fbt (a int4, b text, c int8, id int4) WITH (autovacuum_enabled = off);
-- this tree is built by inserts
CREATE INDEX m_bt_abc ON m_bt USING btree (a, b, c) WITH (deduplicate_items = off);
CREATE INDEX m_fbt_abc ON m_fbt USING fastbtree (a, b, c) WITH (deduplicate_items = off);
INSERT INTO m_bt SELECT * FROM m_src;
INSERT INTO m_fbt SELECT * FROM m_src;
VACUUM ANALYZE m_bt;
VACUUM ANALYZE m_fbt;
SELECT level >= 1 AS multi_level FROM fastbtree_metap('m_fbt_abc');
SELECT count(*) FILTER (WHERE a IS NULL) AS a_null,
	count(*) FILTER (WHERE b IS NULL) AS b_null,
	count(*) FILTER (WHERE c IS NULL) AS c_null,
	count(*) FILTER (WHERE a IS NULL AND b IS NULL AND c IS NULL) AS all_null
FROM m_fbt;

--
-- Every subset of the columns constrained: =, <, <=, >, >=, BETWEEN,
-- IS NULL, IS NOT NULL
--
CREATE TABLE mquals (n int, cols text, qual text);
INSERT INTO mquals VALUES
	(1, '-', 'true'),
	(2, 'a', 'a = 7'), (3, 'a', 'a < 2'), (4, 'a', 'a >= 18'),
	(5, 'a', 'a IS NULL'), (6, 'a', 'a IS NOT NULL AND a > 18'),
	(7, 'a', 'a BETWEEN 9 AND 10'),
	(8, 'b', 'b = ''k05'''), (9, 'b', 'b > ''k28'''), (10, 'b', 'b IS NULL'),
	(11, 'b', 'b <= ''k00'''),
	(12, 'c', 'c = 5'), (13, 'c', 'c > 98'), (14, 'c', 'c IS NULL'),
	(15, 'c', 'c BETWEEN 50 AND 50'),
	(16, 'ab', 'a = 7 AND b = ''k05'''), (17, 'ab', 'a = 7 AND b > ''k27'''),
	(18, 'ab', 'a < 2 AND b = ''k01'''), (19, 'ab', 'a IS NULL AND b IS NULL'),
	(20, 'ab', 'a = 3 AND b IS NULL'), (21, 'ab', 'a IS NULL AND b > ''k28'''),
	(22, 'ab', 'a = 19 AND b IS NOT NULL AND b < ''k01'''),
	(23, 'ac', 'a = 7 AND c = 5'), (24, 'ac', 'a = 7 AND c < 2'),
	(25, 'ac', 'a > 17 AND c IS NULL'), (26, 'ac', 'a IS NULL AND c >= 99'),
	(27, 'bc', 'b = ''k05'' AND c = 5'), (28, 'bc', 'b IS NOT NULL AND c IS NULL'),
	(29, 'bc', 'b > ''k28'' AND c < 1'),
	(30, 'abc', 'a = 7 AND b = ''k05'' AND c = 5'),
	(31, 'abc', 'a = 7 AND b = ''k05'' AND c > 97'),
	(32, 'abc', 'a = 7 AND b = ''k05'' AND c IS NULL'),
	(33, 'abc', 'a = 7 AND b IS NULL AND c IS NULL'),
	(34, 'abc', 'a IS NULL AND b IS NULL AND c IS NULL'),
	(35, 'abc', 'a = 7 AND b >= ''k28'' AND c < 3'),
	(36, 'abc', 'a >= 18 AND b = ''k05'' AND c BETWEEN 10 AND 20'),
	(37, 'abc', 'a = 19 AND b = ''k29'' AND c IS NOT NULL AND c <= 1'),
	(38, 'abc', 'a = 0 AND b = ''k00'' AND c = 0'),
	(39, 'abc', 'a = 19 AND b = ''k29'' AND c = 99'),
	(40, 'abc', 'a = 7 AND b = ''k05'' AND c > 5 AND c < 5');

CALL use_indexscan();
SELECT q.n, q.cols, q.qual, c.*
FROM mquals q, cmp('SELECT a, b, c, id FROM m_AM WHERE ' || q.qual || ' ORDER BY a, b, c') c
ORDER BY q.n;
SELECT q.n, q.cols, q.qual, c.*
FROM mquals q, cmp('SELECT a, b, c, id FROM m_AM WHERE ' || q.qual || ' ORDER BY a DESC, b DESC, c DESC') c
ORDER BY q.n;
-- an equality on a leading column with a backward scan starts at the end
-- of the equal range
SELECT * FROM m_fbt WHERE a = 7 AND b = 'k05' ORDER BY a DESC, b DESC, c DESC LIMIT 4;
SELECT * FROM m_fbt WHERE a = 7 AND b = 'k05' ORDER BY a, b, c LIMIT 4;
SELECT * FROM m_fbt WHERE a IS NULL AND b IS NULL ORDER BY a, b, c;
SELECT * FROM m_fbt WHERE b > 'k28' AND c < 1 ORDER BY a DESC, b DESC, c DESC;

CALL use_indexonlyscan();
SELECT q.n, q.cols, q.qual, c.*
FROM mquals q, cmp('SELECT a, b, c FROM m_AM WHERE ' || q.qual || ' ORDER BY a, b, c') c
WHERE q.n % 2 = 0
ORDER BY q.n;
SELECT q.n, q.cols, q.qual, c.*
FROM mquals q, cmp('SELECT a, b, c FROM m_AM WHERE ' || q.qual || ' ORDER BY a DESC, b DESC, c DESC') c
WHERE q.n % 2 = 1
ORDER BY q.n;

CALL use_bitmapscan();
SELECT q.n, q.cols, q.qual, c.*
FROM mquals q, cmp('SELECT a, b, c, id FROM m_AM WHERE ' || q.qual) c
WHERE q.n > 1
ORDER BY q.n;

--
-- = ANY(array): on each column, with NULL elements, duplicates, empty and
-- NULL arrays, cross-type arrays, several arrays, with inequalities; and
-- < ANY, > ANY, ALL (ALL is not an index qual, but must agree)
--
CREATE TABLE aquals (n int, qual text);
INSERT INTO aquals VALUES
	(1, 'a = ANY(''{3,1,NULL,3,7}'')'),
	(2, 'a = ANY(''{3,1,NULL,3,7}'') AND c > 95'),
	(3, 'a = ANY(''{}'')'),
	(4, 'a = ANY(''{NULL}'')'),
	(5, 'a = ANY(NULL::int4[])'),
	(6, 'a = ANY(''{1,2,99,-5}''::int8[])'),
	(7, 'a = ANY(''{1,2}''::int2[]) AND b = ''k07'''),
	(8, 'b = ANY(''{k01,k00,zz,k01,NULL}'')'),
	(9, 'a = 5 AND b = ANY(''{k01,k00,zz,k01,NULL}'')'),
	(10, 'a > 17 AND b = ANY(''{k29,k00}'')'),
	(11, 'a = ANY(''{3,1,7}'') AND b = ANY(''{k01,k29}'') AND c = ANY(''{1,2,3,50,99,500}'')'),
	(12, 'a = ANY(''{3,1,7}'') AND b = ANY(''{k01,k29}'') AND c < 3'),
	(13, 'a = ANY(''{3,1,7}'') AND b > ''k27'' AND c = ANY(''{0,1,2,3}'')'),
	(14, 'c = ANY(''{}'')'),
	(15, 'c = ANY(''{5,6}'') AND a = ANY(''{1,2}'')'),
	(16, 'c = ANY(''{5,6,NULL}''::int4[]) AND b = ''k10'''),
	(17, 'a < ANY(''{3,1,NULL}'')'),
	(18, 'a <= ANY(''{3,1}''::int8[]) AND b = ''k05'''),
	(19, 'a > ANY(''{17,18,NULL}'')'),
	(20, 'a >= ALL(''{17,18}'')'),
	(21, 'a > ALL(''{17,NULL}'')'),
	(22, 'a <> ALL(''{1,2,3}'') AND a < 5'),
	(23, 'a = ANY(''{1,2}'') AND a = ANY(''{2,3}'')'),
	(24, 'a = ANY(''{1,2}'') AND a > 1'),
	(25, 'a IS NULL AND a = ANY(''{1}'')'),
	(26, 'b = ANY(''{k03,k03,k03}'') AND c IS NULL'),
	(27, 'a = ANY(''{19,0}'') AND b = ANY(''{k29,k00}'') AND c = ANY(''{99,0}'')'),
	(28, 'a = ANY(''{7}'') AND b = ANY(''{k05}'') AND c = ANY(''{5}'')'),
	(29, 'b < ANY(''{k01,k02}'') AND c > ALL(''{97,98}'')'),
	(30, 'a = ANY(ARRAY[1, 2, NULL]) AND c = ANY(ARRAY[(SELECT 50), 51])');

CALL use_indexscan();
SELECT q.n, q.qual, c.*
FROM aquals q, cmp('SELECT a, b, c, id FROM m_AM WHERE ' || q.qual || ' ORDER BY a, b, c') c
ORDER BY q.n;
SELECT q.n, q.qual, c.*
FROM aquals q, cmp('SELECT a, b, c, id FROM m_AM WHERE ' || q.qual || ' ORDER BY a DESC, b DESC, c DESC') c
ORDER BY q.n;
-- With ORDER BY, PostgreSQL 15's planner keeps only the = ANY on the first
-- column as an index qual (the others would break the order of one
-- primitive scan per element); since 17 it keeps all of them, as nbtree
-- returns index order for any.  The plan is btree's either way.  Without
-- ORDER BY, all of them are index quals and the scan runs one primitive
-- scan per combination.
SELECT plan_conds(replace(v.q, '_AM', '_fbt'), '_fbt') =
		plan_conds(replace(v.q, '_AM', '_bt'), '_bt') AS same_plan_as_btree,
	(plan_conds(replace(v.q, '_AM', '_fbt'), '_fbt') ~ 'Index Cond: [^\n]*b = ANY') =
		(current_setting('server_version_num')::int >= 170000) AS b_cond_as_expected
FROM (VALUES ('SELECT a, b, c, id FROM m_AM
WHERE a = ANY(''{3,1,7}'') AND b = ANY(''{k01,k29}'') AND c < 3
ORDER BY a DESC, b DESC, c DESC')) v(q);
EXPLAIN (COSTS OFF)
SELECT a, b, c, id FROM m_fbt
WHERE a = ANY('{3,1,7}') AND b = ANY('{k01,k29}') AND c < 3;
SELECT q.n, q.qual, c.*
FROM aquals q, cmp('SELECT a, b, c, id FROM m_AM WHERE ' || q.qual) c
ORDER BY q.n;
SELECT a, b, c, id FROM m_fbt
WHERE a = ANY('{3,1,7}') AND b = ANY('{k01,k29}') AND c < 3
ORDER BY a DESC, b DESC, c DESC;
SELECT a, b, c, id FROM m_fbt
WHERE a = ANY('{19,0}') AND b = ANY('{k29,k00}') AND c = ANY('{99,0}');
SELECT a, b, c, id FROM m_fbt WHERE a = ANY('{NULL}') OR a = ANY('{}');
CALL use_indexonlyscan();
SELECT q.n, q.qual, c.*
FROM aquals q, cmp('SELECT a, b, c FROM m_AM WHERE ' || q.qual || ' ORDER BY a DESC, b DESC, c DESC') c
WHERE q.n IN (1, 2, 8, 11, 12, 13, 17, 27)
ORDER BY q.n;
SELECT q.n, q.qual, c.*
FROM aquals q, cmp('SELECT a, b, c FROM m_AM WHERE ' || q.qual) c
WHERE q.n IN (1, 2, 8, 11, 12, 13, 17, 27)
ORDER BY q.n;
CALL use_bitmapscan();
SELECT q.n, q.qual, c.*
FROM aquals q, cmp('SELECT a, b, c, id FROM m_AM WHERE ' || q.qual) c
ORDER BY q.n;

-- cursors over multi-array scans (all arrays index quals), changing
-- direction within and across the primitive scans of each combination
CALL use_indexscan();
SELECT unnest(cursor_trace(
	'SELECT a, b, c FROM m_fbt WHERE a = ANY(''{3,1,7}'') AND b = ANY(''{k01,k29}'') AND c < 2',
	'{next,next,next,prior,next,next,next,prior,prior,prior,prior,next,last,prior,prior,next,next,next,prior}'));
SELECT unnest(cursor_trace(
	'SELECT a, b, c FROM m_bt WHERE a = ANY(''{3,1,7}'') AND b = ANY(''{k01,k29}'') AND c < 2',
	'{next,next,next,prior,next,next,next,prior,prior,prior,prior,next,last,prior,prior,next,next,next,prior}'));
SELECT q.q, c.*
FROM (VALUES ('SELECT a, b, c, id FROM m_AM WHERE a = ANY(''{3,1,7,12}'') AND b = ANY(''{k01,k29,k15}'')'),
			 ('SELECT a, b, c, id FROM m_AM WHERE a = ANY(''{3,1,7,12}'') AND b = ANY(''{k01,k29,k15}'') ORDER BY a DESC, b DESC, c DESC'),
			 ('SELECT a, b, c, id FROM m_AM WHERE a = ANY(''{3,1,7,12}'') AND c = ANY(''{0,50,99}'')'),
			 ('SELECT a, b, c, id FROM m_AM WHERE a = ANY(''{3,1,7,12}'') AND b IS NULL AND c = ANY(''{0,50,99,6,7,8,9,10}'')')) q(q),
	(VALUES ('{next,"forward 20",prior,"backward 5",next,"forward 100",prior,next,next,"relative -150",prior,forwardall,prior,"backward 30",next,backwardall,next,next}'::text[]),
			('{last,prior,"backward 200",next,"absolute 333","relative -200","relative 250",prior,"absolute -1",next,prior,first,prior,next}'::text[])) w(steps),
	cursor_cmp(q.q, w.steps) c;

--
-- Row comparisons: index quals on both access methods (on 15, fastbtree's
-- is the first column's range with the row as a filter: sql/rowcompare);
-- the answers are the same
--
CALL use_indexscan();
SELECT q.qual, o.ord, c.*
FROM (VALUES ('(a, b) > (18, ''k28'')'), ('(a, b, c) <= (0, ''k00'', 5)'),
			 ('(a, b) >= (7, ''k05'') AND (a, b) < (7, ''k07'')'),
			 ('(a, c) > (19, 98)')) q(qual),
	(VALUES ('ORDER BY a, b, c'), ('ORDER BY a DESC, b DESC, c DESC')) o(ord),
	cmp('SELECT a, b, c, id FROM m_AM WHERE ' || q.qual || ' ' || o.ord) c;
SELECT a, b, c, id FROM m_fbt WHERE (a, b, c) <= (0, 'k00', 5) ORDER BY a, b, c;

--
-- Every ASC/DESC x NULLS FIRST/LAST combination: four copies of one int4
-- column, each indexed in one of the four orders; each scanned forward
-- and backward
--
CREATE VIEW n_src AS
SELECT v AS x1, v AS x2, v AS x3, v AS x4, i AS id
FROM (SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 37) % 1000 END AS v
	  FROM generate_series(1, 20000) AS i) s;
CREATE TABLE n_bt (x1 int4, x2 int4, x3 int4, x4 int4, id int4) WITH (autovacuum_enabled = off);
CREATE TABLE n_fbt (x1 int4, x2 int4, x3 int4, x4 int4, id int4) WITH (autovacuum_enabled = off);
INSERT INTO n_bt SELECT * FROM n_src;
INSERT INTO n_fbt SELECT * FROM n_src;
CREATE INDEX n_bt_1 ON n_bt USING btree (x1 ASC NULLS LAST) WITH (deduplicate_items = off);
CREATE INDEX n_bt_2 ON n_bt USING btree (x2 ASC NULLS FIRST) WITH (deduplicate_items = off);
CREATE INDEX n_bt_3 ON n_bt USING btree (x3 DESC NULLS FIRST) WITH (deduplicate_items = off);
CREATE INDEX n_bt_4 ON n_bt USING btree (x4 DESC NULLS LAST) WITH (deduplicate_items = off);
CREATE INDEX n_fbt_1 ON n_fbt USING fastbtree (x1 ASC NULLS LAST) WITH (deduplicate_items = off);
CREATE INDEX n_fbt_2 ON n_fbt USING fastbtree (x2 ASC NULLS FIRST) WITH (deduplicate_items = off);
CREATE INDEX n_fbt_3 ON n_fbt USING fastbtree (x3 DESC NULLS FIRST) WITH (deduplicate_items = off);
CREATE INDEX n_fbt_4 ON n_fbt USING fastbtree (x4 DESC NULLS LAST) WITH (deduplicate_items = off);
VACUUM ANALYZE n_bt;
VACUUM ANALYZE n_fbt;
SELECT indexrelid::regclass::text AS index, indoption
FROM pg_index WHERE indrelid = 'n_fbt'::regclass ORDER BY 1;
-- x1..x4 and the ORDER BY clauses each index produces, forward and
-- backward
CREATE TABLE norders (col text, fwd text, bwd text);
INSERT INTO norders VALUES
	('x1', 'x1 ASC NULLS LAST', 'x1 DESC NULLS FIRST'),
	('x2', 'x2 ASC NULLS FIRST', 'x2 DESC NULLS LAST'),
	('x3', 'x3 DESC NULLS FIRST', 'x3 ASC NULLS LAST'),
	('x4', 'x4 DESC NULLS LAST', 'x4 ASC NULLS FIRST');
CREATE TABLE nquals (n int, qual text);
INSERT INTO nquals VALUES
	(1, 'true'), (2, 'X > 990'), (3, 'X < 10'), (4, 'X >= 990'), (5, 'X <= 10'),
	(6, 'X = 7'), (7, 'X IS NULL'), (8, 'X IS NOT NULL AND X < 5'),
	(9, 'X BETWEEN 100 AND 103'), (10, 'X = ANY(''{5,7,NULL,999,-1}'')'),
	(11, 'X IS NOT NULL'), (12, 'X < 0'), (13, 'X > 999'), (14, 'X > 10 AND X < 5'),
	(15, 'X < ANY(''{3,1}'')'), (16, 'X >= 998 AND X IS NOT NULL');
SELECT o.col, q.n, q.qual, c.*
FROM norders o, nquals q,
	cmp('SELECT ' || o.col || ', id FROM n_AM WHERE ' || replace(q.qual, 'X', o.col) ||
		' ORDER BY ' || o.fwd) c
ORDER BY o.col, q.n;
SELECT o.col, q.n, q.qual, c.*
FROM norders o, nquals q,
	cmp('SELECT ' || o.col || ', id FROM n_AM WHERE ' || replace(q.qual, 'X', o.col) ||
		' ORDER BY ' || o.bwd) c
ORDER BY o.col, q.n;
-- where the NULLs come out, from each end
SELECT x1, id FROM n_fbt ORDER BY x1 ASC NULLS LAST LIMIT 3;
SELECT x1, id FROM n_fbt ORDER BY x1 DESC NULLS FIRST LIMIT 3;
SELECT x2, id FROM n_fbt ORDER BY x2 ASC NULLS FIRST LIMIT 3;
SELECT x2, id FROM n_fbt ORDER BY x2 DESC NULLS LAST LIMIT 3;
SELECT x3, id FROM n_fbt ORDER BY x3 DESC NULLS FIRST LIMIT 3;
SELECT x3, id FROM n_fbt ORDER BY x3 ASC NULLS LAST LIMIT 3;
SELECT x4, id FROM n_fbt ORDER BY x4 DESC NULLS LAST LIMIT 3;
SELECT x4, id FROM n_fbt ORDER BY x4 ASC NULLS FIRST LIMIT 3;
SELECT x3, id FROM n_fbt WHERE x3 > 997 ORDER BY x3 DESC NULLS FIRST LIMIT 4;
SELECT x4, id FROM n_fbt WHERE x4 < 2 ORDER BY x4 ASC NULLS FIRST LIMIT 4;
SELECT x2, id FROM n_fbt WHERE x2 IS NULL ORDER BY x2 DESC NULLS LAST LIMIT 2;
-- min()/max() on each order
SELECT o.col, c.*
FROM norders o,
	cmp('SELECT min(' || o.col || '), max(' || o.col || ') FROM n_AM') c
ORDER BY o.col;
-- cursors across the NULL/non-NULL boundary
SELECT o.col, c.*
FROM norders o,
	cursor_cmp('SELECT ' || o.col || ', id FROM n_AM ORDER BY ' || o.fwd,
		'{next,"forward 1170",next,prior,"forward 3",prior,next,last,prior,"backward 1180",prior,next,first,prior,next}') c
ORDER BY o.col;
CALL use_indexonlyscan();
SELECT o.col, c.*
FROM norders o, cmp('SELECT ' || o.col || ' FROM n_AM WHERE ' || o.col || ' > 900 ORDER BY ' || o.bwd) c
ORDER BY o.col;
CALL use_bitmapscan();
SELECT o.col, q.n, q.qual, c.*
FROM norders o, nquals q,
	cmp('SELECT ' || o.col || ', id FROM n_AM WHERE ' || replace(q.qual, 'X', o.col)) c
WHERE q.n > 1
ORDER BY o.col, q.n;

--
-- Mixed-order 3-column indexes
--
CREATE TABLE mx_bt (a int4, b text, c int8, id int4) WITH (autovacuum_enabled = off);
CREATE TABLE mx_fbt (a int4, b text, c int8, id int4) WITH (autovacuum_enabled = off);
INSERT INTO mx_bt SELECT * FROM m_src WHERE id < 24000;
INSERT INTO mx_fbt SELECT * FROM m_src WHERE id < 24000;
CREATE INDEX mx_bt_1 ON mx_bt USING btree (a NULLS FIRST, b DESC NULLS LAST, c DESC) WITH (deduplicate_items = off);
CREATE INDEX mx_fbt_1 ON mx_fbt USING fastbtree (a NULLS FIRST, b DESC NULLS LAST, c DESC) WITH (deduplicate_items = off);
CREATE INDEX mx_bt_2 ON mx_bt USING btree (a DESC NULLS LAST, b, c NULLS FIRST) WITH (deduplicate_items = off);
CREATE INDEX mx_fbt_2 ON mx_fbt USING fastbtree (a DESC NULLS LAST, b, c NULLS FIRST) WITH (deduplicate_items = off);
VACUUM ANALYZE mx_bt;
VACUUM ANALYZE mx_fbt;
CALL use_indexscan();
-- the four orders these indexes produce, by forward and backward scans
CREATE TABLE mxorders (n int, ord text);
INSERT INTO mxorders VALUES
	(1, 'a NULLS FIRST, b DESC NULLS LAST, c DESC'),
	(2, 'a DESC NULLS LAST, b NULLS FIRST, c'),
	(3, 'a DESC NULLS LAST, b, c NULLS FIRST'),
	(4, 'a NULLS FIRST, b DESC NULLS FIRST, c DESC NULLS LAST');
SELECT o.n, o.ord, q.n, q.qual, c.*
FROM mxorders o, mquals q,
	cmp('SELECT a, b, c, id FROM mx_AM WHERE ' || q.qual || ' ORDER BY ' || o.ord) c
WHERE q.n IN (1, 2, 3, 5, 8, 10, 12, 14, 16, 17, 19, 21, 22, 25, 28, 31, 32, 33, 35, 37)
ORDER BY o.n, q.n;
SELECT o.n, o.ord, q.n, q.qual, c.*
FROM mxorders o, aquals q,
	cmp('SELECT a, b, c, id FROM mx_AM WHERE ' || q.qual || ' ORDER BY ' || o.ord) c
WHERE q.n IN (1, 2, 8, 10, 11, 12, 13, 17, 19, 27)
ORDER BY o.n, q.n;
SELECT a, b, c FROM mx_fbt WHERE a IS NULL OR a = 0 ORDER BY a NULLS FIRST, b DESC NULLS LAST, c DESC LIMIT 6;
SELECT a, b, c FROM mx_fbt WHERE a = 7 AND b > 'k27' ORDER BY a DESC NULLS LAST, b, c NULLS FIRST LIMIT 4;
SELECT a, b, c FROM mx_fbt WHERE a = 7 AND b > 'k27' ORDER BY a NULLS FIRST, b DESC NULLS FIRST, c DESC NULLS LAST LIMIT 4;

--
-- INCLUDE columns, partial and expression indexes
--
CREATE VIEW p_src AS
SELECT i % 50 AS a, (i / 50) % 40 AS c,
	(ARRAY['Key', 'KEY', 'key', 'kEy'])[1 + i % 4] || lpad((i % 37)::text, 2, '0') AS s,
	repeat(chr(97 + i % 26), i % 30) AS pad, i AS id
FROM generate_series(1, 30000) AS i;
CREATE TABLE p_bt (a int4, c int4, s text, pad text, id int4) WITH (autovacuum_enabled = off);
CREATE TABLE p_fbt (a int4, c int4, s text, pad text, id int4) WITH (autovacuum_enabled = off);
INSERT INTO p_bt SELECT * FROM p_src;
INSERT INTO p_fbt SELECT * FROM p_src;
CREATE INDEX p_bt_inc ON p_bt USING btree (a, c) INCLUDE (s, pad) WITH (deduplicate_items = off);
CREATE INDEX p_fbt_inc ON p_fbt USING fastbtree (a, c) INCLUDE (s, pad) WITH (deduplicate_items = off);
CREATE INDEX p_bt_lower ON p_bt USING btree (lower(s)) WITH (deduplicate_items = off);
CREATE INDEX p_fbt_lower ON p_fbt USING fastbtree (lower(s)) WITH (deduplicate_items = off);
CREATE INDEX p_bt_part ON p_bt USING btree (id) WHERE c < 10;
CREATE INDEX p_fbt_part ON p_fbt USING fastbtree (id) WHERE c < 10;
CREATE INDEX p_bt_pexpr ON p_bt USING btree ((a * 100 + c) DESC) WITH (deduplicate_items = off) WHERE s LIKE 'K%';
CREATE INDEX p_fbt_pexpr ON p_fbt USING fastbtree ((a * 100 + c) DESC) WITH (deduplicate_items = off) WHERE s LIKE 'K%';
VACUUM ANALYZE p_bt;
VACUUM ANALYZE p_fbt;
CALL use_indexonlyscan();
SELECT q.q, c.*
FROM (VALUES ('SELECT a, c, s, pad FROM p_AM WHERE a = 5 AND c < 3 ORDER BY a, c'),
			 ('SELECT a, c, s, pad FROM p_AM WHERE a = 5 AND c < 3 ORDER BY a DESC, c DESC'),
			 ('SELECT a, c, s FROM p_AM WHERE a > 45 ORDER BY a DESC, c DESC'),
			 ('SELECT a, c, s, pad FROM p_AM WHERE a = 5 AND s COLLATE "C" > ''kEy30'''),
			 ('SELECT a, c, s, pad FROM p_AM WHERE a = 7 AND pad LIKE ''hh%'''),
			 ('SELECT s, pad FROM p_AM WHERE a = ANY(''{1,49,17}'') AND c = ANY(''{0,39}'') ORDER BY a, c'),
			 ('SELECT a, c, s, pad FROM p_AM WHERE a IS NULL OR a < 1 ORDER BY a, c'),
			 ('SELECT count(*), count(DISTINCT s), max(pad) FROM p_AM WHERE a BETWEEN 10 AND 12')) q(q),
	cmp(q.q) c;
EXPLAIN (COSTS OFF) SELECT a, c, s, pad FROM p_fbt WHERE a = 5 AND s COLLATE "C" > 'kEy30';
SELECT a, c, s, pad FROM p_fbt WHERE a = 5 AND c < 3 ORDER BY a DESC, c DESC;
CALL use_indexscan();
SELECT q.q, c.*
FROM (VALUES ('SELECT lower(s), id FROM p_AM WHERE lower(s) = ''key05'' ORDER BY lower(s)'),
			 ('SELECT s, id FROM p_AM WHERE lower(s) > ''key34'' ORDER BY lower(s)'),
			 ('SELECT s, id FROM p_AM WHERE lower(s) < ''key01'' ORDER BY lower(s) DESC'),
			 ('SELECT s, id FROM p_AM WHERE lower(s) = ANY(''{KEY05,key05,key36,key99}'') ORDER BY lower(s)'),
			 ('SELECT s, id FROM p_AM ORDER BY lower(s) DESC LIMIT 10'),
			 ('SELECT id, c FROM p_AM WHERE c < 10 AND id < 300 ORDER BY id'),
			 ('SELECT id, c FROM p_AM WHERE c < 5 AND id > 29700 ORDER BY id DESC'),
			 ('SELECT id, c FROM p_AM WHERE c < 10 AND c > 7 AND id BETWEEN 1000 AND 1200 ORDER BY id'),
			 ('SELECT a, c, s FROM p_AM WHERE s LIKE ''K%'' AND a * 100 + c > 4830 ORDER BY a * 100 + c DESC'),
			 ('SELECT a, c, s FROM p_AM WHERE s LIKE ''K%'' AND a * 100 + c <= 3 ORDER BY a * 100 + c')) q(q),
	cmp(q.q) c;
EXPLAIN (COSTS OFF) SELECT id, c FROM p_fbt WHERE c < 5 AND id > 29700 ORDER BY id DESC;
SELECT s, id FROM p_fbt WHERE lower(s) = 'key05' ORDER BY lower(s), id LIMIT 4;
SELECT a, c, s FROM p_fbt WHERE s LIKE 'K%' AND a * 100 + c <= 3 ORDER BY a * 100 + c;

--
-- Single fixed-width keys with an INCLUDE column that is sometimes NULL
-- (such leaf tuples carry a null bitmap, which moves the key), and NULL
-- keys: int4, int8, float8, date
--
CREATE VIEW ki_src AS
SELECT CASE WHEN i % 37 = 0 THEN NULL ELSE (i * 13) % 30000 END AS k4,
	CASE WHEN i % 41 = 0 THEN NULL ELSE ((i * 17) % 30000)::int8 * 3000000000 END AS k8,
	CASE WHEN i % 43 = 0 THEN NULL ELSE ((i * 19) % 30000) / 8.0::float8 END AS kf,
	CASE WHEN i % 47 = 0 THEN NULL ELSE '2000-01-01'::date + (i * 23) % 30000 END AS kd,
	CASE WHEN i % 3 = 0 THEN NULL ELSE 'n' || i END AS note, i AS id
FROM generate_series(1, 30000) AS i;
CREATE TABLE ki_bt (k4 int4, k8 int8, kf float8, kd date, note text, id int4) WITH (autovacuum_enabled = off);
CREATE TABLE ki_fbt (k4 int4, k8 int8, kf float8, kd date, note text, id int4) WITH (autovacuum_enabled = off);
CREATE INDEX ki_bt_k4 ON ki_bt USING btree (k4) INCLUDE (note) WITH (deduplicate_items = off);
CREATE INDEX ki_fbt_k4 ON ki_fbt USING fastbtree (k4) INCLUDE (note) WITH (deduplicate_items = off);
CREATE INDEX ki_bt_k8 ON ki_bt USING btree (k8 DESC) INCLUDE (note, id) WITH (deduplicate_items = off);
CREATE INDEX ki_fbt_k8 ON ki_fbt USING fastbtree (k8 DESC) INCLUDE (note, id) WITH (deduplicate_items = off);
INSERT INTO ki_bt SELECT * FROM ki_src;
INSERT INTO ki_fbt SELECT * FROM ki_src;
CREATE INDEX ki_bt_kf ON ki_bt USING btree (kf NULLS FIRST) INCLUDE (note) WITH (deduplicate_items = off);
CREATE INDEX ki_fbt_kf ON ki_fbt USING fastbtree (kf NULLS FIRST) INCLUDE (note) WITH (deduplicate_items = off);
CREATE INDEX ki_bt_kd ON ki_bt USING btree (kd) INCLUDE (note) WITH (deduplicate_items = off);
CREATE INDEX ki_fbt_kd ON ki_fbt USING fastbtree (kd) INCLUDE (note) WITH (deduplicate_items = off);
VACUUM ANALYZE ki_bt;
VACUUM ANALYZE ki_fbt;
CREATE TABLE kiquals (n serial, col text, qual text);
INSERT INTO kiquals (col, qual) VALUES
	('k4', 'k4 = 2600'), ('k4', 'k4 < 40'), ('k4', 'k4 >= 29950'), ('k4', 'k4 BETWEEN 1000 AND 1090'),
	('k4', 'k4 IS NULL'), ('k4', 'k4 = ANY(''{3,6,9,12,29999,-1}''::int8[])'), ('k4', 'k4 > 29990::int2'),
	('k8', 'k8 = 7800000000000'), ('k8', 'k8 < 120000000000'), ('k8', 'k8 > 89800000000000'),
	('k8', 'k8 BETWEEN 3000000000000 AND 3300000000000'), ('k8', 'k8 IS NULL'), ('k8', 'k8 < 0::int4'),
	('k8', 'k8 = ANY(''{0,3000000000,6000000000,1}'')'),
	('kf', 'kf = 325'), ('kf', 'kf < 5'), ('kf', 'kf > 3745::float4'), ('kf', 'kf BETWEEN 100 AND 101'),
	('kf', 'kf IS NULL'), ('kf', 'kf IS NOT NULL AND kf < 1'), ('kf', 'kf = ANY(''{0.125,0.25,3749.875}''::float4[])'),
	('kd', 'kd = ''2010-01-01'''), ('kd', 'kd < ''2000-02-01'''), ('kd', 'kd > ''2082-01-01''::timestamp'),
	('kd', 'kd BETWEEN ''2050-01-01''::timestamptz AND ''2050-03-01'''), ('kd', 'kd IS NULL');
CALL use_indexscan();
SELECT q.qual, d.dir, c.*
FROM kiquals q, (VALUES (''), (' DESC')) d(dir),
	cmp('SELECT ' || q.col || ', note, id FROM ki_AM WHERE ' || q.qual || ' ORDER BY ' || q.col || d.dir) c
ORDER BY q.n, d.dir;
CALL use_indexonlyscan();
SELECT q.qual, d.dir, c.*
FROM kiquals q, (VALUES (''), (' DESC')) d(dir),
	cmp('SELECT ' || q.col || ', note FROM ki_AM WHERE ' || q.qual || ' ORDER BY ' || q.col || d.dir) c
WHERE q.col IN ('k4', 'kf')
ORDER BY q.n, d.dir;
SELECT k4, note FROM ki_fbt WHERE k4 BETWEEN 1000 AND 1012 ORDER BY k4 DESC;
SELECT k8, note, id FROM ki_fbt WHERE k8 < 120000000000 ORDER BY k8;

RESET ALL;
SET client_min_messages = warning;
\i sql/include/check_all.sql
DROP SCHEMA fbt_scans_mc CASCADE;
