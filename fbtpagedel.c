/*-------------------------------------------------------------------------
 *
 * fbtpagedel.c
 *	  Deletion of the pages VACUUM empties (nbtree README, "Page
 *	  Deletion"), in nbtree's steps, each one WAL record:
 *
 *	  1. half-dead: the empty leaf is marked HALF_DEAD, and the key range of
 *		 the subtree it heads is handed to the subtree's right sibling in
 *		 the subtree's parent: the downlink to the subtree's top page is
 *		 pointed at that sibling and the sibling's own downlink removed.
 *		 The subtree is the leaf alone, or the leaf and the chain of
 *		 internal pages above it of which each is its parent's only child
 *		 (the "top parent" is the highest of them); its top parent is
 *		 recorded in the leaf's high key (its downlink field), so that a
 *		 crash anywhere later leaves enough to finish.  Locks: the leaf,
 *		 then (one at a time, upwards) the parents, keeping only the
 *		 subtree's parent locked.  Two pages.
 *	  2. unlink, once per page of the subtree, from the top parent down to
 *		 the leaf: the page's left sibling's right-link and its right
 *		 sibling's left-link skip it, and it is marked DELETED, keeping its
 *		 own links (a reader that arrives through a stale link steps right
 *		 over it) and level and, as its only item, the next full
 *		 transaction id at the time: the horizon after which no snapshot
 *		 can still hold a link to it.  When the page is internal, the
 *		 leaf's top-parent link moves down to its only child.  Locks: the
 *		 leaf (when it is not the page unlinked), then, left to right, the
 *		 left sibling, the page, the right sibling.  At most four pages.
 *
 * A crash between the steps leaves a half-dead leaf, still linked, that
 * every reader steps over, and possibly internal pages that no downlink
 * reaches any more but whose only path leads to that leaf; the next VACUUM
 * finds the leaf and continues from the top parent it records.  Each
 * record changes at most four pages, generic WAL's limit.
 *
 * A subtree that is its parent's rightmost child stays unless the parent
 * can go with it (its only child, and not rightmost on its level); the
 * root never goes, nor the rightmost page of any level.  A later VACUUM
 * pass puts a deleted page in the free space map once its safexid is
 * older than every snapshot, and a split then reuses it (fbtpage.c,
 * _fbt_allocbuf_recycle()).  README.design, "Page deletion", says why
 * each reader stays correct, optimistic readers of internal pages
 * included.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/rel.h"

#include "fastbtree.h"
#include "fbtxlog.h"

#ifdef USE_ASSERT_CHECKING
/* fastbtree.debug_pagedel_halfdead_only and _unlinks (fastbtree.c) */
bool		fbt_debug_pagedel_halfdead_only = false;
int			fbt_debug_pagedel_unlinks = -1;
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
 * The top-parent link of the half-dead leaf in buf (locked): the downlink
 * field of its high key, which a live leaf's high key leaves invalid, so
 * that a leaf made half-dead before internal pages could be deleted reads
 * as the top of its own subtree.  InvalidBlockNumber: the leaf is.
 */
static BlockNumber
_fbt_get_top_parent(Relation rel, Buffer buf)
{
	return FbtPivotGetDownLink(_fbt_getitem(rel, buf, P_HIKEY));
}

/* Set the top-parent link of the half-dead leaf image page */
static void
_fbt_set_top_parent(Page page, BlockNumber topparent)
{
	FbtPivotSetDownLink((IndexTuple) PageGetItem(page,
												 PageGetItemId(page, P_HIKEY)),
						topparent);
}

/*
 * _fbt_halfdead_apply_parent() -- page deletion's step 1 on the subtree's
 * parent page (primary and redo): the downlink at poff, to the subtree's
 * top page, now leads to rightsib, whose own downlink at poff + 1 goes;
 * the subtree's key range thus passes to rightsib (nbtree README, "Page
 * Deletion").  page: the exclusively locked shared page inside the
 * caller's critical section, or a generic WAL image of it (the same for
 * the functions below).  Returns false, changing nothing, if poff + 1 is
 * not an item of the page.  Errors: bufpage.c's checks of a damaged page.
 */
