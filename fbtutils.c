/*-------------------------------------------------------------------------
 *
 * fbtutils.c
 *	  Key utilities for fastbtree: insertion scankeys, suffix truncation of pivot
 *	  tuples, and preprocessing and evaluation of search keys (including
 *	  = ANY(array) keys).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/sortsupport.h"

#include "fastbtree.h"

/*
 * _fbt_mkscankey_natts() -- build an insertion scankey from an index tuple.
 *
 * itup: a leaf tuple or pivot whose first nkeyatts key attributes become
 * the arguments (for a pivot, pass its attribute count: attributes beyond
 * it are not in the tuple at all).  Returns a palloc'd key with keysz =
 * nkeyatts, nextkey = false and no scantid (callers set it).  Comparators
 * are the opfamily's support proc 1 for the column's own type, from the
 * relcache (no lookup per call).  Free it with _fbt_freescankey().
 */
FbtScanInsert
_fbt_mkscankey_natts(Relation rel, IndexTuple itup, int nkeyatts)
{
	FbtScanInsert key = palloc(sizeof(FbtScanInsertData));

	_fbt_fill_scankey(rel, itup, nkeyatts, key);
	return key;
}

/*
 * _fbt_fill_scankey() -- build the insertion scankey of _fbt_mkscankey_natts()
 * in caller-provided storage (an insert's key lives on its stack: the
 * structure is some 4 kB, and a palloc of it per row made each
 * single-row INSERT grow its executor memory by one more block).
 *
 * rel: the index; itup: a leaf tuple or pivot with at least nkeyatts key
 * attributes; key: the storage, fully overwritten.  No locks, no errors
 * beyond those of detoasting a "C" text argument.  Release its detoasted
 * copies with _fbt_free_scankey_args().
 */
void
_fbt_fill_scankey(Relation rel, IndexTuple itup, int nkeyatts,
				  FbtScanInsert key)
{
	TupleDesc	itupdesc = RelationGetDescr(rel);
	int			i;

	key->nextkey = false;
	key->pivotsearch = false;
	key->scantid = NULL;
	key->keysz = nkeyatts;
	for (i = 0; i < nkeyatts; i++)
	{
		FmgrInfo   *procinfo = index_getprocinfo(rel, i + 1, FBTORDER_PROC);
		int			flags = rel->rd_indoption[i] << 24;
		Datum		arg;
		bool		null;

		arg = index_getattr(itup, i + 1, itupdesc, &null);
		ScanKeyEntryInitializeWithInfo(&key->scankeys[i],
									   flags | (null ? SK_ISNULL : 0),
									   (AttrNumber) (i + 1),
									   InvalidStrategy,
									   InvalidOid,
									   rel->rd_indcollation[i],
									   procinfo,
									   arg);
	}
	_fbt_prepare_compare(rel, key);
}

/*
 * _fbt_free_scankey_args() -- free the detoasted argument copies of a key
 * built by _fbt_fill_scankey(), not the key itself.  Inserts free them at
 * once, so that a statement inserting many long compressed "C" text keys
 * does not keep one copy per row until it ends.
 */
void
_fbt_free_scankey_args(FbtScanInsert key)
{
	int			i;

	for (i = 0; i < key->keysz; i++)
		if (key->tcopy[i] != NULL)
		{
			pfree(key->tcopy[i]);
			key->tcopy[i] = NULL;
		}
}

/*
 * _fbt_freescankey() -- free a key made by _fbt_mkscankey_natts(), with the
 * detoasted copies of its arguments.
 */
void
_fbt_freescankey(FbtScanInsert key)
{
	_fbt_free_scankey_args(key);
	pfree(key);
}

/*
 * _fbt_tuple_attrs_ok() -- whether the first natts attributes of itup lie
 * within it.
 *
 * Walks them as index_getattr() would: a damaged varlena or cstring
 * length would otherwise send qual evaluation, suffix truncation, or the
 * executor deforming an index-only tuple far outside the page.  itup must
 * itself be within its page (_fbt_itemid_ok).  Pure function: no locks,
 * no errors.  Used only where such reads can happen (scans that decode
 * attributes, split points), not per comparison.
 */
bool
_fbt_tuple_attrs_ok(TupleDesc desc, IndexTuple itup, int natts)
{
	const char *tp = (const char *) itup + IndexInfoFindDataOffset(itup->t_info);
	const char *end = (const char *) itup + IndexTupleSize(itup);
	bits8	   *bp = IndexTupleHasNulls(itup) ?
		(bits8 *) ((char *) itup + sizeof(IndexTupleData)) : NULL;
	uint32		off = 0;
	int			i;

	if (tp > end || natts > desc->natts)
		return false;
	for (i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (bp != NULL && att_isnull(i, bp))
			continue;
		if (tp + off >= end)
			return false;
		off = att_align_pointer(off, att->attalign, att->attlen, tp + off);
		if (att->attlen > 0)
		{
			if (tp + off + att->attlen > end)
				return false;
		}
		else if (!_fbt_value_ok(att->attlen, tp + off, end))
			return false;
		off = att_addlength_pointer(off, att->attlen, tp + off);
	}
	return true;
}

/*
 * _fbt_check_attrs() -- raise ERRCODE_INDEX_CORRUPTED, naming the index and
 * the block of buf (pinned and locked by the caller, who loses both with
 * the error), unless every attribute of itup, a tuple on that page, lies
 * within it (_fbt_tuple_attrs_ok).
 */
void
_fbt_check_attrs(Relation rel, Buffer buf, IndexTuple itup)
{
	Page		page = BufferGetPage(buf);
	OffsetNumber off = InvalidOffsetNumber;
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber i;

	if (_fbt_tuple_attrs_ok(RelationGetDescr(rel), itup,
							FbtTupleGetNAtts(itup, rel)))
		return;
	/* name the item's offset, for the report only */
	for (i = FirstOffsetNumber; i <= maxoff; i++)
		if (PageGetItem(page, PageGetItemId(page, i)) == (Item) itup)
			off = i;
	_fbt_corrupt_item(rel, buf, off,
					  "An attribute extends past the end of its tuple");
}

/*
 * _fbt_keep_natts() -- number of key attributes a pivot separating lastleft
 * from firstright must keep.
 *
 * Returns the 1-based position of the first key attribute on which the two
 * tuples differ, or nkeyatts + 1 when all key attributes are equal (the
 * pivot then needs a heap TID).  Equality is the opclass's, so values that
 * are equal but not bitwise identical do not force extra attributes.
 */
