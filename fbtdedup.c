/*-------------------------------------------------------------------------
 *
 * fbtdedup.c
 *	  Deduplication for fastbtree: posting list tuples, the pass that
 *	  merges equal entries of a full leaf before it splits, and the
 *	  posting list edits of insertion and deletion.
 *
 * The design is nbtree's (nbtree README, "Notes about deduplication"):
 * entries whose key attributes are equal, bitwise, are merged lazily, only
 * when a leaf would otherwise split (and after dead entries could not be
 * deleted), into posting list tuples that hold the key once and the heap
 * TIDs in ascending order (fastbtree.h).  Bitwise equality is what makes
 * merging safe: a merged entry keeps one copy of the key, so the copies
 * must be indistinguishable to every reader, which only an operator class
 * whose "equalimage" support function says so guarantees (numeric, whose
 * equal values may differ in display scale, and nondeterministic
 * collations, must not be merged).  Whether every key column qualifies is
 * decided once, when the index is built, and kept in the metapage.
 *
 * An insertion whose heap TID falls inside a posting list's TID range
 * swaps it in ("posting list split", _fbt_swap_posting()): the posting
 * list keeps its size, the new TID takes its place in order, and the
 * entry inserted carries the posting list's old last TID instead.  So an
 * insertion always needs exactly the new entry's space, as without
 * posting lists.
 *
 * A leaf that holds nothing but one value, with more of it expected
 * (inserts of ever larger heap TIDs), is merged only as far as six
 * maximum-size posting lists; the rest is left for the split, which then
 * leaves the left page FBT_SINGLEVAL_FILLFACTOR full (fbtinsert.c), as
 * nbtree's "single value" strategy does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/itup.h"
#include "access/xloginsert.h"
#include "catalog/pg_type.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "fastbtree.h"
#include "fbtxlog.h"

/*
 * _fbt_allequalimage() -- may the index rel merge equal entries?
 *
 * True when it has no INCLUDE columns and the operator class of every key
 * column has an equalimage support function (proc 4) that returns true
 * for the column's type and collation.  Calls those functions (catalog
 * lookups); used when the metapage is first written (build, empty index).
 * With debugmessage, says which at DEBUG1 in nbtree's words (a build does,
 * as btbuild does through _bt_allequalimage(); not for INCLUDE indexes).
 */
bool
_fbt_allequalimage(Relation rel, bool debugmessage)
{
	bool		allequalimage = true;
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	int			i;

	if (nkeyatts != IndexRelationGetNumberOfAttributes(rel))
		return false;
	for (i = 0; i < nkeyatts; i++)
	{
		Oid			opcintype = rel->rd_opcintype[i];
		Oid			proc = get_opfamily_proc(rel->rd_opfamily[i], opcintype,
											 opcintype, FBTEQUALIMAGE_PROC);

		if (!OidIsValid(proc) ||
			!DatumGetBool(OidFunctionCall1Coll(proc, rel->rd_indcollation[i],
											   ObjectIdGetDatum(opcintype))))
		{
			allequalimage = false;
			break;
		}
	}
	if (debugmessage)
	{
		if (allequalimage)
			elog(DEBUG1, "index \"%s\" can safely use deduplication",
				 RelationGetRelationName(rel));
		else
			elog(DEBUG1, "index \"%s\" cannot use deduplication",
				 RelationGetRelationName(rel));
	}
	return allequalimage;
}

/*
 * _fbt_dedup_enabled() -- do insertions into rel form posting lists now?
 * Both the build's verdict (fbtm_allequalimage, from the cached metapage)
 * and the deduplicate_items reloption must say so.
 */
bool
_fbt_dedup_enabled(Relation rel)
{
	if (!FbtGetDeduplicateItems(rel))
		return false;
	return _fbt_getmeta(rel, false)->fbtm_allequalimage != 0;
}

/*
 * _fbt_first_image_diff() -- the first key attribute (1-based) whose value
 * differs bitwise between leaf tuples a and b (a NULL differs from a
 * value, not from a NULL), or nkeyatts + 1 when none does: nbtree's
 * _bt_keep_natts_fast().  No comparison proc is called.  Equal images are
 * equal for any operator class; for indexes whose operator classes make
 * the converse true too (_fbt_allequalimage) it is _fbt_keep_natts().
 * The caller has checked both tuples' attributes against their pages.
 */
