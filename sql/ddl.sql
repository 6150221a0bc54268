--
-- ddl: errors and DDL behaviour of fastbtree compared with USING btree:
-- oversized keys, reloptions, operator classes, index properties, and
-- planner cost equality.
--
-- both_ams(template) runs the template once with every "@" replaced by
-- "btree" and once by "fastbtree" and prints "OK, <n> rows" or
-- "<SQLSTATE>: <message> DETAIL: <detail>" per access method; "same" says
-- whether fastbtree's result equals btree's with the access method's name
-- masked.  both_rows(query) runs a query template on both and compares its
-- rows, with the plan's scan nodes shown.
--
CREATE SCHEMA fbt_ddl;
SET search_path = fbt_ddl, public;
-- PostgreSQL 15's NOTICE for unique fastbtree indexes (ON CONFLICT cannot
-- use them) is tested in unique_core
SET client_min_messages = warning;
\i sql/include/both_ams.sql

-- len characters of incompressible text (hex digits of an md5 chain)
CREATE FUNCTION chain(seed int, len int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT left(string_agg(md5(seed || ':' || i), '' ORDER BY i), len)
	FROM generate_series(1, (len + 31) / 32) i
$$;

--
-- 4. Keys too large for a page.  btree's limit is 2704 bytes per index row
-- (a text of 2692 characters: 8 bytes of tuple header, 4 of varlena
-- header).  The access method's name, version and maximum in the message
-- legitimately differ; everything else must not.
--
CREATE TABLE rs_btree (id int, t text) WITH (autovacuum_enabled = off);
CREATE TABLE rs_fastbtree (LIKE rs_btree) WITH (autovacuum_enabled = off);
SELECT * FROM both_ams('CREATE INDEX rs_@_t ON rs_@ USING @ (t)');
SELECT * FROM both_ams('INSERT INTO rs_@ VALUES (1, chain(1, 3008))');
SELECT * FROM both_ams('INSERT INTO rs_@ VALUES (2, chain(2, 2693))');
SELECT * FROM both_ams('INSERT INTO rs_@ VALUES (4, chain(4, 2600))');
SELECT * FROM both_ams('UPDATE rs_@ SET t = t || chain(5, 500) WHERE id = 4');
-- at CREATE INDEX time, over existing rows
SELECT * FROM both_ams('DROP INDEX rs_@_t');
SELECT * FROM both_ams('INSERT INTO rs_@ SELECT i, chain(i, 100) FROM generate_series(10, 200) i');
SELECT * FROM both_ams('INSERT INTO rs_@ VALUES (300, chain(300, 3008))');
SELECT * FROM both_ams('CREATE INDEX rs_@_t ON rs_@ USING @ (t)');
SELECT * FROM both_ams('CREATE UNIQUE INDEX rs_@_t ON rs_@ USING @ (t)');
SELECT * FROM both_ams('CREATE INDEX rs_@_t ON rs_@ USING @ (id) INCLUDE (t)');
SELECT * FROM both_ams('CREATE INDEX rs_@_t ON rs_@ USING @ (t) WHERE id <> 300');
SELECT * FROM both_ams('DROP INDEX rs_@_t');
SELECT * FROM both_ams('DELETE FROM rs_@ WHERE id = 300');
SELECT * FROM both_ams('CREATE INDEX rs_@_t ON rs_@ USING @ (t)');
SELECT * FROM both_ams('INSERT INTO rs_@ VALUES (301, chain(301, 3008))');
-- The largest row btree accepts (2704 bytes) must be accepted as well, on
-- insert and at CREATE INDEX time.
CREATE TABLE rb_btree (id int, t text) WITH (autovacuum_enabled = off);
CREATE TABLE rb_fastbtree (LIKE rb_btree) WITH (autovacuum_enabled = off);
SELECT * FROM both_ams('CREATE INDEX rb_@_t ON rb_@ USING @ (t)');
SELECT * FROM both_ams('INSERT INTO rb_@ VALUES (1, chain(1, 2684))');
SELECT * FROM both_ams('INSERT INTO rb_@ VALUES (2, chain(2, 2688))');
SELECT * FROM both_ams('INSERT INTO rb_@ VALUES (3, chain(3, 2692))');
SELECT * FROM both_ams('INSERT INTO rb_@ SELECT i, chain(i, 2692) FROM generate_series(4, 20) i');
SELECT * FROM both_ams('DROP INDEX rb_@_t');
SELECT * FROM both_ams('INSERT INTO rb_@ SELECT i, chain(i, 2692) FROM generate_series(21, 40) i');
SELECT * FROM both_ams('CREATE INDEX rb_@_t ON rb_@ USING @ (t)');
SELECT * FROM both_rows('SELECT count(*), md5(string_agg(id::text, '','')) FROM (SELECT id FROM rb_@ WHERE t > '''' ORDER BY t) s');

-- Many keys near the limit: every split moves a few huge items, pivots are
-- as large as the keys, and duplicates need heap TIDs in their pivots.
CREATE TABLE mx_btree (id int, t text) WITH (autovacuum_enabled = off);
CREATE TABLE mx_fastbtree (LIKE mx_btree) WITH (autovacuum_enabled = off);
SELECT * FROM both_ams('CREATE INDEX mx_@_t ON mx_@ USING @ (t)');
SELECT * FROM both_ams('INSERT INTO mx_@ SELECT s, chain(s % 37, 2684) FROM generate_series(1, 150) s');
SELECT * FROM both_ams('INSERT INTO mx_@ SELECT s, chain(1, 2684) FROM generate_series(151, 250) s');
SELECT * FROM both_ams('INSERT INTO mx_@ SELECT s, chain(-s, 2684) FROM generate_series(251, 300) s');
SELECT * FROM both_rows('SELECT count(*), md5(string_agg(id::text, '','')) FROM (SELECT id FROM mx_@ WHERE t > '''' ORDER BY t) s');
SELECT * FROM both_rows('SELECT count(*), md5(string_agg(id::text, '','')) FROM (SELECT id FROM mx_@ WHERE t > '''' ORDER BY t DESC) s');
SELECT * FROM both_rows('SELECT count(*) FROM mx_@ WHERE t = chain(1, 2684)');
SELECT level >= 2 AS deep FROM fastbtree_metap('mx_fastbtree_t');
SELECT * FROM both_ams('REINDEX INDEX mx_@_t');
SELECT * FROM both_rows('SELECT count(*), md5(string_agg(id::text, '','')) FROM (SELECT id FROM mx_@ WHERE t > '''' ORDER BY t) s');

--
-- Reloptions
--
CREATE TABLE ro_btree (k int, t text);
CREATE TABLE ro_fastbtree (LIKE ro_btree);
SELECT * FROM both_ams('CREATE INDEX ro_@_k ON ro_@ USING @ (k) WITH (fillfactor = 5)');
SELECT * FROM both_ams('CREATE INDEX ro_@_k ON ro_@ USING @ (k) WITH (fillfactor = 101)');
SELECT * FROM both_ams('CREATE INDEX ro_@_k ON ro_@ USING @ (k) WITH (fillfactor = ''abc'')');
SELECT * FROM both_ams('CREATE INDEX ro_@_k ON ro_@ USING @ (k) WITH (foo = 1)');
SELECT * FROM both_ams('CREATE INDEX ro_@_k ON ro_@ USING @ (k) WITH (fillfactor = 10, fillfactor = 20)');
-- btree's other reloptions are accepted as btree accepts them, with its
-- bounds and errors (fastbtree does not deduplicate yet, and btree ignores
-- the scale factor since 14: both have no effect); pg_class shows them
SELECT * FROM both_ams('CREATE INDEX ro_@_dd ON ro_@ USING @ (k) WITH (deduplicate_items = off)');
SELECT * FROM both_ams('CREATE INDEX ro_@_dd2 ON ro_@ USING @ (k) WITH (deduplicate_items = maybe)');
SELECT * FROM both_ams('ALTER INDEX ro_@_dd SET (deduplicate_items = on, vacuum_cleanup_index_scale_factor = 0.5)');
SELECT * FROM both_ams('ALTER INDEX ro_@_dd SET (vacuum_cleanup_index_scale_factor = -1)');
SELECT * FROM both_ams('ALTER INDEX ro_@_dd SET (vacuum_cleanup_index_scale_factor = 1e11)');
SELECT * FROM both_ams('CREATE INDEX ro_@_vc ON ro_@ USING @ (k) WITH (vacuum_cleanup_index_scale_factor = 0)');
SELECT replace(relname, 'fastbtree', 'AM') AS index, reloptions
FROM pg_class WHERE relname IN ('ro_btree_dd', 'ro_fastbtree_dd', 'ro_btree_vc', 'ro_fastbtree_vc')
ORDER BY relname;
SELECT * FROM both_ams('ALTER INDEX ro_@_dd RESET (deduplicate_items, vacuum_cleanup_index_scale_factor)');
SELECT * FROM both_ams('DROP INDEX IF EXISTS ro_@_dd, ro_@_vc');
SELECT * FROM both_ams('CREATE INDEX ro_@_k ON ro_@ USING @ (k) WITH (fillfactor = 10)');
SELECT * FROM both_ams('ALTER INDEX ro_@_k SET (fillfactor = 5)');
SELECT * FROM both_ams('ALTER INDEX ro_@_k SET (fillfactor = 100)');
SELECT * FROM both_ams('ALTER INDEX ro_@_k SET (foo = 1)');
SELECT * FROM both_ams('ALTER INDEX ro_@_k RESET (foo)');
SELECT * FROM both_ams('ALTER INDEX ro_@_k SET (autovacuum_enabled = off)');
SELECT c.relname, c.reloptions FROM pg_class c
WHERE c.relname IN ('ro_btree_k', 'ro_fastbtree_k') ORDER BY 1;
SELECT * FROM both_ams('ALTER INDEX ro_@_k RESET (fillfactor)');
SELECT c.relname, c.reloptions FROM pg_class c
WHERE c.relname IN ('ro_btree_k', 'ro_fastbtree_k') ORDER BY 1;
-- reloptions of a table are not an index's
SELECT * FROM both_ams('CREATE INDEX ro_@_t ON ro_@ USING @ (t) WITH (autovacuum_enabled = off)');
SELECT * FROM both_ams('CREATE INDEX ro_@_t ON ro_@ USING @ (t) WITH (fillfactor = 70)');
SELECT pg_get_indexdef('ro_btree_t'::regclass) AS btree,
	pg_get_indexdef('ro_fastbtree_t'::regclass) AS fastbtree;

--
-- Operator classes
--
CREATE TABLE oc_btree (a int, b bigint, t text, p point, r int4range);
CREATE TABLE oc_fastbtree (LIKE oc_btree);
SELECT * FROM both_ams('CREATE INDEX oc_@_1 ON oc_@ USING @ (a int4_ops)');
SELECT * FROM both_ams('CREATE INDEX oc_@_2 ON oc_@ USING @ (a int8_ops)');
SELECT * FROM both_ams('CREATE INDEX oc_@_3 ON oc_@ USING @ (a text_ops)');
SELECT * FROM both_ams('CREATE INDEX oc_@_4 ON oc_@ USING @ (a gist_int4_ops)');
SELECT * FROM both_ams('CREATE INDEX oc_@_5 ON oc_@ USING @ (a int4_minmax_ops)');
SELECT * FROM both_ams('CREATE INDEX oc_@_6 ON oc_@ USING @ (a hash_int4_ops)');
SELECT * FROM both_ams('CREATE INDEX oc_@_7 ON oc_@ USING @ (a no_such_ops)');
-- PostgreSQL 17 and later build an index with search_path restricted to
-- pg_catalog, so the message names an operator class outside pg_catalog
-- (fastbtree's are in the extension's schema) with its schema: masked here.
WITH r AS (
	SELECT am, replace(result, 'class public.', 'class ') AS result
	FROM both_ams('CREATE INDEX oc_@_8 ON oc_@ USING @ (a int4_ops (foo = 1))'))
SELECT am, result,
	CASE WHEN am = 'fastbtree'
		 THEN result = (SELECT result FROM r WHERE am = 'btree') END AS same
FROM r;
SELECT * FROM both_ams('CREATE INDEX oc_@_9 ON oc_@ USING @ (t text_pattern_ops)');
SELECT * FROM both_ams('CREATE INDEX oc_@_10 ON oc_@ USING @ (t varchar_ops)');
SELECT * FROM both_ams('CREATE INDEX oc_@_11 ON oc_@ USING @ (t COLLATE "C")');
SELECT * FROM both_ams('CREATE INDEX oc_@_13 ON oc_@ USING @ (a COLLATE "C")');
SELECT * FROM both_ams('CREATE INDEX oc_@_14 ON oc_@ USING @ (b int4_ops)');
-- no default operator class
SELECT * FROM both_ams('CREATE INDEX oc_@_15 ON oc_@ USING @ (p)');
SELECT * FROM both_ams('CREATE INDEX oc_@_16 ON oc_@ USING @ (a, p)');
SELECT * FROM both_ams('CREATE INDEX oc_@_17 ON oc_@ USING @ (p point_ops)');
-- ... but INCLUDE columns need none
SELECT * FROM both_ams('CREATE INDEX oc_@_18 ON oc_@ USING @ (a) INCLUDE (p)');
SELECT * FROM both_ams('CREATE INDEX oc_@_19 ON oc_@ USING @ (a) INCLUDE (p int4_ops)');
SELECT * FROM both_ams('CREATE INDEX oc_@_20 ON oc_@ USING @ (a) INCLUDE (a)');
SELECT * FROM both_ams('CREATE INDEX oc_@_21 ON oc_@ USING @ (a) INCLUDE (a + 1)');
SELECT * FROM both_ams('CREATE INDEX oc_@_22 ON oc_@ USING @ (r)');
SELECT * FROM both_ams('CREATE INDEX oc_@_23 ON oc_@ USING @ (a DESC NULLS FIRST, t NULLS LAST)');
SELECT * FROM both_ams('CREATE INDEX oc_@_24 ON oc_@ USING @ ((a + 1) int4_ops DESC)');
SELECT * FROM both_ams('CREATE INDEX oc_@_25 ON oc_@ USING @ (a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a)');
SELECT * FROM both_ams('CREATE INDEX oc_@_26 ON oc_@ USING @ (ctid)');
SELECT * FROM both_ams('CREATE INDEX oc_@_27 ON oc_@ USING @ (random())');
SELECT * FROM both_ams('CREATE INDEX oc_@_28 ON oc_@ USING @ (a) WHERE random() > 0.5');
SELECT * FROM both_ams('INSERT INTO oc_@ VALUES (1, 1, ''x'', ''(1,2)'', ''[1,3)''), (NULL, 2, NULL, NULL, NULL)');
SELECT * FROM both_rows('SELECT a, p FROM oc_@ WHERE a = 1');
SELECT * FROM both_rows('SELECT r FROM oc_@ WHERE r = ''[1,3)''::int4range');
-- an operator class that exists only for btree in this schema
CREATE OPERATOR CLASS my_int4_ops FOR TYPE int4 USING btree AS
	OPERATOR 1 <, OPERATOR 3 =, OPERATOR 5 >, FUNCTION 1 btint4cmp(int4, int4);
SELECT * FROM both_ams('CREATE INDEX oc_@_29 ON oc_@ USING @ (a my_int4_ops)');
DROP INDEX oc_btree_29;
DROP OPERATOR CLASS my_int4_ops USING btree;
-- LIKE 'abc%' prefix conditions: the planner (like_support.c) knows btree's
-- text_pattern_ops family by OID; fastbtree.plan_as_btree (on by default)
-- presents the fastbtree index with btree's family, so both get the
-- ~>=~ / ~<~ conditions (sql/planner covers it with the setting off too);
-- on a "C" collation column both get the >= / < conditions.  (The setting
-- is set here, and below, so that the suite's run with it off in the
-- server's configuration expects the same.)
SET fastbtree.plan_as_btree = on;
CREATE TABLE lp_btree (t text);
CREATE TABLE lp_fastbtree (LIKE lp_btree);
SELECT * FROM both_ams('INSERT INTO lp_@ SELECT md5(i::text) FROM generate_series(1, 2000) i');
SELECT * FROM both_ams('CREATE INDEX lp_@_pattern ON lp_@ USING @ (t text_pattern_ops)');
SELECT * FROM both_rows('SELECT t FROM lp_@ WHERE t LIKE ''ab1%''');
SELECT * FROM both_ams('DROP INDEX lp_@_pattern; CREATE INDEX lp_@_c ON lp_@ USING @ (t COLLATE "C")');
SELECT * FROM both_rows('SELECT t FROM lp_@ WHERE t LIKE ''ab1%''');
RESET fastbtree.plan_as_btree;

--
-- Index properties: identical for the same column list
--
CREATE TABLE pr (a int, b text, c int, d point);
CREATE INDEX pr_btree ON pr USING btree (a DESC, b NULLS FIRST, (c + 1)) INCLUDE (c, d);
CREATE INDEX pr_fastbtree ON pr USING fastbtree (a DESC, b NULLS FIRST, (c + 1)) INCLUDE (c, d);
SELECT p, i,
	pg_index_column_has_property('pr_btree'::regclass, i, p) AS btree,
	pg_index_column_has_property('pr_fastbtree'::regclass, i, p) AS fastbtree
FROM unnest(ARRAY['asc', 'desc', 'nulls_first', 'nulls_last', 'orderable',
		'distance_orderable', 'returnable', 'search_array', 'search_nulls',
		'bogus']) WITH ORDINALITY AS u(p, n),
	generate_series(0, 6) i
ORDER BY n, i;
SELECT p,
	pg_index_has_property('pr_btree'::regclass, p) AS btree,
	pg_index_has_property('pr_fastbtree'::regclass, p) AS fastbtree
FROM unnest(ARRAY['clusterable', 'index_scan', 'bitmap_scan',
		'backward_scan', 'bogus']) p;
SELECT p,
	pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'btree'), p) AS btree,
	pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'fastbtree'), p) AS fastbtree
