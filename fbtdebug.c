/*-------------------------------------------------------------------------
 *
 * fbtdebug.c
 *	  Debugging aids compiled only into assert-enabled builds: the torn-page
 *	  fuzz of the unlocked internal-page search.
 *
 * _fbt_search_inner_unlocked() (fbtcompare.c) reads shared pages without
 * their content lock, so it may see any mix of bytes a writer leaves
 * behind mid-change.  Its promise is that it then still stays within the
 * page, ends, and answers only "found" (FBT_UNLOCKED_OK), "bounds" or
 * "unsupported"; the caller's version check throws away whatever a torn
 * read produced.  fastbtree_fuzz_unlocked() holds it to that promise on
 * copies of real internal pages, mutated in the ways a torn or damaged
 * page can be, each placed between inaccessible guard regions so that a
 * read outside the page kills the backend instead of passing unnoticed;
 * and on unmodified copies it checks that the answer is exactly the
 * locked search's.
 *
 * The SQL function is not in the extension script: an assert-enabled
 * test declares it itself (sql/torn_pages.sql).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>
#include <sys/mman.h>
#include <unistd.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "common/pg_prng.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/float.h"
#include "utils/rel.h"

#include "fastbtree.h"

#ifdef USE_ASSERT_CHECKING

int			fbt_debug_stall_extend = 0;
int			fbt_debug_stall_getroot = 0;
int			fbt_debug_stall_vacuum = 0;
int			fbt_debug_stall_vacuum_block = 1;
bool		fbt_debug_vacuum_cleanup_internal = false;

/*
 * _fbt_debug_stall_at() -- the stall of FBT_DEBUG_STALL() (fastbtree.h):
 * take and release the advisory lock whose int8 key (pg_advisory_lock())
 * is key, in share mode, in the current database.  May be called with
 * content locks held (the wait then cannot be cancelled until the test
 * releases the lock).  Testing only.
 */
void
_fbt_debug_stall_at(int key)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0, (uint32) key, 1);
	(void) LockAcquire(&tag, ShareLock, false, false);
	LockRelease(&tag, ShareLock, false);
}

/*
 * Guard regions on each side of the page under test.  A line pointer
 * offset has 15 bits and a tuple length 13, so a search that trusted them
 * would reach at most about 40kB past the page start; 64kB of
 * inaccessible memory on each side turns any such read into a fault.
 */
#define FUZZ_GUARD			(64 * 1024)

/* Fraction of iterations, 1 in FUZZ_UNMODIFIED_EVERY, on unmodified pages */
#define FUZZ_UNMODIFIED_EVERY	8

/* Values a key column can take, gathered from the pivots of the index */
typedef struct FuzzColumn
{
	Oid			typid;
	int			nvalues;
	int			maxvalues;		/* allocated length of values */
	Datum	   *values;
} FuzzColumn;

typedef struct FuzzState
{
	Relation	rel;
	pg_prng_state prng;
	int			nkeyatts;
	/* private copies of every internal page, in level order */
	int			npages;
	char	   *pages;			/* npages * BLCKSZ bytes */
	BlockNumber *blknos;
	bool	   *hasnulls;		/* the page holds a pivot with NULL keys */
	/* key values and heap TIDs found in the pivots */
	FuzzColumn	cols[INDEX_MAX_KEYS];
	int			ntids;
	int			maxtids;		/* allocated length of tids */
	ItemPointerData *tids;
	/* the key of the current iteration */
	FbtScanInsertData key;
	ItemPointerData scantid;
	/* counters returned */
	int64		ok;
	int64		bounds;
	int64		unsupported;
	int64		checked;
	int64		checked_unsupported;
	int64		mismatch;
} FuzzState;

/* Key column types the fuzz can make values for: the machine kinds' */
static bool
fuzz_type_ok(Oid typid)
{
	switch (typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case FLOAT4OID:
		case FLOAT8OID:
			return true;
		default:
			return false;
	}
}

