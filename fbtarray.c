/*-------------------------------------------------------------------------
 *
 * fbtarray.c
 *	  Array mode: = ANY(array) keys advanced in one pass along the leaves,
 *	  and skip arrays on columns without an equality key (skip scan).
 *
 * The design is nbtree's of PostgreSQL 17 (array advancement, Peter
 * Geoghegan; src/backend/access/nbtree/README, "Notes about arrays") and
 * 18 (skip arrays), written for fastbtree's simpler key model:
 *
 *	- Every required column (each leading column with an equality key, and
 *	  the first column without one when it has a range) contributes to a
 *	  "target": the current elements of its array, the argument of its
 *	  equality key, or its range.  A leaf tuple is compared with the target
 *	  column by column (_fbt_array_check): equal everywhere is a match;
 *	  before it in scan direction, the tuple is passed over; past it on a
 *	  column, the array on that column moves to the first element not
 *	  before the tuple's value (a skip array takes the value itself), and
 *	  when the column has no array, or the array has no such element, the
 *	  array of an earlier column moves to its next element and every later
 *	  array starts over ("carry", as an odometer).  When no array is left to
 *	  move, the scan is over.  The elements never move backwards, so every
 *	  tuple of the index is passed at most once per direction.
 *	- Reading on along the leaf is right while the target can be on this
 *	  page: when the elements move, the page's last tuple in scan direction
 *	  (the high key going right, the first item going left) is compared with
 *	  the new target; if it is before it, the rest of the page cannot match
 *	  and the scan starts a new descent ("primitive scan", so->needPrimScan)
 *	  from the target (fbtscan.c, _fbt_first).  A high key whose suffix was
 *	  truncated cannot tell; the scan then steps right, as nbtree does.
 *	- A skip array stands for every value of its column within the
 *	  column's range keys, NULL included when no key excludes it.  It has
 *	  no elements to list: its element is the value last seen, the start of
 *	  the range, or "just past" the value last seen (then the descent asks
 *	  for the first tuple past it).  For int2, int4 and int8 columns
 *	  compared by core's own procedures, "past v" is v + 1 (v - 1 going the
 *	  other way), which lets one descent find (v + 1, x) directly, as
 *	  nbtree's skip support procedures do.
 *
 * Array mode is used when every = ANY key is required once skip arrays are
 * added, no row comparison is among the keys, and no column has an array
 * beside another equality key; otherwise the scan runs one primitive scan
 * per element combination, as before (fbtutils.c), as do all scans with
 * fastbtree.skip_scan off.  Skip arrays are added to columns without an
 * equality key that come before the last column with a key, so that the
 * later keys position the scan.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "fastbtree.h"

/* GUC fastbtree.skip_scan */
bool		fbt_skip_scan = true;

/*
 * _fbt_array_mode_eligible() -- can this scan's preprocessed keys run in
 * array mode?  Called by _fbt_preprocess_keys() once every key is
 * classified (so->keyStrategy filled), before the required flags are set.
 * True when fastbtree.skip_scan is on, the quals can match, there is no
 * row comparison, and no column has an = ANY key beside another equality
 * key.  No locks; no errors.
 */
bool
_fbt_array_mode_eligible(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	bool		arrays = false;
	int			i,
				j;

	if (!so->qual_ok || !fbt_skip_scan)
		return false;
	for (i = 0; i < so->numberOfKeys; i++)
	{
		ScanKey		key = &so->keyData[i];

		if (key->sk_flags & SK_ROW_HEADER)
			return false;
		if (!(key->sk_flags & SK_SEARCHARRAY) ||
			so->keyStrategy[i] != BTEqualStrategyNumber)
			continue;
		arrays = true;
		for (j = 0; j < so->numberOfKeys; j++)
			if (j != i && so->keyData[j].sk_attno == key->sk_attno &&
				so->keyStrategy[j] == BTEqualStrategyNumber)
				return false;
	}
	/* a one-column index without arrays has nothing to run in array mode */
	return arrays ||
		IndexRelationGetNumberOfKeyAttributes(scan->indexRelation) > 1;
}

/*
 * _fbt_add_skip_keys() -- add a skip array key for each column without an
 * equality key that comes before the last column with a key (nbtree 18's
 * rule: the last one never gets one, even with only a range).
 * haseq[col] (in: columns with an equality key) is set for the columns
 * given a skip array.  The keys go after the executor's in
 * so->keyData (fbtbeginscan sized it for them), the arrays to
 * so->arrayKeys; both start at the beginning of their range.  Returns the
 * number of keys added.  No locks; no errors.
 */
