/*-------------------------------------------------------------------------
 *
 * fbtpage.c
 *	  Page and buffer management for fastbtree: the metapage and its
 *	  backend-local cache, page initialization, pinning and locking, relation
 *	  extension, and the single helper through which every page change is
 *	  WAL-logged (generic WAL) and bumps the page version counter.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "fastbtree.h"
#include "fbtxlog.h"

static void _fbt_height_note(Oid indexoid, FbtMetaPageData *metad);

static void _fbt_checkpage_failed(Relation rel, Buffer buf);
static void _fbt_bad_root(Relation rel, BlockNumber rootblkno,
						  uint32 rootlevel);
static void _fbt_newroot_logged(Relation rel, Buffer rootbuf, Page rootimg,
								Buffer metabuf, Page metaimg, Buffer lbuf);

/*
 * _fbt_pageinit() -- initialize a new, empty index page in local or image
 * memory.
 *
 * page: BLCKSZ bytes to initialize; level: 0 for a leaf; flags: FBTP_*.
 * Siblings are set to P_NONE; the caller links the page.
 */
void
_fbt_pageinit(Page page, uint32 level, uint16 flags)
{
	FbtPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(FbtPageOpaqueData));
	opaque = FbtPageGetOpaque(page);
	opaque->fbto_prev = P_NONE;
	opaque->fbto_next = P_NONE;
	opaque->fbto_level = level;
	opaque->fbto_version = 0;
	opaque->fbto_flags = flags;
	opaque->fbto_cycleid = 0;
	opaque->fbto_unused = 0;
	opaque->fbto_page_id = FBT_PAGE_ID;
}

/*
 * _fbt_initmetapage() -- fill in a metapage.
 *
 * page: BLCKSZ bytes; rootbknum: root block or P_NONE for an empty index;
 * level: level of that root; allequalimage: the index may form posting
 * lists (_fbt_allequalimage()).  pd_lower is advanced past the metadata
 * so that full-page images and generic WAL keep it.
 */
void
_fbt_initmetapage(Page page, BlockNumber rootbknum, uint32 level,
				  bool allequalimage)
{
	FbtMetaPageData *metad;

	_fbt_pageinit(page, 0, FBTP_META);
	metad = FbtPageGetMeta(page);
	metad->fbtm_magic = FBT_MAGIC;
	metad->fbtm_version = FBT_VERSION;
	metad->fbtm_root = rootbknum;
	metad->fbtm_level = level;
	metad->fbtm_vacuum_cycle = 0;
	metad->fbtm_num_delpages = 0;
	metad->fbtm_allequalimage = allequalimage ? 1 : 0;
	((PageHeader) page)->pd_lower =
		((char *) metad + sizeof(FbtMetaPageData)) - (char *) page;
}

/*
 * Check a metapage's identity; ERRCODE_INDEX_CORRUPTED if it is not ours or
 * has a format we do not read.
 */
static FbtMetaPageData *
_fbt_checkmeta(Relation rel, Page page)
{
	FbtMetaPageData *metad = FbtPageGetMeta(page);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);

	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(FbtPageOpaqueData)) ||
		!(opaque->fbto_flags & FBTP_META) ||
		metad->fbtm_magic != FBT_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a fastbtree",
						RelationGetRelationName(rel)),
				 errdetail("Block %u has no valid fastbtree metapage.",
						   (BlockNumber) FBT_METAPAGE)));
	if (metad->fbtm_version != FBT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("version mismatch in index \"%s\": file version %u, current version %u",
						RelationGetRelationName(rel),
						metad->fbtm_version, FBT_VERSION)));
	return metad;
}

/*
 * _fbt_getmeta() -- return the index's metadata, from the backend-local
 * cache in rd_amcache when possible.
 *
 * refresh: ignore the cache and reread block 0.  Takes and releases a share
 * lock on the metapage when it reads it; no locks or pins are held on
 * return.  The result lives in rd_indexcxt and is valid until the next
 * call with refresh = true or a relcache flush.  The recent-buffer hints
 * kept beside it (FbtAmCache) survive a refresh.  Raises
 * ERRCODE_INDEX_CORRUPTED for a metapage that is not ours.
 */
FbtMetaPageData *
_fbt_getmeta(Relation rel, bool refresh)
{
	Buffer		metabuf;
	FbtMetaPageData *metad;

	if (rel->rd_amcache != NULL && !refresh)
		return (FbtMetaPageData *) rel->rd_amcache;

	metabuf = _fbt_getbuf(rel, FBT_METAPAGE, FBT_READ);
	metad = _fbt_checkmeta(rel, BufferGetPage(metabuf));
	if (rel->rd_amcache == NULL)
	{
		FbtAmCache *cache;
		uint32		nleaf = 0;
		int			i;

		/*
		 * Leaf hints, sized from the index's current length (an lseek, once
		 * per cache; a relcache invalidation, as VACUUM and ANALYZE send
		 * when they update the index's pg_class row, rebuilds the cache,
		 * resized)
		 */
		if (!RelationUsesLocalBuffers(rel))
		{
			BlockNumber nblocks = RelationGetNumberOfBlocks(rel);

			nleaf = FBT_MIN_LEAF_HINTS;
			while (nleaf < FBT_MAX_LEAF_HINTS && nleaf < nblocks)
				nleaf <<= 1;
		}
		cache = MemoryContextAlloc(rel->rd_indexcxt,
								   offsetof(FbtAmCache, leafhints) +
								   nleaf * sizeof(FbtLeafHint));
		for (i = 0; i < FBT_NHINTS; i++)
		{
			cache->hints[i].blkno = InvalidBlockNumber;
			cache->hints[i].uses = 0;
		}
		cache->nleafhints = nleaf;
		for (i = 0; i < nleaf; i++)
		{
			cache->leafhints[i].blkno = InvalidBlockNumber;
			cache->leafhints[i].buf = InvalidBuffer;
		}
		rel->rd_amcache = cache;
	}
	memcpy(rel->rd_amcache, metad, sizeof(FbtMetaPageData));
	_fbt_height_note(RelationGetRelid(rel), metad);
	UnlockReleaseBuffer(metabuf);
	return (FbtMetaPageData *) rel->rd_amcache;
}

/*
 * Tree heights for the cost model where the planner does not ask the AM
 * (before 18, amgettreeheight): index OID -> root level, direct-mapped,
 * kept until a relcache invalidation of the index (or of all relations)
 * and brought up to date whenever this backend re-reads the metapage
 * (_fbt_getmeta()), as btree's own heights come from its cached metapage.
 */
#define FBT_HEIGHT_SLOTS	64

typedef struct FbtHeightSlot
{
	Oid			indexoid;		/* InvalidOid: empty */
	int			height;
} FbtHeightSlot;

static FbtHeightSlot fbt_height_slots[FBT_HEIGHT_SLOTS];
static bool fbt_height_callback = false;

/* the metapage of index indexoid was just read: keep its slot current */
static void
_fbt_height_note(Oid indexoid, FbtMetaPageData *metad)
{
	FbtHeightSlot *slot = &fbt_height_slots[indexoid % FBT_HEIGHT_SLOTS];

	if (slot->indexoid == indexoid)
		slot->height = metad->fbtm_root == P_NONE ? 0 : (int) metad->fbtm_level;
}

static void
_fbt_height_inval(Datum arg, Oid relid)
{
	int			i;

	for (i = 0; i < FBT_HEIGHT_SLOTS; i++)
		if (relid == InvalidOid || fbt_height_slots[i].indexoid == relid)
			fbt_height_slots[i].indexoid = InvalidOid;
}

/*
 * _fbt_cached_rootheight() -- the root level of index indexoid (locked by
 * the caller, the planner), for fbtcostestimate() before 18: from the slot
 * cache, or else from the index's cached metapage (an index_open without
 * a lock of its own; a share lock on block 0 when the metapage must be
 * read).  Errors only as _fbt_getrootheight() raises them.
 */