/* Remember the key values and heap TID of one pivot of a valid page */
static void
fuzz_collect_pivot(FuzzState *st, IndexTuple itup, bool *hasnulls)
{
	TupleDesc	desc = RelationGetDescr(st->rel);
	int			natts = Min(FbtTupleGetNAtts(itup, st->rel), st->nkeyatts);
	ItemPointer htid = FbtTupleGetHeapTID(itup);
	int			i;

	for (i = 0; i < natts; i++)
	{
		FuzzColumn *col = &st->cols[i];
		bool		isnull;
		Datum		d = index_getattr(itup, i + 1, desc, &isnull);

		if (isnull)
		{
			*hasnulls = true;
			continue;
		}
		if (col->nvalues == col->maxvalues)
		{
			col->maxvalues *= 2;
			col->values = repalloc_huge(col->values,
										col->maxvalues * sizeof(Datum));
		}
		col->values[col->nvalues++] = d;
	}
	if (htid != NULL)
	{
		if (st->ntids == st->maxtids)
		{
			st->maxtids *= 2;
			st->tids = repalloc_huge(st->tids,
									 st->maxtids * sizeof(ItemPointerData));
		}
		st->tids[st->ntids++] = *htid;
	}
}

/*
 * Copy every internal page, level by level from the root down, each under
 * its share lock (one page locked at a time, through _fbt_get_endpoint()
 * and the right-links), and gather the values of their pivots.
 */
static void
fuzz_read_pages(FuzzState *st)
{
	FbtMetaPageData *metad = _fbt_getmeta(st->rel, true);
	uint32		rootlevel = metad->fbtm_level;
	uint32		level;
	int			cap = 16;

	st->pages = palloc(cap * BLCKSZ);
	st->blknos = palloc(cap * sizeof(BlockNumber));
	st->hasnulls = palloc(cap * sizeof(bool));
	if (metad->fbtm_root == P_NONE || rootlevel == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" has no internal pages",
						RelationGetRelationName(st->rel))));

	for (level = rootlevel; level >= 1; level--)
	{
		Buffer		buf = _fbt_get_endpoint(st->rel, level, false, NULL);

		for (;;)
		{
			Page		page = BufferGetPage(buf);
			FbtPageOpaque opaque = FbtPageGetOpaque(page);
			OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
			OffsetNumber off;
			BlockNumber next;
			bool		hasnulls = false;

			/* deleted since its left sibling's right-link was read: skip */
			if (P_IGNORE(opaque))
			{
				_fbt_ignored_page_not_rightmost(st->rel,
												BufferGetBlockNumber(buf),
												opaque);
				buf = _fbt_relandgetbuf(st->rel, buf, opaque->fbto_next,
										FBT_READ);
				continue;
			}
			if (st->npages == cap)
			{
				cap *= 2;
				st->pages = repalloc_huge(st->pages, (Size) cap * BLCKSZ);
				st->blknos = repalloc(st->blknos, cap * sizeof(BlockNumber));
				st->hasnulls = repalloc(st->hasnulls, cap * sizeof(bool));
			}
			memcpy(st->pages + (Size) st->npages * BLCKSZ, page, BLCKSZ);
			st->blknos[st->npages] = BufferGetBlockNumber(buf);
			for (off = FirstOffsetNumber; off <= maxoff; off++)
				fuzz_collect_pivot(st, _fbt_getitem(st->rel, buf, off),
								   &hasnulls);
			st->hasnulls[st->npages] = hasnulls;
			st->npages++;

			next = opaque->fbto_next;
			if (next == P_NONE)
				break;
			buf = _fbt_relandgetbuf(st->rel, buf, next, FBT_READ);
		}
		UnlockReleaseBuffer(buf);
	}
}

/* A uniformly random integer in [0, n) (n > 0) */
static inline uint64
fuzz_rand(FuzzState *st, uint64 n)
{
	return pg_prng_uint64_range(&st->prng, 0, n - 1);
}

