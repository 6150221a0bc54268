-- title: Index-only scan: count(*) over 100,000 keys (all-visible heap)
-- data: accounts
-- index: @accounts@ @accounts_idx@
-- gucs: enable_bitmapscan=off enable_seqscan=off
\set a random(1, 100000 * :scale - 99999)
-- expect: Index Only Scan using @accounts_idx@ on @accounts@
-- expect-analyze: Heap Fetches: 0
SELECT count(*) FROM @accounts@ WHERE aid BETWEEN :a AND :a + 99999;
