/*-------------------------------------------------------------------------
 *
 * fbtcheck.c
 *	  fastbtree_check(): verify the invariants of a fastbtree index, in the
 *	  manner of contrib/amcheck's verify_nbtree.c.
 *
 * The checker takes only the locks a reader takes: AccessShareLock on the
 * table and the index, and a share lock on one page at a time, long enough
 * to copy it; every check runs on the private copy.  It can therefore run
 * while the index is being written, and is written so that concurrent
 * splits never look like corruption: items only ever move right, a
 * downlink's key range only ever shrinks, and a sibling link that no longer
 * agrees is re-read before it is reported.
 *
 * Every line pointer and tuple is bounds-checked before it is used
 * ("careful" accessors), so a damaged page yields an error, never a crash.
 * Every violation raises ERRCODE_INDEX_CORRUPTED naming the index, with the
 * block and offset in the detail.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "lib/bloomfilter.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "fastbtree.h"

typedef struct FbtCheckState
{
	Relation	rel;
	Relation	heaprel;
	int			nkeyatts;
	int			natts;
	bool		heapallindexed;
	bool		allequalimage;	/* the metapage allows posting lists */
	bloom_filter *filter;
	Snapshot	snapshot;
	int64		heaptuplesindexed;
	BufferAccessStrategy strategy;	/* one BAS_BULKREAD ring for the run */
	MemoryContext pagecxt;		/* reset after each page */
} FbtCheckState;

/*
 * FbtDownlinkCursor: while one level is walked left to right, the position
 * reached in the downlinks of the level above, so that each page of the
 * walked level can be matched to its downlink in one pass (amcheck's
 * bt_child_highkey_check walks the two levels in step for the same
 * reason).  page is a private copy of block blkno; off is the next
 * downlink on it not yet matched; matchblk is the parent page that held
 * the last downlink matched, where a search for a later downlink can
 * start.
 */
typedef struct FbtDownlinkCursor
{
	uint32		parentlevel;
	BlockNumber blkno;			/* P_NONE once past the end of the level */
	Page		page;
	OffsetNumber off;
	BlockNumber matchblk;
} FbtDownlinkCursor;

#define corrupt(state, blk, off, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INDEX_CORRUPTED), \
			 errmsg("index \"%s\" is corrupted", \
					RelationGetRelationName((state)->rel)), \
			 errdetail_internal("Block %u, offset %u: %s", (blk), (off), \
								psprintf(__VA_ARGS__))))

/*
 * Check that a tuple's attributes lie within its length: natts attributes
 * are walked with the tuple descriptor, every length read only after the
 * bytes holding it were shown to be inside the tuple.
 */
static bool
_fbtc_tuple_fits(TupleDesc desc, IndexTuple itup, Size size, int natts)
{
	Size		off;
	char	   *tp = (char *) itup;
	bits8	   *bits = NULL;
	int			i;

	off = IndexInfoFindDataOffset(itup->t_info);
	if (off > size)
		return false;
	if (IndexTupleHasNulls(itup))
		bits = (bits8 *) (tp + sizeof(IndexTupleData));

	for (i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (bits && att_isnull(i, bits))
			continue;
		if (att->attlen > 0)
		{
			off = att_align_nominal(off, att->attalign);
			off += att->attlen;
		}
		else if (att->attlen == -1)
		{
			Size		len;

			/* a short varlena is not aligned: peek at its first byte */
			if (off >= size)
				return false;
			if (!VARATT_NOT_PAD_BYTE(tp + off))
				off = att_align_nominal(off, att->attalign);
			if (off >= size)
				return false;
			if (VARATT_IS_1B_E(tp + off))
				return false;	/* index tuples never hold toast pointers */
			if (VARATT_IS_1B(tp + off))
				len = VARSIZE_1B(tp + off);
			else
			{
				if (off + VARHDRSZ > size)
					return false;
				len = VARSIZE_4B(tp + off);
			}
			if (len < 1)
				return false;
			off += len;
		}
		else
		{
			Size		len;

			if (off >= size)
				return false;
			len = strnlen(tp + off, size - off);
			if (len == size - off)
				return false;
			off += len + 1;
		}
		if (off > size)
			return false;
	}
	return true;
}

/*
 * Read block blkno into a palloc'd private copy (in the page context),
 * holding a share lock only while copying, and check its structure: page
 * header bounds, special space, and every line pointer and tuple.
 */