int
_fbt_first_image_diff(Relation rel, IndexTuple a, IndexTuple b)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	int			i;

	for (i = 1; i <= nkeyatts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i - 1);
		bool		na,
					nb;
		Datum		da = index_getattr(a, i, desc, &na);
		Datum		db = index_getattr(b, i, desc, &nb);

		if (na != nb)
			return i;
		if (!na && !datum_image_eq(da, db, att->attbyval, att->attlen))
			return i;
	}
	return nkeyatts + 1;
}

/*
 * _fbt_keys_image_equal() -- are the key attributes of leaf tuples a and b
 * bitwise equal (NULLs equal to NULLs)?  Only meaningful for indexes whose
 * operator classes make that the same as equality (_fbt_allequalimage);
 * the caller has checked both tuples' attributes against their pages.
 */
bool
_fbt_keys_image_equal(Relation rel, IndexTuple a, IndexTuple b)
{
	Size		asz = IndexTupleSize(a);

	/*
	 * Two plain tuples (no posting list, not pivots) without NULLs or
	 * variable-width attributes, of an index without INCLUDE columns, have
	 * the same layout: their data areas hold the key attributes at the same
	 * offsets, so equal bytes mean equal images.  index_form_tuple() zeroes
	 * the alignment padding, so tuples of equal keys have equal bytes; a
	 * tuple whose padding were not zeroed would only be found unequal (not
	 * merged), never equal when its keys differ.  One memcmp() instead of
	 * an index_getattr() per attribute of each tuple (a build compares
	 * every tuple with the pending posting list's base).
	 */
	if (((a->t_info | b->t_info) &
		 (INDEX_NULL_MASK | INDEX_VAR_MASK | INDEX_AM_RESERVED_BIT)) == 0 &&
		asz == IndexTupleSize(b) &&
		IndexRelationGetNumberOfAttributes(rel) ==
		IndexRelationGetNumberOfKeyAttributes(rel))
	{
		Size		hoff = IndexInfoFindDataOffset(a->t_info);

		return memcmp((char *) a + hoff, (char *) b + hoff, asz - hoff) == 0;
	}
	return _fbt_first_image_diff(rel, a, b) >
		IndexRelationGetNumberOfKeyAttributes(rel);
}

/* Bytes of a leaf tuple's key part: the tuple without its TID array */
static inline Size
_fbt_key_part_size(IndexTuple itup)
{
	if (FbtTupleIsPosting(itup))
		return FbtTupleGetPostingOffset(itup);
	return IndexTupleSize(itup);
}

/*
 * _fbt_dedup_start_pending() -- begin a pending posting list at base, a
 * leaf data item (plain or posting, its attributes and TIDs checked by the
 * caller), found at baseoff (or InvalidOffsetNumber).  state->htids must
 * have room for maxpostingsize bytes.
 */
void
_fbt_dedup_start_pending(FbtDedupState *state, IndexTuple base,
						 OffsetNumber baseoff)
{
	state->base = base;
	state->baseoff = baseoff;
	state->basetupsize = _fbt_key_part_size(base);
	if (FbtTupleIsPosting(base))
	{
		state->nhtids = FbtTupleGetNPosting(base);
		memcpy(state->htids, FbtTupleGetPosting(base),
			   sizeof(ItemPointerData) * state->nhtids);
	}
	else
	{
		state->nhtids = 1;
		state->htids[0] = base->t_tid;
	}
	state->nitems = 1;
	state->phystupsize = MAXALIGN(IndexTupleSize(base)) + sizeof(ItemIdData);
}

/*
 * _fbt_dedup_save_htid() -- add the TIDs of itup, which follows the items
 * merged so far and has an equal key, to the pending posting list.
 * Returns false, saving nothing, if the posting list would then exceed
 * maxpostingsize; such a full list counts toward nmaxitems when it holds
 * more than 50 TIDs (nbtree's rule for telling full lists apart).
 */
