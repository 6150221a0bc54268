-- title: Range scan, forward: 101 rows summed
-- data: accounts
-- index: @accounts@ @accounts_idx@
-- gucs: enable_bitmapscan=off
\set a random(1, 100000 * :scale - 100)
-- expect: Index Scan using @accounts_idx@ on @accounts@
SELECT sum(abalance) FROM @accounts@ WHERE aid BETWEEN :a AND :a + 100;
