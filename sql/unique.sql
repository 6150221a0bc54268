--
-- unique: unique indexes and exclusion constraints, each compared with
-- USING btree (the places where core hard-wires btree: unique_core).
--
-- Most statements run through both_ams(template), which executes the
-- template once with every "@" replaced by "btree" and once by "fastbtree"
-- (so table u_@ is u_btree or u_fastbtree, "USING @" picks the access
-- method) and prints, per access method, "OK, <n> rows" or
-- "<SQLSTATE>: <message> DETAIL: <detail>".  Column "same" says whether
-- fastbtree's result equals btree's once the access method's name is
-- masked; every "same" below must be true unless a comment says why not.
--
CREATE SCHEMA fbt_unique;
SET search_path = fbt_unique, public;
-- PostgreSQL 15's NOTICE for unique fastbtree indexes (ON CONFLICT cannot
-- use them) is tested in unique_core
SET client_min_messages = warning;
\i sql/include/both_ams.sql

--
-- 1. Unique indexes
--

-- single column; the NOTICE is fastbtree's, raised by CREATE UNIQUE INDEX
CREATE TABLE u_btree (k int, v text) WITH (autovacuum_enabled = off);
CREATE TABLE u_fastbtree (LIKE u_btree) WITH (autovacuum_enabled = off);
SELECT * FROM both_ams('CREATE UNIQUE INDEX u_@_k ON u_@ USING @ (k)');
SELECT * FROM both_ams('INSERT INTO u_@ SELECT i, ''v'' || i FROM generate_series(1, 1000) i');
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (1, ''dup'')');
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (1000, ''dup'')');
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (500, ''dup'')');
-- a duplicate inside the inserting statement itself
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (2000, ''a''), (2000, ''b'')');
-- NULLs never conflict
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (NULL, ''n1''), (NULL, ''n2''), (NULL, ''n3'')');
-- UPDATE that creates a duplicate, and ones that do not
SELECT * FROM both_ams('UPDATE u_@ SET k = 2 WHERE k = 3');
SELECT * FROM both_ams('UPDATE u_@ SET k = k + 5000 WHERE k > 990');
SELECT * FROM both_ams('UPDATE u_@ SET v = v || ''!'' WHERE k BETWEEN 10 AND 20');
SELECT * FROM both_ams('UPDATE u_@ SET k = k WHERE k BETWEEN 30 AND 40');
SELECT * FROM both_ams('UPDATE u_@ SET k = 20 WHERE k BETWEEN 30 AND 40');
-- delete + reinsert of the same key in one transaction must succeed
BEGIN;
DELETE FROM u_btree WHERE k = 5;
INSERT INTO u_btree VALUES (5, 'again');
COMMIT;
BEGIN;
DELETE FROM u_fastbtree WHERE k = 5;
INSERT INTO u_fastbtree VALUES (5, 'again');
COMMIT;
-- ... also as one multi-statement string (one transaction)
SELECT * FROM both_ams('DELETE FROM u_@ WHERE k = 6; INSERT INTO u_@ VALUES (6, ''again'')');
-- ... and through a key swap within one transaction
SELECT * FROM both_ams('UPDATE u_@ SET k = -7 WHERE k = 7; UPDATE u_@ SET k = 7 WHERE k = 8; UPDATE u_@ SET k = 8 WHERE k = -7');
-- duplicate of a deleted and committed row must succeed
SELECT * FROM both_ams('DELETE FROM u_@ WHERE k = 9');
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (9, ''after delete'')');
-- duplicate of a row whose insert was rolled back must succeed
BEGIN;
INSERT INTO u_btree VALUES (3000, 'rolled back');
INSERT INTO u_fastbtree VALUES (3000, 'rolled back');
ROLLBACK;
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (3000, ''kept'')');
-- ... and in a subtransaction
BEGIN;
SAVEPOINT s;
INSERT INTO u_btree VALUES (3001, 'rolled back');
INSERT INTO u_fastbtree VALUES (3001, 'rolled back');
ROLLBACK TO SAVEPOINT s;
INSERT INTO u_btree VALUES (3001, 'kept');
INSERT INTO u_fastbtree VALUES (3001, 'kept');
COMMIT;
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (3001, ''dup'')');
-- A thousand dead entries for key 77 (delete + reinsert, no VACUUM) span
-- several leaf pages; the live entry is the last of them.  The unique
-- check must walk right over all of them.
SELECT * FROM both_ams('DO $d$ BEGIN FOR i IN 1..1000 LOOP DELETE FROM u_@ WHERE k = 77; INSERT INTO u_@ VALUES (77, ''round '' || i); END LOOP; END $d$');
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (77, ''dup'')');
SELECT * FROM both_ams('UPDATE u_@ SET k = 77 WHERE k = 78');
-- a thousand aborted entries for key 4000, then the live one, then a dup
SELECT * FROM both_ams('DO $d$ BEGIN FOR i IN 1..1000 LOOP BEGIN INSERT INTO u_@ VALUES (4000, ''aborted''); RAISE EXCEPTION USING ERRCODE = ''U0001''; EXCEPTION WHEN SQLSTATE ''U0001'' THEN NULL; END; END LOOP; END $d$');
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (4000, ''live'')');
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (4000, ''dup'')');
SELECT * FROM both_ams('DELETE FROM u_@ WHERE k = 4000');
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (4000, ''live again'')');
-- the live entry first (TID order), then a thousand aborted ones after it
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (4500, ''first'')');
SELECT * FROM both_ams('DO $d$ BEGIN FOR i IN 1..1000 LOOP BEGIN DELETE FROM u_@ WHERE k = 4500; INSERT INTO u_@ VALUES (4500, ''aborted''); RAISE EXCEPTION USING ERRCODE = ''U0001''; EXCEPTION WHEN SQLSTATE ''U0001'' THEN NULL; END; END LOOP; END $d$');
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (4500, ''dup'')');
SELECT * FROM both_rows('SELECT k, v FROM u_@ WHERE k = 4500');
-- after VACUUM removed the dead entries
VACUUM u_btree;
VACUUM u_fastbtree;
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (77, ''dup'')');
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (4000, ''dup'')');
SELECT * FROM both_ams('INSERT INTO u_@ VALUES (78, ''back'')');
-- contents, through the index
SELECT * FROM both_rows('SELECT k, v FROM u_@ WHERE k IN (1, 2, 3, 5, 6, 7, 8, 9, 20, 77, 78, 3000, 3001, 4000, 5991) ORDER BY k');
SELECT * FROM both_rows('SELECT count(*), sum(k) FROM u_@ WHERE k > 0');
SELECT * FROM both_rows('SELECT count(*) FROM u_@ WHERE k IS NULL');

