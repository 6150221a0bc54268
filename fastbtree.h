/*-------------------------------------------------------------------------
 *
 * fastbtree.h
 *	  Internal header of the fastbtree index access method: the on-disk
 *	  format specification, the in-memory scan and insertion state, and the
 *	  prototypes of every module, grouped by file.
 *
 * The tree is a Lehman & Yao B-link tree laid out as nbtree's README
 * describes it: block 0 is a metapage, every other block is a standard page
 * whose special space is FbtPageOpaqueData.  Every page but the rightmost of
 * its level starts with a high key (offset 1); data items follow.
 *
 * Tuples.  Leaf data items ("non-pivot tuples") are plain IndexTuples made
 * by index_form_tuple(): every key and INCLUDE attribute, t_tid = heap TID.
 * The heap TID is the final tiebreaker key, so every leaf entry is unique.
 *
 * Posting list tuples (nbtree README, "Notes about deduplication") are leaf
 * data items standing for several entries with equal keys: the key
 * attributes once, then an array of heap TIDs in ascending order, with no
 * duplicates.  They carry INDEX_AM_RESERVED_BIT in t_info; t_tid's block
 * number is the byte offset of the array from the tuple's start (the
 * MAXALIGN'd size of the key part), and its offset number is
 * FBT_IS_POSTING plus the count of TIDs (at least 2).  A posting list
 * orders as its first TID against smaller ones and as its last against
 * larger ones; no other entry's TID falls between the two.  Only indexes
 * whose every key column's operator class says equal values are
 * bitwise equal (support proc 4, "equalimage") and that have no INCLUDE
 * columns get them (fbtm_allequalimage).
 *
 * Pivot tuples (every item on an internal page, and every high key) carry
 * INDEX_AM_RESERVED_BIT in t_info.  In a pivot, t_tid's block number is the
 * downlink (InvalidBlockNumber in a high key) and its offset number holds
 * the count of key attributes present (FBT_OFFSET_MASK) plus FBT_PIVOT_HEAPTID
 * when a heap TID tiebreaker is stored in the tuple's last
 * sizeof(ItemPointerData) bytes.  Attributes beyond that count were
 * removed by suffix truncation and compare as minus infinity.  The first
 * data item of an internal page has zero attributes: it is the "minus
 * infinity" downlink.
 *
 * Invariant (nbtree README, "Notes About Data Representation"): for a pivot
 * K separating pages L and R (L's high key, and the downlink to R in their
 * parent), every item in L is <= K and every item in R is > K.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTBTREE_H
#define FASTBTREE_H

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/itup.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/relscan.h"
#include "access/sdir.h"
#include "access/skey.h"
#include "catalog/pg_index.h"
#include "lib/stringinfo.h"
#include "executor/instrument.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/dsm.h"
#include "storage/shm_toc.h"
#include "utils/rel.h"
#include "utils/sortsupport.h"

#include "fbtcompat.h"

/* ----------------------------------------------------------------
 * Constants
 * ----------------------------------------------------------------
 */

#define FBT_METAPAGE		0		/* block number of the metapage */
#define FBT_MAGIC			0x0FB7EE01	/* metapage magic number */
#define FBT_VERSION			1		/* on-disk format version */
#define FBT_PAGE_ID			0xFB71	/* page-type id in each special space */

/* Strategy numbers: btree's, so the planner reads them as btree's */
#define FBTLessStrategyNumber			1
#define FBTLessEqualStrategyNumber		2
#define FBTEqualStrategyNumber			3
#define FBTGreaterEqualStrategyNumber	4
#define FBTGreaterStrategyNumber		5
#define FBTMaxStrategyNumber			5
/* the strategy that means the same with the operands swapped */
#define FbtCommuteStrategyNumber(s)	(FBTMaxStrategyNumber + 1 - (s))

/* Support procedure numbers: btree's */
#define FBTORDER_PROC		1		/* three-way comparison, required */
#define FBTSORTSUPPORT_PROC	2
#define FBTINRANGE_PROC		3
#define FBTEQUALIMAGE_PROC	4
#define FBTOPTIONS_PROC		5
#define FBTSKIPSUPPORT_PROC	6		/* since 18 (FBT_HAVE_SKIP_SUPPORT) */
#if FBT_HAVE_SKIP_SUPPORT
#define FBTNProcs			6
#else
#define FBTNProcs			5
#endif

/* Fillfactors, in percent, as btree's */
#define FBT_MIN_FILLFACTOR			10
#define FBT_DEFAULT_FILLFACTOR		90
#define FBT_NONLEAF_FILLFACTOR		70

/* Build sub-phases reported in pg_stat_progress_create_index */
#define FBT_PHASE_TABLESCAN		2
#define FBT_PHASE_SORT			3
#define FBT_PHASE_SORT_DEAD		4
#define FBT_PHASE_LEAF_LOAD		5

/* ----------------------------------------------------------------
 * Page format
 * ----------------------------------------------------------------
 */

/*
 * FbtPageOpaqueData: the special space of every page.
 *
 * fbto_prev, fbto_next: left and right siblings on the same level
 *		(P_NONE at the ends).  fbto_next is the Lehman & Yao right-link.
 * fbto_level: 0 for leaves, parent level = child level + 1.
 * fbto_version: version counter for optimistic readers (DESIGN.md §5).
 *		Odd while a writer changes the page, even otherwise; see
 *		_fbt_wal_register() for where it changes.
 * fbto_flags: FBTP_* below.
 * fbto_cycleid: the vacuum cycle id (nbtree README, "VACUUM") of the
 *		VACUUM pass that was running when the page last split, 0 if none:
 *		a pass that finds its own cycle id on a leaf whose right-link
 *		leads to a block it has already passed goes back there
 *		(fbtvacuum.c), since the split may have moved entries it has not
 *		seen to a recycled page behind it.  Not WAL-logged in compact mode
 *		(redo leaves 0, as nbtree's): no pass survives a crash or runs on
 *		a standby, and a stale id only costs a needless visit.
 * fbto_unused: always 0.
 * fbto_page_id: FBT_PAGE_ID, in the page's last two bytes so tools such
 *		as pg_filedump can tell fastbtree pages apart.
 */
typedef struct FbtPageOpaqueData
{
	BlockNumber fbto_prev;
	BlockNumber fbto_next;
	uint32		fbto_level;
	uint32		fbto_version;
	uint16		fbto_flags;
	uint16		fbto_cycleid;
	uint16		fbto_unused;
	uint16		fbto_page_id;
} FbtPageOpaqueData;

typedef FbtPageOpaqueData *FbtPageOpaque;

#define FBTP_LEAF			(1 << 0)	/* leaf page */
#define FBTP_ROOT			(1 << 1)	/* root page */
#define FBTP_DELETED		(1 << 2)	/* page deleted (fbtpagedel.c) */
#define FBTP_META			(1 << 3)	/* the metapage */
#define FBTP_HALF_DEAD		(1 << 4)	/* half-dead: no downlink, still linked */
#define FBTP_INCOMPLETE_SPLIT (1 << 5)	/* right sibling lacks a downlink */
#define FBTP_HAS_GARBAGE	(1 << 6)	/* set while any item is LP_DEAD */
#define FBTP_SPLIT_END		(1 << 7)	/* right half of a split whose right
										 * sibling has another cycle id:
										 * VACUUM need not go on to it */

#define P_NONE				0

#define FbtPageGetOpaque(page) \
	((FbtPageOpaque) PageGetSpecialPointer(page))

static inline bool
P_ISLEAF(FbtPageOpaque opaque)
{
	return (opaque->fbto_flags & FBTP_LEAF) != 0;
}

static inline bool
P_ISROOT(FbtPageOpaque opaque)
{
	return (opaque->fbto_flags & FBTP_ROOT) != 0;
}

static inline bool
P_RIGHTMOST(FbtPageOpaque opaque)
{
	return opaque->fbto_next == P_NONE;
}

static inline bool
P_LEFTMOST(FbtPageOpaque opaque)
{
	return opaque->fbto_prev == P_NONE;
}

/*
 * deleted: unlinked from its level, never reused yet (fbtpagedel.c); keeps
 * its level, its links, and FBTP_LEAF if it was a leaf
 */
static inline bool
P_ISDELETED(FbtPageOpaque opaque)
{
	return (opaque->fbto_flags & FBTP_DELETED) != 0;
}

static inline bool
P_ISHALFDEAD(FbtPageOpaque opaque)
{
	return (opaque->fbto_flags & FBTP_HALF_DEAD) != 0;
}

/*
 * A page every reader steps over to its right sibling, which has taken over
 * its key range: deleted (a leaf or an internal page) or half-dead (only
 * leaves are ever half-dead).  Nothing may compare with a high key or
 * follow an item of such a page: a half-dead leaf's high key carries the
 * top-parent link of its deletion (fbtpagedel.c), a deleted page has only
 * FbtDeletedPageData.
 */
static inline bool
P_IGNORE(FbtPageOpaque opaque)
{
	return (opaque->fbto_flags & (FBTP_DELETED | FBTP_HALF_DEAD)) != 0;
}

