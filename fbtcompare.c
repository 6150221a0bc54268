/*-------------------------------------------------------------------------
 *
 * fbtcompare.c
 *	  The comparison that drives descent and binary search in fastbtree,
 *	  specialized per key column and per page kind.
 *
 * An insertion scankey's comparators are classified once, when the key is
 * made (_fbt_prepare_compare): a column whose opfamily comparison is one of
 * core's integer, oid, date/time or float comparisons, with pass-by-value
 * operands, is compared as machine values; text under the "C" collation is
 * compared with memcmp on the stored bytes; everything else calls support
 * proc 1 through fmgr.  The machine comparisons reproduce core's
 * functions exactly, including float NaN ordering (NaN equals NaN and
 * sorts above every other value; -0 equals 0).
 *
 * Leaf data items always carry every attribute and their heap TID is
 * t_tid (a posting list's range, only looked at when the key has a heap
 * TID), so _fbt_compare_leaf never decodes an attribute count; only
 * pivots (internal items and high keys) go through _fbt_compare_pivot,
 * which handles truncated attributes and the optional heap TID.
 *
 * fastbtree.fast_compare = off classifies every column as fmgr, so the
 * benchmark can measure the gain and tests can run both ways.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/itup.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"

#include "fastbtree.h"

bool		fbt_fast_compare = true;

/* float8_cmp_internal()'s order: NaN = NaN > everything else; -0 = 0 */
static inline int32
_fbt_cmp_float(double a, double b)
{
	if (unlikely(isnan(a)))
		return isnan(b) ? 0 : 1;
	if (unlikely(isnan(b)))
		return -1;
	return (a > b) - (a < b);
}

/*
 * Machine comparison of a search argument (iarg or farg) with a non-null
 * value of a column of machine kind: < 0, 0, > 0 as the argument sorts
 * before, with, or after the value (ascending order; callers apply DESC).
 */
static inline int32
_fbt_machine_cmp(FbtCmpKind kind, int64 iarg, double farg, Datum datum)
{
	switch (kind)
	{
		case FBT_CMP_INT2:
			return (iarg > DatumGetInt16(datum)) - (iarg < DatumGetInt16(datum));
		case FBT_CMP_INT4:
			return (iarg > DatumGetInt32(datum)) - (iarg < DatumGetInt32(datum));
		case FBT_CMP_INT8:
			return (iarg > DatumGetInt64(datum)) - (iarg < DatumGetInt64(datum));
		case FBT_CMP_OID:
			return (iarg > (int64) DatumGetObjectId(datum)) -
				(iarg < (int64) DatumGetObjectId(datum));
		case FBT_CMP_FLOAT4:
			return _fbt_cmp_float(farg, (double) DatumGetFloat4(datum));
		default:
			return _fbt_cmp_float(farg, DatumGetFloat8(datum));
	}
}

static inline int32 _fbt_cmp_first_machine(FbtScanInsert key, IndexTuple itup);
static inline bool _fbt_machine_kind(uint8 kind);

/*
 * _fbt_machine_order() -- three-way comparison of an index datum with a
 * machine argument (from _fbt_machine_arg()) of a key of machine kind kind:
 * negative, zero or positive as the datum comes before, with or after the
 * argument in ascending order (callers apply DESC).  No errors.
 */
int32
_fbt_machine_order(FbtCmpKind kind, int64 iarg, double farg, Datum datum)
{
	return -_fbt_machine_cmp(kind, iarg, farg, datum);
}

/*
 * _fbt_machine_arg() -- decode a search argument of argwidth bytes (2, 4 or
 * 8; the argument's type as the comparison proc declares it) for a column
 * of machine kind kind: integers and oids into *iarg, floats into *farg.
 */
void
_fbt_machine_arg(FbtCmpKind kind, int argwidth, Datum arg, int64 *iarg,
				 double *farg)
{
	if (kind == FBT_CMP_FLOAT4 || kind == FBT_CMP_FLOAT8)
		*farg = argwidth == 4 ? (double) DatumGetFloat4(arg) :
			DatumGetFloat8(arg);
	else if (kind == FBT_CMP_OID)
		*iarg = (int64) DatumGetObjectId(arg);
	else
		*iarg = argwidth == 2 ? (int64) DatumGetInt16(arg) :
			argwidth == 4 ? (int64) DatumGetInt32(arg) : DatumGetInt64(arg);
}

