-- title: Update churn: non-HOT updates (an indexed neighbour column changes) of random rows, key unchanged
-- data: churn
-- reset: churn
-- index: churn_@side@ churn_@side@_idx
\set k random(1, 100000 * :scale)
-- expect: Update on churn_@side@
-- expect: Index Scan using churn_@side@_idx on churn_@side@
UPDATE churn_@side@ SET u = u + 1 WHERE k = :k;
