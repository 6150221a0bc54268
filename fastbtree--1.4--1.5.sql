/* fastbtree--1.4--1.5.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION fastbtree UPDATE TO '1.5'" to load this file. \quit

-- Side by side on one's own queries (README.md, "Side by side on your own
-- queries"): fastbtree_twin() makes the twin of an index in the other
-- access method, fastbtree.prefer (the library's planner hook) chooses a
-- side, fastbtree_compare() runs one query on both.

/*
 * fastbtree_twin(index, concurrently) -- the CREATE INDEX statement of the
 * twin of btree or fastbtree index "index" in the other access method:
 * the same table, columns or expressions, operator classes (the other
 * method's class of the same name and input type), collations, DESC and
 * NULLS order, INCLUDE columns, predicate, uniqueness with NULLS NOT
 * DISTINCT, storage parameters (fillfactor, deduplicate_items) and
 * tablespace, named after the original with "_fbt" (a fastbtree twin) or
 * "_bt" (a btree one) added, and a number if that name is taken.  Runs the
 * statement and returns it; with concurrently, returns the CREATE INDEX
 * CONCURRENTLY statement without running it (PostgreSQL runs that only as
 * a top-level statement: psql's \gexec does).  Errors: the index is not a
 * btree or fastbtree one (42809), is not valid (55000), already has a twin
 * (42710), or has an operator class the other method lacks (0A000); then
 * whatever CREATE INDEX raises.
 */
CREATE FUNCTION fastbtree_twin(index regclass, concurrently bool DEFAULT false)
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ind pg_index;
	cls pg_class;
	srcam name;
	dstam name;
	dstamoid oid;
	cols text[] := '{}';
	incl text[] := '{}';
	def text;
	opc record;
	dstopc text;
	opt int2;
	base text;
	newname text;
	n int := 0;
	stmt text;