/* Classify one comparison proc; fills the machine-level argument */
static FbtCmpKind
_fbt_classify(Oid procoid, Form_pg_attribute att, ScanKey sk,
			  int64 *iarg, double *farg, int *argwidthp)
{
	int			colwidth = 0;
	int			argwidth = 0;
	bool		isfloat = false;
	bool		isoid = false;
	Datum		arg = sk->sk_argument;

	switch (procoid)
	{
		case F_BTINT2CMP:
			colwidth = 2, argwidth = 2;
			break;
		case F_BTINT24CMP:
			colwidth = 2, argwidth = 4;
			break;
		case F_BTINT28CMP:
			colwidth = 2, argwidth = 8;
			break;
		case F_BTINT4CMP:
		case F_DATE_CMP:
			colwidth = 4, argwidth = 4;
			break;
		case F_BTINT42CMP:
			colwidth = 4, argwidth = 2;
			break;
		case F_BTINT48CMP:
			colwidth = 4, argwidth = 8;
			break;
		case F_BTINT8CMP:
		case F_TIME_CMP:
		case F_TIMESTAMP_CMP:
		case F_TIMESTAMPTZ_CMP:
			colwidth = 8, argwidth = 8;
			break;
		case F_BTINT82CMP:
			colwidth = 8, argwidth = 2;
			break;
		case F_BTINT84CMP:
			colwidth = 8, argwidth = 4;
			break;
		case F_BTOIDCMP:
			colwidth = 4, argwidth = 4, isoid = true;
			break;
		case F_BTFLOAT4CMP:
			colwidth = 4, argwidth = 4, isfloat = true;
			break;
		case F_BTFLOAT48CMP:
			colwidth = 4, argwidth = 8, isfloat = true;
			break;
		case F_BTFLOAT8CMP:
			colwidth = 8, argwidth = 8, isfloat = true;
			break;
		case F_BTFLOAT84CMP:
			colwidth = 8, argwidth = 4, isfloat = true;
			break;
		case F_BTTEXTCMP:
			if (att->attlen == -1 && OidIsValid(sk->sk_collation) &&
				fbt_collation_is_c(sk->sk_collation))
				return FBT_CMP_TEXT_C;
			return FBT_CMP_FMGR;
		default:
			return FBT_CMP_FMGR;
	}

	/* the stored value must be what the comparison expects, by value */
	if (att->attlen != colwidth || !att->attbyval ||
		(argwidth == 8 && !FLOAT8PASSBYVAL))
		return FBT_CMP_FMGR;

	*argwidthp = argwidth;
	if (isfloat)
	{
		_fbt_machine_arg(colwidth == 4 ? FBT_CMP_FLOAT4 : FBT_CMP_FLOAT8,
						 argwidth, arg, iarg, farg);
		return colwidth == 4 ? FBT_CMP_FLOAT4 : FBT_CMP_FLOAT8;
	}
	if (isoid)
	{
		_fbt_machine_arg(FBT_CMP_OID, argwidth, arg, iarg, farg);
		return FBT_CMP_OID;
	}
	_fbt_machine_arg(FBT_CMP_INT8, argwidth, arg, iarg, farg);
	return colwidth == 2 ? FBT_CMP_INT2 :
		colwidth == 4 ? FBT_CMP_INT4 : FBT_CMP_INT8;
}

/*
 * _fbt_classify_key() -- the FbtCmpKind of a search key whose argument is
 * compared by support proc procoid; fills the machine-level argument.
 * Text kinds are not used for search keys (FBT_CMP_FMGR is returned).
 * With fastbtree.fast_compare off, always FBT_CMP_FMGR.
 */
FbtCmpKind
_fbt_classify_key(Relation rel, ScanKey sk, Oid procoid, int64 *iarg,
				  double *farg, int *argwidth)
{
	FbtCmpKind	kind;

	if (!fbt_fast_compare || (sk->sk_flags & SK_ISNULL))
		return FBT_CMP_FMGR;
	kind = _fbt_classify(procoid,
						 TupleDescAttr(RelationGetDescr(rel), sk->sk_attno - 1),
						 sk, iarg, farg, argwidth);
	return kind == FBT_CMP_TEXT_C ? FBT_CMP_FMGR : kind;
}

/*
 * _fbt_machine_test() -- evaluate "value op argument" for a search key of
 * machine kind (not FBT_CMP_FMGR) on a non-null value, where op has btree
 * strategy strat: the operator of an opfamily agrees with its support
 * proc 1, so the machine comparison decides it without fmgr.
 */
bool
_fbt_machine_test(FbtCmpKind kind, StrategyNumber strat, int64 iarg,
				  double farg, Datum datum)
{
	int32		r = _fbt_machine_cmp(kind, iarg, farg, datum);

	switch (strat)
	{
		case BTLessStrategyNumber:
			return r > 0;
		case BTLessEqualStrategyNumber:
			return r >= 0;
		case BTEqualStrategyNumber:
			return r == 0;
		case BTGreaterEqualStrategyNumber:
			return r <= 0;
		default:
			return r < 0;
	}
}

/*
 * _fbt_prepare_compare() -- classify the comparators of an insertion
 * scankey whose scankeys[0 .. keysz-1] are filled in (support proc 1 in
 * sk_func, argument, flags).  Must be called whenever the arguments
 * change.  With fastbtree.fast_compare off, every column uses fmgr.
 */
void
_fbt_prepare_compare(Relation rel, FbtScanInsert key)
{
	int			i;

	for (i = 0; i < key->keysz; i++)
		_fbt_prepare_compare_col(rel, key, i);
}

/*
 * _fbt_prepare_compare_col() -- classify column i of an insertion scankey
 * (see _fbt_prepare_compare).  A "C" text argument that is compressed or
 * out of line is detoasted once, in the current memory context, and kept
 * in key->tcopy[i] for _fbt_free_scankey_args().
 */
void
_fbt_prepare_compare_col(Relation rel, FbtScanInsert key, int i)
{
	ScanKey		sk = &key->scankeys[i];
	int			argwidth;

	key->cmpkind[i] = FBT_CMP_FMGR;
	key->tcopy[i] = NULL;
	if (!fbt_fast_compare || (sk->sk_flags & SK_ISNULL))
		return;
	key->cmpkind[i] = _fbt_classify(sk->sk_func.fn_oid,
									TupleDescAttr(RelationGetDescr(rel),
												  sk->sk_attno - 1),
									sk, &key->iarg[i], &key->farg[i],
									&argwidth);
	if (key->cmpkind[i] == FBT_CMP_TEXT_C)
	{
		text	   *t = DatumGetTextPP(sk->sk_argument);

		key->targ[i] = VARDATA_ANY(t);
		key->targlen[i] = VARSIZE_ANY_EXHDR(t);
		/* a compressed or out-of-line argument was copied; see tcopy */
		if ((Pointer) t != DatumGetPointer(sk->sk_argument))
			key->tcopy[i] = t;
	}
}