/* An integer near a value of the column, or an extreme, or random bits */
static int64
fuzz_int(FuzzState *st, int64 base, bool have_base, int64 min, int64 max)
{
	switch (fuzz_rand(st, have_base ? 8 : 4))
	{
		case 0:
			return min;
		case 1:
			return max;
		case 2:
			return (int64) fuzz_rand(st, 3) - 1;
		case 3:
			return (int64) pg_prng_uint64(&st->prng);
		default:
			/* wraps at the type's ends, which the caller's cast does */
			return (int64) ((uint64) base + fuzz_rand(st, 5)) - 2;
	}
}

/* A float near a value of the column, or one of the special values */
static double
fuzz_float(FuzzState *st, double base, bool have_base)
{
	static const double specials[] = {
		0.0, -0.0, 1.0, -1.0, DBL_MIN, DBL_MAX, -DBL_MAX, FLT_MAX
	};

	switch (fuzz_rand(st, have_base ? 8 : 5))
	{
		case 0:
			return get_float8_nan();
		case 1:
			return fuzz_rand(st, 2) ? get_float8_infinity() :
				-get_float8_infinity();
		case 2:
			return specials[fuzz_rand(st, lengthof(specials))];
		case 3:
			{
				uint64		bits = pg_prng_uint64(&st->prng);
				double		d;

				memcpy(&d, &bits, sizeof(d));
				return d;
			}
		case 4:
			return (pg_prng_double(&st->prng) - 0.5) * 2e6;
		case 5:
			return nextafter(base, get_float8_infinity());
		case 6:
			return nextafter(base, -get_float8_infinity());
		default:
			return base;
	}
}

/* A search argument for column i: near a pivot's value, or anything */
static Datum
fuzz_value(FuzzState *st, int i)
{
	FuzzColumn *col = &st->cols[i];
	bool		have = col->nvalues > 0 && fuzz_rand(st, 4) != 0;
	Datum		base = have ? col->values[fuzz_rand(st, col->nvalues)] : 0;

	switch (col->typid)
	{
		case INT2OID:
			return Int16GetDatum((int16) fuzz_int(st, DatumGetInt16(base), have,
												  PG_INT16_MIN, PG_INT16_MAX));
		case INT4OID:
		case DATEOID:
			return Int32GetDatum((int32) fuzz_int(st, DatumGetInt32(base), have,
												  PG_INT32_MIN, PG_INT32_MAX));
		case OIDOID:
			return ObjectIdGetDatum((Oid) fuzz_int(st, DatumGetObjectId(base),
												   have, 0, PG_UINT32_MAX));
		case FLOAT4OID:
			return Float4GetDatum((float4)
								  fuzz_float(st, have ? DatumGetFloat4(base) : 0,
											 have));
		case FLOAT8OID:
			return Float8GetDatum(fuzz_float(st,
											 have ? DatumGetFloat8(base) : 0,
											 have));
		default:
			return Int64GetDatum(fuzz_int(st, DatumGetInt64(base), have,
										  PG_INT64_MIN, PG_INT64_MAX));
	}
}

/*
 * Make the key of one iteration: a random prefix of the key columns with
 * values near those of the pivots (so that ties, and so the heap TID and
 * the truncated attributes, decide some comparisons), random nextkey, and
 * sometimes a scantid near a pivot's heap TID.
 */
static void
fuzz_make_key(FuzzState *st)
{
	FbtScanInsert key = &st->key;
	int			i;

	key->keysz = fuzz_rand(st, 2) ? st->nkeyatts :
		1 + fuzz_rand(st, st->nkeyatts);
	for (i = 0; i < key->keysz; i++)
		key->scankeys[i].sk_argument = fuzz_value(st, i);
	key->nextkey = fuzz_rand(st, 2);
	key->pivotsearch = false;
	key->scantid = NULL;
	if (key->keysz == st->nkeyatts && fuzz_rand(st, 3) == 0)
	{
		if (st->ntids > 0 && fuzz_rand(st, 4) != 0)
		{
			st->scantid = st->tids[fuzz_rand(st, st->ntids)];
			st->scantid.ip_posid += (int) fuzz_rand(st, 3) - 1;
		}
		else
			ItemPointerSet(&st->scantid, (BlockNumber) fuzz_rand(st, 1000),
						   (OffsetNumber) fuzz_rand(st, MaxHeapTuplesPerPage));
		key->scantid = &st->scantid;
	}
	_fbt_prepare_compare(st->rel, key);
	_fbt_prepare_unlocked(st->rel, key);
	if (!key->unlocked_ok)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("keys of index \"%s\" cannot be searched without a lock",
						RelationGetRelationName(st->rel)),
				 errhint("The fuzz needs fastbtree.fast_compare on.")));
}

