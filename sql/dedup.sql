--
-- Deduplication (fbtdedup.c): posting list tuples made by the build and by
-- full leaves, posting list splits on insert, VACUUM and deletion taking
-- single TIDs out of posting lists, kill_prior_tuple on them, and the
-- operator classes and options that must keep entries apart.  Every table
-- d_fastbtree has a twin d_btree that receives exactly the same
-- statements (so the same heap TIDs); both_rows() reads each through its
-- index and compares the rows, in the order the scan returns them;
-- fastbtree_check(..., true) runs after every step that writes.
--
CREATE SCHEMA fbt_dedup;
SET search_path = fbt_dedup, public;
\i sql/include/both_ams.sql
\i sql/include/leaf_stats.sql

-- posting list tuples on the leaves of a fastbtree index, and their TIDs
CREATE FUNCTION postings(idx regclass, OUT lists bigint, OUT tids bigint)
LANGUAGE sql AS $$
	SELECT count(*), coalesce(sum(array_length(i.tids, 1)), 0)
	FROM generate_series(1, npages(idx) - 1) b,
		LATERAL fastbtree_page_stats(idx, b) s,
		LATERAL fastbtree_page_items(idx, b) i
	WHERE s.type = 'l' AND i.tids IS NOT NULL
$$;

--
-- Low cardinality: one value 10^5 times, 300 values 400 times each, and a
-- group of NULLs, loaded in an order that interleaves them, then indexed
-- (build-time deduplication).
--
CREATE TABLE d_btree (k int4, t text) WITH (autovacuum_enabled = off);
CREATE TABLE d_fastbtree (k int4, t text) WITH (autovacuum_enabled = off);
INSERT INTO d_btree
SELECT CASE WHEN i % 2 = 0 THEN 7
			WHEN i % 25 = 1 THEN NULL
			ELSE 1000 + i % 300 END, 'v' || (i % 300)
FROM generate_series(1, 200000) i;
INSERT INTO d_fastbtree SELECT * FROM d_btree;
CREATE INDEX d_btree_k ON d_btree USING btree (k);
CREATE INDEX d_fastbtree_k ON d_fastbtree USING fastbtree (k);
SELECT allequalimage FROM fastbtree_metap('d_fastbtree_k');
SELECT fastbtree_check('d_fastbtree_k', true);
-- as small as btree's (1.05x at most), and the TIDs are in posting lists
SELECT npages('d_fastbtree_k') <= npages('d_btree_k') * 1.05 AS like_btree,
	npages('d_fastbtree_k') < 250 AS small,
	(postings('d_fastbtree_k')).tids > 190000 AS merged;
VACUUM d_btree;
VACUUM d_fastbtree;

-- forward, backward (descending heap TIDs within a value), LIMIT across
-- posting lists and pages, NULL groups, = ANY, index-only
SELECT * FROM both_rows('SELECT count(*), min(ctid), max(ctid) FROM d_@ WHERE k = 7');
SELECT * FROM both_rows('SELECT ctid FROM d_@ WHERE k = 7 ORDER BY k LIMIT 5 OFFSET 49990');
SELECT * FROM both_rows('SELECT ctid FROM d_@ WHERE k = 7 ORDER BY k DESC LIMIT 5 OFFSET 30000');
SELECT * FROM both_rows('SELECT ctid, k FROM d_@ WHERE k BETWEEN 1005 AND 1006 ORDER BY k DESC LIMIT 3 OFFSET 398');
SELECT * FROM both_rows('SELECT md5(string_agg(ctid::text, '','')) FROM (SELECT ctid FROM d_@ WHERE k >= 1290 ORDER BY k) s');
SELECT * FROM both_rows('SELECT md5(string_agg(ctid::text, '','')) FROM (SELECT ctid FROM d_@ WHERE k >= 1290 ORDER BY k DESC) s');
SELECT * FROM both_rows('SELECT count(*), max(ctid) FROM d_@ WHERE k IS NULL');
SELECT * FROM both_rows('SELECT ctid FROM d_@ WHERE k IS NULL ORDER BY k DESC LIMIT 3');
SELECT * FROM both_rows('SELECT k, count(*) FROM d_@ WHERE k = ANY (''{7, 1001, 1299, 5, NULL}'') GROUP BY k ORDER BY k');
SELECT * FROM both_rows('SELECT k, count(*) FROM d_@ WHERE k BETWEEN 1100 AND 1103 GROUP BY k ORDER BY k');