/*
 * Compare argument i of key with a non-null attribute value: < 0, 0, > 0
 * as the argument sorts before, with, or after the value in index order.
 */
static inline int32
_fbt_cmp_value(FbtScanInsert key, int i, Datum datum)
{
	ScanKey		sk = &key->scankeys[i];
	int32		r;

	switch ((FbtCmpKind) key->cmpkind[i])
	{
		case FBT_CMP_INT2:
		case FBT_CMP_INT4:
		case FBT_CMP_INT8:
		case FBT_CMP_OID:
		case FBT_CMP_FLOAT4:
		case FBT_CMP_FLOAT8:
			r = _fbt_machine_cmp((FbtCmpKind) key->cmpkind[i], key->iarg[i],
								 key->farg[i], datum);
			break;
		case FBT_CMP_SORTSUPPORT:
			r = key->ssup[i]->comparator(sk->sk_argument, datum, key->ssup[i]);
			break;
		case FBT_CMP_TEXT_C:
			{
				struct varlena *v = (struct varlena *) DatumGetPointer(datum);

				if (likely(!VARATT_IS_EXTENDED(v) || VARATT_IS_SHORT(v)))
				{
					Size		vlen = VARSIZE_ANY_EXHDR(v);
					Size		alen = key->targlen[i];

					r = memcmp(key->targ[i], VARDATA_ANY(v), Min(alen, vlen));
					if (r == 0)
						r = (alen > vlen) - (alen < vlen);
					else
						r = r > 0 ? 1 : -1;
					break;
				}
			}
			/* a compressed value: let the function detoast it */
			/* FALLTHROUGH */
		default:
			r = DatumGetInt32(FunctionCall2Coll(&sk->sk_func,
												sk->sk_collation,
												datum, sk->sk_argument));
			INVERT_COMPARE_RESULT(r);
			break;
	}
	if (sk->sk_flags & FBT_SK_DESC)
		INVERT_COMPARE_RESULT(r);
	return r;
}

/* The same with NULL handling: NULLs last unless FBT_SK_NULLS_FIRST */
static inline int32
_fbt_cmp_attr(FbtScanInsert key, int i, Datum datum, bool isnull)
{
	ScanKey		sk = &key->scankeys[i];

	if (sk->sk_flags & SK_ISNULL)
	{
		if (isnull)
			return 0;
		return (sk->sk_flags & FBT_SK_NULLS_FIRST) ? -1 : 1;
	}
	if (isnull)
		return (sk->sk_flags & FBT_SK_NULLS_FIRST) ? 1 : -1;
	return _fbt_cmp_value(key, i, datum);
}

/*
 * Check that a key value lies within the page before a comparator reads
 * it: a damaged varlena length, or lengths that put a value past the end,
 * would otherwise make it read outside the page.  The binary search bounds
 * only an item's start (FBT_MAX_FAST_OFFSET: its header is in the page);
 * every value compared is checked here against the end of the page's item
 * space, which _fbt_checkpage() checked, in attribute order, so that
 * index_getattr() only ever steps over values already checked.  A value
 * that lies in the page but past its own tuple is damage this cannot see;
 * it can only give a wrong comparison, on a page that is damaged anyway.
 */
static inline void
_fbt_check_value(Relation rel, Buffer buf, OffsetNumber offnum, Page page,
				 Form_pg_attribute att, Datum datum)
{
	const char *end = (const char *) page + ((PageHeader) page)->pd_special;
	const char *p = att->attbyval ? NULL : DatumGetPointer(datum);

	if (att->attlen < 0 ?
		unlikely(!_fbt_value_ok(att->attlen, p, end)) :
		unlikely(p != NULL && p + att->attlen > end))
		_fbt_corrupt_item(rel, buf, offnum,
						  "A key value has an invalid length or extends past the end of the page");
}

/*
 * The heap TID part of comparing a key with a posting list tuple: equal
 * anywhere within its TID range (the caller then finds the position,
 * _fbt_posting_position()), as nbtree's _bt_compare() does.
 */
static pg_noinline int32
_fbt_compare_posting(Relation rel, FbtScanInsert key, IndexTuple itup,
					 Buffer buf, OffsetNumber offnum)
{
	Page		page = BufferGetPage(buf);
	int32		r;

	if (unlikely(!FbtTupleIsPosting(itup) || !_fbt_posting_ok(itup) ||
				 (char *) itup + IndexTupleSize(itup) >
				 (char *) page + ((PageHeader) page)->pd_special))
		_fbt_corrupt_item(rel, buf, offnum,
						  FbtTupleIsPosting(itup) ?
						  "The posting list extends past the end of its tuple" :
						  "A data item is marked as a pivot tuple");
	r = ItemPointerCompare(key->scantid, FbtTupleGetHeapTID(itup));
	if (r <= 0)
		return r;
	return ItemPointerCompare(key->scantid, FbtTupleGetMaxHeapTID(itup)) > 0 ?
		1 : 0;
}

/*
 * Compare the key with a leaf data item: every attribute is present and
 * the heap TID is t_tid (or a posting list's TID range).  The first attribute is read at the data offset
 * without index_getattr() when the tuple has no NULLs.  buf and offnum
 * locate the item for error reports.
 */
