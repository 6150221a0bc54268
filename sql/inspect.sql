--
-- inspect: fastbtree_metap, fastbtree_page_stats, fastbtree_page_items and
-- fastbtree_check on a small index of known shape, and their errors.
--
CREATE SCHEMA fbt_inspect;
SET search_path = fbt_inspect, public;

CREATE TABLE t (k int4, pad text);
INSERT INTO t SELECT g, repeat('x', 20) FROM generate_series(1, 1000) g;
CREATE INDEX t_k ON t USING fastbtree (k);
CREATE INDEX t_k_bt ON t USING btree (k);

-- 1000 int4 keys at fillfactor 90 fill three leaves under a root
SELECT magic = x'0FB7EE01'::int AS magic_ok, version, root, level
FROM fastbtree_metap('t_k');
SELECT blkno, s.type, s.live_items, s.dead_items, s.avg_item_size,
	   s.prev, s.next, s.level, s.flags
FROM generate_series(0, pg_relation_size('t_k') / 8192 - 1) blkno,
	fastbtree_page_stats('t_k', blkno) s
ORDER BY blkno;
-- the root: a minus-infinity downlink, then one-attribute pivots
SELECT itemoffset, ctid, itemlen, pivot, natts, htid, data
FROM fastbtree_page_items('t_k', (SELECT root FROM fastbtree_metap('t_k')));
-- a leaf: high key (a pivot), then data items with their heap TIDs
SELECT itemoffset, ctid, itemlen, nulls, vars, pivot, natts, htid, data
FROM fastbtree_page_items('t_k', 1) WHERE itemoffset <= 3;

-- duplicates kept apart force a pivot that keeps the heap TID
CREATE TABLE d (k int4);
INSERT INTO d SELECT 7 FROM generate_series(1, 2000);
CREATE INDEX d_k ON d USING fastbtree (k) WITH (deduplicate_items = off);
SELECT itemoffset, pivot, natts, htid IS NOT NULL AS has_heap_tid
FROM fastbtree_page_items('d_k', (SELECT root FROM fastbtree_metap('d_k')))
ORDER BY itemoffset LIMIT 3;
-- merged, they are posting lists on one leaf: ctid holds the TID array's
-- offset and count, htid its first TID, tids all of them
CREATE INDEX d_k2 ON d USING fastbtree (k);
SELECT root, level, allequalimage FROM fastbtree_metap('d_k2');
SELECT itemoffset, ctid, itemlen, pivot, natts, htid, array_length(tids, 1) AS ntids,
	tids[1] = htid AS first_is_htid,
	tids[array_length(tids, 1)] AS last_tid
FROM fastbtree_page_items('d_k2', 1) ORDER BY itemoffset;
SELECT type, live_items, avg_item_size FROM fastbtree_page_stats('d_k2', 1);

SELECT fastbtree_check('t_k');
SELECT fastbtree_check('t_k', heapallindexed => true);
SELECT fastbtree_check('d_k', true);

-- four levels: 480-byte keys (below the 512 bytes at which index tuples
-- are compressed, and pivots keep them whole) fit only a dozen or so to a
-- page, so the checker matches every page below the root to its downlink
-- across many parent pages
CREATE TABLE w (k text);
INSERT INTO w SELECT repeat(md5(g::text), 15) FROM generate_series(1, 3000) g;
CREATE INDEX w_k ON w USING fastbtree (k);
SELECT level FROM fastbtree_metap('w_k');
SELECT count(*) > 10 AS many_parents
FROM generate_series(1, pg_relation_size('w_k') / 8192 - 1) blkno,
	fastbtree_page_stats('w_k', blkno) s
WHERE s.level = 1;
SELECT fastbtree_check('w_k', true);

-- an empty index has no root
CREATE TABLE e (k int4);
CREATE INDEX e_k ON e USING fastbtree (k);
SELECT version, root, level FROM fastbtree_metap('e_k');
SELECT fastbtree_check('e_k', true);

-- errors
\set VERBOSITY default
SELECT * FROM fastbtree_page_stats('t_k', 1000);
SELECT * FROM fastbtree_page_items('t_k', -1);
SELECT * FROM fastbtree_metap('t_k_bt');
SELECT * FROM fastbtree_page_stats('t', 0);
SELECT fastbtree_check('t');
SELECT fastbtree_check('t_k_bt');

-- a partitioned index has no pages: the checker and the inspection
-- functions say so (instead of reading a block that does not exist), and
-- each partition's index is checked on its own
CREATE TABLE pti (k int) PARTITION BY RANGE (k);
CREATE TABLE pti_1 PARTITION OF pti FOR VALUES FROM (0) TO (1000);
INSERT INTO pti SELECT generate_series(0, 999);
CREATE INDEX pti_k ON pti USING fastbtree (k);
SELECT fastbtree_check('pti_k');
SELECT fastbtree_check('pti_k', true);
SELECT * FROM fastbtree_metap('pti_k');
SELECT * FROM fastbtree_page_stats('pti_k', 1);
SELECT fastbtree_check(c.oid::regclass, true) FROM pg_inherits h
	JOIN pg_class c ON c.oid = h.inhrelid
WHERE h.inhparent = 'pti_k'::regclass;

-- metapage and page contents, the checker and the probe benchmark are for
-- superusers unless granted
CREATE ROLE regress_fbt_inspect_user;
GRANT USAGE ON SCHEMA fbt_inspect TO regress_fbt_inspect_user;
GRANT SELECT ON t TO regress_fbt_inspect_user;
SET ROLE regress_fbt_inspect_user;
SELECT * FROM fastbtree_page_items('t_k', 1);
SELECT fastbtree_check('t_k');
SELECT version, level FROM fastbtree_metap('t_k');
SELECT * FROM fastbtree_probe('t_k', ARRAY[1, 2]);
RESET ROLE;

DROP SCHEMA fbt_inspect CASCADE;
DROP ROLE regress_fbt_inspect_user;
