--
-- pattern_collation: the pattern operator classes (text_pattern_ops,
-- varchar_pattern_ops, bpchar_pattern_ops) order strings bytewise while
-- their "=" honours the collation, so under a nondeterministic collation an
-- index search would miss equal strings ('abc' = 'ABC' under a
-- case-insensitive collation).  btree refuses such columns at CREATE INDEX
-- (0A000, naming the operator class); fastbtree must refuse them on every
-- path that builds an index.  both_ams() (sql/include/both_ams.sql) runs
-- each statement for btree and fastbtree and compares the outcomes.
--
CREATE SCHEMA fbt_pattern_collation;
SET search_path = fbt_pattern_collation, public;
\i sql/include/both_ams.sql

-- case-insensitive (secondary strength) and nondeterministic
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2',
					 deterministic = false);
-- the same comparison, but deterministic (ties broken bytewise)
CREATE COLLATION ci_det (provider = icu, locale = 'und-u-ks-level2');

CREATE TABLE t_btree (x text COLLATE ci, v varchar(10) COLLATE ci,
					  c char(3) COLLATE ci, d text, k int);
CREATE TABLE t_fastbtree (LIKE t_btree INCLUDING ALL);
SELECT * FROM both_ams('INSERT INTO t_@ VALUES (''abc'', ''abc'', ''abc'', ''abc'', 1), (''ABC'', ''ABC'', ''ABC'', ''ABC'', 2), (''def'', ''def'', ''def'', ''def'', 3), (''ghi'', ''ghi'', ''ghi'', ''ghi'', 4)');