FROM unnest(ARRAY['can_order', 'can_unique', 'can_multi_col', 'can_exclude',
		'can_include', 'bogus']) p;
SELECT replace(pg_get_indexdef('pr_btree'::regclass), 'btree', '@') =
	replace(pg_get_indexdef('pr_fastbtree'::regclass), 'fastbtree', '@') AS same_indexdef;
SELECT a.amname, a.amtype, a.amhandler
FROM pg_am a WHERE a.amname IN ('btree', 'fastbtree') ORDER BY 1;

--
-- Planner costs: for identical tables and indexes, the same query costs
-- the same on btree and on fastbtree.  explain_costs() collects every
-- "cost=a..b" of an EXPLAIN; same_plan compares the plans without costs.
--
CREATE FUNCTION explain_costs(q text, costs bool) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	line	text;
	r		text := '';
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS ' || costs || ') ' || q
	LOOP
		IF costs THEN
			r := r || coalesce(substring(line from 'cost=([0-9.]+\.\.[0-9.]+)') || ' ', '');
		ELSE
			r := r || line || E'\n';
		END IF;
	END LOOP;
	RETURN r;
END
$$;
CREATE FUNCTION cost_cmp(q text)
RETURNS TABLE (same_cost boolean, same_plan boolean)
LANGUAGE sql AS $$
	SELECT explain_costs(replace(q, '@', 'btree'), true) =
			explain_costs(replace(q, '@', 'fastbtree'), true),
		replace(explain_costs(replace(q, '@', 'btree'), false), 'btree', '@') =
			replace(explain_costs(replace(q, '@', 'fastbtree'), false), 'fastbtree', '@')
