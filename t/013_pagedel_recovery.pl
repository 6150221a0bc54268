# t/013_pagedel_recovery.pl
#	Page deletion and recycling (fbtpagedel.c) across crashes and on a
#	streaming standby.
#
# 1. A crash between the two steps of a deletion: with
#    fastbtree.debug_pagedel_halfdead_only (builds with assertions) VACUUM
#    stops each deletion after its half-dead record, then the server is
#    stopped in immediate mode.  After recovery the half-dead pages are
#    there, every answer through the index is right, fastbtree_check
#    passes, and the next VACUUM unlinks them.
# 2. A queue (oldest keys deleted, new ones appended, VACUUM) whose
#    deletions, recycled pages and their REUSE_PAGE conflict records
#    replay on a standby with wal_consistency_checking on fastbtree's
#    records ('generic', or 'generic,fastbtree' preloaded): no
#    "inconsistent page found", the standby answers as the primary, its
#    copy passes fastbtree_check, and a crash of the primary in the middle
#    of a round recovers to a valid tree.
# 3. Crashes inside a subtree's deletion (a leaf and the internal pages
#    above it that have no other child, deleted from the top down): with
#    fastbtree.debug_pagedel_unlinks = 0 VACUUM stops each deletion after
#    its half-dead record (the leaf names its subtree's top page), with 1
#    after the first unlink (the top page is gone and the leaf names the
#    next one down); then the primary crashes.  Recovery rebuilds the
#    pages as they were, the standby replays the same, every answer
#    through the index is right, fastbtree_check passes, inserts into the
#    emptied range work, and the next VACUUM finishes the deletions.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use FbtWalMode;

my ($primary, $standby);

END
{
	local $?;
	for my $n ($standby, $primary)
	{
		$n->stop('immediate', fail_ok => 1) if $n;
	}
}

$primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', q{
autovacuum = off
log_statement = none
wal_consistency_checking = 'CHECKING'
# the standby reconnects after the primary's crash: keep what it needs
wal_keep_size = '1GB'
} =~ s/CHECKING/fbt_consistency_checking()/er);
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION fastbtree');

my $types = q{
SELECT string_agg(type::text || ':' || n, ' ' ORDER BY type) FROM (
	SELECT s.type, count(*) AS n
	FROM generate_series(1, pg_relation_size('IDX') / 8192 - 1) b,
		LATERAL fastbtree_page_stats('IDX', b) s GROUP BY s.type) t;
};

sub page_types
{
	my ($node, $idx) = @_;
	(my $q = $types) =~ s/IDX/$idx/g;
	return $node->safe_psql('postgres', $q);
}

# forward and backward through the index, and a sequential scan: one line
sub answers
{
	my ($node, $tbl) = @_;
	return $node->safe_psql('postgres', qq{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT (SELECT count(*) || ':' || md5(string_agg(k::text, ',')) FROM (SELECT k FROM $tbl ORDER BY k) s)
	|| ' ' || (SELECT md5(string_agg(k::text, ',')) FROM (SELECT k FROM $tbl ORDER BY k DESC) s)
	|| ' ' || (SELECT min(k) || '/' || max(k) FROM $tbl);
});
}

sub truth
{
	my ($node, $tbl) = @_;
	return $node->safe_psql('postgres', qq{
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT (SELECT count(*) || ':' || md5(string_agg(k::text, ',' ORDER BY k)) FROM $tbl)
	|| ' ' || (SELECT md5(string_agg(k::text, ',' ORDER BY k DESC)) FROM $tbl)
	|| ' ' || (SELECT min(k) || '/' || max(k) FROM $tbl);
});
}

#
# 1. half-dead pages through a crash
#
$primary->safe_psql('postgres', q{
CREATE TABLE h (k int, pad text) WITH (autovacuum_enabled = off);
CREATE INDEX h_k ON h USING fastbtree (k);
INSERT INTO h SELECT i, repeat('h', 20) FROM generate_series(1, 40000) i;
DELETE FROM h WHERE k BETWEEN 100 AND 35000;
SET fastbtree.debug_pagedel_halfdead_only = on;
VACUUM h;
});
like(page_types($primary, 'h_k'), qr/\be:\d+/,
	'VACUUM stopped after the half-dead step');