-- the issue's repro, and each pattern operator class
SELECT * FROM both_ams('CREATE INDEX t_@_x ON t_@ USING @ (x text_pattern_ops)');
SELECT * FROM both_ams('CREATE INDEX t_@_v ON t_@ USING @ (v varchar_pattern_ops)');
SELECT * FROM both_ams('CREATE INDEX t_@_c ON t_@ USING @ (c bpchar_pattern_ops)');
-- in a later key column, with an INCLUDE column, unique, partial
SELECT * FROM both_ams('CREATE INDEX t_@_kx ON t_@ USING @ (k, x text_pattern_ops)');
SELECT * FROM both_ams('CREATE UNIQUE INDEX t_@_x ON t_@ USING @ (x text_pattern_ops) INCLUDE (k)');
SELECT * FROM both_ams('CREATE INDEX t_@_x ON t_@ USING @ (x text_pattern_ops) WHERE k > 0');
-- the collation given in the index definition, on an expression
SELECT * FROM both_ams('CREATE INDEX t_@_d ON t_@ USING @ (d COLLATE ci text_pattern_ops)');
SELECT * FROM both_ams('CREATE INDEX t_@_e ON t_@ USING @ ((d || '''') COLLATE ci text_pattern_ops)');
-- still accepted: the collation-aware classes under ci, the pattern classes
-- under a deterministic collation (also a case-insensitive one) or "C"
SELECT * FROM both_ams('CREATE INDEX t_@_x ON t_@ USING @ (x)');
SELECT * FROM both_ams('CREATE INDEX t_@_c ON t_@ USING @ (c)');
SELECT * FROM both_ams('CREATE INDEX t_@_xc ON t_@ USING @ (x COLLATE "C" text_pattern_ops)');
SELECT * FROM both_ams('CREATE INDEX t_@_dp ON t_@ USING @ (d text_pattern_ops)');
SELECT * FROM both_ams('CREATE INDEX t_@_dd ON t_@ USING @ (d COLLATE ci_det text_pattern_ops)');
SELECT * FROM both_ams('CREATE INDEX t_@_vp ON t_@ USING @ (v COLLATE "C" varchar_pattern_ops, c COLLATE "C" bpchar_pattern_ops)');

-- Rebuilds by ALTER TABLE.  Giving d (under a pattern index) a
-- nondeterministic collation rebuilds the index without a table rewrite;
-- changing its type as well rewrites the table and then rebuilds the
-- index: both are refused and roll back.  Columns whose pattern index has
-- its own collation, or whose index is collation-aware, change freely.
SELECT * FROM both_ams('ALTER TABLE t_@ ALTER COLUMN d TYPE text COLLATE ci');
SELECT * FROM both_ams('ALTER TABLE t_@ ALTER COLUMN d TYPE varchar(20) COLLATE ci');
SELECT * FROM both_ams('ALTER TABLE t_@ ALTER COLUMN c TYPE char(5) COLLATE ci');
SELECT * FROM both_ams('ALTER TABLE t_@ ALTER COLUMN c TYPE char(5)');
SELECT * FROM both_ams('ALTER TABLE t_@ ALTER COLUMN v TYPE text');
SELECT * FROM both_ams('ALTER TABLE t_@ ALTER COLUMN d TYPE text COLLATE ci_det');
-- the indexes that survived, their collations, and their answers
SELECT c.relname, a.amname, pg_get_indexdef(c.oid)
FROM pg_class c JOIN pg_am a ON a.oid = c.relam
	JOIN pg_index i ON i.indexrelid = c.oid
WHERE c.relnamespace = 'fbt_pattern_collation'::regnamespace
ORDER BY a.amname, c.relname;
SELECT * FROM both_rows('SELECT x FROM t_@ WHERE x = ''abc'' ORDER BY k');
-- (which of t_@_x and t_@_xc serves is the planner's choice, and differs
-- between majors: the rows must not)
SELECT am, rows, same FROM both_rows('SELECT count(*) FROM t_@ WHERE x IN (''abc'', ''GHI'')');

-- Partitioned tables: with a partition, both refuse.  Without one, btree
-- refuses the partitioned index itself; fastbtree has nothing to build
-- yet, so it refuses when the first partition's index is built (at CREATE
-- TABLE ... PARTITION OF here, or ATTACH PARTITION).
CREATE TABLE p_btree (x text COLLATE ci, k int) PARTITION BY RANGE (k);
CREATE TABLE p_fastbtree (LIKE p_btree) PARTITION BY RANGE (k);
SELECT * FROM both_ams('CREATE TABLE p_@_1 PARTITION OF p_@ FOR VALUES FROM (0) TO (10)');
SELECT * FROM both_ams('CREATE INDEX p_@_x ON p_@ USING @ (x text_pattern_ops)');
SELECT * FROM both_ams('DROP TABLE p_@_1');
SELECT * FROM both_ams('CREATE INDEX p_@_x ON p_@ USING @ (x text_pattern_ops)');
SELECT * FROM both_ams('CREATE TABLE p_@_1 PARTITION OF p_@ FOR VALUES FROM (0) TO (10)');
SELECT * FROM both_ams('CREATE TABLE p_@_2 (LIKE p_@)');
SELECT * FROM both_ams('ALTER TABLE p_@ ATTACH PARTITION p_@_2 FOR VALUES FROM (10) TO (20)');
DROP TABLE p_btree, p_fastbtree, p_btree_2, p_fastbtree_2;

-- CREATE INDEX CONCURRENTLY (not in a transaction block, so not through
-- both_ams): both refuse.  btree refuses before the index exists in the
-- catalog; fastbtree refuses when it builds the index, so, as after any
-- failed concurrent build, an invalid index is left behind to be dropped.
-- It is never used by queries nor maintained by writes (not ready).
CREATE INDEX CONCURRENTLY t_btree_cx ON t_btree USING btree (x text_pattern_ops);
CREATE INDEX CONCURRENTLY t_fastbtree_cx ON t_fastbtree USING fastbtree (x text_pattern_ops);
SELECT indexrelid::regclass, indisvalid, indisready FROM pg_index
WHERE indexrelid IN (SELECT oid FROM pg_class
					 WHERE relname IN ('t_btree_cx', 't_fastbtree_cx'));
DROP INDEX t_fastbtree_cx;

-- An index that already has such a column (made here by editing the
-- catalog, as an index built by an earlier fastbtree version would have
-- it) cannot be rebuilt: REINDEX, VACUUM FULL and TRUNCATE all go through
-- the build and refuse it.  (btree checks only at CREATE INDEX, so a btree
-- index edited the same way would be rebuilt; fastbtree is stricter.)
CREATE INDEX t_fastbtree_old ON t_fastbtree USING fastbtree (d text_pattern_ops);
UPDATE pg_index SET indcollation = ('ci'::regcollation)::oid::text::oidvector
WHERE indexrelid = 't_fastbtree_old'::regclass;
\c
SET search_path = fbt_pattern_collation, public;
REINDEX INDEX t_fastbtree_old;
REINDEX TABLE t_fastbtree;
VACUUM FULL t_fastbtree;
TRUNCATE t_fastbtree;
DROP INDEX t_fastbtree_old;
REINDEX TABLE t_fastbtree;

\i sql/include/check_all.sql
DROP SCHEMA fbt_pattern_collation CASCADE;
