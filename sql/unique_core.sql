--
-- unique_core: where core itself decides, by access method, what a unique
-- index may serve: foreign keys, INSERT ... ON CONFLICT arbiters, ADD
-- CONSTRAINT ... USING INDEX, REPLICA IDENTITY, unique indexes on
-- partitioned tables, REFRESH MATERIALIZED VIEW CONCURRENTLY.
--
-- PostgreSQL 15 hard-wires btree for all but REPLICA IDENTITY: fastbtree
-- gets core's own errors, pinned in expected/unique_core.out ("same" is
-- false there by design).  PostgreSQL 18 finds a unique index's equality operator through
-- the access method's strategy translation (fastbtree supplies btree's), so
-- all of them but USING INDEX work with a fastbtree index as with btree:
-- expected/unique_core_1.out, where every "same" is true except USING
-- INDEX, which 18 still limits to btree.  The first query says which file
-- applies.
--
CREATE SCHEMA fbt_unique_core;
SET search_path = fbt_unique_core, public;
\i sql/include/both_ams.sql
SELECT current_setting('server_version_num')::int >= 180000 AS pg18_or_later;

-- PostgreSQL 15: a NOTICE says ON CONFLICT cannot use the index
CREATE TABLE u_btree (k int, v text);
CREATE TABLE u_fastbtree (LIKE u_btree);
SELECT * FROM both_ams('CREATE UNIQUE INDEX u_@_k ON u_@ USING @ (k)');
SET client_min_messages = warning;
SELECT * FROM both_ams('INSERT INTO u_@ SELECT i, ''v'' || i FROM generate_series(1, 100) i');
CREATE TABLE i_btree (k int, j int, v text);
CREATE TABLE i_fastbtree (LIKE i_btree);
SELECT * FROM both_ams('CREATE UNIQUE INDEX i_@_k ON i_@ USING @ (k) INCLUDE (j, v)');
SELECT * FROM both_ams('INSERT INTO i_@ SELECT i, -i, ''i'' || i FROM generate_series(1, 500) i');

--
-- FOREIGN KEY to a column whose only unique index is fastbtree, and (18)
-- its enforcement in both directions
--
SELECT * FROM both_ams('CREATE TABLE fk_@ (k int REFERENCES u_@ (k) ON UPDATE CASCADE)');
SELECT * FROM both_ams('INSERT INTO fk_@ VALUES (1), (50), (100), (NULL)');
SELECT * FROM both_ams('INSERT INTO fk_@ VALUES (101)');
SELECT * FROM both_ams('DELETE FROM u_@ WHERE k = 1');
SELECT * FROM both_ams('DELETE FROM u_@ WHERE k = 2');
SELECT * FROM both_ams('UPDATE u_@ SET k = 1050 WHERE k = 50');
SELECT * FROM both_rows('SELECT k FROM fk_@ ORDER BY k');
-- ... with a btree unique index too, core takes the first matching index
-- in OID order
CREATE TABLE fk2 (k int);
CREATE UNIQUE INDEX fk2_fastbtree ON fk2 USING fastbtree (k);
CREATE UNIQUE INDEX fk2_btree ON fk2 USING btree (k);
CREATE TABLE fk2_ref (k int REFERENCES fk2 (k));
SELECT count(*) AS fk2_constraints FROM pg_constraint
WHERE conrelid = 'fk2_ref'::regclass AND contype = 'f';

-- REPLICA IDENTITY USING INDEX accepts any unique index
SELECT * FROM both_ams('CREATE TABLE ri_@ (k int NOT NULL); CREATE UNIQUE INDEX ri_@_k ON ri_@ USING @ (k); ALTER TABLE ri_@ REPLICA IDENTITY USING INDEX ri_@_k');

