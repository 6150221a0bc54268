-- title: = ANY of 100 keys spread over the index, summed through the heap
-- data: accounts
-- index: @accounts@ @accounts_idx@
-- gucs: enable_bitmapscan=off
\set a random(0, 100000 * :scale - 1)
-- expect: Index Scan using @accounts_idx@ on @accounts@
SELECT sum(abalance) FROM @accounts@ WHERE aid = ANY(ARRAY(SELECT (:a + g * 99991) % (100000 * :scale) + 1 FROM generate_series(0, 99) g));
