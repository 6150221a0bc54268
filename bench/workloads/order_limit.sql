-- title: ORDER BY aid LIMIT 20 from a random start
-- data: accounts
-- index: @accounts@ @accounts_idx@
\set a random(1, 100000 * :scale - 20)
-- expect: Limit
-- expect: Index Scan using @accounts_idx@ on @accounts@
SELECT aid, abalance FROM @accounts@ WHERE aid > :a ORDER BY aid LIMIT 20;