/* Line pointer off (from 1) of the copy pg, which must be within it */
#define FUZZ_LP(pg, off) \
	((ItemIdData *) ((pg) + SizeOfPageHeaderData + \
					 ((off) - 1) * sizeof(ItemIdData)))

/*
 * The line pointers a mutation may touch: those below pd_lower (whatever
 * it now says), and never past the page.
 */
static inline int
fuzz_nlp(const char *pg)
{
	int			lower = Min(((PageHeader) pg)->pd_lower, BLCKSZ);

	if (lower <= SizeOfPageHeaderData)
		return 0;
	return (lower - SizeOfPageHeaderData) / sizeof(ItemIdData);
}

/* A 16-bit page offset: near the interesting limits, or random */
static uint16
fuzz_offset(FuzzState *st, uint16 orig)
{
	static const int limits[] = {
		0, SizeOfPageHeaderData, BLCKSZ - MAXALIGN(sizeof(FbtPageOpaqueData)),
		BLCKSZ, 0x7FFF, 0xFFFF
	};

	switch (fuzz_rand(st, 4))
	{
		case 0:
			return (uint16) pg_prng_uint32(&st->prng);
		case 1:
			return orig ^ (1 << fuzz_rand(st, 16));
		case 2:
			return (uint16) (orig + (int) fuzz_rand(st, 17) - 8);
		default:
			return (uint16) (limits[fuzz_rand(st, lengthof(limits))] +
							 (int) fuzz_rand(st, 9) - 4);
	}
}

/* Wild line pointers: offsets near 0 or the page end, odd, lengths, flags */
static void
fuzz_mutate_lp(FuzzState *st, char *pg)
{
	int			nlp = fuzz_nlp(pg);
	int			n = 1 + fuzz_rand(st, 4);

	if (nlp == 0)
		return;
	while (n-- > 0)
	{
		ItemIdData *lp = FUZZ_LP(pg, 1 + fuzz_rand(st, nlp));

		switch (fuzz_rand(st, 6))
		{
			case 0:
				lp->lp_off = fuzz_rand(st, 2 * MAXIMUM_ALIGNOF + 1) * 4;
				break;
			case 1:
				lp->lp_off = BLCKSZ - fuzz_rand(st, 65);
				break;
			case 2:
				lp->lp_off |= 1 << fuzz_rand(st, 3);
				break;
			case 3:
				lp->lp_off = fuzz_offset(st, lp->lp_off) & 0x7FFF;
				break;
			case 4:
				lp->lp_len = fuzz_rand(st, 2) ? 0 : 0x7FFF;
				break;
			default:
				lp->lp_flags = fuzz_rand(st, 4);
				break;
		}
	}
}

/* The tuple a line pointer designates, if it lies within the page */
static IndexTuple
fuzz_pick_tuple(FuzzState *st, char *pg)
{
	int			nlp = fuzz_nlp(pg);
	ItemIdData *lp;

	if (nlp == 0)
		return NULL;
	lp = FUZZ_LP(pg, 1 + fuzz_rand(st, nlp));
	if (lp->lp_off + sizeof(IndexTupleData) > BLCKSZ)
		return NULL;
	return (IndexTuple) (pg + lp->lp_off);
}

/*
 * Odd tuple lengths and flags in t_info, attribute counts in t_tid, of the
 * tuple at offset itemoff of pg (whose header lies within the page).
 */
