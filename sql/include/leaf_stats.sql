--
-- Helpers of the deletion, page deletion and deduplication tests,
-- included with \i:
-- npages() is an index's size in blocks, dead_entries() the count of
-- entries marked LP_DEAD over every leaf of a fastbtree index.
--
CREATE FUNCTION npages(idx regclass) RETURNS bigint
LANGUAGE sql AS $$
	SELECT pg_relation_size(idx) / current_setting('block_size')::bigint
$$;

CREATE FUNCTION dead_entries(idx regclass) RETURNS bigint
LANGUAGE sql AS $$
	SELECT coalesce(sum(s.dead_items), 0)
	FROM generate_series(1, npages(idx) - 1) b,
		LATERAL fastbtree_page_stats(idx, b) s
	WHERE s.type = 'l'
$$;