-- multi-column key
CREATE TABLE m_btree (k int, j int, v text);
CREATE TABLE m_fastbtree (LIKE m_btree);
SELECT * FROM both_ams('CREATE UNIQUE INDEX m_@_kj ON m_@ USING @ (k, j)');
SELECT * FROM both_ams('INSERT INTO m_@ SELECT i / 10, i % 10, ''x'' FROM generate_series(0, 999) i');
SELECT * FROM both_ams('INSERT INTO m_@ VALUES (5, 5, ''dup'')');
SELECT * FROM both_ams('INSERT INTO m_@ VALUES (5, 10, ''new'')');
SELECT * FROM both_ams('INSERT INTO m_@ VALUES (5, NULL, ''n''), (5, NULL, ''n''), (NULL, 5, ''n''), (NULL, NULL, ''n'')');
SELECT * FROM both_ams('UPDATE m_@ SET j = 0 WHERE k = 7 AND j = 1');

-- expression keys
CREATE TABLE e_btree (k int, t text);
CREATE TABLE e_fastbtree (LIKE e_btree);
SELECT * FROM both_ams('CREATE UNIQUE INDEX e_@_lower ON e_@ USING @ (lower(t))');
SELECT * FROM both_ams('CREATE UNIQUE INDEX e_@_expr2 ON e_@ USING @ ((k % 100), upper(t))');
SELECT * FROM both_ams('INSERT INTO e_@ VALUES (1, ''Alpha''), (2, ''Beta''), (3, ''Gamma'')');
SELECT * FROM both_ams('INSERT INTO e_@ VALUES (4, ''ALPHA'')');
SELECT * FROM both_ams('INSERT INTO e_@ VALUES (102, ''delta''), (202, ''DELTA'')');
SELECT * FROM both_ams('INSERT INTO e_@ VALUES (101, ''x''), (201, ''X'')');
SELECT * FROM both_rows('SELECT k, t FROM e_@ WHERE lower(t) = ''beta''');

