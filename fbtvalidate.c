/*-------------------------------------------------------------------------
 *
 * fbtvalidate.c
 *	  Operator class checks for fastbtree: the validator (amvalidate), the
 *	  signature checks of new members (amadjustmembers), and the build-time
 *	  refusal of bytewise classes under nondeterministic collations.
 *
 * fastbtree's operator families follow btree's rules: strategies 1..5 are
 * <, <=, =, >=, > (search operators only, never ORDER BY), and the support
 * functions are numbered as btree's (see FBTORDER_PROC and its neighbours in
 * fastbtree.h).  The planner reads our operators as btree ones, so a family
 * that breaks those rules would give wrong plans, not merely slow ones; this
 * validator lets amvalidate() find such families.
 *
 * IDENTIFICATION
 *	  fbtvalidate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/amvalidate.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_index.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "nodes/execnodes.h"	/* IndexInfo, for fastbtree.h */
#include "nodes/pg_list.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "fastbtree.h"

/* The AM's name, as messages print it */
static const char *const fbt_amname = "fastbtree";

/* Bitmask of a strategy or support function number in OpFamilyOpFuncGroup */
#define FBT_MEMBER_BIT(n)	(((uint64) 1) << (n))

static bool fbt_check_support_proc(const char *opfamilyname,
								   Form_pg_amproc procform);
static bool fbt_check_operator(const char *opfamilyname,
							   Form_pg_amop oprform);
static uint64 fbt_all_strategies(void);

/*
 * fbtvalidate
 *		amvalidate callback: check the operator class opclassoid and the
 *		operator family it belongs to.
 *
 * Returns true if both follow fastbtree's rules.  Otherwise it reports each
 * problem found as an INFO message (ERRCODE_INVALID_OBJECT_DEFINITION), as
 * core validators do, and returns false; it does not stop at the first
 * problem.  Checks that concern the whole family (signatures, completeness
 * of cross-type members) are repeated for each class of the family; that
 * costs little and keeps the callback's contract simple.
 *
 * Raises ERROR only if the class or its family cannot be found in the
 * catalog caches.  Takes no locks beyond the catalog cache's own; the
 * cache entries it pins are released before return.
 */