static void
fuzz_mutate_tuple_at(FuzzState *st, char *pg, uint32 itemoff)
{
	IndexTuple	itup = (IndexTuple) (pg + itemoff);
	uint16		size = itup->t_info & INDEX_SIZE_MASK;
	uint16		posid;

	switch (fuzz_rand(st, 6))
	{
		case 0:
			size = fuzz_rand(st, 2) ? fuzz_rand(st, 2 * sizeof(IndexTupleData)) :
				fuzz_rand(st, INDEX_SIZE_MASK + 1);
			break;
		case 1:
			size += (int) fuzz_rand(st, 9) - 4;
			break;
		case 2:
			/* just past the special space or the page: off by a little */
			size = BLCKSZ - itemoff - MAXALIGN(sizeof(FbtPageOpaqueData)) +
				fuzz_rand(st, 2 * MAXALIGN(sizeof(FbtPageOpaqueData)) + 8);
			break;
		case 3:
			itup->t_info ^= fuzz_rand(st, 2) ? INDEX_AM_RESERVED_BIT :
				INDEX_NULL_MASK;
			return;
		case 4:
			posid = ItemPointerGetOffsetNumberNoCheck(&itup->t_tid);
			posid = fuzz_rand(st, 2) ? posid ^ FBT_PIVOT_HEAPTID :
				(posid & ~FBT_OFFSET_MASK) | fuzz_rand(st, FBT_OFFSET_MASK + 1);
			itup->t_tid.ip_posid = posid;
			return;
		default:
			itup->t_info = (uint16) pg_prng_uint32(&st->prng);
			return;
	}
	itup->t_info = (itup->t_info & ~INDEX_SIZE_MASK) | (size & INDEX_SIZE_MASK);
}

/*
 * Mutate the headers of a few tuples, or of about half of them: a search
 * probes only a few items, so a page-wide change meets it far more often.
 */
static void
fuzz_mutate_tuples(FuzzState *st, char *pg)
{
	int			nlp = fuzz_nlp(pg);
	bool		all = fuzz_rand(st, 4) == 0;
	int			n = all ? nlp : 1 + fuzz_rand(st, 3);
	int			i;

	for (i = 0; i < n && nlp > 0; i++)
	{
		ItemIdData *lp = FUZZ_LP(pg, all ? i + 1 : 1 + fuzz_rand(st, nlp));

		if (all && fuzz_rand(st, 2))
			continue;
		if (lp->lp_off + sizeof(IndexTupleData) <= BLCKSZ)
			fuzz_mutate_tuple_at(st, pg, lp->lp_off);
	}
}

/* Garbage in the key bytes of a few tuples */
static void
fuzz_mutate_keys(FuzzState *st, char *pg)
{
	int			n = 1 + fuzz_rand(st, 8);

	while (n-- > 0)
	{
		IndexTuple	itup = fuzz_pick_tuple(st, pg);
		char	   *p;
		int			len;

		if (itup == NULL)
			continue;
		p = (char *) itup + sizeof(IndexTupleData);
		len = Min(16, pg + BLCKSZ - p);
		while (len-- > 0)
			if (fuzz_rand(st, 2))
				*p++ = (char) pg_prng_uint32(&st->prng);
			else
				p++;
	}
}

/* Fill [from, BLCKSZ) of pg with random bytes */
static void
fuzz_random_tail(FuzzState *st, char *pg, int from)
{
	int			i;

	for (i = from; i + sizeof(uint64) <= BLCKSZ; i += sizeof(uint64))
	{
		uint64		w = pg_prng_uint64(&st->prng);

		memcpy(pg + i, &w, sizeof(w));
	}
}

/*
 * Apply one mutation to the copy pg: header fields, special-space fields,
 * line pointers, tuple headers, key bytes, bit flips, a page torn between
 * two pages' contents, or random bytes (with or without a plausible
 * header, so that the line pointer checks see random data too).
 */