-- INCLUDE columns: only key columns conflict, and only they are reported
CREATE TABLE i_btree (k int, j int, v text);
CREATE TABLE i_fastbtree (LIKE i_btree);
SELECT * FROM both_ams('CREATE UNIQUE INDEX i_@_k ON i_@ USING @ (k) INCLUDE (j, v)');
SELECT * FROM both_ams('INSERT INTO i_@ SELECT i, -i, repeat(''i'', 50) FROM generate_series(1, 500) i');
SELECT * FROM both_ams('INSERT INTO i_@ VALUES (10, -10, repeat(''i'', 50))');
SELECT * FROM both_ams('INSERT INTO i_@ VALUES (11, 0, ''other include values'')');
SELECT * FROM both_rows('SELECT k, j FROM i_@ WHERE k BETWEEN 9 AND 12');

-- NULLS NOT DISTINCT
CREATE TABLE n_btree (k int, j int);
CREATE TABLE n_fastbtree (LIKE n_btree);
SELECT * FROM both_ams('CREATE UNIQUE INDEX n_@_k ON n_@ USING @ (k) NULLS NOT DISTINCT');
SELECT * FROM both_ams('CREATE UNIQUE INDEX n_@_kj ON n_@ USING @ (j, k) NULLS NOT DISTINCT');
SELECT * FROM both_ams('INSERT INTO n_@ VALUES (1, 1), (NULL, 2)');
SELECT * FROM both_ams('INSERT INTO n_@ VALUES (NULL, 3)');
SELECT * FROM both_ams('INSERT INTO n_@ VALUES (2, 1)');
SELECT * FROM both_ams('INSERT INTO n_@ VALUES (3, NULL), (4, NULL)');
SELECT * FROM both_ams('DELETE FROM n_@ WHERE k IS NULL');
SELECT * FROM both_ams('INSERT INTO n_@ VALUES (NULL, 3)');
SELECT * FROM both_rows('SELECT k, j FROM n_@ WHERE k IS NULL');
-- ... versus the default NULLS DISTINCT on the same shape
SELECT * FROM both_ams('CREATE TABLE nd_@ (k int, j int); CREATE UNIQUE INDEX nd_@_kj ON nd_@ USING @ (j, k)');
SELECT * FROM both_ams('INSERT INTO nd_@ VALUES (NULL, 1), (NULL, 1), (1, NULL), (1, NULL)');

-- partial unique index
CREATE TABLE p_btree (k int, active bool);
CREATE TABLE p_fastbtree (LIKE p_btree);
SELECT * FROM both_ams('CREATE UNIQUE INDEX p_@_k ON p_@ USING @ (k) WHERE active');
SELECT * FROM both_ams('INSERT INTO p_@ VALUES (1, true), (1, false), (1, false)');
SELECT * FROM both_ams('INSERT INTO p_@ VALUES (1, true)');
SELECT * FROM both_ams('UPDATE p_@ SET active = true WHERE NOT active');

