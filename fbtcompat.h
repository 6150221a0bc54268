/*-------------------------------------------------------------------------
 *
 * fbtcompat.h
 *	  The seams between the PostgreSQL majors fastbtree builds against
 *	  (15, 18): every PG_VERSION_NUM test of the source tree is here, as a
 *	  macro or an inline function named for what it does, so that the
 *	  modules read the same on every major.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FBTCOMPAT_H
#define FBTCOMPAT_H

#include "access/genam.h"
#include "access/nbtxlog.h"
#include "access/relscan.h"
#include "commands/vacuum.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/bufpage.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"
#if PG_VERSION_NUM >= 170000
#include "storage/bulk_write.h"
#else
#include "access/xloginsert.h"
#include "storage/smgr.h"
#endif

/*
 * FBT_FUNCTION_INFO_V1(f): PG_FUNCTION_INFO_V1(f) for a SQL-callable C
 * function f.  Since 16 that macro declares f itself PGDLLEXPORT too;
 * before, only its info function, so with the hidden default visibility
 * the Makefile sets there (as 16's PGXS does) f would be invisible to the
 * server's lookup by name.
 */
#if PG_VERSION_NUM >= 160000
#define FBT_FUNCTION_INFO_V1(f)	PG_FUNCTION_INFO_V1(f)
#else
#define FBT_FUNCTION_INFO_V1(f) \
	extern PGDLLEXPORT Datum f(PG_FUNCTION_ARGS); \
	PG_FUNCTION_INFO_V1(f)
#endif

/*
 * The physical identity of a relation, as ReadRecentBuffer() takes it:
 * RelFileNode rd_node until 15, RelFileLocator rd_locator since 16.
 */
#if PG_VERSION_NUM >= 160000
#define FbtRelFileId(rel)	((rel)->rd_locator)
#else
#define FbtRelFileId(rel)	((rel)->rd_node)
#endif

/*
 * The same identity as a type (WAL records name the index by it, and
 * XLogRecGetBlockTag() returns it), and whether a table is one that
 * logical decoding reads: since 16 a standby's conflicts with logical
 * slots need it (the isCatalogRel of nbtree's records); 15 has no such
 * conflict and the field is always false.
 */
/* tablespace/database/relfilenode, as core's WAL descriptions print it */
#define FBT_RELFILE_FORMAT	"%u/%u/%u"
#if PG_VERSION_NUM >= 160000
typedef RelFileLocator FbtRelFileIdData;
#define FBT_RELFILE_ARGS(id)	(id).spcOid, (id).dbOid, (id).relNumber
#define fbt_is_catalog_rel(heapRel) \
	((heapRel) != NULL && RelationIsAccessibleInLogicalDecoding(heapRel))
#else
typedef RelFileNode FbtRelFileIdData;
#define FBT_RELFILE_ARGS(id)	(id).spcNode, (id).dbNode, (id).relNode
#define fbt_is_catalog_rel(heapRel)	false
#endif

/*
 * Redo: cancel (or wait out, per max_standby_streaming_delay) the standby
 * queries whose snapshots may see an xid up to horizon, as nbtree's redo
 * of its delete and reuse records does.  isCatalogRel is passed on since
 * 16 and ignored on 15.
 */
#if PG_VERSION_NUM >= 160000
#define fbt_resolve_conflict(horizon, isCatalogRel, locator) \
	ResolveRecoveryConflictWithSnapshot((horizon), (isCatalogRel), (locator))
#define fbt_resolve_conflict_full(horizon, isCatalogRel, locator) \
	ResolveRecoveryConflictWithSnapshotFullXid((horizon), (isCatalogRel), (locator))
#else
#define fbt_resolve_conflict(horizon, isCatalogRel, locator) \
	ResolveRecoveryConflictWithSnapshot((horizon), (locator))
#define fbt_resolve_conflict_full(horizon, isCatalogRel, locator) \
	ResolveRecoveryConflictWithSnapshotFullXid((horizon), (locator))
#endif

/*
 * A function that never returns: pg_attribute_noreturn() until 17,
 * pg_noreturn (placed first, as C11's _Noreturn) since 18.
 */