int
_fbt_cached_rootheight(Oid indexoid)
{
	FbtHeightSlot *slot = &fbt_height_slots[indexoid % FBT_HEIGHT_SLOTS];
	Relation	irel;
	int			height;

	if (slot->indexoid == indexoid)
		return slot->height;
	if (!fbt_height_callback)
	{
		CacheRegisterRelcacheCallback(_fbt_height_inval, (Datum) 0);
		fbt_height_callback = true;
	}
	irel = index_open(indexoid, NoLock);
	height = (int) _fbt_getrootheight(irel);
	index_close(irel, NoLock);
	slot->indexoid = indexoid;
	slot->height = height;
	return height;
}

/*
 * _fbt_getrootheight() -- level of the root, for the cost model.
 *
 * Returns 0 for an empty index or a root that is a leaf.  Same locking as
 * _fbt_getmeta().
 */
uint32
_fbt_getrootheight(Relation rel)
{
	FbtMetaPageData *metad = _fbt_getmeta(rel, false);

	if (metad->fbtm_root == P_NONE)
		return 0;
	return metad->fbtm_level;
}

/*
 * _fbt_bad_root() -- raise ERRCODE_INDEX_CORRUPTED for a root block that
 * the metapage, just read, names but that _fbt_root_ok() refuses.
 */
static void
_fbt_bad_root(Relation rel, BlockNumber rootblkno, uint32 rootlevel)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("root block %u of index \"%s\" is not a leftmost page of level %u",
					rootblkno, RelationGetRelationName(rel), rootlevel)));
}

/*
 * _fbt_getroot() -- pin and lock the root page.
 *
 * access: FBT_READ or FBT_WRITE, the lock taken on the root if it is a leaf
 * (an internal root is always share-locked: writers only write leaves on
 * the way down).  create: when the index is empty, make a root leaf (with
 * an exclusive metapage lock held meanwhile); otherwise return
 * InvalidBuffer for an empty index.  pins: the scan's lifetime pins or
 * NULL (_fbt_pinbuf()); *borrowed tells whether the buffer returned belongs
 * to them (then the caller unlocks it but must not release it).  apin:
 * NULL when the caller needs a buffer-manager pin; else an internal root
 * may be pinned atomically, *apin then holds the slot (FBT_APIN_NONE for
 * a buffer-manager pin) and the caller unlocks and releases the root with
 * _fbt_lockpin() and _fbt_unpin() (or _fbt_drop_pin()).
 *
 * The root found through the cached metapage is validated on arrival by
 * _fbt_root_ok(); if refused, the metapage is read again.  The root it
 * names may have split and been deleted before we lock it: deleted pages
 * are then stepped over to the right, to the page that took over their
 * range (nbtree's _bt_getroot()); a page refused after that is
 * ERRCODE_INDEX_CORRUPTED.  A refused page never stays among pins.
 * Returns the buffer pinned and locked, its page checked; nothing else is
 * held.
 */
Buffer
_fbt_getroot(Relation rel, int access, bool create, FbtScanPins *pins,
			 bool *borrowed, int *apin)
{
	bool		refresh = false;
	int			lapin = FBT_APIN_NONE;
	int		   *lapinp = apin != NULL ? &lapin : NULL;

	*borrowed = false;
	if (apin != NULL)
		*apin = FBT_APIN_NONE;
	for (;;)
	{
		FbtMetaPageData *metad = _fbt_getmeta(rel, refresh);
		BlockNumber rootblkno = metad->fbtm_root;
		uint32		rootlevel = metad->fbtm_level;
		Buffer		rootbuf;
		FbtPageOpaque opaque;

		if (rootblkno == P_NONE)
		{
			Buffer		metabuf;
			FbtMetaPageData *shared;
			FbtWal		wal;
			Page		metaimg;
			Page		rootimg;

			if (!refresh)
			{
				/* the cache may be older than the first insert */
				refresh = true;
				continue;
			}
			if (!create)
				return InvalidBuffer;

			metabuf = _fbt_getbuf(rel, FBT_METAPAGE, FBT_WRITE);
			shared = _fbt_checkmeta(rel, BufferGetPage(metabuf));
			if (shared->fbtm_root != P_NONE)
			{
				/* somebody else created it meanwhile */
				UnlockReleaseBuffer(metabuf);
				continue;
			}
			rootbuf = _fbt_allocbuf(rel);
			_fbt_newroot_start(rel, &wal, rootbuf, metabuf, &rootimg, &metaimg);
			_fbt_pageinit(rootimg, 0, FBTP_LEAF | FBTP_ROOT);
			FbtPageGetMeta(metaimg)->fbtm_root = BufferGetBlockNumber(rootbuf);
			FbtPageGetMeta(metaimg)->fbtm_level = 0;
			_fbt_newroot_finish(rel, &wal, rootbuf, rootimg, metabuf, metaimg,
								InvalidBuffer);
			UnlockReleaseBuffer(metabuf);
			(void) _fbt_getmeta(rel, true);

			if (access == FBT_READ)
			{
				LockBuffer(rootbuf, BUFFER_LOCK_UNLOCK);
				LockBuffer(rootbuf, FBT_READ);
			}
			return rootbuf;
		}

#ifdef USE_ASSERT_CHECKING
		if (refresh)
			FBT_DEBUG_STALL(fbt_debug_stall_getroot);
#endif
		rootbuf = _fbt_pinbuf(rel, pins, rootblkno, rootlevel > 0, borrowed,
							  lapinp);
		_fbt_lockpin(rootbuf, rootlevel == 0 ? access : FBT_READ, lapin);
		_fbt_checkpage(rel, rootbuf);
		opaque = FbtPageGetOpaque(BufferGetPage(rootbuf));

		/*
		 * The root the metapage named just now may have split and then
		 * been deleted before we locked it: its range went right, to the
		 * page that is now the leftmost of its level, as nbtree's
		 * _bt_getroot() steps right over a deleted root.  (Not from the
		 * cache: a stale page there is simply read again.)
		 */
		while (refresh && P_IGNORE(opaque) && !P_RIGHTMOST(opaque) &&
			   opaque->fbto_level == rootlevel)
		{
			BlockNumber next = opaque->fbto_next;

			_fbt_lockpin(rootbuf, BUFFER_LOCK_UNLOCK, lapin);
			_fbt_drop_pin(pins, rootbuf, *borrowed, lapin);
			lapin = FBT_APIN_NONE;
			CHECK_FOR_INTERRUPTS();
			rootbuf = _fbt_pinbuf(rel, pins, next, rootlevel > 0, borrowed,
								  lapinp);
			_fbt_lockpin(rootbuf, rootlevel == 0 ? access : FBT_READ, lapin);
			_fbt_checkpage(rel, rootbuf);
			opaque = FbtPageGetOpaque(BufferGetPage(rootbuf));
			rootblkno = next;
		}
		if (_fbt_root_ok(opaque->fbto_flags, opaque->fbto_level,
						 opaque->fbto_prev, opaque->fbto_next, rootlevel,
						 refresh))
		{
			if (rootlevel > 0)
				_fbt_heal_version(rootbuf);
			if (apin != NULL)
				*apin = lapin;
			return rootbuf;
		}

		/*
		 * Refused: the page does not stay among the scan's pins, which
		 * hold internal pages only (a cached root since deleted and reused
		 * as a leaf would otherwise stay pinned, and VACUUM's cleanup lock
		 * on it would wait for the scan to end).
		 */
		_fbt_lockpin(rootbuf, BUFFER_LOCK_UNLOCK, lapin);
		_fbt_drop_pin(pins, rootbuf, *borrowed, lapin);
		lapin = FBT_APIN_NONE;
		*borrowed = false;
		if (refresh)
			_fbt_bad_root(rel, rootblkno, rootlevel);
		refresh = true;
	}
}

