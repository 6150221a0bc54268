/*-------------------------------------------------------------------------
 *
 * fbtxlog.c
 *	  Compact WAL: fastbtree's resource manager.
 *
 *	  With fastbtree in shared_preload_libraries, _PG_init() registers a
 *	  custom WAL resource manager (RegisterCustomRmgr(), PostgreSQL 15 and
 *	  later) and page changes are logged as fastbtree's own records
 *	  (fbtxlog.h), whose redo below calls the page-edit functions the
 *	  primary ran.  Without preload the library cannot register one
 *	  (core only allows it while shared_preload_libraries load), and
 *	  every change is a generic WAL record (fbtpage.c).  The mode is
 *	  fixed for the life of the postmaster and shown by the read-only
 *	  setting fastbtree.wal_mode.
 *
 *	  Index builds log core's full-page records in both modes (fbtsort.c).
 *	  A cluster may switch modes across clean restarts, so a page may see
 *	  both kinds of record over its life (README.design, "Compact WAL").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/bufmask.h"
#include "access/xlog_internal.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "storage/standby.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "fastbtree.h"
#include "fbtxlog.h"

/* true once this postmaster registered the resource manager */
bool		fbt_wal_compact = false;

/* fastbtree.wal_mode: read-only, "compact" or "generic" */
static char *fbt_wal_mode_string = NULL;

/* redo's allocations, reset after each record */
static MemoryContext fbt_redo_context = NULL;

static RmgrData fbt_rmgr = {
	.rm_name = FBT_RMGR_NAME,
	.rm_redo = fbt_redo,
	.rm_desc = fbt_desc,
	.rm_identify = fbt_identify,
	.rm_startup = fbt_xlog_startup,
	.rm_cleanup = fbt_xlog_cleanup,
	.rm_mask = fbt_mask,
};

/*
 * _fbt_xlog_init() -- called by _PG_init(): register the resource manager
 * when the library is being preloaded, and define fastbtree.wal_mode.
 *
 * RegisterCustomRmgr() raises ERROR (FATAL at postmaster start) when
 * another preloaded library holds FBT_RMGR_ID.  Every process of a
 * cluster has the postmaster's shared_preload_libraries (inherited by
 * fork, or loaded again at start in EXEC_BACKEND builds), so
 * fbt_wal_compact is the same in all of them.
 */
void
_fbt_xlog_init(void)
{
	if (process_shared_preload_libraries_in_progress)
	{
		RegisterCustomRmgr(FBT_RMGR_ID, &fbt_rmgr);
		fbt_wal_compact = true;
	}
	DefineCustomStringVariable("fastbtree.wal_mode",
							   "Shows how fastbtree logs its page changes: \"compact\" (its own WAL records) or \"generic\" (generic WAL).",
							   "compact when fastbtree is in shared_preload_libraries, generic otherwise; fixed at server start.",
							   &fbt_wal_mode_string,
							   fbt_wal_compact ? "compact" : "generic",
							   PGC_INTERNAL,
							   0,
							   NULL, NULL, NULL);
}

/*
 * The version counter after redo changed a page: the next odd value, as
 * after a generic record's replay.  Optimistic reads are off during
 * recovery; after it, the first locked visit makes the version even
 * (_fbt_heal_version()).  fbt_mask() masks the field: the primary's
 * shared page is even again after each change, and that store is not
 * logged.
 */
static void
_fbt_redo_version(Page page)
{
	if (PageGetSpecialSize(page) == MAXALIGN(sizeof(FbtPageOpaqueData)))
	{
		FbtPageOpaque opaque = FbtPageGetOpaque(page);

		opaque->fbto_version = (opaque->fbto_version | 1) + 2;
	}
}

/* Redo's page bookkeeping after an edit */
static void
_fbt_redo_done(Buffer buf, XLogRecPtr lsn)
{
	Page		page = BufferGetPage(buf);

	_fbt_redo_version(page);
	PageSetLSN(page, lsn);
	MarkBufferDirty(buf);
}

/*
 * Clear FBTP_INCOMPLETE_SPLIT on the child registered as block_id: the
 * downlink logged with it completes that child's split.  Returns the
 * child's buffer, still locked (or InvalidBuffer): the caller releases it
 * only after the parent has the downlink, so that a standby reader (the
 * checker's downlink check) never sees the flag cleared and the downlink
 * missing, as on the primary, where both change under the same locks.
 */
static Buffer
_fbt_redo_clear_incomplete_split(XLogReaderState *record, uint8 block_id)
{
	Buffer		buf;

	if (XLogReadBufferForRedo(record, block_id, &buf) == BLK_NEEDS_REDO)
	{
		_fbt_apply_clear_incomplete_split(BufferGetPage(buf));
		_fbt_redo_done(buf, record->EndRecPtr);
	}
	return buf;
}

