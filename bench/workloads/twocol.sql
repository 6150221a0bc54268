-- title: Two-column key (int4, int4): point select on both columns
-- data: two
-- index: k_two_@side@ k_two_@side@_idx
\set i random(1, :nrows)
\set a (:i - 1) / 4 + 1
\set b (:i * 7919) % :nrows
-- expect: Index Scan using k_two_@side@_idx on k_two_@side@
SELECT v FROM k_two_@side@ WHERE a = :a AND b = :b;