#if PG_VERSION_NUM >= 180000
#define FBT_NORETURN	pg_noreturn
#else
#define FBT_NORETURN	pg_attribute_noreturn()
#endif

/*
 * Write page (BLCKSZ bytes, made by the caller, who keeps it) as block
 * blkno of index's init fork, WAL-logged and durable before the creating
 * transaction commits.  Since 17 through core's bulk-write facility, as
 * btbuildempty() does there: its buffers are aligned for direct I/O, which
 * smgr requires since 16.  Before, smgrwrite(), log_newpage() and
 * smgrimmedsync(), as 15's btbuildempty().  No locks; errors: I/O errors.
 */
static inline void
fbt_write_init_fork_page(Relation index, BlockNumber blkno, Page page)
{
#if PG_VERSION_NUM >= 170000
	BulkWriteState *bulk = smgr_bulk_start_rel(index, INIT_FORKNUM);
	BulkWriteBuffer buf = smgr_bulk_get_buf(bulk);

	memcpy(buf, page, BLCKSZ);
	smgr_bulk_write(bulk, blkno, buf, true);
	smgr_bulk_finish(bulk);
#else
	PageSetChecksumInplace(page, blkno);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, blkno, (char *) page,
			  true);
	log_newpage(&FbtRelFileId(index), INIT_FORKNUM, blkno, page, true);
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
#endif
}

/*
 * Writing a new index's main fork during a build, outside shared buffers,
 * WAL-logged as whole pages in batches when the relation needs WAL (as
 * nbtree's build writes, nbtree README "Notes about bulk loading"):
 *
 *	fbt_bulk_start(&w, index)		index: new and empty, exclusively locked
 *	fbt_bulk_get_page(&w)			a BLCKSZ page to fill (uninitialized)
 *	fbt_bulk_write(&w, blkno, page)	page: from fbt_bulk_get_page(), handed
 *									over (freed by the writer); blocks in
 *									any order, each once
 *	fbt_bulk_finish(&w)				everything written, logged and, when
 *									WAL-logged, synced before commit
 *
 * Since 17 this is core's bulk-write facility (smgr_bulk_*), which nbtree's
 * build uses there.  Before, as 15's nbtree build does with smgrextend()
 * and smgrwrite() (a block beyond the end first extends the fork with
 * zero pages, rewritten when their turn comes) and smgrimmedsync() at the
 * end, except that pages are logged 32 at a time with log_newpages()
 * (one record per batch) rather than one log_newpage() each, and that an
 * unlogged index is synced too (15's nbtree leaves it to the OS; a clean
 * shutdown then does not make it durable, as 17's bulk writer does).
 * Nothing is logged, and nothing synced here, for a temporary index, or
 * with wal_level minimal for a relation created in this transaction,
 * which core syncs or logs at commit.  Errors: I/O errors, those of WAL
 * insertion.
 */
#define FBT_BULK_BATCH	32

typedef struct FbtBulkWriter
{
#if PG_VERSION_NUM >= 170000
	BulkWriteState *bulk;
#else
	Relation	index;
	bool		use_wal;
	BlockNumber nblocks;		/* the fork's length so far */
	char	   *zeropage;		/* to fill gaps with, once needed */
	int			npending;
	BlockNumber blknos[FBT_BULK_BATCH];
	Page		pages[FBT_BULK_BATCH];
#endif
} FbtBulkWriter;

#if PG_VERSION_NUM < 170000
static inline void
fbt_bulk_flush(FbtBulkWriter *w)
{
	SMgrRelation smgr = RelationGetSmgr(w->index);
	int			i;

	if (w->npending == 0)
		return;
	/* sets each page's LSN, which the checksum covers */
	if (w->use_wal)
		log_newpages(&FbtRelFileId(w->index), MAIN_FORKNUM, w->npending,
					 w->blknos, w->pages, true);
	for (i = 0; i < w->npending; i++)
	{
		BlockNumber blkno = w->blknos[i];

		PageSetChecksumInplace(w->pages[i], blkno);
		if (blkno >= w->nblocks)
		{
			while (w->nblocks < blkno)
			{
				if (w->zeropage == NULL)
					w->zeropage = palloc0(BLCKSZ);
				smgrextend(smgr, MAIN_FORKNUM, w->nblocks++, w->zeropage,
						   true);
			}
			smgrextend(smgr, MAIN_FORKNUM, blkno, (char *) w->pages[i], true);
			w->nblocks = blkno + 1;
		}
		else
			smgrwrite(smgr, MAIN_FORKNUM, blkno, (char *) w->pages[i], true);
		pfree(w->pages[i]);
	}
	w->npending = 0;
}
#endif