bool
fbtvalidate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opclassname;
	HeapTuple	familytup;
	Form_pg_opfamily familyform;
	char	   *opfamilyname;
	CatCList   *oprlist;
	CatCList   *proclist;
	List	   *grouplist;
	ListCell   *lc;
	List	   *familytypes = NIL;
	int			npairs = 0;
	bool		found_opclass_pair = false;
	uint64		all_strategies = fbt_all_strategies();
	int			i;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);

	familytup = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(opfamilyoid));
	if (!HeapTupleIsValid(familytup))
		elog(ERROR, "cache lookup failed for operator family %u", opfamilyoid);
	familyform = (Form_pg_opfamily) GETSTRUCT(familytup);
	opfamilyname = NameStr(familyform->opfname);

	/* Every operator and support function of the family, not the class */
	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));

	/* First each member on its own: its number and its signature */
	for (i = 0; i < proclist->n_members; i++)
	{
		HeapTuple	proctup = &proclist->members[i]->tuple;

		if (!fbt_check_support_proc(opfamilyname,
									(Form_pg_amproc) GETSTRUCT(proctup)))
			result = false;
	}

	for (i = 0; i < oprlist->n_members; i++)
	{
		HeapTuple	oprtup = &oprlist->members[i]->tuple;

		if (!fbt_check_operator(opfamilyname,
								(Form_pg_amop) GETSTRUCT(oprtup)))
			result = false;
	}

	/*
	 * Then the members grouped by (left type, right type).  Each pair the
	 * family supports needs the five operators and a comparison function;
	 * sort support and in_range are optional.
	 */
	grouplist = identify_opfamily_groups(oprlist, proclist);
	foreach(lc, grouplist)
	{
		OpFamilyOpFuncGroup *group = (OpFamilyOpFuncGroup *) lfirst(lc);

		/*
		 * An in_range function's right type is the type of the offset (an
		 * interval for datetime_ops), which need not be a type the family
		 * compares.  A pair that has nothing but in_range is therefore not a
		 * supported pair of types, and is neither checked nor counted.
		 */
		if (group->operatorset == 0 &&
			group->functionset == FBT_MEMBER_BIT(FBTINRANGE_PROC))
			continue;

		npairs++;
		familytypes = list_append_unique_oid(familytypes, group->lefttype);
		familytypes = list_append_unique_oid(familytypes, group->righttype);

		if (group->lefttype == opcintype && group->righttype == opcintype)
			found_opclass_pair = true;

		if ((group->operatorset & all_strategies) != all_strategies)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s is missing operator(s) for types %s and %s",
							opfamilyname, fbt_amname,
							format_type_be(group->lefttype),
							format_type_be(group->righttype))));
			result = false;
		}

		if ((group->functionset & FBT_MEMBER_BIT(FBTORDER_PROC)) == 0)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s is missing support function for types %s and %s",
							opfamilyname, fbt_amname,
							format_type_be(group->lefttype),
							format_type_be(group->righttype))));
			result = false;
		}
	}

	/*
	 * The class's own type must be a supported pair; if it is, the loop
	 * above has already checked that the pair is complete.
	 */
	if (!found_opclass_pair)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator class \"%s\" of access method %s is missing operator(s)",
						opclassname, fbt_amname)));
		result = false;
	}

	/*
	 * A family must compare every one of its types with every other.  A
	 * missing cross-type pair gives no wrong answer, but it stops the
	 * planner from deriving quals through equivalence classes, and every
	 * family we ship (the mirrors of btree's) is complete.
	 */
	if (npairs != list_length(familytypes) * list_length(familytypes))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family \"%s\" of access method %s is missing cross-type operator(s)",
						opfamilyname, fbt_amname)));
		result = false;
	}

	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(familytup);
	ReleaseSysCache(classtup);

	return result;
}

/*
 * Check one support function of the family named opfamilyname: its number
 * must be one of FBTORDER_PROC .. FBTOPTIONS_PROC (or FBTSKIPSUPPORT_PROC
 * since 18) and its signature must be
 * the one that number calls for.  Reports a problem as INFO and returns
 * false.
 */
static bool
fbt_check_support_proc(const char *opfamilyname, Form_pg_amproc procform)
{
	bool		ok;

	switch (procform->amprocnum)
	{
		case FBTORDER_PROC:
			/* int4 f(left, right): <0, 0 or >0 */
			ok = check_amproc_signature(procform->amproc, INT4OID, true,
										2, 2,
										procform->amproclefttype,
										procform->amprocrighttype);
			break;
		case FBTSORTSUPPORT_PROC:
			/* void f(SortSupport) */
			ok = check_amproc_signature(procform->amproc, VOIDOID, true,
										1, 1, INTERNALOID);
			break;
		case FBTINRANGE_PROC:
			/* bool f(value, base, offset, sub, less) */
			ok = check_amproc_signature(procform->amproc, BOOLOID, true,
										5, 5,
										procform->amproclefttype,
										procform->amproclefttype,
										procform->amprocrighttype,
										BOOLOID, BOOLOID);
			break;
		case FBTEQUALIMAGE_PROC:
			/* bool f(collation oid) */
			ok = check_amproc_signature(procform->amproc, BOOLOID, true,
										1, 1, OIDOID);
			break;
		case FBTOPTIONS_PROC:
			ok = check_amoptsproc_signature(procform->amproc);
			break;
#if FBT_HAVE_SKIP_SUPPORT
		case FBTSKIPSUPPORT_PROC:
			/* void f(SkipSupport) */
			ok = check_amproc_signature(procform->amproc, VOIDOID, true,
										1, 1, INTERNALOID);
			break;
#endif
		default:
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s contains function %s with invalid support number %d",
							opfamilyname, fbt_amname,
							format_procedure(procform->amproc),
							procform->amprocnum)));
			return false;
	}

	if (!ok)
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family \"%s\" of access method %s contains function %s with wrong signature for support number %d",
						opfamilyname, fbt_amname,
						format_procedure(procform->amproc),
						procform->amprocnum)));
	return ok;
}