bool
_fbt_dedup_save_htid(FbtDedupState *state, IndexTuple itup)
{
	int			n;
	ItemPointer htids;
	Size		mergedsize;

	if (FbtTupleIsPosting(itup))
	{
		n = FbtTupleGetNPosting(itup);
		htids = FbtTupleGetPosting(itup);
	}
	else
	{
		n = 1;
		htids = &itup->t_tid;
	}
	mergedsize = MAXALIGN(state->basetupsize +
						  (state->nhtids + n) * sizeof(ItemPointerData));
	if (mergedsize > state->maxpostingsize)
	{
		if (state->nhtids > 50)
			state->nmaxitems++;
		return false;
	}
	memcpy(state->htids + state->nhtids, htids, sizeof(ItemPointerData) * n);
	state->nhtids += n;
	state->nitems++;
	state->phystupsize += MAXALIGN(IndexTupleSize(itup)) + sizeof(ItemIdData);
	return true;
}

/*
 * _fbt_dedup_form_pending() -- the tuple standing for the pending items: a
 * new palloc'd posting list tuple if more than one item was merged, else
 * NULL (the base item stays as it is).  Counts the posting list formed in
 * nintervals.
 */
IndexTuple
_fbt_dedup_form_pending(FbtDedupState *state)
{
	if (state->nitems < 2)
		return NULL;
	state->nintervals++;
	return _fbt_form_posting(state->base, state->htids, state->nhtids);
}

/*
 * _fbt_form_posting() -- a leaf tuple with base's key and the nhtids heap
 * TIDs htids (ascending, no duplicates): a posting list tuple when
 * nhtids > 1, else a plain tuple.  base may be plain or a posting list.
 * Returns palloc'd memory; the size is at most MAXALIGN(key part +
 * nhtids * 6) bytes, which the caller keeps within a posting list's limit.
 */
IndexTuple
_fbt_form_posting(IndexTuple base, ItemPointer htids, int nhtids)
{
	Size		keysize = _fbt_key_part_size(base);
	Size		newsize;
	IndexTuple	itup;

	Assert(nhtids >= 1 && nhtids <= FBT_OFFSET_MASK);
	if (nhtids > 1)
		newsize = MAXALIGN(keysize + nhtids * sizeof(ItemPointerData));
	else
		newsize = keysize;
	Assert(newsize <= INDEX_SIZE_MASK);

	itup = palloc0(newsize);
	memcpy(itup, base, keysize);
	itup->t_info &= ~(INDEX_SIZE_MASK | INDEX_AM_RESERVED_BIT);
	itup->t_info |= newsize;
	if (nhtids > 1)
	{
		FbtTupleSetPosting(itup, nhtids, keysize);
		memcpy(FbtTupleGetPosting(itup), htids,
			   sizeof(ItemPointerData) * nhtids);
	}
	else
		itup->t_tid = htids[0];
	return itup;
}

/*
 * _fbt_posting_remove() -- posting without the TIDs whose remove[] entry is
 * true (one per TID, in order; at least one TID stays): a new palloc'd
 * posting list tuple, or a plain tuple if one TID is left.  Used by VACUUM
 * and by deletion before a split.
 */
IndexTuple
_fbt_posting_remove(IndexTuple posting, bool *remove)
{
	int			n = FbtTupleGetNPosting(posting);
	ItemPointer keep = palloc(sizeof(ItemPointerData) * n);
	int			nkeep = 0;
	int			i;
	IndexTuple	result;

	for (i = 0; i < n; i++)
		if (!remove[i])
			keep[nkeep++] = *FbtTupleGetPostingN(posting, i);
	Assert(nkeep > 0);
	result = _fbt_form_posting(posting, keep, nkeep);
	pfree(keep);
	return result;
}

/*
 * _fbt_swap_posting() -- a posting list split (see the file header).
 *
 * newitem: the plain tuple being inserted, whose heap TID belongs at
 * position postingoff (1 .. n - 1) of oposting's TIDs; oposting: the
 * posting list tuple on the page, with an equal key.  Returns a palloc'd
 * copy of oposting, the same size, with newitem's TID in place and its
 * own last TID gone; newitem (the caller's copy) then carries that last
 * TID, so that it belongs right after the posting list.
 */