static inline void
fbt_bulk_start(FbtBulkWriter *w, Relation index)
{
#if PG_VERSION_NUM >= 170000
	w->bulk = smgr_bulk_start_rel(index, MAIN_FORKNUM);
#else
	w->index = index;
	w->use_wal = RelationNeedsWAL(index);
	w->nblocks = 0;
	w->zeropage = NULL;
	w->npending = 0;
#endif
}

/*
 * (since 17 a bulk-write buffer, filled in place as nbtree's build fills
 * them: no copy of each page on its way out)
 */
static inline Page
fbt_bulk_get_page(FbtBulkWriter *w)
{
#if PG_VERSION_NUM >= 170000
	return (Page) smgr_bulk_get_buf(w->bulk);
#else
	return (Page) palloc(BLCKSZ);
#endif
}

static inline void
fbt_bulk_write(FbtBulkWriter *w, BlockNumber blkno, Page page)
{
#if PG_VERSION_NUM >= 170000
	smgr_bulk_write(w->bulk, blkno, (BulkWriteBuffer) page, true);
#else
	if (w->npending == FBT_BULK_BATCH)
		fbt_bulk_flush(w);
	w->blknos[w->npending] = blkno;
	w->pages[w->npending++] = page;
#endif
}

static inline void
fbt_bulk_finish(FbtBulkWriter *w)
{
#if PG_VERSION_NUM >= 170000
	smgr_bulk_finish(w->bulk);
#else
	fbt_bulk_flush(w);
	if (w->use_wal ||
		w->index->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED)
		smgrimmedsync(RelationGetSmgr(w->index), MAIN_FORKNUM);
	if (w->zeropage != NULL)
		pfree(w->zeropage);
#endif
}

/*
 * Count one index search (a descent that positions a primitive scan) in
 * the scan's instrumentation: since 18, EXPLAIN ANALYZE shows it as
 * "Index Searches" (pg_stat's idx_scan is counted on every major, by
 * pgstat_count_index_scan()).
 */
static inline void
fbt_count_index_search(IndexScanDesc scan)
{
#if PG_VERSION_NUM >= 180000
	if (scan->instrument)
		scan->instrument->nsearches++;
#endif
}

/* vacuum_delay_point() says whether it is called by ANALYZE since 18 */
#if PG_VERSION_NUM >= 180000
#define fbt_vacuum_delay_point()	vacuum_delay_point(false)
#else
#define fbt_vacuum_delay_point()	vacuum_delay_point()
#endif

/*
 * index_beginscan() takes the caller's scan instrumentation since 18; the
 * probe benchmark has none.
 */
#if PG_VERSION_NUM >= 180000
#define fbt_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, NULL, nkeys, norderbys)
#else
#define fbt_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, nkeys, norderbys)
#endif

/*
 * Whether collation coll (valid) orders text byte by byte, as "C" and
 * "POSIX" do: lc_collate_is_c() until 16; since 17, the collation's
 * pg_locale_t says it (lc_collate_is_c() is gone).
 */
static inline bool
fbt_collation_is_c(Oid coll)
{
#if PG_VERSION_NUM >= 170000
	return pg_newlocale_from_collation(coll)->collate_is_c;
#else
	return lc_collate_is_c(coll);
#endif
}

/*
 * How = ANY(array) keys on a column after one without an equality key (not
 * required, so never used to position the scan) are run.  Until 16, nbtree
 * runs one primitive scan per element, and the planner counts on index
 * order only from arrays it can see keep it; since 17, nbtree scans all
 * elements in one pass in index order, and 17's planner assumes that order
 * of every = ANY scan of an amsearcharray index.  fastbtree does what the
 * major's btree does (fbtutils.c, _fbt_preprocess_keys), so the rows come
 * back in btree's order, with or without ORDER BY.
 */