static Page
_fbtc_getpage(FbtCheckState *state, BlockNumber blkno)
{
	Buffer		buf;
	Page		page;
	PageHeader	phdr;
	FbtPageOpaque opaque;
	OffsetNumber maxoff;
	OffsetNumber off;
	TupleDesc	desc = RelationGetDescr(state->rel);

	CHECK_FOR_INTERRUPTS();
	if (blkno >= RelationGetNumberOfBlocks(state->rel))
		corrupt(state, blkno, 0, "block is beyond the end of the index");
	page = MemoryContextAlloc(state->pagecxt, BLCKSZ);
	buf = ReadBufferExtended(state->rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
							 state->strategy);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	memcpy(page, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);

	phdr = (PageHeader) page;
	if (PageIsNew(page))
		corrupt(state, blkno, 0, "unexpected zero page");
	if (phdr->pd_lower < SizeOfPageHeaderData ||
		phdr->pd_lower > phdr->pd_upper ||
		phdr->pd_upper > phdr->pd_special ||
		phdr->pd_special != BLCKSZ - MAXALIGN(sizeof(FbtPageOpaqueData)))
		corrupt(state, blkno, 0,
				"invalid page header: lower %u, upper %u, special %u",
				phdr->pd_lower, phdr->pd_upper, phdr->pd_special);
	opaque = FbtPageGetOpaque(page);
	if (opaque->fbto_page_id != FBT_PAGE_ID)
		corrupt(state, blkno, 0, "page id 0x%04x is not fastbtree's",
				opaque->fbto_page_id);
	if (opaque->fbto_flags & FBTP_META)
		return page;
	if (P_ISDELETED(opaque))
	{
		/* one item: FbtDeletedPageData (fbtpagedel.c) */
		if (PageGetMaxOffsetNumber(page) != P_HIKEY ||
			ItemIdGetLength(PageGetItemId(page, P_HIKEY)) !=
			sizeof(FbtDeletedPageData) ||
			P_ISLEAF(opaque) != (opaque->fbto_level == 0))
			corrupt(state, blkno, 0, "deleted page has a malformed body");
		return page;
	}

	maxoff = PageGetMaxOffsetNumber(page);
	for (off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);
		IndexTuple	itup;
		int			natts;

		if (!ItemIdIsNormal(iid) && !ItemIdIsDead(iid))
			corrupt(state, blkno, off, "line pointer has flags %u",
					ItemIdGetFlags(iid));
		if (ItemIdGetOffset(iid) < phdr->pd_upper ||
			ItemIdGetOffset(iid) + ItemIdGetLength(iid) > phdr->pd_special ||
			ItemIdGetOffset(iid) != MAXALIGN(ItemIdGetOffset(iid)) ||
			ItemIdGetLength(iid) < sizeof(IndexTupleData))
			corrupt(state, blkno, off,
					"line pointer points outside the tuple space: offset %u, length %u",
					ItemIdGetOffset(iid), ItemIdGetLength(iid));
		itup = (IndexTuple) PageGetItem(page, iid);
		if (MAXALIGN(IndexTupleSize(itup)) != ItemIdGetLength(iid))
			corrupt(state, blkno, off,
					"tuple size %zu does not match line pointer length %u",
					IndexTupleSize(itup), ItemIdGetLength(iid));

		if (FbtTupleIsPivot(itup))
		{
			uint16		posid = ItemPointerGetOffsetNumberNoCheck(&itup->t_tid);

			natts = posid & FBT_OFFSET_MASK;
			if (posid & ~(FBT_OFFSET_MASK | FBT_PIVOT_HEAPTID) ||
				natts > state->nkeyatts ||
				((posid & FBT_PIVOT_HEAPTID) && natts != state->nkeyatts))
				corrupt(state, blkno, off,
						"invalid pivot tuple attribute count word 0x%04x",
						posid);
			if ((posid & FBT_PIVOT_HEAPTID) &&
				IndexTupleSize(itup) < sizeof(IndexTupleData) +
				sizeof(ItemPointerData))
				corrupt(state, blkno, off, "pivot tuple too short for a heap TID");
		}
		else if (FbtTupleIsPosting(itup))
		{
			uint32		postoff = FbtTupleGetPostingOffset(itup);
			int			n = FbtTupleGetNPosting(itup);
			int			j;

			natts = state->natts;
			if (!state->allequalimage)
				corrupt(state, blkno, off,
						"posting list tuple in an index whose metapage does not allow deduplication");
			if (!P_ISLEAF(opaque) || off < P_FIRSTDATAKEY(opaque))
				corrupt(state, blkno, off,
						"posting list tuple outside a leaf's data items");
			if (n < 2 || postoff < sizeof(IndexTupleData) ||
				postoff != MAXALIGN(postoff) ||
				MAXALIGN(postoff + n * sizeof(ItemPointerData)) !=
				IndexTupleSize(itup))
				corrupt(state, blkno, off,
						"invalid posting list: %d heap TIDs at offset %u in a tuple of %zu bytes",
						n, postoff, IndexTupleSize(itup));
			for (j = 0; j < n; j++)
			{
				ItemPointer tid = FbtTupleGetPostingN(itup, j);

				if (!ItemPointerIsValid(tid))
					corrupt(state, blkno, off,
							"posting list heap TID %d is invalid", j);
				if (j > 0 &&
					ItemPointerCompare(FbtTupleGetPostingN(itup, j - 1),
									   tid) >= 0)
					corrupt(state, blkno, off,
							"posting list heap TIDs are not in strictly ascending order at TID %d",
							j);
			}
		}
		else
			natts = state->natts;

		if (!_fbtc_tuple_fits(desc, itup,
							  FbtTupleIsPosting(itup) ?
							  FbtTupleGetPostingOffset(itup) :
							  IndexTupleSize(itup) -
							  ((FbtTupleIsPivot(itup) &&
								FbtTupleGetHeapTID(itup)) ?
							   sizeof(ItemPointerData) : 0),
							  natts))
			corrupt(state, blkno, off,
					"tuple attributes extend beyond the tuple's length %zu",
					IndexTupleSize(itup));
	}
	return page;
}

