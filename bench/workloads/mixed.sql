-- title: Mixed read/write: 4 point selects and 1 insert of a random key per transaction
-- data: mixed
-- reset: mixed
-- index: mixed_@side@ mixed_@side@_idx
\set k1 2 * random(1, 100000 * :scale)
\set k2 2 * random(1, 100000 * :scale)
\set k3 2 * random(1, 100000 * :scale)
\set k4 2 * random(1, 100000 * :scale)
\set knew 2 * random(1, 100000 * :scale) - 1
-- expect: Index Scan using mixed_@side@_idx on mixed_@side@
SELECT v FROM mixed_@side@ WHERE k = :k1;
-- expect: Index Scan using mixed_@side@_idx on mixed_@side@
SELECT v FROM mixed_@side@ WHERE k = :k2;
-- expect: Index Scan using mixed_@side@_idx on mixed_@side@
SELECT v FROM mixed_@side@ WHERE k = :k3;
-- expect: Index Scan using mixed_@side@_idx on mixed_@side@
SELECT v FROM mixed_@side@ WHERE k = :k4;
-- expect: Insert on mixed_@side@
INSERT INTO mixed_@side@ (k, v) VALUES (:knew, 1);