$$;
CREATE TABLE co_btree (i int, b bigint, t text, d int, ts timestamptz, pad text)
	WITH (autovacuum_enabled = off);
CREATE TABLE co_fastbtree (LIKE co_btree) WITH (autovacuum_enabled = off);
SELECT * FROM both_ams('INSERT INTO co_@ SELECT g, g * 1000, md5(g::text), g % 10, ''2020-01-01''::timestamptz + g * interval ''1 minute'', repeat(''p'', 40) FROM generate_series(1, 30000) g');
SELECT * FROM both_ams('CREATE INDEX co_@_i ON co_@ USING @ (i)');
SELECT * FROM both_ams('CREATE INDEX co_@_b ON co_@ USING @ (b DESC)');
SELECT * FROM both_ams('CREATE INDEX co_@_t ON co_@ USING @ (t)');
SELECT * FROM both_ams('CREATE INDEX co_@_ts ON co_@ USING @ (ts) INCLUDE (i)');
SELECT * FROM both_ams('CREATE INDEX co_@_di ON co_@ USING @ (d, i)');
-- FREEZE: an aggressive VACUUM waits for a page's cleanup lock (which a
-- checkpoint writing the page can hold for a moment) instead of leaving
-- it not all-visible, which would price index-only scans differently
VACUUM (FREEZE, ANALYZE) co_btree;
VACUUM (FREEZE, ANALYZE) co_fastbtree;
SELECT c1.relname, c1.relpages = c2.relpages AS same_relpages,
	c1.reltuples = c2.reltuples AS same_reltuples
