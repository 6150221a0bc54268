--
-- Page deletion and recycling (fbtpagedel.c, fbtpage.c): VACUUM deletes
-- the leaves it empties, a later pass hands them to the free space map
-- and splits reuse them.  Each fastbtree table has a btree twin that gets
-- the same statements; every answer through the index is compared with
-- the twin's and with a sequential scan, in both directions, and
-- fastbtree_check passes after each step.
--
CREATE SCHEMA fbt_pagedel;
SET search_path = fbt_pagedel, public;

\i sql/include/leaf_stats.sql

-- pages of a fastbtree index by type ('l' leaf, 'd' deleted, ...)
CREATE FUNCTION page_types(idx regclass) RETURNS text
LANGUAGE sql AS $$
	SELECT string_agg(type::text || ':' || n, ' ' ORDER BY type)
	FROM (SELECT s.type, count(*) AS n
		  FROM generate_series(1, npages(idx) - 1) b,
			LATERAL fastbtree_page_stats(idx, b) s
		  GROUP BY s.type) t
$$;

-- deleted pages of a fastbtree index
CREATE FUNCTION ndeleted(idx regclass) RETURNS bigint
LANGUAGE sql AS $$
	SELECT count(*) FROM generate_series(1, npages(idx) - 1) b,
		LATERAL fastbtree_page_stats(idx, b) s WHERE s.type = 'd'
$$;

-- every key of tbl with its ctid, forward and backward, and min/max, as
-- one text: through the index (via_index) or by a sequential scan and
-- sorts (the truth)
CREATE FUNCTION all_rows(tbl regclass, via_index bool) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	f	text;
	b	text;
	m	text;
BEGIN
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('enable_seqscan', (NOT via_index)::text, true);
	PERFORM set_config('enable_sort', (NOT via_index)::text, true);
	PERFORM set_config('enable_indexscan', via_index::text, true);
	PERFORM set_config('enable_indexonlyscan', via_index::text, true);
	EXECUTE format('SELECT count(*) || '':'' || md5(string_agg(k || '':'' || ctid, '','')) FROM (SELECT k, ctid FROM %s ORDER BY k, ctid) s', tbl) INTO f;
	EXECUTE format('SELECT md5(string_agg(k::text, '','')) FROM (SELECT k FROM %s ORDER BY k DESC) s', tbl) INTO b;
	EXECUTE format('SELECT min(k) || ''/'' || max(k) FROM %s', tbl) INTO m;
	RETURN f || ' ' || b || ' ' || m;
END
$$;

--
-- Delete most of a key range, VACUUM: the emptied leaves are deleted (the
-- rightmost leaf, and leaves that are their parent's rightmost child,
-- stay).  Scans in both directions step over them.
--
CREATE TABLE pf (k int, pad text) WITH (autovacuum_enabled = off);
CREATE TABLE pb (k int, pad text) WITH (autovacuum_enabled = off);
CREATE INDEX pf_k ON pf USING fastbtree (k);
CREATE INDEX pb_k ON pb USING btree (k);
INSERT INTO pf SELECT i, repeat('p', 20) FROM generate_series(1, 60000) i;
INSERT INTO pb SELECT i, repeat('p', 20) FROM generate_series(1, 60000) i;
CREATE TABLE sizes AS SELECT npages('pf_k') AS f0, 0::bigint AS d0;
DELETE FROM pf WHERE k BETWEEN 500 AND 40000 OR k > 59000;
DELETE FROM pb WHERE k BETWEEN 500 AND 40000 OR k > 59000;
VACUUM pf;
VACUUM pb;
SELECT ndeleted('pf_k') > 100 AS leaves_deleted, page_types('pf_k') ~ 'e' AS any_half_dead
FROM sizes;
SELECT all_rows('pf', true) = all_rows('pf', false) AS same_as_seqscan,
	all_rows('pf', true) = all_rows('pb', true) AS same_as_btree;
SELECT fastbtree_check('pf_k', true);
-- cursors across the deleted range, both ways
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
BEGIN;
DECLARE cf SCROLL CURSOR FOR SELECT k FROM pf WHERE k > 490 ORDER BY k;
DECLARE cb SCROLL CURSOR FOR SELECT k FROM pb WHERE k > 490 ORDER BY k;
FETCH 12 FROM cf;
FETCH BACKWARD 3 FROM cf;
FETCH FORWARD 5 FROM cf;
FETCH LAST FROM cf;
FETCH BACKWARD 2 FROM cf;
MOVE ABSOLUTE 8 IN cf;
FETCH BACKWARD 9 FROM cf;
COMMIT;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;