/*
 * Three-way comparison of two tuples (leaf or pivot) in index order,
 * treating attributes a pivot lost to truncation, and a missing heap TID,
 * as minus infinity.  a is the one expected on the left: a posting list
 * there counts by its last heap TID, b's by its first, so that a < b means
 * every entry of a sorts before every entry of b.
 */
static int
_fbtc_compare_tuples(FbtCheckState *state, IndexTuple a, IndexTuple b)
{
	Relation	rel = state->rel;
	TupleDesc	desc = RelationGetDescr(rel);
	int			na = Min(FbtTupleGetNAtts(a, rel), state->nkeyatts);
	int			nb = Min(FbtTupleGetNAtts(b, rel), state->nkeyatts);
	ItemPointer ta;
	ItemPointer tb;
	int			i;

	for (i = 0; i < Min(na, nb); i++)
	{
		int16		opt = rel->rd_indoption[i];
		bool		nullsfirst = (opt & INDOPTION_NULLS_FIRST) != 0;
		Datum		da,
					db;
		bool		nulla,
					nullb;
		int32		r;

		da = index_getattr(a, i + 1, desc, &nulla);
		db = index_getattr(b, i + 1, desc, &nullb);
		if (nulla && nullb)
			continue;
		if (nulla)
			return nullsfirst ? -1 : 1;
		if (nullb)
			return nullsfirst ? 1 : -1;
		r = DatumGetInt32(FunctionCall2Coll(index_getprocinfo(rel, i + 1,
															  FBTORDER_PROC),
											rel->rd_indcollation[i], da, db));
		if (opt & INDOPTION_DESC)
			INVERT_COMPARE_RESULT(r);
		if (r != 0)
			return r > 0 ? 1 : -1;
	}
	if (na != nb)
		return na < nb ? -1 : 1;

	ta = FbtTupleGetMaxHeapTID(a);
	tb = FbtTupleGetHeapTID(b);
	if (ta == NULL && tb == NULL)
		return 0;
	if (ta == NULL)
		return -1;
	if (tb == NULL)
		return 1;
	return ItemPointerCompare(ta, tb);
}