# VACUUM commits without a transaction id, so nothing has flushed its
# records yet; a WAL switch does (else the crash could lose them)
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
$primary->stop('immediate');
$primary->start;
like(page_types($primary, 'h_k'), qr/\be:\d+/,
	'the half-dead pages survived the crash (their record was replayed)');
is(answers($primary, 'h'), truth($primary, 'h'),
	'answers through the index with half-dead pages are right');
$primary->safe_psql('postgres', q{SELECT fastbtree_check('h_k', true)});
pass('fastbtree_check passes with half-dead pages');
$primary->safe_psql('postgres', q{
INSERT INTO h SELECT i, 'new' FROM generate_series(200, 30000, 53) i;
DELETE FROM h WHERE pad = 'new';
VACUUM (INDEX_CLEANUP ON) h;
});
my $after = page_types($primary, 'h_k');
unlike($after, qr/\be:/, "the next VACUUM unlinked them ($after)");
like($after, qr/\bd:\d+/, 'they are deleted pages now');
is(answers($primary, 'h'), truth($primary, 'h'),
	'answers after the unlink are right');
$primary->safe_psql('postgres', q{SELECT fastbtree_check('h_k', true)});
pass('fastbtree_check passes after the unlink');

#
# 2. a queue on a streaming standby
#
$primary->backup('backup');
$standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

$primary->safe_psql('postgres', q{
CREATE TABLE q (k int8, pad text) WITH (autovacuum_enabled = off);
CREATE INDEX q_k ON q USING fastbtree (k);
INSERT INTO q SELECT i, 'payload' FROM generate_series(1, 30000) i;
});
my $round = q{
DELETE FROM q WHERE k < (SELECT min(k) FROM q) + 15000;
INSERT INTO q SELECT (SELECT max(k) FROM q) + i, 'payload' FROM generate_series(1, 15000) i;
};
for my $i (1 .. 6)
{
	$primary->safe_psql('postgres', $round);
	$primary->safe_psql('postgres', 'VACUUM q');
}
my $size = $primary->safe_psql('postgres', q{SELECT pg_relation_size('q_k')});
for my $i (1 .. 3)
{
	$primary->safe_psql('postgres', $round);
	$primary->safe_psql('postgres', 'VACUUM q');
}
cmp_ok($primary->safe_psql('postgres', q{SELECT pg_relation_size('q_k')}),
	'<=', $size + 3 * 8192, 'recycled pages keep the queue index flat');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
is(answers($standby, 'q'), answers($primary, 'q'),
	'the standby answers as the primary');
is(answers($standby, 'q'), truth($standby, 'q'),
	'and its answers through the index are right');
$standby->safe_psql('postgres', q{SELECT fastbtree_check('q_k', true)});
pass('the standby copy passes fastbtree_check');

# a crash of the primary in the middle of a round
$primary->safe_psql('postgres', $round);
$primary->safe_psql('postgres', q{
DELETE FROM q WHERE k < (SELECT min(k) FROM q) + 15000;
VACUUM q;
});
$primary->stop('immediate');
$primary->start;
is(answers($primary, 'q'), truth($primary, 'q'),
	'after crash recovery the answers through the index are right');
$primary->safe_psql('postgres', q{SELECT fastbtree_check('q_k', true)});
pass('and fastbtree_check passes');
$primary->safe_psql('postgres', $round);
$primary->safe_psql('postgres', 'VACUUM q');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
is(answers($standby, 'q'), answers($primary, 'q'),
	'the standby follows the recovered primary');

unlike(slurp_file($standby->logfile), qr/inconsistent page found/,
	'the standby replayed every record to the primary\'s page images');

#
# 3. crashes inside a subtree's deletion
#
# pages by level and type: '0:e:26 0:l:153 1:d:24 ...'
my $levels = q{
SELECT string_agg(level || ':' || type::text || ':' || n, ' '
		ORDER BY level, type::text COLLATE "C") FROM (
	SELECT s.level, s.type, count(*) AS n
	FROM generate_series(1, pg_relation_size('IDX') / 8192 - 1) b,
		LATERAL fastbtree_page_stats('IDX', b) s GROUP BY 1, 2) t;
};

