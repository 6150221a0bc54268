-- title: = ANY of 100 nearby keys (every other aid: many on each leaf), summed through the heap
-- data: accounts
-- index: @accounts@ @accounts_idx@
-- gucs: enable_bitmapscan=off
\set a random(1, 100000 * :scale - 200)
-- expect: Index Scan using @accounts_idx@ on @accounts@
SELECT sum(abalance) FROM @accounts@ WHERE aid = ANY(ARRAY(SELECT generate_series(:a, :a + 198, 2)));
