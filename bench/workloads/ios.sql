-- title: Index-only scan: count(*) over 1000 keys (all-visible heap)
-- data: accounts
-- index: @accounts@ @accounts_idx@
-- gucs: enable_bitmapscan=off
\set a random(1, 100000 * :scale - 999)
-- expect: Index Only Scan using @accounts_idx@ on @accounts@
-- expect-analyze: Heap Fetches: 0
SELECT count(*) FROM @accounts@ WHERE aid BETWEEN :a AND :a + 999;
