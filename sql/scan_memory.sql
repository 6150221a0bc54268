--
-- scan_memory: what a scan allocates for its lifetime goes to the scan's
-- memory context, and leaves with it, also when an error ends the scan
-- (fbtbeginscan keeps one scan state in TopMemoryContext for the next
-- scan: nothing may hang off it).  Each failing statement below is its own
-- transaction; a sort support context (text in the default collation) or
-- an array context (= ANY on numeric) left in TopMemoryContext would show
-- in pg_backend_memory_contexts, one per failed statement.
--
CREATE TABLE mleak (t text, n numeric);
INSERT INTO mleak SELECT 'k' || g, g FROM generate_series(1, 1000) g;
CREATE INDEX mleak_t ON mleak USING fastbtree (t);
CREATE INDEX mleak_n ON mleak USING fastbtree (n);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT 1 / (length(t) - length(t)) FROM mleak WHERE t = 'k5';
SELECT 1 / (length(t) - length(t)) FROM mleak WHERE t = 'k6';
SELECT 1 / (n - n) FROM mleak WHERE n IN (5, 6, 7);
SELECT 1 / (n - n) FROM mleak WHERE n IN (8, 9);
SELECT 1 / (length(t) - length(t)) FROM mleak WHERE t = 'k7';
-- the scans work after the errors
SELECT t FROM mleak WHERE t = 'k5';
SELECT n FROM mleak WHERE n IN (5, 6, 7) ORDER BY n;
-- nothing of fastbtree's left in this backend's memory
SELECT count(*) AS fastbtree_contexts_left
FROM pg_backend_memory_contexts WHERE name LIKE 'fastbtree%';
DROP TABLE mleak;
