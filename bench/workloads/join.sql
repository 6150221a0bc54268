-- title: Nested-loop join: 2000 index probes per statement (parameterized inner index scan)
-- data: accounts nl
-- index: @accounts@ @accounts_idx@
-- gucs: enable_hashjoin=off enable_mergejoin=off enable_memoize=off enable_bitmapscan=off
-- expect: Nested Loop
-- expect: Seq Scan on nl_driver d
-- expect: Index Scan using @accounts_idx@ on @accounts@ a
-- expect: Index Cond: (aid = d.aid)
SELECT count(*), sum(a.abalance) FROM nl_driver d JOIN @accounts@ a ON a.aid = d.aid;