int
_fbt_add_skip_keys(IndexScanDesc scan, bool *haseq)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	int			lastkey = -1;
	int			added = 0;
	int			col;
	int			i;

	for (i = 0; i < so->numberOfKeys; i++)
		lastkey = Max(lastkey, so->keyData[i].sk_attno - 1);

	/*
	 * Until 16, btree runs an = ANY key on a column after one without an
	 * equality key as one scan per element, and returns the rows in that
	 * order, which a skip array would change: such scans go without.
	 */
	if (!FBT_ARRAY_FILTERS_IN_ONE_PASS)
	{
		int			firstgap = 0;

		while (firstgap < nkeyatts && haseq[firstgap])
			firstgap++;
		for (i = 0; i < so->numberOfKeys; i++)
			if ((so->keyData[i].sk_flags & SK_SEARCHARRAY) &&
				so->keyStrategy[i] == BTEqualStrategyNumber &&
				so->keyData[i].sk_attno - 1 > firstgap)
				return 0;
	}

	for (col = 0; col < lastkey; col++)
	{
		int			k = so->numberOfKeys;
		ScanKey		key = &so->keyData[k];
		FbtArrayKeyInfo *ak = &so->arrayKeys[so->numArrayKeys];
		FmgrInfo   *proc = index_getprocinfo(rel, col + 1, FBTORDER_PROC);
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), col);

		if (haseq[col])
			continue;
		/* the values' copies live with the array elements */
		if (so->arrayContext == NULL)
			so->arrayContext = AllocSetContextCreate(so->scanCxt,
													 "fastbtree array keys",
													 ALLOCSET_SMALL_SIZES);
		memset(key, 0, sizeof(ScanKeyData));
		key->sk_flags = FBT_SK_SKIP | (rel->rd_indoption[col] << 24);
		key->sk_attno = col + 1;
		key->sk_strategy = BTEqualStrategyNumber;
		key->sk_subtype = InvalidOid;
		key->sk_collation = rel->rd_indcollation[col];
		key->sk_argument = (Datum) 0;
		so->keyStrategy[k] = BTEqualStrategyNumber;
		if (so->keyOrderProc[k].fn_oid != proc->fn_oid)
			fmgr_info_copy(&so->keyOrderProc[k], proc,
						   so->scanCxt);
		so->keyCmpKind[k] = FBT_CMP_FMGR;
		so->keyHasSortSupport[k] = false;

		memset(ak, 0, sizeof(FbtArrayKeyInfo));
		ak->scan_key = k;
		ak->skip = true;
		ak->skip_typlen = att->attlen;
		ak->skip_typbyval = att->attbyval;
		/*
		 * The next value is v + 1 for core's integer comparisons (an
		 * operator class that reuses one of these procs for another type
		 * compares that type as the integer it is stored as, so the step
		 * is right for it too).
		 */
		switch (proc->fn_oid)
		{
			case F_BTINT2CMP:
				ak->skip_incr = 2;
				break;
			case F_BTINT4CMP:
				ak->skip_incr = 4;
				break;
			case F_BTINT8CMP:
				ak->skip_incr = 8;
				break;
			default:
				ak->skip_incr = 0;
		}
#if FBT_HAVE_SKIP_SUPPORT
		/* other types: the opclass's skip support procedure, if any */
		ak->skip_rel = rel;
		if (ak->skip_incr == 0 &&
			RegProcedureIsValid(index_getprocid(rel, col + 1,
												FBTSKIPSUPPORT_PROC)))
		{
			ak->skip_support = MemoryContextAllocZero(so->arrayContext,
													  sizeof(SkipSupportData));
			(void) FunctionCall1(index_getprocinfo(rel, col + 1,
												   FBTSKIPSUPPORT_PROC),
								 PointerGetDatum(ak->skip_support));
		}
#endif
		_fbt_skip_start(ak);
		key->sk_flags &= ~SK_ISNULL;
		so->numArrayKeys++;
		so->numberOfKeys++;
		haseq[col] = true;
		added++;
	}
	return added;
}

/*
 * _fbt_plan_array_mode() -- decide whether the scan runs in array mode and
 * lay out its per-column key lists (see fastbtree.h, FbtScanOpaqueData).
 * Called at the end of _fbt_preprocess_keys(), with the required flags set
 * and so->arrayKeys sorted by column; eligible is
 * _fbt_array_mode_eligible()'s verdict.  Allocates in so->arrayContext.
 * No locks; no errors.
 */