-- a scrollable cursor over posting lists, both ways, back over the start
CREATE FUNCTION cursor_walk(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	c		refcursor;
	r		record;
	out		text := '';
	i		int;
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	OPEN c SCROLL FOR EXECUTE q;
	MOVE FORWARD 397 FROM c;
	FOR i IN 1..6 LOOP
		FETCH NEXT FROM c INTO r;
		out := out || ' +' || r::text;
	END LOOP;
	FOR i IN 1..10 LOOP
		FETCH PRIOR FROM c INTO r;
		out := out || ' -' || r::text;
	END LOOP;
	MOVE BACKWARD ALL FROM c;
	FOR i IN 1..3 LOOP
		FETCH NEXT FROM c INTO r;
		out := out || ' +' || r::text;
	END LOOP;
	MOVE LAST FROM c;
	FETCH PRIOR FROM c INTO r;
	out := out || ' -' || r::text;
	CLOSE c;
	RETURN out;
END
$$;
SELECT b = f AS same, length(b) > 200 AS walked
FROM (SELECT cursor_walk('SELECT ctid, k FROM d_btree WHERE k BETWEEN 1010 AND 1011 ORDER BY k') AS b,
			 cursor_walk('SELECT ctid, k FROM d_fastbtree WHERE k BETWEEN 1010 AND 1011 ORDER BY k') AS f) s;

--
-- Inserts into the deduplicated leaves: new TIDs of existing values land
-- inside posting lists' ranges after a VACUUM freed their slots (posting
-- list splits), and full leaves are deduplicated again instead of split.
--
DELETE FROM d_btree WHERE k = 7 AND (ctid::text::point)[1] < 100;
DELETE FROM d_fastbtree WHERE k = 7 AND (ctid::text::point)[1] < 100;
VACUUM d_btree;
VACUUM d_fastbtree;
SELECT fastbtree_check('d_fastbtree_k', true);
INSERT INTO d_btree SELECT CASE WHEN i % 3 = 0 THEN 7 ELSE 1000 + i % 300 END, 'n'
FROM generate_series(1, 60000) i;
INSERT INTO d_fastbtree SELECT CASE WHEN i % 3 = 0 THEN 7 ELSE 1000 + i % 300 END, 'n'
FROM generate_series(1, 60000) i;
SELECT fastbtree_check('d_fastbtree_k', true);
SELECT npages('d_fastbtree_k') <= npages('d_btree_k') * 1.05 AS like_btree;
SELECT * FROM both_rows('SELECT md5(string_agg(ctid::text, '','')) FROM (SELECT ctid FROM d_@ WHERE k = 7 ORDER BY k) s');
SELECT * FROM both_rows('SELECT count(*), sum(hashtext(ctid::text)::int8) FROM (SELECT ctid FROM d_@ WHERE k = 7 ORDER BY k DESC) s');
SELECT * FROM both_rows('SELECT md5(string_agg(ctid::text, '','')) FROM (SELECT ctid FROM d_@ WHERE k BETWEEN 1000 AND 1299 ORDER BY k) s');