FROM pg_class c1 JOIN pg_class c2
	ON c2.relname = replace(c1.relname, 'btree', 'fastbtree')
WHERE c1.relname LIKE 'co\_btree%' ORDER BY 1;
SELECT (SELECT level FROM fastbtree_metap('co_fastbtree_i')) AS level_i,
	(SELECT level FROM fastbtree_metap('co_fastbtree_t')) AS level_t;
SELECT q, c.*
FROM unnest(ARRAY[
	'SELECT * FROM co_@ WHERE i = 42',
	'SELECT * FROM co_@ WHERE i BETWEEN 100 AND 2000',
	'SELECT i FROM co_@ WHERE i < 500 ORDER BY i DESC',
	'SELECT * FROM co_@ WHERE i = ANY(''{1,5,7000,12345}'')',
	'SELECT * FROM co_@ WHERE i > 29990 ORDER BY i LIMIT 5',
	'SELECT min(i), max(i) FROM co_@',
	'SELECT * FROM co_@ WHERE b = 5000',
	'SELECT b FROM co_@ ORDER BY b DESC LIMIT 10',
	'SELECT * FROM co_@ WHERE t = ''c4ca4238a0b923820dcc509a6f75849b''',
	'SELECT * FROM co_@ WHERE t > ''a'' AND t < ''b'' ORDER BY t',
	'SELECT i FROM co_@ WHERE ts BETWEEN ''2020-01-02'' AND ''2020-01-03''',
	'SELECT * FROM co_@ WHERE d = 3 AND i < 1000',
	'SELECT * FROM co_@ WHERE d IS NULL',
	'SELECT count(*) FROM co_@ a JOIN co_@ b ON a.i = b.i + 1 WHERE a.d = 1 AND b.i < 100'
	]) q, cost_cmp(q) c;