bool
_fbt_halfdead_apply_parent(Page page, OffsetNumber poff, BlockNumber rightsib)
{
	if (poff < FirstOffsetNumber ||
		OffsetNumberNext(poff) > PageGetMaxOffsetNumber(page))
		return false;
	FbtPivotSetDownLink((IndexTuple) PageGetItem(page,
												 PageGetItemId(page, poff)),
						rightsib);
	PageIndexTupleDelete(page, OffsetNumberNext(poff));
	return true;
}

/*
 * _fbt_halfdead_apply_leaf() -- step 1 on the empty leaf (primary and
 * redo): mark it half-dead and record topparent, the subtree's top
 * internal page (InvalidBlockNumber when the leaf is the whole subtree),
 * in its high key's downlink field.  Returns false if the page has no
 * high key.  Raises no error.
 */
bool
_fbt_halfdead_apply_leaf(Page page, BlockNumber topparent)
{
	if (PageGetMaxOffsetNumber(page) < P_HIKEY)
		return false;
	FbtPageGetOpaque(page)->fbto_flags |= FBTP_HALF_DEAD;
	_fbt_set_top_parent(page, topparent);
	return true;
}

/*
 * _fbt_unlink_apply_leaf() -- step 2 on the half-dead leaf below an
 * internal page being unlinked (primary and redo): its top-parent link
 * moves down to leaftopparent.  Returns false if the page has no high
 * key.  Raises no error.
 */
bool
_fbt_unlink_apply_leaf(Page page, BlockNumber leaftopparent)
{
	if (PageGetMaxOffsetNumber(page) < P_HIKEY)
		return false;
	_fbt_set_top_parent(page, leaftopparent);
	return true;
}

/*
 * _fbt_deleted_page_init() -- step 2 on the page unlinked (primary and
 * redo): page (BLCKSZ bytes: a local page, a WAL image, or the buffer redo
 * initializes, locked) becomes a deleted page of level, keeping its
 * old siblings leftsib and rightsib (a scan stopped on it moves right
 * through it), with safexid, after which no snapshot can be on the way to
 * it, as its only item (FbtDeletedPageData).  The version counter is
 * zero; callers set it.  Returns false if the item does not fit (never on
 * a BLCKSZ page).  Raises no error.
 */
bool
_fbt_deleted_page_init(Page page, uint32 level, BlockNumber leftsib,
					   BlockNumber rightsib, FullTransactionId safexid)
{
	FbtDeletedPageData deleted;

	_fbt_pageinit(page, level,
				  FBTP_DELETED | (level == 0 ? FBTP_LEAF : 0));
	FbtPageGetOpaque(page)->fbto_prev = leftsib;
	FbtPageGetOpaque(page)->fbto_next = rightsib;
	deleted.safexid = safexid;
	return PageAddItem(page, (Item) &deleted, sizeof(deleted), P_HIKEY,
					   false, false) != InvalidOffsetNumber;
}

/*
 * Descend to the parent level of the leaves, searching for hikey (the
 * target's high key) as a pivot (FbtScanInsertData.pivotsearch): the child
 * followed at each level is the one left of the first pivot >= hikey, the
 * subtree whose range ends at or after hikey, and a page whose high key is
 * below it is left for its right sibling, as is a deleted page.  Pages are
 * share-locked one at a time.  Returns the descent stack, its first entry
 * the level-1 page and the offset of the downlink followed, each entry's
 * parent the entry of the level above; NULL if the root is a leaf.
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

	buf = _fbt_getroot(rel, FBT_READ, false, NULL, &borrowed, NULL);
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
		if (P_IGNORE(opaque))
		{
			_fbt_ignored_page_not_rightmost(rel, blkno, opaque);
			buf = _fbt_relandgetbuf(rel, buf, opaque->fbto_next, FBT_READ);
			continue;
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
 * Find and exclusively lock the parent of the subtree whose top page is
 * child, as nbtree's _bt_lock_subtree_parent(): the parent page holding
 * child's downlink (stack: child's parent entry) is the subtree's parent
 * if the downlink is not its last; if it is the last and only one, and the
 * parent is not rightmost on its level, the parent joins the subtree
 * (*topparent, *topparentrightsib: the parent and its right sibling) and
 * the search goes on a level up.  Returns true with *subtreeparent locked
 * and *poffset the downlink to the subtree's top page; false, nothing
 * locked, when the subtree cannot be deleted (the downlink is a parent's
 * last one of several, or the parent is rightmost, or its left sibling's
 * split into it is unfinished).  Only the subtree's parent stays locked:
 * none of the pages below can gain a downlink while the caller holds the
 * empty leaf locked.  A downlink found nowhere is logged (LOG,
 * ERRCODE_INDEX_CORRUPTED) and the subtree left alone, as nbtree does, so
 * that VACUUM goes on.
 */