static inline bool
P_INCOMPLETE_SPLIT(FbtPageOpaque opaque)
{
	return (opaque->fbto_flags & FBTP_INCOMPLETE_SPLIT) != 0;
}

/*
 * A deleted page (FBTP_DELETED) holds one item at P_HIKEY, this: the next
 * full transaction id when it was deleted.  Once every snapshot is newer,
 * nothing can still hold a link to the page (nbtree README, "Page
 * Deletion"): the horizon recycling will wait for.
 */
typedef struct FbtDeletedPageData
{
	FullTransactionId safexid;
} FbtDeletedPageData;

/* Offset of the high key, and of the first data item */
#define P_HIKEY				((OffsetNumber) 1)
#define P_FIRSTKEY			((OffsetNumber) 2)

static inline OffsetNumber
P_FIRSTDATAKEY(FbtPageOpaque opaque)
{
	return P_RIGHTMOST(opaque) ? P_HIKEY : P_FIRSTKEY;
}

/*
 * The metapage (block 0).  Its contents follow the page header; it also has
 * a special space with FBTP_META set so that every block carries the page id.
 * Metapages written by earlier builds carry 8 more bytes after fbtm_level
 * (a statistics field that was never maintained), or end there; whatever
 * fbtm_vacuum_cycle reads from those bytes only makes splits stamp a cycle
 * id no pass looks for, a nonzero fbtm_num_delpages only makes the next
 * VACUUM's cleanup scan the index, and pd_lower is extended to cover both
 * when they are first written.  Builds before vacuum cycle ids wrote 1
 * into fbtm_vacuum_cycle while a pass ran, which now reads as "no pass
 * running, the last one had cycle id 1".
 */
typedef struct FbtMetaPageData
{
	uint32		fbtm_magic;		/* FBT_MAGIC */
	uint32		fbtm_version;	/* FBT_VERSION */
	BlockNumber fbtm_root;		/* current root, P_NONE if the index is
								 * empty */
	uint32		fbtm_level;		/* level of the root (0: root is a leaf) */
	uint32		fbtm_vacuum_cycle;	/* the cycle id of the last VACUUM
									 * pass started (low 16 bits), with
									 * FBT_VACUUM_ACTIVE from its start to
									 * its end (fbtvacuum.c) */
	BlockNumber fbtm_num_delpages;	/* deleted pages the last pass left
									 * not yet reusable (fbtvacuum.c) */
	uint32		fbtm_allequalimage;	/* 1: posting lists may be formed
									 * (fbtdedup.c), decided when the
									 * index was built; 0 in metapages
									 * older than deduplication */
} FbtMetaPageData;

/* fbtm_vacuum_cycle: the cycle id, and the flag of a pass running */
#define FBT_VACUUM_CYCLE_MASK	0xFFFF
#define FBT_VACUUM_ACTIVE		0x10000

#define FbtPageGetMeta(page) \
	((FbtMetaPageData *) PageGetContents(page))

/*
 * What a backend keeps in the index's relcache entry (rd_amcache): a copy of
 * the metapage (first, so that rd_amcache can be read as one), and
 * recent-buffer hints for internal pages (DESIGN.md §5): the buffer each
 * one was last found in, so that the next descent can pin it with
 * ReadRecentBuffer() instead of a buffer-mapping lookup.  A hint is only a
 * guess, checked by ReadRecentBuffer() against the buffer's tag; a stale
 * one costs a normal read and is replaced.  Slot = block % FBT_NHINTS.
 */
#define FBT_NHINTS			64

typedef struct FbtBufferHint
{
	BlockNumber blkno;			/* InvalidBlockNumber: empty slot */
	Buffer		buf;
	uint32		uses;			/* pins asked for through this hint */
} FbtBufferHint;

/* one use of a hint in this many pins through ReadBuffer() (fbtpage.c) */
#define FBT_HINT_REFRESH	16

/*
 * Leaf hints (README.design, "Pins"): block -> Buffer for leaves, slot =
 * block & (nleafhints - 1), used only by scans whose leaf pin is dropped
 * after reading (_fbt_search() with leafapin), which pin a hinted leaf
 * atomically.  Sized when the cache is built, from the index's length: the
 * power of two at or above it, within [FBT_MIN_LEAF_HINTS,
 * FBT_MAX_LEAF_HINTS] (8 bytes each).
 */
#define FBT_MIN_LEAF_HINTS	64
#define FBT_MAX_LEAF_HINTS	4096

typedef struct FbtLeafHint
{
	BlockNumber blkno;			/* InvalidBlockNumber: empty slot */
	Buffer		buf;
} FbtLeafHint;

typedef struct FbtAmCache
{
	FbtMetaPageData meta;
	FbtBufferHint hints[FBT_NHINTS];
	uint32		nleafhints;		/* 0 or a power of two */
	FbtLeafHint leafhints[FLEXIBLE_ARRAY_MEMBER];
} FbtAmCache;

/*
 * Scan-lifetime pins (DESIGN.md §5, README.design "Pins"): the internal pages
 * a scan's descents visited, kept pinned from the first descent until
 * amendscan, so that the descents of later rescans reach them with no
 * buffer-manager call at all.  The set owns one pin per entry; a descent
 * "borrows" an entry's buffer without pinning it again.  Leaves are never
 * kept.  A scan keeps at most FBT_MAX_SCAN_PINS, and a backend at most
 * _fbt_scan_pin_budget() in all its scans (see fbtpage.c).
 */
#define FBT_MAX_SCAN_PINS	16

typedef struct FbtScanPins
{
	int			npins;
	BlockNumber blkno[FBT_MAX_SCAN_PINS];
	Buffer		buf[FBT_MAX_SCAN_PINS];
	int16		apin[FBT_MAX_SCAN_PINS];	/* atomic pin slot (fbtpin.c), or
											 * FBT_APIN_NONE: a bufmgr pin */
} FbtScanPins;

/*
 * Per-backend counters of the descent, returned by fastbtree_stats() (see
 * fastbtree--1.1.sql for what each means).  Never reset; callers take
 * differences.
 */
typedef struct FbtStats
{
	uint64		descents;		/* root-to-leaf descents (_fbt_search) */
	uint64		opt_validated;	/* internal pages searched without a lock */
	uint64		opt_retried;	/* unlocked searches repeated: version moved */
	uint64		opt_fallback_odd;	/* locked: version odd when first read */
	uint64		opt_fallback_changed;	/* locked: moved on every try */
	uint64		opt_fallback_bounds;	/* locked: bounds check failed */
	uint64		opt_fallback_unsupported;	/* locked: a NULL or split to
											 * finish */
	uint64		locked_inner;	/* internal pages searched under the share
								 * lock: switch off, recovery, keys that are
								 * not fixed-width, and the fallbacks */
	uint64		versions_healed;	/* odd versions left by recovery made
									 * even */
	uint64		recent_hits;	/* pins through a recent-buffer hint */
	uint64		leaf_hint_hits;	/* leaves pinned atomically by hint */
	uint64		leaf_hint_misses;	/* leaf hints found stale */
	uint64		recent_misses;	/* hinted blocks whose hint was stale */
	uint64		scan_pin_reuses;	/* internal pages found in a scan's pins */
	uint64		scan_pins_taken;	/* pins kept for a scan's lifetime */
	uint64		prefetch_issued;	/* heap blocks prefetched (fbtprefetch.c) */
	uint64		prefetch_hits;	/* ... found in shared buffers already */
	uint64		prefetch_distance;	/* the last scan's distance, in items */
	uint64		prefetch_read_ahead;	/* leaves read ahead (fbtprefetch.c) */
} FbtStats;

extern FbtStats fbt_stats;

/*
 * The result of searching an internal page without its content lock
 * (_fbt_search_inner_unlocked).  Read from the page, so valid only once the
 * page's version is known to be unchanged.
 */
typedef struct FbtInnerStep
{
	uint16		flags;			/* fbto_flags */
	uint32		level;			/* fbto_level */
	BlockNumber prev;			/* fbto_prev */
	BlockNumber next;			/* fbto_next: the right-link */
	bool		moveright;		/* key is beyond the high key: go to next */
	OffsetNumber offnum;		/* else: the pivot whose downlink to follow */
	BlockNumber child;			/* and that downlink */
} FbtInnerStep;

typedef enum FbtUnlockedResult
{
	FBT_UNLOCKED_OK,			/* *step holds the answer (if validated) */
	FBT_UNLOCKED_BOUNDS,		/* an offset, length or flag out of bounds */
	FBT_UNLOCKED_UNSUPPORTED	/* needs a comparison done only under lock */
} FbtUnlockedResult;

/*
 * Pivot and posting list tuple representation (see the file header).
 */
#define FBT_OFFSET_MASK			0x0FFF	/* count of key attributes, or of
										 * a posting list's TIDs */
#define FBT_PIVOT_HEAPTID		0x1000	/* heap TID stored at tuple end */
#define FBT_IS_POSTING			0x2000	/* a posting list tuple */

