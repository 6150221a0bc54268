/* fastbtree--1.6--1.7.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION fastbtree UPDATE TO '1.7'" to load this file. \quit

-- fastbtree_stats() gains leaf_hint_hits and leaf_hint_misses, the leaves
-- index scans pinned atomically through a leaf hint and the hints they
-- found stale (README.design, "Pins"): a function's result columns cannot
-- be changed in place.  The library answers a 1.3 catalog's 13 columns, a
-- 1.4 or 1.5 catalog's 16 and a 1.6 catalog's 17 as before.
DROP FUNCTION fastbtree_stats();
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
	OUT scan_pins_taken int8,		-- pins kept for a scan's lifetime
	OUT prefetches int8,			-- heap blocks index scans prefetched
	OUT prefetch_hits int8,			-- ... that were in shared buffers already
	OUT prefetch_distance int8,		-- the last scan's prefetch distance
									-- (rows ahead; 0 while only probing)
	OUT prefetch_read_ahead int8,	-- leaves read ahead for the heap blocks
									-- of their first matches
	OUT leaf_hint_hits int8,		-- leaves pinned atomically by a leaf hint
	OUT leaf_hint_misses int8)		-- leaf hints found stale
RETURNS record
AS 'MODULE_PATHNAME', 'fastbtree_stats'
LANGUAGE C STRICT PARALLEL RESTRICTED;