/*
 * Check one operator of the family named opfamilyname: a strategy number
 * between 1 and FBTMaxStrategyNumber, a search operator (we support no
 * ORDER BY operators), and bool result on (lefttype, righttype).  Reports
 * each problem as INFO and returns false if there was any.
 */
static bool
fbt_check_operator(const char *opfamilyname, Form_pg_amop oprform)
{
	bool		ok = true;

	if (oprform->amopstrategy < 1 ||
		oprform->amopstrategy > FBTMaxStrategyNumber)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family \"%s\" of access method %s contains operator %s with invalid strategy number %d",
						opfamilyname, fbt_amname,
						format_operator(oprform->amopopr),
						oprform->amopstrategy)));
		ok = false;
	}

	if (oprform->amoppurpose != AMOP_SEARCH ||
		OidIsValid(oprform->amopsortfamily))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family \"%s\" of access method %s contains invalid ORDER BY specification for operator %s",
						opfamilyname, fbt_amname,
						format_operator(oprform->amopopr))));
		ok = false;
	}

	if (!check_amop_signature(oprform->amopopr, BOOLOID,
							  oprform->amoplefttype,
							  oprform->amoprighttype))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family \"%s\" of access method %s contains operator %s with wrong signature",
						opfamilyname, fbt_amname,
						format_operator(oprform->amopopr))));
		ok = false;
	}

	return ok;
}

/* Bitmask of the strategies every supported pair of types must have */
static uint64
fbt_all_strategies(void)
{
	uint64		mask = 0;
	int			strategy;

	for (strategy = 1; strategy <= FBTMaxStrategyNumber; strategy++)
		mask |= FBT_MEMBER_BIT(strategy);
	return mask;
}

/* The operator class of key column col (0-based) of index */
static Oid
_fbt_index_opclass(Relation index, int col)
{
	Datum		indclass;
	bool		isnull;

	indclass = SysCacheGetAttr(INDEXRELID, index->rd_indextuple,
							   Anum_pg_index_indclass, &isnull);
	Assert(!isnull);
	return ((oidvector *) DatumGetPointer(indclass))->values[col];
}

/*
 * _fbt_check_index_collations() -- refuse to build an index whose key
 * column compares bytewise under a nondeterministic collation.
 *
 * The pattern operator classes (text_pattern_ops, varchar_pattern_ops,
 * bpchar_pattern_ops) order strings by their bytes, ignoring the collation,
 * while their "=" operator (texteq, bpchareq) honours it: under a
 * nondeterministic collation "abc" = "ABC" may hold although the two sort
 * apart, so an index search for one misses the other.  PostgreSQL 15's
 * index_create() refuses such columns only for btree's own opclass OIDs;
 * this is the same rule for ours.  The test is semantic rather than by
 * name, so it covers every operator class of ours (or a user's) whose
 * comparison support procedure for its input type is one of core's two
 * bytewise pattern comparisons.
 *
 * Called from fbtbuild(), which every path that fills an index goes
 * through: CREATE INDEX [CONCURRENTLY], REINDEX, CLUSTER, VACUUM FULL,
 * TRUNCATE and the index rebuilds of ALTER TABLE (SET TYPE, COLLATE).  An
 * index is only ever used after one of them has built it.
 *
 * index: open, locked by the caller.  Errors: 0A000 (feature not
 * supported) with btree's message, naming the operator class.
 */
void
_fbt_check_index_collations(Relation index)
{
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	int			i;

	for (i = 0; i < nkeyatts; i++)
	{
		Oid			collation = index->rd_indcollation[i];
		RegProcedure cmpproc;
		Oid			opclass;
		HeapTuple	classtup;

		if (!OidIsValid(collation) || get_collation_isdeterministic(collation))
			continue;
		cmpproc = index_getprocid(index, i + 1, FBTORDER_PROC);
		if (cmpproc != F_BTTEXT_PATTERN_CMP && cmpproc != F_BTBPCHAR_PATTERN_CMP)
			continue;

		opclass = _fbt_index_opclass(index, i);
		classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclass));
		if (!HeapTupleIsValid(classtup))
			elog(ERROR, "cache lookup failed for operator class %u", opclass);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nondeterministic collations are not supported for operator class \"%s\"",
						NameStr(((Form_pg_opclass) GETSTRUCT(classtup))->opcname))));
	}
}