static inline bool
FbtTupleIsPivot(IndexTuple itup)
{
	return (itup->t_info & INDEX_AM_RESERVED_BIT) != 0 &&
		(ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) &
		 FBT_IS_POSTING) == 0;
}

static inline bool
FbtTupleIsPosting(IndexTuple itup)
{
	return (itup->t_info & INDEX_AM_RESERVED_BIT) != 0 &&
		(ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) &
		 FBT_IS_POSTING) != 0;
}

/* Count of heap TIDs of a posting list tuple */
static inline int
FbtTupleGetNPosting(IndexTuple posting)
{
	return ItemPointerGetOffsetNumberNoCheck(&posting->t_tid) &
		FBT_OFFSET_MASK;
}

/* Byte offset of a posting list tuple's TID array */
static inline uint32
FbtTupleGetPostingOffset(IndexTuple posting)
{
	return ItemPointerGetBlockNumberNoCheck(&posting->t_tid);
}

static inline ItemPointer
FbtTupleGetPosting(IndexTuple posting)
{
	return (ItemPointer) ((char *) posting +
						  FbtTupleGetPostingOffset(posting));
}

static inline ItemPointer
FbtTupleGetPostingN(IndexTuple posting, int n)
{
	return FbtTupleGetPosting(posting) + n;
}

/* Mark itup a posting list tuple of nhtids TIDs starting at postingoff */
static inline void
FbtTupleSetPosting(IndexTuple itup, int nhtids, uint32 postingoff)
{
	itup->t_info |= INDEX_AM_RESERVED_BIT;
	ItemPointerSetBlockNumber(&itup->t_tid, postingoff);
	ItemPointerSetOffsetNumber(&itup->t_tid, FBT_IS_POSTING | nhtids);
}

/*
 * A posting list tuple's TID array lies within the tuple, which the caller
 * has bounds-checked (_fbt_itemid_ok): past the header, at least two TIDs.
 */
static inline bool
_fbt_posting_ok(IndexTuple posting)
{
	uint32		off = FbtTupleGetPostingOffset(posting);
	int			n = FbtTupleGetNPosting(posting);

	return off >= sizeof(IndexTupleData) && n >= 2 &&
		off + (Size) n * sizeof(ItemPointerData) <= IndexTupleSize(posting);
}

/* Number of attributes in a tuple: pivots store it, leaf items have all */
static inline int
FbtTupleGetNAtts(IndexTuple itup, Relation rel)
{
	if (FbtTupleIsPivot(itup))
		return ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) & FBT_OFFSET_MASK;
	return IndexRelationGetNumberOfAttributes(rel);
}

static inline BlockNumber
FbtPivotGetDownLink(IndexTuple pivot)
{
	return ItemPointerGetBlockNumberNoCheck(&pivot->t_tid);
}

static inline void
FbtPivotSetDownLink(IndexTuple pivot, BlockNumber blkno)
{
	ItemPointerSetBlockNumber(&pivot->t_tid, blkno);
}

/*
 * The heap TID of a leaf item (the first of a posting list), or of a pivot
 * that kept one (else NULL)
 */
static inline ItemPointer
FbtTupleGetHeapTID(IndexTuple itup)
{
	if (itup->t_info & INDEX_AM_RESERVED_BIT)
	{
		uint16		posid = ItemPointerGetOffsetNumberNoCheck(&itup->t_tid);

		if (posid & FBT_IS_POSTING)
			return FbtTupleGetPosting(itup);
		if ((posid & FBT_PIVOT_HEAPTID) == 0)
			return NULL;
		return (ItemPointer) ((char *) itup + IndexTupleSize(itup) -
							  sizeof(ItemPointerData));
	}
	return &itup->t_tid;
}

/* The largest heap TID of a leaf item: the last of a posting list */
static inline ItemPointer
FbtTupleGetMaxHeapTID(IndexTuple itup)
{
	if (FbtTupleIsPosting(itup))
		return FbtTupleGetPostingN(itup, FbtTupleGetNPosting(itup) - 1);
	return FbtTupleGetHeapTID(itup);
}

/* fbtpage.c: raise ERRCODE_INDEX_CORRUPTED for the item at offnum of buf */
extern FBT_NORETURN void _fbt_corrupt_item(Relation rel, Buffer buf,
													  OffsetNumber offnum,
													  const char *detail);

/*
 * Bounds checks for items of a locked page, whose header _fbt_checkpage()
 * has checked (pd_lower <= pd_upper <= pd_special, the special space ours).
 * An item must lie in [pd_upper, pd_special), hold at least a tuple header,
 * and the tuple's own length must fit in it.  Damaged pages then raise
 * ERRCODE_INDEX_CORRUPTED instead of sending a reader outside the page.
 * What these do not catch (flags of an unused line pointer with a length,
 * a tuple length below its header) can only make a reader read wrong bytes
 * of the page, never outside it.  A few comparisons on bytes the reader
 * loads anyway.
 */
static inline bool
_fbt_itemid_ok(Page page, ItemId iid)
{
	PageHeader	phdr = (PageHeader) page;
	uint32		off = ItemIdGetOffset(iid);
	uint32		len = ItemIdGetLength(iid);

	return off >= phdr->pd_upper &&
		len >= sizeof(IndexTupleData) &&
		off + len <= phdr->pd_special &&
		IndexTupleSize((IndexTuple) ((char *) page + off)) <= len;
}

/*
 * Largest line pointer offset whose tuple header and first 8 bytes of data
 * still lie within the page: what the binary search's machine comparison
 * reads (fbtcompare.c).
 */
#define FBT_MAX_FAST_OFFSET \
	(BLCKSZ - MAXALIGN(sizeof(IndexTupleData)) - sizeof(int64))

/*
 * A variable-length value (attlen -1: varlena; -2: cstring) starting at p
 * lies within a tuple ending at end, and its length word is at least its
 * own header (a 4-byte length of 0 to 3, or of a compressed value below
 * its header, would make readers compute a huge length).  Index tuples
 * never hold external TOAST pointers, so one is damage too.
 */
static inline bool
_fbt_value_ok(int16 attlen, const char *p, const char *end)
{
	if (p >= end)
		return false;
	if (attlen == -2)
		return memchr(p, '\0', end - p) != NULL;
	if (VARATT_IS_1B(p))
		return !VARATT_IS_1B_E(p) && p + VARSIZE_1B(p) <= end;
	if (p + VARHDRSZ > end)
		return false;
	if (VARSIZE_4B(p) < (VARATT_IS_4B_C(p) ? VARHDRSZ_COMPRESSED : VARHDRSZ))
		return false;
	return p + VARSIZE_4B(p) <= end;
}

/* offnum must be within the line pointer array of the page in buf */
static inline void
_fbt_check_offnum(Relation rel, Buffer buf, Page page, OffsetNumber offnum)
{
	if (unlikely(offnum < FirstOffsetNumber ||
				 offnum > PageGetMaxOffsetNumber(page)))
		_fbt_corrupt_item(rel, buf, offnum,
						  "The offset is past the line pointer array");
}

/*
 * _fbt_getitem() -- the tuple at offnum of the page in buf (pinned and
 * locked), after the bounds checks above (and _fbt_check_offnum(): offnum
 * within the line pointer array); ERRCODE_INDEX_CORRUPTED naming
 * the index and block if the offset or the item is out of bounds.
 */
static inline IndexTuple
_fbt_getitem(Relation rel, Buffer buf, OffsetNumber offnum)
{
	Page		page = BufferGetPage(buf);
	ItemId		iid;

	_fbt_check_offnum(rel, buf, page, offnum);
	iid = PageGetItemId(page, offnum);
	if (unlikely(!_fbt_itemid_ok(page, iid)))
		_fbt_corrupt_item(rel, buf, offnum, NULL);
	return (IndexTuple) PageGetItem(page, iid);
}

/*
 * _fbt_getitem_header() -- like _fbt_getitem(), for a caller that reads only
 * the tuple's header (t_tid: a downlink): the offset must be within the
 * line pointer array and the item's start within FBT_MAX_FAST_OFFSET, which
 * keeps the header inside the page whatever the lengths say.  The descent
 * reads downlinks this way; damage to the item then shows as a bad link,
 * which the child's checks report.
 */
static inline IndexTuple
_fbt_getitem_header(Relation rel, Buffer buf, OffsetNumber offnum)
{
	Page		page = BufferGetPage(buf);
	ItemId		iid;

	_fbt_check_offnum(rel, buf, page, offnum);
	iid = PageGetItemId(page, offnum);
	if (unlikely(ItemIdGetOffset(iid) > FBT_MAX_FAST_OFFSET))
		_fbt_corrupt_item(rel, buf, offnum, NULL);
	return (IndexTuple) PageGetItem(page, iid);
}

/*
 * A block number read from a page (downlink, sibling link, root) must not
 * be P_NEW (InvalidBlockNumber): ReadBuffer() would extend the index with a
 * zero page, without the extension lock.  Links past the end of the index
 * are ReadBuffer()'s own "could not read block" error.
 */