static bool
_fbt_lock_subtree_parent(Relation rel, BlockNumber child, FbtStack stack,
						 Buffer *subtreeparent, OffsetNumber *poffset,
						 BlockNumber *topparent,
						 BlockNumber *topparentrightsib)
{
	Buffer		pbuf;
	Page		page;
	FbtPageOpaque opaque;
	BlockNumber parent;
	BlockNumber leftsibparent;
	OffsetNumber poff;

	/* the descent started below a root that split meanwhile: not now */
	if (stack == NULL)
		return false;

	pbuf = _fbt_getstackbuf(rel, stack, child);
	if (!BufferIsValid(pbuf))
	{
		/* damage: leave the subtree, and let VACUUM go on (as nbtree) */
		ereport(LOG,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("failed to re-find parent key in index \"%s\" for deletion target page %u",
						RelationGetRelationName(rel), child)));
		return false;
	}
	parent = stack->fbts_blkno;
	poff = stack->fbts_offset;
	page = BufferGetPage(pbuf);
	opaque = FbtPageGetOpaque(page);
	leftsibparent = opaque->fbto_prev;

	if (poff < PageGetMaxOffsetNumber(page))
	{
		*subtreeparent = pbuf;
		*poffset = poff;
		return true;
	}

	/* child is parent's last child: the parent must be able to go too */
	if (poff != P_FIRSTDATAKEY(opaque) || P_RIGHTMOST(opaque))
	{
		UnlockReleaseBuffer(pbuf);
		return false;
	}
	*topparent = parent;
	*topparentrightsib = opaque->fbto_next;
	UnlockReleaseBuffer(pbuf);

	/* a parent whose downlink is yet to be inserted cannot be found */
	if (_fbt_leftsib_splitflag(rel, leftsibparent, parent))
		return false;

	return _fbt_lock_subtree_parent(rel, parent, stack->fbts_parent,
									subtreeparent, poffset, topparent,
									topparentrightsib);
}

/*
 * Step 1: mark the exclusively locked empty leaf (leafbuf), whose right
 * sibling is rightsib and whose parent entry is stack, half-dead, record
 * the top parent of its subtree in its high key, and hand the subtree's
 * key range to the subtree's right sibling in the subtree's parent.
 * Returns false, having changed nothing, if the subtree cannot be deleted
 * (_fbt_lock_subtree_parent()) or rightsib is half-dead.  leafbuf stays
 * locked.
 */
