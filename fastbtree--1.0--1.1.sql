/* fastbtree--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION fastbtree UPDATE TO '1.1'" to load this file. \quit

-- Counters of this backend's descents (README.md, "Lock-free descent").
-- Backend-local, never reset: compare two calls.
CREATE FUNCTION fastbtree_stats(
	OUT descents int8,				-- root-to-leaf descents
	OUT optimistic_validated int8,	-- internal pages searched without a lock
	OUT optimistic_retried int8,	-- unlocked searches redone: version moved
	OUT fallback_odd int8,			-- share-locked: version odd (a writer,
									-- or left odd by recovery)
	OUT fallback_changed int8,		-- share-locked: version moved every try
	OUT fallback_bounds int8,		-- share-locked: bytes failed the checks
	OUT fallback_unsupported int8,	-- share-locked: NULLs compared, or a
									-- split for an inserter to finish
	OUT locked_inner int8,			-- internal pages searched under the share
									-- lock (switch off, recovery, keys not
									-- fixed-width, fallbacks)
	OUT versions_healed int8,		-- odd versions left by recovery made even
	OUT recent_buffer_hits int8,	-- pins through a recent-buffer hint
	OUT recent_buffer_misses int8,	-- hints found stale
	OUT scan_pin_reuses int8,		-- internal pages found in a scan's pins
	OUT scan_pins_taken int8)		-- pins kept for a scan's lifetime
RETURNS record
AS 'MODULE_PATHNAME', 'fastbtree_stats'
LANGUAGE C STRICT PARALLEL RESTRICTED;

-- PostgreSQL 18's btree range_ops has a sort support function
-- (range_sortsupport, which does not exist before 18); fastbtree's family
-- mirrors btree's, so it gets it too where the server has it.
DO $$
BEGIN
	IF current_setting('server_version_num')::int >= 180000 THEN
		EXECUTE 'ALTER OPERATOR FAMILY range_ops USING fastbtree '
			'ADD FUNCTION 2 (anyrange, anyrange) pg_catalog.range_sortsupport(internal)';
	END IF;
END
$$;
