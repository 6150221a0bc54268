# fastbtree: a B-tree index access method for PostgreSQL (PGXS build)

MODULE_big = fastbtree
OBJS = \
	fastbtree.o \
	fbtarray.o \
	fbtbench.o \
	fbtcheck.o \
	fbtcompare.o \
	fbtdebug.o \
	fbtdedup.o \
	fbtdelete.o \
	fbtinsert.o \
	fbtinspect.o \
	fbtpage.o \
	fbtpagedel.o \
	fbtpin.o \
	fbtplanner.o \
	fbtprefetch.o \
	fbtscan.o \
	fbtsearch.o \
	fbtsort.o \
	fbtutils.o \
	fbtvacuum.o \
	fbtvalidate.o \
	fbtxlog.o

EXTENSION = fastbtree
DATA = fastbtree--1.0.sql fastbtree--1.0--1.1.sql fastbtree--1.1--1.2.sql \
	fastbtree--1.2--1.3.sql fastbtree--1.3--1.4.sql fastbtree--1.4--1.5.sql \
	fastbtree--1.5--1.6.sql fastbtree--1.6--1.7.sql
PGFILEDESC = "fastbtree - B-tree index access method with a faster search path"

# Every sql/NAME.sql is a pg_regress test with expected/NAME.out.
TESTS = $(sort $(wildcard sql/*.sql))
REGRESS = $(patsubst sql/%.sql,%,$(TESTS))
REGRESS_OPTS = --inputdir=. --load-extension=fastbtree

# Isolation specs: specs/NAME.spec with expected/NAME.out.
ISOLATION = $(patsubst specs/%.spec,%,$(sort $(wildcard specs/*.spec)))
ISOLATION_OPTS = --load-extension=fastbtree

TAP_TESTS = 1

# The build id the library reports (read-only setting fastbtree.build_id):
# scripts/test.sh gives each run its own, to check that the server loads
# the build under test and not one installed over it meanwhile.
FBT_BUILD_ID ?= unnamed
PG_CPPFLAGS += -DFBT_BUILD_ID='"$(FBT_BUILD_ID)"'

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Since PostgreSQL 16 PGXS compiles modules with -fvisibility=hidden and
# PGDLLEXPORT marks what the server looks up by name (_PG_init, the magic
# block, each PG_FUNCTION_INFO_V1 function, _fbt_parallel_build_main).
# Before 16 it exports every global symbol: the dynamic linker then binds
# each call between our own files at load time (dlopen with RTLD_NOW) through
# the whole process's symbol scope, and every such call goes through the
# GOT.  Do as 16 does.
ifneq ($(filter 12 13 14 15,$(MAJORVERSION)),)
override CFLAGS += -fvisibility=hidden
override CPPFLAGS += '-DPGDLLEXPORT=__attribute__((visibility("default")))'
endif

# Every module includes the one internal header.
$(OBJS): fastbtree.h fbtxlog.h