#define FBT_ARRAY_FILTERS_IN_ONE_PASS	(PG_VERSION_NUM >= 170000)

/*
 * Whether core accepts only btree unique indexes as INSERT ... ON CONFLICT
 * arbiters and foreign-key targets: until 17 it does (ON CONFLICT fails on
 * any table with a unique index of another AM); since 18 it finds the
 * equality operator through the AM's strategy translation, which fastbtree
 * supplies (FBT_SET_VERSION_CALLBACKS).  Only 15 and 18 are built and
 * tested.
 */
#define FBT_CORE_UNIQUE_NEEDS_BTREE	(PG_VERSION_NUM < 180000)

/*
 * Who asks for the workers of a parallel index build.  Since 17 core does,
 * for every access method with amcanbuildparallel: index_build() calls
 * plan_create_index_workers() and leaves the count in ii_ParallelWorkers.
 * Until 16 it does so only for btree (index_build() tests the btree OID),
 * so fbtbuild() calls plan_create_index_workers() itself, under the
 * conditions index_build() puts on it (see _fbt_build_workers()).
 */
#if PG_VERSION_NUM >= 170000
#define FBT_CORE_PLANS_BUILD_WORKERS	1
#define FBT_SET_BUILD_PARALLEL(amroutine) \
	((amroutine)->amcanbuildparallel = true)
#else
#define FBT_CORE_PLANS_BUILD_WORKERS	0
#define FBT_SET_BUILD_PARALLEL(amroutine)	((void) 0)
#endif

/*
 * Parallel index scans.  amestimateparallelscan takes no argument until 16,
 * the scan's key counts in 17 and the index too since 18
 * (FBT_ESTIMATE_PARALLELSCAN_ARGS, FBT_PARALLELSCAN_SEES_INDEX and the
 * index, FBT_ESTIMATE_PARALLELSCAN_INDEX); the AM's part of the shared scan
 * descriptor is at ps_offset until 17, at ps_offset_am since 18.
 */
#if PG_VERSION_NUM >= 180000
#define FBT_ESTIMATE_PARALLELSCAN_ARGS \
	Relation indexRelation, int nkeys, int norderbys
#define FBT_PARALLELSCAN_SEES_INDEX 1
#define FBT_ESTIMATE_PARALLELSCAN_INDEX indexRelation
#define FbtParallelScanAm(pscan) \
	((void *) OffsetToPointer((void *) (pscan), (pscan)->ps_offset_am))
#elif PG_VERSION_NUM >= 170000
#define FBT_ESTIMATE_PARALLELSCAN_ARGS	int nkeys, int norderbys
#define FBT_PARALLELSCAN_SEES_INDEX 0
#define FBT_ESTIMATE_PARALLELSCAN_INDEX NULL
#define FbtParallelScanAm(pscan) \
	((void *) OffsetToPointer((void *) (pscan), (pscan)->ps_offset))
#else
#define FBT_ESTIMATE_PARALLELSCAN_ARGS	void
#define FBT_PARALLELSCAN_SEES_INDEX 0
#define FBT_ESTIMATE_PARALLELSCAN_INDEX NULL
#define FbtParallelScanAm(pscan) \
	((void *) OffsetToPointer((void *) (pscan), (pscan)->ps_offset))
#endif

/*
 * Whether btcostestimate() prices an index scan as nbtree's skip scan runs
 * it (since 18), which fastbtree does not do (fbtcostestimate).
 */
#define FBT_COST_MODEL_ASSUMES_SKIP_SCAN	(PG_VERSION_NUM >= 180000)

/*
 * Whether btree's operator classes have skip support procedures (support
 * function 6, utils/skipsupport.h: the next and previous value of a
 * discrete type), since 18.  fastbtree's families get the same ones there
 * (fastbtree--1.2--1.3.sql), and skip arrays use them (fbtarray.c).
 */
#if PG_VERSION_NUM >= 180000
#define FBT_HAVE_SKIP_SUPPORT	1
#include "utils/skipsupport.h"
#else
#define FBT_HAVE_SKIP_SUPPORT	0
#endif

