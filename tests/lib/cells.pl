#!/usr/bin/perl
# cells.pl WIDTH AMBIGUOUS FILE...: every line of each FILE (a screen dump, UTF-8) must fit in
# WIDTH terminal cells, counting East Asian Wide and Fullwidth characters as two cells and
# Ambiguous ones (·, …, →, ≥, ─, block and braille glyphs) as AMBIGUOUS (1 or 2) cells, and
# must be valid UTF-8 (a character cut in two is not). Prints each offending line; exits 1 if
# any. Independent of evtop's own width code on purpose: it judges it.
use strict;
use warnings;
use Encode qw(decode FB_CROAK);

my ($width, $amb, @files) = @ARGV;
die "usage: cells.pl WIDTH 1|2 FILE...\n" unless defined $amb && @files;
my $bad = 0;

sub cells {
	my ($s) = @_;
	my $n = 0;
	for my $c (split //, $s) {
		if ($c =~ /[\p{Mn}\p{Me}\x{200B}-\x{200F}]/) { next; }
		if ($c =~ /\p{East_Asian_Width=Wide}|\p{East_Asian_Width=Fullwidth}/) { $n += 2; next; }
		if ($c =~ /\p{East_Asian_Width=Ambiguous}/) { $n += $amb; next; }
		$n += 1;
	}
	return $n;
}

for my $f (@files) {
	open(my $fh, '<:raw', $f) or die "$f: $!\n";
	my $ln = 0;
	while (my $raw = <$fh>) {
		$ln++;
		$raw =~ s/\n\z//;
		my $copy = $raw;
		my $line = eval { decode("UTF-8", $copy, FB_CROAK) };
		if (!defined $line) {
			print "$f:$ln: not valid UTF-8 (a character cut?)\n";
			$bad = 1;
			next;
		}
		my $n = cells($line);
		if ($n > $width) {
			print "$f:$ln: $n cells > $width: $raw\n";
			$bad = 1;
		}
	}
	close($fh);
}
exit $bad;