sub page_levels
{
	my ($node, $idx) = @_;
	(my $q = $levels) =~ s/IDX/$idx/g;
	return $node->safe_psql('postgres', $q);
}

# what the half-dead leaves' top-parent links (the downlink field of their
# high key, fastbtree_page_items' ctid) name: 'self' for the leaf itself
# (InvalidBlockNumber), else the named page's type and level: 'i1:2 self:24'
my $tops = q{
SELECT string_agg(named || ':' || n, ' ' ORDER BY named COLLATE "C") FROM (
	SELECT coalesce(p.type::text || p.level, 'self') AS named, count(*) AS n
	FROM generate_series(1, pg_relation_size('IDX') / 8192 - 1) b,
		LATERAL fastbtree_page_stats('IDX', b) s,
		LATERAL fastbtree_page_items('IDX', b) i
		LEFT JOIN LATERAL fastbtree_page_stats('IDX',
			nullif((i.ctid::text::point)[0]::int8, 4294967295)) p ON true
	WHERE s.type = 'e' AND i.itemoffset = 1 GROUP BY 1) t;
};

sub top_parents
{
	my ($node, $idx) = @_;
	(my $q = $tops) =~ s/IDX/$idx/g;
	return $node->safe_psql('postgres', $q);
}

# scans that start inside the emptied range (each descent crosses the
# parents that handed the range on), through the index or, with $index
# false, by sequential scan: one line
sub range_answers
{
	my ($node, $tbl, $index) = @_;
	my $set = $index
	  ? 'SET enable_seqscan = off; SET enable_bitmapscan = off;'
	  : 'SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;';
	return $node->safe_psql('postgres', qq{
$set
SELECT (SELECT string_agg(left(k, 6), ',') FROM (SELECT k FROM $tbl WHERE k >= '001' ORDER BY k LIMIT 3) s)
	|| ' ' || (SELECT string_agg(left(k, 6), ',') FROM (SELECT k FROM $tbl WHERE k < '003' ORDER BY k DESC LIMIT 3) s)
	|| ' ' || (SELECT count(*) FROM $tbl WHERE k BETWEEN '0004' AND '0031');
});
}

