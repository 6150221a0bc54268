-- title: Range scan, forward: 1,000 rows summed through the heap
-- data: accounts
-- index: @accounts@ @accounts_idx@
-- gucs: enable_bitmapscan=off
\set a random(1, 100000 * :scale - 1000)
-- expect: Index Scan using @accounts_idx@ on @accounts@
SELECT sum(abalance) FROM @accounts@ WHERE aid BETWEEN :a AND :a + 999;