static inline void
_fbt_check_link(Relation rel, BlockNumber blkno)
{
	if (unlikely(blkno == P_NEW))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains a link to invalid block number %u",
						RelationGetRelationName(rel), blkno),
				 errhint("Please REINDEX it.")));
}

/*
 * Largest leaf tuple we accept, in bytes.  A leaf must hold a high key (a
 * pivot: at most a leaf tuple plus a heap TID) and two data items, so that
 * a split always succeeds; that bound gives btree's own limit, 2704 bytes
 * with 8kB pages.  Internal pages hold pivots of at most the same size plus
 * the 8-byte minus-infinity item, which fits too.
 */
#define FBT_MAX_ITEM_SIZE \
	MAXALIGN_DOWN((BLCKSZ - SizeOfPageHeaderData - \
				   MAXALIGN(sizeof(FbtPageOpaqueData)) - \
				   3 * sizeof(ItemIdData) - \
				   MAXALIGN(sizeof(ItemPointerData))) / 3)

/* ----------------------------------------------------------------
 * Relation options
 * ----------------------------------------------------------------
 */
typedef struct FbtOptions
{
	int32		varlena_header_;	/* varlena header (do not touch) */
	int			fillfactor;		/* leaf fillfactor, percent */
	/*
	 * btree's other two reloptions, with btree's bounds: the scale factor
	 * is accepted without effect (btree itself ignores it since 14);
	 * deduplicate_items switches posting lists on and off (fbtdedup.c)
	 */
	float8		vacuum_cleanup_index_scale_factor;
	bool		deduplicate_items;
} FbtOptions;

#define FbtGetFillFactor(rel) \
	((rel)->rd_options ? ((FbtOptions *) (rel)->rd_options)->fillfactor : \
	 FBT_DEFAULT_FILLFACTOR)
#define FbtGetDeduplicateItems(rel) \
	((rel)->rd_options ? \
	 ((FbtOptions *) (rel)->rd_options)->deduplicate_items : true)

/*
 * Most heap TIDs a leaf can hold: posting lists of TIDs filling the page
 * (the bound of a scan's items and of deletion's candidates per page)
 */
#define FBT_MAX_TIDS_PER_PAGE \
	((int) ((BLCKSZ - SizeOfPageHeaderData - \
			 MAXALIGN(sizeof(FbtPageOpaqueData))) / sizeof(ItemPointerData)))

/* Fill of the left page when a leaf full of one value splits, percent */
#define FBT_SINGLEVAL_FILLFACTOR	96

/*
 * Largest posting list tuple a deduplication pass forms, in bytes: half the
 * largest item, so that pages full of duplicates still split well (nbtree's
 * choice)
 */
#define FBT_MAX_POSTING_SIZE	Min(FBT_MAX_ITEM_SIZE / 2, INDEX_SIZE_MASK)

/*
 * Largest posting list tuple the build forms, in bytes: the slack a leaf
 * keeps at the default fillfactor (10%), less a line pointer, so that
 * pages full of one value still come out about fillfactor full (nbtree's
 * build uses the same bound)
 */
#define FBT_BUILD_MAX_POSTING_SIZE \
	(MAXALIGN_DOWN(BLCKSZ * (100 - FBT_DEFAULT_FILLFACTOR) / 100) - \
	 sizeof(ItemIdData))

/*
 * A deduplication in progress (fbtdedup.c): the pending posting list, equal
 * items merged so far, from the base tuple (its key) and its TIDs.
 */
typedef struct FbtDedupState
{
	Size		maxpostingsize; /* bytes, the posting list tuple's limit */
	IndexTuple	base;			/* first item of the pending list */
	OffsetNumber baseoff;		/* its page offset (passes only) */
	Size		basetupsize;	/* its key part: MAXALIGN'd, no TIDs */
	ItemPointer htids;			/* the pending TIDs, ascending */
	int			nhtids;
	int			nitems;			/* items merged into the pending list */
	Size		phystupsize;	/* their bytes on the page, with pointers */
	int			nintervals;		/* posting lists formed (passes only) */
	int			nmaxitems;		/* items at maxpostingsize (passes only) */
} FbtDedupState;

/*
 * A run of items of a leaf that a deduplication pass merges into one
 * posting list tuple: nitems (>= 2) items from page offset baseoff on.
 * Also the layout of XLOG_FBT_DEDUP's block data (fbtxlog.h).
 */
typedef struct FbtDedupInterval
{
	OffsetNumber baseoff;
	uint16		nitems;
} FbtDedupInterval;

/* ----------------------------------------------------------------
 * Insertion scankeys and descent stacks
 * ----------------------------------------------------------------
 */

/* Index-order flags kept in sk_flags of insertion and search scankeys */
#define FBT_SK_DESC			(INDOPTION_DESC << 24)
#define FBT_SK_NULLS_FIRST	(INDOPTION_NULLS_FIRST << 24)

/*
 * FbtScanInsertData: an insertion scankey, used to locate a position in the
 * tree.  scankeys[i].sk_func is the opfamily's three-way comparison
 * (support proc 1) for (index column type, argument type); sk_flags carries
 * FBT_SK_DESC / FBT_SK_NULLS_FIRST and SK_ISNULL.
 *
 * nextkey = false locates the first item >= the key, true the first item
 * > the key.  scantid, when set, is the heap TID tiebreaker (keysz must then
 * be the number of key attributes).
 */
typedef enum FbtCmpKind
{
	FBT_CMP_FMGR = 0,			/* call support proc 1 */
	FBT_CMP_INT2,				/* int2 column, any integer argument */
	FBT_CMP_INT4,				/* int4 or date column */
	FBT_CMP_INT8,				/* int8, time, timestamp[tz] column */
	FBT_CMP_OID,				/* oid column */
	FBT_CMP_FLOAT4,				/* float4 column, float4/8 argument */
	FBT_CMP_FLOAT8,				/* float8 column, float4/8 argument */
	FBT_CMP_TEXT_C,				/* text under the "C" collation */
	FBT_CMP_SORTSUPPORT			/* the type's SortSupport comparator */
} FbtCmpKind;

typedef struct FbtScanInsertData
{
	bool		nextkey;
	ItemPointer scantid;
	int			keysz;
	ScanKeyData scankeys[INDEX_MAX_KEYS];
	/* set by _fbt_prepare_compare(): how each column compares */
	uint8		cmpkind[INDEX_MAX_KEYS];	/* FbtCmpKind */
	int64		iarg[INDEX_MAX_KEYS];	/* integer and oid arguments */
	double		farg[INDEX_MAX_KEYS];	/* float arguments */
	const char *targ[INDEX_MAX_KEYS];	/* "C" text argument bytes */
	Size		targlen[INDEX_MAX_KEYS];
	void	   *tcopy[INDEX_MAX_KEYS];	/* detoasted copy of it, or NULL */
	SortSupport ssup[INDEX_MAX_KEYS];	/* FBT_CMP_SORTSUPPORT comparators */
	/*
	 * pivotsearch: the key is itself a pivot (a high key), searched for to
	 * find the page it bounds (page deletion): truncated attributes and a
	 * missing heap TID are minus infinity in the key too, so a pivot equal
	 * to it compares equal instead of "go right".  Locked searches only.
	 */
	bool		pivotsearch;
	/* set by _fbt_prepare_unlocked(): where each key column's value sits */
	bool		unlocked_ok;	/* every column machine kind, fixed width */
	uint16		attoff[INDEX_MAX_KEYS];	/* offset from the tuple's start in
										 * a tuple without NULLs */
} FbtScanInsertData;

typedef FbtScanInsertData *FbtScanInsert;

/*
 * A descent stack entry: the parent page and the offset of the downlink we
 * followed.  Used to find the parent again when a split must insert a new
 * downlink.
 */
typedef struct FbtStackData
{
	BlockNumber fbts_blkno;
	OffsetNumber fbts_offset;
	struct FbtStackData *fbts_parent;
} FbtStackData;

typedef FbtStackData *FbtStack;

/* Lock modes for _fbt_getbuf() */
#define FBT_READ			BUFFER_LOCK_SHARE
#define FBT_WRITE			BUFFER_LOCK_EXCLUSIVE

/* ----------------------------------------------------------------
 * Scan state
 * ----------------------------------------------------------------
 */

/* One matching item of the current leaf page, copied to backend memory */
typedef struct FbtScanPosItem
{
	ItemPointerData heapTid;	/* TID of the heap tuple */
	OffsetNumber indexOffset;	/* offset on the leaf page */
	LocationIndex tupleOffset;	/* offset in currTuples, index-only scans */
} FbtScanPosItem;

/*
 * FbtScanPosData: the leaf page a scan is positioned on.  For index-only
 * scans and non-MVCC snapshots, buf stays pinned (never locked) while the
 * executor visits the heap for the items, so that VACUUM, which takes a
 * cleanup lock on every leaf, cannot remove and recycle a heap TID we are
 * about to return.  Plain MVCC scans drop the pin, as nbtree does: a TID
 * recycled meanwhile holds a tuple our snapshot cannot see; lsn then
 * tells _fbt_killitems() whether the page changed.
 */