/* XLOG_FBT_INSERT_LEAF, _UPPER, _POST */
static void
_fbt_redo_insert(XLogReaderState *record, bool upper, bool posting)
{
	xl_fbt_insert *xlrec = (xl_fbt_insert *) XLogRecGetData(record);
	Buffer		buf;
	Buffer		cbuf = InvalidBuffer;

	/* the child first, as nbtree replays its INSERT_UPPER */
	if (upper && XLogRecHasBlockRef(record, 1))
		cbuf = _fbt_redo_clear_incomplete_split(record, 1);

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		Size		len;
		char	   *data = XLogRecGetBlockData(record, 0, &len);
		IndexTuple	itup;
		IndexTuple	nposting = NULL;

		if (len < sizeof(IndexTupleData) || IndexTupleSize((IndexTuple) data) != len)
			elog(PANIC, "fastbtree insert record at %X/%X: tuple of %zu bytes malformed",
				 LSN_FORMAT_ARGS(record->ReadRecPtr), len);
		itup = (IndexTuple) palloc(len);
		memcpy(itup, data, len);
		if (posting)
		{
			ItemId		itemid;
			IndexTuple	oposting;

			if (xlrec->offnum <= FirstOffsetNumber ||
				xlrec->offnum - 1 > PageGetMaxOffsetNumber(page))
				elog(PANIC, "fastbtree posting list split record at %X/%X: offset %u out of range",
					 LSN_FORMAT_ARGS(record->ReadRecPtr), xlrec->offnum);
			itemid = PageGetItemId(page, xlrec->offnum - 1);
			oposting = (IndexTuple) PageGetItem(page, itemid);
			nposting = _fbt_swap_posting(itup, oposting, xlrec->postingoff);
		}
		if (!_fbt_insert_apply(page, xlrec->offnum, itup, nposting))
			elog(PANIC, "fastbtree insert record at %X/%X: could not add the tuple at offset %u",
				 LSN_FORMAT_ARGS(record->ReadRecPtr), xlrec->offnum);
		_fbt_redo_done(buf, record->EndRecPtr);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
	if (BufferIsValid(cbuf))
		UnlockReleaseBuffer(cbuf);
}

/*
 * A tuple of a record's block data at *pos (not necessarily aligned),
 * copied out; *pos advances past it.  PANIC if it overruns end.
 */
static IndexTuple
_fbt_redo_tuple(XLogReaderState *record, char **pos, char *end)
{
	IndexTupleData header;
	Size		size;
	IndexTuple	itup;

	if (end - *pos < (long) sizeof(IndexTupleData))
		elog(PANIC, "fastbtree record at %X/%X: block data too short for a tuple",
			 LSN_FORMAT_ARGS(record->ReadRecPtr));
	memcpy(&header, *pos, sizeof(IndexTupleData));
	size = IndexTupleSize(&header);
	if (size < sizeof(IndexTupleData) || end - *pos < (long) size)
		elog(PANIC, "fastbtree record at %X/%X: tuple of %zu bytes overruns the block data",
			 LSN_FORMAT_ARGS(record->ReadRecPtr), size);
	itup = (IndexTuple) palloc(size);
	memcpy(itup, *pos, size);
	*pos += size;
	return itup;
}

/*
 * The new right page of a split, from its logged tuple area (block 1's
 * data, pd_upper to the special space: the last item first, each tuple
 * MAXALIGN(IndexTupleSize()) bytes): a page of the record's level and
 * rightflags, left-linked to leftblk and right-linked to block 2 (or
 * P_NONE), holding the tuples in item order.
 */
