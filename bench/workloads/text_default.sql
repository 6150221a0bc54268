-- title: Text keys, default collation (C.UTF-8): point select by a random word pair
-- data: text
-- index: k_text_@side@ k_text_@side@_kd_idx
-- The key is looked up by number in text_keys (btree, the same for both
-- sides), which dilutes the difference between the two access methods.
\set id random(1, :ntext)
-- expect: Index Scan using k_text_@side@_kd_idx on k_text_@side@
-- expect: Index Scan using text_keys_pkey on text_keys
SELECT v FROM k_text_@side@ WHERE kd = (SELECT k FROM text_keys WHERE id = :id);
