#!/usr/bin/perl
# english.pl ALLOW FILE...: English words left on a screen of the Chinese interface. A word is
# a run of three or more Latin letters; it is left alone when it is an identifier, SQL, a value
# from the database or a key name:
#   - it touches _ 0-9 - . / : = @ # $ % ' " < > … (event_type, --table, order-service, a/b,
#     key=value, 'x', an identifier cut short: next_re…);
#   - it begins a line that goes on a word of the line before, or ends one that the next line
#     goes on (a statement wrapped inside a word);
#   - it is written in capitals (SELECT, ORDER_CREATED, HTTP, JSON);
#   - it is in the file ALLOW, one word a line (the schema's and seed's words, the key and
#     action names: screens.sh makes it).
# Prints FILE:LINE: WORD for each other word; exits 1 if any.
use strict;
use warnings;
use utf8;
use Encode qw(decode);

my ($allowf, @files) = @ARGV;
die "usage: english.pl ALLOW FILE...\n" unless @files;
my %allow;
open(my $af, '<:encoding(UTF-8)', $allowf) or die "$allowf: $!\n";
while (<$af>) { chomp; $allow{$_} = 1 if length; }
close($af);

my $bad = 0;
for my $f (@files) {
	open(my $fh, '<:raw', $f) or die "$f: $!\n";
	my @lines = map { decode('UTF-8', $_) } <$fh>;
	close($fh);
	for my $i (0 .. $#lines) {
		my $ln = $i + 1;
		my $line = $lines[$i];
		my $wrapped = $i > 0 && $lines[$i - 1] =~ /[A-Za-z_]\s*\z/;
		my $wraps = $i < $#lines && $lines[$i + 1] =~ /\A[A-Za-z_]/;
		(my $text = $line) =~ s/\s+\z//;
		while ($line =~ /([A-Za-z]+)/g) {
			my ($w, $s, $e) = ($1, $-[1], $+[1]);
			next if length($w) < 3;
			my $before = $s > 0 ? substr($line, $s - 1, 1) : '';
			my $after = substr($line, $e, 1) // '';
			next if "$before$after" =~ /[_0-9\-.\/:=@#\$%'"<>\x{2026}]/;
			next if $w !~ /[a-z]/;
			next if $s == 0 && $wrapped; # the rest of a word wrapped from the line before
			next if $e == length($text) && $wraps; # a word the next line goes on
			next if $allow{$w} || $allow{lc $w};
			print "$f:$ln: $w\n";
			$bad = 1;
		}
	}
}
exit $bad;
