/*-------------------------------------------------------------------------
 *
 * fbtpagedel.c
 *	  Deletion of empty leaf pages by VACUUM (nbtree README, "Page
 *	  Deletion"), in nbtree's two steps, each one WAL record:
 *
 *	  1. half-dead: in the parent, the target's downlink is pointed at the
 *		 target's right sibling and the right sibling's own downlink is
 *		 removed, so the right sibling takes over the target's (empty) key
 *		 range; the target is marked HALF_DEAD.  Locks: target, then parent.
 *	  2. unlink: the left sibling's right-link and the right sibling's
 *		 left-link skip the target, which is marked DELETED and keeps its
 *		 own links (a reader that arrives through a stale link steps right
 *		 over it) and, as its only item, the next full transaction id at
 *		 the time: the horizon after which no snapshot can still hold a
 *		 link to it.  Locks: left sibling, target, right sibling.
 *
 * A crash between the steps leaves a half-dead page, still linked, that
 * every reader steps over and the next VACUUM unlinks.  Each record
 * changes at most three pages, within generic WAL's four.
 *
 * This stage deletes leaves only: a leaf that is the rightmost child of
 * its parent, or rightmost on its level, stays (deleting it would need the
 * parent deleted too).  Internal pages are never deleted, so optimistic
 * inner-page reads and scan pins never meet a deleted page.  A later
 * VACUUM pass puts a deleted page in the free space map once its safexid
 * is older than every snapshot, and a split then reuses it
 * (fbtpage.c, _fbt_allocbuf_recycle()).  README.design, "Page deletion",
 * says why each reader stays correct.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/rel.h"

#include "fastbtree.h"

#ifdef USE_ASSERT_CHECKING
/* fastbtree.debug_pagedel_halfdead_only (fastbtree.c) */
bool		fbt_debug_pagedel_halfdead_only = false;
#endif

/* An empty leaf that may be deleted (half-dead ones are finished apart) */
static bool
_fbt_leaf_deletable(Page page, FbtPageOpaque opaque)
{
	return P_ISLEAF(opaque) && !P_RIGHTMOST(opaque) && !P_ISROOT(opaque) &&
		!P_INCOMPLETE_SPLIT(opaque) && !P_IGNORE(opaque) &&
		PageGetMaxOffsetNumber(page) < P_FIRSTDATAKEY(opaque);
}

/*
 * Whether target has no downlink yet: its left sibling, leftsib, is the
 * left half of a split into target that is not finished.
 */
static bool
_fbt_leftsib_splitflag(Relation rel, BlockNumber leftsib, BlockNumber target)
{
	Buffer		buf;
	FbtPageOpaque opaque;
	bool		result;

	if (leftsib == P_NONE)
		return false;
	buf = _fbt_getbuf(rel, leftsib, FBT_READ);
	opaque = FbtPageGetOpaque(BufferGetPage(buf));
	result = opaque->fbto_next == target && P_INCOMPLETE_SPLIT(opaque);
	UnlockReleaseBuffer(buf);
	return result;
}

/*
 * Descend to the parent level of the leaves, searching for hikey (the
 * target's high key) as a pivot (FbtScanInsertData.pivotsearch): the child
 * followed at each level is the one left of the first pivot >= hikey, the
 * subtree whose range ends at or after hikey, and a page whose high key is
 * below it is left for its right sibling.  Pages are share-locked one at a
 * time.  Returns the descent stack, its first entry the level-1 page and
 * the offset of the downlink followed, or NULL if the root is a leaf.
 */