void
_fbt_plan_array_mode(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	bool		haseq[INDEX_MAX_KEYS];
	bool		haskey[INDEX_MAX_KEYS];
	MemoryContext oldcxt;
	int			nreq;
	int			n;
	int			a,
				c,
				i;

	so->arrayMode = false;
	so->needPrimScan = false;
	if (so->numArrayKeys == 0 || !so->qual_ok)
		return;
	/* an array that is not required runs as before (PostgreSQL 15 only) */
	for (a = 0; a < so->numArrayKeys; a++)
		if (!(so->keyData[so->arrayKeys[a].scan_key].sk_flags & FBT_SK_REQFWD))
			break;
	if (a < so->numArrayKeys)
	{
		for (a = 0; a < so->numArrayKeys; a++)
			if (so->arrayKeys[a].skip)
				elog(ERROR, "fastbtree: skip array on column %d of index \"%s\" beside an array that is not required",
					 so->keyData[so->arrayKeys[a].scan_key].sk_attno,
					 RelationGetRelationName(rel));
		return;
	}

	memset(haseq, 0, sizeof(haseq));
	memset(haskey, 0, sizeof(haskey));
	for (i = 0; i < so->numberOfKeys; i++)
	{
		int			col = so->keyData[i].sk_attno - 1;

		haskey[col] = true;
		if (so->keyStrategy[i] == BTEqualStrategyNumber)
			haseq[col] = true;
	}
	nreq = 0;
	while (nreq < nkeyatts && haseq[nreq])
		nreq++;
	if (nreq < nkeyatts && haskey[nreq])
		nreq++;

	for (c = 0; c < INDEX_MAX_KEYS; c++)
		so->colArray[c] = -1;
	for (a = 0; a < so->numArrayKeys; a++)
	{
		int			col = so->keyData[so->arrayKeys[a].scan_key].sk_attno - 1;

		if (col >= nreq || so->colArray[col] >= 0)
			elog(ERROR, "fastbtree: array key on column %d of index \"%s\" cannot run in array mode",
				 col + 1, RelationGetRelationName(rel));
		so->colArray[col] = a;
	}

	oldcxt = MemoryContextSwitchTo(so->arrayContext);
	so->colKeys = palloc(sizeof(int16) * Max(so->numberOfKeys, 1));
	so->filterKeys = palloc(sizeof(int16) * Max(so->numberOfKeys, 1));
	MemoryContextSwitchTo(oldcxt);
	n = 0;
	for (c = 0; c < nreq; c++)
	{
		so->colKeyStart[c] = n;
		for (i = 0; i < so->numberOfKeys; i++)
			if (so->keyData[i].sk_attno - 1 == c &&
				(so->colArray[c] < 0 ||
				 so->arrayKeys[so->colArray[c]].scan_key != i))
				so->colKeys[n++] = i;
	}
	so->colKeyStart[nreq] = n;
	so->numFilterKeys = 0;
	for (i = 0; i < so->numberOfKeys; i++)
		if (so->keyData[i].sk_attno - 1 >= nreq)
			so->filterKeys[so->numFilterKeys++] = i;
	so->nreqcols = nreq;
	so->skipOnly = true;
	for (a = 0; a < so->numArrayKeys; a++)
		if (!so->arrayKeys[a].skip)
			so->skipOnly = false;
	so->arrayMode = true;
}

/*
 * _fbt_skip_start() -- set skip array ak to the start of its range (in the
 * scan direction, whichever it is).  No errors.
 */
void
_fbt_skip_start(FbtArrayKeyInfo *ak)
{
	ak->skip_state = FBT_SKIP_START;
	ak->skip_null = false;
	ak->skip_value = (Datum) 0;
}

/*
 * Make element elem the current one of = ANY array ak: the key's argument,
 * and the machine argument _fbt_first() positions with (the kind of
 * comparison stays: every element has the array's type).
 */
static inline void
_fbt_arr_set_elem(FbtScanOpaque so, FbtArrayKeyInfo *ak, int elem)
{
	int			k = ak->scan_key;

	ak->cur_elem = elem;
	so->keyData[k].sk_argument = ak->elem_values[elem];
	if (so->keyCmpKind[k] != FBT_CMP_FMGR)
		_fbt_machine_arg((FbtCmpKind) so->keyCmpKind[k], so->keyArgWidth[k],
						 ak->elem_values[elem], &so->keyIarg[k],
						 &so->keyFarg[k]);
}

/* Copy datum d (not NULL) of skip array ak into *buf, growing it */
static Datum
_fbt_skip_copy(FbtScanOpaque so, FbtArrayKeyInfo *ak, Datum d, char **buf,
			   Size *bufsize)
{
	Size		sz;

	if (ak->skip_typbyval)
		return d;
	sz = datumGetSize(d, false, ak->skip_typlen);
	if (sz > *bufsize)
	{
		if (*buf != NULL)
			pfree(*buf);
		*bufsize = Max(sz, 64);
		*buf = MemoryContextAlloc(so->arrayContext, *bufsize);
	}
	memcpy(*buf, DatumGetPointer(d), sz);
	return PointerGetDatum(*buf);
}

/* Point the skip array's scan key at its current value */
static inline void
_fbt_skip_setkey(FbtScanOpaque so, FbtArrayKeyInfo *ak)
{
	ScanKey		key = &so->keyData[ak->scan_key];

	key->sk_argument = ak->skip_value;
	if (ak->skip_null)
		key->sk_flags |= SK_ISNULL;
	else
		key->sk_flags &= ~SK_ISNULL;
}

/* Make value d (isnull: NULL) the current element of skip array ak */
static void
_fbt_skip_set(FbtScanOpaque so, FbtArrayKeyInfo *ak, Datum d, bool isnull)
{
	ak->skip_state = FBT_SKIP_VALUE;
	ak->skip_null = isnull;
	ak->skip_value = isnull ? (Datum) 0 :
		_fbt_skip_copy(so, ak, d, &ak->skip_buf, &ak->skip_bufsize);
	_fbt_skip_setkey(so, ak);
}