int
_fbt_keep_natts(Relation rel, IndexTuple lastleft, IndexTuple firstright)
{
	TupleDesc	itupdesc = RelationGetDescr(rel);
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	int			attnum;

	for (attnum = 1; attnum <= nkeyatts; attnum++)
	{
		Datum		d1,
					d2;
		bool		n1,
					n2;

		d1 = index_getattr(lastleft, attnum, itupdesc, &n1);
		d2 = index_getattr(firstright, attnum, itupdesc, &n2);
		if (n1 != n2)
			return attnum;
		if (n1)
			continue;
		if (DatumGetInt32(FunctionCall2Coll(index_getprocinfo(rel, attnum,
															  FBTORDER_PROC),
											rel->rd_indcollation[attnum - 1],
											d1, d2)) != 0)
			return attnum;
	}
	return nkeyatts + 1;
}

/*
 * Mark a tuple as a pivot with natts key attributes (and a heap TID when
 * hastid), with the given downlink.
 */
static void
_fbt_set_pivot(IndexTuple itup, int natts, bool hastid, BlockNumber downlink)
{
	itup->t_info |= INDEX_AM_RESERVED_BIT;
	ItemPointerSetBlockNumber(&itup->t_tid, downlink);
	ItemPointerSetOffsetNumber(&itup->t_tid,
							   natts | (hastid ? FBT_PIVOT_HEAPTID : 0));
}

/*
 * _fbt_truncate() -- make the pivot that separates two adjacent leaf tuples.
 *
 * lastleft and firstright are leaf tuples with lastleft < firstright.
 * Returns a palloc'd pivot K with lastleft <= K < firstright (the nbtree
 * README's invariant), keeping as few key attributes as possible (suffix
 * truncation, after Bayer & Unterauer's prefix B-trees): firstright's
 * attributes up to the first one that differs from lastleft, or, when all
 * key attributes are equal, all of them plus lastleft's heap TID (the
 * last of a posting list).  INCLUDE
 * attributes never go into pivots.  The downlink is InvalidBlockNumber.
 */
IndexTuple
_fbt_truncate(Relation rel, IndexTuple lastleft, IndexTuple firstright)
{
	TupleDesc	itupdesc = RelationGetDescr(rel);
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	int			keepnatts = _fbt_keep_natts(rel, lastleft, firstright);
	IndexTuple	pivot;
	IndexTuple	keysonly = NULL;

	if (FbtTupleIsPosting(firstright))
	{
		/* a posting list's TIDs never go into a pivot */
		keysonly = _fbt_form_posting(firstright,
									 FbtTupleGetHeapTID(firstright), 1);
		firstright = keysonly;
	}

	if (keepnatts <= nkeyatts)
	{
		pivot = index_truncate_tuple(itupdesc, firstright, keepnatts);
		_fbt_set_pivot(pivot, keepnatts, false, InvalidBlockNumber);
	}
	else
	{
		IndexTuple	keys = index_truncate_tuple(itupdesc, firstright, nkeyatts);
		Size		keysz = IndexTupleSize(keys);
		Size		newsz = keysz + MAXALIGN(sizeof(ItemPointerData));

		pivot = palloc0(newsz);
		memcpy(pivot, keys, keysz);
		pivot->t_info &= ~INDEX_SIZE_MASK;
		pivot->t_info |= newsz;
		memcpy((char *) pivot + newsz - sizeof(ItemPointerData),
			   FbtTupleGetMaxHeapTID(lastleft), sizeof(ItemPointerData));
		_fbt_set_pivot(pivot, nkeyatts, true, InvalidBlockNumber);
		pfree(keys);
	}
	if (keysonly != NULL)
		pfree(keysonly);
	return pivot;
}

/*
 * _fbt_pivot_minus_infinity() -- a zero-attribute pivot with itup's
 * downlink: the first data item of an internal page.  Returns palloc'd.
 */
IndexTuple
_fbt_pivot_minus_infinity(IndexTuple itup)
{
	IndexTuple	pivot = palloc0(sizeof(IndexTupleData));

	pivot->t_info = sizeof(IndexTupleData);
	_fbt_set_pivot(pivot, 0, false,
				   itup ? FbtPivotGetDownLink(itup) : InvalidBlockNumber);
	return pivot;
}

/* ----------------------------------------------------------------
 * Search keys
 *
 * fbtrescan() copies the executor's scan keys into so->keyData and calls
 * _fbt_preprocess_keys(), which, once per rescan:
 *	- maps each key's strategy to index order (DESC columns swap < and >);
 *	  IS NULL becomes an equality and IS NOT NULL an inequality against
 *	  NULL, on the side where the index keeps its NULLs;
 *	- resolves the three-way comparison (support proc 1 for the column's
 *	  type and the argument's type) used to position the scan;
 *	- marks keys "required" (FBT_SK_REQFWD / FBT_SK_REQBKWD) when every
 *	  earlier column has an equality key: a required key that fails ends
 *	  the scan in that direction (nbtree README, "scan keys");
 *	- expands = ANY(array) into sorted distinct elements and reduces
 *	  inequality arrays to their extreme element.  A required equality
 *	  array drives one primitive scan per element combination, in index
 *	  order.  An array on a column after one without an equality key (not
 *	  required, so never used to position the scan) does the same until
 *	  PostgreSQL 16, as nbtree does there; since 17 it is tested on each
 *	  tuple by binary search among its elements, so that the scan returns
 *	  tuples in index order, as 17's nbtree does and 17's planner assumes
 *	  of any = ANY scan of an amsearcharray index
 *	  (FBT_ARRAY_FILTERS_IN_ONE_PASS, fbtcompat.h).
 *	- copies the members of a row comparison (SK_ROW_HEADER, from
 *	  "(a, b) > (1, 2)") with their strategies in index order; the
 *	  header stands for its first member in positioning and in the
 *	  required flags, and _fbt_check_rowcompare() tests the whole row.
 * Redundant keys are kept: every key is checked on every tuple, and any
 * one of several bounds is a correct place to start.
 * ----------------------------------------------------------------
 */

/*
 * Set key i's machine comparison for _fbt_checkkeys(), from its positioning
 * comparator; IS [NOT] NULL and NULL arguments stay with fmgr.
 */
