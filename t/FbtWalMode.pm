# t/FbtWalMode.pm
#	Which WAL mode the TAP clusters run in, for the tests that set
#	wal_consistency_checking.  scripts/test.sh --set
#	"shared_preload_libraries=fastbtree" (the compact-mode suite of
#	.ci/run) writes that line to the file PostgreSQL::Test::Cluster reads
#	as TEMP_CONFIG, and every cluster's postgresql.conf gets it at init.
#	Not a test itself: prove runs only t/*.pl.

package FbtWalMode;

use strict;
use warnings;

use Exporter 'import';

our @EXPORT = qw(fbt_preloaded fbt_consistency_checking);

# fbt_preloaded(): true if TEMP_CONFIG preloads fastbtree (the last
# shared_preload_libraries line there wins, as in postgresql.conf).
sub fbt_preloaded
{
	my $file = $ENV{TEMP_CONFIG};
	return 0 unless defined $file && -r $file;
	open my $fh, '<', $file or die "could not open $file: $!";
	my $preloaded = 0;
	while (my $line = <$fh>)
	{
		next unless $line =~ /^\s*shared_preload_libraries\s*=\s*(.*)$/;
		$preloaded = ($1 =~ /\bfastbtree\b/) ? 1 : 0;
	}
	close $fh;
	return $preloaded;
}

# fbt_consistency_checking(): the wal_consistency_checking value that
# covers fastbtree's records in this mode: generic records (every change
# without preload; with preload, those of a cluster that ran without it
# before), and fastbtree's own resource manager's when preloaded (naming
# it without preload is an error at startup).  Builds log core's
# full-page records, which consistency checking does not cover.
sub fbt_consistency_checking
{
	return fbt_preloaded() ? 'generic,fastbtree' : 'generic';
}

1;
