"""Plain-Python references for :mod:`evalsim.stats.selection`: brute-force enumeration of
every outcome (no numba, no NumPy in the sums), for the tests to compare against."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction


def binom_pmf(x: int, n: int, p: float) -> float:
    """P(X = x) for X ~ Binomial(n, p), from math.comb."""
    return math.comb(n, x) * p**x * (1.0 - p) ** (n - x)


def selection_by_enumeration(rates, n, tie_rule="random"):
    """Every count vector (X_1..X_K) in {0..n}^K: its probability, the arm(s) with the most
    successes, and the pick under the tie rule.

    Returns (p_select list, p_no_pick, E[X_S/n ; pick], E[p_S ; pick]) -- the last two
    unnormalised (summed over outcomes with a pick)."""
    k = len(rates)
    pmfs = [[binom_pmf(x, n, p) for x in range(n + 1)] for p in rates]
    p_sel = [0.0] * k
    no_pick = 0.0
    e_rep = 0.0
    e_true = 0.0
    for xs in itertools.product(range(n + 1), repeat=k):
        pr = 1.0
        for i, x in enumerate(xs):
            pr *= pmfs[i][x]
        top = max(xs)
        winners = [i for i, x in enumerate(xs) if x == top]
        if len(winners) > 1 and tie_rule == "no-pick":
            no_pick += pr
            continue
        share = pr / len(winners)
        for j in winners:
            p_sel[j] += share
            e_rep += share * xs[j] / n
            e_true += share * rates[j]
    return p_sel, no_pick, e_rep, e_true


def cochran_q(table):
    """Cochran's Q of a rows x K 0/1 table (lists), from its definition."""
    k = len(table[0])
    cols = [sum(r[j] for r in table) for j in range(k)]
    rows = [sum(r) for r in table]
    big_n = sum(rows)
    den = k * big_n - sum(r * r for r in rows)
    if den == 0:
        return 0.0
    return (k - 1) * (k * sum(c * c for c in cols) - big_n * big_n) / den


def cochran_exact_by_enumeration(table):
    """Exact permutation p-value of Cochran's Q: every row's successes placed on every
    subset of its size (all arrangements enumerated, each with equal weight); P(Q >= Q_obs),
    with Q compared as exact fractions."""
    k = len(table[0])
    rows = [sum(r) for r in table]

    def q_frac(tab):
        cols = [sum(r[j] for r in tab) for j in range(k)]
        big_n = sum(rows)
        den = k * big_n - sum(r * r for r in rows)
        if den == 0:
            return Fraction(0)
        return Fraction((k - 1) * (k * sum(c * c for c in cols) - big_n * big_n), den)

    q_obs = q_frac(table)
    choices = []
    for r in rows:
        opts = []
        for combo in itertools.combinations(range(k), r):
            opts.append([1 if j in combo else 0 for j in range(k)])
        choices.append(opts)
    total = 0
    hit = 0
    for arrangement in itertools.product(*choices):
        total += 1
        if q_frac(list(arrangement)) >= q_obs:
            hit += 1
    return hit / total


def trend_exact_by_enumeration(table, scores):
    """Exact within-row permutation p-value of T = sum of the scores of the success
    columns: P(T >= T_obs) over every arrangement of each row's successes."""
    k = len(table[0])
    rows = [sum(r) for r in table]
    t_obs = sum(scores[j] * r[j] for r in table for j in range(k))
    choices = [list(itertools.combinations(range(k), r)) for r in rows]
    total = hit = 0
    for arrangement in itertools.product(*choices):
        total += 1
        t = sum(scores[j] for combo in arrangement for j in combo)
        hit += t >= t_obs
    return hit / total


def trend_unpaired_by_enumeration(k, n, scores):
    """Exact conditional Cochran-Armitage p-value P(T >= T_obs): every split of the total
    successes over the columns, weighted by prod C(n_j, k_j) / C(N, total)."""
    total = sum(k)
    t_obs = sum(s * x for s, x in zip(scores, k, strict=True))
    hit = Fraction(0)
    for ks in itertools.product(*[range(m + 1) for m in n]):
        if sum(ks) != total:
            continue
        w = Fraction(math.prod(math.comb(m, x) for m, x in zip(n, ks, strict=True)))
        if sum(s * x for s, x in zip(scores, ks, strict=True)) >= t_obs:
            hit += w
    return float(hit / math.comb(sum(n), total))


def elimination_by_enumeration(rates, n_max, upper, final=None):
    """Successive elimination with unpaired rows, every outcome sequence enumerated.

    ``upper[t - 1][a]``: after t rounds the leader (most successes, lowest index on a tie)
    drops arm j when its count >= upper[t - 1][count of j]. With ``final`` (paired rows):
    ``upper[d]`` is the sign-walk row, the leader drops j when the rounds where only the
    leader succeeded, w, reach upper[d] (d: rounds where exactly one of the two succeeded;
    ``final[d]`` after the last round). Returns (P(single correct
    survivor), P(single survivor), P(best eliminated), E[rounds], E[trials])."""
    k = len(rates)
    best = max(range(k), key=lambda i: (rates[i], -i))
    out = [0.0, 0.0, 0.0, 0.0, 0.0]

    def rejects(t, lead, j, new, only):
        if final is None:
            return new[lead] >= upper[t][new[j]]
        w = only[(lead, j)]
        d = w + only[(j, lead)]
        if d == 0:
            return False
        return w >= (final[d] if t + 1 == n_max else upper[d])

    def walk(t, alive, counts, prob, trials, only):
        if len(alive) == 1 or t == n_max:
            single = len(alive) == 1
            out[0] += prob * (single and alive[0] == best)
            out[1] += prob * single
            out[2] += prob * (best not in alive)
            out[3] += prob * t
            out[4] += prob * trials
            return
        for outcome in itertools.product((0, 1), repeat=len(alive)):
            pr = prob
            new = dict(counts)
            won = dict(only)
            for arm, x in zip(alive, outcome, strict=True):
                pr *= rates[arm] if x else 1.0 - rates[arm]
                new[arm] += x
            if pr == 0.0:
                continue
            for a, xa in zip(alive, outcome, strict=True):
                for b, xb in zip(alive, outcome, strict=True):
                    won[(a, b)] += xa == 1 and xb == 0
            lead = min(alive, key=lambda i: (-new[i], i))
            keep = [j for j in alive if j == lead or not rejects(t, lead, j, new, won)]
            walk(t + 1, keep, new, pr, trials + len(alive), won)

    pairs = {(a, b): 0 for a in range(k) for b in range(k)}
    walk(0, list(range(k)), dict.fromkeys(range(k), 0), 1.0, 0, pairs)
    return tuple(out)