static void
_fbt_redo_split_right(XLogReaderState *record, Page page, uint32 level,
					  uint16 flags, BlockNumber leftblk)
{
	Size		len;
	char	   *data = XLogRecGetBlockData(record, 1, &len);
	char	   *pos = data;
	IndexTuple	tuples[MaxIndexTuplesPerPage];
	Size		sizes[MaxIndexTuplesPerPage];
	int			ntuples = 0;
	FbtPageOpaque opaque;
	BlockNumber rightblk = P_NONE;

	if (data == NULL || len == 0 || len > BLCKSZ)
		elog(PANIC, "fastbtree split record at %X/%X: %zu bytes of right page tuples",
			 LSN_FORMAT_ARGS(record->ReadRecPtr), data ? len : 0);
	while (pos < data + len)
	{
		IndexTupleData header;
		Size		size;

		if (ntuples >= MaxIndexTuplesPerPage ||
			data + len - pos < (long) sizeof(IndexTupleData))
			elog(PANIC, "fastbtree split record at %X/%X: the right page's tuples overrun the block data",
				 LSN_FORMAT_ARGS(record->ReadRecPtr));
		memcpy(&header, pos, sizeof(IndexTupleData));
		size = MAXALIGN(IndexTupleSize(&header));
		if (IndexTupleSize(&header) < sizeof(IndexTupleData) ||
			data + len - pos < (long) size)
			elog(PANIC, "fastbtree split record at %X/%X: a right page tuple of %zu bytes overruns the block data",
				 LSN_FORMAT_ARGS(record->ReadRecPtr), size);
		tuples[ntuples] = (IndexTuple) pos;
		sizes[ntuples++] = size;
		pos += size;
	}

	if (XLogRecHasBlockRef(record, 2))
		XLogRecGetBlockTag(record, 2, NULL, NULL, &rightblk);
	_fbt_pageinit(page, level, flags);
	opaque = FbtPageGetOpaque(page);
	opaque->fbto_prev = leftblk;
	opaque->fbto_next = rightblk;
	while (ntuples > 0)
	{
		ntuples--;
		if (PageAddItem(page, (Item) tuples[ntuples], sizes[ntuples],
						InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
			elog(PANIC, "fastbtree split record at %X/%X: the right page cannot be rebuilt",
				 LSN_FORMAT_ARGS(record->ReadRecPtr));
	}
}

/* XLOG_FBT_SPLIT_L, _R */
static void
_fbt_redo_split(XLogReaderState *record)
{
	xl_fbt_split *xlrec = (xl_fbt_split *) XLogRecGetData(record);
	BlockNumber leftblk;
	BlockNumber rightblk;
	Buffer		lbuf;
	Buffer		rbuf;
	Buffer		sbuf = InvalidBuffer;
	Buffer		cbuf = InvalidBuffer;

	XLogRecGetBlockTag(record, 0, NULL, NULL, &leftblk);
	XLogRecGetBlockTag(record, 1, NULL, NULL, &rightblk);

	/* a child whose split this one completes, first, as nbtree's redo */
	if (XLogRecHasBlockRef(record, 3))
		cbuf = _fbt_redo_clear_incomplete_split(record, 3);

	/*
	 * The right page, rebuilt from its tuples (or, rarely, a full image).
	 * Every page stays locked until all are done, the old right sibling's
	 * left-link included, and they are released together (as nbtree's
	 * redo since PostgreSQL 14): a standby reader, or fastbtree_check() on
	 * a standby, sees the split whole or not at all.
	 */
	if (XLogRecHasBlockImage(record, 1) && XLogRecBlockImageApply(record, 1))
	{
		if (XLogReadBufferForRedo(record, 1, &rbuf) != BLK_RESTORED)
			elog(PANIC, "fastbtree split record at %X/%X: the right page's image was not restored",
				 LSN_FORMAT_ARGS(record->ReadRecPtr));
	}
	else
	{
		if (XLogRecGetDataLen(record) < SizeOfFbtSplit)
			elog(PANIC, "fastbtree split record at %X/%X: %u bytes of main data and no image of the right page",
				 LSN_FORMAT_ARGS(record->ReadRecPtr), XLogRecGetDataLen(record));
		rbuf = XLogInitBufferForRedo(record, 1);
		_fbt_redo_split_right(record, BufferGetPage(rbuf), xlrec->level,
							  xlrec->rightflags, leftblk);
		_fbt_redo_done(rbuf, record->EndRecPtr);
	}

	if (XLogReadBufferForRedo(record, 0, &lbuf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(lbuf);
		FbtPageOpaqueData oopaque = *FbtPageGetOpaque(page);
		Size		len;
		char	   *pos = XLogRecGetBlockData(record, 0, &len);
		char	   *end = pos + len;
		IndexTuple	newitem = _fbt_redo_tuple(record, &pos, end);
		IndexTuple	hikey = _fbt_redo_tuple(record, &pos, end);
		IndexTuple	nposting = NULL;
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
		int			nitems = maxoff - P_FIRSTDATAKEY(&oopaque) + 2;
		IndexTuple *items;
		Size	   *itemsz;
		Page		left;

		if (xlrec->postingoff > 0)
		{
			if (xlrec->newitemoff <= P_FIRSTDATAKEY(&oopaque) ||
				xlrec->newitemoff - 1 > maxoff)
				elog(PANIC, "fastbtree split record at %X/%X: posting list offset %u out of range",
					 LSN_FORMAT_ARGS(record->ReadRecPtr), xlrec->newitemoff - 1);
			nposting = _fbt_swap_posting(newitem,
										 (IndexTuple) PageGetItem(page,
																  PageGetItemId(page, xlrec->newitemoff - 1)),
										 xlrec->postingoff);
		}
		items = palloc(sizeof(IndexTuple) * nitems);
		itemsz = palloc(sizeof(Size) * nitems);
		if (nitems < 1 || xlrec->firstright > nitems ||
			_fbt_split_items(NULL, InvalidBuffer, page, xlrec->newitemoff,
							 newitem, nposting, items, itemsz) != nitems)
			elog(PANIC, "fastbtree split record at %X/%X: %d items do not match the record",
				 LSN_FORMAT_ARGS(record->ReadRecPtr), nitems);
		left = palloc(BLCKSZ);
		if (!_fbt_split_fill_left(left, &oopaque, rightblk, 0, hikey, items,
								  itemsz, xlrec->firstright))
			elog(PANIC, "fastbtree split record at %X/%X: the left page cannot be rebuilt",
				 LSN_FORMAT_ARGS(record->ReadRecPtr));
		FbtPageGetOpaque(left)->fbto_version = oopaque.fbto_version;
		memcpy(page, left, BLCKSZ);
		_fbt_redo_done(lbuf, record->EndRecPtr);
	}

	/* the old right sibling's left-link */
	if (XLogRecHasBlockRef(record, 2) &&
		XLogReadBufferForRedo(record, 2, &sbuf) == BLK_NEEDS_REDO)
	{
		FbtPageGetOpaque(BufferGetPage(sbuf))->fbto_prev = rightblk;
		_fbt_redo_done(sbuf, record->EndRecPtr);
	}

	if (BufferIsValid(sbuf))
		UnlockReleaseBuffer(sbuf);
	if (BufferIsValid(lbuf))
		UnlockReleaseBuffer(lbuf);
	UnlockReleaseBuffer(rbuf);
	if (BufferIsValid(cbuf))
		UnlockReleaseBuffer(cbuf);
}

/* XLOG_FBT_DEDUP */
static void
_fbt_redo_dedup(XLogReaderState *record)
{
	xl_fbt_dedup *xlrec = (xl_fbt_dedup *) XLogRecGetData(record);
	Buffer		buf;

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		uint32		version = FbtPageGetOpaque(page)->fbto_version;
		Size		len;
		char	   *data = XLogRecGetBlockData(record, 0, &len);
		FbtDedupInterval *intervals;
		Page		newpage;

		if (xlrec->nintervals == 0 ||
			len != xlrec->nintervals * sizeof(FbtDedupInterval))
			elog(PANIC, "fastbtree dedup record at %X/%X: %zu bytes for %u intervals",
				 LSN_FORMAT_ARGS(record->ReadRecPtr), len, xlrec->nintervals);
		intervals = palloc(len);
		memcpy(intervals, data, len);
		newpage = palloc(BLCKSZ);
		if (!_fbt_dedup_apply(page, newpage, intervals, xlrec->nintervals))
			elog(PANIC, "fastbtree dedup record at %X/%X: the intervals do not fit the page",
				 LSN_FORMAT_ARGS(record->ReadRecPtr));
		FbtPageGetOpaque(newpage)->fbto_version = version;
		memcpy(page, newpage, BLCKSZ);
		_fbt_redo_done(buf, record->EndRecPtr);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/* XLOG_FBT_NEWROOT */
static void
_fbt_redo_newroot(XLogReaderState *record)
{
	Buffer		rootbuf;
	Buffer		metabuf;
	Buffer		lbuf = InvalidBuffer;

	/* images; all three pages are released together */
	if (XLogReadBufferForRedo(record, 0, &rootbuf) != BLK_RESTORED)
		elog(PANIC, "fastbtree new root record at %X/%X: no image of the root",
			 LSN_FORMAT_ARGS(record->ReadRecPtr));
	if (XLogRecHasBlockRef(record, 2))
		lbuf = _fbt_redo_clear_incomplete_split(record, 2);
	if (XLogReadBufferForRedo(record, 1, &metabuf) != BLK_RESTORED)
		elog(PANIC, "fastbtree new root record at %X/%X: no image of the metapage",
			 LSN_FORMAT_ARGS(record->ReadRecPtr));
	UnlockReleaseBuffer(metabuf);
	if (BufferIsValid(lbuf))
		UnlockReleaseBuffer(lbuf);
	UnlockReleaseBuffer(rootbuf);
}

/*
 * XLOG_FBT_VACUUM, _DELETE.  VACUUM's redo takes a cleanup lock on the
 * leaf, as nbtree's btree_xlog_vacuum(): a standby scan that holds a pin
 * on the leaf (stopped there between returning its entries) keeps them,
 * so no heap TID it returns can be reused under it.  DELETE's first
 * resolves the conflict with standby snapshots that may still see the
 * removed entries' heap tuples, as btree_xlog_delete().
 */
static void
_fbt_redo_delete(XLogReaderState *record, bool vacuum)
{
	xl_fbt_delete *xlrec = (xl_fbt_delete *) XLogRecGetData(record);
	Buffer		buf;
	XLogRedoAction action;

	if (!vacuum && InHotStandby && TransactionIdIsValid(xlrec->horizon))
	{
		FbtRelFileIdData locator;

		XLogRecGetBlockTag(record, 0, &locator, NULL, NULL);
		fbt_resolve_conflict(xlrec->horizon, xlrec->isCatalogRel, locator);
	}

	action = XLogReadBufferForRedoExtended(record, 0, RBM_NORMAL, vacuum,
										   &buf);
	if (action == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
		Size		len;
		char	   *pos = XLogRecGetBlockData(record, 0, &len);
		char	   *end = pos + len;
		OffsetNumber *deletable;
		OffsetNumber *updatable;
		IndexTuple *updated;
		bool	   *remove;
		int			i;

		if ((Size) (xlrec->ndeleted + xlrec->nupdated) * sizeof(OffsetNumber) > len)
			elog(PANIC, "fastbtree delete record at %X/%X: %zu bytes for %u + %u offsets",
				 LSN_FORMAT_ARGS(record->ReadRecPtr), len, xlrec->ndeleted,
				 xlrec->nupdated);
		deletable = palloc(Max(xlrec->ndeleted, 1) * sizeof(OffsetNumber));
		memcpy(deletable, pos, xlrec->ndeleted * sizeof(OffsetNumber));
		pos += xlrec->ndeleted * sizeof(OffsetNumber);
		updatable = palloc(Max(xlrec->nupdated, 1) * sizeof(OffsetNumber));
		memcpy(updatable, pos, xlrec->nupdated * sizeof(OffsetNumber));
		pos += xlrec->nupdated * sizeof(OffsetNumber);
		updated = palloc(Max(xlrec->nupdated, 1) * sizeof(IndexTuple));
		remove = palloc(FBT_MAX_TIDS_PER_PAGE * sizeof(bool));

		for (i = 0; i < xlrec->nupdated; i++)
		{
			IndexTuple	posting;
			uint16		ndeletedtids;
			int			n;
			int			j;

			if (updatable[i] < FirstOffsetNumber || updatable[i] > maxoff)
				elog(PANIC, "fastbtree delete record at %X/%X: offset %u out of range",
					 LSN_FORMAT_ARGS(record->ReadRecPtr), updatable[i]);
			posting = (IndexTuple) PageGetItem(page,
											   PageGetItemId(page, updatable[i]));
			n = FbtTupleIsPosting(posting) ? FbtTupleGetNPosting(posting) : 0;
			if (n > FBT_MAX_TIDS_PER_PAGE)
				elog(PANIC, "fastbtree delete record at %X/%X: posting list of %d TIDs at offset %u",
					 LSN_FORMAT_ARGS(record->ReadRecPtr), n, updatable[i]);
			if (end - pos < (long) sizeof(uint16))
				elog(PANIC, "fastbtree delete record at %X/%X: update %d truncated",
					 LSN_FORMAT_ARGS(record->ReadRecPtr), i);
			memcpy(&ndeletedtids, pos, sizeof(uint16));
			pos += sizeof(uint16);
			if (ndeletedtids == 0 || ndeletedtids >= n ||
				end - pos < (long) (ndeletedtids * sizeof(uint16)))
				elog(PANIC, "fastbtree delete record at %X/%X: %u TIDs to remove from a posting list of %d",
					 LSN_FORMAT_ARGS(record->ReadRecPtr), ndeletedtids, n);
			memset(remove, 0, n * sizeof(bool));
			for (j = 0; j < ndeletedtids; j++)
			{
				uint16		ptid;

				memcpy(&ptid, pos, sizeof(uint16));
				pos += sizeof(uint16);
				if (ptid >= n)
					elog(PANIC, "fastbtree delete record at %X/%X: TID position %u past a posting list of %d",
						 LSN_FORMAT_ARGS(record->ReadRecPtr), ptid, n);
				remove[ptid] = true;
			}
			updated[i] = _fbt_posting_remove(posting, remove);
		}
		if (pos != end)
			elog(PANIC, "fastbtree delete record at %X/%X: %ld bytes of block data left over",
				 LSN_FORMAT_ARGS(record->ReadRecPtr), (long) (end - pos));
		for (i = 0; i < xlrec->ndeleted; i++)
			if (deletable[i] < FirstOffsetNumber || deletable[i] > maxoff)
				elog(PANIC, "fastbtree delete record at %X/%X: offset %u out of range",
					 LSN_FORMAT_ARGS(record->ReadRecPtr), deletable[i]);
		if (!_fbt_delete_items_apply(page, deletable, xlrec->ndeleted,
									 updatable, updated, xlrec->nupdated))
			elog(PANIC, "fastbtree delete record at %X/%X: a posting list does not fit its slot",
				 LSN_FORMAT_ARGS(record->ReadRecPtr));
		_fbt_redo_done(buf, record->EndRecPtr);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/* XLOG_FBT_MARK_HALFDEAD: both pages released together */
static void
_fbt_redo_mark_halfdead(XLogReaderState *record)
{
	xl_fbt_mark_halfdead *xlrec = (xl_fbt_mark_halfdead *) XLogRecGetData(record);
	Buffer		pbuf;
	Buffer		leafbuf;

	if (XLogReadBufferForRedo(record, 1, &pbuf) == BLK_NEEDS_REDO)
	{
		if (!_fbt_halfdead_apply_parent(BufferGetPage(pbuf), xlrec->poff,
										xlrec->rightsib))
			elog(PANIC, "fastbtree half-dead record at %X/%X: parent offset %u out of range",
				 LSN_FORMAT_ARGS(record->ReadRecPtr), xlrec->poff);
		_fbt_redo_done(pbuf, record->EndRecPtr);
	}
	if (XLogReadBufferForRedo(record, 0, &leafbuf) == BLK_NEEDS_REDO)
	{
		if (!_fbt_halfdead_apply_leaf(BufferGetPage(leafbuf),
									  xlrec->topparent))
			elog(PANIC, "fastbtree half-dead record at %X/%X: the leaf has no high key",
				 LSN_FORMAT_ARGS(record->ReadRecPtr));
		_fbt_redo_done(leafbuf, record->EndRecPtr);
	}
	if (BufferIsValid(leafbuf))
		UnlockReleaseBuffer(leafbuf);
	if (BufferIsValid(pbuf))
		UnlockReleaseBuffer(pbuf);
}

/*
 * XLOG_FBT_UNLINK: left sibling, page, right sibling and leaf locked in
 * that order and released together.  The primary locks the leaf first;
 * replay cannot deadlock with standby readers, which hold one content
 * lock at a time.
 */
static void
_fbt_redo_unlink(XLogReaderState *record)
{
	xl_fbt_unlink *xlrec = (xl_fbt_unlink *) XLogRecGetData(record);
	Buffer		lbuf = InvalidBuffer;
	Buffer		buf;
	Buffer		rbuf;
	Buffer		leafbuf = InvalidBuffer;

	if (XLogRecHasBlockRef(record, 1) &&
		XLogReadBufferForRedo(record, 1, &lbuf) == BLK_NEEDS_REDO)
	{
		FbtPageGetOpaque(BufferGetPage(lbuf))->fbto_next = xlrec->rightsib;
		_fbt_redo_done(lbuf, record->EndRecPtr);
	}
	buf = XLogInitBufferForRedo(record, 0);
	if (!_fbt_deleted_page_init(BufferGetPage(buf), xlrec->level,
								xlrec->leftsib, xlrec->rightsib,
								xlrec->safexid))
		elog(PANIC, "fastbtree unlink record at %X/%X: the deleted page cannot be built",
			 LSN_FORMAT_ARGS(record->ReadRecPtr));
	_fbt_redo_done(buf, record->EndRecPtr);
	if (XLogReadBufferForRedo(record, 2, &rbuf) == BLK_NEEDS_REDO)
	{
		FbtPageGetOpaque(BufferGetPage(rbuf))->fbto_prev = xlrec->leftsib;
		_fbt_redo_done(rbuf, record->EndRecPtr);
	}
	if (XLogRecHasBlockRef(record, 3) &&
		XLogReadBufferForRedo(record, 3, &leafbuf) == BLK_NEEDS_REDO)
	{
		if (!_fbt_unlink_apply_leaf(BufferGetPage(leafbuf),
									xlrec->leaftopparent))
			elog(PANIC, "fastbtree unlink record at %X/%X: the leaf has no high key",
				 LSN_FORMAT_ARGS(record->ReadRecPtr));
		_fbt_redo_done(leafbuf, record->EndRecPtr);
	}
	if (BufferIsValid(lbuf))
		UnlockReleaseBuffer(lbuf);
	UnlockReleaseBuffer(buf);
	if (BufferIsValid(rbuf))
		UnlockReleaseBuffer(rbuf);
	if (BufferIsValid(leafbuf))
		UnlockReleaseBuffer(leafbuf);
}

/* XLOG_FBT_REUSE_PAGE: conflict only, as btree_xlog_reuse_page() */
static void
_fbt_redo_reuse_page(XLogReaderState *record)
{
	xl_fbt_reuse_page *xlrec = (xl_fbt_reuse_page *) XLogRecGetData(record);

	if (InHotStandby)
		fbt_resolve_conflict_full(xlrec->safexid, xlrec->isCatalogRel,
								  xlrec->locator);
}

/* XLOG_FBT_META: the metapage's image */
static void
_fbt_redo_meta(XLogReaderState *record)
{
	Buffer		metabuf;

	if (XLogReadBufferForRedo(record, 0, &metabuf) != BLK_RESTORED)
		elog(PANIC, "fastbtree metapage record at %X/%X: no image of the metapage",
			 LSN_FORMAT_ARGS(record->ReadRecPtr));
	UnlockReleaseBuffer(metabuf);
}

/* The size of a record kind's main data struct (0: none, or unknown) */
static Size
_fbt_main_data_size(uint8 info)
{
	switch (info)
	{
		case XLOG_FBT_INSERT_LEAF:
		case XLOG_FBT_INSERT_UPPER:
			return SizeOfFbtInsert;
		case XLOG_FBT_INSERT_POST:
			return SizeOfFbtInsertPost;
		case XLOG_FBT_SPLIT_L:
		case XLOG_FBT_SPLIT_R:
			/* the rest only when the right page is not an image */
			return SizeOfFbtSplitImage;
		case XLOG_FBT_DEDUP:
			return SizeOfFbtDedup;
		case XLOG_FBT_NEWROOT:
			return SizeOfFbtNewroot;
		case XLOG_FBT_VACUUM:
		case XLOG_FBT_DELETE:
			return SizeOfFbtDelete;
		case XLOG_FBT_MARK_HALFDEAD:
			return SizeOfFbtMarkHalfdead;
		case XLOG_FBT_UNLINK:
			return SizeOfFbtUnlink;
		case XLOG_FBT_REUSE_PAGE:
			return SizeOfFbtReusePage;
	}
	return 0;
}

/*
 * fbt_redo() -- the resource manager's rm_redo: replay one fastbtree
 * record.  Runs in the startup process; pages are locked by
 * XLogReadBufferForRedo() as nbtree's redo locks them.  A record that
 * cannot be applied is a PANIC, as in core's resource managers.
 */
void
fbt_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	MemoryContext oldcxt;

	if (XLogRecGetDataLen(record) < _fbt_main_data_size(info))
		elog(PANIC, "fastbtree record at %X/%X: %u bytes of main data, %zu expected",
			 LSN_FORMAT_ARGS(record->ReadRecPtr), XLogRecGetDataLen(record),
			 _fbt_main_data_size(info));
	oldcxt = MemoryContextSwitchTo(fbt_redo_context);

	switch (info)
	{
		case XLOG_FBT_INSERT_LEAF:
			_fbt_redo_insert(record, false, false);
			break;
		case XLOG_FBT_INSERT_UPPER:
			_fbt_redo_insert(record, true, false);
			break;
		case XLOG_FBT_INSERT_POST:
			_fbt_redo_insert(record, false, true);
			break;
		case XLOG_FBT_SPLIT_L:
		case XLOG_FBT_SPLIT_R:
			_fbt_redo_split(record);
			break;
		case XLOG_FBT_DEDUP:
			_fbt_redo_dedup(record);
			break;
		case XLOG_FBT_NEWROOT:
			_fbt_redo_newroot(record);
			break;
		case XLOG_FBT_VACUUM:
			_fbt_redo_delete(record, true);
			break;
		case XLOG_FBT_DELETE:
			_fbt_redo_delete(record, false);
			break;
		case XLOG_FBT_MARK_HALFDEAD:
			_fbt_redo_mark_halfdead(record);
			break;
		case XLOG_FBT_UNLINK:
			_fbt_redo_unlink(record);
			break;
		case XLOG_FBT_REUSE_PAGE:
			_fbt_redo_reuse_page(record);
			break;
		case XLOG_FBT_META:
			_fbt_redo_meta(record);
			break;
		default:
			elog(PANIC, "fastbtree redo: unknown record kind %u", info);
	}
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(fbt_redo_context);
}

/*
 * fbt_identify() -- rm_identify: the name of a record kind (pg_walinspect's
 * record_type), NULL for an unknown one.
 */
const char *
fbt_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_FBT_INSERT_LEAF:
			return "INSERT_LEAF";
		case XLOG_FBT_INSERT_UPPER:
			return "INSERT_UPPER";
		case XLOG_FBT_INSERT_POST:
			return "INSERT_POST";
		case XLOG_FBT_SPLIT_L:
			return "SPLIT_L";
		case XLOG_FBT_SPLIT_R:
			return "SPLIT_R";
		case XLOG_FBT_DEDUP:
			return "DEDUP";
		case XLOG_FBT_NEWROOT:
			return "NEWROOT";
		case XLOG_FBT_VACUUM:
			return "VACUUM";
		case XLOG_FBT_DELETE:
			return "DELETE";
		case XLOG_FBT_MARK_HALFDEAD:
			return "MARK_HALFDEAD";
		case XLOG_FBT_UNLINK:
			return "UNLINK";
		case XLOG_FBT_REUSE_PAGE:
			return "REUSE_PAGE";
		case XLOG_FBT_META:
			return "META";
	}
	return NULL;
}

/*
 * fbt_desc() -- rm_desc: a record's fields, as pg_walinspect's description
 * shows them (the block references are shown by core).
 */
void
fbt_desc(StringInfo buf, XLogReaderState *record)
{
	char	   *rec = XLogRecGetData(record);
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (XLogRecGetDataLen(record) < _fbt_main_data_size(info))
	{
		appendStringInfo(buf, "malformed: %u bytes of main data",
						 XLogRecGetDataLen(record));
		return;
	}
	switch (info)
	{
		case XLOG_FBT_INSERT_LEAF:
		case XLOG_FBT_INSERT_UPPER:
		case XLOG_FBT_INSERT_POST:
			{
				xl_fbt_insert *xlrec = (xl_fbt_insert *) rec;

				appendStringInfo(buf, "off: %u", xlrec->offnum);
				if (info == XLOG_FBT_INSERT_POST)
					appendStringInfo(buf, ", postingoff: %u", xlrec->postingoff);
				break;
			}
		case XLOG_FBT_SPLIT_L:
		case XLOG_FBT_SPLIT_R:
			{
				xl_fbt_split *xlrec = (xl_fbt_split *) rec;

				appendStringInfo(buf, "level: %u, firstright: %u, newitemoff: %u",
								 xlrec->level, xlrec->firstright,
								 xlrec->newitemoff);
				if (xlrec->postingoff != 0)
					appendStringInfo(buf, ", postingoff: %u", xlrec->postingoff);
				break;
			}
		case XLOG_FBT_DEDUP:
			appendStringInfo(buf, "nintervals: %u",
							 ((xl_fbt_dedup *) rec)->nintervals);
			break;
		case XLOG_FBT_NEWROOT:
			appendStringInfo(buf, "level: %u",
							 ((xl_fbt_newroot *) rec)->level);
			break;
		case XLOG_FBT_VACUUM:
		case XLOG_FBT_DELETE:
			{
				xl_fbt_delete *xlrec = (xl_fbt_delete *) rec;

				if (TransactionIdIsValid(xlrec->horizon))
					appendStringInfo(buf, "snapshotConflictHorizon: %u, isCatalogRel: %c, ",
									 xlrec->horizon,
									 xlrec->isCatalogRel ? 'T' : 'F');
				appendStringInfo(buf, "ndeleted: %u, nupdated: %u",
								 xlrec->ndeleted, xlrec->nupdated);
				break;
			}
		case XLOG_FBT_MARK_HALFDEAD:
			{
				xl_fbt_mark_halfdead *xlrec = (xl_fbt_mark_halfdead *) rec;

				appendStringInfo(buf, "poff: %u, topparent: %u, rightsib: %u",
								 xlrec->poff, xlrec->topparent,
								 xlrec->rightsib);
				break;
			}
		case XLOG_FBT_UNLINK:
			{
				xl_fbt_unlink *xlrec = (xl_fbt_unlink *) rec;

				appendStringInfo(buf, "leftsib: %u, rightsib: %u, level: %u, safexid: %u:%u, leaftopparent: %u",
								 xlrec->leftsib, xlrec->rightsib, xlrec->level,
								 EpochFromFullTransactionId(xlrec->safexid),
								 XidFromFullTransactionId(xlrec->safexid),
								 xlrec->leaftopparent);
				break;
			}
		case XLOG_FBT_REUSE_PAGE:
			{
				xl_fbt_reuse_page *xlrec = (xl_fbt_reuse_page *) rec;

				appendStringInfo(buf, "rel: " FBT_RELFILE_FORMAT ", block: %u, snapshotConflictHorizon: %u:%u, isCatalogRel: %c",
								 FBT_RELFILE_ARGS(xlrec->locator),
								 xlrec->block,
								 EpochFromFullTransactionId(xlrec->safexid),
								 XidFromFullTransactionId(xlrec->safexid),
								 xlrec->isCatalogRel ? 'T' : 'F');
				break;
			}
		case XLOG_FBT_META:
			break;
	}
}

/*
 * fbt_xlog_startup() / fbt_xlog_cleanup() -- rm_startup / rm_cleanup: the
 * memory context of redo's allocations, for the length of recovery.
 */
void
fbt_xlog_startup(void)
{
	fbt_redo_context = AllocSetContextCreate(CurrentMemoryContext,
											 "fastbtree redo",
											 ALLOCSET_DEFAULT_SIZES);
}

void
fbt_xlog_cleanup(void)
{
	MemoryContextDelete(fbt_redo_context);
	fbt_redo_context = NULL;
}

/*
 * fbt_mask() -- rm_mask: blank what a fastbtree page may differ in between
 * the primary and a replay of its WAL, for wal_consistency_checking.
 *
 * pagedata: a BLCKSZ copy of the page (the primary's full-page image or
 * the replayed page); changed in place.  Masked as nbtree masks its pages
 * (btree_mask()), plus the version counter: the LSN and checksum, hint
 * bits and the unused space; on leaves the line pointer flags (LP_DEAD is
 * set without WAL by scans and unique checks) and FBTP_HAS_GARBAGE; the
 * vacuum cycle id and FBTP_SPLIT_END (not logged in compact mode, as
 * nbtree's); fbto_version (the primary's page is even again after
 * each change, redo leaves it odd).
 */
void
fbt_mask(char *pagedata, BlockNumber blkno)
{
	Page		page = (Page) pagedata;
	FbtPageOpaque opaque;

	mask_page_lsn_and_checksum(page);
	mask_page_hint_bits(page);
	mask_unused_space(page);

	if (PageIsNew(page) ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(FbtPageOpaqueData)))
		return;
	opaque = FbtPageGetOpaque(page);
	opaque->fbto_version = 0;
	if (P_ISLEAF(opaque))
		mask_lp_flags(page);
	opaque->fbto_flags &= ~(FBTP_HAS_GARBAGE | FBTP_SPLIT_END);
	opaque->fbto_cycleid = 0;
}