/*
 * _fbt_skip_mark(), _fbt_skip_restore() -- save and restore the current
 * element of skip array ak with ammarkpos / amrestrpos.  Allocate in
 * so->arrayContext; no errors.
 */
void
_fbt_skip_mark(IndexScanDesc scan, FbtArrayKeyInfo *ak)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	ak->mark_state = ak->skip_state;
	ak->mark_null = ak->skip_null;
	ak->mark_value = (ak->skip_state == FBT_SKIP_START || ak->skip_null) ?
		(Datum) 0 :
		_fbt_skip_copy(so, ak, ak->skip_value, &ak->mark_buf,
					   &ak->mark_bufsize);
}

void
_fbt_skip_restore(IndexScanDesc scan, FbtArrayKeyInfo *ak)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;

	if (ak->mark_state == FBT_SKIP_START)
	{
		_fbt_skip_start(ak);
		_fbt_skip_setkey(so, ak);
	}
	else
	{
		_fbt_skip_set(so, ak, ak->mark_value, ak->mark_null);
		ak->skip_state = ak->mark_state;
	}
}

/*
 * Index-order comparison of a tuple's value (d, dnull) with an argument
 * (arg, argnull) through proc: negative, zero or positive as the value
 * comes before, with or after the argument in the index.  NULLs sort last
 * unless FBT_SK_NULLS_FIRST; FBT_SK_DESC reverses the order of non-NULL
 * values.
 */
static inline int
_fbt_arr_cmp(FmgrInfo *proc, Oid collation, int flags, Datum d, bool dnull,
			 Datum arg, bool argnull)
{
	int32		r;

	if (dnull || argnull)
	{
		if (dnull && argnull)
			return 0;
		if (dnull)
			return (flags & FBT_SK_NULLS_FIRST) ? -1 : 1;
		return (flags & FBT_SK_NULLS_FIRST) ? 1 : -1;
	}
	r = DatumGetInt32(FunctionCall2Coll(proc, collation, d, arg));
	if (r == 0)
		return 0;
	if (flags & FBT_SK_DESC)
		return r > 0 ? -1 : 1;
	return r > 0 ? 1 : -1;
}

/*
 * Where a tuple's value (d, dnull) on key k's column stands against key k
 * (not an array key), in index order: 0 if it satisfies the key, -1 if the
 * values that do lie after it, 1 if they lie before it.
 */
static int
_fbt_arr_key_side(FbtScanOpaque so, int k, Datum d, bool dnull)
{
	ScanKey		key = &so->keyData[k];
	int			flags = key->sk_flags;
	int			r;

	if (flags & SK_SEARCHNULL)
	{
		if (dnull)
			return 0;
		return (flags & FBT_SK_NULLS_FIRST) ? 1 : -1;
	}
	if (flags & SK_SEARCHNOTNULL)
	{
		if (!dnull)
			return 0;
		return (flags & FBT_SK_NULLS_FIRST) ? -1 : 1;
	}
	if (dnull)
		return (flags & FBT_SK_NULLS_FIRST) ? -1 : 1;
	if (so->keyCmpKind[k] != FBT_CMP_FMGR)
	{
		/* integers, oids and floats compare in place (fbtcompare.c) */
		r = _fbt_machine_order((FbtCmpKind) so->keyCmpKind[k],
							   so->keyIarg[k], so->keyFarg[k], d);
		r = (r > 0) - (r < 0);
		if (flags & FBT_SK_DESC)
			r = -r;
	}
	else
		r = _fbt_arr_cmp(&so->keyOrderProc[k], key->sk_collation, flags, d,
						 false, key->sk_argument, false);
	switch (so->keyStrategy[k])
	{
		case BTLessStrategyNumber:
			return r < 0 ? 0 : 1;
		case BTLessEqualStrategyNumber:
			return r <= 0 ? 0 : 1;
		case BTEqualStrategyNumber:
			return r;
		case BTGreaterEqualStrategyNumber:
			return r >= 0 ? 0 : -1;
		case BTGreaterStrategyNumber:
			return r > 0 ? 0 : -1;
		default:
			elog(ERROR, "unrecognized strategy number: %d",
				 (int) so->keyStrategy[k]);
			return 0;			/* keep compiler quiet */
	}
}

/*
 * Compare a tuple's value with array ak's current element, in scan
 * direction (fwd: 1 forward, -1 backward): negative if the value comes
 * first, 0 if equal, positive if the element comes first.
 */