typedef struct FbtScanPosData
{
	Buffer		buf;			/* pinned leaf page, or InvalidBuffer */
	BlockNumber currPage;		/* block of the page the items came from */
	XLogRecPtr	lsn;			/* its LSN when we read it */
	BlockNumber nextPage;		/* its right-link when we read it */
	BlockNumber prevPage;		/* its left-link when we read it */
	bool		moreLeft;		/* more matches may be to the left */
	bool		moreRight;		/* more matches may be to the right */
	int			nextTupleOffset;	/* next free byte in currTuples */
	int			firstItem;		/* first valid index in items[] */
	int			lastItem;		/* last valid index in items[] */
	int			itemIndex;		/* current index in items[] */
	ScanDirection dir;			/* direction the page was read in */
	bool		needPrimScan;	/* array mode: the scan goes on with a new
								 * descent, not at a sibling (fbtarray.c) */
	FbtScanPosItem items[FBT_MAX_TIDS_PER_PAGE];
} FbtScanPosData;

typedef FbtScanPosData *FbtScanPos;

/* Heap prefetch state of a scan (fbtprefetch.c) */
typedef struct FbtPrefetchState
{
	bool		decided;		/* enabled is set (once per scan) */
	bool		enabled;		/* the scan prefetches */
	int			maxDistance;	/* items ahead at most; -1: not yet looked
								 * up */
	int			distance;		/* items ahead kept prefetched; 0: probing */
	int			ahead;			/* the farthest item of currPos considered */
	bool		pageStart;		/* currPos was just read: nothing handed
								 * out from it yet */
	bool		handedOut;		/* an item was handed out since the rescan */
	BlockNumber lastBlock;		/* heap block prefetched or skipped last */
	int			probeEvery;		/* items between probes at distance 0 */
	int			probeIn;		/* items left until the next probe */
	Buffer		vmbuffer;		/* index-only scans: visibility map page */
	/* read-ahead into the sibling leaf the scan steps onto next */
	bool		peeked;			/* the sibling of currPos has been read */
	BlockNumber peekBlock;		/* that sibling, or InvalidBlockNumber */
	XLogRecPtr	peekLsn;		/* its LSN when read ahead */
	int			peekCount;		/* heap TIDs of its first matches in peek */
	int			peekUsed;		/* ... of which prefetched */
	int			peekCap;		/* room in peek (maxDistance), 0: none yet */
	ItemPointerData *peek;		/* in scan order */
} FbtPrefetchState;

#define FbtScanPosIsValid(pos) BlockNumberIsValid((pos).currPage)

/*
 * One = ANY(array) scan key, expanded into its sorted distinct elements, or
 * a skip array (fbtarray.c): the values of a column without an equality
 * key, found in the index as the scan goes, within the column's range
 * keys.  A skip array's current element is a value (skip_state
 * FBT_SKIP_VALUE, possibly NULL), the start of its range in the scan
 * direction (FBT_SKIP_START) or "just past skip_value" in the scan
 * direction (FBT_SKIP_AFTER).
 */
typedef struct FbtArrayKeyInfo
{
	int			scan_key;		/* index into so->keyData */
	int			cur_elem;		/* index of the current element */
	int			mark_elem;		/* element at ammarkpos time */
	int			num_elems;		/* count of elements, after dedup */
	Datum	   *elem_values;	/* sorted distinct elements, index order */
	/* skip arrays only */
	bool		skip;
	int8		skip_state;		/* FBT_SKIP_* */
	bool		skip_null;		/* the value is NULL */
	int8		skip_incr;		/* integer width with a next-value step, or 0 */
#if FBT_HAVE_SKIP_SUPPORT
	SkipSupport skip_support;	/* the opclass's next and previous value, for
								 * other types (NULL: none) */
	Relation	skip_rel;		/* the index, for skip_support's calls */
#endif
	int16		skip_typlen;
	bool		skip_typbyval;
	Datum		skip_value;
	char	   *skip_buf;		/* the value's copy (by-reference types) */
	Size		skip_bufsize;
	int8		mark_state;		/* the same at ammarkpos time */
	bool		mark_null;
	Datum		mark_value;
	char	   *mark_buf;
	Size		mark_bufsize;
} FbtArrayKeyInfo;

#define FBT_SKIP_VALUE	0
#define FBT_SKIP_START	1
#define FBT_SKIP_AFTER	2

/* How a tuple stands against the array keys' current elements (fbtarray.c) */
typedef enum FbtArrayResult
{
	FBT_ARR_MATCH,				/* equal on every required column */
	FBT_ARR_BEFORE,				/* before the elements in scan direction */
	FBT_ARR_AFTER,				/* past them (only when not advancing) */
	FBT_ARR_TRUNCATED,			/* a pivot truncated before it could tell */
	FBT_ARR_END					/* past every element: the scan is over */
} FbtArrayResult;

/* Where a preprocessed search key may end the scan (see fbtutils.c) */
#define FBT_SK_REQFWD		0x00010000	/* failure ends a forward scan */
#define FBT_SK_REQBKWD		0x00020000	/* failure ends a backward scan */
#define FBT_SK_ARRAY_FILTER	0x00040000	/* = ANY key tested by membership */
#define FBT_SK_SKIP			0x00080000	/* a skip array's key (fbtarray.c) */

typedef struct FbtScanOpaqueData
{
	/* preprocessed search keys (fbtutils.c: _fbt_preprocess_keys) */
	bool		keysPrepared;	/* keyData etc. are filled in */
	bool		qual_ok;		/* false if the quals can never match */
	int			numberOfKeys;
	ScanKey		keyData;
	/* per key: its index-order strategy (DESC columns flipped) */
	StrategyNumber *keyStrategy;
	/*
	 * per key: comparison proc of (column type, argument type), for
	 * positioning
	 */
	FmgrInfo   *keyOrderProc;
	/* per key: machine comparison for _fbt_checkkeys (fbtcompare.c) */
	uint8	   *keyCmpKind;		/* FbtCmpKind */
	uint8	   *keyArgWidth;	/* bytes of the machine argument */
	bool		keysFastCompare;	/* fastbtree.fast_compare when classified */
	int64	   *keyIarg;
	double	   *keyFarg;
	/* per key: SortSupport for same-type keys without a machine comparison */
	SortSupportData *keySortSupport;
	bool	   *keyHasSortSupport;
	MemoryContext sortContext;	/* their state; reset at full preprocessing */

	/*
	 * = ANY(array) keys: arrayKeys[0 .. numArrayKeys - 1] are required keys
	 * whose elements drive one primitive scan each; the numFilterArrays
	 * after them are on columns past a column without an equality key and
	 * are tested by membership on each tuple (FBT_SK_ARRAY_FILTER).
	 */
	int			numArrayKeys;
	int			numFilterArrays;
	FbtArrayKeyInfo *arrayKeys;
	MemoryContext arrayContext;

	/*
	 * Array mode (fbtarray.c): the required arrays, skip arrays included,
	 * are advanced by the tuples read, in one pass along the leaves, with
	 * a new descent only when the next elements lie beyond the page.  The
	 * required columns are 0 .. nreqcols - 1; colKeys[colKeyStart[c] ..
	 * colKeyStart[c + 1] - 1] are the keys on column c other than its
	 * array, colArray[c] the index of its array in arrayKeys or -1;
	 * filterKeys are the keys on later columns, tested on matches only.
	 */
	bool		arrayMode;
	bool		skipOnly;		/* every array is a skip array */
	bool		needPrimScan;	/* the page read last asks for a descent */
	bool		arraysAdvanced; /* an element moved since the last descent */
	bool		targetMoved;	/* ... since the last look at the page's end */
	int			nreqcols;
	int16		colKeyStart[INDEX_MAX_KEYS + 1];
	int8		colArray[INDEX_MAX_KEYS];
	int16	   *colKeys;
	int16	   *filterKeys;
	int			numFilterKeys;

	/*
	 * Row comparison keys: per key, the copy of its members (NULL for
	 * other keys) and their count; allocated at the first row key, kept
	 * across rescans (_fbt_prepare_rowcompare)
	 */
	ScanKey    *rowMembers;
	int		   *rowNMembers;

	/* kill_prior_tuple: items of currPos the executor found dead */
	int		   *killedItems;	/* indexes into currPos.items[] */
	int			numKilled;

	/* the backend's kept scan state (fbtbeginscan), not palloc'd */
	bool		kept;
	/*
	 * The memory context of the scan (CurrentMemoryContext at
	 * ambeginscan): whatever the scan allocates for its lifetime goes
	 * there, never into the kept state's TopMemoryContext
	 */
	MemoryContext scanCxt;
	/*
	 * The atomic pin slot of currPos.buf while _fbt_start_at() reads a leaf
	 * pinned through its leaf hint, else FBT_APIN_NONE; still set only if
	 * an error left the read (the slot then went with the resource owner)
	 */
	int			currApin;
	/* check every attribute's bounds in leaf items read (fbtrescan) */
	bool		checkTuples;
	bool		hasVarlenAtts;	/* the index has varlena or cstring columns */
	int			fixedExtent;	/* bytes from a tuple's start past which no
								 * fixed-width attribute of a tuple without
								 * NULLs reaches */

	/* index-only scans: tuples of the current page */
	char	   *currTuples;
	char	   *markTuples;

	/* internal pages kept pinned for the scan's lifetime */
	FbtScanPins pins;

	/* position state */
	FbtScanPosData currPos;
	FbtScanPosData *markPos;	/* a mark copied off its page; allocated at
								 * the first such copy (merge joins only) */
	int			markItemIndex;	/* itemIndex of a mark on currPos, or -1 */

	/*
	 * Parallel scans with one descent per element combination: the
	 * primitive scans this participant has begun (fbtscan.c, "Parallel
	 * scans")
	 */
	int			primScanGen;

	FbtPrefetchState prefetch;	/* heap prefetch (fbtprefetch.c) */
} FbtScanOpaqueData;

