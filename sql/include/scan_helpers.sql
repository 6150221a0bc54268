--
-- Helpers shared by the scans* tests, included with \i (a path relative to
-- the top of the source tree, where pg_regress runs): the session settings
-- that keep plans stable, scan_plan(), cmp(), cursor_cmp() and the
-- procedures that force one scan kind.
--
SET jit = off;
SET max_parallel_workers_per_gather = 0;
-- sample whole tables: the same statistics, and plans, on every run
SET default_statistics_target = 1000;

-- scan_plan(q): the index scans in q's plan, in plan order, with the
-- access method of each index
CREATE FUNCTION scan_plan(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	p jsonb;
	res text;
BEGIN
	EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || q INTO p;
	SELECT string_agg(j.n ->> 'Node Type' ||
					  CASE WHEN j.n ->> 'Scan Direction' = 'Backward'
						   THEN ' Backward' ELSE '' END ||
					  ' on ' || c.relname || ' (' || am.amname || ')',
					  ', ' ORDER BY j.o)
	INTO res
	FROM jsonb_path_query(p, 'strict $.**') WITH ORDINALITY AS j(n, o)
		JOIN pg_class c ON c.relname = j.n ->> 'Index Name'
			AND c.relnamespace = current_schema()::regnamespace
		JOIN pg_am am ON am.oid = c.relam
	WHERE jsonb_typeof(j.n) = 'object' AND j.n ? 'Index Name';
	RETURN coalesce(res, 'no index scan');
END
$$;

-- plan_conds(q, suffix): q's plan without costs, the tables' and indexes'
-- suffix (_bt or _fbt) masked, so that two plans compare equal when they
-- place every condition alike
CREATE FUNCTION plan_conds(q text, suffix text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	l text;
	res text := '';
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		res := res || replace(l, suffix, '_AM') || E'\n';
	END LOOP;
	RETURN res;
END
$$;

-- cmp(q): run q on both AMs and compare (see the file header)
CREATE FUNCTION cmp(q text, OUT scan text, OUT nrows int, OUT same_order bool,
	OUT setdiff bigint)
LANGUAGE plpgsql AS $$
DECLARE
	qb text := replace(q, '_AM', '_bt');
	qf text := replace(q, '_AM', '_fbt');
	pb text;
	rb text[];
	rf text[];
BEGIN
	scan := scan_plan(qf);
	pb := scan_plan(qb);
	IF regexp_replace(pb, '_bt(\w*) \(btree\)', '_AM\1', 'g') <>
		regexp_replace(scan, '_fbt(\w*) \(fastbtree\)', '_AM\1', 'g') THEN
		scan := scan || ' / btree: ' || pb;
	END IF;
	EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', qb) INTO rb;
	EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', qf) INTO rf;
	nrows := coalesce(cardinality(rf), 0);
	same_order := rb IS NOT DISTINCT FROM rf;
	-- Without ORDER BY, the order is the plan's: when the planner made a
	-- condition an index condition for one access method and a filter for
	-- the other (cost-based, and so not the same at every run), the two
	-- orders cannot be compared; the rows then must be the same, in the
	-- order of either.
	IF NOT same_order AND q !~* 'order by' AND
		plan_conds(qb, '_bt') <> plan_conds(qf, '_fbt') THEN
		same_order := (SELECT array_agg(x ORDER BY x) FROM unnest(rb) x) IS
			NOT DISTINCT FROM (SELECT array_agg(x ORDER BY x) FROM unnest(rf) x);
	END IF;
	setdiff := 0;
	IF NOT same_order THEN
		EXECUTE format('SELECT count(*) FROM (((%s) EXCEPT ALL (%s)) UNION ALL ((%s) EXCEPT ALL (%s))) d',
					   qb, qf, qf, qb) INTO setdiff;
	END IF;
END
$$;

-- cursor_trace(q, steps): open q as a SCROLL cursor and run the steps
-- (next, prior, first, last, absolute N, relative N, forward N,
-- backward N, forwardall, backwardall; the last four are MOVEs; "exec SQL"
-- runs SQL while the cursor stays open); one line per step: the row
-- fetched, "none", or the number of rows moved or changed
CREATE FUNCTION cursor_trace(q text, steps text[]) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	c refcursor;
	r record;
	s text;
	op text;
	n int;
	cnt bigint;
	res text[] := '{}';
BEGIN
	OPEN c SCROLL FOR EXECUTE q;
	FOREACH s IN ARRAY steps LOOP
		op := split_part(s, ' ', 1);
		n := CASE WHEN op <> 'exec'
				  THEN coalesce(nullif(split_part(s, ' ', 2), '')::int, 0) END;
		CASE op
			WHEN 'next' THEN FETCH NEXT FROM c INTO r;
			WHEN 'prior' THEN FETCH PRIOR FROM c INTO r;
			WHEN 'first' THEN FETCH FIRST FROM c INTO r;
			WHEN 'last' THEN FETCH LAST FROM c INTO r;
			WHEN 'absolute' THEN FETCH ABSOLUTE n FROM c INTO r;
			WHEN 'relative' THEN FETCH RELATIVE n FROM c INTO r;
			WHEN 'forward' THEN MOVE FORWARD n FROM c;
			WHEN 'backward' THEN MOVE BACKWARD n FROM c;
			WHEN 'forwardall' THEN MOVE FORWARD ALL FROM c;
			WHEN 'backwardall' THEN MOVE BACKWARD ALL FROM c;
			WHEN 'exec' THEN EXECUTE substr(s, 6);
		END CASE;
		IF op IN ('forward', 'backward', 'forwardall', 'backwardall') THEN
			GET DIAGNOSTICS cnt = ROW_COUNT;
			res := res || (s || ': moved ' || cnt);
		ELSIF op = 'exec' THEN
			GET DIAGNOSTICS cnt = ROW_COUNT;
			res := res || ('exec: ' || cnt || ' rows');
		ELSE
			res := res || (s || ': ' ||
						   CASE WHEN FOUND THEN r::text ELSE 'none' END);
		END IF;
	END LOOP;
	CLOSE c;
	RETURN res;
END
$$;

-- cursor_cmp(q, steps): cursor_trace on both AMs; ndiff counts the steps
-- whose results differ, last is fastbtree's last step
CREATE FUNCTION cursor_cmp(q text, steps text[], OUT scan text,
	OUT nsteps int, OUT ndiff int, OUT last text)
LANGUAGE plpgsql AS $$
DECLARE
	tb text[] := cursor_trace(replace(q, '_AM', '_bt'),
							  (SELECT array_agg(replace(x, '_AM', '_bt') ORDER BY o)
							   FROM unnest(steps) WITH ORDINALITY AS u(x, o)));
	tf text[] := cursor_trace(replace(q, '_AM', '_fbt'),
							  (SELECT array_agg(replace(x, '_AM', '_fbt') ORDER BY o)
							   FROM unnest(steps) WITH ORDINALITY AS u(x, o)));
BEGIN
	scan := scan_plan(replace(q, '_AM', '_fbt'));
	nsteps := cardinality(tf);
	SELECT count(*) INTO ndiff
	FROM unnest(tb, tf) AS u(b, f) WHERE b IS DISTINCT FROM f;
	last := tf[nsteps];
END
$$;

-- Scan-kind presets
CREATE PROCEDURE use_indexscan() LANGUAGE sql AS $$
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SET enable_indexscan = on; SET enable_indexonlyscan = off;
	SET enable_sort = off;
$$;
-- (the planner takes an index-only scan over an index scan when it can;
-- enable_indexscan = off would penalize both)
CREATE PROCEDURE use_indexonlyscan() LANGUAGE sql AS $$
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SET enable_indexscan = on; SET enable_indexonlyscan = on;
	SET enable_sort = off;
$$;
CREATE PROCEDURE use_bitmapscan() LANGUAGE sql AS $$
	SET enable_seqscan = off; SET enable_bitmapscan = on;
	SET enable_indexscan = off; SET enable_indexonlyscan = off;
	SET enable_sort = on;
$$;

--

-- explain(q, options): the lines of EXPLAIN (COSTS OFF[, options]) q in
-- PostgreSQL 15's format whatever the server's major: BUFFERS off with
-- ANALYZE (on by default since 18), no "Disabled: true" lines (18 marks a
-- node an enable_* setting disfavours), no "Index Searches:" lines (18),
-- whole row counts ("rows=5.00" since 18), and InitPlans without their
-- "(returns $0)" (gone since 17)
CREATE FUNCTION explain(q text, options text DEFAULT '') RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	l text;
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF' ||
		CASE WHEN options ~* 'analyze' THEN ', BUFFERS OFF' ELSE '' END ||
		CASE WHEN options <> '' THEN ', ' || options ELSE '' END || ') ' || q
	LOOP
		CONTINUE WHEN l ~ '^\s*(Disabled: true|Index Searches: \d+)$';
		l := regexp_replace(l, ' \(returns \$\d+(,\$\d+)*\)', '');
		l := regexp_replace(l, 'rows=(\d+)\.00 ', 'rows=\1 ', 'g');
		RETURN NEXT l;
	END LOOP;
END
$$;

-- plan_value(q, field): a number of the top node of q's plan (EXPLAIN
-- FORMAT JSON, with costs): "Plan Rows", "Total Cost", ...
CREATE FUNCTION plan_value(q text, field text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	p json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO p;
	RETURN (p -> 0 -> 'Plan' ->> field)::float8;
END
$$;

-- index_searches(q): the sum of the "Index Searches" counts of q's plan
-- under EXPLAIN ANALYZE (PostgreSQL 18 shows them: the descents of each
-- index scan node, across its loops); NULL when the server shows none
CREATE FUNCTION index_searches(q text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	p jsonb;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q
		INTO p;
	RETURN (SELECT sum(v::text::bigint)
			FROM jsonb_path_query(p, 'strict $.**."Index Searches"') v);
END
$$;