static IndexTuple
_fbtc_item(Page page, OffsetNumber off)
{
	return (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
}

/* Fingerprint a leaf tuple as index_form_tuple() makes it from plain values */
static void
_fbtc_fingerprint(FbtCheckState *state, IndexTuple itup, ItemPointer tid,
				  Datum *values, bool *isnull)
{
	TupleDesc	desc = RelationGetDescr(state->rel);
	Datum		normvals[INDEX_MAX_KEYS];
	IndexTuple	norm;
	int			i;

	for (i = 0; i < state->natts; i++)
	{
		normvals[i] = values[i];
		if (!isnull[i] && TupleDescAttr(desc, i)->attlen == -1 &&
			VARATT_IS_EXTENDED(DatumGetPointer(values[i])))
			normvals[i] = PointerGetDatum(PG_DETOAST_DATUM(values[i]));
	}
	norm = index_form_tuple(desc, normvals, isnull);
	norm->t_tid = *tid;
	if (itup != NULL)
		bloom_add_element(state->filter, (unsigned char *) norm,
						  IndexTupleSize(norm));
	else if (bloom_lacks_element(state->filter, (unsigned char *) norm,
								 IndexTupleSize(norm)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("heap tuple (%u,%u) from table \"%s\" lacks matching index tuple within index \"%s\"",
						ItemPointerGetBlockNumber(tid),
						ItemPointerGetOffsetNumber(tid),
						RelationGetRelationName(state->heaprel),
						RelationGetRelationName(state->rel))));
	pfree(norm);
}

/*
 * Check one page's items: pivot/leaf representation, strict order of the
 * data items, every item <= the high key, the minus-infinity first item of
 * internal pages; fingerprint leaf items for heapallindexed.
 */
static void
_fbtc_check_items(FbtCheckState *state, BlockNumber blkno, Page page)
{
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	IndexTuple	hikey = NULL;
	OffsetNumber off;
	bool		isleaf = P_ISLEAF(opaque);

	if (!P_RIGHTMOST(opaque))
	{
		if (maxoff < P_HIKEY)
			corrupt(state, blkno, P_HIKEY, "non-rightmost page has no high key");
		hikey = _fbtc_item(page, P_HIKEY);
		if (!FbtTupleIsPivot(hikey))
			corrupt(state, blkno, P_HIKEY, "high key is not a pivot tuple");
	}

	for (off = minoff; off <= maxoff; off++)
	{
		IndexTuple	itup = _fbtc_item(page, off);

		if (isleaf && FbtTupleIsPivot(itup))
			corrupt(state, blkno, off, "leaf data item is a pivot tuple");
		if (!isleaf)
		{
			int			natts = FbtTupleGetNAtts(itup, state->rel);

			if (!FbtTupleIsPivot(itup))
				corrupt(state, blkno, off, "internal page item is not a pivot tuple");
			if (off == minoff && natts != 0)
				corrupt(state, blkno, off,
						"first item of internal page has %d attributes instead of minus infinity",
						natts);
			if (off > minoff && natts == 0)
				corrupt(state, blkno, off, "minus infinity item is not first");
		}
		if (isleaf && !FbtTupleIsPosting(itup) &&
			!ItemPointerIsValid(&itup->t_tid))
			corrupt(state, blkno, off, "leaf item has an invalid heap TID");

		if (off > minoff &&
			(isleaf || off > OffsetNumberNext(minoff)) &&
			_fbtc_compare_tuples(state, _fbtc_item(page, OffsetNumberPrev(off)),
								 itup) >= 0)
			corrupt(state, blkno, off, "item is not greater than its predecessor");
		if (hikey != NULL && (isleaf || off > minoff) &&
			_fbtc_compare_tuples(state, itup, hikey) > 0)
			corrupt(state, blkno, off, "item is greater than the page's high key");

		if (isleaf && state->heapallindexed)
		{
			Datum		values[INDEX_MAX_KEYS];
			bool		isnull[INDEX_MAX_KEYS];

			index_deform_tuple(itup, RelationGetDescr(state->rel),
							   values, isnull);
			if (FbtTupleIsPosting(itup))
			{
				int			j;

				/* one fingerprint per heap TID, as a plain entry's */
				for (j = 0; j < FbtTupleGetNPosting(itup); j++)
					_fbtc_fingerprint(state, itup,
									  FbtTupleGetPostingN(itup, j),
									  values, isnull);
			}
			else
				_fbtc_fingerprint(state, itup, &itup->t_tid, values, isnull);
		}
	}
}

/*
 * Check that child (read now, after its parent) fits the key range its
 * downlink promises: every data item > lowkey (NULL: minus infinity) and
 * <= highkey (NULL: plus infinity), and its level is parent level - 1.
 */
static void
_fbtc_check_child(FbtCheckState *state, BlockNumber parentblk,
				  OffsetNumber downoff, uint32 parentlevel, BlockNumber child,
				  IndexTuple lowkey, IndexTuple highkey)
{
	Page		page = _fbtc_getpage(state, child);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	OffsetNumber off;
	OffsetNumber minoff = P_FIRSTDATAKEY(opaque);

	if ((opaque->fbto_flags & FBTP_META) ||
		opaque->fbto_level != parentlevel - 1)
		corrupt(state, parentblk, downoff,
				"downlink to block %u leads to a page of level %u, expected %u",
				child, opaque->fbto_level, parentlevel - 1);
	if (P_ISDELETED(opaque))
	{
		/* deleted after we read the parent: nothing of it to check */
		pfree(page);
		return;
	}

	for (off = minoff; off <= PageGetMaxOffsetNumber(page); off++)
	{
		IndexTuple	itup = _fbtc_item(page, off);

		/* an internal child's first item is minus infinity: no key */
		if (!P_ISLEAF(opaque) && off == minoff)
			continue;
		if (lowkey != NULL && _fbtc_compare_tuples(state, lowkey, itup) >= 0)
			corrupt(state, parentblk, downoff,
					"item %u of child block %u is not greater than its downlink's key",
					off, child);
		if (highkey != NULL && _fbtc_compare_tuples(state, itup, highkey) > 0)
			corrupt(state, parentblk, downoff,
					"item %u of child block %u is greater than the next key of its parent",
					off, child);
	}
	if (highkey != NULL && !P_RIGHTMOST(opaque) &&
		_fbtc_compare_tuples(state, _fbtc_item(page, P_HIKEY), highkey) > 0)
		corrupt(state, parentblk, downoff,
				"high key of child block %u is greater than the next key of its parent",
				child);
	pfree(page);
}

/*
 * Load parent block blkno into the downlink cursor, positioned at its first
 * downlink.  The page is read (and its structure checked) by
 * _fbtc_getpage(), then kept in the cursor's own buffer, which outlives the
 * per-page memory context of the walk below.
 */
static void
_fbtc_cursor_load(FbtCheckState *state, FbtDownlinkCursor *cur,
				  BlockNumber blkno)
{
	Page		page = _fbtc_getpage(state, blkno);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);

	if ((opaque->fbto_flags & FBTP_META) ||
		opaque->fbto_level != cur->parentlevel)
		corrupt(state, blkno, 0, "page has level %u, expected %u",
				opaque->fbto_level, cur->parentlevel);
	memcpy(cur->page, page, BLCKSZ);
	pfree(page);
	cur->blkno = blkno;
	cur->off = P_FIRSTDATAKEY(FbtPageGetOpaque(cur->page));
}