/*
 * _fbt_checkpage() -- sanity-check a page just pinned and locked.
 *
 * Raises ERRCODE_INDEX_CORRUPTED, naming the index and block, for an
 * all-zero page, one whose special space is not fastbtree's, one whose
 * header bounds are inconsistent (pd_lower, pd_upper, pd_special out of
 * order, more line pointers than fit).  Every reader locks each page
 * through _fbt_getbuf() or
 * _fbt_relandgetbuf(), so these O(1) checks run once per page visit; the
 * item-level checks that rely on them (_fbt_itemid_ok) run as items are
 * read.  Caller holds a pin and a lock.
 */
void
_fbt_checkpage(Relation rel, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	PageHeader	phdr = (PageHeader) page;
	uint16		lower = phdr->pd_lower;
	uint16		upper = phdr->pd_upper;
	FbtPageOpaque opaque;

	/*
	 * The common case in few comparisons, on header bytes every reader
	 * loads anyway; the special space is read only once pd_special is
	 * known to be ours.  These are what the item checks rely on (items
	 * within [pd_upper, pd_special), no more line pointers than a scan's
	 * arrays hold).  A missing high key or downlink is caught by the offset
	 * check of _fbt_getitem(); a link to a page of the wrong level, or to
	 * the metapage, by the descent (_fbt_check_level; _fbt_getroot for the
	 * root), which also checks that the leaf flag agrees with the level.  The out-of-line checks tell
	 * what is wrong.
	 */
	if (unlikely(phdr->pd_special != BLCKSZ - MAXALIGN(sizeof(FbtPageOpaqueData))))
		_fbt_checkpage_failed(rel, buf);
	opaque = FbtPageGetOpaque(page);
	/* unsigned: a pd_lower below the header wraps around and fails too */
	if (unlikely(opaque->fbto_page_id != FBT_PAGE_ID ||
				 lower > upper || upper > phdr->pd_special ||
				 (uint32) (lower - SizeOfPageHeaderData) >
				 MaxIndexTuplesPerPage * sizeof(ItemIdData)))
		_fbt_checkpage_failed(rel, buf);
}

/*
 * The out-of-line part of _fbt_checkpage(): returns for a valid metapage
 * at block 0, else raises ERRCODE_INDEX_CORRUPTED saying what is wrong.
 */
static void
_fbt_checkpage_failed(Relation rel, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	PageHeader	phdr = (PageHeader) page;
	FbtPageOpaque opaque;
	const char *problem = NULL;

	if (PageIsNew(page))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains unexpected zero page at block %u",
						RelationGetRelationName(rel),
						FbtBufferGetBlockNumber(buf)),
				 errhint("Please REINDEX it.")));
	if (phdr->pd_special != BLCKSZ - MAXALIGN(sizeof(FbtPageOpaqueData)) ||
		FbtPageGetOpaque(page)->fbto_page_id != FBT_PAGE_ID)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(rel),
						FbtBufferGetBlockNumber(buf)),
				 errhint("Please REINDEX it.")));

	opaque = FbtPageGetOpaque(page);
	if (phdr->pd_lower < SizeOfPageHeaderData ||
		phdr->pd_lower > phdr->pd_upper ||
		phdr->pd_upper > phdr->pd_special)
		problem = "pd_lower, pd_upper and pd_special are out of order";
	else if (((opaque->fbto_flags & FBTP_META) != 0) !=
			 (FbtBufferGetBlockNumber(buf) == FBT_METAPAGE))
		problem = "the metapage flag is set on a page other than block 0, or missing on block 0";
	else if (opaque->fbto_flags & FBTP_META)
		return;
	else if (PageGetMaxOffsetNumber(page) > MaxIndexTuplesPerPage)
		problem = "more line pointers than index tuples fit in a page";
	else if (P_ISLEAF(opaque) != (opaque->fbto_level == 0))
		problem = "the leaf flag disagrees with the level";
	else
		problem = "inconsistent header";
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" contains corrupted page at block %u",
					RelationGetRelationName(rel),
					FbtBufferGetBlockNumber(buf)),
			 errdetail("In the page header: %s (pd_lower %u, pd_upper %u, pd_special %u).",
					   problem, phdr->pd_lower, phdr->pd_upper,
					   phdr->pd_special),
			 errhint("Please REINDEX it.")));
}

/*
 * _fbt_corrupt_item() -- report a damaged item.
 *
 * buf: the pinned and locked page holding it; offnum: its offset; detail:
 * what is wrong, or NULL for a line pointer or tuple length out of the
 * page's bounds.  Raises ERRCODE_INDEX_CORRUPTED (never returns); the
 * error releases the caller's locks and pins.
 */
void
_fbt_corrupt_item(Relation rel, Buffer buf, OffsetNumber offnum,
				  const char *detail)
{
	Page		page = BufferGetPage(buf);
	ItemId		iid = NULL;

	if (offnum >= FirstOffsetNumber && offnum <= PageGetMaxOffsetNumber(page))
		iid = PageGetItemId(page, offnum);
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" contains a corrupted item at block %u, offset %u",
					RelationGetRelationName(rel),
					FbtBufferGetBlockNumber(buf), offnum),
			 detail ? errdetail("%s.", detail) :
			 iid ? errdetail("Line pointer (offset %u, length %u, flags %u) or tuple length out of the page's bounds (pd_upper %u, pd_special %u).",
							 ItemIdGetOffset(iid), ItemIdGetLength(iid),
							 ItemIdGetFlags(iid),
							 ((PageHeader) page)->pd_upper,
							 ((PageHeader) page)->pd_special) : 0,
			 errhint("Please REINDEX it.")));
	pg_unreachable();
}

bool		fbt_recent_buffers = true;
bool		fbt_scan_pins = true;
bool		fbt_optimistic_reads = true;
FbtStats	fbt_stats;

#if PG_VERSION_NUM >= 160000
/* pg_stat_io hits not yet handed to the stats machinery (fbtcompat.h) */
uint64		fbt_io_hits_pending = 0;
#endif

/*
 * Pins a backend keeps for scans' lifetimes, in all its scans together, and
 * the most it may keep.  A backend with many open scans (cursors, deep
 * nested loops) must not pin a large part of a small buffer pool: 1/512 of
 * shared_buffers (32 pins with the default 128MB), at most 64; none with a
 * pool of fewer than 512 buffers.  The count is reset at the end of each
 * transaction, when every pin is gone (fbt_xact_callback); a pin released by
 * a subtransaction's abort then stays counted until the transaction ends,
 * which only lowers the budget meanwhile.
 */
static int	fbt_scan_pins_held = 0;

static inline int
_fbt_scan_pin_budget(void)
{
	return Min(NBuffers / 512, 64);
}

/*
 * Forget the scan pins of the transaction that ended: the resource owners
 * released every buffer pin, and no scan survives its transaction; take
 * back the kept scan state an error left lent (fbtscan.c); hand the
 * transaction's pg_stat_io hits to the stats machinery (fbtcompat.h).
 * Registered by _PG_init().
 */
void
fbt_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT)
	{
		fbt_scan_pins_held = 0;
		_fbt_scan_cache_reset();
		fbt_flush_io_hits();
	}
}

/*
 * Pin block blkno of rel, through its recent-buffer hint when it has one
 * that still holds the block (no buffer-mapping lookup), else through
 * ReadBuffer().  apin: NULL for a buffer-manager pin; else, for an
 * internal page the caller locks only with _fbt_lockpin(), *apin receives
 * the atomic pin's slot when the hinted buffer could be pinned atomically
 * (fastbtree.atomic_pins; fbtpin.c), FBT_APIN_NONE otherwise.  A hit is
 * counted in the relation's statistics as ReadBuffer() would count it (a
 * fetch and a hit) and in pg_stat_io, so pg_statio_*_indexes and
 * pg_stat_io read the same either way.
 */
