-- Point select through the unique fastbtree index on the copied table.
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts_fbt WHERE aid = :aid;
