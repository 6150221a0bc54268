--
-- unique_hints: a unique check that finds an equal entry whose heap
-- versions are all dead to every snapshot marks it LP_DEAD (and its page
-- FBTP_HAS_GARBAGE), as btree's _bt_check_unique does, so that later
-- checks of a churned key skip it instead of fetching it from the heap.
--
-- The tables have autovacuum off and nothing else holds a snapshot, so a
-- row deleted by a committed transaction is dead to all by the time the
-- next statement's unique check looks at it.  Statements read the tables
-- by sequential scans, so that index scans (kill_prior_tuple) mark
-- nothing: every mark below is a unique check's.  pageinspect shows
-- btree's marks; fastbtree_page_items / fastbtree_page_stats show ours.
--
CREATE SCHEMA fbt_unique_hints;
SET search_path = fbt_unique_hints, public;
-- PostgreSQL 15's NOTICE for unique fastbtree indexes (ON CONFLICT cannot
-- use them) is tested in unique_core
SET client_min_messages = warning;
CREATE EXTENSION pageinspect SCHEMA fbt_unique_hints;
\i sql/include/both_ams.sql
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;

-- The entries of key 50 in a one-leaf index, in index order, as
-- "heap ctid:dead", then whether the leaf's has-garbage flag is set (bit
-- 64 in both access methods).
CREATE FUNCTION key50(am text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	entries text;
	garbage boolean;
BEGIN
	IF am = 'btree' THEN
		SELECT string_agg(ctid || ':' || dead, ' ' ORDER BY itemoffset)
			INTO entries
		FROM bt_page_items('h_btree_k', 1)
		WHERE data = '32 00 00 00 00 00 00 00';
		SELECT btpo_flags & 64 <> 0 INTO garbage
		FROM bt_page_stats('h_btree_k', 1);
	ELSE
		SELECT string_agg(ctid || ':' || dead, ' ' ORDER BY itemoffset)
			INTO entries
		FROM fastbtree_page_items('h_fastbtree_k', 1)
		WHERE data = '32 00 00 00 00 00 00 00';
		SELECT flags & 64 <> 0 INTO garbage
		FROM fastbtree_page_stats('h_fastbtree_k', 1);
	END IF;
	RETURN entries || ' garbage=' || garbage;
END
$$;

CREATE FUNCTION key50_both()
RETURNS TABLE (am text, entries text, same boolean)
LANGUAGE sql AS $$
	SELECT a, key50(a), CASE WHEN a = 'fastbtree'
		THEN key50('fastbtree') = key50('btree') END
	FROM unnest(ARRAY['btree', 'fastbtree']) a
$$;

--
-- 1. One leaf, compared with btree: 100 rows leave the leaf (block 1, the
-- root of both indexes) far from full, so btree deletes nothing before
-- inserting and the two pages can be compared entry by entry.
--
CREATE TABLE h_btree (k int, v text) WITH (autovacuum_enabled = off);
CREATE TABLE h_fastbtree (LIKE h_btree) WITH (autovacuum_enabled = off);
SELECT * FROM both_ams('CREATE UNIQUE INDEX h_@_k ON h_@ USING @ (k)');
SELECT * FROM both_ams('INSERT INTO h_@ SELECT i, ''v'' || i FROM generate_series(1, 100) i');
SELECT root, level FROM bt_metap('h_btree_k');
SELECT root, level FROM fastbtree_metap('h_fastbtree_k');
SELECT * FROM key50_both();
-- delete and commit: the entry is still unmarked (nobody has looked)
SELECT * FROM both_ams('DELETE FROM h_@ WHERE k = 50');
SELECT * FROM key50_both();
-- the unique check of the reinsert finds the old row dead to all: marked
SELECT * FROM both_ams('INSERT INTO h_@ VALUES (50, ''round 1'')');
SELECT * FROM key50_both();
-- three more rounds: each check marks the entry the previous round left
SELECT * FROM both_ams('DELETE FROM h_@ WHERE k = 50');
SELECT * FROM both_ams('INSERT INTO h_@ VALUES (50, ''round 2'')');
SELECT * FROM both_ams('DELETE FROM h_@ WHERE k = 50');
SELECT * FROM both_ams('INSERT INTO h_@ VALUES (50, ''round 3'')');
SELECT * FROM both_ams('DELETE FROM h_@ WHERE k = 50');
SELECT * FROM both_ams('INSERT INTO h_@ VALUES (50, ''round 4'')');
SELECT * FROM key50_both();
-- the live entry still conflicts, and the dead ones hide nothing
SELECT * FROM both_ams('INSERT INTO h_@ VALUES (50, ''dup'')');
RESET enable_indexscan;
SELECT * FROM both_rows('SELECT k, v FROM h_@ WHERE k BETWEEN 49 AND 51 ORDER BY k');
SET enable_indexscan = off;

-- A row deleted by a transaction that is still open is not dead to all:
-- the check waits for nobody (the deleter is this transaction) and marks
-- nothing.
BEGIN;
DELETE FROM h_fastbtree WHERE k = 50;
INSERT INTO h_fastbtree VALUES (50, 'round 5');
SELECT key50('fastbtree');
COMMIT;

--
-- 2. Dead entries on several leaves: a thousand deletes and reinserts of
-- key 5 in one transaction leave 1001 entries of the key over several
-- leaves, none marked (their deleter was still running at each check).
-- The next reinsert's check walks right over all of them and marks every
-- one, on the leaf it holds exclusively and on the right siblings it
-- share-locks.  (No btree twin: btree's bottom-up deletion removes some of
-- these entries while the loop runs.)  Deduplication is off, so that the
-- versions stay separate entries spread over several leaves.
--
CREATE TABLE m (k int, v text) WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX m_k ON m USING fastbtree (k) WITH (deduplicate_items = off);
INSERT INTO m SELECT i, 'v' || i FROM generate_series(1, 10) i;
DO $d$
BEGIN
	FOR i IN 1..1000 LOOP
		DELETE FROM m WHERE k = 5;
		INSERT INTO m VALUES (5, 'round ' || i);
	END LOOP;
END
$d$;
CREATE FUNCTION m_leaves(OUT leaves bigint, OUT with_dead bigint,
	OUT dead bigint, OUT garbage_flag bigint)
LANGUAGE sql AS $$
	SELECT count(*), count(*) FILTER (WHERE s.dead_items > 0),
		   sum(s.dead_items), count(*) FILTER (WHERE s.flags & 64 <> 0)
	FROM generate_series(1, pg_relation_size('m_k') / 8192 - 1) b,
		 fastbtree_page_stats('m_k', b) s
	WHERE s.level = 0
$$;
SELECT * FROM m_leaves();
DELETE FROM m WHERE k = 5;
INSERT INTO m VALUES (5, 'after');
SELECT * FROM m_leaves();
-- the marked entries are skipped, the live one is found
INSERT INTO m VALUES (5, 'dup');
RESET enable_indexscan;
SET enable_seqscan = off;
SELECT k, v FROM m WHERE k = 5;
SELECT count(*) FROM m WHERE k BETWEEN 1 AND 10;
RESET ALL;

SET client_min_messages = warning;
\i sql/include/check_all.sql
DROP SCHEMA fbt_unique_hints CASCADE;