static inline Buffer
_fbt_readbuf(Relation rel, BlockNumber blkno, int *apin)
{
	if (apin != NULL)
		*apin = FBT_APIN_NONE;
	if (fbt_recent_buffers && rel->rd_amcache != NULL)
	{
		FbtBufferHint *hint =
			&((FbtAmCache *) rel->rd_amcache)->hints[blkno % FBT_NHINTS];

		if (hint->blkno == blkno)
		{
			bool		hit;

			if (apin != NULL && fbt_atomic_pins && FBT_HAVE_ATOMIC_PIN)
			{
				/* raises the usage count as ReadBuffer() does */
				*apin = fbt_atomic_pin(rel, blkno, hint->buf);
				hit = (*apin != FBT_APIN_NONE);
			}
			else if ((++hint->uses % FBT_HINT_REFRESH) != 0)
			{
				hit = ReadRecentBuffer(FbtRelFileId(rel), MAIN_FORKNUM, blkno,
									   hint->buf);
				/* ReadRecentBuffer() leaves pg_stat_io to its caller */
				if (hit)
					fbt_count_io_hit();
			}
			else
			{
				/*
				 * Every FBT_HINT_REFRESH-th use of a hint goes through
				 * ReadBuffer() anyway: before PostgreSQL 19, a
				 * ReadRecentBuffer() hit on a buffer we have not pinned
				 * does not raise its usage count, so a root read only
				 * through hints would look cold to the clock sweep and be
				 * evicted before btree's under buffer pressure.
				 */
				return ReadBuffer(rel, blkno);
			}
			if (hit)
			{
				pgstat_count_buffer_read(rel);
				pgstat_count_buffer_hit(rel);
				fbt_stats.recent_hits++;
				return hint->buf;
			}
			/* a stale hint: replaced when the caller remembers the page */
			fbt_stats.recent_misses++;
		}
	}
	return ReadBuffer(rel, blkno);
}

/*
 * Remember where an internal page was found, for the next descent.  Leaves
 * are not hinted: a probe touches a different leaf almost every time, and
 * there are too many of them; nor is the metapage (read only on refresh).
 * Temporary indexes are not hinted either: their local buffers need no
 * mapping lock, and early 15.x releases mishandled local buffers in
 * ReadRecentBuffer().  The hint is only a guess (ReadRecentBuffer() checks
 * the buffer's tag), so a caller that has not locked the page may set it.
 */
static inline void
_fbt_remember(Relation rel, Buffer buf, BlockNumber blkno)
{
	if (fbt_recent_buffers && rel->rd_amcache != NULL &&
		!RelationUsesLocalBuffers(rel))
	{
		FbtBufferHint *hint =
			&((FbtAmCache *) rel->rd_amcache)->hints[blkno % FBT_NHINTS];

		if (hint->blkno != blkno)
			hint->uses = 0;
		hint->blkno = blkno;
		hint->buf = buf;
	}
}

/* The same for a page the caller has locked and checked */
static inline void
_fbt_remember_buf(Relation rel, Buffer buf, BlockNumber blkno)
{
	if (!(FbtPageGetOpaque(BufferGetPage(buf))->fbto_flags &
		  (FBTP_LEAF | FBTP_META)))
		_fbt_remember(rel, buf, blkno);
}

/*
 * _fbt_pinbuf_read() -- the part of _fbt_pinbuf() (fastbtree.h) for a block
 * that is not among pins: pin it through its recent-buffer hint (atomically
 * when apin is given: _fbt_readbuf()) or ReadBuffer(); for an internal
 * page, remember the buffer as the block's hint, and hand the pin to pins
 * when the scan and the backend have room (*borrowed set), else leave it
 * the caller's (*borrowed clear).  blkno was checked by the caller (not
 * P_NEW).
 *
 * A pin held for a scan's lifetime blocks nothing: VACUUM takes cleanup
 * locks on leaves only, writers need only exclusive content locks, and
 * whatever would drop the index's buffers needs a lock that conflicts with
 * the scan's (README.design, "Pins").
 */
Buffer
_fbt_pinbuf_read(Relation rel, FbtScanPins *pins, BlockNumber blkno,
				 bool internal, bool *borrowed, int *apin)
{
	Buffer		buf = _fbt_readbuf(rel, blkno, internal ? apin : NULL);

	if (apin != NULL && !internal)
		*apin = FBT_APIN_NONE;
	*borrowed = false;
	if (internal)
	{
		_fbt_remember(rel, buf, blkno);
		if (pins != NULL && apin != NULL && fbt_scan_pins &&
			pins->npins < FBT_MAX_SCAN_PINS &&
			fbt_scan_pins_held < _fbt_scan_pin_budget())
		{
			pins->blkno[pins->npins] = blkno;
			pins->buf[pins->npins] = buf;
			pins->apin[pins->npins] = (int16) *apin;
			pins->npins++;
			fbt_scan_pins_held++;
			fbt_stats.scan_pins_taken++;
			*borrowed = true;
		}
	}
	return buf;
}

/*
 * _fbt_pinleaf() -- pin leaf block blkno of rel for a scan that reads it
 * under its share lock and releases lock and pin before returning to the
 * executor (_fbt_search() with leafapin; README.design, "Pins").
 *
 * When the leaf hints (FbtAmCache) name a buffer for blkno and
 * fastbtree.atomic_pins and fastbtree.recent_buffers are on, the buffer is
 * pinned atomically (fbt_atomic_pin(), which checks its tag): no
 * buffer-mapping lookup, no partition LWLock, no header spinlock, and
 * *apin is set to the pin's slot.  Otherwise ReadBuffer() pins it, *apin
 * is FBT_APIN_NONE, and the buffer becomes blkno's hint.  The caller locks
 * the page with _fbt_lockpin() and checks it, and must not hand a page
 * pinned atomically to bufmgr (fbtpin.c's rules).  Counted as ReadBuffer()
 * counts a hit.  Raises ERRCODE_INDEX_CORRUPTED for P_NEW; read errors as
 * ReadBuffer().
 */
Buffer
_fbt_pinleaf(Relation rel, BlockNumber blkno, int *apin)
{
	FbtAmCache *cache = (FbtAmCache *) rel->rd_amcache;
	FbtLeafHint *hint;
	Buffer		buf;

	_fbt_check_link(rel, blkno);
	*apin = FBT_APIN_NONE;
	if (cache == NULL || cache->nleafhints == 0 || !fbt_recent_buffers ||
		!fbt_atomic_pins || !FBT_HAVE_ATOMIC_PIN)
		return ReadBuffer(rel, blkno);
	hint = &cache->leafhints[blkno & (cache->nleafhints - 1)];
	if (hint->blkno == blkno)
	{
		*apin = fbt_atomic_pin(rel, blkno, hint->buf);
		if (*apin != FBT_APIN_NONE)
		{
			pgstat_count_buffer_read(rel);
			pgstat_count_buffer_hit(rel);
			fbt_stats.leaf_hint_hits++;
			return hint->buf;
		}
		fbt_stats.leaf_hint_misses++;
	}
	buf = ReadBuffer(rel, blkno);
	hint->blkno = blkno;
	hint->buf = buf;
	return buf;
}

/*
 * _fbt_drop_pin() -- release the pin on buf (not locked by us; apin its
 * atomic slot or FBT_APIN_NONE), which is one of pins when borrowed, and
 * then leaves them: a page found not to be what it was pinned as (an
 * internal page) must not stay pinned for the scan's lifetime.  No errors.
 */
void
_fbt_drop_pin(FbtScanPins *pins, Buffer buf, bool borrowed, int apin)
{
	int			i;

	if (borrowed)
	{
		Assert(pins != NULL);
		for (i = 0; i < pins->npins; i++)
		{
			if (pins->buf[i] == buf && pins->apin[i] == apin)
			{
				pins->npins--;
				pins->blkno[i] = pins->blkno[pins->npins];
				pins->buf[i] = pins->buf[pins->npins];
				pins->apin[i] = pins->apin[pins->npins];
				fbt_scan_pins_held = Max(fbt_scan_pins_held - 1, 0);
				break;
			}
		}
		Assert(i <= pins->npins);
	}
	_fbt_unpin(buf, apin);
}