typedef FbtScanOpaqueData *FbtScanOpaque;

/* ----------------------------------------------------------------
 * Prototypes
 * ----------------------------------------------------------------
 */

/* fastbtree.c: AM handler and callbacks without a module of their own */
extern bytea *fbtoptions(Datum reloptions, bool validate);
extern bool fbtproperty(Oid index_oid, int attno, IndexAMProperty prop,
						const char *propname, bool *res, bool *isnull);
extern char *fbtbuildphasename(int64 phasenum);
extern void fbtcostestimate(PlannerInfo *root, IndexPath *path,
							double loop_count, Cost *indexStartupCost,
							Cost *indexTotalCost, Selectivity *indexSelectivity,
							double *indexCorrelation, double *indexPages);
extern void fbtcostestimate_mirrored(PlannerInfo *root, IndexPath *path,
							double loop_count, Cost *indexStartupCost,
							Cost *indexTotalCost, Selectivity *indexSelectivity,
							double *indexCorrelation, double *indexPages);
extern bool fbtcanreturn(Relation index, int attno);
extern int	fbtgettreeheight(Relation rel);

/* fbtplanner.c: the planner's view of fastbtree indexes */
extern bool fbt_plan_as_btree;
extern void _fbt_planner_init(void);
extern void _fbt_relax_rowcompares(PlannerInfo *root, IndexPath *path);
extern void _fbt_drop_foreign_indexclauses(IndexPath *path);

/* fbtcompare.c */
extern bool fbt_fast_compare;
extern void _fbt_prepare_unlocked(Relation rel, FbtScanInsert key);
extern FbtUnlockedResult _fbt_search_inner_unlocked(FbtScanInsert key,
													const char *page,
													FbtInnerStep *step);

/* fbtpage.c */
extern bool fbt_recent_buffers;
extern bool fbt_scan_pins;
extern bool fbt_optimistic_reads;
extern bool fbt_atomic_pins;
#ifdef USE_ASSERT_CHECKING
extern int	fbt_debug_stall_lock;
extern int	fbt_debug_stall_level;
#endif

/*
 * fbtdebug.c: testing-only stalls (builds with assertions).  At a named
 * point, a backend whose fastbtree.debug_stall_<point> is the int8 key K
 * of an advisory lock takes and releases that lock in share mode, so a
 * test holding it exclusively holds the backend there; the wait shows as
 * an advisory lock wait.  In other builds FBT_DEBUG_STALL() is nothing.
 *	extend: a page just added to the index (_fbt_allocbuf(), the page
 *		locked);
 *	getroot: a root reader between reading the metapage afresh and pinning
 *		the root it names (_fbt_getroot());
 *	vacuum: VACUUM's scan before it visits block
 *		fastbtree.debug_stall_vacuum_block (fbtvacuum.c, no lock held).
 */
#ifdef USE_ASSERT_CHECKING
extern int	fbt_debug_stall_extend;
extern int	fbt_debug_stall_getroot;
extern int	fbt_debug_stall_vacuum;
extern int	fbt_debug_stall_vacuum_block;
extern bool fbt_debug_vacuum_cleanup_internal;
extern void _fbt_debug_stall_at(int key);
#define FBT_DEBUG_STALL(key) \
	do { \
		if (unlikely((key) != 0)) \
			_fbt_debug_stall_at(key); \
	} while (0)
#else
#define FBT_DEBUG_STALL(key)	((void) 0)
#endif
extern void _fbt_prepare_compare(Relation rel, FbtScanInsert key);
extern void _fbt_prepare_compare_col(Relation rel, FbtScanInsert key, int i);
extern FbtCmpKind _fbt_classify_key(Relation rel, ScanKey sk, Oid procoid,
									int64 *iarg, double *farg, int *argwidth);
extern void _fbt_machine_arg(FbtCmpKind kind, int argwidth, Datum arg,
							 int64 *iarg, double *farg);
extern int32 _fbt_machine_order(FbtCmpKind kind, int64 iarg, double farg,
								Datum datum);
extern bool _fbt_machine_test(FbtCmpKind kind, StrategyNumber strat,
							  int64 iarg, double farg, Datum datum);
extern int32 _fbt_compare(Relation rel, FbtScanInsert key, Buffer buf,
						  OffsetNumber offnum);
extern OffsetNumber _fbt_binsrch(Relation rel, FbtScanInsert key, Buffer buf);

/*
 * A deleted or half-dead page is never the rightmost of its level (page
 * deletion refuses those), so stepping right over one always has a place
 * to go; a rightmost one is corruption.  buf's page, blkno, is locked.
 */
static inline void
_fbt_ignored_page_not_rightmost(Relation rel, BlockNumber blkno,
								FbtPageOpaque opaque)
{
	if (unlikely(P_RIGHTMOST(opaque)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a deleted or half-dead page at block %u that is rightmost on its level",
						RelationGetRelationName(rel), blkno)));
}

/* fbtpagedel.c */
extern void _fbt_pagedel(Relation rel, Buffer leafbuf,
						 IndexBulkDeleteResult *stats);
extern bool _fbt_halfdead_apply_parent(Page page, OffsetNumber poff,
									   BlockNumber rightsib);
extern bool _fbt_halfdead_apply_leaf(Page page, BlockNumber topparent);
extern bool _fbt_unlink_apply_leaf(Page page, BlockNumber leaftopparent);
extern bool _fbt_deleted_page_init(Page page, uint32 level,
								   BlockNumber leftsib, BlockNumber rightsib,
								   FullTransactionId safexid);
#ifdef USE_ASSERT_CHECKING
extern bool fbt_debug_pagedel_halfdead_only;
extern int	fbt_debug_pagedel_unlinks;
#endif

/* fbtdelete.c */
extern bool _fbt_delete_items_apply(Page page, OffsetNumber *deletable,
									int n, OffsetNumber *updatable,
									IndexTuple *updated, int nupdated);
extern void _fbt_delete_items(Relation rel, Relation heapRel, Buffer buf,
							  bool vacuum, TransactionId horizon,
							  OffsetNumber *deletable, int n,
							  OffsetNumber *updatable, IndexTuple *updated,
							  int nupdated);
extern void _fbt_log_conflict_full(Relation rel, Relation heapRel,
								   BlockNumber blkno,
								   FullTransactionId horizon);
extern bool _fbt_delete_before_split(Relation rel, Relation heapRel,
									 Buffer buf, IndexTuple newitem,
									 Size newitemsz,
									 bool checkingunique, bool uniquedup,
									 bool indexUnchanged);
extern bool _fbt_delete_lp_dead(Relation rel, Relation heapRel, Buffer buf);

/* fbtdedup.c */
extern bool _fbt_allequalimage(Relation rel, bool debugmessage);
extern bool _fbt_dedup_enabled(Relation rel);
extern bool _fbt_keys_image_equal(Relation rel, IndexTuple a, IndexTuple b);
extern int	_fbt_first_image_diff(Relation rel, IndexTuple a, IndexTuple b);
extern void _fbt_dedup_start_pending(FbtDedupState *state, IndexTuple base,
									 OffsetNumber baseoff);
extern bool _fbt_dedup_save_htid(FbtDedupState *state, IndexTuple itup);
extern IndexTuple _fbt_dedup_form_pending(FbtDedupState *state);
extern IndexTuple _fbt_form_posting(IndexTuple base, ItemPointer htids,
									int nhtids);
extern IndexTuple _fbt_posting_remove(IndexTuple posting, bool *remove);
extern IndexTuple _fbt_swap_posting(IndexTuple newitem, IndexTuple oposting,
									int postingoff);
extern int	_fbt_posting_position(Relation rel, Buffer buf,
								  OffsetNumber offnum, ItemPointer scantid);
extern bool _fbt_dedup_pass(Relation rel, Buffer buf, IndexTuple newitem,
							Size newitemsz, bool bottomup);