--
-- CREATE UNIQUE INDEX over existing data
--
CREATE TABLE d_btree (k int, j int, t text) WITH (autovacuum_enabled = off);
CREATE TABLE d_fastbtree (LIKE d_btree) WITH (autovacuum_enabled = off);
SELECT * FROM both_ams('INSERT INTO d_@ SELECT i, i % 7, ''t'' || i FROM generate_series(1, 5000) i');
SELECT * FROM both_ams('INSERT INTO d_@ VALUES (2500, 1, ''T2500'')');
SELECT * FROM both_ams('CREATE UNIQUE INDEX d_@_k ON d_@ USING @ (k)');
SELECT * FROM both_ams('CREATE UNIQUE INDEX d_@_kj ON d_@ USING @ (k, j)');
SELECT * FROM both_ams('CREATE UNIQUE INDEX d_@_lower ON d_@ USING @ (lower(t))');
SELECT * FROM both_ams('CREATE UNIQUE INDEX d_@_jk ON d_@ USING @ (j, (k / 2))');
-- the duplicates are among dead rows only: must succeed
SELECT * FROM both_ams('DELETE FROM d_@ WHERE t = ''T2500''');
SELECT * FROM both_ams('CREATE UNIQUE INDEX d_@_k ON d_@ USING @ (k)');
SELECT * FROM both_ams('INSERT INTO d_@ VALUES (2500, 0, ''dup'')');
-- NULLs at build time
SELECT * FROM both_ams('INSERT INTO d_@ VALUES (NULL, NULL, NULL), (NULL, NULL, NULL)');
SELECT * FROM both_ams('CREATE UNIQUE INDEX d_@_j_null ON d_@ USING @ (k, j)');
SELECT * FROM both_ams('CREATE UNIQUE INDEX d_@_nnd ON d_@ USING @ (k) NULLS NOT DISTINCT');
SELECT * FROM both_ams('CREATE UNIQUE INDEX d_@_nnd ON d_@ USING @ (k) NULLS NOT DISTINCT WHERE k IS NOT NULL');
SELECT * FROM both_rows('SELECT k, j, t FROM d_@ WHERE k BETWEEN 2499 AND 2501');
-- Several keys duplicated: the error names the first equal pair that the
-- sort happens to compare (key 47 here, not the smallest duplicate, 3).
-- fastbtree sorts with the same tuplesort and the same unique check as
-- btree, so it names the same key.
SELECT * FROM both_ams('CREATE TABLE dd_@ (k int); INSERT INTO dd_@ SELECT (i * 7919) % 100 FROM generate_series(1, 50) i; INSERT INTO dd_@ SELECT (i * 7919) % 100 FROM generate_series(1, 50) i');
SELECT * FROM both_ams('CREATE UNIQUE INDEX dd_@_k ON dd_@ USING @ (k)');

--
-- CREATE UNIQUE INDEX CONCURRENTLY and REINDEX INDEX CONCURRENTLY
-- (not in a transaction block, so not through both_ams)
--
CREATE TABLE c_btree (k int, v text) WITH (autovacuum_enabled = off);
CREATE TABLE c_fastbtree (LIKE c_btree) WITH (autovacuum_enabled = off);
SELECT * FROM both_ams('INSERT INTO c_@ SELECT (i * 7919) % 10007, ''c'' FROM generate_series(1, 10006) i');
SELECT * FROM both_ams('DELETE FROM c_@ WHERE k % 10 = 3');
CREATE UNIQUE INDEX CONCURRENTLY c_btree_k ON c_btree USING btree (k);
CREATE UNIQUE INDEX CONCURRENTLY c_fastbtree_k ON c_fastbtree USING fastbtree (k);
SELECT * FROM both_ams('INSERT INTO c_@ VALUES (4, ''dup'')');
SELECT * FROM both_ams('INSERT INTO c_@ VALUES (3, ''new'')');
SELECT * FROM both_rows('SELECT count(*), sum(k), min(k), max(k) FROM c_@ WHERE k >= 0');
SELECT * FROM both_rows('SELECT k FROM c_@ WHERE k < 30 ORDER BY k DESC');
REINDEX INDEX CONCURRENTLY c_btree_k;
REINDEX INDEX CONCURRENTLY c_fastbtree_k;
SELECT * FROM both_ams('INSERT INTO c_@ VALUES (4, ''dup'')');
SELECT * FROM both_rows('SELECT count(*), sum(k), min(k), max(k) FROM c_@ WHERE k >= 0');
SELECT * FROM both_rows('SELECT k FROM c_@ WHERE k < 30 ORDER BY k DESC');
-- plain REINDEX raises no NOTICE: the index already existed
REINDEX INDEX c_btree_k;
REINDEX INDEX c_fastbtree_k;
SELECT * FROM both_ams('INSERT INTO c_@ VALUES (5, ''dup'')');
-- concurrent build over duplicates fails and leaves an invalid index
CREATE UNIQUE INDEX CONCURRENTLY c_btree_dup ON c_btree USING btree (v);
CREATE UNIQUE INDEX CONCURRENTLY c_fastbtree_dup ON c_fastbtree USING fastbtree (v);
SELECT c.relname, i.indisvalid, i.indisready
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE c.relname IN ('c_btree_dup', 'c_fastbtree_dup') ORDER BY 1;
DROP INDEX c_btree_dup;
DROP INDEX c_fastbtree_dup;

