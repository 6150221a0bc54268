--
-- Deletion of dead entries before a leaf split (fbtdelete.c): simple
-- deletion of LP_DEAD entries, bottom-up deletion of version churn, and
-- the unique-check path, each on a fastbtree table beside a btree twin
-- that receives exactly the same statements (so the same heap TIDs).
-- Asserted: the index does not grow where dead entries can make room, it
-- is never much larger than btree's (deduplicate_items = off on the btree
-- twins: fastbtree has no posting lists yet), every answer through the
-- index equals btree's, and fastbtree_check passes after each step.
--
CREATE SCHEMA fbt_deletion;
SET search_path = fbt_deletion, public;

\i sql/include/leaf_stats.sql

-- count and (k, ctid) of the rows with k in [lo, hi]: through whatever
-- index scan the planner picks (via_index), or by a sequential scan (the
-- truth)
CREATE FUNCTION rows_in(tbl regclass, lo int, hi int, via_index bool)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r	text;
BEGIN
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('enable_seqscan', (NOT via_index)::text, true);
	PERFORM set_config('enable_indexscan', via_index::text, true);
	PERFORM set_config('enable_indexonlyscan', via_index::text, true);
	EXECUTE format('SELECT count(*) || '':'' || md5(string_agg(k || '':'' || ctid, '','')) '
				   'FROM (SELECT k, ctid FROM %s WHERE k BETWEEN %s AND %s ORDER BY k, ctid) s',
				   tbl, lo, hi) INTO r;
	RETURN r;
END
$$;

--
-- Simple deletion.  Even keys in ascending order, then a range deleted and
-- read through the index (kill_prior_tuple marks the entries LP_DEAD),
-- then odd keys inserted into the same leaves: they take the dead
-- entries' space instead of splitting the leaves.
--
CREATE TABLE sf (k int, pad text) WITH (autovacuum_enabled = off);
CREATE TABLE sb (k int, pad text) WITH (autovacuum_enabled = off);
CREATE INDEX sf_k ON sf USING fastbtree (k);
CREATE INDEX sb_k ON sb USING btree (k) WITH (deduplicate_items = off);
INSERT INTO sf SELECT i * 2, 'x' FROM generate_series(1, 20000) i;
INSERT INTO sb SELECT i * 2, 'x' FROM generate_series(1, 20000) i;
CREATE TABLE sizes AS SELECT npages('sf_k') AS f0, npages('sb_k') AS b0;
DELETE FROM sf WHERE k BETWEEN 10000 AND 30000;
DELETE FROM sb WHERE k BETWEEN 10000 AND 30000;
-- no dead entries yet; the scans mark them
SELECT dead_entries('sf_k') AS dead_before_scan;
SELECT rows_in('sf', 1, 50000, true) = rows_in('sf', 1, 50000, false) AS same_rows;
SELECT rows_in('sb', 1, 50000, true) = rows_in('sb', 1, 50000, false) AS same_rows;
SELECT dead_entries('sf_k') AS dead_after_scan;
-- refill the emptied range with odd keys, in random order
INSERT INTO sf SELECT k, 'y' FROM generate_series(10001, 29999, 2) k ORDER BY hashint4(k);
INSERT INTO sb SELECT k, 'y' FROM generate_series(10001, 29999, 2) k ORDER BY hashint4(k);
SELECT npages('sf_k') = f0 AS no_split, npages('sb_k') = b0 AS btree_no_split,
	dead_entries('sf_k') AS dead_left
FROM sizes;
SELECT rows_in('sf', 1, 50000, true) = rows_in('sf', 1, 50000, false) AS same_rows,
	rows_in('sf', 1, 50000, true) = rows_in('sb', 1, 50000, true) AS same_as_btree,
	rows_in('sf', 9990, 10010, true) AS around_the_edge;
SELECT fastbtree_check('sf_k', true);

