-- title: Point select (the statement of pgbench -S)
-- data: accounts
-- index: @accounts@ @accounts_idx@
\set aid random(1, 100000 * :scale)
-- expect: Index Scan using @accounts_idx@ on @accounts@
SELECT abalance FROM @accounts@ WHERE aid = :aid;