static int
_fbt_arr_elem_dcmp(FbtScanOpaque so, FbtArrayKeyInfo *ak, Datum d, bool dnull,
				   int fwd)
{
	ScanKey		key = &so->keyData[ak->scan_key];
	FmgrInfo   *proc = &so->keyOrderProc[ak->scan_key];
	int			r;

	if (!ak->skip)
	{
		if (!dnull && so->keyCmpKind[ak->scan_key] != FBT_CMP_FMGR)
		{
			r = _fbt_machine_order((FbtCmpKind) so->keyCmpKind[ak->scan_key],
								   so->keyIarg[ak->scan_key],
								   so->keyFarg[ak->scan_key], d);
			r = (r > 0) - (r < 0);
			return (key->sk_flags & FBT_SK_DESC) ? -fwd * r : fwd * r;
		}
		return fwd * _fbt_arr_cmp(proc, key->sk_collation, key->sk_flags,
								  d, dnull, ak->elem_values[ak->cur_elem],
								  false);
	}
	switch (ak->skip_state)
	{
		case FBT_SKIP_START:
			return 1;
		case FBT_SKIP_AFTER:
			r = fwd * _fbt_arr_cmp(proc, key->sk_collation, key->sk_flags,
								   d, dnull, ak->skip_value, ak->skip_null);
			return r <= 0 ? -1 : 1;
		default:
			return fwd * _fbt_arr_cmp(proc, key->sk_collation, key->sk_flags,
									  d, dnull, ak->skip_value, ak->skip_null);
	}
}

/* Set array ak to the first element of its range in scan direction */
static void
_fbt_arr_start(FbtScanOpaque so, FbtArrayKeyInfo *ak, int fwd)
{
	if (ak->skip)
	{
		_fbt_skip_start(ak);
		so->keyData[ak->scan_key].sk_flags &= ~SK_ISNULL;
		return;
	}
	_fbt_arr_set_elem(so, ak, fwd > 0 ? 0 : ak->num_elems - 1);
}

/*
 * Index-order comparison of a tuple's value (d, dnull) with element elem
 * of = ANY array ak, in place for integers, oids and floats.
 */
static inline int
_fbt_arr_elem_cmp(FbtScanOpaque so, FbtArrayKeyInfo *ak, Datum d, bool dnull,
				  int elem)
{
	int			k = ak->scan_key;
	ScanKey		key = &so->keyData[k];

	if (!dnull && so->keyCmpKind[k] != FBT_CMP_FMGR)
	{
		int64		iarg = 0;
		double		farg = 0;
		int32		r;

		_fbt_machine_arg((FbtCmpKind) so->keyCmpKind[k], so->keyArgWidth[k],
						 ak->elem_values[elem], &iarg, &farg);
		r = _fbt_machine_order((FbtCmpKind) so->keyCmpKind[k], iarg, farg, d);
		r = (r > 0) - (r < 0);
		return (key->sk_flags & FBT_SK_DESC) ? -r : r;
	}
	return _fbt_arr_cmp(&so->keyOrderProc[k], key->sk_collation,
						key->sk_flags, d, dnull, ak->elem_values[elem], false);
}

/*
 * Move array ak to the first element not before the tuple's value (d,
 * dnull) in scan direction.  False if there is none (ak is left as it
 * was).  The next element is tried first (the usual case: elements met in
 * turn), then a binary search.
 */
