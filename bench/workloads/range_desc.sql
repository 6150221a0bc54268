-- title: Range scan, backward: ORDER BY aid DESC LIMIT 10 within 101 keys
-- data: accounts
-- index: @accounts@ @accounts_idx@
-- gucs: enable_bitmapscan=off
\set a random(1, 100000 * :scale - 100)
-- expect: Limit
-- expect: Index Scan Backward using @accounts_idx@ on @accounts@
SELECT aid, abalance FROM @accounts@ WHERE aid BETWEEN :a AND :a + 100 ORDER BY aid DESC LIMIT 10;