/*
 * _fbt_release_scan_pins() -- release every pin kept in pins (a scan's, at
 * amendscan or when its relation is closed); pins is left empty.  The
 * caller holds no content lock on those buffers.
 */
void
_fbt_release_scan_pins(FbtScanPins *pins)
{
	int			i;

	for (i = 0; i < pins->npins; i++)
		_fbt_unpin(pins->buf[i], pins->apin[i]);
	fbt_scan_pins_held = Max(fbt_scan_pins_held - pins->npins, 0);
	pins->npins = 0;
}

/*
 * _fbt_heal_version() -- make an odd version of a share-locked internal
 * page even.
 *
 * buf: pinned and share-locked (or exclusively locked), page checked.
 * Writers make the version odd and then even again while they hold the
 * exclusive lock (_fbt_wal_finish), so an odd version seen under a share
 * lock was left by WAL replay: crash recovery, a promoted standby, or a
 * page written while odd during recovery and read back since.  Optimistic
 * readers treat odd as "use the lock", so such a page would stay locked
 * for them until its next change, which for upper pages may be never.  The
 * version is advanced to the next even value; the page is not dirtied (a
 * page read back from disk is healed again on its first locked visit).
 * Concurrent healers under the share lock store the same value.  Not done
 * in recovery, where redo owns the pages and optimistic reads are off.
 * README.design, "Versions after recovery".
 */
void
_fbt_heal_version(Buffer buf)
{
	FbtPageOpaque opaque = FbtPageGetOpaque(BufferGetPage(buf));
	uint32		version = opaque->fbto_version;

	if (unlikely(version & 1) && !P_ISLEAF(opaque) &&
		!(opaque->fbto_flags & FBTP_META) && !RecoveryInProgress())
	{
		((volatile FbtPageOpaqueData *) opaque)->fbto_version = version + 1;
		fbt_stats.versions_healed++;
	}
}

/*
 * _fbt_getbuf() -- pin and lock an existing index page.
 *
 * blkno: block to read; access: FBT_READ or FBT_WRITE.  Returns the buffer
 * pinned and locked in that mode, after _fbt_checkpage().  Raises
 * ERRCODE_INDEX_CORRUPTED for blkno P_NEW (a damaged link) or a page that
 * fails the checks.
 */
Buffer
_fbt_getbuf(Relation rel, BlockNumber blkno, int access)
{
	Buffer		buf;

	_fbt_check_link(rel, blkno);
	buf = _fbt_readbuf(rel, blkno, NULL);
	LockBuffer(buf, access);
	_fbt_checkpage(rel, buf);
	_fbt_remember_buf(rel, buf, blkno);
	_fbt_heal_version(buf);
	return buf;
}

/*
 * _fbt_allocbuf() -- extend the index by one page.
 *
 * Returns the new block's buffer pinned and exclusively locked; the page is
 * all zeroes and the caller initializes it through _fbt_wal_register() (or
 * a compact record) before it releases the lock.  The lock is taken before
 * anyone can learn the new block number (fbt_extend_locked(),
 * fbtcompat.h): VACUUM would otherwise take the zero page for one a failed
 * extension left and offer it to other splits.  Builds, root creation and
 * root splits use it; page splits use _fbt_allocbuf_recycle().
 */
Buffer
_fbt_allocbuf(Relation rel)
{
	Buffer		buf = fbt_extend_locked(rel);

#ifdef USE_ASSERT_CHECKING
	FBT_DEBUG_STALL(fbt_debug_stall_extend);
#endif
	return buf;
}

/*
 * _fbt_vacuum_cycleid() -- the cycle id of the VACUUM pass running on rel
 * (fbtm_vacuum_cycle), or 0 if none is.
 *
 * Called by a split that holds exclusive locks on both halves, after the
 * right one is allocated (nbtree's _bt_vacuum_cycleid() interlock): a pass
 * that starts after this read cannot have passed either page yet, since
 * it must lock each, so it sees the split whole; a pass that started
 * before is named here, and the halves carry its id.  A pass cancelled or
 * crashed leaves its id marked running until the next one starts; splits
 * meanwhile stamp an id no pass looks for, which costs nothing.  Takes the
 * metapage's share lock briefly; ERRCODE_INDEX_CORRUPTED for a bad
 * metapage.
 */
uint16
_fbt_vacuum_cycleid(Relation rel)
{
	Buffer		metabuf = ReadBuffer(rel, FBT_METAPAGE);
	Page		page;
	FbtMetaPageData *metad;
	uint32		cycle = 0;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(metabuf);
	metad = _fbt_checkmeta(rel, page);
	/* metapages of earlier builds may end before the field */
	if (((PageHeader) page)->pd_lower >=
		(char *) (&metad->fbtm_vacuum_cycle + 1) - (char *) page)
		cycle = metad->fbtm_vacuum_cycle;
	UnlockReleaseBuffer(metabuf);
	if (!(cycle & FBT_VACUUM_ACTIVE))
		return 0;
	return (uint16) (cycle & FBT_VACUUM_CYCLE_MASK);
}

/*
 * _fbt_get_num_delpages() -- fbtm_num_delpages: the deleted pages the last
 * VACUUM pass left not yet reusable (0 for metapages of earlier builds,
 * whose contents end before the field).  Share-locks the metapage briefly.
 */
BlockNumber
_fbt_get_num_delpages(Relation rel)
{
	Buffer		metabuf = ReadBuffer(rel, FBT_METAPAGE);
	Page		page;
	FbtMetaPageData *metad;
	BlockNumber n = 0;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(metabuf);
	metad = _fbt_checkmeta(rel, page);
	if (((PageHeader) page)->pd_lower >= (char *) (metad + 1) - (char *) page)
		n = metad->fbtm_num_delpages;
	UnlockReleaseBuffer(metabuf);
	return n;
}

/*
 * Set fbtm_vacuum_cycle on the metapage page to cycle, and when the pass
 * ends (FBT_VACUUM_ACTIVE clear) record num_delpages; metapages of earlier
 * builds, which end before these fields, are extended.
 */
static void
_fbt_meta_apply_vacuum(Page page, uint32 cycle, BlockNumber num_delpages)
{
	FbtMetaPageData *meta = FbtPageGetMeta(page);

	if (((PageHeader) page)->pd_lower < (char *) (meta + 1) - (char *) page)
	{
		meta->fbtm_num_delpages = 0;
		((PageHeader) page)->pd_lower = (char *) (meta + 1) - (char *) page;
	}
	meta->fbtm_vacuum_cycle = cycle;
	if (!(cycle & FBT_VACUUM_ACTIVE))
		meta->fbtm_num_delpages = num_delpages;
}

/*
 * Write the metapage's VACUUM fields: fbtm_vacuum_cycle becomes
 * next_cycle(old value), and num_delpages is recorded when the result has
 * no FBT_VACUUM_ACTIVE; WAL-logged (in compact mode XLOG_FBT_META, the
 * metapage as a full image).  Returns the new fbtm_vacuum_cycle.  Takes
 * the metapage's exclusive lock briefly (holding no other lock); errors:
 * those of WAL insertion, ERRCODE_INDEX_CORRUPTED for a bad metapage.
 */