static bool
_fbt_arr_advance_to(FbtScanOpaque so, FbtArrayKeyInfo *ak, Datum d,
					bool dnull, int fwd)
{
	int			lo,
				hi;

	if (ak->skip)
	{
		_fbt_skip_set(so, ak, d, dnull);
		return true;
	}
	lo = ak->cur_elem + fwd;
	if (lo < 0 || lo >= ak->num_elems)
		return false;
	if (fwd * _fbt_arr_elem_cmp(so, ak, d, dnull, lo) <= 0)
	{
		_fbt_arr_set_elem(so, ak, lo);
		return true;
	}
	if (fwd > 0)
	{
		/* the first element at or after the value, past the next one */
		lo = ak->cur_elem + 2;
		hi = ak->num_elems;
		while (lo < hi)
		{
			int			mid = lo + (hi - lo) / 2;

			if (_fbt_arr_elem_cmp(so, ak, d, dnull, mid) <= 0)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (lo >= ak->num_elems)
			return false;
	}
	else
	{
		/* the last element at or before the value, before the previous one */
		lo = 0;
		hi = ak->cur_elem - 1;
		while (lo < hi)
		{
			int			mid = lo + (hi - lo) / 2;

			if (_fbt_arr_elem_cmp(so, ak, d, dnull, mid) < 0)
				hi = mid;
			else
				lo = mid + 1;
		}
		/* elements [0, lo) are at or before the value */
		if (lo == 0)
			return false;
		lo--;
	}
	_fbt_arr_set_elem(so, ak, lo);
	return true;
}

/*
 * Step skip array ak's value (not NULL) to the next value of its type in
 * scan direction: the next integer for core's integer comparisons
 * (skip_incr), else the next value the operator class's skip support
 * procedure gives (since 18; nbtree 18 uses it the same way).  False on
 * overflow, and when the type has neither.  Errors: whatever the skip
 * support procedure raises.
 */
static bool
_fbt_skip_increment(FbtScanOpaque so, FbtArrayKeyInfo *ak, int fwd)
{
	ScanKey		key = &so->keyData[ak->scan_key];
	int			step = (key->sk_flags & FBT_SK_DESC) ? -fwd : fwd;

	switch (ak->skip_incr)
	{
		case 2:
			{
				int16		v = DatumGetInt16(ak->skip_value);

				if (step > 0 ? v == PG_INT16_MAX : v == PG_INT16_MIN)
					return false;
				ak->skip_value = Int16GetDatum(v + step);
				break;
			}
		case 4:
			{
				int32		v = DatumGetInt32(ak->skip_value);

				if (step > 0 ? v == PG_INT32_MAX : v == PG_INT32_MIN)
					return false;
				ak->skip_value = Int32GetDatum(v + step);
				break;
			}
		case 8:
			{
				int64		v = DatumGetInt64(ak->skip_value);

				if (step > 0 ? v == PG_INT64_MAX : v == PG_INT64_MIN)
					return false;
				ak->skip_value = Int64GetDatum(v + step);
				break;
			}
		default:
#if FBT_HAVE_SKIP_SUPPORT
			if (ak->skip_support != NULL)
			{
				bool		overflow = false;
				Datum		next;

				/* the procedure's order is the type's, ascending */
				next = step > 0 ?
					ak->skip_support->increment(ak->skip_rel, ak->skip_value,
												&overflow) :
					ak->skip_support->decrement(ak->skip_rel, ak->skip_value,
												&overflow);
				if (overflow)
					return false;
				ak->skip_value = _fbt_skip_copy(so, ak, next, &ak->skip_buf,
												&ak->skip_bufsize);
				if (!ak->skip_typbyval)
					pfree(DatumGetPointer(next));
				break;
			}
#endif
			return false;
	}
	_fbt_skip_setkey(so, ak);
	return true;
}

/*
 * Move array ak to its next element in scan direction.  False if it has
 * none; ak then starts over.
 */
static bool
_fbt_arr_step(FbtScanOpaque so, FbtArrayKeyInfo *ak, int fwd)
{
	if (!ak->skip)
	{
		int			next = ak->cur_elem + fwd;

		if (next < 0 || next >= ak->num_elems)
		{
			_fbt_arr_start(so, ak, fwd);
			return false;
		}
		_fbt_arr_set_elem(so, ak, next);
		return true;
	}

	/* a skip array that matched a tuple has a value */
	Assert(ak->skip_state == FBT_SKIP_VALUE);
	if (ak->skip_null)
	{
		int			flags = so->keyData[ak->scan_key].sk_flags;
		bool		nulls_at_end = (flags & FBT_SK_NULLS_FIRST) ? fwd < 0 : fwd > 0;

		if (nulls_at_end)
		{
			_fbt_arr_start(so, ak, fwd);
			return false;
		}
		ak->skip_state = FBT_SKIP_AFTER;
		return true;
	}
	if (_fbt_skip_increment(so, ak, fwd))
		return true;
	ak->skip_state = FBT_SKIP_AFTER;
	return true;
}

/* Every array after arrayKeys[a] starts over */
static void
_fbt_arr_reset_after(FbtScanOpaque so, int a, int fwd)
{
	for (a++; a < so->numArrayKeys; a++)
		_fbt_arr_start(so, &so->arrayKeys[a], fwd);
}

/*
 * Every tuple with the current elements on the columns before column c
 * has been passed: move the last array before c to its next element
 * ("carry").  Returns FBT_ARR_BEFORE (the new target lies ahead) or
 * FBT_ARR_END.
 */
static FbtArrayResult
_fbt_arr_carry(FbtScanOpaque so, int c, int fwd)
{
	int			a;

	for (a = so->numArrayKeys - 1; a >= 0; a--)
	{
		FbtArrayKeyInfo *ak = &so->arrayKeys[a];

		if (so->keyData[ak->scan_key].sk_attno - 1 >= c)
			continue;
		if (_fbt_arr_step(so, ak, fwd))
		{
			_fbt_arr_reset_after(so, a, fwd);
			so->arraysAdvanced = true;
			so->targetMoved = true;
			return FBT_ARR_BEFORE;
		}
	}
	return FBT_ARR_END;
}

/*
 * _fbt_array_check() -- compare a tuple with the target of an array-mode
 * scan (see the file header), moving the arrays when advance is true.
 *
 * tuple: a leaf item or high key of the page being read (locked by the
 * caller), with tupnatts attributes present.  dir: the scan direction.
 * Returns FBT_ARR_MATCH when every required column equals the target (the
 * caller still tests the filter keys), FBT_ARR_BEFORE when the tuple lies
 * before the target (with advance, after moving the arrays past the
 * tuple), FBT_ARR_TRUNCATED when a suffix-truncated pivot cannot tell,
 * FBT_ARR_END (with advance) when no array is left to move, and, without
 * advance, FBT_ARR_AFTER when the tuple lies past the target.  Sets
 * so->arraysAdvanced and so->targetMoved when an element moved.  Errors:
 * whatever the comparison procs raise.
 */
FbtArrayResult
_fbt_array_check(IndexScanDesc scan, IndexTuple tuple, int tupnatts,
				 ScanDirection dir, bool advance)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	TupleDesc	tupdesc = RelationGetDescr(scan->indexRelation);
	int			fwd = ScanDirectionIsBackward(dir) ? -1 : 1;
	int			c;

	for (c = 0; c < so->nreqcols; c++)
	{
		Datum		d;
		bool		dnull;
		int			side = 0;
		int			a;
		int			j;

		if (c >= tupnatts)
			return FBT_ARR_TRUNCATED;
		d = index_getattr(tuple, c + 1, tupdesc, &dnull);

		/* the column's keys other than its array: a range, an equality */
		for (j = so->colKeyStart[c]; j < so->colKeyStart[c + 1]; j++)
		{
			int			s = fwd * _fbt_arr_key_side(so, so->colKeys[j], d,
													dnull);

			if (s > 0)
			{
				side = 1;
				break;
			}
			if (s < 0)
				side = -1;
		}
		if (side > 0)
			return advance ? _fbt_arr_carry(so, c, fwd) : FBT_ARR_AFTER;

		a = so->colArray[c];
		if (a >= 0)
		{
			FbtArrayKeyInfo *ak = &so->arrayKeys[a];
			int			s = _fbt_arr_elem_dcmp(so, ak, d, dnull, fwd);

			if (s < 0)
				return FBT_ARR_BEFORE;
			if (s > 0)
			{
				/* short of a skip array's range: it starts ahead */
				if (side < 0 && ak->skip)
					return FBT_ARR_BEFORE;
				if (!advance)
					return FBT_ARR_AFTER;
				if (!_fbt_arr_advance_to(so, ak, d, dnull, fwd))
				{
					_fbt_arr_start(so, ak, fwd);
					_fbt_arr_reset_after(so, a, fwd);
					return _fbt_arr_carry(so, c, fwd);
				}
				_fbt_arr_reset_after(so, a, fwd);
				so->arraysAdvanced = true;
				so->targetMoved = true;
				if (!ak->skip && _fbt_arr_elem_dcmp(so, ak, d, dnull, fwd) != 0)
					return FBT_ARR_BEFORE;
			}
		}
		if (side < 0)
			return FBT_ARR_BEFORE;
	}
	return FBT_ARR_MATCH;
}