IndexTuple
_fbt_swap_posting(IndexTuple newitem, IndexTuple oposting, int postingoff)
{
	int			n = FbtTupleGetNPosting(oposting);
	IndexTuple	nposting = CopyIndexTuple(oposting);
	ItemPointer tids = FbtTupleGetPosting(nposting);
	ItemPointerData last = tids[n - 1];

	Assert(postingoff > 0 && postingoff < n);
	memmove(tids + postingoff + 1, tids + postingoff,
			sizeof(ItemPointerData) * (n - 1 - postingoff));
	tids[postingoff] = newitem->t_tid;
	newitem->t_tid = last;
	return nposting;
}

/*
 * _fbt_posting_position() -- where scantid goes among the TIDs of the
 * posting list at offnum of the leaf buf (locked), which compares equal to
 * the insertion key: the index of the first TID greater than scantid, or
 * -1 if the posting list is marked LP_DEAD (the caller must delete it
 * first: a posting list split would carry the mark over to a live TID).
 * Raises ERRCODE_INDEX_CORRUPTED if scantid is already there (an index
 * entry for the same heap tuple twice) or the TID array is damaged.
 */
int
_fbt_posting_position(Relation rel, Buffer buf, OffsetNumber offnum,
					  ItemPointer scantid)
{
	Page		page = BufferGetPage(buf);
	IndexTuple	posting = _fbt_getitem(rel, buf, offnum);
	int			low = 0;
	int			high;

	if (!_fbt_posting_ok(posting))
		_fbt_corrupt_item(rel, buf, offnum,
						  "The posting list extends past the end of its tuple");
	if (ItemIdIsDead(PageGetItemId(page, offnum)))
		return -1;
	high = FbtTupleGetNPosting(posting);
	while (high > low)
	{
		int			mid = low + (high - low) / 2;
		int32		r = ItemPointerCompare(scantid,
										   FbtTupleGetPostingN(posting, mid));

		if (r == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("table tid from new index tuple (%u,%u) overlaps with invalid duplicate tuple at offset %u of block %u in index \"%s\"",
							ItemPointerGetBlockNumber(scantid),
							ItemPointerGetOffsetNumber(scantid),
							offnum, BufferGetBlockNumber(buf),
							RelationGetRelationName(rel))));
		if (r > 0)
			low = mid + 1;
		else
			high = mid;
	}
	if (low == 0 || low >= FbtTupleGetNPosting(posting))
		_fbt_corrupt_item(rel, buf, offnum,
						  "A heap TID compared inside a posting list's range lies outside it");
	return low;
}

/*
 * Single value strategy: the leaf holds nothing but newitem's value (its
 * first and last data items have newitem's key).
 */
static bool
_fbt_dedup_singleval(Relation rel, Buffer buf, OffsetNumber minoff,
					 OffsetNumber maxoff, IndexTuple newitem)
{
	IndexTuple	first = _fbt_getitem(rel, buf, minoff);
	IndexTuple	last = _fbt_getitem(rel, buf, maxoff);

	_fbt_check_attrs(rel, buf, first);
	_fbt_check_attrs(rel, buf, last);
	return _fbt_keys_image_equal(rel, first, newitem) &&
		_fbt_keys_image_equal(rel, last, newitem);
}

/*
 * _fbt_dedup_apply() -- the page edit of a deduplication pass: newpage
 * (BLCKSZ bytes, overwritten) becomes page with, for each of the
 * nintervals intervals (ascending, not overlapping), the interval's items
 * merged into one posting list tuple; every other item is copied as it is,
 * an LP_DEAD mark included, and FBTP_HAS_GARBAGE is set if any is so
 * marked.
 *
 * Run by the primary (_fbt_dedup_pass(), which chose the intervals; into
 * the generic WAL image, or in compact mode a temporary page copied over
 * the shared one) and by redo of XLOG_FBT_DEDUP, so the posting lists are
 * formed by the same code from the same TIDs on both.  page is not
 * changed.  Returns false if the intervals do not fit the page or an item
 * does not fit newpage; raises no error.  Allocates.
 */