/*
 * The next downlink of the cursor not matched yet, stepping right over
 * exhausted parent pages; InvalidBlockNumber past the end of the level.
 * The cursor is not advanced.
 */
static BlockNumber
_fbtc_cursor_peek(FbtCheckState *state, FbtDownlinkCursor *cur)
{
	while (cur->blkno != P_NONE &&
		   cur->off > PageGetMaxOffsetNumber(cur->page))
	{
		BlockNumber next = FbtPageGetOpaque(cur->page)->fbto_next;

		if (next == P_NONE)
			cur->blkno = P_NONE;
		else
			_fbtc_cursor_load(state, cur, next);
	}
	if (cur->blkno == P_NONE)
		return InvalidBlockNumber;
	return FbtPivotGetDownLink(_fbtc_item(cur->page, cur->off));
}

/*
 * Search the parent level, reading it afresh from the page of the last
 * matched downlink rightwards to its end, for a downlink to child.  If one
 * is found the cursor is left just after it and true is returned.
 *
 * Why starting at matchblk suffices: downlinks are kept in key order and
 * only ever move right (a parent split moves the upper half of a page to a
 * new right sibling), so a downlink to a page right of one already matched
 * is on the page that held the matched one, or to its right.
 */
static bool
_fbtc_cursor_find(FbtCheckState *state, FbtDownlinkCursor *cur,
				  BlockNumber child)
{
	BlockNumber blkno = cur->matchblk;

	while (blkno != P_NONE)
	{
		OffsetNumber off;

		_fbtc_cursor_load(state, cur, blkno);
		for (off = cur->off; off <= PageGetMaxOffsetNumber(cur->page); off++)
		{
			if (FbtPivotGetDownLink(_fbtc_item(cur->page, off)) == child)
			{
				cur->off = OffsetNumberNext(off);
				cur->matchblk = blkno;
				return true;
			}
		}
		blkno = FbtPageGetOpaque(cur->page)->fbto_next;
	}
	return false;
}

/*
 * Whether internal page blkno, which has no downlink in the level above, is
 * part of a subtree that VACUUM is deleting (fbtpagedel.c): the subtree's
 * parent lost the downlink to its top page in the half-dead step, and the
 * pages are unlinked one by one afterwards, from the top down.  So blkno
 * has one downlink, and so has each page below it on that path, down to a
 * half-dead leaf; or a page on the path has been deleted since we read
 * the one above it (the deletion went on meanwhile).
 */
static bool
_fbtc_deletion_chain(FbtCheckState *state, BlockNumber blkno)
{
	BlockNumber cur = blkno;
	uint32		level = 0;
	bool		first = true;

	for (;;)
	{
		Page		page = _fbtc_getpage(state, cur);
		FbtPageOpaque opaque = FbtPageGetOpaque(page);
		bool		result;

		if ((opaque->fbto_flags & FBTP_META) ||
			(!first && opaque->fbto_level != level - 1))
			result = false;
		else if (P_ISDELETED(opaque))
			result = true;
		else if (P_ISLEAF(opaque))
			result = P_ISHALFDEAD(opaque);
		else if (P_RIGHTMOST(opaque) || P_ISHALFDEAD(opaque) ||
				 PageGetMaxOffsetNumber(page) != P_FIRSTDATAKEY(opaque))
			result = false;
		else
		{
			level = opaque->fbto_level;
			first = false;
			cur = FbtPivotGetDownLink(_fbtc_item(page,
												 P_FIRSTDATAKEY(opaque)));
			pfree(page);
			continue;
		}
		pfree(page);
		return result;
	}
}

/*
 * Check that page blkno of the level being walked has a downlink in the
 * level above, unless its left sibling (prevblk, whose copy had flags
 * prevflags and a right-link to blkno) is marked INCOMPLETE_SPLIT: then
 * the downlink is legitimately still to be inserted.
 *
 * The common case costs one comparison: the walk and the cursor advance
 * in step.  A page the cursor does not expect is either corruption or a
 * page a concurrent split made after the cursor's copy of its parent was
 * taken.  In the second case the split has completed (the left sibling's
 * copy shows no INCOMPLETE_SPLIT, and the flag is cleared in the same WAL
 * record, under the same page locks, that inserts the downlink), so the
 * downlink was in the parent level when prevblk was copied, and a fresh
 * search of the parent level finds it; only if that search fails is the
 * page reported.  Page deletion (fbtpagedel.c) only moves a downlink onto
 * the half-dead page's right sibling, which the fresh search also finds;
 * a half-dead page itself is not looked for, nor the internal pages of a
 * subtree being deleted (_fbtc_deletion_chain()).
 */
