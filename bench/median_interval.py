"""The interval that bench/compare and bench/compare_translate give for a median ratio (imported by both)."""
import math


def median_interval(values, coverage=0.95):
    """A distribution-free interval for the median of values: the order statistics x(k) <= median <= x(n+1-k) with the
    largest k whose binomial coverage, 1 - 2 P(Bin(n, 1/2) < k), is still at least coverage (at least 1).
    Returns (low, high, the coverage reached)."""
    ordered = sorted(values)
    n = len(ordered)
    below = [math.comb(n, i) / 2 ** n for i in range(n + 1)]  # P(Bin(n, 1/2) = i)
    k = 1
    while k + 1 <= n // 2 and 1 - 2 * sum(below[:k + 1]) >= coverage:
        k += 1
    return ordered[k - 1], ordered[n - k], 1 - 2 * sum(below[:k])
