#!/usr/bin/python3
"""Compares translation outputs on one test set: corpus BLEU-4 overall and by source length, and a paired bootstrap of
the BLEU difference between the first system and each other one (is a difference larger than the test set's noise?).

  bench/bleu_compare.py TEST.tsv FIRST.hyp OTHER.hyp [MORE.hyp ...]

TEST.tsv is `attend data --write`'s test.tsv (`source tokens<TAB>reference 1[<TAB>reference 2 ...]`); each .hyp file
holds one output per line, tokens joined by spaces (`attend eval --output`, `bench/torch_translate.py --hypotheses`).
BLEU is computed as data/bleu.hpp computes it (NLTK's corpus_bleu: clipped counts summed over the corpus, an output
shorter than n counting one n-gram of order n, the closest reference length with ties to the shorter, BP = exp(1 - r/c)
when c <= r, 0 when an order has no match). The bootstrap draws the test sentences with replacement 1,000 times (seed 0)
and reports the 2.5% and 97.5% points of BLEU(first) - BLEU(other) and how often it was >= 0 (Koehn 2004).
Only the standard library is used.
"""
import collections
import math
import random
import sys

BUCKETS = [(1, 3), (4, 5), (6, 7), (8, 10), (11, 1000)]


def sentence_stats(hypothesis, references):
    counts = []
    for n in range(1, 5):
        grams = collections.Counter(tuple(hypothesis[i:i + n]) for i in range(len(hypothesis) - n + 1))
        most = collections.Counter()
        for reference in references:
            in_reference = collections.Counter(tuple(reference[i:i + n]) for i in range(len(reference) - n + 1))
            for g in grams:
                most[g] = max(most[g], in_reference[g])
        counts.append((sum(min(c, most[g]) for g, c in grams.items()), max(1, len(hypothesis) - n + 1)))
    c = len(hypothesis)
    r = min((abs(len(x) - c), len(x)) for x in references)[1]
    return counts, c, r


def corpus_bleu(stats, indices):
    matches, totals, c, r = [0] * 4, [0] * 4, 0, 0
    for i in indices:
        counts, ci, ri = stats[i]
        for n in range(4):
            matches[n] += counts[n][0]
            totals[n] += counts[n][1]
        c += ci
        r += ri
    if c == 0 or min(matches) == 0:
        return 0.0
    bp = 1.0 if c > r else math.exp(1 - r / c)
    return 100 * bp * math.exp(sum(math.log(matches[n] / totals[n]) for n in range(4)) / 4)


def words(tokens):
    return sum(1 for t in tokens if any(ch.isalnum() for ch in t))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1], encoding="utf-8")]
    references = [[r.split(" ") for r in row[1:]] for row in rows]
    lengths = [words(row[0].split(" ")) for row in rows]
    systems = []
    for path in sys.argv[2:]:
        outputs = [line.rstrip("\n") for line in open(path, encoding="utf-8")]
        if len(outputs) != len(rows):
            sys.exit(f"{path}: {len(outputs)} outputs for {len(rows)} test sentences")
        tokens = [o.split(" ") if o else [] for o in outputs]
        systems.append((path, [sentence_stats(t, references[i]) for i, t in enumerate(tokens)]))
    everything = range(len(rows))
    buckets = [(a, b, [i for i in everything if a <= lengths[i] <= b]) for a, b in BUCKETS]
    buckets = [bucket for bucket in buckets if bucket[2]]
    print("BLEU by source length in words (sentences):")
    print("  " + "  ".join(f"{a}-{b} ({len(idx)})" for a, b, idx in buckets) + "  all")
    for path, stats in systems:
        print("  " + "  ".join(f"{corpus_bleu(stats, idx):.1f}" for _, _, idx in buckets) +
              f"  {corpus_bleu(stats, everything):.2f}  {path}")
    first_path, first = systems[0]
    for path, stats in systems[1:]:
        rng = random.Random(0)
        differences = []
        for _ in range(1000):
            sample = [rng.randrange(len(rows)) for _ in everything]
            differences.append(corpus_bleu(first, sample) - corpus_bleu(stats, sample))
        differences.sort()
        print(f"{first_path} - {path}: {corpus_bleu(first, everything) - corpus_bleu(stats, everything):+.2f} BLEU, "
              f"95% interval [{differences[25]:+.2f}, {differences[974]:+.2f}], "
              f"first >= other in {sum(d >= 0 for d in differences) / 10:.1f}% of resamples")


if __name__ == "__main__":
    main()
