--
-- recent_buffers: internal pages pinned through recent-buffer hints
-- (fastbtree.recent_buffers) give the same answers, and the same
-- per-relation buffer statistics, as pinned through ReadBuffer().
--
CREATE SCHEMA fbt_recent;
SET search_path = fbt_recent, public;

CREATE TABLE rb (k int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO rb SELECT g, g % 1000 FROM generate_series(1, 300000) g;
CREATE INDEX rb_f ON rb USING fastbtree (k);
VACUUM ANALYZE rb;
SELECT level FROM fastbtree_metap('rb_f');

-- n point lookups through the index: matches, and the index blocks they
-- fetched and found in shared buffers, from this transaction's statistics
CREATE FUNCTION probes(n int, OUT matches bigint, OUT fetched bigint,
	OUT hit bigint)
LANGUAGE plpgsql AS $$
DECLARE
	f0 bigint := pg_stat_get_xact_blocks_fetched('rb_f'::regclass);
	h0 bigint := pg_stat_get_xact_blocks_hit('rb_f'::regclass);
	c bigint;
	i int;
BEGIN
	matches := 0;
	FOR i IN 1 .. n LOOP
		SELECT count(*) INTO c FROM rb WHERE k = (i * 7919) % 300000 + 1;
		matches := matches + c;
	END LOOP;
	fetched := pg_stat_get_xact_blocks_fetched('rb_f'::regclass) - f0;
	hit := pg_stat_get_xact_blocks_hit('rb_f'::regclass) - h0;
END $$;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
-- warm the caches (metapage, hints, shared buffers)
SELECT matches FROM probes(200);

-- 200 lookups: 3 index blocks each, all hits, both ways
SET fastbtree.recent_buffers = on;
SELECT * FROM probes(200);
SET fastbtree.recent_buffers = off;
SELECT * FROM probes(200);

-- a range scan and the index's own descent to the ends, both ways
SET fastbtree.recent_buffers = on;
SELECT count(*), sum(v) FROM rb WHERE k BETWEEN 1000 AND 250000;
SELECT min(k), max(k) FROM rb;
SET fastbtree.recent_buffers = off;
SELECT count(*), sum(v) FROM rb WHERE k BETWEEN 1000 AND 250000;
SELECT min(k), max(k) FROM rb;

-- writes with hints on: splits move keys to new pages, hints go stale
SET fastbtree.recent_buffers = on;
INSERT INTO rb SELECT g, 0 FROM generate_series(300001, 320000) g;
SELECT * FROM probes(200);
SELECT count(*) FROM rb WHERE k > 299990;

RESET fastbtree.recent_buffers;
RESET enable_seqscan;
RESET enable_bitmapscan;
\i sql/include/check_all.sql
RESET search_path;
DROP SCHEMA fbt_recent CASCADE;