/*
 * _fbt_array_page_spans() -- may the leaf items from first to last (in
 * scan direction, both read from the page locked by the caller) be tested
 * without moving the arrays on each (fbtscan.c, _fbt_readpage_arrays)?
 * Yes when every array of the scan is a skip array (each stands for every
 * value in its column's range: a tuple matches exactly when it passes the
 * scan's other keys) and the two items differ on the first skipped
 * column: the page holds several of its values, and following them one by
 * one would cost a comparison and a move per item.  nbtree 18 skips key
 * checks within a page for the same reason (_bt_set_startikey).  No
 * errors but the comparison proc's.
 */
bool
_fbt_array_page_spans(IndexScanDesc scan, IndexTuple first, IndexTuple last)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	TupleDesc	tupdesc = RelationGetDescr(scan->indexRelation);
	FbtArrayKeyInfo *ak;
	ScanKey		key;
	Datum		d1,
				d2;
	bool		n1,
				n2;

	if (!so->skipOnly || first == last)
		return false;
	ak = &so->arrayKeys[0];
	key = &so->keyData[ak->scan_key];
	d1 = index_getattr(first, key->sk_attno, tupdesc, &n1);
	d2 = index_getattr(last, key->sk_attno, tupdesc, &n2);
	return _fbt_arr_cmp(&so->keyOrderProc[ak->scan_key], key->sk_collation,
						key->sk_flags, d1, n1, d2, n2) != 0;
}

/*
 * _fbt_array_plain() -- does a leaf tuple pass every key of an array-mode
 * scan whose arrays are all skip arrays, skip arrays aside (see
 * _fbt_array_page_spans())?  Moves no array and ends nothing.  Errors:
 * whatever the operators raise.
 */
bool
_fbt_array_plain(IndexScanDesc scan, IndexTuple tuple, int tupnatts,
				 ScanDirection dir)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	bool		continuescan;
	int			i;

	for (i = 0; i < so->numberOfKeys; i++)
	{
		if (so->keyData[i].sk_flags & FBT_SK_SKIP)
			continue;
		if (!_fbt_checkkey(scan, i, tuple, tupnatts, dir, &continuescan))
			return false;
	}
	return true;
}

/*
 * _fbt_array_filter() -- does a tuple that matched the target of an
 * array-mode scan also satisfy the keys on the columns after the required
 * ones?  None of them ends the scan.  Errors: whatever the operators raise.
 */
bool
_fbt_array_filter(IndexScanDesc scan, IndexTuple tuple, int tupnatts,
				  ScanDirection dir)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	bool		continuescan;
	int			i;

	for (i = 0; i < so->numFilterKeys; i++)
		if (!_fbt_checkkey(scan, so->filterKeys[i], tuple, tupnatts, dir,
						   &continuescan))
			return false;
	return true;
}