static void
_fbt_classify_scankey(IndexScanDesc scan, int i)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	ScanKey		key = &so->keyData[i];
	int			argwidth = 0;

	so->keyCmpKind[i] = FBT_CMP_FMGR;
	if (key->sk_flags & (SK_ISNULL | SK_SEARCHNULL | SK_SEARCHNOTNULL))
		return;
	so->keyCmpKind[i] = _fbt_classify_key(scan->indexRelation, key,
										  so->keyOrderProc[i].fn_oid,
										  &so->keyIarg[i], &so->keyFarg[i],
										  &argwidth);
	so->keyArgWidth[i] = argwidth;
}

/*
 * _fbt_prepare_sortsupport_col() -- fill ssup with the SortSupport
 * comparator of index column col (0-based), from the index's own operator
 * family.
 *
 * The caller zeroes ssup and sets ssup_cxt, ssup_collation,
 * ssup_nulls_first, ssup_reverse and abbreviate first, as core's
 * PrepareSortSupport* functions expect.  Uses the family's sortsupport
 * procedure (support proc 2) for the column's opclass input type when there
 * is one and it provides a comparator; otherwise wraps support proc 1, the
 * three-way comparison, in core's comparison shim.  Both come from the
 * index's relcache entry (rd_support), so no catalog lookup, and above all
 * no btree "<" operator, is involved: the order used is by construction the
 * order the tree is built and searched in, for any operator class that
 * amvalidate accepts.  (PrepareSortSupportFromOrderingOp would demand that
 * the family's "<" be a btree ordering operator, which an operator class of
 * our own, built from operators of no btree family, does not have.)
 *
 * No locks or pins.  Errors: a missing support proc 1 (cannot happen for a
 * valid index); whatever the sortsupport procedure raises.
 */
void
_fbt_prepare_sortsupport_col(Relation rel, int col, SortSupport ssup)
{
	RegProcedure sortproc;

	sortproc = index_getprocid(rel, col + 1, FBTSORTSUPPORT_PROC);
	if (RegProcedureIsValid(sortproc))
		OidFunctionCall1(sortproc, PointerGetDatum(ssup));

	/* a sortsupport procedure may decline, e.g. for some collations */
	if (ssup->comparator == NULL)
	{
		RegProcedure cmpproc = index_getprocid(rel, col + 1, FBTORDER_PROC);

		if (!RegProcedureIsValid(cmpproc))
			elog(ERROR, "missing support function %d for attribute %d of index \"%s\"",
				 FBTORDER_PROC, col + 1, RelationGetRelationName(rel));
		PrepareSortSupportComparisonShim(cmpproc, ssup);
	}
}

/*
 * Key i positions the scan through the column's SortSupport comparator when
 * it has no machine comparison and compares the column's own type (no
 * cross-type quals): resolved once per full preprocessing, not per probe.
 * The comparator is the index operator family's own (see
 * _fbt_prepare_sortsupport_col), in the key's collation.
 */
static void
_fbt_prepare_sortsupport(IndexScanDesc scan, int i)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	ScanKey		key = &so->keyData[i];
	int			col = key->sk_attno - 1;
	SortSupport ssup = &so->keySortSupport[i];

	so->keyHasSortSupport[i] = false;
	if (!fbt_fast_compare || so->keyCmpKind[i] != FBT_CMP_FMGR ||
		(key->sk_flags & (SK_ISNULL | SK_SEARCHNULL | SK_SEARCHNOTNULL)) ||
		(OidIsValid(key->sk_subtype) &&
		 key->sk_subtype != rel->rd_opcintype[col]))
		return;
	/*
	 * Default sizes: the first block (8 kB, kept with the context on core's
	 * freelist) holds a text comparator's state and two 1 kB buffers, so
	 * that setting one up for a scan of one probe takes no malloc().
	 */
	if (so->sortContext == NULL)
		so->sortContext = AllocSetContextCreate(so->scanCxt,
												"fastbtree sort support",
												ALLOCSET_DEFAULT_SIZES);
	memset(ssup, 0, sizeof(SortSupportData));
	ssup->ssup_cxt = so->sortContext;
	ssup->ssup_collation = key->sk_collation;
	ssup->ssup_nulls_first = false;
	ssup->ssup_reverse = false;
	ssup->abbreviate = false;
	_fbt_prepare_sortsupport_col(rel, col, ssup);
	so->keyHasSortSupport[i] = true;
}

static int
_fbt_compare_elems(const void *a, const void *b, void *arg)
{
	ScanKey		sk = (ScanKey) arg;
	int32		r;

	r = DatumGetInt32(FunctionCall2Coll(&sk->sk_func, sk->sk_collation,
										*(const Datum *) a,
										*(const Datum *) b));
	return (sk->sk_flags & FBT_SK_DESC) ? -r : r;
}

/*
 * Expand one array key.  Returns the number of distinct non-null elements
 * (0: the key can never match).  Equality keys keep all elements sorted in
 * index order; inequalities keep only the element that makes the weakest
 * bound, i.e. the one satisfied by most values, as ANY asks.
 */
static int
_fbt_expand_array(IndexScanDesc scan, ScanKey key, Datum **elems)
{
	Relation	rel = scan->indexRelation;
	int			col = key->sk_attno - 1;
	ArrayType  *arr = DatumGetArrayTypeP(key->sk_argument);
	Oid			elemtype = ARR_ELEMTYPE(arr);
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *values;
	bool	   *nulls;
	int			nelems;
	int			n = 0;
	int			i;
	Oid			cmpproc;
	ScanKeyData sortkey;

	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign,
					  &values, &nulls, &nelems);
	for (i = 0; i < nelems; i++)
		if (!nulls[i])
			values[n++] = values[i];
	if (n == 0)
		return 0;

	/*
	 * The opfamily registers its procs under the operator's declared types
	 * (anyenum, anyrange, record, ...), which the key's subtype names; the
	 * array's element type may be a concrete type.
	 */
	{
		Oid			proctype = OidIsValid(key->sk_subtype) ? key->sk_subtype :
			rel->rd_opcintype[col];

		cmpproc = get_opfamily_proc(rel->rd_opfamily[col], proctype, proctype,
									FBTORDER_PROC);
		if (!OidIsValid(cmpproc))
			elog(ERROR, "missing support function %d(%u,%u) in opfamily %u",
				 FBTORDER_PROC, proctype, proctype, rel->rd_opfamily[col]);
	}
	memset(&sortkey, 0, sizeof(sortkey));
	fmgr_info(cmpproc, &sortkey.sk_func);
	sortkey.sk_collation = key->sk_collation;
	sortkey.sk_flags = 0;

	if (key->sk_strategy != BTEqualStrategyNumber)
	{
		Datum		best = values[0];
		bool		wantmax = (key->sk_strategy == BTLessStrategyNumber ||
							   key->sk_strategy == BTLessEqualStrategyNumber);

		for (i = 1; i < n; i++)
		{
			int			c = _fbt_compare_elems(&values[i], &best, &sortkey);

			if ((wantmax && c > 0) || (!wantmax && c < 0))
				best = values[i];
		}
		values[0] = best;
		*elems = values;
		return 1;
	}

	/* sort into index order and remove duplicates */
	sortkey.sk_flags = (rel->rd_indoption[col] & INDOPTION_DESC) ?
		FBT_SK_DESC : 0;
	qsort_arg(values, n, sizeof(Datum), _fbt_compare_elems, &sortkey);
	{
		int			j = 0;

		for (i = 1; i < n; i++)
			if (_fbt_compare_elems(&values[i], &values[j], &sortkey) != 0)
				values[++j] = values[i];
		n = j + 1;
	}
	*elems = values;
	return n;
}