static void
_fbtc_check_downlink(FbtCheckState *state, FbtDownlinkCursor *cur,
					 BlockNumber blkno, BlockNumber prevblk, uint16 prevflags)
{
	if (_fbtc_cursor_peek(state, cur) == blkno)
	{
		cur->matchblk = cur->blkno;
		cur->off = OffsetNumberNext(cur->off);
		return;
	}
	if (prevblk != P_NONE && (prevflags & FBTP_INCOMPLETE_SPLIT))
		return;
	if (_fbtc_cursor_find(state, cur, blkno))
		return;
	if (_fbtc_deletion_chain(state, blkno))
		return;
	if (prevblk == P_NONE)
		corrupt(state, blkno, 0,
				"leftmost page of level %u has no downlink in level %u",
				cur->parentlevel - 1, cur->parentlevel);
	corrupt(state, blkno, 0,
			"page has no downlink in level %u, and its left sibling %u is not marked incomplete-split",
			cur->parentlevel, prevblk);
}

/*
 * Whether the left-link leftblk of a page on level, which disagrees with
 * the walk's previous page prevblk (P_NONE at the level's left end), is
 * explained by page deletion: leftblk and the pages left of it up to
 * prevblk are all pages without a downlink that a walk starting from the
 * parent level's downlinks can begin right of: half-dead leaves, the
 * internal pages of a subtree being deleted (_fbtc_deletion_chain()), or
 * pages deleted since.  amcheck accepts the same (a leftmost page whose
 * left siblings are all half-dead).
 */
static bool
_fbtc_left_is_ignored(FbtCheckState *state, BlockNumber leftblk,
					  BlockNumber prevblk, uint32 level)
{
	int			hops = 0;

	while (leftblk != P_NONE && leftblk != prevblk && hops++ < 100000)
	{
		Page		page = _fbtc_getpage(state, leftblk);
		FbtPageOpaque lopaque = FbtPageGetOpaque(page);
		bool		ignorable;
		BlockNumber further = lopaque->fbto_prev;

		if ((lopaque->fbto_flags & FBTP_META) || lopaque->fbto_level != level)
			ignorable = false;
		else if (P_ISDELETED(lopaque) || P_ISHALFDEAD(lopaque))
			ignorable = true;
		else
			ignorable = level > 0 && _fbtc_deletion_chain(state, leftblk);
		pfree(page);
		if (!ignorable)
			return false;
		if (further == prevblk)
			return true;
		leftblk = further;
		CHECK_FOR_INTERRUPTS();
	}
	return false;
}

/*
 * Walk one level left to right from leftmost.  parentleftmost is the
 * leftmost page of the level above, whose downlinks every page of this
 * level must have (see _fbtc_check_downlink), or P_NONE for the level the
 * metapage names as the root's.  Returns the leftmost page of the level
 * below (P_NONE for the leaf level).
 */