static FbtStack
_fbt_find_parent_stack(Relation rel, IndexTuple hikey)
{
	FbtScanInsert key;
	FbtStack	stack = NULL;
	Buffer		buf;
	bool		borrowed;
	ItemPointerData htid;
	ItemPointer hikeytid = FbtTupleGetHeapTID(hikey);

	key = _fbt_mkscankey_natts(rel, hikey, FbtTupleGetNAtts(hikey, rel));
	key->pivotsearch = true;
	if (hikeytid != NULL)
	{
		htid = *hikeytid;
		key->scantid = &htid;
	}

	buf = _fbt_getroot(rel, FBT_READ, false, NULL, &borrowed);
	Assert(!borrowed);
	while (BufferIsValid(buf))
	{
		Page		page = BufferGetPage(buf);
		FbtPageOpaque opaque = FbtPageGetOpaque(page);
		BlockNumber blkno = BufferGetBlockNumber(buf);
		OffsetNumber offnum;
		FbtStack	entry;

		if (P_ISLEAF(opaque))
		{
			UnlockReleaseBuffer(buf);
			break;
		}
		if (!P_RIGHTMOST(opaque) &&
			_fbt_compare(rel, key, buf, P_HIKEY) > 0)
		{
			buf = _fbt_relandgetbuf(rel, buf, opaque->fbto_next, FBT_READ);
			continue;
		}
		offnum = _fbt_binsrch(rel, key, buf);
		entry = palloc(sizeof(FbtStackData));
		entry->fbts_blkno = blkno;
		entry->fbts_offset = offnum;
		entry->fbts_parent = stack;
		stack = entry;
		if (opaque->fbto_level == 1)
		{
			UnlockReleaseBuffer(buf);
			break;
		}
		buf = _fbt_relandgetbuf(rel, buf,
								FbtPivotGetDownLink(_fbt_getitem(rel, buf,
																 offnum)),
								FBT_READ);
	}
	_fbt_freescankey(key);
	return stack;
}

/*
 * Step 1: mark the exclusively locked empty leaf target (leafbuf) half-dead
 * and hand its key range to its right sibling rightsib in the parent.
 * Returns false, having changed nothing, if target is its parent's
 * rightmost child or rightsib is half-dead.  leafbuf stays locked.
 */
static bool
_fbt_mark_halfdead(Relation rel, Buffer leafbuf, FbtStack stack,
				   BlockNumber rightsib)
{
	BlockNumber target = BufferGetBlockNumber(leafbuf);
	Buffer		pbuf;
	Buffer		rbuf;
	Page		ppage;
	OffsetNumber poff;
	OffsetNumber maxoff;
	FbtWal		wal;
	Page		pimg;
	Page		limg;
	bool		rightdead;

	/*
	 * A half-dead right sibling (left so by a crash, or by an earlier
	 * deletion stopped after its first step) has no downlink of its own to
	 * take over: leave the target until that one is unlinked, as nbtree's
	 * _bt_rightsib_halfdeadflag().  Locking right of the target is the
	 * usual order.
	 */
	rbuf = _fbt_getbuf(rel, rightsib, FBT_READ);
	rightdead = P_ISHALFDEAD(FbtPageGetOpaque(BufferGetPage(rbuf)));
	UnlockReleaseBuffer(rbuf);
	if (rightdead)
		return false;

	pbuf = _fbt_getstackbuf(rel, stack, target);
	if (!BufferIsValid(pbuf))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("failed to re-find parent key in index \"%s\" for deletion target page %u",
						RelationGetRelationName(rel), target)));
	ppage = BufferGetPage(pbuf);
	poff = stack->fbts_offset;
	maxoff = PageGetMaxOffsetNumber(ppage);
	if (poff >= maxoff)
	{
		/* the parent's rightmost child: its range ends with the parent's */
		UnlockReleaseBuffer(pbuf);
		return false;
	}
	if (FbtPivotGetDownLink(_fbt_getitem(rel, pbuf, OffsetNumberNext(poff))) !=
		rightsib)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("right sibling %u of block %u is not next child %u of block %u in index \"%s\"",
						rightsib, target,
						FbtPivotGetDownLink(_fbt_getitem(rel, pbuf,
														 OffsetNumberNext(poff))),
						BufferGetBlockNumber(pbuf),
						RelationGetRelationName(rel))));

	/* serializable transactions' page locks follow the range right */
	PredicateLockPageCombine(rel, target, rightsib);

	_fbt_wal_start(&wal, rel);
	pimg = _fbt_wal_register(&wal, pbuf, false);
	limg = _fbt_wal_register(&wal, leafbuf, false);
	FbtPivotSetDownLink((IndexTuple) PageGetItem(pimg,
												 PageGetItemId(pimg, poff)),
						rightsib);
	PageIndexTupleDelete(pimg, OffsetNumberNext(poff));
	FbtPageGetOpaque(limg)->fbto_flags |= FBTP_HALF_DEAD;
	START_CRIT_SECTION();
	_fbt_wal_finish(&wal);
	END_CRIT_SECTION();

	UnlockReleaseBuffer(pbuf);
	return true;
}