static inline int32
_fbt_compare_leaf(Relation rel, FbtScanInsert key, IndexTuple itup,
				  Buffer buf, OffsetNumber offnum, Page page)
{
	TupleDesc	itupdesc = RelationGetDescr(rel);
	int			i;

	for (i = 0; i < key->keysz; i++)
	{
		Form_pg_attribute att = TupleDescAttr(itupdesc, i);
		Datum		datum;
		bool		isNull;
		int32		result;

		if (i == 0 && !IndexTupleHasNulls(itup))
		{
			datum = fetchatt(att,
							 (char *) itup + MAXALIGN(sizeof(IndexTupleData)));
			isNull = false;
		}
		else
			datum = index_getattr(itup, i + 1, itupdesc, &isNull);
		if (!isNull)
			_fbt_check_value(rel, buf, offnum, page, att, datum);
		result = _fbt_cmp_attr(key, i, datum, isNull);
		if (result != 0)
			return result;
	}
	if (key->scantid == NULL)
		return 0;
	if (unlikely(itup->t_info & INDEX_AM_RESERVED_BIT))
		return _fbt_compare_posting(rel, key, itup, buf, offnum);
	return ItemPointerCompare(key->scantid, &itup->t_tid);
}

/*
 * Compare the key with a pivot tuple (an internal item or a high key):
 * attributes beyond the pivot's count, and a missing heap TID, are minus
 * infinity.
 */
static inline int32
_fbt_compare_pivot(Relation rel, FbtScanInsert key, IndexTuple itup,
				   Buffer buf, OffsetNumber offnum, Page page)
{
	TupleDesc	itupdesc = RelationGetDescr(rel);
	int			ntupatts = ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) &
		FBT_OFFSET_MASK;
	int			ncmpkey = Min(ntupatts, key->keysz);
	ItemPointer heapTid;
	int			i;

	for (i = 0; i < ncmpkey; i++)
	{
		Datum		datum;
		bool		isNull;
		int32		result;

		datum = index_getattr(itup, i + 1, itupdesc, &isNull);
		if (!isNull)
			_fbt_check_value(rel, buf, offnum, page,
							 TupleDescAttr(itupdesc, i), datum);
		result = _fbt_cmp_attr(key, i, datum, isNull);
		if (result != 0)
			return result;
	}
	if (key->keysz > ntupatts)
		return 1;
	heapTid = FbtTupleGetHeapTID(itup);
	if (key->scantid == NULL)
	{
		/*
		 * Equal on every attribute the pivot kept, and the pivot's heap TID
		 * was truncated (minus infinity): nothing equal to the key lies left
		 * of it (items there are < the pivot's attributes), so the key
		 * compares greater and the search goes right, as nbtree's
		 * _bt_compare() does.  A key that omits attributes the pivot has
		 * (a prefix search) is equal: matches may be on both sides.
		 */
		if (unlikely(key->pivotsearch))
		{
			/* the key's own missing TID and attributes are minus infinity */
			return (key->keysz < ntupatts || heapTid != NULL) ? -1 : 0;
		}
		if (key->keysz == ntupatts && heapTid == NULL)
			return 1;
		return 0;
	}
	if (heapTid == NULL)
		return 1;
	/* the TID sits at the tuple's end, which nothing checked so far */
	if (unlikely((char *) heapTid < (char *) itup ||
				 (char *) (heapTid + 1) >
				 (char *) page + ((PageHeader) page)->pd_special))
		_fbt_corrupt_item(rel, buf, offnum,
						  "The heap TID of a pivot tuple is outside the page");
	return ItemPointerCompare(key->scantid, heapTid);
}

/*
 * _fbt_compare() -- compare an insertion scankey with the tuple at offnum.
 *
 * Returns < 0, 0 or > 0 as the key is less than, equal to or greater than
 * the tuple.  buf is pinned and locked by the caller.  The first data item
 * of an internal page is minus infinity: the key is always greater.  With
 * no scantid, a key whose attributes all equal the tuple's compares equal,
 * even if it has fewer attributes than the index (a prefix search).
 * Raises ERRCODE_INDEX_CORRUPTED for an item that does not fit its page.
 */
int32
_fbt_compare(Relation rel, FbtScanInsert key, Buffer buf, OffsetNumber offnum)
{
	Page		page = BufferGetPage(buf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	IndexTuple	itup;
	bool		isleaf = P_ISLEAF(opaque) && offnum >= P_FIRSTDATAKEY(opaque);

	if (!P_ISLEAF(opaque) && offnum == P_FIRSTDATAKEY(opaque))
		return 1;
	itup = _fbt_getitem(rel, buf, offnum);
	if (key->keysz > 0 && _fbt_machine_kind(key->cmpkind[0]) &&
		!IndexTupleHasNulls(itup) &&
		(isleaf ||
		 (ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) &
		  FBT_OFFSET_MASK) >= 1))
	{
		int32		r = _fbt_cmp_first_machine(key, itup);

		if (r != 0)
			return r;
	}
	return isleaf ? _fbt_compare_leaf(rel, key, itup, buf, offnum, page) :
		_fbt_compare_pivot(rel, key, itup, buf, offnum, page);
}

/*
 * Machine comparison of the first key column, for a tuple without NULLs
 * whose first attribute is present: the value sits at the start of the
 * data area, so it is read there directly (no index_getattr(), no fmgr).
 * Only for keys whose first column has a machine FbtCmpKind.
 */
static inline int32
_fbt_cmp_first_machine(FbtScanInsert key, IndexTuple itup)
{
	FbtCmpKind	kind = (FbtCmpKind) key->cmpkind[0];
	int			len = (kind == FBT_CMP_INT2) ? 2 :
		(kind == FBT_CMP_INT8 || kind == FBT_CMP_FLOAT8) ? 8 : 4;
	Datum		datum = fetch_att((const char *) itup +
								  MAXALIGN(sizeof(IndexTupleData)), true, len);
	int32		r = _fbt_machine_cmp(kind, key->iarg[0], key->farg[0], datum);

	return (key->scankeys[0].sk_flags & FBT_SK_DESC) ? -r : r;
}

static inline bool
_fbt_machine_kind(uint8 kind)
{
	return kind >= FBT_CMP_INT2 && kind <= FBT_CMP_FLOAT8;
}

