--
-- fast_compare: the specialized comparisons (fastbtree.fast_compare = on)
-- give exactly the answers of the general fmgr path (off) and of btree.
--
-- One table, indexed by btree and by fastbtree on every column kind the
-- fast paths cover (int2/int4/int8, oid, date, timestamp[tz], time,
-- float4/float8 with NaN, -0 and infinities, "C" text), plus the general
-- path (numeric, default-collation text) and a two-column key, with NULLs,
-- DESC and NULLS FIRST.  Every query runs three ways -- btree, fastbtree
-- with fast_compare on, and off -- and the outputs, in order, are compared.
--
CREATE SCHEMA fbt_fc;
SET search_path = fbt_fc, public;
SET jit = off;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE v (
	i2 int2, i4 int4, i8 int8, o oid, d date, ts timestamp, tz timestamptz,
	tm time, f4 float4, f8 float8, tc text COLLATE "C", td text,
	n numeric, a int4, b int4);

INSERT INTO v
SELECT (g % 300 - 150)::int2,
	   g % 2000 - 1000,
	   (g::int8 * 7919) % 100003 - 50000,
	   (g * 31 % 5000)::oid,
	   date '2000-01-01' + (g % 3000),
	   timestamp '2020-01-01' + (g % 4000) * interval '37 minutes',
	   timestamptz '2020-01-01 00:00+00' + (g % 4000) * interval '41 minutes',
	   time '00:00' + (g % 1440) * interval '1 minute',
	   CASE g % 11 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' WHEN 2 THEN 'Infinity'
	   WHEN 3 THEN '-Infinity' ELSE (g % 500) / 4.0 END,
	   CASE g % 13 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' WHEN 2 THEN 'Infinity'
	   WHEN 3 THEN '-Infinity' ELSE (g % 700) / 8.0 END,
	   md5((g % 1500)::text),
	   md5((g % 1700)::text),
	   (g % 900) / 7.0,
	   g % 40, g % 17
FROM generate_series(1, 30000) g;
-- NULLs in every column, and a few all-NULL rows
INSERT INTO v SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL FROM generate_series(1, 50);
INSERT INTO v (i4, a, b, f8) SELECT g % 7, NULL, g % 5, NULL
FROM generate_series(1, 300) g;
INSERT INTO v (f4, f8) VALUES ('-0', '0'), ('0', '-0');