static uint32
_fbt_write_vacuum_cycle(Relation rel, uint32 (*next_cycle) (uint32),
						BlockNumber num_delpages)
{
	Buffer		metabuf = ReadBuffer(rel, FBT_METAPAGE);
	Page		page;
	FbtMetaPageData *metad;
	bool		oldformat;
	uint32		cycle;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(metabuf);
	metad = _fbt_checkmeta(rel, page);
	oldformat = ((PageHeader) page)->pd_lower <
		(char *) (metad + 1) - (char *) page;
	cycle = next_cycle(oldformat ? 0 : metad->fbtm_vacuum_cycle);
	if (oldformat || metad->fbtm_vacuum_cycle != cycle ||
		(!(cycle & FBT_VACUUM_ACTIVE) &&
		 metad->fbtm_num_delpages != num_delpages))
	{
		if (fbt_wal_compact)
		{
			XLogRecPtr	recptr = InvalidXLogRecPtr;

			START_CRIT_SECTION();
			_fbt_edit_begin(metabuf);
			_fbt_meta_apply_vacuum(page, cycle, num_delpages);
			MarkBufferDirty(metabuf);
			if (RelationNeedsWAL(rel))
			{
				XLogBeginInsert();
				XLogRegisterBuffer(0, metabuf,
								   REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
				recptr = XLogInsert(FBT_RMGR_ID, XLOG_FBT_META);
			}
			_fbt_edit_end(metabuf, recptr);
			END_CRIT_SECTION();
		}
		else
		{
			FbtWal		wal;

			_fbt_wal_start(&wal, rel);
			_fbt_meta_apply_vacuum(_fbt_wal_register(&wal, metabuf, false),
								   cycle, num_delpages);
			START_CRIT_SECTION();
			_fbt_wal_finish(&wal);
			END_CRIT_SECTION();
		}
	}
	UnlockReleaseBuffer(metabuf);
	return cycle;
}

/* the next cycle id (1 .. FBT_VACUUM_CYCLE_MASK, never 0), running */
static uint32
_fbt_cycle_start(uint32 old)
{
	uint32		id = (old & FBT_VACUUM_CYCLE_MASK) + 1;

	if (id > FBT_VACUUM_CYCLE_MASK)
		id = 1;
	return id | FBT_VACUUM_ACTIVE;
}

/* the same cycle id, no longer running */
static uint32
_fbt_cycle_end(uint32 old)
{
	return old & FBT_VACUUM_CYCLE_MASK;
}

/*
 * _fbt_start_vacuum() -- mark a VACUUM pass running on rel with a new
 * cycle id (the last one plus one, skipping 0), WAL-logged, and return
 * that id.  nbtree keeps its cycle ids in shared memory and ends them with
 * PG_ENSURE_ERROR_CLEANUP; ours live on the metapage, so that no
 * shared_preload_libraries entry is needed, and a pass that errors, is
 * cancelled or crashes simply leaves its id marked running: splits then
 * stamp an id no later pass looks for (each starts a new one), which
 * costs nothing, and nothing waits for the mark to clear.  Locks and
 * errors as _fbt_write_vacuum_cycle().
 */
uint16
_fbt_start_vacuum(Relation rel)
{
	return (uint16) (_fbt_write_vacuum_cycle(rel, _fbt_cycle_start, 0) &
					 FBT_VACUUM_CYCLE_MASK);
}

/*
 * _fbt_end_vacuum() -- the pass started by _fbt_start_vacuum() ended:
 * clear FBT_VACUUM_ACTIVE and record num_delpages (fbtm_num_delpages, the
 * deleted pages it left not yet reusable), WAL-logged.  Locks and errors
 * as _fbt_write_vacuum_cycle().
 */
void
_fbt_end_vacuum(Relation rel, BlockNumber num_delpages)
{
	(void) _fbt_write_vacuum_cycle(rel, _fbt_cycle_end, num_delpages);
}

/*
 * _fbt_page_recyclable() -- whether page (locked) can be reused: a deleted
 * page whose safexid every snapshot has passed (nbtree README, "Page
 * Deletion": then no one can still be on the way to it through a link
 * read before its deletion), or a page never initialized.  Sets *safexid
 * (invalid for a new page).  No locks, no errors.
 */
bool
_fbt_page_recyclable(Page page, FullTransactionId *safexid)
{
	FbtPageOpaque opaque;
	ItemId		iid;

	*safexid = InvalidFullTransactionId;
	if (PageIsNew(page))
		return true;
	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(FbtPageOpaqueData)))
		return false;
	opaque = FbtPageGetOpaque(page);
	if (!P_ISDELETED(opaque) || PageGetMaxOffsetNumber(page) != P_HIKEY)
		return false;
	iid = PageGetItemId(page, P_HIKEY);
	if (ItemIdGetLength(iid) != sizeof(FbtDeletedPageData))
		return false;
	memcpy(safexid, PageGetItem(page, iid), sizeof(FullTransactionId));
	return GlobalVisCheckRemovableFullXid(NULL, *safexid);
}

/*
 * _fbt_allocbuf_recycle() -- a page for a split: a recycled one from the
 * free space map if one is safe to reuse, else a new one (_fbt_allocbuf()).
 *
 * Returns the buffer pinned and exclusively locked, its page to be
 * initialized whole by the caller.  The caller holds the page it splits.
 * Free-space-map entries may be stale: each candidate is locked
 * conditionally and checked (_fbt_page_recyclable()); one that is not
 * reusable is left out of the map (VACUUM records it again if it ever
 * becomes so), one that another backend holds locked (VACUUM looking at
 * it, say) or that is deleted but whose safexid this backend's horizon has
 * not yet passed is put back once this split has its page (after
 * FBT_RECYCLE_SKIPPED_MAX of those, the split extends the index).  A VACUUM pass may be
 * running: the split stamps its cycle id on both halves, and the pass goes
 * back for a right half it finds on a block it has already passed
 * (fbtvacuum.c), as nbtree's does.  Before a deleted page is reused, its
 * safexid is WAL-logged as a standby recovery conflict
 * (_fbt_log_conflict_full()), as nbtree's XLOG_BTREE_REUSE_PAGE.
 */
#define FBT_RECYCLE_SKIPPED_MAX	8

Buffer
_fbt_allocbuf_recycle(Relation rel)
{
	BlockNumber skipped[FBT_RECYCLE_SKIPPED_MAX];
	int			nskipped = 0;
	Buffer		result = InvalidBuffer;
	int			i;

	for (;;)
	{
		BlockNumber blkno = GetFreeIndexPage(rel);
		Buffer		buf;
		FullTransactionId safexid;

		if (blkno == InvalidBlockNumber || blkno == FBT_METAPAGE)
			break;
		buf = ReadBuffer(rel, blkno);
		if (!ConditionalLockBuffer(buf))
		{
			ReleaseBuffer(buf);
			/*
			 * Free, most likely, but busy: offer it again afterwards; after
			 * that many busy ones, stop looking and extend rather than
			 * take more out of the map
			 */
			skipped[nskipped++] = blkno;
			if (nskipped == FBT_RECYCLE_SKIPPED_MAX)
				break;
			continue;
		}
		if (_fbt_page_recyclable(BufferGetPage(buf), &safexid))
		{
			_fbt_log_conflict_full(rel, NULL, blkno, safexid);
			result = buf;
			break;
		}
		if (FullTransactionIdIsValid(safexid))
		{
			/*
			 * Deleted, but some snapshot of ours may still be on its way
			 * to it: free, only not yet for this backend
			 */
			UnlockReleaseBuffer(buf);
			skipped[nskipped++] = blkno;
			if (nskipped == FBT_RECYCLE_SKIPPED_MAX)
				break;
			continue;
		}
		UnlockReleaseBuffer(buf);
	}
	for (i = 0; i < nskipped; i++)
		RecordFreeIndexPage(rel, skipped[i]);
	if (!BufferIsValid(result))
		result = _fbt_allocbuf(rel);
	return result;
}

/*
 * _fbt_relandgetbuf() -- release one page and lock another.
 *
 * obuf: a pinned and locked buffer, or InvalidBuffer; it is unlocked and
 * unpinned before blkno is locked in mode access (so this function never
 * holds two page locks; a caller may hold others, as the unique check
 * holds its leaf).  Returns the new buffer pinned and locked.
 *
 * Every walk from page to page (descent, move right, level endpoints, the
 * left-sibling search) steps through here, so interrupts are checked here,
 * after the unlock: a check while a content lock is held does nothing,
 * since LWLocks hold off interrupts.  A query walking a long (or, on a
 * damaged index, endless) chain of pages can thus be cancelled.  The
 * error, if any, releases the pin on obuf.
 */
