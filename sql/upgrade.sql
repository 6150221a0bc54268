--
-- upgrade: an install made at version 1.0 and updated along the update
-- scripts (ALTER EXTENSION fastbtree UPDATE) ends with the catalog of a
-- fresh install at the default version: the same operator families,
-- classes, operators and support functions (the skip support functions of
-- 1.3 on PostgreSQL 18 included) and the same SQL functions (1.4's
-- fastbtree_stats() with the prefetch counters, while a 1.3 catalog's
-- 13 columns and a 1.5 catalog's 16 still work with the library; 1.5's
-- fastbtree_twin() and fastbtree_compare(); 1.6's prefetch_read_ahead
-- column, and a 1.6 catalog's 17 columns still work; 1.7's leaf hint
-- counters); its operator
-- classes pass the AM's validator, and an index built at 1.0 answers
-- skip scans as btree does after the update.
--
-- Each database gets the extension in schema public; the test's own
-- database is left as it is.
--
CREATE DATABASE fbt_upgrade_old;
CREATE DATABASE fbt_upgrade_new;

\set regdb :DBNAME

\c fbt_upgrade_new
CREATE EXTENSION fastbtree;
\set ECHO none
\i sql/include/fbt_catalog.sql
\set ECHO all
SELECT extversion FROM pg_extension WHERE extname = 'fastbtree';
SELECT string_agg(kind || '=' || n || '/' || hash, ' ' ORDER BY kind) AS fresh
FROM fbt_catalog() \gset

\c fbt_upgrade_old
CREATE EXTENSION fastbtree VERSION '1.0';
CREATE TABLE s_bt (d date, b int4);
CREATE TABLE s_fbt (d date, b int4);
INSERT INTO s_bt SELECT date '2026-01-01' + i / 500, i % 500
FROM generate_series(0, 9999) AS i;
INSERT INTO s_fbt SELECT * FROM s_bt;
CREATE INDEX s_bt_db ON s_bt USING btree (d, b);
CREATE INDEX s_fbt_db ON s_fbt USING fastbtree (d, b);
VACUUM ANALYZE s_bt, s_fbt;
-- at 1.3 fastbtree_stats() has 13 columns, which the library still fills
ALTER EXTENSION fastbtree UPDATE TO '1.3';
SELECT count(*) AS stats_columns_13 FROM (SELECT (fastbtree_stats()).*) s
WHERE descents >= 0 AND scan_pins_taken >= 0;
ALTER EXTENSION fastbtree UPDATE TO '1.5';
-- at 1.4 and 1.5 it has the prefetch counters too
SELECT prefetches >= prefetch_hits AS stats_columns_16 FROM fastbtree_stats();
ALTER EXTENSION fastbtree UPDATE TO '1.6';
-- at 1.6 the read-ahead counter too
SELECT prefetch_read_ahead >= 0 AS stats_columns_17 FROM fastbtree_stats();
ALTER EXTENSION fastbtree UPDATE;
-- at 1.7 the leaf hint counters too
SELECT leaf_hint_hits >= 0 AND leaf_hint_misses >= 0 AS stats_columns_19
FROM fastbtree_stats();
SELECT extversion FROM pg_extension WHERE extname = 'fastbtree';
\set ECHO none
\i sql/include/fbt_catalog.sql
\set ECHO all
-- object kinds whose entries differ from the fresh install's: none
SELECT kind, n FROM fbt_catalog()
WHERE position(kind || '=' || n || '/' || hash IN :'fresh') = 0;
-- nothing left to add (what a database brought from 15 to 18 by
-- pg_upgrade runs to get the skip support functions)
SELECT fastbtree_add_skip_support() AS added_again;
-- the skip support functions are btree's (none before 18)
SELECT (SELECT count(*) FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily
		JOIN pg_am a ON a.oid = f.opfmethod
		WHERE a.amname = 'fastbtree' AND p.amprocnum = 6) =
	(SELECT count(*) FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily
		JOIN pg_am a ON a.oid = f.opfmethod
		WHERE a.amname = 'btree' AND p.amprocnum = 6) AS skip_support_as_btree;
SELECT count(*) AS opclasses, bool_and(amvalidate(oid)) AS all_valid
FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'fastbtree');
-- the index built at 1.0 skip-scans (with skip support on 18) as btree
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT d, b FROM s_fbt WHERE b = 7 ORDER BY d;
SELECT (SELECT array_agg(d ORDER BY d) FROM s_fbt WHERE b = 7) =
	(SELECT array_agg(d ORDER BY d) FROM s_bt WHERE b = 7) AS same_rows,
	(SELECT count(*) FROM s_fbt WHERE b = 7) AS nrows;
SELECT (SELECT array_agg(d ORDER BY d DESC) FROM s_fbt WHERE b < 2 AND d > '2026-01-05') =
	(SELECT array_agg(d ORDER BY d DESC) FROM s_bt WHERE b < 2 AND d > '2026-01-05')
	AS same_rows_backward;

\c :regdb
DROP DATABASE fbt_upgrade_old;
DROP DATABASE fbt_upgrade_new;