/*
 * Copy the members of row comparison key i (a header, SK_ROW_HEADER, whose
 * argument points to its members, the last one flagged SK_ROW_END), with
 * the index column's DESC and NULLS FIRST flags and their strategies in
 * index order (a DESC column swaps < and >), and point the header at the
 * copy.  The executor's members are left untouched: it updates their
 * arguments in place between rescans.  The copy lives with the scan and
 * is refilled at each rescan; a member whose comparison proc is the one
 * it had keeps its FmgrInfo, with any cache on fn_extra (record and array
 * comparisons build one).  Returns the first member.  Errors: a member on
 * no key column of the index, or not an inequality (the planner builds
 * neither).
 */
static ScanKey
_fbt_prepare_rowcompare(IndexScanDesc scan, int i, ScanKey key)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	MemoryContext cxt = so->scanCxt;
	ScanKey		members = (ScanKey) DatumGetPointer(key->sk_argument);
	ScanKey		copy;
	bool		reuse;
	int			n = 1;
	int			m;

	while (!(members[n - 1].sk_flags & SK_ROW_END))
		n++;
	if (so->rowMembers == NULL)
	{
		so->rowMembers = MemoryContextAllocZero(cxt, sizeof(ScanKey) *
												Max(scan->numberOfKeys, 1));
		so->rowNMembers = MemoryContextAllocZero(cxt, sizeof(int) *
												 Max(scan->numberOfKeys, 1));
	}
	copy = so->rowMembers[i];
	reuse = copy != NULL && so->rowNMembers[i] == n;
	if (!reuse)
	{
		if (copy != NULL)
			pfree(copy);
		copy = MemoryContextAllocZero(cxt, sizeof(ScanKeyData) * n);
		so->rowMembers[i] = copy;
		so->rowNMembers[i] = n;
	}
	for (m = 0; m < n; m++)
	{
		ScanKey		mk = &copy[m];
		FmgrInfo	kept = mk->sk_func;
		int16		indoption;

		memcpy(mk, &members[m], sizeof(ScanKeyData));
		if (reuse && kept.fn_oid == members[m].sk_func.fn_oid)
			mk->sk_func = kept;
		else
			fmgr_info_copy(&mk->sk_func, &members[m].sk_func, cxt);
		if (!(mk->sk_flags & SK_ROW_MEMBER) || mk->sk_attno < 1 ||
			mk->sk_attno > IndexRelationGetNumberOfKeyAttributes(rel) ||
			(m == 0 && mk->sk_attno != key->sk_attno))
			elog(ERROR, "invalid row comparison member %d on attribute %d of index \"%s\"",
				 m + 1, mk->sk_attno, RelationGetRelationName(rel));
		if (mk->sk_strategy != BTLessStrategyNumber &&
			mk->sk_strategy != BTLessEqualStrategyNumber &&
			mk->sk_strategy != BTGreaterEqualStrategyNumber &&
			mk->sk_strategy != BTGreaterStrategyNumber)
			elog(ERROR, "row comparison member with strategy %d in index \"%s\"",
				 (int) mk->sk_strategy, RelationGetRelationName(rel));
		indoption = rel->rd_indoption[mk->sk_attno - 1];
		mk->sk_flags |= indoption << 24;
		if (indoption & INDOPTION_DESC)
			mk->sk_strategy = FbtCommuteStrategyNumber(mk->sk_strategy);
	}
	key->sk_argument = PointerGetDatum(copy);
	return copy;
}

/*
 * _fbt_preprocess_keys() -- prepare scan->keyData for positioning and
 * checking; see the block comment above.
 *
 * Fills so->keyData, keyStrategy, keyOrderProc, arrayKeys (allocated by
 * fbtbeginscan for the scan's key count), qual_ok.  Array elements go to
 * so->arrayContext, reset at each rescan.  Raises an error only
 * for a missing opfamily member (a broken operator class).
 */