static void
fuzz_mutate(FuzzState *st, char *pg)
{
	PageHeader	phdr = (PageHeader) pg;
	FbtPageOpaque opaque = (FbtPageOpaque)
		(pg + BLCKSZ - MAXALIGN(sizeof(FbtPageOpaqueData)));

	switch (fuzz_rand(st, 11))
	{
		case 0:
			phdr->pd_lower = fuzz_offset(st, phdr->pd_lower);
			break;
		case 1:
			if (fuzz_rand(st, 2))
				phdr->pd_upper = fuzz_offset(st, phdr->pd_upper);
			else
				phdr->pd_special = fuzz_offset(st, phdr->pd_special);
			break;
		case 2:
			switch (fuzz_rand(st, 4))
			{
				case 0:
					opaque->fbto_flags ^= 1 << fuzz_rand(st, 16);
					break;
				case 1:
					opaque->fbto_level = fuzz_rand(st, 2) ? 0 :
						pg_prng_uint32(&st->prng);
					break;
				case 2:
					opaque->fbto_next = opaque->fbto_next == P_NONE ?
						pg_prng_uint32(&st->prng) : P_NONE;
					break;
				default:
					opaque->fbto_page_id = (uint16) pg_prng_uint32(&st->prng);
					break;
			}
			break;
		case 3:
		case 4:
			fuzz_mutate_lp(st, pg);
			break;
		case 5:
		case 6:
			fuzz_mutate_tuples(st, pg);
			break;
		case 7:
			fuzz_mutate_keys(st, pg);
			break;
		case 8:
			{
				int			n = 1 + fuzz_rand(st, 16);

				while (n-- > 0)
					pg[fuzz_rand(st, BLCKSZ)] ^= 1 << fuzz_rand(st, 8);
			}
			break;
		case 9:
			{
				/* torn: the tail from another page, or zeroes */
				int			at = fuzz_rand(st, 2) ?
					512 * fuzz_rand(st, BLCKSZ / 512) : fuzz_rand(st, BLCKSZ);

				if (fuzz_rand(st, 4) == 0)
					memset(pg + at, 0, BLCKSZ - at);
				else
					memcpy(pg + at,
						   st->pages + fuzz_rand(st, st->npages) * BLCKSZ + at,
						   BLCKSZ - at);
			}
			break;
		default:
			{
				/* random bytes, with a header the search accepts or not */
				bool		plausible = fuzz_rand(st, 2);
				uint16		lower = phdr->pd_lower;
				FbtPageOpaqueData saved = *opaque;

				fuzz_random_tail(st, pg, 0);
				if (plausible)
				{
					phdr->pd_lower = lower;
					phdr->pd_special = BLCKSZ -
						MAXALIGN(sizeof(FbtPageOpaqueData));
					*opaque = saved;
				}
			}
			break;
	}
}

/*
 * The locked answer for key on the internal page in buf (pinned and
 * share-locked), as _fbt_search() decides it: _fbt_binsrch(), then the
 * high-key test when the search ends at the page's right edge.  Compared
 * with the unlocked answer step on the same bytes; true if they agree.
 */