/*
 * Whether the executor takes a row comparison as an index qual only from a
 * btree index (nodeIndexscan.c tests the relcache's AM until 17; since 18
 * any ordered AM): then fbtplanner.c turns the row comparisons the planner
 * matches to a fastbtree index into first-column ranges.  Only 15 and 18
 * are built and tested.
 */
#define FBT_EXECUTOR_ROWCOMPARE_NEEDS_BTREE	(PG_VERSION_NUM < 180000)

/*
 * Access-method callbacks and flags that exist only on some majors, set by
 * fbthandler().  Since 18 the planner learns an ordered AM's sort order by
 * translating its strategy numbers (without it, every fastbtree index has
 * no sort order: no ORDER BY, merge joins or correlation estimate, and
 * btcostestimate() dereferences the missing reverse_sort array); ours are
 * btree's, so btree's own translation functions serve.  18 also asks the
 * AM for its tree height (fbtgettreeheight()) and whether equality and
 * ordering are consistent within an opfamily, as btree's are.
 */
#if PG_VERSION_NUM >= 180000
#include "access/cmptype.h"
extern CompareType bttranslatestrategy(StrategyNumber strategy, Oid opfamily);
extern StrategyNumber bttranslatecmptype(CompareType cmptype, Oid opfamily);
#define FBT_SET_VERSION_CALLBACKS(amroutine) \
	do { \
		(amroutine)->amconsistentequality = true; \
		(amroutine)->amconsistentordering = true; \
		(amroutine)->amtranslatestrategy = bttranslatestrategy; \
		(amroutine)->amtranslatecmptype = bttranslatecmptype; \
		(amroutine)->amgettreeheight = fbtgettreeheight; \
	} while (0)
#else
#define FBT_SET_VERSION_CALLBACKS(amroutine)	((void) 0)
#endif

/*
 * Fill btree's conflict-only WAL record, XLOG_BTREE_REUSE_PAGE, for index
 * rel (on table heapRel) and block blkno with the snapshot-conflict horizon
 * (fbtdelete.c, _fbt_log_conflict_horizon()).  Until 15 the record names
 * the relation by RelFileNode and calls the horizon latestRemovedFullXid;
 * since 16 a RelFileLocator and snapshotConflictHorizon, with isCatalogRel
 * (set, as nbtree sets it, for tables logical decoding on a standby reads;
 * FBT_REUSE_PAGE_NEEDS_HEAP says whether heapRel is read).
 */
#define FBT_REUSE_PAGE_NEEDS_HEAP	(PG_VERSION_NUM >= 160000)

static inline void
fbt_fill_reuse_page(xl_btree_reuse_page *xlrec, Relation rel,
					Relation heapRel, BlockNumber blkno,
					FullTransactionId horizon)
{
	xlrec->block = blkno;
#if PG_VERSION_NUM >= 160000
	xlrec->locator = rel->rd_locator;
	xlrec->snapshotConflictHorizon = horizon;
	xlrec->isCatalogRel = RelationIsAccessibleInLogicalDecoding(heapRel);
#else
	xlrec->node = rel->rd_node;
	xlrec->latestRemovedFullXid = horizon;
#endif
}

/*
 * fbt_extend_locked() -- extend index rel by one block; returns its buffer
 * pinned and exclusively locked, the page all zeroes.
 *
 * Nobody may see the new block before its creator holds that lock: VACUUM
 * reads the relation's size (under the extension lock) and would take an
 * all-zero page for one a failed extension left, and record it in the free
 * space map, where a split would take it while its creator still meant to
 * write it (nbtree's rule: PostgreSQL 15's _bt_getbuf() takes the content
 * lock before it releases the extension lock, for btvacuumscan()'s sake).
 * Until 15 that is what is done here; since 16 ExtendBufferedRel() with
 * EB_LOCK_FIRST, as _bt_allocbuf(): the extension lock is released first,
 * but the buffer stays BM_IO_IN_PROGRESS, so any reader waits, until the
 * content lock is held.  Relations local to the backend take no extension
 * lock.  Errors: those of extending the file; ERRCODE_PROGRAM_LIMIT_EXCEEDED
 * past the largest block number.
 */
