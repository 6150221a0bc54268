-- Issue 26, item 6: INSERT ... ON CONFLICT whose inference clause names an
-- operator class finds a unique fastbtree index with that class, as it
-- finds a btree one (PostgreSQL 18; on 15 core accepts only btree arbiters
-- and refuses any ON CONFLICT on such a table: expected/onconflict_opclass_1.out).
-- Each statement runs on t_f (fastbtree) and its twin t_b (btree).
SET client_min_messages = notice;
CREATE TABLE oc_f (k int, f text, n int DEFAULT 0);
CREATE TABLE oc_b (k int, f text, n int DEFAULT 0);
CREATE UNIQUE INDEX oc_f_kf ON oc_f USING fastbtree (k, f text_pattern_ops);
CREATE UNIQUE INDEX oc_b_kf ON oc_b USING btree (k, f text_pattern_ops);
CREATE FUNCTION oc_both(q text) RETURNS TABLE (side text, result text)
LANGUAGE plpgsql AS $$
DECLARE
	t text;
	n bigint;
BEGIN
	FOREACH t IN ARRAY ARRAY['oc_f', 'oc_b'] LOOP
		BEGIN
			EXECUTE format(q, t);
			GET DIAGNOSTICS n = ROW_COUNT;
			side := t;
			result := n || ' row(s)';
		EXCEPTION WHEN OTHERS THEN
			side := t;
			result := SQLSTATE || ': ' || SQLERRM;
		END;
		RETURN NEXT;
	END LOOP;
END $$;

SELECT * FROM oc_both('INSERT INTO %s VALUES (1, ''a'') ON CONFLICT (k, f text_pattern_ops) DO NOTHING');
SELECT * FROM oc_both('INSERT INTO %s VALUES (1, ''a'') ON CONFLICT (k, f text_pattern_ops) DO NOTHING');
SELECT * FROM oc_both('INSERT INTO %s VALUES (1, ''a'') ON CONFLICT (f text_pattern_ops, k) DO UPDATE SET n = %1$s.n + 1');
SELECT * FROM oc_both('INSERT INTO %s VALUES (2, ''b'') ON CONFLICT (k, f text_pattern_ops) DO UPDATE SET n = %1$s.n + 1');
SELECT * FROM oc_both('INSERT INTO %s VALUES (1, ''a'') ON CONFLICT (k, f) DO UPDATE SET n = %1$s.n + 10');
-- another class of the column: no arbiter on either side
SELECT * FROM oc_both('INSERT INTO %s VALUES (1, ''a'') ON CONFLICT (k, f text_ops) DO NOTHING');
-- in a WITH query, and through a rule
SELECT * FROM oc_both('WITH w AS (INSERT INTO %s VALUES (3, ''c'') ON CONFLICT (k, f text_pattern_ops) DO UPDATE SET n = 7 RETURNING *) SELECT * FROM w');
CREATE TABLE oc_src (k int, f text);
CREATE RULE oc_src_ins AS ON INSERT TO oc_src DO INSTEAD (
	INSERT INTO oc_f VALUES (NEW.k, NEW.f) ON CONFLICT (k, f text_pattern_ops) DO UPDATE SET n = oc_f.n + 100;
	INSERT INTO oc_b VALUES (NEW.k, NEW.f) ON CONFLICT (k, f text_pattern_ops) DO UPDATE SET n = oc_b.n + 100);
INSERT INTO oc_src VALUES (1, 'a'), (4, 'd');
SELECT * FROM oc_f ORDER BY k, f;
SELECT * FROM oc_b ORDER BY k, f;
DROP TABLE oc_src, oc_f, oc_b;
DROP FUNCTION oc_both(text);