-- For a constant beyond the histogram's last bound, selfuncs.c
-- (get_actual_variable_range) of PostgreSQL 15 to 17 reads the column's
-- actual maximum from a btree index only ("Ignore non-btree indexes"); the
-- planner sees a fastbtree index as btree (fastbtree.plan_as_btree), so
-- the estimate, cost and plan are btree's.  With the setting off, they
-- differ until 17; 18 reads the actual maximum from any index with a sort
-- order: "as_expected" is true on every major.
SET fastbtree.plan_as_btree = on;
SELECT q, c.same_cost, c.same_plan
FROM unnest(ARRAY['SELECT * FROM co_@ WHERE t > ''fff'' ORDER BY t']) q, cost_cmp(q) c;
SET fastbtree.plan_as_btree = off;
SELECT q, c.same_cost = (current_setting('server_version_num')::int >= 180000)
		AS as_expected,
	c.same_plan = (current_setting('server_version_num')::int >= 180000)
		AS plan_as_expected
FROM unnest(ARRAY['SELECT * FROM co_@ WHERE t > ''fff'' ORDER BY t']) q, cost_cmp(q) c;
RESET fastbtree.plan_as_btree;
-- PostgreSQL 18's btree runs "b = 5000" on an index on (a, b) as a skip
-- scan (a descent per value of a), and btcostestimate prices any index it
-- is given that way; fastbtree reads the whole range the leading quals
-- bound, and fbtcostestimate prices that instead.  So on 18 such a scan
-- costs more with fastbtree than with btree, and exactly the same where
-- the quals bound the range; on 15 the same everywhere.  (30000 rows:
-- ANALYZE reads them all, so both tables get the same statistics; column c
-- keeps the scans plain index scans, whose cost does not depend on the
-- visibility map, which a concurrent snapshot can keep VACUUM from
-- setting.)
CREATE FUNCTION index_cost(q text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	p json;
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO p;
	RETURN (p -> 0 -> 'Plan' ->> 'Total Cost')::float8;
END
$$;
CREATE TABLE sk_btree (a int, b int, c text) WITH (autovacuum_enabled = off);
CREATE TABLE sk_fastbtree (LIKE sk_btree) WITH (autovacuum_enabled = off);
SELECT * FROM both_ams('INSERT INTO sk_@ SELECT g % 10, g, ''c'' FROM generate_series(1, 30000) g');
SELECT * FROM both_ams('CREATE INDEX sk_@_ab ON sk_@ USING @ (a, b)');
VACUUM (FREEZE, ANALYZE) sk_btree;
VACUUM (FREEZE, ANALYZE) sk_fastbtree;
-- fastbtree skips to reach a key on a later column on every major
-- (fbtarray.c), as btree does since 18, and is priced as 18 prices it:
-- like btree on 18, cheaper than btree on 15 (which reads the range).
-- With fastbtree.skip_scan off it prices the range read everywhere.
SET fastbtree.skip_scan = on;
CREATE FUNCTION cost_vs_btree(q text) RETURNS text
LANGUAGE sql AS $$
	SELECT CASE sign(index_cost(replace(q, '@', 'fastbtree')) -
					 index_cost(replace(q, '@', 'btree')))
		   WHEN 0 THEN 'same' WHEN -1 THEN 'cheaper' ELSE 'dearer' END;
$$;
SELECT v.q,
	cost_vs_btree(v.q) = CASE
		WHEN current_setting('server_version_num')::int >= 180000
		THEN v.on18 ELSE v.on15 END AS as_expected
FROM (VALUES ('SELECT * FROM sk_@ WHERE b = 5000', 'cheaper', 'same'),
			 ('SELECT * FROM sk_@ WHERE a > 3 AND b = 5004', 'cheaper', 'same'),
			 ('SELECT * FROM sk_@ WHERE a = 3 AND b = 5003', 'same', 'same'),
			 ('SELECT * FROM sk_@ WHERE a = ANY(''{3,4}'') AND b < 5004', 'same', 'same'),
			 ('SELECT * FROM sk_@ WHERE a < 3', 'same', 'same'),
			 ('SELECT * FROM sk_@ WHERE b < 10', 'cheaper', 'same')) v(q, on15, on18);
SET fastbtree.skip_scan = off;
SELECT v.q,
	cost_vs_btree(v.q) = CASE
		WHEN current_setting('server_version_num')::int >= 180000
		THEN 'dearer' ELSE 'same' END AS as_expected
FROM (VALUES ('SELECT * FROM sk_@ WHERE b = 5000'),
			 ('SELECT * FROM sk_@ WHERE a > 3 AND b = 5004')) v(q);
RESET fastbtree.skip_scan;
SELECT * FROM both_rows('SELECT a, b FROM sk_@ WHERE b = 5000');
-- On a low-cardinality column both deduplicate: the indexes are the
-- same size, and so cost the same
SELECT * FROM both_ams('CREATE INDEX co_@_d ON co_@ USING @ (d)');
SELECT q, c.*
FROM unnest(ARRAY['SELECT * FROM co_@ WHERE d = 3']) q, cost_cmp(q) c;

SET client_min_messages = warning;
\i sql/include/check_all.sql
DROP SCHEMA fbt_ddl CASCADE;