/*
 * fbtadjustmembers
 *		amadjustmembers callback: refuse, at CREATE OPERATOR CLASS and ALTER
 *		OPERATOR FAMILY ... ADD, support functions whose signature cannot
 *		serve their support number.
 *
 * PostgreSQL 15's opclasscmds.c checks the signatures of support
 * functions only for btree and hash (by their AM OIDs); for any other
 * access method it leaves that to amvalidate, which nothing calls before
 * an index is built.  A fastbtree class whose FUNCTION 1 returns bool
 * (say) would then be accepted and its index built and searched by
 * reading a bool as a three-way comparison: wrong rows where btree
 * refuses the class.  This applies btree's rules with btree's messages
 * (the access method's name changed) and SQLSTATE (42P17), before any
 * member is stored.  The optional options procedure (5) is checked by
 * core for every AM.  Dependencies are left as core sets them.
 *
 * Raises ERROR on the first bad member; takes no locks beyond the catalog
 * cache's own.
 */
void
fbtadjustmembers(Oid opfamilyoid, Oid opclassoid, List *operators,
				 List *functions)
{
	ListCell   *lc;

	foreach(lc, functions)
	{
		OpFamilyMember *member = (OpFamilyMember *) lfirst(lc);
		HeapTuple	proctup;
		Form_pg_proc procform;

		proctup = SearchSysCache1(PROCOID, ObjectIdGetDatum(member->object));
		if (!HeapTupleIsValid(proctup))
			elog(ERROR, "cache lookup failed for function %u", member->object);
		procform = (Form_pg_proc) GETSTRUCT(proctup);

		switch (member->number)
		{
			case FBTORDER_PROC:
				if (procform->pronargs != 2)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
							 errmsg("%s comparison functions must have two arguments",
									fbt_amname)));
				if (procform->prorettype != INT4OID)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
							 errmsg("%s comparison functions must return integer",
									fbt_amname)));
				break;
			case FBTSORTSUPPORT_PROC:
				if (procform->pronargs != 1 ||
					procform->proargtypes.values[0] != INTERNALOID)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
							 errmsg("%s sort support functions must accept type \"internal\"",
									fbt_amname)));
				if (procform->prorettype != VOIDOID)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
							 errmsg("%s sort support functions must return void",
									fbt_amname)));
				break;
			case FBTINRANGE_PROC:
				if (procform->pronargs != 5)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
							 errmsg("%s in_range functions must have five arguments",
									fbt_amname)));
				if (procform->prorettype != BOOLOID)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
							 errmsg("%s in_range functions must return boolean",
									fbt_amname)));
				break;
			case FBTEQUALIMAGE_PROC:
				if (procform->pronargs != 1)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
							 errmsg("%s equal image functions must have one argument",
									fbt_amname)));
				if (procform->prorettype != BOOLOID)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
							 errmsg("%s equal image functions must return boolean",
									fbt_amname)));
				if (member->lefttype != member->righttype)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
							 errmsg("%s equal image functions must not be cross-type",
									fbt_amname)));
				break;
#if FBT_HAVE_SKIP_SUPPORT
			case FBTSKIPSUPPORT_PROC:
				if (procform->pronargs != 1 ||
					procform->proargtypes.values[0] != INTERNALOID)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
							 errmsg("%s skip support functions must accept type \"internal\"",
									fbt_amname)));
				if (procform->prorettype != VOIDOID)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
							 errmsg("%s skip support functions must return void",
									fbt_amname)));
				if (member->lefttype != member->righttype)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
							 errmsg("%s skip support functions must not be cross-type",
									fbt_amname)));
				break;
#endif
			default:
				break;
		}
		ReleaseSysCache(proctup);
	}
}