-- Every index exists as btree (suffix _bt) and fastbtree (_fb)
CREATE FUNCTION mk(am text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	c text;
	sfx text := CASE am WHEN 'btree' THEN 'bt' ELSE 'fb' END;
BEGIN
	FOREACH c IN ARRAY ARRAY['i2', 'i4', 'i8', 'o', 'd', 'ts', 'tz', 'tm',
							 'f4', 'f8', 'tc', 'td', 'n'] LOOP
		EXECUTE format('CREATE INDEX v_%s_%s ON v USING %s (%s)', c, sfx, am, c);
	END LOOP;
	EXECUTE format('CREATE INDEX v_i4d_%s ON v USING %s (i4 DESC NULLS LAST)', sfx, am);
	EXECUTE format('CREATE INDEX v_f8d_%s ON v USING %s (f8 DESC, i4)', sfx, am);
	EXECUTE format('CREATE INDEX v_f4n_%s ON v USING %s (f4 NULLS FIRST)', sfx, am);
	EXECUTE format('CREATE INDEX v_ab_%s ON v USING %s (a, b DESC)', sfx, am);
	EXECUTE format('CREATE INDEX v_tcd_%s ON v USING %s (tc DESC NULLS FIRST)', sfx, am);
END $$;
SELECT mk('btree');
SELECT mk('fastbtree');
VACUUM ANALYZE v;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_sort = off;

-- run q with only the indexes of one kind available; return its rows in
-- output order as one text, and the index scans its plan used
CREATE FUNCTION run(q text, am text, fast bool, OUT rows text, OUT scans text)
LANGUAGE plpgsql AS $$
DECLARE
	hide text := CASE am WHEN 'btree' THEN '_fb' ELSE '_bt' END;
	r record;
	l text;
BEGIN
	EXECUTE format('SET LOCAL fastbtree.fast_compare = %s', fast);
	FOR r IN SELECT indexrelid::regclass::text AS i FROM pg_index
		WHERE indrelid = 'v'::regclass LOOP
		IF r.i LIKE '%' || hide THEN
			EXECUTE format('UPDATE pg_index SET indisvalid = false WHERE indexrelid = %L::regclass', r.i);
		END IF;
	END LOOP;
	scans := '';
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF l ~ 'Index (Only )?Scan' THEN
			scans := scans || regexp_replace(l, '^.*Index (Only )?Scan( Backward)? using (\S+).*$', '\3\2') || ' ';
		END IF;
	END LOOP;
	EXECUTE 'SELECT string_agg(x::text, '';'') FROM (' || q || ') x' INTO rows;
	UPDATE pg_index SET indisvalid = true WHERE indrelid = 'v'::regclass;
END $$;

-- run q three ways in subtransactions (the catalog tweak is rolled back)
CREATE FUNCTION cmp(q text, OUT fbt_scans text, OUT nrows int,
					OUT on_eq_btree bool, OUT off_eq_btree bool)
LANGUAGE plpgsql AS $$
DECLARE
	bt text;
	fon text;
	foff text;
	s text;
BEGIN
	SELECT rows INTO bt FROM run(q, 'btree', true);
	SELECT rows, scans INTO fon, s FROM run(q, 'fastbtree', true);
	SELECT rows INTO foff FROM run(q, 'fastbtree', false);
	fbt_scans := s;
	nrows := coalesce(array_length(string_to_array(fon, ';'), 1), 0);
	on_eq_btree := fon IS NOT DISTINCT FROM bt;
	off_eq_btree := foff IS NOT DISTINCT FROM bt;
END $$;

-- integers, same-type and cross-type
SELECT * FROM cmp('SELECT i4 FROM v WHERE i4 = 17 ORDER BY i4');
SELECT * FROM cmp('SELECT i4 FROM v WHERE i4 BETWEEN -3 AND 12 ORDER BY i4');
SELECT * FROM cmp('SELECT i4 FROM v WHERE i4 > 990 ORDER BY i4 DESC');
SELECT * FROM cmp('SELECT i4 FROM v WHERE i4 = 17::int8 ORDER BY i4');
SELECT * FROM cmp('SELECT i4 FROM v WHERE i4 < 4000000000::int8 AND i4 > -5::int2 ORDER BY i4 LIMIT 20');
SELECT * FROM cmp('SELECT i4 FROM v WHERE i4 >= -2147483648 AND i4 < -995 ORDER BY i4');
SELECT * FROM cmp('SELECT i2 FROM v WHERE i2 = 7 ORDER BY i2');
SELECT * FROM cmp('SELECT i2 FROM v WHERE i2 > 100000::int4 ORDER BY i2');
SELECT * FROM cmp('SELECT i2 FROM v WHERE i2 < -140::int8 ORDER BY i2 DESC');
SELECT * FROM cmp('SELECT i8 FROM v WHERE i8 BETWEEN -40 AND 40 ORDER BY i8');
SELECT * FROM cmp('SELECT i8 FROM v WHERE i8 = 12::int2 OR i8 = 49999::int4 ORDER BY i8');
SELECT * FROM cmp('SELECT i8 FROM v WHERE i8 > 9223372036854775000 ORDER BY i8');
SELECT * FROM cmp('SELECT o FROM v WHERE o > 4990 ORDER BY o');
SELECT * FROM cmp('SELECT o FROM v WHERE o = 31 ORDER BY o');
-- DESC NULLS LAST, and IS NULL / IS NOT NULL
SELECT * FROM cmp('SELECT i4 FROM v WHERE i4 <= -990 ORDER BY i4 DESC NULLS LAST');
SELECT * FROM cmp('SELECT i4 FROM v WHERE i4 IS NULL ORDER BY i4 DESC NULLS LAST');
SELECT * FROM cmp('SELECT count(*) FROM v WHERE i4 IS NOT NULL');
-- date and time types, with cross-type date/timestamp quals
SELECT * FROM cmp('SELECT d FROM v WHERE d = date ''2003-01-01'' ORDER BY d');
SELECT * FROM cmp('SELECT d FROM v WHERE d >= timestamp ''2008-03-01 12:00'' ORDER BY d LIMIT 30');
SELECT * FROM cmp('SELECT ts FROM v WHERE ts BETWEEN ''2020-01-02'' AND ''2020-01-03'' ORDER BY ts');
SELECT * FROM cmp('SELECT ts FROM v WHERE ts < date ''2020-01-01'' + 1 ORDER BY ts DESC');
SELECT * FROM cmp('SELECT tz FROM v WHERE tz > ''2020-03-24 00:00+00'' ORDER BY tz');
SELECT * FROM cmp('SELECT tz FROM v WHERE tz = timestamp ''2020-01-01 00:41'' ORDER BY tz');
SELECT * FROM cmp('SELECT tm FROM v WHERE tm BETWEEN ''23:50'' AND ''23:59:59'' ORDER BY tm');
-- floats: NaN sorts above +Infinity and equals NaN; -0 equals 0
SELECT * FROM cmp('SELECT f8 FROM v WHERE f8 = ''NaN'' ORDER BY f8');
SELECT * FROM cmp('SELECT f8 FROM v WHERE f8 > ''Infinity'' ORDER BY f8');
SELECT * FROM cmp('SELECT f8 FROM v WHERE f8 >= 87 ORDER BY f8');
SELECT * FROM cmp('SELECT f8 FROM v WHERE f8 = 0 ORDER BY f8');
SELECT * FROM cmp('SELECT f8 FROM v WHERE f8 < -1e300 ORDER BY f8 DESC');
SELECT * FROM cmp('SELECT f8, i4 FROM v WHERE f8 >= 86 ORDER BY f8 DESC, i4');
SELECT * FROM cmp('SELECT f4 FROM v WHERE f4 = ''-0''::float4 ORDER BY f4');
SELECT * FROM cmp('SELECT f4 FROM v WHERE f4 = 0.25::float8 ORDER BY f4');
SELECT * FROM cmp('SELECT f4 FROM v WHERE f4 > 124.5::float8 ORDER BY f4 NULLS FIRST');
SELECT * FROM cmp('SELECT f4 FROM v WHERE f4 IS NULL OR f4 < ''-1e30''::float4 ORDER BY f4 NULLS FIRST');
-- text: "C" collation (memcmp path) and the database default (fmgr path)
SELECT * FROM cmp('SELECT tc FROM v WHERE tc = md5(''42'') ORDER BY tc');
SELECT * FROM cmp('SELECT tc FROM v WHERE tc BETWEEN ''f'' AND ''f1'' ORDER BY tc');
SELECT * FROM cmp('SELECT tc FROM v WHERE tc > ''ffe'' ORDER BY tc DESC NULLS FIRST');
SELECT * FROM cmp('SELECT td FROM v WHERE td >= ''fe'' ORDER BY td LIMIT 25');
SELECT * FROM cmp('SELECT n FROM v WHERE n BETWEEN 10 AND 10.5 ORDER BY n');
-- two columns: the first decided fast, ties settled by the second
SELECT * FROM cmp('SELECT a, b FROM v WHERE a = 7 ORDER BY a, b DESC');
SELECT * FROM cmp('SELECT a, b FROM v WHERE a = 7 AND b > 10 ORDER BY a, b DESC');
SELECT * FROM cmp('SELECT a, b FROM v WHERE a BETWEEN 38 AND 39 AND b < 3 ORDER BY a DESC, b');
SELECT * FROM cmp('SELECT a, b FROM v WHERE a IS NULL AND b = 2 ORDER BY a, b DESC');
-- = ANY(array) and nested-loop probes (rescans with changing arguments)
SELECT * FROM cmp('SELECT i8 FROM v WHERE i8 = ANY(ARRAY[-50000, 7, 7, NULL, 49999]::int8[]) ORDER BY i8');
SELECT * FROM cmp('SELECT f8 FROM v WHERE f8 = ANY(''{NaN,0,-0,Infinity,1.5}'') ORDER BY f8');
SELECT * FROM cmp('SELECT g, count(v.i4) FROM generate_series(-1000, 1000, 97) g LEFT JOIN v ON v.i4 = g GROUP BY g ORDER BY g');

-- the GUC is user-settable and documented
SHOW fastbtree.fast_compare;
SELECT name, setting, context, short_desc FROM pg_settings
WHERE name = 'fastbtree.fast_compare';

-- every index is still valid by the checker
SELECT count(*) AS checked
FROM (SELECT c.oid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	  JOIN pg_am a ON a.oid = c.relam
	  WHERE i.indrelid = 'v'::regclass AND a.amname = 'fastbtree'
	  OFFSET 0) f,
	LATERAL fastbtree_check(f.oid::regclass, true);

DROP SCHEMA fbt_fc CASCADE;