bool
_fbt_dedup_apply(Page page, Page newpage, const FbtDedupInterval *intervals,
				 int nintervals)
{
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	FbtPageOpaque nopaque;
	OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	FbtDedupState state;
	bool		anydead = false;
	int			next = 0;

	_fbt_pageinit(newpage, opaque->fbto_level,
				  opaque->fbto_flags & ~FBTP_HAS_GARBAGE);
	nopaque = FbtPageGetOpaque(newpage);
	nopaque->fbto_prev = opaque->fbto_prev;
	nopaque->fbto_next = opaque->fbto_next;
	/* a VACUUM pass may still have to come back for this half of a split */
	nopaque->fbto_cycleid = opaque->fbto_cycleid;
	if (!P_RIGHTMOST(opaque))
	{
		ItemId		hiid = PageGetItemId(page, P_HIKEY);

		if (PageAddItem(newpage, PageGetItem(page, hiid),
						ItemIdGetLength(hiid), P_HIKEY, false,
						false) == InvalidOffsetNumber)
			return false;
	}

	/* no size limit: the pass that chose the intervals kept to it */
	memset(&state, 0, sizeof(state));
	state.maxpostingsize = BLCKSZ;
	state.htids = palloc(BLCKSZ);

	for (off = minoff; off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);
		IndexTuple	itup = (IndexTuple) PageGetItem(page, iid);
		OffsetNumber newoff;

		if (next < nintervals && intervals[next].baseoff == off)
		{
			int			nitems = intervals[next].nitems;
			IndexTuple	merged;
			int			k;

			if (nitems < 2 || off + nitems - 1 > maxoff)
				return false;
			_fbt_dedup_start_pending(&state, itup, off);
			for (k = 1; k < nitems; k++)
			{
				IndexTuple	next_itup;

				next_itup = (IndexTuple) PageGetItem(page,
													 PageGetItemId(page, off + k));
				if (!_fbt_dedup_save_htid(&state, next_itup))
					return false;
			}
			merged = _fbt_form_posting(state.base, state.htids, state.nhtids);
			if (PageAddItem(newpage, (Item) merged,
							MAXALIGN(IndexTupleSize(merged)),
							InvalidOffsetNumber, false,
							false) == InvalidOffsetNumber)
				return false;
			pfree(merged);
			off += nitems - 1;
			next++;
			continue;
		}
		newoff = PageAddItem(newpage, (Item) itup,
							 MAXALIGN(IndexTupleSize(itup)),
							 InvalidOffsetNumber, false, false);
		if (newoff == InvalidOffsetNumber)
			return false;
		if (ItemIdIsDead(iid))
		{
			ItemIdMarkDead(PageGetItemId(newpage, newoff));
			anydead = true;
		}
	}
	pfree(state.htids);
	if (next != nintervals)
		return false;
	if (anydead)
		nopaque->fbto_flags |= FBTP_HAS_GARBAGE;
	return true;
}

/*
 * _fbt_dedup_logged() -- compact mode: write the deduplicated leaf newpage
 * over buf (exclusively locked, and left so) and log XLOG_FBT_DEDUP with
 * its intervals.
 */
static void
_fbt_dedup_logged(Relation rel, Buffer buf, Page newpage,
				  FbtDedupInterval *intervals, int nintervals)
{
	XLogRecPtr	recptr = InvalidXLogRecPtr;
	uint32		version;

	START_CRIT_SECTION();
	version = _fbt_edit_begin(buf);
	_fbt_edit_replace(buf, newpage, version);
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
	{
		xl_fbt_dedup xlrec;

		xlrec.nintervals = (uint16) nintervals;
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfFbtDedup);
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		XLogRegisterBufData(0, (char *) intervals,
							nintervals * sizeof(FbtDedupInterval));
		recptr = XLogInsert(FBT_RMGR_ID, XLOG_FBT_DEDUP);
	}
	_fbt_edit_end(buf, recptr);
	END_CRIT_SECTION();
}

/*
 * _fbt_dedup_pass() -- merge the runs of equal entries of a full leaf into
 * posting lists, to make room for newitem (newitemsz bytes, MAXALIGN'd,
 * without its line pointer) without a split.
 *
 * buf: the leaf, pinned and exclusively locked, as it stays.  bottomup:
 * bottom-up deletion was just tried on this leaf (version churn): merge
 * everything, without the single value strategy (see the file header).
 * The caller has checked _fbt_dedup_enabled().  Entries marked LP_DEAD
 * are kept as they are, unmerged.  Writes the page in one WAL record if
 * any posting list was formed and returns true (the caller must then
 * search the page again); returns false, the page untouched, otherwise.
 * Algorithm: nbtree's _bt_dedup_pass (nbtree README, "Notes about
 * deduplication").  Errors: ERRCODE_INDEX_CORRUPTED for damaged items.
 */