--
-- 2. Exclusion constraints
--
CREATE TABLE x_btree (k int, j int, EXCLUDE USING btree (k WITH =));
CREATE TABLE x_fastbtree (k int, j int, EXCLUDE USING fastbtree (k WITH =));
SELECT * FROM both_ams('INSERT INTO x_@ SELECT i, i FROM generate_series(1, 1000) i');
SELECT * FROM both_ams('INSERT INTO x_@ VALUES (1, 0)');
SELECT * FROM both_ams('INSERT INTO x_@ VALUES (NULL, 0), (NULL, 0)');
SELECT * FROM both_ams('UPDATE x_@ SET k = 2 WHERE k = 3');
SELECT * FROM both_ams('DELETE FROM x_@ WHERE k = 4; INSERT INTO x_@ VALUES (4, 4)');
-- ON CONFLICT works with exclusion constraints of any access method
SELECT * FROM both_ams('INSERT INTO x_@ VALUES (5, -5), (1001, 1001) ON CONFLICT DO NOTHING');
SELECT * FROM both_ams('INSERT INTO x_@ VALUES (6, -6) ON CONFLICT ON CONSTRAINT x_@_k_excl DO NOTHING');
SELECT * FROM both_ams('INSERT INTO x_@ VALUES (6, -6) ON CONFLICT ON CONSTRAINT x_@_k_excl DO UPDATE SET j = 0');
SELECT * FROM both_rows('SELECT k, j FROM x_@ WHERE k IN (1, 2, 3, 4, 5, 6, 1001) ORDER BY k');
-- multi-column, and added to existing data
SELECT * FROM both_ams('ALTER TABLE x_@ ADD CONSTRAINT x_@_kj EXCLUDE USING @ (k WITH =, j WITH =)');
SELECT * FROM both_ams('INSERT INTO x_@ VALUES (1001, 1001)');
SELECT * FROM both_ams('ALTER TABLE x_@ ADD CONSTRAINT x_@_j EXCLUDE USING @ (j WITH =)');
SELECT * FROM both_ams('ALTER TABLE x_@ ADD CONSTRAINT x_@_lt EXCLUDE USING @ (j WITH <)');
SELECT * FROM both_ams('ALTER TABLE x_@ ADD CONSTRAINT x_@_ne EXCLUDE USING @ (j WITH <>)');

-- DEFERRABLE INITIALLY DEFERRED: checked at COMMIT
CREATE TABLE xd_btree (k int,
	EXCLUDE USING btree (k WITH =) DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE xd_fastbtree (k int,
	EXCLUDE USING fastbtree (k WITH =) DEFERRABLE INITIALLY DEFERRED);
INSERT INTO xd_btree SELECT generate_series(1, 100);
INSERT INTO xd_fastbtree SELECT generate_series(1, 100);
-- duplicates are allowed until COMMIT, which fails
BEGIN;
INSERT INTO xd_btree VALUES (1), (1), (101), (101);
SELECT count(*) FROM xd_btree WHERE k IN (1, 101);
COMMIT;
BEGIN;
INSERT INTO xd_fastbtree VALUES (1), (1), (101), (101);
SELECT count(*) FROM xd_fastbtree WHERE k IN (1, 101);
COMMIT;
-- fixed before COMMIT: succeeds
BEGIN;
INSERT INTO xd_btree VALUES (1), (102), (102);
UPDATE xd_btree SET k = -1 WHERE ctid = (SELECT max(ctid) FROM xd_btree WHERE k = 1);
DELETE FROM xd_btree WHERE ctid = (SELECT max(ctid) FROM xd_btree WHERE k = 102);
COMMIT;
BEGIN;
INSERT INTO xd_fastbtree VALUES (1), (102), (102);
UPDATE xd_fastbtree SET k = -1 WHERE ctid = (SELECT max(ctid) FROM xd_fastbtree WHERE k = 1);
DELETE FROM xd_fastbtree WHERE ctid = (SELECT max(ctid) FROM xd_fastbtree WHERE k = 102);
COMMIT;
-- SET CONSTRAINTS ... IMMEDIATE checks at once
BEGIN;
INSERT INTO xd_btree VALUES (50);
SET CONSTRAINTS ALL IMMEDIATE;
ROLLBACK;
BEGIN;
INSERT INTO xd_fastbtree VALUES (50);
SET CONSTRAINTS ALL IMMEDIATE;
ROLLBACK;
SELECT * FROM both_rows('SELECT count(*), sum(k), min(k), max(k) FROM xd_@ WHERE k > -10');

SET client_min_messages = warning;
\i sql/include/check_all.sql
DROP SCHEMA fbt_unique CASCADE;
