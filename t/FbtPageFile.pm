# t/FbtPageFile.pm
#	Byte-level access to relation files for the TAP tests that damage
#	index pages with the server stopped (t/004, t/009).  Not a test
#	itself: prove runs only t/*.pl.

package FbtPageFile;

use strict;
use warnings;

use Exporter 'import';
use Fcntl qw(SEEK_SET);

our @EXPORT = qw(read_bytes write_bytes);

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
