-- title: Skip scan: id = x on an index (grp, id) with 10 values of grp (no grp in the query)
-- data: skip
-- index: k_skip_@side@ k_skip_@side@_idx
-- gucs: enable_bitmapscan=off
\set id random(0, :nrows / 10 - 1)
-- (btree skips since PostgreSQL 18; on 15 it reads the table instead)
-- expect-fbt: Index Scan using k_skip_@side@_idx on k_skip_@side@
SELECT v FROM k_skip_@side@ WHERE id = :id;