--
-- The unique-check path: a unique index whose keys are deleted and
-- inserted again, round after round.  Each insert's unique check marks the
-- dead version's entry LP_DEAD; a full leaf then deletes those.
--
CREATE TABLE qf (k int, r int) WITH (autovacuum_enabled = off);
CREATE TABLE qb (k int, r int) WITH (autovacuum_enabled = off);
SET client_min_messages = warning;	-- (15's ON CONFLICT notice)
CREATE UNIQUE INDEX qf_k ON qf USING fastbtree (k);
RESET client_min_messages;
CREATE UNIQUE INDEX qb_k ON qb USING btree (k) WITH (deduplicate_items = off);
INSERT INTO qf SELECT k, 0 FROM generate_series(1, 20000) k;
INSERT INTO qb SELECT k, 0 FROM generate_series(1, 20000) k;
-- Round 1 grows the index: its DELETE and INSERT commit together, so the
-- old entries are not dead yet when the new ones arrive.  From round 2 on,
-- each round's inserts find the previous round's versions dead.
CREATE FUNCTION unique_round(rnd int) RETURNS void
LANGUAGE sql AS $$
	DELETE FROM qf WHERE k % 4 = rnd % 4;
	INSERT INTO qf SELECT k, rnd FROM generate_series(1, 20000) k
		WHERE k % 4 = rnd % 4 ORDER BY hashint4(k + rnd);
	DELETE FROM qb WHERE k % 4 = rnd % 4;
	INSERT INTO qb SELECT k, rnd FROM generate_series(1, 20000) k
		WHERE k % 4 = rnd % 4 ORDER BY hashint4(k + rnd);
$$;
SELECT unique_round(1);	-- (one transaction)
TRUNCATE sizes;
INSERT INTO sizes SELECT npages('qf_k'), npages('qb_k');
DO $$
BEGIN
	FOR rnd IN 2..8 LOOP
		PERFORM unique_round(rnd);
		COMMIT;
	END LOOP;
END
$$;
-- without deletion each round would add about 14 pages (a quarter of the
-- keys again)
SELECT npages('qf_k') <= f0 + 2 AS flat_after_round_1,
	npages('qf_k') <= npages('qb_k') * 1.05 AS within_btree
FROM sizes;
SELECT rows_in('qf', 1, 20000, true) = rows_in('qf', 1, 20000, false) AS same_rows,
	(SELECT count(*) FROM qf) AS nrows;
-- still unique: a live duplicate is refused
INSERT INTO qf VALUES (77, -1);
SELECT fastbtree_check('qf_k', true);

--
-- Bottom-up deletion: non-HOT updates (v is indexed) that leave k alone,
-- so each new version's k entry is a logically unchanged copy.
--
CREATE TABLE uf (k int, v int) WITH (autovacuum_enabled = off);
CREATE TABLE ub (k int, v int) WITH (autovacuum_enabled = off);
CREATE INDEX uf_k ON uf USING fastbtree (k);
CREATE INDEX uf_v ON uf USING fastbtree (v);
CREATE INDEX ub_k ON ub USING btree (k) WITH (deduplicate_items = off);
CREATE INDEX ub_v ON ub USING btree (v) WITH (deduplicate_items = off);
INSERT INTO uf SELECT k, k FROM generate_series(1, 20000) k;
INSERT INTO ub SELECT k, k FROM generate_series(1, 20000) k;
TRUNCATE sizes;
INSERT INTO sizes SELECT npages('uf_k'), npages('ub_k');
DO $$
BEGIN
	FOR rnd IN 1..10 LOOP
		UPDATE uf SET v = v + 1;
		UPDATE ub SET v = v + 1;
		COMMIT;
	END LOOP;
END
$$;
-- no HOT updates happened: the k index got a new entry per row per round
SELECT pg_stat_force_next_flush();
SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
WHERE relname IN ('uf', 'ub') ORDER BY relname;
-- Without deletion it would be 11 times its first size.  Each round's
-- own versions are not dead while it runs, so some growth remains (btree
-- without deduplication grows the same; with it, less).
SELECT npages('uf_k') < f0 * 6 AS bounded_growth,
	npages('uf_k') <= npages('ub_k') * 1.05 AS within_btree
FROM sizes;
SELECT rows_in('uf', 1, 20000, true) = rows_in('uf', 1, 20000, false) AS same_rows,
	rows_in('uf', 1, 20000, true) = rows_in('ub', 1, 20000, true) AS same_as_btree;
SELECT fastbtree_check('uf_k', true), fastbtree_check('uf_v', true);

SET client_min_messages = warning;
\i sql/include/check_all.sql
DROP SCHEMA fbt_deletion CASCADE;