--
-- VACUUM taking single TIDs out of posting lists (every third row of each
-- value) and whole ranges of values, then reinserts of the same count.
--
DELETE FROM d_btree WHERE (ctid::text::point)[0]::int % 3 = 0 AND k IS NOT NULL;
DELETE FROM d_fastbtree WHERE (ctid::text::point)[0]::int % 3 = 0 AND k IS NOT NULL;
DELETE FROM d_btree WHERE k BETWEEN 1100 AND 1199;
DELETE FROM d_fastbtree WHERE k BETWEEN 1100 AND 1199;
VACUUM d_btree;
VACUUM d_fastbtree;
SELECT fastbtree_check('d_fastbtree_k', true);
SELECT * FROM both_rows('SELECT count(*), md5(string_agg(ctid::text, '','')) FROM (SELECT ctid FROM d_@ WHERE k >= 7 ORDER BY k) s');
SELECT * FROM both_rows('SELECT count(*) FROM d_@ WHERE k BETWEEN 1100 AND 1199');
INSERT INTO d_btree SELECT 1100 + i % 100, 'r' FROM generate_series(1, 40000) i;
INSERT INTO d_fastbtree SELECT 1100 + i % 100, 'r' FROM generate_series(1, 40000) i;
SELECT fastbtree_check('d_fastbtree_k', true);
SELECT npages('d_fastbtree_k') <= npages('d_btree_k') * 1.05 AS like_btree;
SELECT * FROM both_rows('SELECT k, count(*), max(ctid) FROM d_@ WHERE k BETWEEN 1098 AND 1101 GROUP BY k ORDER BY k');
-- (backward, after inserts: the order of equal keys follows each index's
-- own posting list boundaries, so the keys' order and the set are
-- compared; no ordered aggregate, which 16+ would sort the input for)
SELECT * FROM both_rows('SELECT md5(string_agg(k::text, '','')), sum(hashtext(ctid::text)::int8) FROM (SELECT k, ctid FROM d_@ WHERE k BETWEEN 1100 AND 1199 ORDER BY k DESC) s');

--
-- kill_prior_tuple: a posting list is marked dead once a scan saw every
-- one of its TIDs dead, and a later insert deletes it instead of
-- splitting.  No snapshot older than the DELETE is open.
--
DELETE FROM d_fastbtree WHERE k = 1250;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM d_fastbtree WHERE k = 1250;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT dead_entries('d_fastbtree_k') > 0 AS marked;
SELECT fastbtree_check('d_fastbtree_k', true);
INSERT INTO d_fastbtree SELECT 1250, 'again' FROM generate_series(1, 2000);
SELECT fastbtree_check('d_fastbtree_k', true);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), min(t), max(t) FROM d_fastbtree WHERE k = 1250;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- Text keys: the same through posting lists as through btree's.
--
CREATE TABLE t_btree (k text COLLATE "C", n int) WITH (autovacuum_enabled = off);
CREATE TABLE t_fastbtree (k text COLLATE "C", n int) WITH (autovacuum_enabled = off);
CREATE INDEX t_btree_k ON t_btree USING btree (k);
CREATE INDEX t_fastbtree_k ON t_fastbtree USING fastbtree (k);
INSERT INTO t_btree SELECT 'status-' || (i % 20), i FROM generate_series(1, 50000) i;
INSERT INTO t_fastbtree SELECT 'status-' || (i % 20), i FROM generate_series(1, 50000) i;
SELECT fastbtree_check('t_fastbtree_k', true);
SELECT npages('t_fastbtree_k') <= npages('t_btree_k') * 1.05 AS like_btree,
	(postings('t_fastbtree_k')).lists > 0 AS merged;
SELECT * FROM both_rows('SELECT k, count(*), max(n) FROM t_@ WHERE k >= ''status-17'' GROUP BY k ORDER BY k');
SELECT * FROM both_rows('SELECT n FROM t_@ WHERE k = ''status-3'' ORDER BY k DESC LIMIT 4');