extern bool _fbt_dedup_apply(Page page, Page newpage,
							 const FbtDedupInterval *intervals,
							 int nintervals);

/* fbtinsert.c */
extern bool fbtinsert(Relation rel, Datum *values, bool *isnull,
					  ItemPointer ht_ctid, Relation heapRel,
					  IndexUniqueCheck checkUnique, bool indexUnchanged,
					  IndexInfo *indexInfo);
extern void _fbt_finish_split(Relation rel, Buffer lbuf, FbtStack stack);
extern Buffer _fbt_getstackbuf(Relation rel, FbtStack stack,
							   BlockNumber child);
extern void _fbt_item_size_error(Relation rel, Relation heapRel,
								 IndexTuple itup);
extern bool _fbt_insert_apply(Page page, OffsetNumber offnum,
							  IndexTuple itup, IndexTuple nposting);
extern int	_fbt_split_items(Relation rel, Buffer buf, Page page,
							 OffsetNumber newitemoff, IndexTuple newitem,
							 IndexTuple nposting, IndexTuple *items,
							 Size *itemsz);
extern bool _fbt_split_fill_left(Page left, const FbtPageOpaqueData *oopaque,
								 BlockNumber rightblk, uint16 cycleid,
								 IndexTuple hikey, IndexTuple *items,
								 Size *itemsz, int firstright);
#ifdef USE_ASSERT_CHECKING
extern bool fbt_debug_split_image;
#endif

/* fbtpage.c */
extern void _fbt_initmetapage(Page page, BlockNumber rootbknum, uint32 level,
							  bool allequalimage);
extern void _fbt_pageinit(Page page, uint32 level, uint16 flags);
extern FbtMetaPageData *_fbt_getmeta(Relation rel, bool refresh);
extern Buffer _fbt_getroot(Relation rel, int access, bool create,
						   FbtScanPins *pins, bool *borrowed, int *apin);
extern Buffer _fbt_getbuf(Relation rel, BlockNumber blkno, int access);
extern Buffer _fbt_pinbuf_read(Relation rel, FbtScanPins *pins,
							   BlockNumber blkno, bool internal,
							   bool *borrowed, int *apin);
extern void _fbt_drop_pin(FbtScanPins *pins, Buffer buf, bool borrowed,
						  int apin);
extern void _fbt_release_scan_pins(FbtScanPins *pins);
extern void _fbt_heal_version(Buffer buf);
extern void fbt_xact_callback(XactEvent event, void *arg);
extern Buffer _fbt_allocbuf(Relation rel);
extern Buffer _fbt_allocbuf_recycle(Relation rel);
extern bool _fbt_page_recyclable(Page page, FullTransactionId *safexid);
extern uint16 _fbt_vacuum_cycleid(Relation rel);
extern uint16 _fbt_start_vacuum(Relation rel);
extern void _fbt_end_vacuum(Relation rel, BlockNumber num_delpages);
extern BlockNumber _fbt_get_num_delpages(Relation rel);
extern Buffer _fbt_relandgetbuf(Relation rel, Buffer obuf, BlockNumber blkno,
								int access);
extern void _fbt_checkpage(Relation rel, Buffer buf);
/* _fbt_corrupt_item() is declared with the item checks above */
extern uint32 _fbt_getrootheight(Relation rel);
extern int	_fbt_cached_rootheight(Oid indexoid);

typedef struct FbtWal
{
	GenericXLogState *state;
	int			npages;
	Buffer		bufs[MAX_GENERIC_XLOG_PAGES];
	Page		images[MAX_GENERIC_XLOG_PAGES];
	uint32		oldversion[MAX_GENERIC_XLOG_PAGES];
} FbtWal;

extern void _fbt_wal_start(FbtWal *wal, Relation rel);
extern Page _fbt_wal_register(FbtWal *wal, Buffer buf, bool fullimage);
extern void _fbt_wal_finish(FbtWal *wal);
extern void _fbt_wal_finish_completing(FbtWal *wal, Buffer cbuf);
extern void _fbt_wal_abort(FbtWal *wal);
extern void _fbt_newroot_start(Relation rel, FbtWal *wal, Buffer rootbuf,
							   Buffer metabuf, Page *rootimg, Page *metaimg);
extern void _fbt_newroot_abort(FbtWal *wal);
extern void _fbt_newroot_finish(Relation rel, FbtWal *wal, Buffer rootbuf,
								Page rootimg, Buffer metabuf, Page metaimg,
								Buffer lbuf);
extern uint32 _fbt_edit_begin(Buffer buf);
extern void _fbt_edit_replace(Buffer buf, Page image, uint32 version);
extern void _fbt_edit_end(Buffer buf, XLogRecPtr lsn);

/*
 * _fbt_apply_clear_incomplete_split() -- the page edit that completes a
 * split once its right page's downlink is in the parent (primary and
 * redo).
 */
static inline void
_fbt_apply_clear_incomplete_split(Page page)
{
	FbtPageGetOpaque(page)->fbto_flags &= ~FBTP_INCOMPLETE_SPLIT;
}

/* fbtsearch.c */
extern void _fbt_scan_cache_reset(void);
extern Buffer _fbt_pinleaf(Relation rel, BlockNumber blkno, int *apin);
extern FbtStack _fbt_search(Relation rel, FbtScanInsert key, Buffer *bufP,
							int access, OffsetNumber *leafoffP,
							FbtScanPins *pins, int *leafapin);
extern Buffer _fbt_get_endpoint(Relation rel, uint32 level, bool rightmost,
								FbtScanPins *pins);
extern void _fbt_freestack(FbtStack stack);

/* fbtscan.c */
extern IndexScanDesc fbtbeginscan(Relation rel, int nkeys, int norderbys);
extern void fbtrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
					  ScanKey orderbys, int norderbys);
extern bool fbtgettuple(IndexScanDesc scan, ScanDirection dir);
extern Size fbtestimateparallelscan(FBT_ESTIMATE_PARALLELSCAN_ARGS);
extern void fbtinitparallelscan(void *target);
extern void fbtparallelrescan(IndexScanDesc scan);
extern int64 fbtgetbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void fbtendscan(IndexScanDesc scan);
extern void fbtmarkpos(IndexScanDesc scan);
extern void fbtrestrpos(IndexScanDesc scan);

/* fbtinspect.c */
extern void _fbt_check_index_relation(Relation rel);
extern Relation _fbt_open_index(Oid relid);

/* fbtprefetch.c */
extern bool fbt_prefetch;
extern bool fbt_prefetch_read_ahead;
#ifdef USE_ASSERT_CHECKING
extern int	fbt_debug_prefetch_cached_us;
#endif
extern void _fbt_prefetch_start(IndexScanDesc scan);
extern void _fbt_prefetch_page(IndexScanDesc scan);
extern void _fbt_prefetch_restored(IndexScanDesc scan);
extern void _fbt_prefetch(IndexScanDesc scan);
extern void _fbt_prefetch_end(IndexScanDesc scan);

/*
 * Whether _fbt_prefetch() has work as the scan hands out its next item:
 * prefetching on, more than one match on the leaf, and a distance, a leaf
 * just read, or a probe due (the countdown is here, so that a warm scan
 * pays one test per row)
 */
static inline bool
_fbt_prefetch_due(FbtPrefetchState *ps, FbtScanPos pos)
{
	/* (a page of one match, a point probe's, has nothing ahead) */
	return ps->enabled && pos->firstItem < pos->lastItem &&
		(ps->distance > 0 || ps->pageStart || --ps->probeIn <= 0);
}

/* fbtsort.c */
extern IndexBuildResult *fbtbuild(Relation heap, Relation index,
								  IndexInfo *indexInfo);
extern void fbtbuildempty(Relation index);
extern PGDLLEXPORT void _fbt_parallel_build_main(dsm_segment *seg,
												 shm_toc *toc);

/* fbtutils.c */
extern FbtScanInsert _fbt_mkscankey_natts(Relation rel, IndexTuple itup,
										  int nkeyatts);
extern void _fbt_fill_scankey(Relation rel, IndexTuple itup, int nkeyatts,
							  FbtScanInsert key);
extern void _fbt_free_scankey_args(FbtScanInsert key);
extern void _fbt_freescankey(FbtScanInsert key);
extern bool _fbt_tuple_attrs_ok(TupleDesc desc, IndexTuple itup, int natts);
extern void _fbt_check_attrs(Relation rel, Buffer buf, IndexTuple itup);
extern IndexTuple _fbt_truncate(Relation rel, IndexTuple lastleft,
								IndexTuple firstright);
extern IndexTuple _fbt_pivot_minus_infinity(IndexTuple itup);
extern int	_fbt_keep_natts(Relation rel, IndexTuple lastleft,
							IndexTuple firstright);
extern void _fbt_prepare_sortsupport_col(Relation rel, int col,
										 SortSupport ssup);
extern void _fbt_preprocess_keys(IndexScanDesc scan);
extern void _fbt_first_array_elems(IndexScanDesc scan, ScanDirection dir);