static BlockNumber
_fbtc_check_level(FbtCheckState *state, BlockNumber leftmost, uint32 level,
				  BlockNumber parentleftmost)
{
	BlockNumber prevblk = P_NONE;
	uint16		prevflags = 0;
	BlockNumber blkno = leftmost;
	BlockNumber nextleftmost = P_NONE;
	MemoryContext oldcxt;
	FbtDownlinkCursor cursor;

	if (parentleftmost != P_NONE)
	{
		cursor.parentlevel = level + 1;
		cursor.page = palloc(BLCKSZ);
		cursor.matchblk = parentleftmost;
		oldcxt = MemoryContextSwitchTo(state->pagecxt);
		_fbtc_cursor_load(state, &cursor, parentleftmost);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(state->pagecxt);
	}

	while (blkno != P_NONE)
	{
		Page		page;
		FbtPageOpaque opaque;
		OffsetNumber off;
		OffsetNumber minoff;
		OffsetNumber maxoff;

		oldcxt = MemoryContextSwitchTo(state->pagecxt);
		page = _fbtc_getpage(state, blkno);
		opaque = FbtPageGetOpaque(page);

		if (P_ISDELETED(opaque) && opaque->fbto_level == level &&
			(blkno != leftmost || parentleftmost != P_NONE))
		{
			/*
			 * Deleted after we read its left sibling's right-link (or the
			 * parent's downlink to the leftmost page): it is out of the
			 * chain now, and the walk goes on to its right sibling as if
			 * it had never been reached (fbtpagedel.c keeps its links).
			 */
			if (P_RIGHTMOST(opaque))
				corrupt(state, blkno, 0, "deleted page is rightmost");
			blkno = opaque->fbto_next;
			MemoryContextSwitchTo(oldcxt);
			MemoryContextReset(state->pagecxt);
			continue;
		}
		if ((opaque->fbto_flags & (FBTP_META | FBTP_DELETED)) ||
			(P_ISHALFDEAD(opaque) && level != 0))
			corrupt(state, blkno, 0, "page on level %u has flags 0x%04x",
					level, opaque->fbto_flags);
		if (P_ISHALFDEAD(opaque) &&
			(P_RIGHTMOST(opaque) ||
			 PageGetMaxOffsetNumber(page) >= P_FIRSTDATAKEY(opaque)))
			corrupt(state, blkno, 0,
					"half-dead page is rightmost or has items");
		if (opaque->fbto_level != level)
			corrupt(state, blkno, 0, "page has level %u, expected %u",
					opaque->fbto_level, level);
		if ((level == 0) != P_ISLEAF(opaque))
			corrupt(state, blkno, 0, "leaf flag disagrees with level %u", level);

		if (opaque->fbto_prev != prevblk &&
			!_fbtc_left_is_ignored(state, opaque->fbto_prev, prevblk, level))
		{
			/* the left page may have split after we read it: look again */
			Page		lpage;

			if (prevblk == P_NONE)
				corrupt(state, blkno, 0,
						"leftmost page of level %u has left-link %u",
						level, opaque->fbto_prev);
			lpage = _fbtc_getpage(state, prevblk);
			if (P_ISDELETED(FbtPageGetOpaque(lpage)))
			{
				/*
				 * prevblk (and maybe pages after it that the walk stepped
				 * over as deleted) was unlinked since the walk read it: the
				 * page's left-link now points left of it, and the links
				 * prevblk kept lead to pages deleted with it, never back
				 * here; nothing is left to compare with.
				 */
			}
			else if (FbtPageGetOpaque(lpage)->fbto_next != blkno)
			{
				blkno = FbtPageGetOpaque(lpage)->fbto_next;
				prevflags = FbtPageGetOpaque(lpage)->fbto_flags;
				MemoryContextSwitchTo(oldcxt);
				MemoryContextReset(state->pagecxt);
				continue;
			}
			else
				corrupt(state, blkno, 0,
						"left-link %u does not agree with the right-link of block %u",
						opaque->fbto_prev, prevblk);
		}
		if (blkno == leftmost && !P_LEFTMOST(opaque) &&
			!_fbtc_left_is_ignored(state, opaque->fbto_prev, P_NONE, level))
			corrupt(state, blkno, 0, "leftmost page of level %u has a left sibling",
					level);

		_fbtc_check_items(state, blkno, page);
		/* a half-dead page gave its downlink to its right sibling */
		if (parentleftmost != P_NONE && !P_ISHALFDEAD(opaque))
			_fbtc_check_downlink(state, &cursor, blkno, prevblk, prevflags);

		minoff = P_FIRSTDATAKEY(opaque);
		maxoff = PageGetMaxOffsetNumber(page);
		if (level > 0)
		{
			if (maxoff < minoff)
				corrupt(state, blkno, 0, "internal page has no downlinks");
			/* the first live page (the leftmost may be deleted since) */
			if (nextleftmost == P_NONE)
				nextleftmost = FbtPivotGetDownLink(_fbtc_item(page, minoff));
			for (off = minoff; off <= maxoff; off++)
			{
				IndexTuple	lowkey = off == minoff ? NULL : _fbtc_item(page, off);
				IndexTuple	highkey;

				if (off < maxoff)
					highkey = _fbtc_item(page, OffsetNumberNext(off));
				else
					highkey = P_RIGHTMOST(opaque) ? NULL :
						_fbtc_item(page, P_HIKEY);
				_fbtc_check_child(state, blkno, off, level,
								  FbtPivotGetDownLink(_fbtc_item(page, off)),
								  lowkey, highkey);
			}
		}

		prevblk = blkno;
		prevflags = opaque->fbto_flags;
		blkno = opaque->fbto_next;
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(state->pagecxt);
	}
	if (parentleftmost != P_NONE)
		pfree(cursor.page);
	return nextleftmost;
}

/* table_index_build_scan() callback: every heap tuple must be indexed */
static void
_fbtc_heap_callback(Relation index, ItemPointer tid, Datum *values,
					bool *isnull, bool tupleIsAlive, void *checkstate)
{
	FbtCheckState *state = (FbtCheckState *) checkstate;

	_fbtc_fingerprint(state, NULL, tid, values, isnull);
	state->heaptuplesindexed++;
}

FBT_FUNCTION_INFO_V1(fastbtree_check);