--
-- Keys that must not be merged: numeric (equal values with different
-- display scales), a nondeterministic collation, and an index with INCLUDE
-- columns.  No posting lists, and every value comes back as stored.
--
CREATE TABLE n_btree (k numeric) WITH (autovacuum_enabled = off);
CREATE TABLE n_fastbtree (k numeric) WITH (autovacuum_enabled = off);
CREATE INDEX n_btree_k ON n_btree USING btree (k);
CREATE INDEX n_fastbtree_k ON n_fastbtree USING fastbtree (k);
INSERT INTO n_btree SELECT CASE i % 3 WHEN 0 THEN 1.0 WHEN 1 THEN 1.00 ELSE 1 END FROM generate_series(1, 3000) i;
INSERT INTO n_fastbtree SELECT CASE i % 3 WHEN 0 THEN 1.0 WHEN 1 THEN 1.00 ELSE 1 END FROM generate_series(1, 3000) i;
SELECT allequalimage FROM fastbtree_metap('n_fastbtree_k');
SELECT postings('n_fastbtree_k');
SELECT * FROM both_rows('SELECT k::text, count(*) FROM n_@ WHERE k = 1 GROUP BY k::text ORDER BY 1');
SELECT fastbtree_check('n_fastbtree_k', true);

CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2',
	deterministic = false);
CREATE TABLE c_btree (k text COLLATE ci) WITH (autovacuum_enabled = off);
CREATE TABLE c_fastbtree (k text COLLATE ci) WITH (autovacuum_enabled = off);
CREATE INDEX c_btree_k ON c_btree USING btree (k);
CREATE INDEX c_fastbtree_k ON c_fastbtree USING fastbtree (k);
INSERT INTO c_btree SELECT CASE i % 2 WHEN 0 THEN 'Abc' ELSE 'aBC' END FROM generate_series(1, 3000) i;
INSERT INTO c_fastbtree SELECT CASE i % 2 WHEN 0 THEN 'Abc' ELSE 'aBC' END FROM generate_series(1, 3000) i;
SELECT allequalimage FROM fastbtree_metap('c_fastbtree_k');
SELECT postings('c_fastbtree_k');
SELECT * FROM both_rows('SELECT k COLLATE "C", count(*) FROM c_@ WHERE k = ''ABC'' GROUP BY 1 ORDER BY 1');

CREATE TABLE i_fastbtree (k int, v int) WITH (autovacuum_enabled = off);
CREATE INDEX i_fastbtree_k ON i_fastbtree USING fastbtree (k) INCLUDE (v);
INSERT INTO i_fastbtree SELECT 1, i FROM generate_series(1, 3000) i;
SELECT allequalimage FROM fastbtree_metap('i_fastbtree_k');
SELECT postings('i_fastbtree_k');

--
-- deduplicate_items: off keeps entries apart, at build and on insert, as
-- btree's does; switched on, later full leaves merge.
--
CREATE TABLE o_fastbtree (k int) WITH (autovacuum_enabled = off);
INSERT INTO o_fastbtree SELECT i % 10 FROM generate_series(1, 5000) i;
CREATE INDEX o_fastbtree_k ON o_fastbtree USING fastbtree (k) WITH (deduplicate_items = off);
INSERT INTO o_fastbtree SELECT i % 10 FROM generate_series(1, 5000) i;
SELECT allequalimage FROM fastbtree_metap('o_fastbtree_k');
SELECT postings('o_fastbtree_k');
ALTER INDEX o_fastbtree_k SET (deduplicate_items = on);
INSERT INTO o_fastbtree SELECT i % 10 FROM generate_series(1, 5000) i;
SELECT (postings('o_fastbtree_k')).lists > 0 AS merged;
SELECT fastbtree_check('o_fastbtree_k', true);
SELECT count(*) FROM o_fastbtree WHERE k = 3;
CREATE INDEX o_bad ON o_fastbtree USING fastbtree (k) WITH (deduplicate_items = maybe);