Buffer
_fbt_relandgetbuf(Relation rel, Buffer obuf, BlockNumber blkno, int access)
{
	Buffer		buf;

	_fbt_check_link(rel, blkno);
	if (BufferIsValid(obuf))
		LockBuffer(obuf, BUFFER_LOCK_UNLOCK);
	CHECK_FOR_INTERRUPTS();
	if (BufferIsValid(obuf))
		ReleaseBuffer(obuf);
	buf = _fbt_readbuf(rel, blkno, NULL);
	LockBuffer(buf, access);
	_fbt_checkpage(rel, buf);
	_fbt_remember_buf(rel, buf, blkno);
	_fbt_heal_version(buf);
	return buf;
}

/*
 * WAL-logged page changes.
 *
 * Every change to an index page goes through _fbt_wal_start(),
 * _fbt_wal_register() (at most MAX_GENERIC_XLOG_PAGES pages) and
 * _fbt_wal_finish(), which wrap generic WAL and maintain fbto_version for
 * optimistic readers (README.design, "Optimistic reads": steps W1-W4):
 *
 *	- the caller holds an exclusive lock on every registered buffer;
 *	- the image, which is what generic WAL logs and copies in, carries the
 *	  next odd version v' = (v | 1) + 2;
 *	- before the image reaches shared memory, the shared version is set to
 *	  v' with every bit but the lowest flipped: still odd, and different
 *	  from v' in all four bytes, so generic WAL's delta always carries the
 *	  whole version field and a standby (or crash recovery, or
 *	  wal_consistency_checking) ends up with exactly the primary's bytes,
 *	  whatever version it had before; a write barrier orders the store
 *	  before the copy;
 *	- the shared page is thus odd throughout the copy; after it, the shared
 *	  version becomes v' + 1, even.  That last store is not logged; after
 *	  recovery a page carries an odd version, which optimistic readers
 *	  treat as "use the lock" until the first locked visit heals it
 *	  (_fbt_heal_version()).  Even versions only ever grow.
 *	- nothing else ever writes an internal page: hints go to leaves only.
 *
 * Hints.  Scans and unique checks mark dead entries LP_DEAD and set
 * FBTP_HAS_GARBAGE without WAL (nbtree README, "Marking dead items"), so a
 * standby's or a crashed server's copy of a page lacks the primary's
 * hints.  A generic record logs only the bytes that differ between the
 * shared page and the image; a hint present in both is not logged, and
 * redo would produce a page that differs from the primary's, which
 * wal_consistency_checking (switched on at any time, by any session or on
 * the standby alone) reports as a FATAL inconsistency.  So every record
 * carries the page's hints: the shared page's copy of every LP_DEAD line
 * pointer of a leaf image, and of the flags word when the image has
 * FBTP_HAS_GARBAGE, are made to differ from the image before the delta is
 * computed.  Redo then sets exactly the primary's hints.  Every line
 * pointer of the image is looked at, not only when FBTP_HAS_GARBAGE is
 * set: pages written by earlier builds (whose VACUUM cleared the flag
 * while LP_DEAD entries stayed) must replay exactly too, and the walk is
 * small beside generic WAL's own comparison of the whole page.  Hot standby
 * scans do not trust LP_DEAD (ignore_killed_tuples is off in recovery),
 * as with nbtree's hints that arrive in full-page images.
 */

/*
 * Make the hints of image differ in shared (see above), so that the delta
 * carries them.  shared is the exclusively locked page the image will
 * overwrite; called inside _fbt_wal_finish()'s critical section.
 */
static void
_fbt_wal_force_hints(Page shared, Page image)
{
	FbtPageOpaque iopaque = FbtPageGetOpaque(image);
	OffsetNumber maxoff;
	OffsetNumber off;

	if (!P_ISLEAF(iopaque))
		return;					/* hints are set on leaves only */
	if (iopaque->fbto_flags & FBTP_HAS_GARBAGE)
		FbtPageGetOpaque(shared)->fbto_flags = ~iopaque->fbto_flags;
	maxoff = Min(PageGetMaxOffsetNumber(image),
				 PageGetMaxOffsetNumber(shared));
	for (off = FirstOffsetNumber; off <= maxoff; off++)
	{
		if (ItemIdIsDead(PageGetItemId(image, off)))
		{
			uint32	   *sharedlp = (uint32 *) PageGetItemId(shared, off);

			*sharedlp = ~*(uint32 *) PageGetItemId(image, off);
		}
	}
}

/* The odd version a change logs, given the page's version before it */
static inline uint32
_fbt_next_version(uint32 old)
{
	return (old | 1) + 2;
}

/*
 * _fbt_wal_start() -- begin a WAL-logged change of up to four pages.
 */
void
_fbt_wal_start(FbtWal *wal, Relation rel)
{
	wal->state = GenericXLogStart(rel);
	wal->npages = 0;
}

/*
 * _fbt_wal_register() -- add a buffer to the change and return its image.
 *
 * buf must be exclusively locked.  fullimage: the page is rewritten whole
 * (new pages), so log it as a full image.  Returns the BLCKSZ working image
 * the caller modifies; the shared page is untouched until
 * _fbt_wal_finish().
 */
Page
_fbt_wal_register(FbtWal *wal, Buffer buf, bool fullimage)
{
	Page		image;
	Page		shared = BufferGetPage(buf);
	int			n = wal->npages;

	Assert(n < MAX_GENERIC_XLOG_PAGES);
	image = GenericXLogRegisterBuffer(wal->state, buf,
									  fullimage ? GENERIC_XLOG_FULL_IMAGE : 0);
	wal->bufs[n] = buf;
	wal->images[n] = image;
	if (PageIsNew(shared) ||
		PageGetSpecialSize(shared) != MAXALIGN(sizeof(FbtPageOpaqueData)))
		wal->oldversion[n] = 0;
	else
		wal->oldversion[n] = FbtPageGetOpaque(shared)->fbto_version;
	wal->npages++;
	return image;
}

/*
 * _fbt_wal_finish() -- log the change and apply it to the shared pages.
 *
 * Buffers stay pinned and locked; the caller releases them.  See the block
 * comment above for the version protocol and the hints.  The shared pages
 * are scribbled on (version, hints) before generic WAL copies the images
 * in, so all of it is one critical section: an error in between would
 * leave a damaged page in shared buffers.
 */
void
_fbt_wal_finish(FbtWal *wal)
{
	int			i;

	START_CRIT_SECTION();
	for (i = 0; i < wal->npages; i++)
	{
		Page		shared = BufferGetPage(wal->bufs[i]);
		uint32		next = _fbt_next_version(wal->oldversion[i]);

		if (PageGetSpecialSize(wal->images[i]) ==
			MAXALIGN(sizeof(FbtPageOpaqueData)))
			FbtPageGetOpaque(wal->images[i])->fbto_version = next;
		if (!PageIsNew(shared) &&
			PageGetSpecialSize(shared) == MAXALIGN(sizeof(FbtPageOpaqueData)))
		{
			FbtPageGetOpaque(shared)->fbto_version = next ^ 0xFFFFFFFE;
			if (PageGetSpecialSize(wal->images[i]) ==
				MAXALIGN(sizeof(FbtPageOpaqueData)))
				_fbt_wal_force_hints(shared, wal->images[i]);
		}
	}
	pg_write_barrier();

	GenericXLogFinish(wal->state);

	pg_write_barrier();
	for (i = 0; i < wal->npages; i++)
	{
		Page		shared = BufferGetPage(wal->bufs[i]);

		if (PageGetSpecialSize(shared) == MAXALIGN(sizeof(FbtPageOpaqueData)))
			FbtPageGetOpaque(shared)->fbto_version =
				_fbt_next_version(wal->oldversion[i]) + 1;
	}
	END_CRIT_SECTION();
	wal->state = NULL;
}