static bool
_fbt_mark_halfdead(Relation rel, Buffer leafbuf, FbtStack stack,
				   BlockNumber rightsib)
{
	BlockNumber leafblkno = BufferGetBlockNumber(leafbuf);
	BlockNumber topparent = leafblkno;
	BlockNumber topparentrightsib = rightsib;
	Buffer		pbuf;
	Buffer		rbuf;
	OffsetNumber poff;
	FbtWal		wal;
	Page		pimg;
	Page		limg;
	bool		rightdead;

	/*
	 * A half-dead right sibling (left so by a crash, or by an earlier
	 * deletion stopped after its first step) has no downlink of its own to
	 * take over: leave the target until that one is unlinked, as nbtree's
	 * _bt_rightsib_halfdeadflag().  The same holds for a subtree: its right
	 * sibling's leftmost leaf is the leaf's right sibling.  Locking right
	 * of the target is the usual order.
	 */
	rbuf = _fbt_getbuf(rel, rightsib, FBT_READ);
	rightdead = P_ISHALFDEAD(FbtPageGetOpaque(BufferGetPage(rbuf)));
	UnlockReleaseBuffer(rbuf);
	if (rightdead)
		return false;

	if (!_fbt_lock_subtree_parent(rel, leafblkno, stack, &pbuf, &poff,
								  &topparent, &topparentrightsib))
		return false;
	if (FbtPivotGetDownLink(_fbt_getitem(rel, pbuf, poff)) != topparent)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("downlink %u of block %u in index \"%s\" does not lead to deletion target page %u",
						poff, BufferGetBlockNumber(pbuf),
						RelationGetRelationName(rel), topparent)));
	if (FbtPivotGetDownLink(_fbt_getitem(rel, pbuf, OffsetNumberNext(poff))) !=
		topparentrightsib)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("right sibling %u of block %u is not next child %u of block %u in index \"%s\"",
						topparentrightsib, topparent,
						FbtPivotGetDownLink(_fbt_getitem(rel, pbuf,
														 OffsetNumberNext(poff))),
						BufferGetBlockNumber(pbuf),
						RelationGetRelationName(rel))));

	/* serializable transactions' page locks follow the range right */
	PredicateLockPageCombine(rel, leafblkno, rightsib);

	if (topparent == leafblkno)
		topparent = InvalidBlockNumber;
	if (fbt_wal_compact)
	{
		XLogRecPtr	recptr = InvalidXLogRecPtr;

		START_CRIT_SECTION();
		_fbt_edit_begin(pbuf);
		_fbt_edit_begin(leafbuf);
		if (!_fbt_halfdead_apply_parent(BufferGetPage(pbuf), poff,
										topparentrightsib) ||
			!_fbt_halfdead_apply_leaf(BufferGetPage(leafbuf), topparent))
			elog(PANIC, "could not mark block %u of index \"%s\" half-dead",
				 leafblkno, RelationGetRelationName(rel));
		MarkBufferDirty(pbuf);
		MarkBufferDirty(leafbuf);
		if (RelationNeedsWAL(rel))
		{
			xl_fbt_mark_halfdead xlrec;

			xlrec.poff = poff;
			xlrec.topparent = topparent;
			xlrec.rightsib = topparentrightsib;
			XLogBeginInsert();
			XLogRegisterData((char *) &xlrec, SizeOfFbtMarkHalfdead);
			XLogRegisterBuffer(0, leafbuf, REGBUF_STANDARD);
			XLogRegisterBuffer(1, pbuf, REGBUF_STANDARD);
			recptr = XLogInsert(FBT_RMGR_ID, XLOG_FBT_MARK_HALFDEAD);
		}
		_fbt_edit_end(pbuf, recptr);
		_fbt_edit_end(leafbuf, recptr);
		END_CRIT_SECTION();
	}
	else
	{
		_fbt_wal_start(&wal, rel);
		pimg = _fbt_wal_register(&wal, pbuf, false);
		limg = _fbt_wal_register(&wal, leafbuf, false);
		if (!_fbt_halfdead_apply_parent(pimg, poff, topparentrightsib) ||
			!_fbt_halfdead_apply_leaf(limg, topparent))
		{
			_fbt_wal_abort(&wal);
			elog(ERROR, "could not mark block %u of index \"%s\" half-dead",
				 leafblkno, RelationGetRelationName(rel));
		}
		START_CRIT_SECTION();
		_fbt_wal_finish(&wal);
		END_CRIT_SECTION();
	}

	UnlockReleaseBuffer(pbuf);
	return true;
}

/*
 * Compact mode: step 2's edits of the pages, all exclusively locked (lbuf
 * and leafbuf may be InvalidBuffer: no left sibling, or the leaf is the
 * page unlinked), and its XLOG_FBT_UNLINK record; see
 * _fbt_unlink_halfdead().  Buffers stay locked.
 */