/*
 * Step 2: unlink the half-dead leaf leafbuf (exclusively locked on entry,
 * pinned and unlocked on return) from its siblings and mark it deleted.
 */
static void
_fbt_unlink_halfdead(Relation rel, Buffer leafbuf,
					 IndexBulkDeleteResult *stats)
{
	BlockNumber target = BufferGetBlockNumber(leafbuf);
	FbtPageOpaque opaque = FbtPageGetOpaque(BufferGetPage(leafbuf));
	BlockNumber leftsib = opaque->fbto_prev;
	BlockNumber rightsib;
	Buffer		lbuf = InvalidBuffer;
	Buffer		rbuf;
	FbtWal		wal;
	Page		timg;
	Page		rimg;
	FbtDeletedPageData deleted;

	/* lock left to right: the left sibling first */
	LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
	if (leftsib != P_NONE)
	{
		lbuf = _fbt_getbuf(rel, leftsib, FBT_WRITE);
		for (;;)
		{
			FbtPageOpaque lopaque = FbtPageGetOpaque(BufferGetPage(lbuf));

			if (lopaque->fbto_next == target)
				break;
			/* the left sibling split meanwhile: its right half is between */
			if (P_RIGHTMOST(lopaque) ||
				BufferGetBlockNumber(lbuf) == target)
				ereport(ERROR,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("could not find left sibling of block %u in index \"%s\"",
								target, RelationGetRelationName(rel))));
			lbuf = _fbt_relandgetbuf(rel, lbuf, lopaque->fbto_next,
									 FBT_WRITE);
		}
		leftsib = BufferGetBlockNumber(lbuf);
	}
	LockBuffer(leafbuf, BUFFER_LOCK_EXCLUSIVE);
	_fbt_checkpage(rel, leafbuf);
	opaque = FbtPageGetOpaque(BufferGetPage(leafbuf));
	if (!P_ISHALFDEAD(opaque) || opaque->fbto_prev != leftsib)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("half-dead block %u of index \"%s\" has left-link %u, but its left sibling is %u",
						target, RelationGetRelationName(rel),
						opaque->fbto_prev, leftsib)));
	rightsib = opaque->fbto_next;
	rbuf = _fbt_getbuf(rel, rightsib, FBT_WRITE);
	if (FbtPageGetOpaque(BufferGetPage(rbuf))->fbto_prev != target)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("right sibling's left-link doesn't match: block %u links to %u instead of expected %u in index \"%s\"",
						rightsib,
						FbtPageGetOpaque(BufferGetPage(rbuf))->fbto_prev,
						target, RelationGetRelationName(rel))));

	deleted.safexid = ReadNextFullTransactionId();

	_fbt_wal_start(&wal, rel);
	if (BufferIsValid(lbuf))
	{
		/* (FbtPageGetOpaque() may evaluate its argument more than once) */
		Page		limg = _fbt_wal_register(&wal, lbuf, false);

		FbtPageGetOpaque(limg)->fbto_next = rightsib;
	}
	timg = _fbt_wal_register(&wal, leafbuf, false);
	rimg = _fbt_wal_register(&wal, rbuf, false);
	FbtPageGetOpaque(rimg)->fbto_prev = leftsib;
	_fbt_pageinit(timg, 0, FBTP_LEAF | FBTP_DELETED);
	FbtPageGetOpaque(timg)->fbto_prev = leftsib;
	FbtPageGetOpaque(timg)->fbto_next = rightsib;
	if (PageAddItem(timg, (Item) &deleted, sizeof(deleted), P_HIKEY,
					false, false) == InvalidOffsetNumber)
	{
		_fbt_wal_abort(&wal);
		elog(ERROR, "failed to add the deleted-page data to block %u of index \"%s\"",
			 target, RelationGetRelationName(rel));
	}
	START_CRIT_SECTION();
	_fbt_wal_finish(&wal);
	END_CRIT_SECTION();

	if (BufferIsValid(lbuf))
		UnlockReleaseBuffer(lbuf);
	UnlockReleaseBuffer(rbuf);
	LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);

	stats->pages_deleted++;
	stats->pages_newly_deleted++;
}

