--
-- Helpers shared by the ddl and unique tests, included with \i (a path
-- relative to the top of the source tree, where pg_regress runs):
-- both_ams() runs a statement template against a btree and a fastbtree
-- table and reports each outcome; both_rows() compares a query's rows.
--
CREATE FUNCTION both_ams(tmpl text)
RETURNS TABLE (am text, result text, same boolean)
LANGUAGE plpgsql AS $$
DECLARE
	st		text;
	msg		text;
	det		text;
	n		bigint;
	bt		text;
BEGIN
	FOREACH am IN ARRAY ARRAY['btree', 'fastbtree']
	LOOP
		BEGIN
			EXECUTE replace(tmpl, '@', am);
			GET DIAGNOSTICS n = ROW_COUNT;
			result := 'OK, ' || n || ' rows';
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE,
				msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
			result := st || ': ' || msg ||
				CASE WHEN det <> '' THEN ' DETAIL: ' || det ELSE '' END;
		END;
		IF am = 'btree' THEN
			bt := replace(result, 'btree', '@');
			same := NULL;
		ELSE
			same := (replace(result, 'fastbtree', '@') = bt);
		END IF;
		RETURN NEXT;
	END LOOP;
END
$$;

-- Rows of query template q for both access methods, read through an index
-- (the plan's scan nodes and conditions are shown, the access method's
-- name masked).
CREATE FUNCTION both_rows(q text)
RETURNS TABLE (am text, plan text, rows text, same boolean)
LANGUAGE plpgsql AS $$
DECLARE
	bt		text;
	line	text;
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	FOREACH am IN ARRAY ARRAY['btree', 'fastbtree']
	LOOP
		plan := NULL;
		FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || replace(q, '@', am)
		LOOP
			IF line ~ '(Scan|Cond:|Filter:)' THEN
				plan := coalesce(plan || '; ', '') ||
					replace(btrim(regexp_replace(line, '^[ ->]*', '')), am, '@');
			END IF;
		END LOOP;
		EXECUTE 'SELECT string_agg(x::text, '' '') FROM (' ||
			replace(q, '@', am) || ') x' INTO rows;
		IF am = 'btree' THEN
			bt := rows;
			same := NULL;
		ELSE
			same := rows IS NOT DISTINCT FROM bt;
		END IF;
		RETURN NEXT;
	END LOOP;
END
$$;
