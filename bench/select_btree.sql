-- Point select through the btree primary key (as pgbench -S does).
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
