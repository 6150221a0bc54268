-- title: Insert, random int4 keys into a table of 100000 * scale rows
-- data: ins_random
-- reset: ins_random
-- index: ins_random_@side@ ins_random_@side@_idx
\set k random(1, 2147483646)
-- expect: Insert on ins_random_@side@
INSERT INTO ins_random_@side@ (k, v) VALUES (:k, 1);
