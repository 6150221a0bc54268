# t/FbtPageFile.pm
#	Byte-level access to relation files for the TAP tests that damage
#	index pages with the server stopped (t/004, t/009).  Not a test
#	itself: prove runs only t/*.pl.

package FbtPageFile;

use strict;
use warnings;

use Exporter 'import';
use Fcntl qw(SEEK_SET);

our @EXPORT = qw(read_bytes write_bytes init_without_checksums);

# init_without_checksums(NODE, PARAMS...): NODE->init(PARAMS) with data
# checksums off, so that damage written into a page is found by fastbtree,
# not first by the checksum: initdb's default until 17, asked for since 18
# (whose initdb enables checksums unless told not to)
sub init_without_checksums
{
	my ($node, %params) = @_;

	$params{extra} = [ @{ $params{extra} // [] }, '--no-data-checksums' ]
	  if $node->pg_version >= 18;
	$node->init(%params);
}

# read_bytes(PATH, OFFSET, LEN): LEN bytes of file PATH from byte OFFSET
sub read_bytes
{
	my ($path, $offset, $len) = @_;
	my $buf;

	open(my $fh, '<', $path) or die "open $path: $!";
	binmode $fh;
	sysseek($fh, $offset, SEEK_SET) or die "seek $path: $!";
	sysread($fh, $buf, $len) == $len or die "read $path: $!";
	close $fh;
	return $buf;
}

# write_bytes(PATH, OFFSET, BYTES): overwrite file PATH at byte OFFSET
sub write_bytes
{
	my ($path, $offset, $bytes) = @_;

	open(my $fh, '+<', $path) or die "open $path: $!";
	binmode $fh;
	sysseek($fh, $offset, SEEK_SET) or die "seek $path: $!";
	syswrite($fh, $bytes) == length($bytes) or die "write $path: $!";
	close $fh;
}

1;