/*
 * Binary search loops specialized for an integer-like first column (the
 * common case of OLTP keys), with the value width and the direction
 * hoisted out of the loop.  A probe decided on the first column reads only
 * the tuple header and the fixed-width value at its start, so it needs only
 * the line pointer's offset bounded (FBT_MAX_FAST_OFFSET) to stay within the
 * page; a damaged length can then at worst give a wrong comparison on a
 * page that is damaged anyway, never a read outside it.  A tie goes to the
 * general comparison of the whole key, which checks each value it decodes
 * against the page (_fbt_check_value), except on a leaf for a one-column
 * key without heap TID, whose comparison the tie settles (equal).  For
 * pivots, only items that kept the first attribute are decided fast.
 */
#define FBT_INT_BINSRCH(ctype, pivot) \
	do { \
		const int64 arg = key->iarg[0]; \
		const bool	desc = (key->scankeys[0].sk_flags & FBT_SK_DESC) != 0; \
		const bool	onecol = !(pivot) && key->keysz == 1 && key->scantid == NULL; \
		int			lo = low; \
		int			hi = high; \
		while (hi > lo) \
		{ \
			int			mid = (lo + hi) >> 1; \
			ItemId		iid = PageGetItemId(page, mid); \
			IndexTuple	itup; \
			int32		r; \
			if (unlikely(ItemIdGetOffset(iid) > FBT_MAX_FAST_OFFSET)) \
				_fbt_corrupt_item(rel, buf, mid, NULL); \
			itup = (IndexTuple) PageGetItem(page, iid); \
			if (likely(!IndexTupleHasNulls(itup)) && \
				(!(pivot) || \
				 (ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) & \
				  FBT_OFFSET_MASK) >= 1)) \
			{ \
				int64		v = *(const ctype *) \
					((const char *) itup + MAXALIGN(sizeof(IndexTupleData))); \
				if (likely(arg != v)) \
				{ \
					/* r = +-1: r >= cmpval just when r = 1 */ \
					if ((arg > v) != desc) \
						lo = mid + 1; \
					else \
						hi = mid; \
					continue; \
				} \
				/* equal: the tie settles a one-column leaf key (r = 0) */ \
				r = onecol ? 0 : (pivot) ? \
					_fbt_compare_pivot(rel, key, itup, buf, mid, page) : \
					_fbt_compare_leaf(rel, key, itup, buf, mid, page); \
			} \
			else \
				r = (pivot) ? \
					_fbt_compare_pivot(rel, key, itup, buf, mid, page) : \
					_fbt_compare_leaf(rel, key, itup, buf, mid, page); \
			if (r >= cmpval) \
				lo = mid + 1; \
			else \
				hi = mid; \
		} \
		low = lo; \
		high = hi; \
	} while (0)

/*
 * _fbt_binsrch() -- binary search for key on a pinned and locked page.
 *
 * Every item probed has its start bounded (FBT_MAX_FAST_OFFSET) and every
 * value compared checked against the page (_fbt_check_value), whose header
 * _fbt_checkpage() checked when the page was locked, so no probe reads
 * outside the page; ERRCODE_INDEX_CORRUPTED for an item that would.
 *
 * On a leaf, returns the offset of the first item >= key (> key with
 * nextkey), which may be one past the last item.  On an internal page,
 * returns the offset of the last pivot < key (<= key with nextkey), whose
 * downlink leads to the child where the search continues; the first data
 * item is minus infinity, so there always is one.  The page kind is
 * decided once, so each probe runs the leaf or the pivot comparison
 * directly; when the first key column compares as machine values, each
 * probe decides on that column alone unless it ties (then the general
 * comparison settles the remaining columns and the heap TID).
 */
OffsetNumber
_fbt_binsrch(Relation rel, FbtScanInsert key, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	FbtPageOpaque opaque = FbtPageGetOpaque(page);
	OffsetNumber low = P_FIRSTDATAKEY(opaque);
	OffsetNumber high = PageGetMaxOffsetNumber(page);
	int			cmpval = key->nextkey ? 0 : 1;
	FbtCmpKind	kind = key->keysz > 0 ? (FbtCmpKind) key->cmpkind[0] :
		FBT_CMP_FMGR;
	bool		isleaf = P_ISLEAF(opaque);

	if (high < low)
		return low;

	/* an internal page's first item is minus infinity: every key is > */
	if (!isleaf)
		low++;
	high++;

	switch (kind)
	{
		case FBT_CMP_INT4:
			if (isleaf)
				FBT_INT_BINSRCH(int32, false);
			else
				FBT_INT_BINSRCH(int32, true);
			break;
		case FBT_CMP_INT8:
			if (isleaf)
				FBT_INT_BINSRCH(int64, false);
			else
				FBT_INT_BINSRCH(int64, true);
			break;
		default:
			while (high > low)
			{
				OffsetNumber mid = low + ((high - low) / 2);
				ItemId		iid = PageGetItemId(page, mid);
				IndexTuple	itup;
				int32		r = 0;

				if (unlikely(ItemIdGetOffset(iid) > FBT_MAX_FAST_OFFSET))
					_fbt_corrupt_item(rel, buf, mid, NULL);
				itup = (IndexTuple) PageGetItem(page, iid);

				if (_fbt_machine_kind(kind) && !IndexTupleHasNulls(itup) &&
					(isleaf ||
					 (ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) &
					  FBT_OFFSET_MASK) >= 1))
					r = _fbt_cmp_first_machine(key, itup);
				if (r == 0)
					r = isleaf ?
						_fbt_compare_leaf(rel, key, itup, buf, mid, page) :
						_fbt_compare_pivot(rel, key, itup, buf, mid, page);
				if (r >= cmpval)
					low = mid + 1;
				else
					high = mid;
			}
			break;
	}

	return isleaf ? low : OffsetNumberPrev(low);
}