static inline Buffer
fbt_extend_locked(Relation rel)
{
#if PG_VERSION_NUM >= 160000
	return ExtendBufferedRel(BMR_REL(rel), MAIN_FORKNUM, NULL, EB_LOCK_FIRST);
#else
	bool		needLock = !RELATION_IS_LOCAL(rel);
	Buffer		buf;

	if (needLock)
		LockRelationForExtension(rel, ExclusiveLock);
	buf = ReadBuffer(rel, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(rel, ExclusiveLock);
	return buf;
#endif
}

/*
 * Atomic pins (fbtpin.c, README.design "Pins"): pinning a hinted shared
 * buffer with one compare-and-swap relies on the buffer-state protocol of
 * PostgreSQL 15 to 18 (fbtpin.c's header).  PostgreSQL 19's
 * ReadRecentBuffer() pins that way itself, and its buffer internals
 * change: there the module pins nothing and callers use ReadRecentBuffer().
 */
#define FBT_HAVE_ATOMIC_PIN		(PG_VERSION_NUM < 190000)

/*
 * A shared buffer hit in pg_stat_io (16 and later), as ReadBuffer() counts
 * one, for pins that do not go through it (atomic pins, scan pins reused).
 * The hot path only adds to a backend-local tally (a call into the stats
 * machinery cost 60 instructions per pin on 18); fbt_flush_io_hits() hands
 * the tally to pg_stat_io's pending counts at the end of every transaction
 * (fbt_xact_callback()).  A backend reports its pending counts only when
 * it is idle outside a transaction, or exits, so pg_stat_io reads the same
 * totals as if each hit had been counted on the spot.
 */
#if PG_VERSION_NUM >= 160000
extern uint64 fbt_io_hits_pending;
#define fbt_count_io_hit() (fbt_io_hits_pending++)
static inline void
fbt_flush_io_hits(void)
{
	while (fbt_io_hits_pending > 0)
	{
		uint32		n = (uint32) Min(fbt_io_hits_pending, PG_UINT32_MAX);

#if PG_VERSION_NUM >= 180000
		pgstat_count_io_op(IOOBJECT_RELATION, IOCONTEXT_NORMAL, IOOP_HIT, n, 0);
#else
		pgstat_count_io_op_n(IOOBJECT_RELATION, IOCONTEXT_NORMAL, IOOP_HIT, n);
#endif
		fbt_io_hits_pending -= n;
	}
}
/* the same for a temporary relation's local buffer: rare, counted at once */
#if PG_VERSION_NUM >= 180000
#define fbt_count_io_hit_local() \
	pgstat_count_io_op(IOOBJECT_TEMP_RELATION, IOCONTEXT_NORMAL, IOOP_HIT, 1, 0)
#else
#define fbt_count_io_hit_local() \
	pgstat_count_io_op(IOOBJECT_TEMP_RELATION, IOCONTEXT_NORMAL, IOOP_HIT)
#endif
#else
#define fbt_count_io_hit() ((void) 0)
#define fbt_count_io_hit_local() ((void) 0)
#define fbt_flush_io_hits() ((void) 0)
#endif
#define FBT_APIN_NONE			(-1)

/* The buffer tag of rel's main-fork block blkno; only fbtpin.c uses them */
#ifdef BUFMGR_INTERNALS_H
static inline void
fbt_init_buffer_tag(BufferTag *tag, Relation rel, BlockNumber blkno)
{
#if PG_VERSION_NUM >= 160000
	InitBufferTag(tag, &rel->rd_locator, MAIN_FORKNUM, blkno);
#else
	INIT_BUFFERTAG(*tag, rel->rd_node, MAIN_FORKNUM, blkno);
#endif
}

static inline bool
fbt_buffer_tags_equal(const BufferTag *a, const BufferTag *b)
{
#if PG_VERSION_NUM >= 160000
	return BufferTagsEqual(a, b);
#else
	return BUFFERTAGS_EQUAL(*a, *b);
#endif
}
#endif							/* BUFMGR_INTERNALS_H */

#endif							/* FBTCOMPAT_H */
