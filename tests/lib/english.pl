#!/usr/bin/perl
# english.pl ALLOW FILE...: English words left on a screen of the Chinese interface. A word is
# a run of three or more Latin letters; it is left alone when it is an identifier, SQL, a value
# from the database or a key name:
#   - it touches _ 0-9 - . / : = @ # $ % ' " < > … (event_type, --table, order-service, a/b,
#     key=value, 'x', an identifier cut short: next_re…);
#   - it begins a line that goes on a word of the line before (a wrapped statement);
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
	my $ln = 0;
	my $prev = '';
	while (my $raw = <$fh>) {
		$ln++;
		my $line = decode('UTF-8', $raw);
		my $wrapped = $prev =~ /[A-Za-z_]\s*\z/;
		$prev = $line;
		while ($line =~ /([A-Za-z]+)/g) {
			my ($w, $s, $e) = ($1, $-[1], $+[1]);
			next if length($w) < 3;
			my $before = $s > 0 ? substr($line, $s - 1, 1) : '';
			my $after = substr($line, $e, 1) // '';
			next if "$before$after" =~ /[_0-9\-.\/:=@#\$%'"<>\x{2026}]/;
			next if $w !~ /[a-z]/;
			next if $s == 0 && $wrapped; # the rest of a word wrapped from the line before
			next if $allow{$w} || $allow{lc $w};
			print "$f:$ln: $w\n";
			$bad = 1;
		}
	}
	close($fh);
}
exit $bad;