/*
 * Parallel array-mode scans (fbtscan.c, "Parallel scans") hand a scheduled
 * primitive scan to the next participant with the arrays' positions, as
 * nbtree's _bt_parallel_serialize_arrays() does.  Per array, in
 * so->arrayKeys order: an int32, the current element of an = ANY array or
 * a skip array's state (FBT_SKIP_*, plus 0x100 when its value is NULL);
 * then, for a skip array with a non-NULL value (state VALUE or AFTER), the
 * value as datumSerialize() writes it.
 */
#define FBT_SERIAL_NULL		0x100

/*
 * _fbt_array_serial_bound() -- bytes the serialized arrays of any
 * array-mode scan of index rel can take: an array per key column at most
 * (_fbt_plan_array_mode), each a value of the column's type, a reference
 * type's value no longer than an index tuple.  No locks; no errors.
 */
Size
_fbt_array_serial_bound(Relation rel)
{
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);
	Size		sz = 0;
	int			i;

	for (i = 0; i < nkeyatts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), i);

		sz = add_size(sz, sizeof(int32));
		if (att->attbyval)
			sz = add_size(sz, datumEstimateSpace((Datum) 0, false, true,
												 att->attlen));
		else
			sz = add_size(sz, sizeof(int) + FBT_MAX_ITEM_SIZE);
	}
	return sz;
}

/* whether skip array ak's current element has a value to serialize */
static inline bool
_fbt_skip_has_value(FbtArrayKeyInfo *ak)
{
	return ak->skip_state != FBT_SKIP_START && !ak->skip_null;
}

/*
 * _fbt_array_serial_size() -- bytes _fbt_array_serialize() writes for the
 * scan's arrays now.  No locks; no errors.
 */
Size
_fbt_array_serial_size(IndexScanDesc scan)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	Size		sz = 0;
	int			a;

	for (a = 0; a < so->numArrayKeys; a++)
	{
		FbtArrayKeyInfo *ak = &so->arrayKeys[a];

		sz += sizeof(int32);
		if (ak->skip && _fbt_skip_has_value(ak))
			sz += datumEstimateSpace(ak->skip_value, false, ak->skip_typbyval,
									 ak->skip_typlen);
	}
	return sz;
}

/*
 * _fbt_array_serialize() -- write the current elements of an array-mode
 * scan's arrays at dst (_fbt_array_serial_size() bytes; shared memory the
 * caller has reserved for itself: no allocation, no locks taken).
 */
void
_fbt_array_serialize(IndexScanDesc scan, char *dst)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	int			a;

	for (a = 0; a < so->numArrayKeys; a++)
	{
		FbtArrayKeyInfo *ak = &so->arrayKeys[a];
		int32		word;

		if (!ak->skip)
			word = ak->cur_elem;
		else
			word = ak->skip_state | (ak->skip_null ? FBT_SERIAL_NULL : 0);
		memcpy(dst, &word, sizeof(int32));
		dst += sizeof(int32);
		if (ak->skip && _fbt_skip_has_value(ak))
			datumSerialize(ak->skip_value, false, ak->skip_typbyval,
						   ak->skip_typlen, &dst);
	}
}

/*
 * _fbt_array_restore() -- make the elements written at src by
 * _fbt_array_serialize() (in another participant of the same scan) the
 * current ones of this scan's arrays.  Allocates in so->arrayContext.
 * Errors: elog(ERROR) on an element out of range (the shared state is not
 * this scan's).
 */
void
_fbt_array_restore(IndexScanDesc scan, char *src)
{
	FbtScanOpaque so = (FbtScanOpaque) scan->opaque;
	int			a;

	for (a = 0; a < so->numArrayKeys; a++)
	{
		FbtArrayKeyInfo *ak = &so->arrayKeys[a];
		int32		word;

		memcpy(&word, src, sizeof(int32));
		src += sizeof(int32);
		if (!ak->skip)
		{
			if (word < 0 || word >= ak->num_elems)
				elog(ERROR, "fastbtree: parallel scan of index \"%s\" handed out element %d of an array of %d",
					 RelationGetRelationName(scan->indexRelation), word,
					 ak->num_elems);
			_fbt_arr_set_elem(so, ak, word);
			continue;
		}
		if ((word & ~FBT_SERIAL_NULL) == FBT_SKIP_START)
		{
			_fbt_skip_start(ak);
			_fbt_skip_setkey(so, ak);
		}
		else if ((word & ~FBT_SERIAL_NULL) != FBT_SKIP_VALUE &&
				 (word & ~FBT_SERIAL_NULL) != FBT_SKIP_AFTER)
			elog(ERROR, "fastbtree: parallel scan of index \"%s\" handed out skip state %d",
				 RelationGetRelationName(scan->indexRelation), word);
		else if (word & FBT_SERIAL_NULL)
		{
			_fbt_skip_set(so, ak, (Datum) 0, true);
			ak->skip_state = (int8) (word & ~FBT_SERIAL_NULL);
		}
		else
		{
			bool		isnull;
			Datum		d = datumRestore(&src, &isnull);

			_fbt_skip_set(so, ak, d, isnull);
			ak->skip_state = (int8) word;
			if (!ak->skip_typbyval && !isnull)
				pfree(DatumGetPointer(d));
		}
	}
}