static void
_fbt_unlink_logged(Relation rel, Buffer buf, Buffer lbuf, Buffer rbuf,
				   Buffer leafbuf, uint32 level, BlockNumber leftsib,
				   BlockNumber rightsib, FullTransactionId safexid,
				   BlockNumber leaftopparent)
{
	PGAlignedBlock deleted;
	uint32		version;
	XLogRecPtr	recptr = InvalidXLogRecPtr;

	if (!_fbt_deleted_page_init(deleted.data, level, leftsib, rightsib,
								safexid))
		elog(ERROR, "failed to add the deleted-page data to block %u of index \"%s\"",
			 BufferGetBlockNumber(buf), RelationGetRelationName(rel));

	START_CRIT_SECTION();
	if (BufferIsValid(lbuf))
		_fbt_edit_begin(lbuf);
	version = _fbt_edit_begin(buf);
	_fbt_edit_begin(rbuf);
	if (BufferIsValid(leafbuf))
		_fbt_edit_begin(leafbuf);
	if (BufferIsValid(lbuf))
	{
		FbtPageGetOpaque(BufferGetPage(lbuf))->fbto_next = rightsib;
		MarkBufferDirty(lbuf);
	}
	_fbt_edit_replace(buf, deleted.data, version);
	MarkBufferDirty(buf);
	FbtPageGetOpaque(BufferGetPage(rbuf))->fbto_prev = leftsib;
	MarkBufferDirty(rbuf);
	if (BufferIsValid(leafbuf))
	{
		if (!_fbt_unlink_apply_leaf(BufferGetPage(leafbuf), leaftopparent))
			elog(PANIC, "half-dead block %u of index \"%s\" has no high key",
				 BufferGetBlockNumber(leafbuf), RelationGetRelationName(rel));
		MarkBufferDirty(leafbuf);
	}
	if (RelationNeedsWAL(rel))
	{
		xl_fbt_unlink xlrec;

		xlrec.leftsib = leftsib;
		xlrec.rightsib = rightsib;
		xlrec.level = level;
		xlrec.safexid = safexid;
		xlrec.leaftopparent = leaftopparent;
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfFbtUnlink);
		XLogRegisterBuffer(0, buf, REGBUF_WILL_INIT | REGBUF_STANDARD);
		if (BufferIsValid(lbuf))
			XLogRegisterBuffer(1, lbuf, REGBUF_STANDARD);
		XLogRegisterBuffer(2, rbuf, REGBUF_STANDARD);
		if (BufferIsValid(leafbuf))
			XLogRegisterBuffer(3, leafbuf, REGBUF_STANDARD);
		recptr = XLogInsert(FBT_RMGR_ID, XLOG_FBT_UNLINK);
	}
	if (BufferIsValid(lbuf))
		_fbt_edit_end(lbuf, recptr);
	_fbt_edit_end(buf, recptr);
	_fbt_edit_end(rbuf, recptr);
	if (BufferIsValid(leafbuf))
		_fbt_edit_end(leafbuf, recptr);
	END_CRIT_SECTION();
}

/*
 * Step 2, once: unlink the top page of the half-dead leaf's subtree (the
 * internal page its top-parent link names, else the leaf itself) from its
 * siblings and mark it deleted; when that page is internal, the leaf's
 * link moves down to its only child (InvalidBlockNumber when that child
 * is the leaf).  leafbuf: the half-dead leaf, pinned and exclusively
 * locked on entry, pinned and unlocked on return.  scanblkno: the block
 * VACUUM's physical-order scan is at; stats: pages_deleted counts the
 * page if the scan has passed it (a page further on is counted when the
 * scan gets there), pages_newly_deleted counts it.  When the leaf itself
 * is unlinked, *rightsib and *rightsib_empty tell its right sibling and
 * whether that has no items.  Returns false, having changed nothing, when
 * the page's left sibling cannot be found (damage: logged, as nbtree
 * does, so that VACUUM goes on).
 */