void
_fbt_preprocess_keys(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	int			nkeys = scan->numberOfKeys;
	bool		haseq[INDEX_MAX_KEYS];
	bool		hadkeys;
	bool		eligible;
	MemoryContext oldcxt;
	int			i;

	/*
	 * Rescans of a nested loop change only the arguments: when every key
	 * has the shape it had last time (and none is an array), keep the
	 * resolved comparators, strategies and required flags.
	 */
	if (so->keysPrepared && so->numberOfKeys == nkeys &&
		so->numArrayKeys == 0 && so->numFilterArrays == 0 &&
		so->keysFastCompare == fbt_fast_compare)
	{
		const int	ourbits = FBT_SK_REQFWD | FBT_SK_REQBKWD |
			FBT_SK_ARRAY_FILTER | FBT_SK_DESC | FBT_SK_NULLS_FIRST;

		for (i = 0; i < nkeys; i++)
		{
			ScanKey		old = &so->keyData[i];
			ScanKey		new = &scan->keyData[i];

			if ((old->sk_flags & ~ourbits) != new->sk_flags ||
				(new->sk_flags & (SK_SEARCHARRAY | SK_ROW_HEADER)) ||
				old->sk_attno != new->sk_attno ||
				old->sk_strategy != new->sk_strategy ||
				old->sk_subtype != new->sk_subtype ||
				old->sk_collation != new->sk_collation ||
				old->sk_func.fn_oid != new->sk_func.fn_oid)
				break;
		}
		if (i == nkeys)
		{
			for (i = 0; i < nkeys; i++)
			{
				so->keyData[i].sk_argument = scan->keyData[i].sk_argument;
				if (so->keyCmpKind[i] != FBT_CMP_FMGR)
					_fbt_machine_arg((FbtCmpKind) so->keyCmpKind[i],
									 so->keyArgWidth[i],
									 so->keyData[i].sk_argument,
									 &so->keyIarg[i], &so->keyFarg[i]);
			}
			return;
		}
	}
	hadkeys = so->keysPrepared;
	so->keysPrepared = true;
	so->keysFastCompare = fbt_fast_compare;
	if (so->sortContext != NULL)
		MemoryContextReset(so->sortContext);

	/*
	 * Array elements and skip array values live in a context of their own,
	 * made on first use (for skip arrays, by _fbt_add_skip_keys()).
	 */
	for (i = 0; i < nkeys; i++)
		if (scan->keyData[i].sk_flags & SK_SEARCHARRAY)
			break;
	if (i < nkeys && so->arrayContext == NULL)
		so->arrayContext = AllocSetContextCreate(so->scanCxt,
												 "fastbtree array keys",
												 ALLOCSET_SMALL_SIZES);
	if (so->arrayContext != NULL)
		MemoryContextReset(so->arrayContext);
	oldcxt = MemoryContextSwitchTo(so->arrayContext ? so->arrayContext :
								   CurrentMemoryContext);

	so->qual_ok = true;
	so->numberOfKeys = nkeys;
	so->numArrayKeys = 0;
	so->numFilterArrays = 0;
	memset(haseq, 0, sizeof(haseq));

	for (i = 0; i < nkeys; i++)
	{
		ScanKey		key = &so->keyData[i];
		FmgrInfo	kept;
		int			col;
		int16		indoption;
		StrategyNumber strat;

		/*
		 * The operator's FmgrInfo of the previous rescan, if it is the same
		 * operator, is kept with any cache on its fn_extra (record and
		 * array operators build one; the executor's copy never gets one,
		 * since only ours is called).
		 */
		if (hadkeys)
			kept = key->sk_func;
		memcpy(key, &scan->keyData[i], sizeof(ScanKeyData));
		if (hadkeys && kept.fn_oid == key->sk_func.fn_oid)
			key->sk_func = kept;
		if (key->sk_attno < 1 ||
			key->sk_attno > IndexRelationGetNumberOfKeyAttributes(rel))
			elog(ERROR, "scan key on attribute %d of index \"%s\", which has %d key attributes",
				 key->sk_attno, RelationGetRelationName(rel),
				 IndexRelationGetNumberOfKeyAttributes(rel));
		col = key->sk_attno - 1;
		indoption = rel->rd_indoption[col];
		key->sk_flags |= indoption << 24;

		if (key->sk_flags & SK_ROW_HEADER)
		{
			ScanKey		first = _fbt_prepare_rowcompare(scan, i, key);

			/* the first member positions the scan (with its own proc) */
			if (first->sk_flags & SK_ISNULL)
				so->qual_ok = false;
			so->keyStrategy[i] = first->sk_strategy;
			so->keyCmpKind[i] = FBT_CMP_FMGR;
			so->keyHasSortSupport[i] = false;
			continue;
		}

		if (key->sk_flags & SK_SEARCHNULL)
			strat = BTEqualStrategyNumber;
		else if (key->sk_flags & SK_SEARCHNOTNULL)
			strat = (indoption & INDOPTION_NULLS_FIRST) ?
				BTGreaterStrategyNumber : BTLessStrategyNumber;
		else
		{
			Oid			cmpproc;
			Oid			subtype;

			if (key->sk_flags & SK_ISNULL)
			{
				/* "col op NULL" never matches */
				so->qual_ok = false;
				strat = key->sk_strategy;
			}
			else
			{
				if (key->sk_flags & SK_SEARCHARRAY)
				{
					FbtArrayKeyInfo *ak = &so->arrayKeys[so->numArrayKeys];
					int			nelem = _fbt_expand_array(scan, key,
														  &ak->elem_values);

					/*
					 * No element can match.  The key keeps the array as
					 * its argument: it is never evaluated, since qual_ok =
					 * false ends every scan before a tuple is read.
					 */
					if (nelem == 0)
						so->qual_ok = false;
					else if (key->sk_strategy != BTEqualStrategyNumber)
					{
						key->sk_argument = ak->elem_values[0];
						key->sk_flags &= ~SK_SEARCHARRAY;
					}
					else
					{
						ak->scan_key = i;
						ak->skip = false;
						ak->num_elems = nelem;
						ak->cur_elem = 0;
						ak->mark_elem = 0;
						key->sk_argument = ak->elem_values[0];
						so->numArrayKeys++;
					}
				}

				subtype = OidIsValid(key->sk_subtype) ? key->sk_subtype :
					rel->rd_opcintype[col];
				/*
				 * A proc already resolved for this key at an earlier rescan
				 * is kept, with the cache it may hang on fn_extra (record
				 * and array comparisons build one per FmgrInfo, in the
				 * scan's memory: a new FmgrInfo per rescan would build, and
				 * keep, one more each time).
				 */
				if (subtype == rel->rd_opcintype[col])
				{
					/* same type: the relcache has it, no catalog lookup */
					FmgrInfo   *proc = index_getprocinfo(rel, col + 1,
														 FBTORDER_PROC);

					if (so->keyOrderProc[i].fn_oid != proc->fn_oid)
						fmgr_info_copy(&so->keyOrderProc[i], proc,
									   so->scanCxt);
				}
				else
				{
					cmpproc = get_opfamily_proc(rel->rd_opfamily[col],
												rel->rd_opcintype[col],
												subtype, FBTORDER_PROC);
					if (!OidIsValid(cmpproc))
						elog(ERROR, "missing support function %d(%u,%u) in opfamily %u",
							 FBTORDER_PROC, rel->rd_opcintype[col], subtype,
							 rel->rd_opfamily[col]);
					if (so->keyOrderProc[i].fn_oid != cmpproc)
						fmgr_info_cxt(cmpproc, &so->keyOrderProc[i],
									  so->scanCxt);
				}
				strat = key->sk_strategy;
			}
			if (indoption & INDOPTION_DESC)
				strat = FbtCommuteStrategyNumber(strat);
		}
		so->keyStrategy[i] = strat;
		_fbt_classify_scankey(scan, i);
		_fbt_prepare_sortsupport(scan, i);
	}

	/*
	 * Required keys: those on columns all of whose predecessors have an
	 * equality key.  Keys arrive grouped by column, but don't rely on it.
	 * Skip arrays (fbtarray.c) give an equality key to the columns before
	 * the last one with one, where array mode can run the scan.
	 */
	for (i = 0; i < nkeys; i++)
		if (so->keyStrategy[i] == BTEqualStrategyNumber)
			haseq[so->keyData[i].sk_attno - 1] = true;
	eligible = _fbt_array_mode_eligible(scan);
	if (eligible)
		(void) _fbt_add_skip_keys(scan, haseq);
	for (i = 0; i < so->numberOfKeys; i++)
	{
		ScanKey		key = &so->keyData[i];
		int			col;
		bool		required = true;

		for (col = 0; col < key->sk_attno - 1; col++)
			if (!haseq[col])
				required = false;
		if (!required)
			continue;
		switch (so->keyStrategy[i])
		{
			case BTLessStrategyNumber:
			case BTLessEqualStrategyNumber:
				key->sk_flags |= FBT_SK_REQFWD;
				break;
			case BTEqualStrategyNumber:
				key->sk_flags |= FBT_SK_REQFWD | FBT_SK_REQBKWD;
				break;
			case BTGreaterEqualStrategyNumber:
			case BTGreaterStrategyNumber:
				key->sk_flags |= FBT_SK_REQBKWD;
				break;
		}

		/*
		 * A row comparison's first member is required with it; the later
		 * members never are (a failure they decide says nothing about the
		 * tuples beyond, unless the earlier members were equal: nbtree
		 * 15's rule).
		 */
		if (key->sk_flags & SK_ROW_HEADER)
			((ScanKey) DatumGetPointer(key->sk_argument))->sk_flags |=
				key->sk_flags & (FBT_SK_REQFWD | FBT_SK_REQBKWD);
	}

	/*
	 * Arrays that are not required become membership tests, kept after the
	 * required ones (a stable partition: each part keeps its order).
	 */
	if (FBT_ARRAY_FILTERS_IN_ONE_PASS && so->numArrayKeys > 0)
	{
		int			narr = so->numArrayKeys;
		FbtArrayKeyInfo *all = palloc(sizeof(FbtArrayKeyInfo) * narr);
		int			a,
					nreq = 0;

		memcpy(all, so->arrayKeys, sizeof(FbtArrayKeyInfo) * narr);
		for (a = 0; a < narr; a++)
			if (so->keyData[all[a].scan_key].sk_flags & FBT_SK_REQFWD)
				so->arrayKeys[nreq++] = all[a];
		so->numArrayKeys = nreq;
		for (a = 0; a < narr; a++)
		{
			int			k = all[a].scan_key;

			if (so->keyData[k].sk_flags & FBT_SK_REQFWD)
				continue;
			so->arrayKeys[nreq + so->numFilterArrays++] = all[a];
			so->keyData[k].sk_flags |= FBT_SK_ARRAY_FILTER;
			so->keyCmpKind[k] = FBT_CMP_FMGR;
			so->keyHasSortSupport[k] = false;
		}
		pfree(all);
	}

	/* order array keys by column: the first column is most significant */
	if (so->numArrayKeys > 1)
	{
		int			a,
					b;

		for (a = 1; a < so->numArrayKeys; a++)
			for (b = a; b > 0 &&
				 so->keyData[so->arrayKeys[b - 1].scan_key].sk_attno >
				 so->keyData[so->arrayKeys[b].scan_key].sk_attno; b--)
			{
				FbtArrayKeyInfo tmp = so->arrayKeys[b];

				so->arrayKeys[b] = so->arrayKeys[b - 1];
				so->arrayKeys[b - 1] = tmp;
			}
	}

	MemoryContextSwitchTo(oldcxt);

	so->arrayMode = false;
	if (eligible)
		_fbt_plan_array_mode(scan);
}

