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
#    replay on a standby with wal_consistency_checking = 'generic': no
#    "inconsistent page found", the standby answers as the primary, its
#    copy passes fastbtree_check, and a crash of the primary in the middle
#    of a round recovers to a valid tree.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

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
wal_consistency_checking = 'generic'
# the standby reconnects after the primary's crash: keep what it needs
wal_keep_size = '1GB'
});
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

done_testing();