/*
 * Searching an internal page without its content lock (DESIGN.md §5,
 * README.design "Optimistic reads").
 *
 * The page may change under the search at any moment, so nothing read from
 * it is trusted until the caller has found the page's version unchanged
 * across the whole search; until then the search must merely stay within
 * the page, end, and raise nothing.  Every field is therefore loaded once,
 * through a volatile pointer (the compiler may not load it again later
 * and see another value), and bounds-checked before anything derived from
 * it is dereferenced: pd_special must be ours, pd_lower must give a line
 * pointer array within the page, each line pointer must point to a
 * maximally aligned item whose header, compared values and heap TID lie
 * before the special space.  The binary search halves a range fixed by the
 * one pd_lower read, so it ends.  Only keys whose every column compares as
 * machine values of fixed width at a fixed offset are searched this way
 * (_fbt_prepare_unlocked): no fmgr, no detoasting, no palloc, no elog on
 * unvalidated bytes.  A pivot with NULLs is left to the locked search.
 */

/*
 * _fbt_prepare_unlocked() -- decide whether key can search internal pages
 * without their lock, and where each column's value sits in a pivot
 * without NULLs: key->unlocked_ok and key->attoff[].  Call after the
 * comparators are classified (cmpkind[]); cheap (a loop over the key's
 * columns).
 */
void
_fbt_prepare_unlocked(Relation rel, FbtScanInsert key)
{
	TupleDesc	desc = RelationGetDescr(rel);
	uint32		off = MAXALIGN(sizeof(IndexTupleData));
	int			i;

	key->unlocked_ok = false;
	if (key->keysz < 1)
		return;
	for (i = 0; i < key->keysz; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		/* machine kinds imply a pass-by-value column of their width */
		if (!_fbt_machine_kind(key->cmpkind[i]) || att->attlen <= 0)
			return;
		off = att_align_nominal(off, att->attalign);
		key->attoff[i] = (uint16) off;
		off += att->attlen;
	}
	key->unlocked_ok = true;
}

/* Special space offset of every fastbtree page */
#define FBT_SPECIAL_OFFSET	(BLCKSZ - MAXALIGN(sizeof(FbtPageOpaqueData)))

/*
 * Load a line pointer once; false if its item is not a plausible pivot: it
 * must be LP_NORMAL, maximally aligned, with the tuple header before the
 * special space.  (A pivot may be a bare header: the minus-infinity item.)
 */
static pg_attribute_always_inline bool
_fbt_unlocked_item(const char *page, OffsetNumber offnum, uint32 *itemoff)
{
	uint32		raw = *(const volatile uint32 *)
		(page + SizeOfPageHeaderData + (offnum - 1) * sizeof(ItemIdData));
	ItemIdData	iid;

	memcpy(&iid, &raw, sizeof(iid));
	if (iid.lp_flags != LP_NORMAL ||
		iid.lp_off < SizeOfPageHeaderData ||
		iid.lp_off % MAXIMUM_ALIGNOF != 0 ||
		iid.lp_off + MAXALIGN(sizeof(IndexTupleData)) > FBT_SPECIAL_OFFSET)
		return false;
	*itemoff = iid.lp_off;
	return true;
}

/* Bytes of a stored value of machine kind kind */
static inline uint32
_fbt_machine_width(FbtCmpKind kind)
{
	switch (kind)
	{
		case FBT_CMP_INT2:
			return sizeof(int16);
		case FBT_CMP_INT4:
		case FBT_CMP_OID:
		case FBT_CMP_FLOAT4:
			return sizeof(int32);
		default:
			return sizeof(int64);
	}
}

/*
 * Load a stored value of machine kind kind once (volatile: the page may be
 * changing) as the Datum _fbt_machine_cmp() takes.  p is aligned for it.
 */
static inline Datum
_fbt_load_machine(FbtCmpKind kind, const char *p)
{
	switch (kind)
	{
		case FBT_CMP_INT2:
			return Int16GetDatum(*(const volatile int16 *) p);
		case FBT_CMP_INT4:
		case FBT_CMP_OID:
			return Int32GetDatum(*(const volatile int32 *) p);
		case FBT_CMP_FLOAT4:
			return Float4GetDatum(*(const volatile float4 *) p);
		case FBT_CMP_FLOAT8:
			return Float8GetDatum(*(const volatile float8 *) p);
		default:
			return Int64GetDatum(*(const volatile int64 *) p);
	}
}

/*
 * Compare key with the pivot at offset itemoff of an unlocked page, as
 * _fbt_compare_pivot() does; *result gets < 0, 0, > 0.  Returns
 * FBT_UNLOCKED_BOUNDS if the tuple is not a pivot or a value it must
 * compare lies outside the tuple or the page, FBT_UNLOCKED_UNSUPPORTED if
 * it has NULLs among the compared columns other than a NULL first column.
 */