static bool
_fbt_unlink_halfdead(Relation rel, Buffer leafbuf, BlockNumber scanblkno,
					 IndexBulkDeleteResult *stats, BlockNumber *rightsibp,
					 bool *rightsib_empty)
{
	BlockNumber leafblkno = BufferGetBlockNumber(leafbuf);
	Page		leafpage = BufferGetPage(leafbuf);
	FbtPageOpaque opaque = FbtPageGetOpaque(leafpage);
	BlockNumber target = _fbt_get_top_parent(rel, leafbuf);
	BlockNumber leafleftsib = opaque->fbto_prev;
	BlockNumber leftsib;
	BlockNumber rightsib;
	BlockNumber leaftopparent = InvalidBlockNumber;
	uint32		targetlevel;
	Buffer		buf;
	Buffer		lbuf = InvalidBuffer;
	Buffer		rbuf;
	Page		page;
	FbtWal		wal;
	Page		timg;
	Page		rimg;
	FullTransactionId safexid;

	LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
	CHECK_FOR_INTERRUPTS();

	if (target == InvalidBlockNumber)
	{
		target = leafblkno;
		buf = leafbuf;
		leftsib = leafleftsib;
		targetlevel = 0;
	}
	else
	{
		buf = _fbt_getbuf(rel, target, FBT_READ);
		opaque = FbtPageGetOpaque(BufferGetPage(buf));
		leftsib = opaque->fbto_prev;
		targetlevel = opaque->fbto_level;
		if (P_ISLEAF(opaque) || targetlevel == 0 || P_IGNORE(opaque) ||
			(opaque->fbto_flags & FBTP_META))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("top parent %u of half-dead block %u in index \"%s\" is not a live internal page",
							target, leafblkno, RelationGetRelationName(rel))));
		/* no lock on it while the left sibling is locked */
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		LockBuffer(leafbuf, BUFFER_LOCK_EXCLUSIVE);
		_fbt_checkpage(rel, leafbuf);
	}

	/* lock left to right: the left sibling first */
	if (leftsib != P_NONE)
	{
		lbuf = _fbt_getbuf(rel, leftsib, FBT_WRITE);
		for (;;)
		{
			FbtPageOpaque lopaque = FbtPageGetOpaque(BufferGetPage(lbuf));

			if (lopaque->fbto_next == target && !P_ISDELETED(lopaque))
				break;
			/* the left sibling split meanwhile: its right half is between */
			if (P_RIGHTMOST(lopaque) || P_ISDELETED(lopaque) ||
				BufferGetBlockNumber(lbuf) == target ||
				lopaque->fbto_level != targetlevel)
			{
				/* damage: leave the page, and let VACUUM go on (as nbtree) */
				ereport(LOG,
						(errcode(ERRCODE_INDEX_CORRUPTED),
						 errmsg("could not find left sibling of block %u in index \"%s\"",
								target, RelationGetRelationName(rel))));
				UnlockReleaseBuffer(lbuf);
				if (target != leafblkno)
				{
					ReleaseBuffer(buf);
					LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
				}
				return false;
			}
			lbuf = _fbt_relandgetbuf(rel, lbuf, lopaque->fbto_next,
									 FBT_WRITE);
		}
		leftsib = BufferGetBlockNumber(lbuf);
	}

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	_fbt_checkpage(rel, buf);
	page = BufferGetPage(buf);
	opaque = FbtPageGetOpaque(page);
	if (opaque->fbto_prev != leftsib)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("deletion target block %u of index \"%s\" has left-link %u, but its left sibling is %u",
						target, RelationGetRelationName(rel),
						opaque->fbto_prev, leftsib)));
	if (target == leafblkno)
	{
		if (!P_ISHALFDEAD(opaque) || P_RIGHTMOST(opaque) ||
			PageGetMaxOffsetNumber(page) >= P_FIRSTDATAKEY(opaque))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("half-dead block %u of index \"%s\" changed under VACUUM",
							target, RelationGetRelationName(rel))));
	}
	else
	{
		/* a page of the chain: one downlink, to the next page down */
		if (P_ISLEAF(opaque) || P_IGNORE(opaque) || P_RIGHTMOST(opaque) ||
			P_ISROOT(opaque) || opaque->fbto_level != targetlevel ||
			PageGetMaxOffsetNumber(page) != P_FIRSTDATAKEY(opaque))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("internal deletion target block %u of index \"%s\" is not a page with a single downlink",
							target, RelationGetRelationName(rel))));
		leaftopparent = FbtPivotGetDownLink(_fbt_getitem(rel, buf,
														 P_FIRSTDATAKEY(opaque)));
		if (leaftopparent == leafblkno)
			leaftopparent = InvalidBlockNumber;
	}

	rightsib = opaque->fbto_next;
	rbuf = _fbt_getbuf(rel, rightsib, FBT_WRITE);
	if (FbtPageGetOpaque(BufferGetPage(rbuf))->fbto_prev != target)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("right sibling's left-link doesn't match: block %u links to %u instead of expected %u in index \"%s\"",
						rightsib,
						FbtPageGetOpaque(BufferGetPage(rbuf))->fbto_prev,
						target, RelationGetRelationName(rel))));
	if (target == leafblkno)
	{
		Page		rpage = BufferGetPage(rbuf);

		*rightsibp = rightsib;
		*rightsib_empty = P_ISLEAF(FbtPageGetOpaque(rpage)) &&
			PageGetMaxOffsetNumber(rpage) <
			P_FIRSTDATAKEY(FbtPageGetOpaque(rpage));
	}

	safexid = ReadNextFullTransactionId();

	if (fbt_wal_compact)
		_fbt_unlink_logged(rel, buf, lbuf, rbuf,
						   target != leafblkno ? leafbuf : InvalidBuffer,
						   targetlevel, leftsib, rightsib, safexid,
						   leaftopparent);
	else
	{
		_fbt_wal_start(&wal, rel);
		if (BufferIsValid(lbuf))
		{
			/* (FbtPageGetOpaque() may evaluate its argument more than once) */
			Page		limg = _fbt_wal_register(&wal, lbuf, false);

			FbtPageGetOpaque(limg)->fbto_next = rightsib;
		}
		timg = _fbt_wal_register(&wal, buf, false);
		rimg = _fbt_wal_register(&wal, rbuf, false);
		FbtPageGetOpaque(rimg)->fbto_prev = leftsib;
		if (target != leafblkno &&
			!_fbt_unlink_apply_leaf(_fbt_wal_register(&wal, leafbuf, false),
									leaftopparent))
		{
			_fbt_wal_abort(&wal);
			elog(ERROR, "half-dead block %u of index \"%s\" has no high key",
				 leafblkno, RelationGetRelationName(rel));
		}
		if (!_fbt_deleted_page_init(timg, targetlevel, leftsib, rightsib,
									safexid))
		{
			_fbt_wal_abort(&wal);
			elog(ERROR, "failed to add the deleted-page data to block %u of index \"%s\"",
				 target, RelationGetRelationName(rel));
		}
		START_CRIT_SECTION();
		_fbt_wal_finish(&wal);
		END_CRIT_SECTION();
	}

	if (BufferIsValid(lbuf))
		UnlockReleaseBuffer(lbuf);
	UnlockReleaseBuffer(rbuf);
	if (target != leafblkno)
		UnlockReleaseBuffer(buf);
	LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);

	/* a page the scan has yet to reach is counted when it gets there */
	if (target <= scanblkno)
		stats->pages_deleted++;
	stats->pages_newly_deleted++;
	return true;
}