BEGIN
	SELECT * INTO ind FROM pg_index WHERE indexrelid = index;
	IF NOT FOUND THEN
		RAISE EXCEPTION '"%" is not an index', index
			USING ERRCODE = 'wrong_object_type';
	END IF;
	SELECT * INTO cls FROM pg_class WHERE oid = index;
	SELECT amname INTO srcam FROM pg_am WHERE oid = cls.relam;
	IF srcam = 'btree' THEN
		dstam := 'fastbtree';
	ELSIF srcam = 'fastbtree' THEN
		dstam := 'btree';
	ELSE
		RAISE EXCEPTION 'index "%" is neither a btree nor a fastbtree index', index
			USING ERRCODE = 'wrong_object_type',
				  DETAIL = format('Its access method is %s.', srcam);
	END IF;
	IF NOT ind.indisvalid THEN
		RAISE EXCEPTION 'index "%" is not valid', index
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = 'REINDEX it, or drop it and create it again.';
	END IF;
	SELECT oid INTO dstamoid FROM pg_am WHERE amname = dstam;

	-- one twin is enough: an index of the other method with the same
	-- definition (but for its name) is one already
	SELECT c.relname INTO newname
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE i.indrelid = ind.indrelid AND c.relam = dstamoid
		  AND replace(replace(pg_get_indexdef(index),
							  ' USING ' || quote_ident(srcam) || ' ',
							  ' USING ' || quote_ident(dstam) || ' '),
					  'INDEX ' || quote_ident(cls.relname) || ' ON',
					  'INDEX ' || quote_ident(c.relname) || ' ON')
			= pg_get_indexdef(c.oid)
		LIMIT 1;
	IF newname IS NOT NULL THEN
		RAISE EXCEPTION 'index "%" already has a % twin: "%"', index, dstam, newname
			USING ERRCODE = 'duplicate_object';
	END IF;

	FOR k IN 0 .. ind.indnatts - 1 LOOP
		def := pg_get_indexdef(index, k + 1, false);
		IF ind.indkey[k] = 0 THEN
			def := '(' || def || ')';
		END IF;
		IF k >= ind.indnkeyatts THEN
			incl := incl || def;
			CONTINUE;
		END IF;
		IF ind.indcollation[k] <> 0 THEN
			def := def || ' COLLATE ' || (SELECT format('%I.%I', nspname, collname)
				FROM pg_collation c JOIN pg_namespace s ON s.oid = c.collnamespace
				WHERE c.oid = ind.indcollation[k]);
		END IF;
		SELECT c.opcname, c.opcintype INTO opc FROM pg_opclass c
			WHERE c.oid = ind.indclass[k];
		SELECT format('%I.%I', s.nspname, c.opcname) INTO dstopc
			FROM pg_opclass c JOIN pg_namespace s ON s.oid = c.opcnamespace
			WHERE c.opcmethod = dstamoid AND c.opcname = opc.opcname
			  AND c.opcintype = opc.opcintype
			ORDER BY s.nspname = 'pg_catalog' DESC, s.nspname LIMIT 1;
		IF dstopc IS NULL THEN
			RAISE EXCEPTION '% has no operator class "%" for type %', dstam,
				opc.opcname, format_type(opc.opcintype, NULL)
				USING ERRCODE = 'feature_not_supported',
					  DETAIL = format('Column %s of index "%s" uses it.', k + 1, index),
					  HINT = 'fastbtree has a class of the same name for each of btree''s built-in operator classes; a class of one''s own needs its twin created in the other method first.';
		END IF;
		def := def || ' ' || dstopc;
		opt := ind.indoption[k];
		IF opt & 1 = 1 THEN
			def := def || ' DESC';
			IF opt & 2 = 0 THEN
				def := def || ' NULLS LAST';
			END IF;
		ELSIF opt & 2 = 2 THEN
			def := def || ' NULLS FIRST';
		END IF;
		cols := cols || def;
	END LOOP;

	-- a name of its own: the original's, the suffix, then a number if taken
	base := cls.relname;
	LOOP
		newname := base || CASE dstam WHEN 'fastbtree' THEN '_fbt' ELSE '_bt' END
			|| CASE WHEN n > 0 THEN n::text ELSE '' END;
		IF octet_length(newname) > 63 THEN
			base := left(base, length(base) - 1);
			CONTINUE;
		END IF;
		EXIT WHEN NOT EXISTS (SELECT 1 FROM pg_class
			WHERE relname = newname AND relnamespace = cls.relnamespace);
		n := n + 1;
	END LOOP;

	stmt := format('CREATE %sINDEX %s%I ON %s USING %I (%s)%s%s%s%s%s',
		CASE WHEN ind.indisunique THEN 'UNIQUE ' ELSE '' END,
		CASE WHEN $2 THEN 'CONCURRENTLY ' ELSE '' END,
		newname,
		ind.indrelid::regclass,
		dstam,
		array_to_string(cols, ', '),
		CASE WHEN cardinality(incl) > 0
			THEN ' INCLUDE (' || array_to_string(incl, ', ') || ')' ELSE '' END,
		CASE WHEN ind.indnullsnotdistinct THEN ' NULLS NOT DISTINCT' ELSE '' END,
		CASE WHEN cls.reloptions IS NOT NULL
			THEN ' WITH (' || array_to_string(cls.reloptions, ', ') || ')' ELSE '' END,
		CASE WHEN cls.reltablespace <> 0
			THEN ' TABLESPACE ' || quote_ident((SELECT spcname FROM pg_tablespace
				WHERE oid = cls.reltablespace)) ELSE '' END,
		CASE WHEN ind.indpred IS NOT NULL
			THEN ' WHERE ' || pg_get_expr(ind.indpred, ind.indrelid) ELSE '' END);
	-- ($2: the parameter's name is a keyword in SQL expressions)
	IF $2 THEN
		RAISE NOTICE 'the CREATE INDEX CONCURRENTLY statement is returned, not run (a function cannot run it): psql''s \gexec runs it';
	ELSE
		EXECUTE stmt;
	END IF;
	RETURN stmt;
END
$$;

/*
 * fastbtree_compare(query, runs) -- run read-only query "query" on each
 * side of the twin indexes it can use (fastbtree.prefer = btree, then
 * fastbtree), and compare.  Both sides first return their rows once
 * (which warms the caches); the rows, as a sorted set of their text forms,
 * must be the same, else ERROR.  Then "runs" rounds of EXPLAIN (ANALYZE,
 * BUFFERS, TIMING OFF), one per side, the side that goes first
 * alternating.  One row per side: the indexes its plan used, the median,
 * lowest and highest execution time (ms), the median shared buffers hit
 * and read per run, and the speedup (btree's median time / this side's:
 * above 1, this side is faster) with its range over the rounds.  All of it
 * runs in a read-only subtransaction, rolled back at the end, so the
 * settings are as before and nothing the query does remains.  Errors: not
 * a single SELECT, VALUES, TABLE or WITH query (0A000), runs outside
 * 1..1000 (22023), rows that differ (P0001, naming the query); whatever
 * the query raises (a write: 25006).
 */
CREATE FUNCTION fastbtree_compare(query text, runs int DEFAULT 10)
RETURNS TABLE (side text, indexes text, median_ms numeric, min_ms numeric,
	max_ms numeric, shared_hit bigint, shared_read bigint, speedup numeric,
	speedup_range text)
LANGUAGE plpgsql
AS $$
DECLARE
	sides text[] := ARRAY['btree', 'fastbtree'];
	body text;
	plan jsonb;
	hash text[] := '{NULL,NULL}';
	nrows bigint[] := '{0,0}';
	times float8[] := '{}';		-- [round][side] flattened: 2 * (r - 1) + s
	hits bigint[] := '{}';
	reads bigint[] := '{}';
	idx text[] := '{NULL,NULL}';
	s int;
	h text;
	nr bigint;
	names text;
	ratios float8[] := '{}';
	med float8[] := '{0,0}';
BEGIN
	IF runs IS NULL OR runs < 1 OR runs > 1000 THEN
		RAISE EXCEPTION 'runs must be between 1 and 1000'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- the query without its leading comments must start as a query does
	body := regexp_replace(query, '^(\s|--[^\n]*(\n|$)|/\*.*?\*/)*', '');
	IF body !~* '^(\(|select\M|with\M|values\M|table\M)' THEN
		RAISE EXCEPTION 'fastbtree_compare runs one read-only query: SELECT, VALUES, TABLE or WITH ... SELECT'
			USING ERRCODE = 'feature_not_supported',
				  DETAIL = format('Query: %s', query);
	END IF;
	body := rtrim(body, E' \t\n\r;');
	-- the library defines fastbtree.prefer: load it
	PERFORM fastbtree_stats();

	BEGIN
		PERFORM set_config('transaction_read_only', 'on', true);
		EXECUTE 'EXPLAIN (FORMAT JSON) ' || body INTO plan;
		IF jsonb_path_exists(plan, 'strict $.**."Node Type" ? (@ == "ModifyTable")') THEN
			RAISE EXCEPTION 'fastbtree_compare runs read-only queries only'
				USING ERRCODE = 'feature_not_supported',
					  DETAIL = format('Query: %s', query);
		END IF;

		-- the rows, once per side (the warm-up)
		FOR s IN 1 .. 2 LOOP
			PERFORM set_config('fastbtree.prefer', sides[s], true);
			EXECUTE format('SELECT md5(coalesce(string_agg(r, E''\n'' ORDER BY r), '''')), count(*) FROM (SELECT x::text AS r FROM (%s) x) y', body)
				INTO h, nr;
			hash[s] := h;
			nrows[s] := nr;
		END LOOP;
		IF hash[1] IS DISTINCT FROM hash[2] THEN
			RAISE EXCEPTION 'btree and fastbtree return different rows for query: %', query
				USING DETAIL = format('btree: %s rows, fastbtree: %s rows (compared as a sorted set).', nrows[1], nrows[2]),
					  HINT = 'A query whose result changes from run to run (random(), now(), concurrent writes) cannot be compared; else check both indexes with fastbtree_check() and bt_index_check().';
		END IF;

		FOR r IN 1 .. runs LOOP
			FOR k IN 1 .. 2 LOOP
				s := CASE WHEN (r % 2 = 1) = (k = 1) THEN 1 ELSE 2 END;
				PERFORM set_config('fastbtree.prefer', sides[s], true);
				EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ' || body
					INTO plan;
				times[2 * (r - 1) + s] := (plan->0->>'Execution Time')::float8;
				hits[2 * (r - 1) + s] := (plan->0->'Plan'->>'Shared Hit Blocks')::bigint;
				reads[2 * (r - 1) + s] := (plan->0->'Plan'->>'Shared Read Blocks')::bigint;
				IF r = 1 THEN
					SELECT coalesce(string_agg(DISTINCT v #>> '{}', ', '), '(none)')
						INTO names
						FROM jsonb_path_query(plan, 'strict $.**."Index Name"') v;
					idx[s] := names;
				END IF;
			END LOOP;
			ratios := ratios || (times[2 * r - 1] / nullif(times[2 * r], 0));
		END LOOP;
		-- roll the subtransaction back: settings as before, nothing kept
		RAISE EXCEPTION USING ERRCODE = 'FBTCM';
	EXCEPTION WHEN SQLSTATE 'FBTCM' THEN
		NULL;
	END;

	IF idx[1] = idx[2] THEN
		RAISE NOTICE 'both sides used the same indexes, so no twin was compared: %', idx[1]
			USING HINT = 'Create one with fastbtree_twin(index).';
	END IF;
	FOR s IN 1 .. 2 LOOP
		med[s] := (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY t)
			FROM unnest(times) WITH ORDINALITY u(t, i) WHERE (i - s) % 2 = 0);
	END LOOP;
	FOR s IN 1 .. 2 LOOP
		side := sides[s];
		indexes := idx[s];
		median_ms := round(med[s]::numeric, 3);
		SELECT round(min(t)::numeric, 3), round(max(t)::numeric, 3)
			INTO min_ms, max_ms
			FROM unnest(times) WITH ORDINALITY u(t, i) WHERE (i - s) % 2 = 0;
		SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY b)
			INTO shared_hit
			FROM unnest(hits) WITH ORDINALITY u(b, i) WHERE (i - s) % 2 = 0;
		SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY b)
			INTO shared_read
			FROM unnest(reads) WITH ORDINALITY u(b, i) WHERE (i - s) % 2 = 0;
		IF s = 1 THEN
			speedup := 1.00;
			speedup_range := NULL;
		ELSE
			speedup := round((med[1] / nullif(med[2], 0))::numeric, 2);
			SELECT round(min(x)::numeric, 2) || '-' || round(max(x)::numeric, 2)
				INTO speedup_range FROM unnest(ratios) x;
		END IF;
		RETURN NEXT;
	END LOOP;
END
$$;