static pg_attribute_always_inline FbtUnlockedResult
_fbt_unlocked_compare(FbtScanInsert key, const char *page, uint32 itemoff,
					  int32 *result)
{
	const char *itup = page + itemoff;
	uint16		info = *(const volatile uint16 *)
		(itup + offsetof(IndexTupleData, t_info));
	uint16		posid = *(const volatile uint16 *)
		(itup + offsetof(IndexTupleData, t_tid) +
		 offsetof(ItemPointerData, ip_posid));
	uint32		size = info & INDEX_SIZE_MASK;
	int			natts = posid & FBT_OFFSET_MASK;
	int			ncmp = Min(natts, key->keysz);
	int			i;

	if (!(info & INDEX_AM_RESERVED_BIT) ||
		size < sizeof(IndexTupleData) ||
		itemoff + size > FBT_SPECIAL_OFFSET)
		return FBT_UNLOCKED_BOUNDS;
	if (ncmp > 0 && (info & INDEX_NULL_MASK))
	{
		/*
		 * A NULL in the first column decides the comparison (the key is not
		 * NULL: searches for NULL take the lock), as _fbt_cmp_attr() does.
		 * NULLs further right shift the offsets of the values: the lock.
		 * The bitmap byte follows the header, which lies in the page.
		 */
		uint8		bits = *(const volatile uint8 *) (itup + sizeof(IndexTupleData));

		if (bits & 1)
			return FBT_UNLOCKED_UNSUPPORTED;
		*result = (key->scankeys[0].sk_flags & FBT_SK_NULLS_FIRST) ? 1 : -1;
		return FBT_UNLOCKED_OK;
	}

	for (i = 0; i < ncmp; i++)
	{
		uint32		off = key->attoff[i];
		FbtCmpKind	kind = (FbtCmpKind) key->cmpkind[i];
		Datum		datum;
		int32		r;

		if (off + _fbt_machine_width(kind) > size)
			return FBT_UNLOCKED_BOUNDS;
		datum = _fbt_load_machine(kind, itup + off);
		r = _fbt_machine_cmp(kind, key->iarg[i], key->farg[i], datum);
		if (key->scankeys[i].sk_flags & FBT_SK_DESC)
			INVERT_COMPARE_RESULT(r);
		if (r != 0)
		{
			*result = r;
			return FBT_UNLOCKED_OK;
		}
	}
	if (key->keysz > natts)
		*result = 1;
	else if (key->scantid == NULL)
		/* as _fbt_compare_pivot(): equal to a TID-truncated pivot is > */
		*result = (key->keysz == natts && !(posid & FBT_PIVOT_HEAPTID)) ? 1 : 0;
	else if (!(posid & FBT_PIVOT_HEAPTID))
		*result = 1;
	else
	{
		const volatile uint16 *tid;
		ItemPointerData heaptid;

		/* the heap TID: the tuple's last six bytes, after its header */
		if (size < sizeof(IndexTupleData) + sizeof(ItemPointerData) ||
			size % sizeof(uint16) != 0)
			return FBT_UNLOCKED_BOUNDS;
		tid = (const volatile uint16 *) (itup + size - sizeof(ItemPointerData));
		heaptid.ip_blkid.bi_hi = tid[0];
		heaptid.ip_blkid.bi_lo = tid[1];
		heaptid.ip_posid = tid[2];
		*result = ItemPointerCompare(key->scantid, &heaptid);
	}
	return FBT_UNLOCKED_OK;
}

/*
 * The binary search of _fbt_search_inner_unlocked() for an int4 or int8
 * first column (ctype), as FBT_INT_BINSRCH does for locked pages: a probe
 * whose pivot kept the first attribute and has no NULLs is decided on that
 * value, read at its fixed offset when that lies before the special space
 * (whatever the tuple's length says).  A tie, or any other pivot, goes to
 * the general unlocked comparison, which checks the length.
 */
#define FBT_UNLOCKED_INT_BINSRCH(ctype) \
	do { \
		const int64 arg = key->iarg[0]; \
		const bool	desc = (key->scankeys[0].sk_flags & FBT_SK_DESC) != 0; \
		const bool	onecol = key->keysz == 1 && key->scantid == NULL; \
		const char *lp = page + SizeOfPageHeaderData - sizeof(ItemIdData); \
		int			lo = low; \
		int			hi = high; \
		while (hi > lo) \
		{ \
			int			mid = (lo + hi) >> 1; \
			uint32		raw = *(const volatile uint32 *) \
				(lp + mid * sizeof(ItemIdData)); \
			ItemIdData	iid; \
			bool		right; \
			memcpy(&iid, &raw, sizeof(iid)); \
			/* \
			 * The common case in one test: a normal, aligned line pointer \
			 * to a tuple whose header and first value lie before the \
			 * special space \
			 */ \
			if (likely(((iid.lp_flags ^ LP_NORMAL) | \
						(iid.lp_off % MAXIMUM_ALIGNOF)) == 0 && \
					   (uint32) iid.lp_off - SizeOfPageHeaderData <= \
					   FBT_SPECIAL_OFFSET - MAXALIGN(sizeof(IndexTupleData)) - \
					   sizeof(ctype) - SizeOfPageHeaderData)) \
			{ \
				const char *itup = page + iid.lp_off; \
				uint16		info = *(const volatile uint16 *) \
					(itup + offsetof(IndexTupleData, t_info)); \
				uint16		posid = *(const volatile uint16 *) \
					(itup + offsetof(IndexTupleData, t_tid) + \
					 offsetof(ItemPointerData, ip_posid)); \
				if (likely((info & (INDEX_AM_RESERVED_BIT | INDEX_NULL_MASK)) == \
						   INDEX_AM_RESERVED_BIT && \
						   (posid & FBT_OFFSET_MASK) != 0)) \
				{ \
					int64		v = *(const volatile ctype *) \
						(itup + MAXALIGN(sizeof(IndexTupleData))); \
					if (likely(arg != v)) \
					{ \
						/* r = +-1: r >= cmpval just when r = 1 */ \
						right = (arg > v) != desc; \
						goto step_##ctype; \
					} \
					if (onecol) \
					{ \
						/* as _fbt_unlocked_compare() settles the tie */ \
						r = ((posid & FBT_OFFSET_MASK) == 1 && \
							 !(posid & FBT_PIVOT_HEAPTID)) ? 1 : 0; \
						right = r >= cmpval; \
						goto step_##ctype; \
					} \
				} \
			} \
			/* everything else: the checked item, the general comparison */ \
			if (!_fbt_unlocked_item(page, mid, &itemoff)) \
				return FBT_UNLOCKED_BOUNDS; \
			res = _fbt_unlocked_compare(key, page, itemoff, &r); \
			if (res != FBT_UNLOCKED_OK) \
				return res; \
			right = r >= cmpval; \
	step_##ctype: \
			if (right) \
				lo = mid + 1; \
			else \
				hi = mid; \
		} \
		low = lo; \
	} while (0)