static bool
fuzz_same_as_locked(FuzzState *st, Buffer buf, FbtUnlockedResult res,
					const FbtInnerStep *step, bool hasnulls)
{
	Page		page = BufferGetPage(buf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	FbtScanInsert key = &st->key;
	OffsetNumber offnum;
	bool		moveright;

	if (res == FBT_UNLOCKED_UNSUPPORTED)
		return hasnulls;
	if (res != FBT_UNLOCKED_OK)
		return false;
	if (step->flags != opaque->fbto_flags ||
		step->level != opaque->fbto_level ||
		step->prev != opaque->fbto_prev || step->next != opaque->fbto_next)
		return false;

	offnum = _fbt_binsrch(st->rel, key, buf);
	moveright = !P_RIGHTMOST(opaque) &&
		offnum >= PageGetMaxOffsetNumber(page) &&
		_fbt_compare(st->rel, key, buf, P_HIKEY) >= (key->nextkey ? 0 : 1);
	if (moveright || step->moveright)
		return moveright == step->moveright;
	return step->offnum == offnum &&
		step->child ==
		FbtPivotGetDownLink(_fbt_getitem_header(st->rel, buf, offnum));
}

/* Report the first disagreement with the locked search, with its key */
static void
fuzz_report_mismatch(FuzzState *st, BlockNumber blkno, FbtUnlockedResult res,
					 const FbtInnerStep *step)
{
	StringInfoData buf;
	int			i;

	initStringInfo(&buf);
	for (i = 0; i < st->key.keysz; i++)
		appendStringInfo(&buf, "%s" INT64_FORMAT, i > 0 ? ", " : "",
						 (int64) st->key.scankeys[i].sk_argument);
	ereport(WARNING,
			(errmsg("unlocked search of block %u of index \"%s\" disagrees with the locked search",
					blkno, RelationGetRelationName(st->rel)),
			 errdetail("Result %d, moveright %d, offset %u, child %u; key datums (%s), nextkey %d, scantid %s.",
					   (int) res, (int) step->moveright, step->offnum,
					   step->child, buf.data, (int) st->key.nextkey,
					   st->key.scantid ? "set" : "none")));
}

static void
fuzz_count(FuzzState *st, FbtUnlockedResult res)
{
	switch (res)
	{
		case FBT_UNLOCKED_OK:
			st->ok++;
			break;
		case FBT_UNLOCKED_BOUNDS:
			st->bounds++;
			break;
		case FBT_UNLOCKED_UNSUPPORTED:
			st->unsupported++;
			break;
	}
}

/*
 * The iterations, on the page buffer pg (BLCKSZ bytes between guard
 * regions).  Unmodified iterations copy the shared page again under its
 * share lock and compare with the locked search there, so that a
 * concurrent change of the page cannot cause a false mismatch.
 */
static void
fuzz_run(FuzzState *st, char *pg, int64 iterations)
{
	int64		it;

	for (it = 0; it < iterations; it++)
	{
		int			p = fuzz_rand(st, st->npages);
		FbtInnerStep step;
		FbtUnlockedResult res;

		if ((it & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		fuzz_make_key(st);
		if (fuzz_rand(st, FUZZ_UNMODIFIED_EVERY) == 0)
		{
			Buffer		buf = _fbt_getbuf(st->rel, st->blknos[p], FBT_READ);

			memcpy(pg, BufferGetPage(buf), BLCKSZ);
			res = _fbt_search_inner_unlocked(&st->key, pg, &step);
			st->checked++;
			if (res == FBT_UNLOCKED_UNSUPPORTED)
				st->checked_unsupported++;
			if (!fuzz_same_as_locked(st, buf, res, &step, st->hasnulls[p]))
			{
				if (st->mismatch == 0)
					fuzz_report_mismatch(st, st->blknos[p], res, &step);
				st->mismatch++;
			}
			UnlockReleaseBuffer(buf);
		}
		else
		{
			int			n = fuzz_rand(st, 4) == 0 ? 2 + fuzz_rand(st, 3) : 1;

			memcpy(pg, st->pages + (Size) p * BLCKSZ, BLCKSZ);
			while (n-- > 0)
				fuzz_mutate(st, pg);
			res = _fbt_search_inner_unlocked(&st->key, pg, &step);
		}
		fuzz_count(st, res);
	}
}

FBT_FUNCTION_INFO_V1(fastbtree_fuzz_unlocked);

/*
 * fastbtree_fuzz_unlocked(index regclass, iterations int8, seed int8)
 * returns one row (pages int8, iterations int8, ok int8, bounds int8,
 * unsupported int8, unmodified_checked int8, unmodified_unsupported int8,
 * unmodified_mismatch int8).
 * Assert-enabled builds only; not in the extension script.
 *
 * Copies every internal page of the index (each under its share lock, one
 * at a time), then runs iterations times: a random insertion scankey of
 * the index's key column types (a random prefix of the columns, values
 * near the pivots' or special ones, random nextkey, sometimes a scantid),
 * and _fbt_search_inner_unlocked() on a copy of a random internal page
 * placed between 64kB PROT_NONE guard regions, so that a read outside the
 * page raises SIGSEGV and the backend dies.  7 in 8 copies are mutated
 * (header fields, line pointers, tuple lengths and flags, key bytes, bit
 * flips, torn or random pages); the others are copied afresh from the
 * shared page under its share lock and must give FBT_UNLOCKED_OK with the
 * locked search's answer (_fbt_binsrch() and the high-key test: same
 * move-right, offset and downlink), or FBT_UNLOCKED_UNSUPPORTED on a page
 * with NULL pivot keys; any other answer counts in unmodified_mismatch,
 * the first one also as a WARNING.  ok, bounds, unsupported count the
 * results of all iterations; unmodified_unsupported the unmodified
 * iterations that met a NULL pivot key.  The run is a function of the
 * seed and the pages (pg_prng), so counts repeat on an unchanged index.
 *
 * Holds AccessShareLock on the index; no page lock between iterations but
 * during the copy and the locked search of an unmodified iteration.
 * Errors: 42501 unless superuser; 42809 for a relation that is not a
 * fastbtree index; 22023 for iterations < 0; 0A000 for a key column type
 * without a machine comparison; 55000 for an index without internal
 * pages or keys that cannot be searched unlocked (fastbtree.fast_compare
 * off); XX002 from the page checks; 53200 if the guard mapping fails.
 */
Datum
fastbtree_fuzz_unlocked(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	int64		iterations = PG_GETARG_INT64(1);
	int64		seed = PG_GETARG_INT64(2);
	FuzzState  *st;
	TupleDesc	tupdesc;
	Size		maplen = FUZZ_GUARD + BLCKSZ + FUZZ_GUARD;
	char	   *map;
	Datum		values[8];
	bool		nulls[8] = {false, false, false, false, false, false, false,
	false};
	int			i;

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser to run the fastbtree fuzz")));
	if (iterations < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("iterations must not be negative")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	st = palloc0(sizeof(FuzzState));
	st->rel = _fbt_open_index(relid);
	pg_prng_seed(&st->prng, (uint64) seed);
	st->nkeyatts = IndexRelationGetNumberOfKeyAttributes(st->rel);
	for (i = 0; i < st->nkeyatts; i++)
	{
		Oid			typid = TupleDescAttr(RelationGetDescr(st->rel), i)->atttypid;

		if (!fuzz_type_ok(typid))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column %d of index \"%s\" has a type the fuzz cannot search without a lock",
							i + 1, RelationGetRelationName(st->rel))));
		st->cols[i].typid = typid;
		st->cols[i].maxvalues = 256;
		st->cols[i].values = palloc(256 * sizeof(Datum));
		ScanKeyEntryInitializeWithInfo(&st->key.scankeys[i],
									   st->rel->rd_indoption[i] << 24,
									   (AttrNumber) (i + 1),
									   InvalidStrategy, InvalidOid,
									   st->rel->rd_indcollation[i],
									   index_getprocinfo(st->rel, i + 1,
														 FBTORDER_PROC),
									   (Datum) 0);
	}
	st->maxtids = 256;
	st->tids = palloc(256 * sizeof(ItemPointerData));
	fuzz_read_pages(st);

	map = mmap(NULL, maplen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not map the fuzz page: %m")));
	if (mprotect(map + FUZZ_GUARD, BLCKSZ, PROT_READ | PROT_WRITE) != 0)
	{
		int			save_errno = errno;

		munmap(map, maplen);
		errno = save_errno;
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not map the fuzz page: %m")));
	}
	PG_TRY();
	{
		fuzz_run(st, map + FUZZ_GUARD, iterations);
	}
	PG_FINALLY();
	{
		munmap(map, maplen);
	}
	PG_END_TRY();

	relation_close(st->rel, AccessShareLock);
	values[0] = Int64GetDatum(st->npages);
	values[1] = Int64GetDatum(iterations);
	values[2] = Int64GetDatum(st->ok);
	values[3] = Int64GetDatum(st->bounds);
	values[4] = Int64GetDatum(st->unsupported);
	values[5] = Int64GetDatum(st->checked);
	values[6] = Int64GetDatum(st->checked_unsupported);
	values[7] = Int64GetDatum(st->mismatch);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

#endif							/* USE_ASSERT_CHECKING */