--
-- INSERT ... ON CONFLICT on a table with a unique fastbtree index: with and
-- without a conflict target, DO NOTHING and DO UPDATE, and (18) the rows
-- that result
--
SELECT * FROM both_ams('INSERT INTO i_@ VALUES (1, 0, ''x'') ON CONFLICT DO NOTHING');
SELECT * FROM both_ams('INSERT INTO i_@ VALUES (501, 0, ''x'') ON CONFLICT DO NOTHING');
SELECT * FROM both_ams('INSERT INTO i_@ VALUES (1, 0, ''x'') ON CONFLICT (k) DO NOTHING');
SELECT * FROM both_ams('INSERT INTO i_@ VALUES (1, 0, ''x'') ON CONFLICT (k) DO UPDATE SET j = excluded.j');
SELECT * FROM both_ams('INSERT INTO i_@ SELECT i, 7, ''y'' FROM generate_series(495, 510) i ON CONFLICT (k) DO UPDATE SET j = i_@.j * 10 + excluded.j RETURNING k');
SELECT * FROM both_ams('INSERT INTO i_@ VALUES (2, 0, ''x''), (2, 1, ''x'') ON CONFLICT (k) DO UPDATE SET j = excluded.j');
SELECT * FROM both_ams('INSERT INTO i_@ VALUES (3, 0, ''x'') ON CONFLICT (j) DO NOTHING');
SELECT * FROM both_rows('SELECT k, j, v FROM i_@ WHERE k IN (1, 2, 3) OR k >= 495 ORDER BY k');
SELECT * FROM both_rows('SELECT count(*), sum(j) FROM i_@');
-- ... even when the arbiter is a btree index, PostgreSQL 15 refuses any
-- table with a unique fastbtree index
CREATE TABLE oc (k int, j int);
CREATE UNIQUE INDEX oc_k_btree ON oc USING btree (k);
CREATE UNIQUE INDEX oc_j_fastbtree ON oc USING fastbtree (j);
INSERT INTO oc VALUES (1, 1) ON CONFLICT (k) DO NOTHING;
INSERT INTO oc VALUES (2, 1) ON CONFLICT (k) DO NOTHING;
INSERT INTO oc VALUES (2, 1) ON CONFLICT (j) DO NOTHING;
SELECT * FROM oc ORDER BY k;

-- ADD CONSTRAINT ... USING INDEX
SELECT * FROM both_ams('ALTER TABLE u_@ ADD CONSTRAINT u_@_uk UNIQUE USING INDEX u_@_k');
SELECT * FROM both_ams('ALTER TABLE i_@ ADD CONSTRAINT i_@_pk PRIMARY KEY USING INDEX i_@_k');

--
-- A unique index on a partitioned table (15: core cannot match the
-- partition key to a non-btree index; 18: built on every partition,
-- later ones included, and enforced as btree's)
--
SELECT * FROM both_ams('CREATE TABLE pt_@ (k int, v int) PARTITION BY RANGE (k); CREATE TABLE pt_@_1 PARTITION OF pt_@ FOR VALUES FROM (0) TO (100); CREATE TABLE pt_@_2 PARTITION OF pt_@ FOR VALUES FROM (100) TO (200)');
SELECT * FROM both_ams('CREATE UNIQUE INDEX pt_@_k ON pt_@ USING @ (k)');
SELECT * FROM both_ams('INSERT INTO pt_@ SELECT g, g FROM generate_series(0, 199) g');
SELECT * FROM both_ams('INSERT INTO pt_@ VALUES (150, 0)');
SELECT * FROM both_ams('CREATE TABLE pt_@_3 PARTITION OF pt_@ FOR VALUES FROM (200) TO (300)');
SELECT * FROM both_ams('INSERT INTO pt_@ VALUES (250, 1), (250, 2)');
SELECT c.relname, a.amname, i.indisunique
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	JOIN pg_am a ON a.oid = c.relam
WHERE c.relname LIKE 'pt\_fastbtree\_%' ORDER BY 1;

--
-- REFRESH MATERIALIZED VIEW CONCURRENTLY needs a unique index on the view
-- (15: only a btree one will do; 18: a fastbtree one serves)
--
SELECT * FROM both_ams('CREATE MATERIALIZED VIEW mv_@ AS SELECT k, j FROM i_@');
SELECT * FROM both_ams('CREATE UNIQUE INDEX mv_@_k ON mv_@ USING @ (k)');
SELECT * FROM both_ams('UPDATE i_@ SET j = j + 1 WHERE k <= 10; DELETE FROM i_@ WHERE k = 20; INSERT INTO i_@ VALUES (600, 6, ''new'')');
SELECT * FROM both_ams('REFRESH MATERIALIZED VIEW CONCURRENTLY mv_@');
SELECT * FROM both_rows('SELECT count(*), sum(k), sum(j) FROM mv_@');

-- a non-unique fastbtree index is maintained by ON CONFLICT as usual
CREATE TABLE ocn_btree (k int, j int);
CREATE TABLE ocn_fastbtree (LIKE ocn_btree);
SELECT * FROM both_ams('CREATE UNIQUE INDEX ocn_@_k ON ocn_@ USING btree (k); CREATE INDEX ocn_@_j ON ocn_@ USING @ (j)');
SELECT * FROM both_ams('INSERT INTO ocn_@ SELECT i, i FROM generate_series(1, 100) i ON CONFLICT DO NOTHING');
SELECT * FROM both_ams('INSERT INTO ocn_@ SELECT i, -i FROM generate_series(91, 110) i ON CONFLICT (k) DO UPDATE SET j = excluded.j');
SELECT * FROM both_rows('SELECT k, j FROM ocn_@ WHERE j < 0 ORDER BY j');
SELECT * FROM both_rows('SELECT count(*) FROM ocn_@ WHERE j BETWEEN 1 AND 1000');

\i sql/include/check_all.sql
DROP SCHEMA fbt_unique_core CASCADE;
