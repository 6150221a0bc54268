-- What CREATE INDEX says, beside btree: the DEBUG1 lines of a build
-- (core's "serially", nbtree's verdict on deduplication), and that a unique
-- build that fails on a duplicate says nothing before its error.
CREATE TABLE bm (k int, n numeric, t text COLLATE "C");
INSERT INTO bm SELECT i % 50, i % 50, (i % 50)::text FROM generate_series(1, 200) i;
SET max_parallel_maintenance_workers = 0;
SET client_min_messages = debug1;
CREATE INDEX bm_k_bt ON bm USING btree (k);
CREATE INDEX bm_k_fbt ON bm USING fastbtree (k);
CREATE INDEX bm_n_bt ON bm USING btree (n);
CREATE INDEX bm_n_fbt ON bm USING fastbtree (n);
CREATE INDEX bm_ki_bt ON bm USING btree (k) INCLUDE (t);
CREATE INDEX bm_ki_fbt ON bm USING fastbtree (k) INCLUDE (t);
RESET client_min_messages;
-- duplicates: the same error from both, nothing before it
CREATE UNIQUE INDEX bm_u_bt ON bm USING btree (k);
CREATE UNIQUE INDEX bm_u_fbt ON bm USING fastbtree (k);
RESET max_parallel_maintenance_workers;
DROP TABLE bm;