bool
_fbt_dedup_pass(Relation rel, Buffer buf, IndexTuple newitem,
				Size newitemsz, bool bottomup)
{
	Page		page = BufferGetPage(buf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	FbtDedupState state;
	bool		deduplicate = true;
	bool		singleval = false;
	FbtDedupInterval *intervals;
	int			nintervals = 0;
	OffsetNumber off;
	Page		newpage;
	bool		ok;

	if (minoff >= maxoff)
		return false;
	newitemsz += sizeof(ItemIdData);

	memset(&state, 0, sizeof(state));
	state.maxpostingsize = FBT_MAX_POSTING_SIZE;
	state.htids = palloc(state.maxpostingsize);
	intervals = palloc(sizeof(FbtDedupInterval) * (maxoff - minoff + 1));

	if (!bottomup)
		singleval = _fbt_dedup_singleval(rel, buf, minoff, maxoff, newitem);

	/* choose the runs to merge; _fbt_dedup_apply() then merges them */
	for (off = minoff; off <= maxoff + 1; off++)
	{
		IndexTuple	itup = NULL;
		bool		dead = false;

		if (off <= maxoff)
		{
			itup = _fbt_getitem(rel, buf, off);
			/* the image comparison decodes every key attribute */
			_fbt_check_attrs(rel, buf, itup);
			if (FbtTupleIsPosting(itup) && !_fbt_posting_ok(itup))
				_fbt_corrupt_item(rel, buf, off,
								  "The posting list extends past the end of its tuple");
			dead = ItemIdIsDead(PageGetItemId(page, off));
		}

		if (itup != NULL && !dead && state.base != NULL && deduplicate &&
			_fbt_keys_image_equal(rel, state.base, itup) &&
			_fbt_dedup_save_htid(&state, itup))
			continue;

		/* the pending list ends here */
		if (state.base != NULL)
		{
			if (state.nitems > 1)
			{
				intervals[nintervals].baseoff = state.baseoff;
				intervals[nintervals++].nitems = (uint16) state.nitems;
			}
			state.base = NULL;

			if (singleval)
			{
				/*
				 * Five full posting lists so far: the sixth is made small
				 * enough to leave the split the room its single value
				 * strategy leaves free; after it, merge no more.
				 */
				if (state.nmaxitems == 5)
				{
					Size		leftfree = BLCKSZ - SizeOfPageHeaderData -
						MAXALIGN(sizeof(FbtPageOpaqueData)) -
						(newitemsz + MAXALIGN(sizeof(ItemPointerData)));
					Size		reduction = leftfree *
						(100 - FBT_SINGLEVAL_FILLFACTOR) / 100;

					state.maxpostingsize = state.maxpostingsize > reduction ?
						state.maxpostingsize - reduction : 0;
				}
				else if (state.nmaxitems >= 6)
				{
					deduplicate = false;
					singleval = false;
				}
			}
		}
		if (itup == NULL)
			break;
		if (!dead)
			_fbt_dedup_start_pending(&state, itup, off);
	}
	pfree(state.htids);

	if (nintervals == 0)
	{
		pfree(intervals);
		return false;
	}

	if (fbt_wal_compact)
	{
		newpage = palloc(BLCKSZ);
		ok = _fbt_dedup_apply(page, newpage, intervals, nintervals);
		if (ok)
			_fbt_dedup_logged(rel, buf, newpage, intervals, nintervals);
		pfree(newpage);
	}
	else
	{
		FbtWal		wal;

		/* rebuild the leaf in the WAL image from the unchanged shared page */
		_fbt_wal_start(&wal, rel);
		newpage = _fbt_wal_register(&wal, buf, false);
		ok = _fbt_dedup_apply(page, newpage, intervals, nintervals);
		if (ok)
		{
			START_CRIT_SECTION();
			_fbt_wal_finish(&wal);
			END_CRIT_SECTION();
		}
		else
			_fbt_wal_abort(&wal);
	}
	pfree(intervals);
	if (!ok)
		elog(ERROR, "deduplication failed to add an item to block %u of index \"%s\"",
			 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
	return true;
}