--
-- Unique indexes: no posting lists at build; version churn (non-HOT
-- updates of the same keys) merged only once the leaf would split; a
-- duplicate still raises btree's error.
--
CREATE TABLE u_btree (id int, v int, pad text) WITH (autovacuum_enabled = off, fillfactor = 50);
CREATE TABLE u_fastbtree (id int, v int, pad text) WITH (autovacuum_enabled = off, fillfactor = 50);
INSERT INTO u_btree SELECT i, 0, repeat('p', 20) FROM generate_series(1, 2000) i;
INSERT INTO u_fastbtree SELECT i, 0, repeat('p', 20) FROM generate_series(1, 2000) i;
CREATE UNIQUE INDEX u_btree_id ON u_btree USING btree (id);
SET client_min_messages = warning;	-- 15's ON CONFLICT notice
CREATE UNIQUE INDEX u_fastbtree_id ON u_fastbtree USING fastbtree (id);
RESET client_min_messages;
CREATE INDEX u_btree_v ON u_btree USING btree (v);
CREATE INDEX u_fastbtree_v ON u_fastbtree USING fastbtree (v);
SELECT postings('u_fastbtree_id');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM u_btree;
UPDATE u_btree SET v = v + 1 WHERE id <= 200;
UPDATE u_fastbtree SET v = v + 1 WHERE id <= 200;
UPDATE u_btree SET v = v + 1 WHERE id <= 200;
UPDATE u_fastbtree SET v = v + 1 WHERE id <= 200;
UPDATE u_btree SET v = v + 1 WHERE id <= 200;
UPDATE u_fastbtree SET v = v + 1 WHERE id <= 200;
UPDATE u_btree SET v = v + 1 WHERE id <= 200;
UPDATE u_fastbtree SET v = v + 1 WHERE id <= 200;
COMMIT;
SELECT fastbtree_check('u_fastbtree_id', true);
SELECT fastbtree_check('u_fastbtree_v', true);
SELECT * FROM both_rows('SELECT id, v FROM u_@ WHERE id BETWEEN 195 AND 205 ORDER BY id');
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (150, 9, ''dup'')');
SELECT * FROM both_ams('UPDATE u_@ SET id = 151 WHERE id = 152');

--
-- The build's pages are btree's (fbtsort.c): the same number of items on
-- each page, left to right, on every level, leaves and internal pages,
-- with posting lists and without, at any fillfactor, and in the same
-- blocks.  Each build is made twice on the same table, USING fastbtree
-- and USING btree, and compared through pageinspect.  (One layout cannot
-- be btree's: at fillfactor 100 without posting lists, btree fills a leaf
-- to its last 4 bytes when its high key needs a heap TID, and our special
-- space is 8 bytes larger; not built here.)
--
CREATE EXTENSION pageinspect SCHEMA fbt_dedup;
-- every page of a fastbtree or btree index: block, level, links, live items
CREATE FUNCTION page_rows(idx regclass)
RETURNS TABLE (b int8, level int, prev int8, next int8, live_items int)
LANGUAGE sql AS $$
	SELECT b, s.level, s.prev, s.next, s.live_items
	FROM generate_series(1, npages(idx) - 1) b,
		LATERAL fastbtree_page_stats(idx, b) s
	WHERE (SELECT amname FROM pg_am JOIN pg_class c ON c.relam = pg_am.oid
		   WHERE c.oid = idx) = 'fastbtree'
	UNION ALL
	SELECT b, s.btpo_level, s.btpo_prev, s.btpo_next, s.live_items
	FROM generate_series(1, npages(idx) - 1) b,
		LATERAL bt_page_stats(idx::text, b::int) s
	WHERE (SELECT amname FROM pg_am JOIN pg_class c ON c.relam = pg_am.oid
		   WHERE c.oid = idx) = 'btree'
$$;
-- per level, the live items (high key included) of each page, left to right
CREATE FUNCTION layout(idx regclass) RETURNS text
LANGUAGE sql AS $$
	WITH RECURSIVE p AS (SELECT * FROM page_rows(idx)),
	w AS (SELECT level, next, live_items, 1 AS pos FROM p WHERE prev = 0
		  UNION ALL
		  SELECT p.level, p.next, p.live_items, w.pos + 1
		  FROM w JOIN p ON p.b = w.next AND w.next <> 0)
	SELECT string_agg(level || ':' || items, ' ' ORDER BY level)
	FROM (SELECT level, string_agg(live_items::text, ',' ORDER BY pos) AS items
		  FROM w GROUP BY level) l
