-- title: Parallel index scan: count(*) and sum() over half the table, 2 workers per query
-- data: accounts
-- index: @accounts@ @accounts_idx@
-- gucs: max_parallel_workers_per_gather=2 enable_bitmapscan=off
\set a random(1, 50000 * :scale)
-- expect: Parallel Index Scan using @accounts_idx@ on @accounts@
SELECT count(*), sum(abalance) FROM @accounts@ WHERE aid BETWEEN :a AND :a + 50000 * :scale - 1;
