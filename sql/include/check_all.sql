--
-- Every valid fastbtree index the running test left in its schema (each
-- test works in a schema fbt_*, dropped at its end) passes fastbtree_check
-- with heapallindexed; partitioned indexes have no pages of their own,
-- their partitions' indexes are checked.  Included just before the DROP
-- SCHEMA; prints how many indexes were checked.
--
SELECT count(*) AS fastbtree_indexes_checked
FROM (SELECT c.oid
	  FROM pg_class c
		JOIN pg_am a ON a.oid = c.relam
		JOIN pg_index i ON i.indexrelid = c.oid
	  WHERE a.amname = 'fastbtree' AND i.indisvalid AND c.relkind = 'i'
		AND c.relnamespace IN (SELECT oid FROM pg_namespace
							   WHERE nspname LIKE 'fbt\_%')
	  OFFSET 0) f,
	LATERAL fastbtree_check(f.oid::regclass, true);
