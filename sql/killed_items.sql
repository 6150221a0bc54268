--
-- killed_items: entries marked dead (LP_DEAD) by kill_prior_tuple are
-- skipped, but the last one a scan reaches on a leaf still has its keys
-- tested, so that a scan ending there does not read the next leaf for
-- nothing (nbtree tests the high key for the same reason).  The counts of
-- index buffers touched are exact: root and one leaf.
--
CREATE SCHEMA fbt_killed;
SET search_path = fbt_killed, public;

CREATE TABLE kd (k int) WITH (autovacuum_enabled = off);
INSERT INTO kd SELECT g FROM generate_series(1, 2000) g;
CREATE INDEX kd_f ON kd USING fastbtree (k);
VACUUM kd;

-- blocks 1 and 2 are the first two leaves, in key order
SELECT blkno, s.type, s.prev, s.next, s.level
FROM generate_series(1, 2) blkno, fastbtree_page_stats('kd_f', blkno) s;

-- L: last key of leaf 1; F: first key of leaf 2
SELECT k AS l FROM kd
WHERE ctid = (SELECT ctid FROM fastbtree_page_items('kd_f', 1)
			  WHERE NOT pivot ORDER BY itemoffset DESC LIMIT 1) \gset
SELECT k AS f FROM kd
WHERE ctid = (SELECT ctid FROM fastbtree_page_items('kd_f', 2)
			  WHERE NOT pivot ORDER BY itemoffset LIMIT 1) \gset
SELECT :f = :l + 1 AS adjacent;

DELETE FROM kd WHERE k IN (:l, :f);

-- plain index scans over the deleted rows mark their entries dead
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
SELECT count(*) FROM kd WHERE k BETWEEN :l - 3 AND :f + 3;
SELECT count(*) FROM kd WHERE k BETWEEN :l - 3 AND :f + 3;
SELECT i.dead, k.k IS NULL AS row_gone
FROM fastbtree_page_items('kd_f', 1) i LEFT JOIN kd k ON k.ctid = i.ctid
WHERE i.itemoffset = (SELECT max(itemoffset) FROM fastbtree_page_items('kd_f', 1));
SELECT i.dead
FROM fastbtree_page_items('kd_f', 2) i
WHERE i.itemoffset = (SELECT min(itemoffset) FROM fastbtree_page_items('kd_f', 2)
					  WHERE NOT pivot);

-- index blocks a query reads, from this transaction's statistics
CREATE FUNCTION index_blocks(q text, OUT blocks bigint, OUT result text)
LANGUAGE plpgsql AS $$
DECLARE
	b0 bigint := pg_stat_get_xact_blocks_fetched('kd_f'::regclass);
BEGIN
	EXECUTE 'SELECT string_agg(x::text, '','') FROM (' || q || ') s(x)'
		INTO result;
	blocks := pg_stat_get_xact_blocks_fetched('kd_f'::regclass) - b0;
END $$;

-- forward, ending at the dead last entry of leaf 1: root + leaf 1 (the
-- high key, not leaf 2, says the scan is over)
SET enable_indexscan = off;
SET enable_bitmapscan = on;
SELECT * FROM index_blocks(format(
	'SELECT count(*) FROM kd WHERE k BETWEEN %s AND %s', :l - 3, :l));
RESET enable_indexscan;
SET enable_bitmapscan = off;
SELECT * FROM index_blocks(format(
	'SELECT k - %s FROM kd WHERE k BETWEEN %s AND %s ORDER BY k', :l, :l - 3, :l));

-- forward, ending before the dead last entry: the high key again
SELECT * FROM index_blocks(format(
	'SELECT k - %s FROM kd WHERE k BETWEEN %s AND %s ORDER BY k', :l, :l - 3, :l - 1));

-- backward, ending after the dead first entry of leaf 2, which only its
-- key can tell: root + leaf 2
SELECT * FROM index_blocks(format(
	'SELECT k - %s FROM kd WHERE k BETWEEN %s AND %s ORDER BY k DESC', :f, :f + 1, :f + 3));
SET enable_indexonlyscan = on;
SELECT * FROM index_blocks(format(
	'SELECT k - %s FROM kd WHERE k BETWEEN %s AND %s ORDER BY k DESC', :f, :f + 1, :f + 3));
-- a bound the dead entry satisfies: leaf 1 must be read
SELECT * FROM index_blocks(format(
	'SELECT k - %s FROM kd WHERE k BETWEEN %s AND %s ORDER BY k DESC', :f, :f - 2, :f + 3));

-- and the dead entries match nothing, either way
SELECT count(*) FROM kd WHERE k = :l;
SELECT count(*) FROM kd WHERE k = :f;
SELECT count(*) FROM kd WHERE k BETWEEN :l AND :f;

RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;
\i sql/include/check_all.sql
RESET search_path;
DROP SCHEMA fbt_killed CASCADE;