static void
_fbt_set_array_elem(IndexScanDesc scan, FbtArrayKeyInfo *ak, int elem)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	ak->cur_elem = elem;
	so->keyData[ak->scan_key].sk_argument = ak->elem_values[elem];
	_fbt_classify_scankey(scan, ak->scan_key);
}

/*
 * _fbt_first_array_elems() -- set every array key (there is at least one)
 * to its first element in scan direction dir; the rest of
 * _fbt_start_array_keys() (fastbtree.h).
 */
void
_fbt_first_array_elems(IndexScanDesc scan, ScanDirection dir)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	int			i;

	for (i = 0; i < so->numArrayKeys; i++)
	{
		FbtArrayKeyInfo *ak = &so->arrayKeys[i];

		if (ak->skip)
		{
			_fbt_skip_start(ak);
			so->keyData[ak->scan_key].sk_flags &= ~SK_ISNULL;
		}
		else
			_fbt_set_array_elem(scan, ak, ScanDirectionIsBackward(dir) ?
								ak->num_elems - 1 : 0);
	}
}

/*
 * _fbt_advance_array_keys() -- step the array keys to the next combination
 * in scan direction, last column fastest (an odometer), so successive
 * primitive scans visit the index in order.  Returns false when all
 * combinations are done.
 */
bool
_fbt_advance_array_keys(IndexScanDesc scan, ScanDirection dir)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	int			i;

	for (i = so->numArrayKeys - 1; i >= 0; i--)
	{
		FbtArrayKeyInfo *ak = &so->arrayKeys[i];
		int			next = ak->cur_elem + (ScanDirectionIsBackward(dir) ? -1 : 1);

		if (next >= 0 && next < ak->num_elems)
		{
			_fbt_set_array_elem(scan, ak, next);
			return true;
		}
		_fbt_set_array_elem(scan, ak, ScanDirectionIsBackward(dir) ?
							ak->num_elems - 1 : 0);
	}
	return false;
}

/*
 * _fbt_mark_array_keys(), _fbt_restore_array_keys() -- save and restore
 * the current array elements with ammarkpos/amrestrpos.
 */