/*
 * Delete the one leaf leafbuf (pinned and exclusively locked; pinned and
 * unlocked on return) if it is empty and deletable, or finish it if it is
 * half-dead, with the pages of its subtree; see _fbt_pagedel().  Returns
 * true with *rightsib and *rightsib_empty set when the leaf was unlinked.
 */
static bool
_fbt_pagedel_leaf(Relation rel, Buffer leafbuf, BlockNumber scanblkno,
				  IndexBulkDeleteResult *stats, BlockNumber *rightsib,
				  bool *rightsib_empty)
{
	Page		page = BufferGetPage(leafbuf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	BlockNumber target = BufferGetBlockNumber(leafbuf);
#ifdef USE_ASSERT_CHECKING
	int			unlinks = 0;
#endif

	*rightsib_empty = false;
	if (!P_ISHALFDEAD(opaque))
	{
		IndexTuple	hikey;
		BlockNumber leftsib;
		BlockNumber leafrightsib;
		FbtStack	stack;
		bool		marked;

		if (!_fbt_leaf_deletable(page, opaque))
		{
			LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
			return false;
		}
		hikey = CopyIndexTuple(_fbt_getitem(rel, leafbuf, P_HIKEY));
		_fbt_check_attrs(rel, leafbuf, hikey);
		leafrightsib = opaque->fbto_next;
		leftsib = opaque->fbto_prev;
		LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);

		if (_fbt_leftsib_splitflag(rel, leftsib, target))
		{
			pfree(hikey);
			return false;
		}
		stack = _fbt_find_parent_stack(rel, hikey);
		pfree(hikey);
		if (stack == NULL)
			return false;

		/* again under the lock: an insert may have come meanwhile */
		LockBuffer(leafbuf, BUFFER_LOCK_EXCLUSIVE);
		_fbt_checkpage(rel, leafbuf);
		if (!_fbt_leaf_deletable(page, opaque) ||
			opaque->fbto_next != leafrightsib)
		{
			LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
			_fbt_freestack(stack);
			return false;
		}
		marked = _fbt_mark_halfdead(rel, leafbuf, stack, leafrightsib);
		_fbt_freestack(stack);
		if (!marked)
		{
			LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
			return false;
		}
#ifdef USE_ASSERT_CHECKING
		if (fbt_debug_pagedel_halfdead_only)
		{
			/* as a crash between the steps leaves it (tests) */
			LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
			return false;
		}
#endif
	}

	/* unlink the subtree from the top down; the leaf goes last */
	while (P_ISHALFDEAD(opaque))
	{
#ifdef USE_ASSERT_CHECKING
		if (fbt_debug_pagedel_unlinks >= 0 &&
			unlinks++ >= fbt_debug_pagedel_unlinks)
			break;
#endif
		if (!_fbt_unlink_halfdead(rel, leafbuf, scanblkno, stats, rightsib,
								  rightsib_empty))
			return false;
		LockBuffer(leafbuf, BUFFER_LOCK_EXCLUSIVE);
		_fbt_checkpage(rel, leafbuf);
	}
	LockBuffer(leafbuf, BUFFER_LOCK_UNLOCK);
	return P_ISDELETED(opaque);
}