# keys of about 650 incompressible bytes, ten a page: 4,000 rows make a
# tree of four levels, and emptying most of the key range empties whole
# subtrees up to level 2 (sql/pagedel.sql, "Whole subtrees")
$primary->safe_psql('postgres', q{
CREATE FUNCTION wide(i int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT lpad(i::text, 6, '0') ||
		(SELECT string_agg(md5(i::text || j::text), '') FROM generate_series(1, 20) j)
$$;
});
# only this section's part of the standby's log is checked at its end
my $standby_log_offset = -s $standby->logfile;

# per stop point: fastbtree.debug_pagedel_unlinks, and what the half-dead
# leaves name at the crash: with no unlink, the tops of their subtrees
# (levels 1 and 2, or themselves); after one, the level-2 tops are gone
# and their leaves name the level-1 page below, the level-1 tops are gone
# and their leaves name themselves
my @stops = (
	[ 0, 'after the half-dead record', qr/^i1:\d+ i2:\d+ self:\d+$/ ],
	[ 1, 'after one unlink', qr/^i1:\d+ self:\d+$/ ]);
for my $stop (@stops)
{
	my ($unlinks, $when, $named) = @$stop;
	my ($tbl, $idx) = ("s$unlinks", "s${unlinks}_k");

	$primary->safe_psql('postgres', qq{
CREATE TABLE $tbl (k text) WITH (autovacuum_enabled = off);
INSERT INTO $tbl SELECT wide(i) FROM generate_series(1, 4000) i;
CREATE INDEX $idx ON $tbl USING fastbtree (k);
});
	is($primary->safe_psql('postgres', qq{SELECT level FROM fastbtree_metap('$idx')}),
		'3', "$tbl: the tree has four levels");
	$primary->safe_psql('postgres', qq{
DELETE FROM $tbl WHERE k BETWEEN '000500' AND '003000';
SET fastbtree.debug_pagedel_unlinks = $unlinks;
VACUUM $tbl;
});
	my $crashed = page_levels($primary, $idx);
	my $crashed_tops = top_parents($primary, $idx);
	like($crashed, qr/\b0:e:\d+/,
		"$tbl: VACUUM stopped deletions $when ($crashed)");
	if ($unlinks == 0)
	{
		unlike($crashed, qr/:d:/, "$tbl: and unlinked no page");
	}
	else
	{
		like($crashed, qr/\b1:d:\d+ .*\b2:d:\d+/,
			"$tbl: and unlinked top parents on levels 1 and 2");
	}
	like($crashed_tops, $named,
		"$tbl: the half-dead leaves name their subtrees' pages ($crashed_tops)");

	# the standby has replayed the same records (and the catchup makes
	# sure VACUUM's records are written before the crash: its commit, with
	# no transaction id, leaves them to the WAL writer)
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	is(page_levels($standby, $idx), $crashed,
		"$tbl: the standby has the same pages");
	is(top_parents($standby, $idx), $crashed_tops,
		"$tbl: and the same top-parent links");
	is(answers($standby, $tbl), truth($primary, $tbl),
		"$tbl: the standby's answers through the index are right");

	$primary->stop('immediate');
	$primary->start;
	is(page_levels($primary, $idx), $crashed,
		"$tbl: recovery restored the pages the crash left");
	is(top_parents($primary, $idx), $crashed_tops,
		"$tbl: and the half-dead leaves' top-parent links");
	is(answers($primary, $tbl), truth($primary, $tbl),
		"$tbl: answers through the index after the crash are right");
	is(range_answers($primary, $tbl, 1), range_answers($primary, $tbl, 0),
		"$tbl: and so are scans starting in the emptied range");
	$primary->safe_psql('postgres', qq{SELECT fastbtree_check('$idx', true)});
	pass("$tbl: fastbtree_check passes after the crash");

	# inserts into the emptied range descend through the parents that
	# handed it on, and split the pages that took it over
	$primary->safe_psql('postgres', qq{
INSERT INTO $tbl SELECT wide(i) FROM generate_series(600, 2900, 7) i;
});
	is(answers($primary, $tbl), truth($primary, $tbl),
		"$tbl: answers after inserts into the emptied range are right");
	is(range_answers($primary, $tbl, 1), range_answers($primary, $tbl, 0),
		"$tbl: and so are scans starting in it");
	$primary->safe_psql('postgres', qq{SELECT fastbtree_check('$idx', true)});
	pass("$tbl: fastbtree_check passes after the inserts");

	# the next VACUUM finishes the deletions (it runs the index's bulk
	# delete only when there is a dead row)
	$primary->safe_psql('postgres', qq{
DELETE FROM $tbl WHERE k = wide(100);
VACUUM (INDEX_CLEANUP ON) $tbl;
});
	my $after = page_levels($primary, $idx);
	unlike($after, qr/:e:/, "$tbl: the next VACUUM left no half-dead page ($after)");
	like($after, qr/\b0:d:\d+ .*\b1:d:\d+ .*\b2:d:\d+/,
		"$tbl: it deleted pages on levels 0, 1 and 2");
	is(answers($primary, $tbl), truth($primary, $tbl),
		"$tbl: answers after the deletions are finished are right");
	$primary->safe_psql('postgres', qq{SELECT fastbtree_check('$idx', true)});
	pass("$tbl: fastbtree_check passes after the deletions are finished");

	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	is(page_levels($standby, $idx), $after,
		"$tbl: the standby follows the recovered primary's pages");
	is(answers($standby, $tbl), answers($primary, $tbl),
		"$tbl: and answers as the primary");
	$standby->safe_psql('postgres', qq{SELECT fastbtree_check('$idx', true)});
	pass("$tbl: the standby copy passes fastbtree_check");
}

unlike(slurp_file($standby->logfile, $standby_log_offset),
	qr/inconsistent page found/,
	'the standby replayed the subtree deletions to the primary\'s page images');

done_testing();
