/*-------------------------------------------------------------------------
 *
 * fbtvacuum.c
 *	  VACUUM support for fastbtree: remove index entries whose heap tuples
 *	  are dead, and report index statistics.
 *
 * The index is scanned in physical order.  Each leaf is cleaned under a
 * cleanup lock, which waits out every scan holding a pin on it, so a scan
 * can never return a heap TID that VACUUM has since made reusable (nbtree
 * README, "VACUUM").  Pages are never recycled yet, so a split always
 * moves entries to a block beyond every existing one: rereading the
 * relation size after the pass and continuing until it stops growing
 * visits every entry that a concurrent split moved, with no need for
 * nbtree's cycle-id bookkeeping.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"

#include "fastbtree.h"

/*
 * Clean one leaf: delete entries the callback reports dead; count the rest.
 * buf is pinned and cleanup-locked by the caller.
 */
static void
_fbt_vacuum_leaf(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				 IndexBulkDeleteCallback callback, void *callback_state,
				 Buffer buf)
{
	Relation	rel = info->index;
	Page		page = BufferGetPage(buf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber deletable[MaxIndexTuplesPerPage];
	int			ndeletable = 0;
	OffsetNumber off;

	for (off = minoff; off <= maxoff; off++)
	{
		IndexTuple	itup = _fbt_getitem(rel, buf, off);

		if (callback(&itup->t_tid, callback_state))
			deletable[ndeletable++] = off;
	}

	if (ndeletable > 0)
	{
		FbtWal		wal;
		Page		img;

		_fbt_wal_start(&wal, rel);
		img = _fbt_wal_register(&wal, buf, false);
		PageIndexMultiDelete(img, deletable, ndeletable);
		_fbt_update_has_garbage(img);
		START_CRIT_SECTION();
		_fbt_wal_finish(&wal);
		END_CRIT_SECTION();
		stats->tuples_removed += ndeletable;
	}
	if (maxoff >= minoff)
		stats->num_index_tuples += (maxoff - minoff + 1) - ndeletable;
}

/*
 * Scan the whole index in physical order, deleting the entries the
 * callback reports dead.  Fills num_pages, num_index_tuples,
 * tuples_removed.
 */
static void
_fbt_vacuumscan(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	rel = info->index;
	bool		needLock = !RELATION_IS_LOCAL(rel);
	BlockNumber blkno = FBT_METAPAGE + 1;
	BlockNumber num_pages;

	stats->num_index_tuples = 0;
	stats->estimated_count = false;
	stats->pages_free = 0;

	for (;;)
	{
		if (needLock)
			LockRelationForExtension(rel, ExclusiveLock);
		num_pages = RelationGetNumberOfBlocks(rel);
		if (needLock)
			UnlockRelationForExtension(rel, ExclusiveLock);

		if (info->report_progress)
			pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_TOTAL,
										 num_pages);
		if (blkno >= num_pages)
			break;

		for (; blkno < num_pages; blkno++)
		{
			Buffer		buf;
			Page		page;

			fbt_vacuum_delay_point();
			buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
									 info->strategy);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			if (PageIsNew(page))
			{
				/* extended by a backend that failed before using it */
				stats->pages_free++;
				UnlockReleaseBuffer(buf);
				continue;
			}
			_fbt_checkpage(rel, buf);
			if (P_ISLEAF(FbtPageGetOpaque(page)))
			{
				LockBuffer(buf, BUFFER_LOCK_UNLOCK);
				LockBufferForCleanup(buf);
				_fbt_vacuum_leaf(info, stats, callback, callback_state, buf);
			}
			UnlockReleaseBuffer(buf);
			if (info->report_progress)
				pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_DONE,
											 blkno);
		}
	}
	stats->num_pages = num_pages;
}

/*
 * fbtbulkdelete() -- ambulkdelete: delete every entry whose heap TID the
 * callback reports dead.
 *
 * stats: NULL on the first call of a VACUUM, else the previous result.
 * Takes a cleanup lock on each leaf in turn (waiting for scans pinned on
 * it); holds no lock on return.  Returns the (possibly new) statistics.
 * Also used by CREATE INDEX CONCURRENTLY's validation, whose callback sees
 * every entry.
 */
IndexBulkDeleteResult *
fbtbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	_fbt_vacuumscan(info, stats, callback, callback_state);
	return stats;
}

/*
 * fbtvacuumcleanup() -- amvacuumcleanup: final statistics of a VACUUM.
 *
 * stats: the result of fbtbulkdelete(), or NULL if it did not run.  With
 * nothing deleted there is nothing to clean up (no page is ever deleted,
 * so none awaits recycling): like btree when no cleanup is due, return
 * NULL and leave the index's statistics as they are, without touching a
 * page.  Also NULL for ANALYZE-only calls.
 */
IndexBulkDeleteResult *
fbtvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only || stats == NULL)
		return stats;

	/* a concurrent split may have counted entries twice */
	if (!info->estimated_count &&
		stats->num_index_tuples > info->num_heap_tuples)
		stats->num_index_tuples = info->num_heap_tuples;

	return stats;
}