/*
 * _fbt_pagedel() -- delete the leaf leafbuf if it is empty (or half-dead,
 * left so by a crash between the two steps) and deletable.
 *
 * rel: the index; leafbuf: a leaf VACUUM has just cleaned, pinned and
 * exclusively (or cleanup-) locked; on return pinned and unlocked, the
 * caller releases it.  stats: VACUUM's, whose pages_deleted and
 * pages_newly_deleted count the page if it was deleted.  A leaf that is
 * not empty, rightmost, the root, part of an unfinished split, or the
 * rightmost child of its parent is left alone.  Takes the page locks the
 * file header lists, never more than three at once.  Algorithm: nbtree
 * README "Page Deletion" (_bt_pagedel, leaves only).  Errors:
 * ERRCODE_INDEX_CORRUPTED when parent or sibling links contradict each
 * other, and those of WAL insertion.
 */
void
_fbt_pagedel(Relation rel, Buffer leafbuf, IndexBulkDeleteResult *stats)
{
	Page		page = BufferGetPage(leafbuf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	BlockNumber target = BufferGetBlockNumber(leafbuf);

	if (!P_ISHALFDEAD(opaque))
	{
		IndexTuple	hikey;
		BlockNumber rightsib;
		BlockNumber leftsib;
		FbtStack	stack;
		bool		marked;

		if (!_fbt_leaf_deletable(page, opaque))
		{
			LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
			return;
		}
		hikey = CopyIndexTuple(_fbt_getitem(rel, leafbuf, P_HIKEY));
		_fbt_check_attrs(rel, leafbuf, hikey);
		rightsib = opaque->fbto_next;
		leftsib = opaque->fbto_prev;
		LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);

		if (_fbt_leftsib_splitflag(rel, leftsib, target))
		{
			pfree(hikey);
			return;
		}
		stack = _fbt_find_parent_stack(rel, hikey);
		pfree(hikey);
		if (stack == NULL)
			return;

		/* again under the lock: an insert may have come meanwhile */
		LockBuffer(leafbuf, BUFFER_LOCK_EXCLUSIVE);
		_fbt_checkpage(rel, leafbuf);
		if (!_fbt_leaf_deletable(page, opaque) ||
			opaque->fbto_next != rightsib)
		{
			LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
			_fbt_freestack(stack);
			return;
		}
		marked = _fbt_mark_halfdead(rel, leafbuf, stack, rightsib);
		_fbt_freestack(stack);
		if (!marked)
		{
			LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
			return;
		}
#ifdef USE_ASSERT_CHECKING
		if (fbt_debug_pagedel_halfdead_only)
		{
			/* as a crash between the two steps leaves it (tests) */
			LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
			return;
		}
#endif
	}
	_fbt_unlink_halfdead(rel, leafbuf, stats);
}