/*
 * Compact mode (fbtxlog.c): a change edits the shared pages in place inside
 * a critical section, as nbtree's changes do, and logs a fastbtree record.
 * The version protocol is the one above without an image: for each page,
 *
 *	_fbt_edit_begin(buf)	the version becomes the next odd value, then a
 *							write barrier;
 *	... the page-edit function, MarkBufferDirty(), XLogInsert() ...
 *	_fbt_edit_end(buf, lsn)	PageSetLSN() when the change was logged, a
 *							write barrier, then the version becomes even.
 *
 * So an optimistic reader that saw the same even version before and after
 * its read cannot have overlapped the edit.  Nothing is forced into the
 * record: redo runs the same edit on the standby's page, which differs
 * from the primary's only in what fbt_mask() masks (hints, the version).
 */

/*
 * _fbt_edit_begin() -- mark buf's page as being changed.
 *
 * buf: exclusively locked, in the caller's critical section.  Returns the
 * odd version the page now carries: on a fastbtree page it is stored
 * there; on a new page (all zeros) it is only returned, for the image
 * _fbt_edit_replace() copies in.
 */
uint32
_fbt_edit_begin(Buffer buf)
{
	Page		page = BufferGetPage(buf);
	uint32		next;

	Assert(CritSectionCount > 0);
	if (PageIsNew(page) ||
		PageGetSpecialSize(page) != MAXALIGN(sizeof(FbtPageOpaqueData)))
		return _fbt_next_version(0);
	next = _fbt_next_version(FbtPageGetOpaque(page)->fbto_version);
	FbtPageGetOpaque(page)->fbto_version = next;
	pg_write_barrier();
	return next;
}

/*
 * _fbt_edit_replace() -- overwrite buf's page with image (BLCKSZ bytes, a
 * whole fastbtree page built elsewhere), carrying version, the odd value
 * _fbt_edit_begin() returned: the shared version stays odd throughout the
 * copy.  The page keeps its LSN until the caller's XLogInsert(): with the
 * image's (zero), XLogInsert() would take the page for one not yet logged
 * since the last checkpoint and add a full-page image.  image's version
 * and LSN fields are overwritten.
 */
void
_fbt_edit_replace(Buffer buf, Page image, uint32 version)
{
	Page		page = BufferGetPage(buf);

	Assert(CritSectionCount > 0);
	Assert((version & 1) == 1);
	FbtPageGetOpaque(image)->fbto_version = version;
	PageSetLSN(image, PageGetLSN(page));
	memcpy(page, image, BLCKSZ);
}

/*
 * _fbt_edit_end() -- the change of buf's page is complete.
 *
 * lsn: the record's end, or InvalidXLogRecPtr when the relation is not
 * WAL-logged (unlogged and temporary indexes).  buf stays locked.
 */
void
_fbt_edit_end(Buffer buf, XLogRecPtr lsn)
{
	Page		page = BufferGetPage(buf);

	if (!XLogRecPtrIsInvalid(lsn))
		PageSetLSN(page, lsn);
	pg_write_barrier();
	Assert((FbtPageGetOpaque(page)->fbto_version & 1) == 1);
	FbtPageGetOpaque(page)->fbto_version += 1;
}

/*
 * A new root, the first leaf of an empty index or a root split's new level,
 * is installed in three steps shared by both WAL modes:
 *
 *	_fbt_newroot_start()	the images the caller fills: the new root and
 *							the metapage (rootbuf, metabuf: exclusively
 *							locked), registered in wal (generic mode) or
 *							temporary pages, the metapage's a copy of it;
 *	_fbt_newroot_abort()	on an error before the next step;
 *	_fbt_newroot_finish()	write and log them, clearing the old root's
 *							(lbuf, if valid) FBTP_INCOMPLETE_SPLIT: one
 *							generic record, or XLOG_FBT_NEWROOT.
 *
 * Buffers stay locked; the caller releases them.
 */
void
_fbt_newroot_start(Relation rel, FbtWal *wal, Buffer rootbuf, Buffer metabuf,
				   Page *rootimg, Page *metaimg)
{
	if (fbt_wal_compact)
	{
		*rootimg = palloc(BLCKSZ);
		*metaimg = palloc(BLCKSZ);
		memcpy(*metaimg, BufferGetPage(metabuf), BLCKSZ);
	}
	else
	{
		_fbt_wal_start(wal, rel);
		*rootimg = _fbt_wal_register(wal, rootbuf, true);
		*metaimg = _fbt_wal_register(wal, metabuf, false);
	}
}

void
_fbt_newroot_abort(FbtWal *wal)
{
	if (!fbt_wal_compact)
		_fbt_wal_abort(wal);
}

void
_fbt_newroot_finish(Relation rel, FbtWal *wal, Buffer rootbuf, Page rootimg,
					Buffer metabuf, Page metaimg, Buffer lbuf)
{
	if (fbt_wal_compact)
	{
		_fbt_newroot_logged(rel, rootbuf, rootimg, metabuf, metaimg, lbuf);
		pfree(rootimg);
		pfree(metaimg);
		return;
	}
	_fbt_wal_finish_completing(wal, lbuf);
}

/*
 * _fbt_newroot_logged() -- compact mode: install a new root and the
 * metapage pointing to it, both built in temporary pages (rootimg,
 * metaimg; BLCKSZ each), over rootbuf and metabuf, clear lbuf's (the old
 * root's) FBTP_INCOMPLETE_SPLIT when lbuf is valid, and log
 * XLOG_FBT_NEWROOT.  All buffers exclusively locked, and left so.
 */
static void
_fbt_newroot_logged(Relation rel, Buffer rootbuf, Page rootimg,
					Buffer metabuf, Page metaimg, Buffer lbuf)
{
	XLogRecPtr	recptr = InvalidXLogRecPtr;
	uint32		rootversion;
	uint32		metaversion;

	START_CRIT_SECTION();
	rootversion = _fbt_edit_begin(rootbuf);
	metaversion = _fbt_edit_begin(metabuf);
	if (BufferIsValid(lbuf))
		(void) _fbt_edit_begin(lbuf);
	_fbt_edit_replace(rootbuf, rootimg, rootversion);
	_fbt_edit_replace(metabuf, metaimg, metaversion);
	MarkBufferDirty(rootbuf);
	MarkBufferDirty(metabuf);
	if (BufferIsValid(lbuf))
	{
		_fbt_apply_clear_incomplete_split(BufferGetPage(lbuf));
		MarkBufferDirty(lbuf);
	}
	if (RelationNeedsWAL(rel))
	{
		xl_fbt_newroot xlrec;

		xlrec.level = FbtPageGetOpaque(rootimg)->fbto_level;
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfFbtNewroot);
		XLogRegisterBuffer(0, rootbuf, REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
		XLogRegisterBuffer(1, metabuf, REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
		if (BufferIsValid(lbuf))
			XLogRegisterBuffer(2, lbuf, REGBUF_STANDARD);
		recptr = XLogInsert(FBT_RMGR_ID, XLOG_FBT_NEWROOT);
	}
	_fbt_edit_end(rootbuf, recptr);
	_fbt_edit_end(metabuf, recptr);
	if (BufferIsValid(lbuf))
		_fbt_edit_end(lbuf, recptr);
	END_CRIT_SECTION();
}

/*
 * _fbt_wal_finish_completing() -- generic mode: add to wal the child cbuf
 * (exclusively locked, or InvalidBuffer) whose incomplete split the
 * change completes, clearing its FBTP_INCOMPLETE_SPLIT, and log the change
 * (_fbt_wal_finish(), in a critical section).  Buffers stay locked.
 */
void
_fbt_wal_finish_completing(FbtWal *wal, Buffer cbuf)
{
	if (BufferIsValid(cbuf))
		_fbt_apply_clear_incomplete_split(_fbt_wal_register(wal, cbuf, false));
	START_CRIT_SECTION();
	_fbt_wal_finish(wal);
	END_CRIT_SECTION();
}

/*
 * _fbt_wal_abort() -- drop a change before _fbt_wal_finish(); the shared
 * pages were never touched.
 */
void
_fbt_wal_abort(FbtWal *wal)
{
	GenericXLogAbort(wal->state);
	wal->state = NULL;
}