void
_fbt_mark_array_keys(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	int			i;

	for (i = 0; i < so->numArrayKeys; i++)
	{
		if (so->arrayKeys[i].skip)
			_fbt_skip_mark(scan, &so->arrayKeys[i]);
		else
			so->arrayKeys[i].mark_elem = so->arrayKeys[i].cur_elem;
	}
}

void
_fbt_restore_array_keys(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	int			i;

	for (i = 0; i < so->numArrayKeys; i++)
	{
		if (so->arrayKeys[i].skip)
			_fbt_skip_restore(scan, &so->arrayKeys[i]);
		else
			_fbt_set_array_elem(scan, &so->arrayKeys[i],
								so->arrayKeys[i].mark_elem);
	}
}

/*
 * _fbt_array_member() -- is datum (a non-NULL value of key i's column, from
 * a leaf tuple) one of the elements of filter array key i?  Binary search
 * among the sorted distinct elements with the key's (column type, argument
 * type) comparison proc; elements are in index order, so a DESC column's
 * comparison is reversed.  Errors: whatever the comparison proc raises.
 */
static bool
_fbt_array_member(FbtScanOpaque so, int i, Datum datum)
{
	ScanKey		key = &so->keyData[i];
	FbtArrayKeyInfo *ak = NULL;
	int			lo,
				hi,
				a;

	for (a = so->numArrayKeys; a < so->numArrayKeys + so->numFilterArrays; a++)
		if (so->arrayKeys[a].scan_key == i)
		{
			ak = &so->arrayKeys[a];
			break;
		}
	if (ak == NULL)
		elog(ERROR, "fastbtree: filter array key %d has no elements", i);

	lo = 0;
	hi = ak->num_elems;
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;
		int32		c;

		c = DatumGetInt32(FunctionCall2Coll(&so->keyOrderProc[i],
											key->sk_collation, datum,
											ak->elem_values[mid]));
		if (key->sk_flags & FBT_SK_DESC)
			INVERT_COMPARE_RESULT(c);
		if (c == 0)
			return true;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

/*
 * A tuple NULL in the column of a key with these flags fails the key; does
 * that end the scan in direction dir?  Yes when the key is required and the
 * scan moves towards the end of the index where NULLs lie past every
 * non-NULL value (nbtree's rule).
 */
static inline bool
_fbt_null_ends_scan(int flags, ScanDirection dir)
{
	if (!(flags & (FBT_SK_REQFWD | FBT_SK_REQBKWD)))
		return false;
	return (flags & FBT_SK_NULLS_FIRST) ? ScanDirectionIsBackward(dir) :
		ScanDirectionIsForward(dir);
}

/*
 * _fbt_check_rowcompare() -- does tuple (tupnatts attributes present)
 * satisfy row comparison key header?  The members are compared in order
 * with their three-way procs until one differs; that member's strategy
 * decides, as SQL's row comparison does, and a NULL met before then (in
 * the tuple or the argument) makes the comparison NULL, not true.  An
 * attribute truncated from a high key compares equal (it stands for any
 * value).  Sets *continuescan = false when no later tuple in direction
 * dir can pass: the deciding member is required in that direction, or
 * the tuple is NULL where NULLs sort at the end of the scan under a
 * required member, or the argument is NULL right after a required member
 * that compared equal.  (nbtree 15's _bt_check_rowcompare defines these
 * rules.)
 */
static bool
_fbt_check_rowcompare(ScanKey header, IndexTuple tuple, int tupnatts,
					  TupleDesc tupdesc, ScanDirection dir,
					  bool *continuescan)
{
	ScanKey		first = (ScanKey) DatumGetPointer(header->sk_argument);
	ScanKey		m = first;
	int			reqflag = ScanDirectionIsBackward(dir) ?
		FBT_SK_REQBKWD : FBT_SK_REQFWD;
	int32		cmp = 0;
	bool		result;

	for (;;)
	{
		if (m->sk_attno <= tupnatts)
		{
			bool		isNull;
			Datum		datum = index_getattr(tuple, m->sk_attno, tupdesc,
											  &isNull);

			if (isNull)
			{
				if (_fbt_null_ends_scan(m->sk_flags, dir))
					*continuescan = false;
				return false;
			}
			if (m->sk_flags & SK_ISNULL)
			{
				ScanKey		prev = (m == first) ? m : m - 1;

				if (prev->sk_flags & reqflag)
					*continuescan = false;
				return false;
			}
			cmp = DatumGetInt32(FunctionCall2Coll(&m->sk_func,
												  m->sk_collation,
												  datum, m->sk_argument));
			if (m->sk_flags & FBT_SK_DESC)
				INVERT_COMPARE_RESULT(cmp);
			if (cmp != 0)
				break;
		}
		else
			cmp = 0;
		if (m->sk_flags & SK_ROW_END)
			break;
		m++;
	}

	switch (m->sk_strategy)
	{
		case BTLessStrategyNumber:
			result = cmp < 0;
			break;
		case BTLessEqualStrategyNumber:
			result = cmp <= 0;
			break;
		case BTGreaterEqualStrategyNumber:
			result = cmp >= 0;
			break;
		case BTGreaterStrategyNumber:
			result = cmp > 0;
			break;
		default:
			elog(ERROR, "row comparison member with strategy %d",
				 (int) m->sk_strategy);
			result = false;		/* keep compiler quiet */
	}
	if (!result && (m->sk_flags & reqflag))
		*continuescan = false;
	return result;
}

/*
 * Test key i on a tuple: the body of _fbt_checkkeys() for one key (see
 * there).  Sets *continuescan = false when the key is required in
 * direction dir and no later tuple can pass it.  Always inlined: it runs
 * per key per tuple of every scan (the compiler left it out of line).
 */
static pg_attribute_always_inline bool
_fbt_checkkey_inline(FbtScanOpaque so, int i, IndexTuple tuple, int tupnatts,
					 TupleDesc tupdesc, ScanDirection dir, bool *continuescan)
{
	ScanKey		key = &so->keyData[i];
	int			reqflag = ScanDirectionIsBackward(dir) ?
		FBT_SK_REQBKWD : FBT_SK_REQFWD;
	Datum		datum;
	bool		isNull;
	bool		ok;

	if (key->sk_flags & SK_ROW_HEADER)
		return _fbt_check_rowcompare(key, tuple, tupnatts, tupdesc, dir,
									 continuescan);
	if (key->sk_attno > tupnatts)
		return true;
	datum = index_getattr(tuple, key->sk_attno, tupdesc, &isNull);

	if (key->sk_flags & (SK_SEARCHNULL | SK_SEARCHNOTNULL))
	{
		if ((key->sk_flags & SK_SEARCHNULL) ? isNull : !isNull)
			return true;
		if (key->sk_flags & reqflag)
			*continuescan = false;
		return false;
	}

	if (isNull)
	{
		if (_fbt_null_ends_scan(key->sk_flags, dir))
			*continuescan = false;
		return false;
	}

	if (so->keyCmpKind[i] == FBT_CMP_INT4 || so->keyCmpKind[i] == FBT_CMP_INT8)
	{
		/* _fbt_machine_test() for integer keys, inline */
		int64		v = so->keyCmpKind[i] == FBT_CMP_INT4 ?
			(int64) DatumGetInt32(datum) : DatumGetInt64(datum);
		int64		arg = so->keyIarg[i];

		switch (key->sk_strategy)
		{
			case BTLessStrategyNumber:
				ok = v < arg;
				break;
			case BTLessEqualStrategyNumber:
				ok = v <= arg;
				break;
			case BTEqualStrategyNumber:
				ok = v == arg;
				break;
			case BTGreaterEqualStrategyNumber:
				ok = v >= arg;
				break;
			default:
				ok = v > arg;
				break;
		}
	}
	else if (so->keyCmpKind[i] != FBT_CMP_FMGR)
		ok = _fbt_machine_test((FbtCmpKind) so->keyCmpKind[i],
							   key->sk_strategy, so->keyIarg[i],
							   so->keyFarg[i], datum);
	else if (key->sk_flags & FBT_SK_ARRAY_FILTER)
		ok = _fbt_array_member(so, i, datum);	/* never required */
	else
		ok = DatumGetBool(FunctionCall2Coll(&key->sk_func,
											key->sk_collation,
											datum, key->sk_argument));
	if (!ok)
	{
		if (key->sk_flags & reqflag)
			*continuescan = false;
		return false;
	}
	return true;
}

/*
 * _fbt_checkkey() -- test key i of the scan's preprocessed keys (not a
 * skip array's) on a leaf tuple, as _fbt_checkkeys() tests each key.
 * Sets *continuescan as it does.
 */
bool
_fbt_checkkey(IndexScanDesc scan, int i, IndexTuple tuple, int tupnatts,
			  ScanDirection dir, bool *continuescan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	*continuescan = true;
	return _fbt_checkkey_inline(so, i, tuple, tupnatts,
								RelationGetDescr(scan->indexRelation), dir,
								continuescan);
}

/*
 * _fbt_checkkeys() -- does a leaf tuple satisfy all search keys?
 *
 * tuple: a leaf data item of the page being read (locked by the caller),
 * or its high key; tupnatts: the attributes present in tuple (all of them
 * for a data item).  A key on an attribute that suffix truncation removed
 * from a high key is taken as satisfied: the first item of the next page
 * can have any value there (nbtree's rule).
 * Sets *continuescan = false when a required key fails in a way that no
 * later tuple in direction dir can satisfy (nbtree's _bt_checkkeys rules,
 * including NULLs met by a required key at the end of the index where
 * NULLs sort).  Keys before startikey are not tested: the caller knows
 * from _fbt_set_startikey() that every item of the page satisfies them
 * (0 tests them all; always 0 for a high key).  Not for array-mode scans
 * (fbtarray.c).
 */
bool
_fbt_checkkeys(IndexScanDesc scan, IndexTuple tuple, int tupnatts,
			   ScanDirection dir, int startikey, bool *continuescan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	TupleDesc	tupdesc = RelationGetDescr(scan->indexRelation);
	int			i;

	*continuescan = true;
	for (i = startikey; i < so->numberOfKeys; i++)
		if (!_fbt_checkkey_inline(so, i, tuple, tupnatts, tupdesc, dir,
								  continuescan))
			return false;
	return true;
}

/*
 * _fbt_set_startikey() -- how many of the scan's leading keys every data
 * item of a leaf page satisfies (nbtree 18's _bt_set_startikey, for scans
 * outside array mode).
 *
 * firsttup and lasttup: the page's first and last data items (the caller
 * holds the page's lock and has bounds-checked both; the page has at least
 * two).  Returns n, 0 <= n <= so->numberOfKeys: keys 0 .. n-1 hold for
 * every item between the two, so that _fbt_readpage() need not test them
 * per item (issue 28's in-page key-check skipping).  A key is counted when
 * it is required and
 *	- it is on a column before the first one where the two items differ
 *	  (so every item of the page has an equal value there) and firsttup
 *	  satisfies it, or
 *	- it is an inequality (or IS NOT NULL) on that first differing column,
 *	  and both items satisfy it: the items between hold values between
 *	  theirs (an interval's test, and NULLs sort at one end).
 * Values are equal when their images are (so equal for the opclass,
 * whose operators they then pass alike).  Counting stops at the first key that is not so (the per-item
 * test runs from there).  Row comparisons are never counted.  No locks or
 * pins are taken; errors only as the keys' comparison procs raise them.
 */
int
_fbt_set_startikey(IndexScanDesc scan, IndexTuple firsttup,
				   IndexTuple lasttup)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	TupleDesc	tupdesc = RelationGetDescr(rel);
	int			natts = IndexRelationGetNumberOfAttributes(rel);
	int			firstchanging;
	int			i;
	bool		ignored;

	Assert(!so->arrayMode);
	if (so->numberOfKeys == 0)
		return 0;
	/* (numeric 1.0 and 1.00 differ here: fewer keys skipped, no harm) */
	firstchanging = _fbt_first_image_diff(rel, firsttup, lasttup);
	for (i = 0; i < so->numberOfKeys; i++)
	{
		ScanKey		key = &so->keyData[i];

		if (!(key->sk_flags & (FBT_SK_REQFWD | FBT_SK_REQBKWD)) ||
			(key->sk_flags & SK_ROW_HEADER) ||
			key->sk_attno > firstchanging)
			break;
		if (key->sk_attno == firstchanging &&
			(so->keyStrategy[i] == BTEqualStrategyNumber ||
			 !_fbt_checkkey_inline(so, i, lasttup, natts, tupdesc,
								   ForwardScanDirection, &ignored)))
			break;
		if (!_fbt_checkkey_inline(so, i, firsttup, natts, tupdesc,
								  ForwardScanDirection, &ignored))
			break;
	}
	return i;
}