--
-- Reinsert into the deleted range.  Recycling needs a second pass (and
-- transactions since the deletion, so that every snapshot is newer than
-- the deleted pages' safexid): then the new entries' splits reuse the
-- deleted pages instead of extending the index.  The pass has one dead
-- row to remove, so VACUUM skips the index's bulk delete (as for btree)
-- and only its cleanup runs: it scans because the last pass left more
-- deleted pages than a twentieth of the index (btree's rule).
--
INSERT INTO pf VALUES (-1, 'xid');
INSERT INTO pb VALUES (-1, 'xid');
DELETE FROM pf WHERE k = -1;
DELETE FROM pb WHERE k = -1;
VACUUM pf;
VACUUM pb;
TRUNCATE sizes;
INSERT INTO sizes SELECT npages('pf_k'), ndeleted('pf_k');
INSERT INTO pf SELECT i, 'again' FROM generate_series(1000, 30000, 2) i;
INSERT INTO pb SELECT i, 'again' FROM generate_series(1000, 30000, 2) i;
SELECT npages('pf_k') = f0 AS no_growth, d0 > 100 AS were_deleted,
	ndeleted('pf_k') < d0 AS pages_reused
FROM sizes;
SELECT all_rows('pf', true) = all_rows('pf', false) AS same_as_seqscan,
	all_rows('pf', true) = all_rows('pb', true) AS same_as_btree;
SELECT fastbtree_check('pf_k', true);

--
-- Half-dead pages, as a crash between the two steps of a deletion leaves
-- them (fastbtree.debug_pagedel_halfdead_only, in builds with assertions,
-- stops each deletion after its first record): every reader steps over
-- them, inserts go to the right sibling that owns their range,
-- fastbtree_check accepts them, and the next VACUUM unlinks them.
--
CREATE TABLE hf (k int, pad text) WITH (autovacuum_enabled = off);
CREATE TABLE hb (k int, pad text) WITH (autovacuum_enabled = off);
CREATE INDEX hf_k ON hf USING fastbtree (k);
CREATE INDEX hb_k ON hb USING btree (k);
INSERT INTO hf SELECT i, repeat('h', 20) FROM generate_series(1, 30000) i;
INSERT INTO hb SELECT i, repeat('h', 20) FROM generate_series(1, 30000) i;
DELETE FROM hf WHERE k BETWEEN 200 AND 25000;
DELETE FROM hb WHERE k BETWEEN 200 AND 25000;
SET fastbtree.debug_pagedel_halfdead_only = on;
VACUUM hf;
RESET fastbtree.debug_pagedel_halfdead_only;
VACUUM hb;
SELECT page_types('hf_k') ~ 'e:' AS half_dead, ndeleted('hf_k') AS deleted;
SELECT all_rows('hf', true) = all_rows('hf', false) AS same_as_seqscan,
	all_rows('hf', true) = all_rows('hb', true) AS same_as_btree;
SELECT fastbtree_check('hf_k', true);
INSERT INTO hf SELECT i, 'in' FROM generate_series(300, 24000, 97) i;
INSERT INTO hb SELECT i, 'in' FROM generate_series(300, 24000, 97) i;
SELECT all_rows('hf', true) = all_rows('hb', true) AS same_as_btree_after_inserts;
SELECT fastbtree_check('hf_k', true);
DELETE FROM hf WHERE pad = 'in';
DELETE FROM hb WHERE pad = 'in';
-- (so few dead rows that VACUUM would skip the bulk delete: force it)
VACUUM (INDEX_CLEANUP ON) hf;
VACUUM (INDEX_CLEANUP ON) hb;
SELECT page_types('hf_k') ~ 'e:' AS half_dead_left, ndeleted('hf_k') > 10 AS deleted;
-- an empty leaf whose right sibling is half-dead waits: the sibling has
-- no downlink of its own to take over the leaf's range.  The pass that
-- unlinks the sibling (it reaches the leaf first, in physical order)
-- leaves the leaf for a later pass, as btree does; it must not fail.
CREATE TABLE hr (k int) WITH (autovacuum_enabled = off);
INSERT INTO hr SELECT i FROM generate_series(1, 100000) i;
CREATE INDEX hr_k ON hr USING fastbtree (k);
DELETE FROM hr WHERE k BETWEEN 3295 AND 3660;
SET fastbtree.debug_pagedel_halfdead_only = on;
VACUUM (INDEX_CLEANUP ON) hr;
RESET fastbtree.debug_pagedel_halfdead_only;
SELECT page_types('hr_k') ~ 'e:1 ' AS one_half_dead;
DELETE FROM hr WHERE k BETWEEN 2929 AND 3294;
VACUUM (INDEX_CLEANUP ON) hr;
SELECT page_types('hr_k') ~ 'e:' AS half_dead_left, ndeleted('hr_k') AS deleted;
SELECT all_rows('hr', true) = all_rows('hr', false) AS same_as_seqscan;
SELECT fastbtree_check('hr_k', true);
SELECT all_rows('hf', true) = all_rows('hb', true) AS same_as_btree;
SELECT fastbtree_check('hf_k', true);

--
-- A queue: the oldest keys deleted, as many new ones added at the top,
-- VACUUM, round after round.  The index stays the same size, and the
-- smallest key is found without reading the emptied pages.
--
CREATE TABLE qf (k int8, pad text) WITH (autovacuum_enabled = off);
CREATE TABLE qb (k int8, pad text) WITH (autovacuum_enabled = off);
CREATE INDEX qf_k ON qf USING fastbtree (k);
CREATE INDEX qb_k ON qb USING btree (k);
INSERT INTO qf SELECT i, 'payload' FROM generate_series(1, 20000) i;
INSERT INTO qb SELECT i, 'payload' FROM generate_series(1, 20000) i;
CREATE FUNCTION queue_round() RETURNS void
LANGUAGE sql AS $$
	DELETE FROM qf WHERE k < (SELECT min(k) FROM qf) + 10000;
	INSERT INTO qf SELECT (SELECT max(k) FROM qf) + i, 'payload' FROM generate_series(1, 10000) i;
	DELETE FROM qb WHERE k < (SELECT min(k) FROM qb) + 10000;
	INSERT INTO qb SELECT (SELECT max(k) FROM qb) + i, 'payload' FROM generate_series(1, 10000) i;
$$;
-- three rounds (each statement of its own: VACUUM cannot run in a
-- function), then the size, then three more
CREATE VIEW three_rounds AS
	SELECT s FROM generate_series(1, 3) g,
		unnest(ARRAY['SELECT queue_round()', 'VACUUM qf', 'VACUUM qb'])
			WITH ORDINALITY u(s, o)
	ORDER BY g, o;
SELECT s FROM three_rounds \gexec
TRUNCATE sizes;
INSERT INTO sizes SELECT npages('qf_k'), 0;
SELECT s FROM three_rounds \gexec
-- (without recycling each round would add about 30 pages)
SELECT npages('qf_k') <= f0 + 3 AS flat, npages('qf_k') <= npages('qb_k') * 1.1 AS within_btree
FROM sizes;
SELECT all_rows('qf', true) = all_rows('qf', false) AS same_as_seqscan,
	all_rows('qf', true) = all_rows('qb', true) AS same_as_btree;
SELECT fastbtree_check('qf_k', true);

--
-- Whole subtrees (nbtree README, "Page Deletion"): with keys of about 650
-- incompressible bytes a page holds about ten, so 4,000 rows make a tree
-- of four levels.  Deleting most of the key range empties whole subtrees:
-- VACUUM deletes their leaves and the internal pages left without a
-- child (a subtree's top page goes with its leaf, handed over in one
-- half-dead step), as btree does: the same pages on every level.  Scans
-- step over them, and reinserts rebuild the range, reusing pages deleted
-- on every level.
--
CREATE EXTENSION pageinspect SCHEMA fbt_pagedel;
CREATE FUNCTION wide(i int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT lpad(i::text, 6, '0') ||
		(SELECT string_agg(md5(i::text || j::text), '') FROM generate_series(1, 20) j)
$$;
-- pages of an index by level, live or deleted: 'level:kind:count ...'
CREATE FUNCTION fbt_levels(idx regclass) RETURNS text
LANGUAGE sql AS $$
	SELECT string_agg(level || ':' || kind || ':' || n, ' ' ORDER BY level, kind)
	FROM (SELECT s.level, CASE WHEN s.type = 'd' THEN 'deleted' ELSE 'live' END AS kind,
			count(*) AS n
		  FROM generate_series(1, npages(idx) - 1) b,
			LATERAL fastbtree_page_stats(idx, b) s
		  GROUP BY 1, 2) t
$$;
CREATE FUNCTION bt_levels(idx regclass) RETURNS text
LANGUAGE sql AS $$
	SELECT string_agg(level || ':' || kind || ':' || n, ' ' ORDER BY level, kind)
	FROM (SELECT s.btpo_level AS level,
			CASE WHEN s.type IN ('d', 'D') THEN 'deleted' ELSE 'live' END AS kind,
			count(*) AS n
		  FROM generate_series(1, npages(idx) - 1) b,
			LATERAL bt_page_stats(idx::text, b::int) s
		  GROUP BY 1, 2) t
$$;
CREATE TABLE tf (k text) WITH (autovacuum_enabled = off);
CREATE TABLE tb (k text) WITH (autovacuum_enabled = off);
INSERT INTO tf SELECT wide(i) FROM generate_series(1, 4000) i;
INSERT INTO tb SELECT k FROM tf;
CREATE INDEX tf_k ON tf USING fastbtree (k);
CREATE INDEX tb_k ON tb USING btree (k);
SELECT level AS root_level FROM fastbtree_metap('tf_k');
SELECT fbt_levels('tf_k') = bt_levels('tb_k') AS same_pages_as_btree;
DELETE FROM tf WHERE k BETWEEN '000500' AND '003000';
DELETE FROM tb WHERE k BETWEEN '000500' AND '003000';
VACUUM tf;
VACUUM tb;
SELECT fbt_levels('tf_k') AS pages;
SELECT fbt_levels('tf_k') = bt_levels('tb_k') AS same_pages_as_btree;
SELECT all_rows('tf', true) = all_rows('tf', false) AS same_as_seqscan,
	all_rows('tf', true) = all_rows('tb', true) AS same_as_btree;
SELECT fastbtree_check('tf_k', true);
-- probes into the deleted range, and a cursor across it both ways
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
SELECT left(k, 6) FROM tf WHERE k >= '001' ORDER BY k LIMIT 2;
SELECT left(k, 6) FROM tf WHERE k < '003' ORDER BY k DESC LIMIT 2;
BEGIN;
DECLARE ct SCROLL CURSOR FOR SELECT left(k, 6) FROM tf WHERE k > '000490' ORDER BY k;
FETCH 12 FROM ct;
FETCH BACKWARD 13 FROM ct;
COMMIT;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;
-- reinsert the range: a pass after more transactions recycles the pages
-- deleted on every level, and the splits reuse them
INSERT INTO tf VALUES ('xid');
DELETE FROM tf WHERE k = 'xid';
VACUUM tf;
TRUNCATE sizes;
INSERT INTO sizes SELECT npages('tf_k'), ndeleted('tf_k');
INSERT INTO tf SELECT wide(i) FROM generate_series(500, 3000) i;
INSERT INTO tb SELECT wide(i) FROM generate_series(500, 3000) i;
SELECT ndeleted('tf_k') < d0 - 200 AS pages_reused,
	npages('tf_k') <= npages('tb_k') AS within_btree,
	fbt_levels('tf_k') ~ '^0:live:\d+ 1:live:\d+ 2:live:\d+ 3:live:1$' AS all_reused
FROM sizes;
SELECT all_rows('tf', true) = all_rows('tf', false) AS same_as_seqscan,
	all_rows('tf', true) = all_rows('tb', true) AS same_as_btree;
SELECT fastbtree_check('tf_k', true);

--
-- A crash inside a subtree's deletion (fastbtree.debug_pagedel_unlinks,
-- builds with assertions: VACUUM stops each deletion after that many
-- unlink steps): with none, the subtree's parent has lost its downlink
-- and the leaf, half-dead, names the subtree's top page; with one, the
-- top page is gone and the leaf names the next one down.  Readers and
-- inserts find everything, fastbtree_check accepts the pages without a
-- downlink, and the next VACUUM finishes the deletions.
--
CREATE TABLE cf (k text) WITH (autovacuum_enabled = off);
INSERT INTO cf SELECT wide(i) FROM generate_series(1, 4000) i;
CREATE INDEX cf_k ON cf USING fastbtree (k);
DELETE FROM cf WHERE k BETWEEN '000500' AND '003000';
SET fastbtree.debug_pagedel_unlinks = 0;
VACUUM cf;
SELECT page_types('cf_k') ~ 'e:' AS half_dead, fbt_levels('cf_k') ~ ' [12]:deleted' AS internal_deleted;
SELECT all_rows('cf', true) = all_rows('cf', false) AS same_as_seqscan;
SELECT fastbtree_check('cf_k', true);
-- (each pass needs a dead row, else VACUUM skips the index's bulk delete)
DELETE FROM cf WHERE k = wide(100);
SET fastbtree.debug_pagedel_unlinks = 1;
VACUUM (INDEX_CLEANUP ON) cf;
SELECT page_types('cf_k') ~ 'e:' AS half_dead, fbt_levels('cf_k') ~ ' [12]:deleted' AS internal_deleted;
SELECT all_rows('cf', true) = all_rows('cf', false) AS same_as_seqscan;
SELECT fastbtree_check('cf_k', true);
RESET fastbtree.debug_pagedel_unlinks;
INSERT INTO cf SELECT wide(i) FROM generate_series(600, 2900, 7) i;
SELECT all_rows('cf', true) = all_rows('cf', false) AS same_as_seqscan_after_inserts;
SELECT fastbtree_check('cf_k', true);
DELETE FROM cf WHERE k = wide(101);
VACUUM (INDEX_CLEANUP ON) cf;
SELECT page_types('cf_k') ~ 'e:' AS half_dead_left, fbt_levels('cf_k') ~ ' [12]:deleted' AS internal_deleted;
SELECT all_rows('cf', true) = all_rows('cf', false) AS same_as_seqscan;
SELECT fastbtree_check('cf_k', true);

-- the leftmost subtree: after the half-dead step the leftmost level-1
-- page has no downlink, and the walk of its level starts right of it;
-- then with the half-dead leaves at the left end of the leaf level
CREATE TABLE lf (k text) WITH (autovacuum_enabled = off);
INSERT INTO lf SELECT wide(i) FROM generate_series(1, 4000) i;
CREATE INDEX lf_k ON lf USING fastbtree (k);
DELETE FROM lf WHERE k < '000091';
SET fastbtree.debug_pagedel_unlinks = 0;
VACUUM lf;
SELECT page_types('lf_k') ~ 'e:' AS half_dead;
SELECT fastbtree_check('lf_k', true);
DELETE FROM lf WHERE k = wide(100);
SET fastbtree.debug_pagedel_unlinks = 1;
VACUUM (INDEX_CLEANUP ON) lf;
SELECT page_types('lf_k') ~ 'e:' AS half_dead, fbt_levels('lf_k') ~ ' 1:deleted:1 ' AS top_deleted;
SELECT fastbtree_check('lf_k', true);
RESET fastbtree.debug_pagedel_unlinks;
DELETE FROM lf WHERE k = wide(101);
VACUUM (INDEX_CLEANUP ON) lf;
SELECT page_types('lf_k') ~ 'e:' AS half_dead_left, left(min(k), 6) AS min_k FROM lf;
SELECT all_rows('lf', true) = all_rows('lf', false) AS same_as_seqscan;
SELECT fastbtree_check('lf_k', true);

--
-- Keys inserted in descending order: leaves split to the left, so a
-- parent's last child lies at a lower block than its left siblings and the
-- physical-order scan has passed it when they go.  The pass goes on to an
-- emptied right sibling (nbtree's loop), so the first VACUUM already
-- deletes the internal pages, as btree's does.
--
CREATE TABLE df (k text) WITH (autovacuum_enabled = off);
CREATE INDEX df_k ON df USING fastbtree (k);
INSERT INTO df SELECT wide(i) FROM generate_series(4000, 1, -1) i;
DELETE FROM df WHERE k BETWEEN '000500' AND '003000';
VACUUM df;
SELECT fbt_levels('df_k') ~ ' 1:deleted:[1-9][0-9]+ ' AS internal_deleted, page_types('df_k') ~ 'e:' AS half_dead;
SELECT all_rows('df', true) = all_rows('df', false) AS same_as_seqscan;
SELECT fastbtree_check('df_k', true);

SET client_min_messages = warning;
\i sql/include/check_all.sql
DROP SCHEMA fbt_pagedel CASCADE;