$$;
-- each block's level and live items, in block order
CREATE FUNCTION blocks(idx regclass) RETURNS text
LANGUAGE sql AS $$
	SELECT string_agg(level || '/' || live_items, ' ' ORDER BY b)
	FROM page_rows(idx)
$$;
-- build "CREATE [UNIQUE] INDEX ... ON tbl USING am (def)" both ways
CREATE FUNCTION same_build(tbl text, def text, uniq boolean DEFAULT false)
RETURNS TABLE (build text, internal_levels boolean, same_pages boolean,
			   same_blocks boolean)
LANGUAGE plpgsql AS $$
DECLARE
	u		text := CASE WHEN uniq THEN 'UNIQUE ' ELSE '' END;
BEGIN
	SET LOCAL client_min_messages = warning;	-- 15's ON CONFLICT notice
	EXECUTE format('CREATE %sINDEX lf ON %I USING fastbtree %s', u, tbl, def);
	EXECUTE format('CREATE %sINDEX lb ON %I USING btree %s', u, tbl, def);
	PERFORM fastbtree_check('lf', true);
	build := u || tbl || ' ' || def;
	internal_levels := (fastbtree_metap('lf')).level > 0;
	same_pages := layout('lf') = layout('lb');
	same_blocks := blocks('lf') = blocks('lb');
	DROP INDEX lf;
	DROP INDEX lb;
	RETURN NEXT;
END
$$;
CREATE FUNCTION wide(i int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT lpad(i::text, 6, '0') ||
		(SELECT string_agg(md5(i::text || j::text), '') FROM generate_series(1, 20) j)
$$;
SET max_parallel_maintenance_workers = 0;
CREATE TABLE l_uniq AS SELECT i AS k FROM generate_series(1, 100000) i;
CREATE TABLE l_int AS SELECT i % 1000 AS k FROM generate_series(1, 100000) i;
CREATE TABLE l_text AS SELECT 'key-' || i % 1000 AS k FROM generate_series(1, 100000) i;
CREATE TABLE l_wide AS SELECT wide(i) AS k FROM generate_series(1, 4000) i;
CREATE TABLE l_multi AS
	SELECT i % 100 AS a, 'v' || i % 37 AS b FROM generate_series(1, 100000) i;
CREATE TABLE l_null AS
	SELECT CASE WHEN i % 7 <> 0 THEN i % 500 END AS k FROM generate_series(1, 100000) i;
SELECT * FROM same_build('l_uniq', '(k)')
UNION ALL SELECT * FROM same_build('l_uniq', '(k)', true)
UNION ALL SELECT * FROM same_build('l_uniq', '(k DESC) WITH (fillfactor = 100)')
UNION ALL SELECT * FROM same_build('l_int', '(k)')
UNION ALL SELECT * FROM same_build('l_int', '(k) WITH (fillfactor = 50)')
UNION ALL SELECT * FROM same_build('l_int', '(k DESC) WITH (fillfactor = 100)')
UNION ALL SELECT * FROM same_build('l_int', '(k) WITH (deduplicate_items = off)')
UNION ALL SELECT * FROM same_build('l_text', '(k)')
UNION ALL SELECT * FROM same_build('l_wide', '(k)')
UNION ALL SELECT * FROM same_build('l_wide', '(k) WITH (fillfactor = 50)')
UNION ALL SELECT * FROM same_build('l_wide', '(k) WITH (fillfactor = 100)', true)
UNION ALL SELECT * FROM same_build('l_multi', '(a, b)')
UNION ALL SELECT * FROM same_build('l_multi', '(a DESC, b) WITH (deduplicate_items = off)')
UNION ALL SELECT * FROM same_build('l_null', '(k NULLS FIRST)');
RESET max_parallel_maintenance_workers;

\i sql/include/check_all.sql
RESET search_path;
DROP SCHEMA fbt_dedup CASCADE;
