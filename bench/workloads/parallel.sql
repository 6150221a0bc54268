-- title: Parallel index scan: count(*) and sum() over 500,000 rows (half the table at scale 10), 2 workers per query
-- data: accounts
-- index: @accounts@ @accounts_idx@
-- gucs: max_parallel_workers_per_gather=2 enable_bitmapscan=off
-- expect: Parallel Index Scan using @accounts_idx@ on @accounts@
SELECT count(*), sum(abalance) FROM @accounts@ WHERE aid BETWEEN 250001 AND 750000;