/*
 * fastbtree_check(index regclass, heapallindexed boolean) returns void.
 *
 * Verifies, level by level from the root: page structure (header bounds,
 * line pointers and tuples inside the page, page id); levels and leaf
 * flags; sibling links (left and right agree, ends are P_NONE); key order
 * within each page (strict, heap TID included); every item <= its page's
 * high key; pivot representation (minus infinity first on internal pages,
 * attribute counts); for every downlink, that the child is one level
 * down and its items lie within the key range the parent gives it; and
 * that every page below the root's level has a downlink, unless its left
 * sibling is marked INCOMPLETE_SPLIT, or it is a half-dead leaf or an
 * internal page of a subtree being deleted (amcheck's parent check, made safe
 * against concurrent splits instead of by a ShareLock; it costs one more
 * read of each internal page).  All index pages are read through one
 * BAS_BULKREAD buffer ring, so a check does not flush shared buffers.  With
 * heapallindexed, every heap tuple visible to a fresh MVCC snapshot (taken
 * before the index is read) has an index entry: leaf entries are
 * fingerprinted into a Bloom filter (lib/bloomfilter.h), then the table is
 * scanned, as amcheck does; duplicates of one entry fail the strict order
 * check, so each heap tuple has exactly one.
 *
 * Locks: AccessShareLock on the table, then the index; a share lock on one
 * page at a time.  Errors: 42809 for a relation that is not a fastbtree
 * index or is a partitioned one (it has no storage), XX002
 * (index_corrupted) for any violation.
 */
Datum
fastbtree_check(PG_FUNCTION_ARGS)
{
	Oid			indrelid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_GETARG_BOOL(1);
	Oid			heapid;
	FbtCheckState state;
	Page		metapage;
	FbtMetaPageData *metad;
	BlockNumber leftmost;
	uint32		level;

	heapid = IndexGetRelation(indrelid, true);
	if (!OidIsValid(heapid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", get_rel_name(indrelid) ?
						get_rel_name(indrelid) : "?")));

	memset(&state, 0, sizeof(state));
	state.heaprel = table_open(heapid, AccessShareLock);
	state.rel = index_open(indrelid, AccessShareLock);
	_fbt_check_index_relation(state.rel);
	if (!state.rel->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check index \"%s\"",
						RelationGetRelationName(state.rel)),
				 errdetail("Index is not valid.")));

	state.nkeyatts = IndexRelationGetNumberOfKeyAttributes(state.rel);
	state.natts = IndexRelationGetNumberOfAttributes(state.rel);
	state.heapallindexed = heapallindexed;
	state.strategy = GetAccessStrategy(BAS_BULKREAD);
	state.pagecxt = AllocSetContextCreate(CurrentMemoryContext,
										  "fastbtree_check page",
										  ALLOCSET_DEFAULT_SIZES);

	if (heapallindexed)
	{
		int64		total = Max((int64) state.heaprel->rd_rel->reltuples, 1024);

		/* the snapshot predates our reading the index */
		state.snapshot = RegisterSnapshot(GetTransactionSnapshot());
		if (IsolationUsesXactSnapshot() && state.rel->rd_index->indcheckxmin &&
			!TransactionIdPrecedes(HeapTupleHeaderGetXmin(state.rel->rd_indextuple->t_data),
								   state.snapshot->xmin))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("index \"%s\" cannot be verified using transaction snapshot",
							RelationGetRelationName(state.rel))));
		state.filter = bloom_create(total, maintenance_work_mem,
									(uint64) random());
	}

	metapage = _fbtc_getpage(&state, FBT_METAPAGE);
	metad = FbtPageGetMeta(metapage);
	if (!(FbtPageGetOpaque(metapage)->fbto_flags & FBTP_META) ||
		metad->fbtm_magic != FBT_MAGIC)
		corrupt(&state, FBT_METAPAGE, 0, "metapage has wrong magic number 0x%08x",
				metad->fbtm_magic);
	if (metad->fbtm_version != FBT_VERSION)
		corrupt(&state, FBT_METAPAGE, 0, "metapage has unsupported version %u",
				metad->fbtm_version);
	leftmost = metad->fbtm_root;
	level = metad->fbtm_level;
	state.allequalimage = metad->fbtm_allequalimage != 0;
	MemoryContextReset(state.pagecxt);

	if (leftmost != P_NONE)
	{
		BlockNumber parentleftmost = P_NONE;

		for (;;)
		{
			BlockNumber next = _fbtc_check_level(&state, leftmost, level,
												 parentleftmost);

			if (level == 0)
				break;
			parentleftmost = leftmost;
			leftmost = next;
			level--;
		}
	}

	if (heapallindexed)
	{
		IndexInfo  *indexinfo = BuildIndexInfo(state.rel);
		TableScanDesc scan;

		/* an MVCC scan: only tuples our snapshot sees must be indexed */
		indexinfo->ii_Concurrent = true;
		indexinfo->ii_Unique = false;
		indexinfo->ii_ExclusionOps = NULL;
		indexinfo->ii_ExclusionProcs = NULL;
		indexinfo->ii_ExclusionStrats = NULL;
		scan = table_beginscan_strat(state.heaprel, state.snapshot, 0, NULL,
									 true, true);
		table_index_build_scan(state.heaprel, state.rel, indexinfo, true,
							   false, _fbtc_heap_callback, &state, scan);
		bloom_free(state.filter);
		UnregisterSnapshot(state.snapshot);
	}

	MemoryContextDelete(state.pagecxt);
	FreeAccessStrategy(state.strategy);
	index_close(state.rel, AccessShareLock);
	table_close(state.heaprel, AccessShareLock);
	PG_RETURN_VOID();
}