/*
 * _fbt_pagedel() -- delete the leaf leafbuf if it is empty (or finish its
 * deletion if it is half-dead, left so by a crash), with the internal
 * pages above it that have no other child; then, while the right sibling
 * of the leaf just deleted is empty, that one too (its downlink may have
 * been its parent's last until now: as nbtree's _bt_pagedel loop).
 *
 * rel: the index; leafbuf: a leaf VACUUM's physical-order scan has just
 * cleaned, pinned and exclusively (or cleanup-) locked; on return pinned
 * and unlocked, the caller releases it.  Right siblings are locked
 * exclusively only (they hold no entries, so no scan can be between
 * reading and returning them).  stats: VACUUM's; pages_deleted counts
 * each page deleted at or before leafbuf's block (pages further on are
 * counted when the scan reaches them), pages_newly_deleted every page
 * deleted.  A leaf that is not empty, rightmost, the root, part of an
 * unfinished split, or whose right sibling is half-dead is left alone, and
 * so is one whose subtree is the rightmost child of a parent that cannot
 * go too (_fbt_lock_subtree_parent()).  Takes the page locks the file
 * header lists, never more than four at once, leaf first, then upwards,
 * left to right within a level.  Algorithm: nbtree README "Page Deletion"
 * (_bt_pagedel, _bt_mark_page_halfdead, _bt_unlink_halfdead_page).
 * Errors: ERRCODE_INDEX_CORRUPTED when sibling links contradict each
 * other (a parent or left sibling that cannot be found is only logged,
 * as nbtree does), and those of WAL insertion.
 */
void
_fbt_pagedel(Relation rel, Buffer leafbuf, IndexBulkDeleteResult *stats)
{
	BlockNumber scanblkno = BufferGetBlockNumber(leafbuf);
	Buffer		buf = leafbuf;

	for (;;)
	{
		BlockNumber rightsib = P_NONE;
		bool		rightsib_empty;
		bool		deleted;

		deleted = _fbt_pagedel_leaf(rel, buf, scanblkno, stats, &rightsib,
									&rightsib_empty);
		if (buf != leafbuf)
			ReleaseBuffer(buf);
		if (!deleted || !rightsib_empty)
			break;
		CHECK_FOR_INTERRUPTS();
		buf = _fbt_getbuf(rel, rightsib, FBT_WRITE);
	}
}