/*
 * _fbt_start_array_keys() -- set every array key to its first element in
 * scan direction dir.  Returns false if the scan can match nothing.
 * Inline: a scan without arrays (a nested loop's probe, rescanned per
 * outer row) makes no call.
 */
static inline bool
_fbt_start_array_keys(IndexScanDesc scan, ScanDirection dir)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	so->needPrimScan = false;
	so->arraysAdvanced = true;
	if (!so->qual_ok)
		return false;
	if (so->numArrayKeys > 0)
		_fbt_first_array_elems(scan, dir);
	return true;
}
extern bool _fbt_advance_array_keys(IndexScanDesc scan, ScanDirection dir);
extern void _fbt_mark_array_keys(IndexScanDesc scan);
extern void _fbt_restore_array_keys(IndexScanDesc scan);
extern bool _fbt_checkkeys(IndexScanDesc scan, IndexTuple tuple, int tupnatts,
						   ScanDirection dir, int startikey,
						   bool *continuescan);
extern int	_fbt_set_startikey(IndexScanDesc scan, IndexTuple firsttup,
							   IndexTuple lasttup);
extern bool _fbt_checkkey(IndexScanDesc scan, int i, IndexTuple tuple,
						  int tupnatts, ScanDirection dir, bool *continuescan);

/* fbtarray.c */
extern bool fbt_skip_scan;
extern bool _fbt_array_mode_eligible(IndexScanDesc scan);
extern int	_fbt_add_skip_keys(IndexScanDesc scan, bool *haseq);
extern void _fbt_plan_array_mode(IndexScanDesc scan);
extern void _fbt_skip_start(FbtArrayKeyInfo *ak);
extern void _fbt_skip_mark(IndexScanDesc scan, FbtArrayKeyInfo *ak);
extern void _fbt_skip_restore(IndexScanDesc scan, FbtArrayKeyInfo *ak);
extern Size _fbt_array_serial_bound(Relation rel);
extern Size _fbt_array_serial_size(IndexScanDesc scan);
extern void _fbt_array_serialize(IndexScanDesc scan, char *dst);
extern void _fbt_array_restore(IndexScanDesc scan, char *src);
extern FbtArrayResult _fbt_array_check(IndexScanDesc scan, IndexTuple tuple,
									   int tupnatts, ScanDirection dir,
									   bool advance);
extern bool _fbt_array_filter(IndexScanDesc scan, IndexTuple tuple,
							  int tupnatts, ScanDirection dir);
extern bool _fbt_array_page_spans(IndexScanDesc scan, IndexTuple first,
								  IndexTuple last);
extern bool _fbt_array_plain(IndexScanDesc scan, IndexTuple tuple,
							 int tupnatts, ScanDirection dir);

/* fbtvacuum.c */
extern IndexBulkDeleteResult *fbtbulkdelete(IndexVacuumInfo *info,
											IndexBulkDeleteResult *stats,
											IndexBulkDeleteCallback callback,
											void *callback_state);
extern IndexBulkDeleteResult *fbtvacuumcleanup(IndexVacuumInfo *info,
											   IndexBulkDeleteResult *stats);

/* fbtvalidate.c */
extern bool fbtvalidate(Oid opclassoid);
extern void fbtadjustmembers(Oid opfamilyoid, Oid opclassoid,
							 List *operators, List *functions);
extern void _fbt_check_index_collations(Relation index);

/*
 * _fbt_root_ok() -- may a page with these special-space fields be taken as
 * the root of level rootlevel?
 *
 * From the cache (refresh false), only a page of that level alone on it
 * (no left or right sibling) is accepted, since that is the root whatever
 * happened since; anything else means the root split or moved after we
 * cached it, and the metapage must be read again.  Accepting any leftmost
 * page would be correct for Lehman & Yao, but a backend that cached the
 * root of a small index would then walk right across a whole level of the
 * grown one on its next descent.  Right after a metapage read (refresh
 * true), a leftmost page of the metapage's level is accepted: a root split
 * since the read leaves at most a few right siblings to move across.  As
 * nbtree's _bt_getroot() does.
 */
static inline bool
_fbt_root_ok(uint16 flags, uint32 level, BlockNumber prev, BlockNumber next,
			 uint32 rootlevel, bool refresh)
{
	return level == rootlevel &&
		((flags & FBTP_LEAF) != 0) == (rootlevel == 0) &&
		prev == P_NONE && (refresh || next == P_NONE) &&
		!(flags & (FBTP_DELETED | FBTP_HALF_DEAD | FBTP_META));
}

/* fbtpin.c */
extern int	fbt_atomic_pin(Relation rel, BlockNumber blkno, Buffer buf);
extern void fbt_atomic_unpin(int slot, Buffer buf);
extern void fbt_atomic_lockbuf(Buffer buf, int mode);
extern BlockNumber FbtBufferGetBlockNumber(Buffer buf);
extern XLogRecPtr FbtBufferGetLSNAtomic(Buffer buf);

/*
 * _fbt_lockpin() -- LockBuffer(buf, mode) for a page pinned either way:
 * apin is its atomic pin slot (fbt_atomic_pin()) or FBT_APIN_NONE for a
 * buffer-manager pin.
 */
static inline void
_fbt_lockpin(Buffer buf, int mode, int apin)
{
	if (apin != FBT_APIN_NONE)
		fbt_atomic_lockbuf(buf, mode);
	else
		LockBuffer(buf, mode);
}

/*
 * _fbt_unpin() -- release a pin taken either way (apin as for
 * _fbt_lockpin()); the caller holds no content lock on buf.
 */
static inline void
_fbt_unpin(Buffer buf, int apin)
{
	if (apin != FBT_APIN_NONE)
		fbt_atomic_unpin(apin, buf);
	else
		ReleaseBuffer(buf);
}

/*
 * _fbt_pinbuf() -- pin block blkno of rel for a descent, without locking it.
 *
 * pins: the scan's lifetime pins, or NULL outside scans.  internal: the
 * caller expects an internal page (a leaf is never kept in pins nor
 * hinted).  If pins holds blkno, its buffer is returned with *borrowed set
 * and no buffer-manager call at all: the caller must not release it (the
 * scan does, at amendscan).  Else _fbt_pinbuf_read() pins it, and the pin
 * may go to pins (*borrowed set) or stay the caller's (*borrowed clear:
 * release it with _fbt_unpin()).  apin: NULL when the caller needs a
 * buffer-manager pin (it hands the buffer to code that calls bufmgr);
 * else *apin is set to the pin's atomic slot (fbtpin.c) or FBT_APIN_NONE,
 * and the caller locks the page with _fbt_lockpin().  An internal page is
 * pinned atomically when apin is given, fastbtree.atomic_pins and
 * fastbtree.recent_buffers are on and its hint holds it; otherwise
 * through the buffer manager.  The page is not checked: the caller
 * locks it and runs _fbt_checkpage(), or reads it optimistically.  The
 * reuse is counted as the pin btree takes would be: a fetch and a hit in
 * the relation's statistics (pg_statio), a shared (local, for a temporary
 * index) hit in the buffer usage of EXPLAIN (BUFFERS) and
 * pg_stat_statements and in pg_stat_io.  Raises
 * ERRCODE_INDEX_CORRUPTED for P_NEW.
 */
static inline Buffer
_fbt_pinbuf(Relation rel, FbtScanPins *pins, BlockNumber blkno,
			bool internal, bool *borrowed, int *apin)
{
	_fbt_check_link(rel, blkno);
	if (pins != NULL && internal)
	{
		int			i;

		for (i = 0; i < pins->npins; i++)
		{
			if (pins->blkno[i] == blkno &&
				(apin != NULL || pins->apin[i] == FBT_APIN_NONE))
			{
				if (apin != NULL)
					*apin = pins->apin[i];
				fbt_stats.scan_pin_reuses++;
				pgstat_count_buffer_read(rel);
				pgstat_count_buffer_hit(rel);
				if (unlikely(RelationUsesLocalBuffers(rel)))
				{
					pgBufferUsage.local_blks_hit++;
					fbt_count_io_hit_local();
				}
				else
				{
					pgBufferUsage.shared_blks_hit++;
					fbt_count_io_hit();
				}
				*borrowed = true;
				return pins->buf[i];
			}
		}
	}
	return _fbt_pinbuf_read(rel, pins, blkno, internal, borrowed, apin);
}

/*
 * _fbt_check_item_size() -- reject a leaf tuple too large for the tree
 * (itup: the new leaf tuple; heapRel names the table in the error): a
 * third of a page is the limit, so that a split always finds room for two
 * items and a high key.  Inline, as it runs for every insert and every
 * tuple a build loads; the error is _fbt_item_size_error()'s.
 */
static inline void
_fbt_check_item_size(Relation rel, Relation heapRel, IndexTuple itup)
{
	if (unlikely(MAXALIGN(IndexTupleSize(itup)) > FBT_MAX_ITEM_SIZE))
		_fbt_item_size_error(rel, heapRel, itup);
}

#endif							/* FASTBTREE_H */