/*
 * _fbt_search_inner_unlocked() -- search an internal page for key without
 * its content lock.
 *
 * page: BLCKSZ bytes that may change meanwhile (a pinned shared buffer) or
 * hold anything at all (the torn-page fuzz).  key: an insertion scankey
 * with key->unlocked_ok.  Fills *step with the page's special-space fields
 * and either moveright (key is beyond the high key: continue at
 * step->next; also for a deleted page) or the offset and downlink of the
 * pivot to follow, exactly as the locked search (_fbt_binsrch() and the
 * high-key test of _fbt_search()) would decide on the same bytes.  Returns FBT_UNLOCKED_OK,
 * or FBT_UNLOCKED_BOUNDS / FBT_UNLOCKED_UNSUPPORTED (see above); whatever
 * it returns, the result means something only if the caller then finds
 * the page's version unchanged since before the call.  Reads only within
 * [page, page + BLCKSZ); no locks, no errors, no memory allocation.
 */
FbtUnlockedResult
_fbt_search_inner_unlocked(FbtScanInsert key, const char *page,
						   FbtInnerStep *step)
{
	const volatile PageHeaderData *phdr = (const volatile PageHeaderData *) page;
	const volatile FbtPageOpaqueData *opaque =
		(const volatile FbtPageOpaqueData *) (page + FBT_SPECIAL_OFFSET);
	uint16		lower = phdr->pd_lower;
	uint16		special = phdr->pd_special;
	OffsetNumber maxoff;
	OffsetNumber firstdata;
	OffsetNumber low;
	OffsetNumber high;
	uint32		itemoff;
	int			cmpval = key->nextkey ? 0 : 1;
	int32		r;
	FbtUnlockedResult res;

	step->flags = opaque->fbto_flags;
	step->level = opaque->fbto_level;
	step->prev = opaque->fbto_prev;
	step->next = opaque->fbto_next;
	step->moveright = false;
	step->offnum = InvalidOffsetNumber;
	step->child = InvalidBlockNumber;

	if (special != FBT_SPECIAL_OFFSET ||
		lower < SizeOfPageHeaderData ||
		lower > FBT_SPECIAL_OFFSET ||
		(step->flags & (FBTP_LEAF | FBTP_META)) || step->level == 0)
		return FBT_UNLOCKED_BOUNDS;

	/*
	 * A deleted internal page (fbtpagedel.c), reached through a downlink or
	 * right-link read before its deletion: its key range went to its right
	 * sibling, and its right-link leads there.  Never rightmost.
	 */
	if (step->flags & (FBTP_DELETED | FBTP_HALF_DEAD))
	{
		if (step->next == P_NONE)
			return FBT_UNLOCKED_BOUNDS;
		step->moveright = true;
		return FBT_UNLOCKED_OK;
	}
	maxoff = (lower - SizeOfPageHeaderData) / sizeof(ItemIdData);
	if (maxoff > MaxIndexTuplesPerPage)
		return FBT_UNLOCKED_BOUNDS;
	firstdata = step->next == P_NONE ? P_HIKEY : P_FIRSTKEY;
	if (maxoff < firstdata)
		return FBT_UNLOCKED_BOUNDS;

	/* the first data item is minus infinity: every key is greater */
	low = firstdata + 1;
	high = maxoff + 1;
	switch ((FbtCmpKind) key->cmpkind[0])
	{
		case FBT_CMP_INT4:
			FBT_UNLOCKED_INT_BINSRCH(int32);
			break;
		case FBT_CMP_INT8:
			FBT_UNLOCKED_INT_BINSRCH(int64);
			break;
		default:
			while (high > low)
			{
				OffsetNumber mid = low + ((high - low) >> 1);

				if (!_fbt_unlocked_item(page, mid, &itemoff))
					return FBT_UNLOCKED_BOUNDS;
				res = _fbt_unlocked_compare(key, page, itemoff, &r);
				if (res != FBT_UNLOCKED_OK)
					return res;
				if (r >= cmpval)
					low = mid + 1;
				else
					high = mid;
			}
			break;
	}
	step->offnum = OffsetNumberPrev(low);

	/* past the last pivot: the key may be beyond the high key */
	if (step->next != P_NONE && step->offnum >= maxoff)
	{
		if (!_fbt_unlocked_item(page, P_HIKEY, &itemoff))
			return FBT_UNLOCKED_BOUNDS;
		res = _fbt_unlocked_compare(key, page, itemoff, &r);
		if (res != FBT_UNLOCKED_OK)
			return res;
		if (r >= cmpval)
		{
			step->moveright = true;
			return FBT_UNLOCKED_OK;
		}
	}

	if (!_fbt_unlocked_item(page, step->offnum, &itemoff))
		return FBT_UNLOCKED_BOUNDS;
	{
		const volatile uint16 *blk = (const volatile uint16 *)
			(page + itemoff + offsetof(IndexTupleData, t_tid));
		BlockIdData bid;

		bid.bi_hi = blk[0];
		bid.bi_lo = blk[1];
		step->child = BlockIdGetBlockNumber(&bid);
	}
	return FBT_UNLOCKED_OK;
}
