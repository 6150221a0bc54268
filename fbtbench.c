/*-------------------------------------------------------------------------
 *
 * fbtbench.c
 *	  fastbtree_probe(): an in-server probe benchmark that drives any
 *	  ordered index access method (btree, fastbtree) through the index AM
 *	  API, without parse, plan or executor, so that index cost can be
 *	  compared on its own.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "fastbtree.h"

FBT_FUNCTION_INFO_V1(fastbtree_probe);

/*
 * fastbtree_probe(index regclass, keys anyarray, loops int4 DEFAULT 1)
 * returns (probes int8, found int8, ns_per_probe float8).
 *
 * For each loop and each non-null element of keys, in order, rescans one
 * index scan with "first column = element" and fetches every matching heap
 * TID with index_getnext_tid() (the heap is not visited), as a nested-loop
 * inner side does.  The equality operator is the index opfamily's for
 * (column type, element type), so cross-type probes work.  Returns the
 * number of probes, the number of TIDs found, and the elapsed wall-clock
 * time per probe in nanoseconds.  Takes AccessShareLock on the index and
 * its table; uses the active snapshot.  Errors: 42809 if the relation is
 * not an index with amgettuple, 42883 if the opfamily has no such
 * equality operator, 22023 for loops < 1.
 */
Datum
fastbtree_probe(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	ArrayType  *keys = PG_GETARG_ARRAYTYPE_P(1);
	int32		loops = PG_GETARG_INT32(2);
	Oid			elemtype = ARR_ELEMTYPE(keys);
	Relation	index;
	Relation	heap;
	Oid			eqop;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	ScanKeyData skey;
	IndexScanDesc scan;
	instr_time	start;
	instr_time	elapsed;
	int64		probes = 0;
	int64		found = 0;
	int			loop;
	int			i;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		rnulls[3] = {false, false, false};

	if (loops < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("loops must be at least 1")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	index = index_open(indexoid, AccessShareLock);
	if (index->rd_indam->amgettuple == NULL || !index->rd_indam->amcanorder)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" is not an ordered index with amgettuple",
						RelationGetRelationName(index))));
	heap = table_open(index->rd_index->indrelid, AccessShareLock);

	eqop = get_opfamily_member(index->rd_opfamily[0], index->rd_opcintype[0],
							   elemtype, BTEqualStrategyNumber);
	if (!OidIsValid(eqop))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("operator family of index \"%s\" has no equality operator for %s = %s",
						RelationGetRelationName(index),
						format_type_be(index->rd_opcintype[0]),
						format_type_be(elemtype))));

	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(keys, elemtype, elmlen, elmbyval, elmalign,
					  &elems, &nulls, &nelems);

	ScanKeyInit(&skey, 1, BTEqualStrategyNumber, get_opcode(eqop), (Datum) 0);
	skey.sk_subtype = elemtype;
	skey.sk_collation = index->rd_indcollation[0];

	scan = fbt_index_beginscan(heap, index, GetActiveSnapshot(), 1, 0);

	INSTR_TIME_SET_CURRENT(start);
	for (loop = 0; loop < loops; loop++)
	{
		for (i = 0; i < nelems; i++)
		{
			if (nulls[i])
				continue;
			CHECK_FOR_INTERRUPTS();
			skey.sk_argument = elems[i];
			index_rescan(scan, &skey, 1, NULL, 0);
			while (index_getnext_tid(scan, ForwardScanDirection) != NULL)
				found++;
			probes++;
		}
	}
	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, start);

	index_endscan(scan);
	table_close(heap, AccessShareLock);
	index_close(index, AccessShareLock);

	values[0] = Int64GetDatum(probes);
	values[1] = Int64GetDatum(found);
	values[2] = Float8GetDatum(probes > 0 ?
							   INSTR_TIME_GET_DOUBLE(elapsed) * 1e9 / probes :
							   0.0);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, rnulls)));
}
