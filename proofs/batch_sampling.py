"""Truncated Poisson sampling and sampling with replacement of a Gaussian sum: the sampling laws,
the couplings behind the DOMINATING labelled mixtures and the ATTAINED pairs of
verifier.pairs.batch_sampling, checked by enumeration in exact rationals and by an independent
mpmath hockey stick of the real mechanism's output on tiny datasets.

Setting. A step outputs sum_{i in batch} x_i + N(0, sigma^2 I), records |x_i| <= C (``Delta``).

Truncated Poisson (dp_accounting's TruncatedSubsampledGaussianDpEvent; Ganesh 2025, arXiv
2508.15089): each of n records is drawn with probability q; if more than B are drawn, a uniform
B-subset of the drawn ones is kept. Target record i; M = number of the other n - 1 records drawn,
M ~ Bin(n - 1, q) with law b.

1. Coupling (enumeration, step ``coupling``). Condition on the set A of other records drawn, m = |A|.
   If m <= B - 1 the batch is A plus the record with probability q. If m >= B: draw W uniform among
   the B-subsets of A, r uniform in W, c ~ Bernoulli(lam_m), lam_m = qB/(m + 1); the batch
   W - {r} + {i} if c else W has exactly the law of the truncated batch (checked: every (A, batch)
   probability equal in exact rationals, n <= 6). On the dataset without the record (add/remove)
   the batch is W (A when m <= B - 1). So, revealing (A, W, r) — whose law does not depend on any
   record's value, and is the same on both datasets — the step given the label is
   * replace-one, m <= B - 1: ((1 - q)N(s) + qN(s + x), (1 - q)N(s) + qN(s + x'));
   * replace-one, m >= B: ((1 - lam)N(u) + lam N(u + x - v_r), (1 - lam)N(u) + lam N(u + x' - v_r)),
     |x - v_r|, |x' - v_r| <= 2C;
   * add/remove, m <= B - 1: ((1 - q)N(s) + qN(s + x), N(s));
   * add/remove, m >= B: ((1 - lam)N(u) + lam N(u + x - v_r), N(u)), shift <= 2C.
   Merging the labels m >= B (step ``coupling``, enumeration): given M = m >= B, W is uniform among
   all B-subsets of the other records, whatever m (P(W = w | M = m) = 1/C(n-1, B), checked in exact
   rationals), and r is uniform in W; so (W, r) is independent of M given M >= B, and revealing only
   (M >= B, W, r) leaves the record kept with probability q_c = E[lam_M | M >= B] =
   (B/n) P(Bin(n, q) > B) / P(M >= B): the m >= B labels become one pair at the averaged rate q_c.
   Revealing the label is post-processing in reverse: the mechanism's output is the labelled
   output with the label dropped, so by data processing the labelled mixture of per-label
   dominating pairs dominates the step, H_kappa = sum_label P(label) H_kappa(pair_label) (the label
   splits every event). Per label: the antipodal pair A(C, q) resp. A(2C, q_c) dominates the
   replace-one pairs (proofs/antipodal_dominance.py, with C and 2C), and the Poisson-subsampled
   Gaussian of shift C resp. 2C the add/remove ones (a shift d <= D is the shift D post-processed by
   y -> (d/D) y + N(0, sigma^2 (1 - d^2/D^2)) along d, which maps the mixture's components one by
   one). Composition: every step, given the history, is dominated by the same pair; Zhu, Dong &
   Wang 2022, Thm 10.
1b. Hiding the count between B - 1 and B (add/remove, the record first; verifier.pairs.truncated_edge;
   step ``coupling``, enumeration of the coins and of every order of the records): the truncated
   batch is the first min(B, drawn) drawn records of a uniformly random order (and the dataset
   without the record uses the same order). For M >= B - 1 let U be the first B - 1 other records
   drawn. Checked in exact rationals, for n <= 6: P(M >= B - 1, U = u) = P(M >= B - 1)/C(n-1, B-1);
   given U = u, the batch without the record is u with probability pi0 = b(B - 1)/P(M >= B - 1)
   and u + {r} with probability (1 - pi0)/(n - B) for each other record r outside u; with the
   record it is u with probability pi0(1 - q), u + {record} with probability pi0 q + (1 - pi0) q_c,
   and u + {r} with probability (1 - pi0)(1 - q_c)/(n - B). So given U the step is
   P = (1 - gamma)R + gamma N(s + x), Q = (1 - gamma)R + gamma A' (gamma = pi0 q + (1 - pi0) q_c), and
   Balle et al.'s Thm 2 with Lemma C below (orientation N(0) first: the means -x and v_r - x have
   norms <= C and <= 2C) bound it by gamma H_k(N(0) ‖ c0 N(C) + c1 N(2C)) at k = 1 + (kappa - 1)/gamma,
   c0 = (1 - beta) pi0 (1 - q)/(1 - gamma) + beta pi0 q/gamma, beta = kappa/k, for kappa >= 1.
   Replace-one (the record x against x', the same batch laws): P = (1 - gamma)R + gamma N(s + x),
   Q = (1 - gamma)R + gamma N(s + x'), so the second argument is c0 N(0) + c1 E_r N(v_r) + beta N(x')
   with c0 = (1 - beta) pi0 (1 - q)/(1 - gamma); centred at x its means have norms <= C, 2C, 2C:
   gamma H_k(N(0) ‖ c0 N(C) + (1 - c0) N(2C)), and below kappa = 1 its dual (the relation is
   symmetric). Step ``bracket`` checks that every enumerated instance lies at or below the resulting
   bounds (the labels M <= B - 2 as before).
2. Laws (enumeration, step ``laws``): P(kept | M = m) = q for m <= B - 1 and lam_m for m >= B;
   P(kept) = q' = q P(M <= B - 1) + (B/n) P(Bin(n, q) > B), from the identity
   q sum_{m >= B} b(m) B/(m + 1) = (B/n) P(Bin(n, q) > B) (sympy, as a polynomial identity in q for
   n <= 8, every B), since q C(n-1, m)/(m + 1) = C(n, m + 1)/n. The other route (reveal the other
   records in the truncated batch, j of them): P(j <= B - 2) = P(M <= B - 2), P(j = B - 1) =
   b(B - 1) + (B/n) P(Bin(n, q) > B), P(j = B) = P(M >= B) - (B/n) P(Bin(n, q) > B), and rates q,
   (q b(B - 1) + (B/n) P(Bin(n, q) > B))/P(j = B - 1), 0 (checked; valid, but looser where
   truncation binds, see verifier.pairs.batch_sampling).
3. Attained pairs (text; mpmath step ``bracket``): every other record 0, the record +C against -C
   (replace-one) or removed (add/remove): the output is I x + N(0, sigma^2) with I ~ Bernoulli(q'),
   i.e. A(C, q') resp. the Poisson-subsampled Gaussian at rate q'. A real pair of neighbours:
   LOWER bound; the same instance at every step: the T-fold product is a LOWER bound on the run.
   Add/remove with every other record -C (verifier.certify.methods.truncated_attained): without the
   record the sum is -min(M, B) C; with it, for M = m <= B - 1, -mC plus C with probability q, and
   for m >= B, -(B - 2)C with probability qB/(m + 1), else -BC: lattice laws sum_k a_k N(kC),
   sum_k b_k N(kC), checked against the enumerated sums in exact rationals (step ``laws``). Where
   truncation binds the record's place is taken from a record at -C, a shift of 2C. Replace-one, the
   record +C against -C, every other record -C: the second law is -mC, minus C with probability q,
   for m <= B - 1, and -BC for m >= B (also checked). The instances in the plane (every other record
   at o, the record at x, |o| = |x| = C, any angle; under replace-one against the record at -x) have
   the same laws of (k, r), k the number of other records in the batch and r whether the record is
   in it (whatever its value), with the mean k o + r x (k o - r x for -x): the joint
   law of (k, r) is checked against the enumeration too (step ``laws``), which the lattice check
   alone does not separate (k o + x = (k - 2) o when x = -o).

Sampling with replacement (SampledWithReplacementDpEvent; replace-one, n public): m draws uniform
over the n records. The record's multiplicity K ~ Bin(m, 1/n) (enumeration of all n^m draws), and
given every multiplicity the step is N(s + Kx) against N(s + Kx'): revealing the multiplicities,
DOMINATING sum_k P(K = k)[k] (x) Gaussian(sigma, k Delta_r), Delta_r = 2C. ATTAINED: the record +C
against -C and every other record -C: the second dataset's sum is the constant -mC, the first's
-mC + 2KC, so the pair is (sum_k P(k) N(2kC), N(0)) (checked: the enumerated output laws of that
instance give the same hockey stick, step ``bracket``). At kappa = 3 it lies above the instance with
the other records 0, (sum_k P(k) N(kC), sum_k P(k) N(-kC)), also checked; at kappa = 1 and 1/2 it
does not (0.398 against 0.409 and 0.518 against 0.615 for n = 3, m = 2, sigma = C = 1), so
verifier keeps both as LOWER bounds. Revealing K loses the amplification
of the other draws' overlap (given K = 1 the step is the whole Gaussian): a rigorous but loose upper
bound.

Hiding K = 0 from K >= 1 (one step; the argument is in verifier.pairs.batch_sampling's docstring:
Balle, Barthe & Gaboardi 2018, Thm 2, then joint convexity over the draws that hit the record and
the values of those that miss it): for kappa >= 1 the profile is at most
eta·H_k(L‖L0) = sum_{k>=1} P(K = k) H_k(N(2kC)‖N(0)) at k = 1 + (kappa − 1)/eta, eta = P(K >= 1),
and its dual below. Step ``bracket`` checks, with mpmath, that every enumerated instance lies at or
below it and that it lies between the attained pair and the revealed-K bound.

Hiding the multiplicity too (issue 42; verifier.pairs.substitution and
verifier.pairs.batch_sampling._hidden_multiplicity). Write M = (1 - eta)M0 + eta M1 and
M' = (1 - eta)M0 + eta M1' as above, kappa' = e^eps >= 1, kappa = 1 + (kappa' - 1)/eta.

Lemma C (aligned means are worst against one Gaussian). Let P = sum_i w_i N(mu_i, sigma^2 I_d)
(w_i >= 0, sum 1), Q = N(0, sigma^2 I_d) and ||mu_i|| <= r_i. For every convex phi,
E_Q[phi(dP/dQ)] <= E[phi(dP*/dQ*)] under Q* = N(0, sigma^2), P* = sum_i w_i N(r_i, sigma^2) in one
dimension; in particular H_k(P‖Q) = E_Q[(dP/dQ - k)_+] and H_k(Q‖P) = E_Q[(1 - k dP/dQ)_+] are at
most P*'s, for every k >= 0.
Proof. Under Q, L = dP/dQ = sum_i w_i X_i with X_i = exp(<y, mu_i>/sigma^2 - ||mu_i||^2/2sigma^2),
whose law is that of exp(s_i Z - s_i^2/2), s_i = ||mu_i||/sigma, Z ~ N(0, 1). Let
Y_i = exp(t_i Z - t_i^2/2), t_i = r_i/sigma, with ONE Z for all i: L* = sum_i w_i Y_i is dP*/dQ*.
(a) For any split d = sum_i w_i d_i, (L - d)_+ <= sum_i w_i (X_i - d_i)_+ pointwise (the positive
part is subadditive), so E(L - d)_+ <= sum_i w_i E(X_i - d_i)_+.
(b) E(exp(sZ - s^2/2) - c)_+ = Phi(d1) - c Phi(d1 - s), d1 = (s^2/2 - ln c)/s, and its derivative in s
is phi(d1) > 0 (step ``comonotone``, sympy): it grows with s, so E(X_i - d_i)_+ <= E(Y_i - d_i)_+.
(c) If some t_i > 0, z -> sum_i w_i exp(t_i z - t_i^2/2) increases continuously from w0 = sum_{t_i = 0} w_i
to infinity; for d > w0 take z* with sum_i w_i d_i = d, d_i = exp(t_i z* - t_i^2/2): every Y_i - d_i
has the sign of Z - z*, so sum_i w_i (Y_i - d_i)_+ = (L* - d)_+ pointwise, and
E(L - d)_+ <= E(L* - d)_+. For d <= w0 both sides are 1 - d (L >= w0 and L* >= w0: the components
with r_i = 0 have mu_i = 0). So L is below L* in stop-loss order with equal means (both 1), which
is convex order (Shaked & Shanthikumar 2007, Thm 3.A.1). []
(This is the comonotonic upper bound of Dhaene, Denuit, Goovaerts, Kaas & Vyncke 2002, with the
marginals enlarged in convex order.) Step ``comonotone`` also checks it with mpmath on one-dimensional
mixtures whose means have mixed signs and smaller norms, both orientations.

Applied to the step: given the values V of the draws that miss the record (the same law under M1,
M0 and M1'), M0 is N(sum V) and M1 the mixture over the hitting set S (|S| = K >= 1, independent of
V) of N(sum V + mu_S), mu_S = sum_{t in S}(x - V_t), ||mu_S|| <= 2C|S|: Lemma C, then joint convexity
over V, give H_k(M1‖M0) <= H_k(Mix‖N(0)), Mix = sum_{k>=1} P(K = k | K >= 1) N(2kC) (and M1' the same).
Two bounds on H_kappa'(M‖M') for kappa' >= 1 follow:
* eta[beta H_k(L‖L0) + (1 - beta) H_k(Mix‖N(0))] at k = kappa, beta = kappa'/kappa (Balle et al. Thm 2,
  joint convexity, and the revealed-K bound for the term M1 against M1');
* eta H_k(Mix‖N(0)) at k = kappa - kappa' (drop M1': M - kappa' M' <= eta M1 - (kappa' - 1)(1 - eta)M0
  on every event, and (kappa' - 1)(1 - eta)/eta = kappa - kappa', step ``comonotone``, sympy).
verifier takes the smaller at every eps >= 0 and the dual below. Step ``bracket`` checks that every
enumerated instance (the other records in {-C, C}, and at kappa = 1 or with ``--full`` also -3C/4)
lies at or below it and that it lies between the attained pair and the hiding-K = 0 bound.

Finding: Lemma C (the data-loaders page's former open lemma, a mixture of subset-sum shifts against
N(0) is worst when the shifts are aligned) holds, but the attained pair, with every other record at
-C, is not the worst instance of the step. n = 3, m = 3, sigma = C = 1, the record +1 against -1: at eps = 0.3
the other records at -3/4 give H = 0.502155 against 0.495765 with them at -1 and 0.485348 at 0 (step
``bracket`` checks the order); so no bound can equal the attained pair's profile at every eps, and
the bracket's width comes from both ends.

4. Bracket (mpmath, 30 digits, step ``bracket``): for n <= 4, the target +C against -C, 0 or
   removed, and the other records in {-C, 0, C} (n = 3) or {-C, C} (n = 4) in one dimension, the exact output laws of the real mechanism (finite Gaussian mixtures) are
   built by enumeration and their hockey stick computed from the definition (all sign changes of
   p - kappa q located, interval masses by the normal CDF); every instance lies at or below the
   labelled mixture's hockey stick (its components' closed forms), and the attained instance
   equals the attained pair's, at kappa in {1/2, 1, 3}. ``derive()`` (run_all, the tests) runs the
   first case at kappa in {1/2, 3} with the other records in {-C, C}; ``python proofs/batch_sampling.py --full`` the whole grid (~1 min).

Finding (truncated Poisson, issue 42): the instance with every other record at -C (the
truncated-attained LOWER bound) is not the worst instance either. n = 6, q = 2/5, B = 2,
sigma = C = 1, add/remove with the record first, eps = 1: the other records at -3C/4 give
H = 0.019332 against 0.015741 at -C and 0.006759 at 0 (step ``bracket`` checks the order). So the
collinear instance's profile is no candidate for the UPPER bound (nor is the pair that hides the
count M near B with the other records at -C). On the enumerated one-dimensional grid at eps <= 0.3
the instance at -C is the largest, and the labelled UPPER bound lies 10-25% above it (0.0869 against
0.1072 at eps = 0.3 for the case above): there the loose end is the UPPER one.

Lemma H (homogeneous datasets; what an UPPER end at the per-step floor needs, issue 42). Call a
dataset homogeneous when every other record has one value o.
(a) Every homogeneous dataset with |o|, |x| <= C is dominated by the instance in the plane with the
    other records at -C e_1 and the record at C(cos theta, sin theta), for one theta in [0, pi]. Lift
    o' = (o, sqrt(C^2 - |o|^2), 0) and x' = (x, 0, sqrt(C^2 - |x|^2)) into two more dimensions:
    <o', x'> = <o, x>, the batch law does not depend on the values, and projecting the lifted output
    onto the first coordinates gives the original one (the same post-processing on both datasets);
    the lifted dataset is that instance up to a rotation, which the noise does not see. Under
    replace-one the same lift (x and x' along two further coordinates) gives all three values norm C
    at the same inner products: the worst one-valued datasets are three unit vectors, not a plane.
(b) For B = 1 every dataset is dominated by its homogeneous ones: at every kappa,
    H_kappa(P_D || Q_D) <= max over the values v of the other records of H_kappa for the dataset with
    every other record at v. The batch is empty or one drawn record, uniform among those drawn, so
    with mu the empirical law of the other records' values both output laws are affine in mu:
    P = a0 N(0) + ax N(x) + av (mu * N), Q = b0 N(0) + bv (mu * N) (replace-one: x' in Q as well).
    For every event E, P(E) - kappa Q(E) = c_E + integral of g_E dmu is at most c_E + max_v g_E(v), the
    value of the homogeneous dataset at v; take the sup over E on both sides. With (a), the hull of
    the instances in the plane dominates every step, and an accountant composing it is exact up to
    the adaptive gap.
(c) For B >= 2 the output laws are polynomials of degree B in mu (two other records can share a
    batch) and (b)'s bound fails: n = 5, q = 2/5, B = 2, sigma = C = 1, the record at +C, eps = 1:
    the others at (-C, -C, -C, 0) give H = 0.01334 against 0.01076 and 0.00896 for their values
    alone, though the dataset at -C/2 (0.01730) is above it. Nor is the one-valued dataset at the
    values' mean always above (so no proof by averaging pairs of values, Schur-concavity, can work):
    B = 3, eps = 1, the others at (-C, -C, -C/2, -C/2) give 0.007504 against 0.007376 at -3C/4, though
    the dataset at -3C/20 gives 0.01576. Step ``atoms`` checks (b) on every one-dimensional dataset
    with values in {-C, 0, C} (n = 5, B = 1, eps in {0, 0.3, 1}) and these two counterexamples.
    Whether the family of (a) dominates every dataset for B >= 2 is open; float evidence for the
    binding case (benchmarks/truncated_worst_case.py) finds no dataset above it.

Typos found: none. Findings: dp_accounting's PLD for the event mixes two branches, P(M >= B) at the
averaged rate q_c = E[lam_M | M >= B] with the 2C antipodal pair and the rest at rate q; that is the
bound of step 1 with the m >= B labels merged, proven above by the independence of (W, r) and M
given M >= B (revealing every m, as verifier did before, is looser: delta is convex in the rate).
"""

from __future__ import annotations

import itertools
import sys
from fractions import Fraction
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/batch_sampling.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mpmath
import sympy as sp

from proofs._common import DerivationFailed, record_check

__all__ = ["EXPORT_SYMBOLS", "CASES", "truncated_batches", "with_replacement_multiplicity", "mixture_hockey", "derive"]

#: No sympy expression is exported: the checks are enumerations and numeric comparisons.
EXPORT_SYMBOLS: dict[str, tuple[str, ...]] = {}
#: (n, q, B) of the enumeration checks: truncation binding, rare and absent.
CASES = ((4, Fraction(1, 2), 1), (5, Fraction(1, 3), 2), (6, Fraction(2, 5), 3), (3, Fraction(1, 4), 5), (6, Fraction(3, 4), 4))
_DIGITS = 30
_KAPPAS = ("0.5", "1", "3")
#: Slack of the mpmath comparisons (roots located to 2^-64 of a cell: an error of second order, 1e-38, in H; normal CDFs to 30 digits).
_ATOL = mpmath.mpf("1e-20")
#: Cells of the sign-change search (width 0.4 sigma for these means: roots of p - kappa q for
#: mixtures of a common sigma lie further apart than that here; a missed pair of roots would make the
#: computed value smaller, never larger, than the definition, so the attained equalities catch it).
_CELLS = 200


def truncated_batches(n: int, q: Fraction, batch: int) -> dict[tuple[frozenset, frozenset], Fraction]:
    """P(others drawn A, batch) of truncated Poisson sampling with record 0 the target, by
    enumeration of the coins and of the uniform B-subsets."""
    law: dict[tuple[frozenset, frozenset], Fraction] = {}
    for coins in itertools.product((0, 1), repeat=n):
        p = Fraction(1)
        for c in coins:
            p *= q if c else 1 - q
        drawn = [i for i in range(n) if coins[i]]
        subsets = [tuple(drawn)] if len(drawn) <= batch else list(itertools.combinations(drawn, batch))
        others = frozenset(i for i in drawn if i != 0)
        for kept in subsets:
            key = (others, frozenset(kept))
            law[key] = law.get(key, Fraction(0)) + p / len(subsets)
    return law


def _coupled(n: int, q: Fraction, batch: int) -> dict[tuple[frozenset, frozenset], Fraction]:
    """The same law by the coupling of step 1 (W, r, c)."""
    law: dict[tuple[frozenset, frozenset], Fraction] = {}
    for size in range(n):
        for others in itertools.combinations(range(1, n), size):
            p_a = q**size * (1 - q) ** (n - 1 - size)
            a = frozenset(others)
            if size <= batch - 1:
                outcomes = [(a | {0}, q), (a, 1 - q)]
            else:
                lam = q * batch / (size + 1)
                subsets = list(itertools.combinations(others, batch))
                outcomes = []
                for w in subsets:
                    for r in w:
                        outcomes.append((frozenset(w) - {r} | {0}, lam / (len(subsets) * batch)))
                        outcomes.append((frozenset(w), (1 - lam) / (len(subsets) * batch)))
            for kept, p in outcomes:
                key = (a, kept)
                law[key] = law.get(key, Fraction(0)) + p_a * p
    return law


def _binom(n: int, p: Fraction, k: int) -> Fraction:
    return Fraction(sp.binomial(n, k)) * p**k * (1 - p) ** (n - k) if 0 <= k <= n else Fraction(0)


def _sf(n: int, p: Fraction, k: int) -> Fraction:
    return sum((_binom(n, p, j) for j in range(k + 1, n + 1)), Fraction(0))


def with_replacement_multiplicity(n: int, draws: int) -> dict[int, Fraction]:
    """P(K = k) for the multiplicity of record 0 among ``draws`` uniform draws, by enumeration."""
    law: dict[int, Fraction] = {}
    for seq in itertools.product(range(n), repeat=draws):
        k = seq.count(0)
        law[k] = law.get(k, Fraction(0)) + Fraction(1, n**draws)
    return law


def _check_coupling() -> None:
    for n, q, batch in CASES:
        if truncated_batches(n, q, batch) != _coupled(n, q, batch):
            raise DerivationFailed(f"coupling of step 1 differs from truncated Poisson sampling at n={n}, q={q}, B={batch}")
        for m in range(batch, n):  # W uniform over the B-subsets of the others, whatever M = m >= B
            laws: dict[tuple, Fraction] = {}
            each = Fraction(1, sp.binomial(n - 1, m) * sp.binomial(m, batch))  # A uniform given M = m, W uniform in A
            for others in itertools.combinations(range(1, n), m):
                for w in itertools.combinations(others, batch):
                    laws[w] = laws.get(w, Fraction(0)) + each
            if set(laws.values()) != {Fraction(1, sp.binomial(n - 1, batch))}:
                raise DerivationFailed(f"P(W | M = {m}) is not uniform over the B-subsets at n={n}, B={batch}")
    for n, q, batch in CASES:
        if n <= 6 and batch <= n - 1:
            _check_edge_label(n, q, batch)
    record_check("points")


def _check_edge_label(n: int, q: Fraction, batch: int) -> None:
    """Step 1b: the law of U (the first B - 1 other records drawn, M >= B - 1) and of both batches
    given U, by enumeration of every order of the n records and every coin vector (record 0 the target)."""
    joint: dict[tuple, Fraction] = {}
    orders = list(itertools.permutations(range(n)))
    for coins in itertools.product((0, 1), repeat=n):
        p = Fraction(1)
        for c in coins:
            p *= q if c else 1 - q
        for order in orders:
            drawn = [i for i in order if coins[i]]
            others = [i for i in drawn if i != 0]
            if len(others) < batch - 1:
                continue
            u = frozenset(others[: batch - 1])
            for key in ((u, "Q", frozenset(others[:batch])), (u, "P", frozenset(drawn[:batch]))):
                joint[key] = joint.get(key, Fraction(0)) + p / len(orders)
    top = 1 - sum((_binom(n - 1, q, m) for m in range(batch - 1)), Fraction(0))
    pi0 = _binom(n - 1, q, batch - 1) / top
    full = 1 - sum((_binom(n - 1, q, m) for m in range(batch)), Fraction(0))
    rate_full = Fraction(batch, n) * _sf(n, q, batch) / full
    each = top / sp.binomial(n - 1, batch - 1)
    outside = n - batch
    for u in itertools.combinations(range(1, n), batch - 1):
        u = frozenset(u)
        rest = [r for r in range(1, n) if r not in u]
        claimed = {(u, "Q", u): pi0, (u, "P", u): pi0 * (1 - q), (u, "P", u | {0}): pi0 * q + (1 - pi0) * rate_full}
        for r in rest:
            claimed[(u, "Q", u | {r})] = (1 - pi0) / outside
            claimed[(u, "P", u | {r})] = (1 - pi0) * (1 - rate_full) / outside
        got = {key: v / each for key, v in joint.items() if key[0] == u}
        if got != {k: v for k, v in claimed.items() if v}:
            raise DerivationFailed(f"edge label at n={n}, q={q}, B={batch}, U={set(u)}: {got} != {claimed}")


def _check_laws() -> None:
    m_, b_, q_ = sp.symbols("m B q", positive=True)
    for n in range(1, 9):
        for batch in range(1, n + 1):
            lhs = sum(q_ * sp.binomial(n - 1, m) * q_**m * (1 - q_) ** (n - 1 - m) * sp.Rational(batch, m + 1) for m in range(batch, n))
            rhs = sp.Rational(batch, n) * sum(sp.binomial(n, j) * q_**j * (1 - q_) ** (n - j) for j in range(batch + 1, n + 1))
            if sp.expand(lhs - rhs) != 0:
                raise DerivationFailed(f"the swapped-in identity fails at n={n}, B={batch}")
    record_check("symbolic")
    for n, q, batch in CASES:
        law = truncated_batches(n, q, batch)
        kept = sum((p for (a, k), p in law.items() if 0 in k), Fraction(0))
        claimed = q * sum((_binom(n - 1, q, m) for m in range(batch)), Fraction(0)) + Fraction(batch, n) * _sf(n, q, batch)
        if kept != claimed:
            raise DerivationFailed(f"q' = {kept}, claimed {claimed} at n={n}, q={q}, B={batch}")
        for m in range(n):
            p_m = sum((p for (a, k), p in law.items() if len(a) == m), Fraction(0))
            k_m = sum((p for (a, k), p in law.items() if len(a) == m and 0 in k), Fraction(0))
            rate = q if m <= batch - 1 else q * batch / (m + 1)
            if p_m and k_m / p_m != rate:
                raise DerivationFailed(f"P(kept | M={m}) = {k_m / p_m}, claimed {rate}")
        swapped = Fraction(batch, n) * _sf(n, q, batch)
        mid = _binom(n - 1, q, batch - 1) + swapped
        j_law = {"low": (sum((_binom(n - 1, q, m) for m in range(batch - 1)), Fraction(0)), q),
                 "mid": (mid, (q * _binom(n - 1, q, batch - 1) + swapped) / mid if mid else Fraction(0)),
                 "top": (1 - sum((_binom(n - 1, q, m) for m in range(batch)), Fraction(0)) - swapped, Fraction(0))}
        for label, (weight, rate) in j_law.items():
            js = {"low": range(batch - 1), "mid": [batch - 1], "top": [batch]}[label]
            w = sum((p for (a, k), p in law.items() if len(k - {0}) in js), Fraction(0))
            kw = sum((p for (a, k), p in law.items() if len(k - {0}) in js and 0 in k), Fraction(0))
            if w != weight or (w and kw / w != rate):
                raise DerivationFailed(f"label {label}: P = {w}, rate {kw / w if w else 0}; claimed {weight}, {rate}")
    for n, q, batch in CASES:  # the others-at--C instance's lattice laws (add/remove)
        batches: dict = {}
        for (a, k), p in truncated_batches(n, q, batch).items():
            batches[k] = batches.get(k, Fraction(0)) + p
        enumerated = [_lattice_law((1, *(-1,) * (n - 1)), batches), _lattice_law((None, *(-1,) * (n - 1)), _others_only(n, q, batch))]
        with_rec: dict = {}
        without: dict = {}
        for m in range(n):
            b = _binom(n - 1, q, m)
            if m <= batch - 1:
                with_rec[-m] = with_rec.get(-m, 0) + b * (1 - q)
                with_rec[1 - m] = with_rec.get(1 - m, 0) + b * q
                without[-m] = without.get(-m, 0) + b
            else:
                kept = q * batch / (m + 1)
                with_rec[2 - batch] = with_rec.get(2 - batch, 0) + b * kept
                with_rec[-batch] = with_rec.get(-batch, 0) + b * (1 - kept)
                without[-batch] = without.get(-batch, 0) + b
        claimed = [{k: v for k, v in law.items() if v} for law in (with_rec, without)]
        if enumerated != claimed:
            raise DerivationFailed(f"others-at--C laws differ from the enumeration at n={n}, q={q}, B={batch}")
        swapped: dict = {}  # replace-one: the record at -C
        for m in range(n):
            b = _binom(n - 1, q, m)
            if m <= batch - 1:
                swapped[-m] = swapped.get(-m, 0) + b * (1 - q)
                swapped[-m - 1] = swapped.get(-m - 1, 0) + b * q
            else:
                swapped[-batch] = swapped.get(-batch, 0) + b
        if _lattice_law((-1, *(-1,) * (n - 1)), batches) != {k: v for k, v in swapped.items() if v}:
            raise DerivationFailed(f"replace-one others-at--C law differs from the enumeration at n={n}, q={q}, B={batch}")
        joint: dict = {}  # the plane instances: (others in the batch, record in it)
        for kept, p in batches.items():
            key = (len(kept - {0}), 0 in kept)
            joint[key] = joint.get(key, Fraction(0)) + p
        claimed_joint: dict = {}
        for m in range(n):
            b = _binom(n - 1, q, m)
            rate = q if m <= batch - 1 else q * batch / (m + 1)
            for key, w in (((min(m, batch - 1), True), b * rate), ((min(m, batch), False), b * (1 - rate))):
                claimed_joint[key] = claimed_joint.get(key, Fraction(0)) + w
        if joint != {k: v for k, v in claimed_joint.items() if v}:
            raise DerivationFailed(f"the (others kept, record kept) law differs from the enumeration at n={n}, q={q}, B={batch}")
    for n, draws in ((2, 3), (3, 3), (4, 2), (3, 5)):
        law = with_replacement_multiplicity(n, draws)
        if any(law.get(k, 0) != _binom(draws, Fraction(1, n), k) for k in range(draws + 1)):
            raise DerivationFailed(f"multiplicity law is not Bin({draws}, 1/{n})")
    record_check("points")


def _check_comonotone(full: bool) -> None:
    """Lemma C's steps: (b) the call price of a mean-one lognormal grows with s (sympy); the drop
    bound's rate identity (sympy); the lemma itself with mpmath on one-dimensional mixtures with
    means of mixed signs and smaller norms against N(0), both orientations."""
    s_, c_, lam_, kp_ = sp.symbols("s c lambda kappa_prime", positive=True)
    d1 = (s_**2 / 2 - sp.log(c_)) / s_
    cdf = lambda z: (1 + sp.erf(z / sp.sqrt(2))) / 2
    price = cdf(d1) - c_ * cdf(d1 - s_)
    if sp.simplify(sp.diff(price, s_) - sp.exp(-d1**2 / 2) / sp.sqrt(2 * sp.pi)) != 0:
        raise DerivationFailed("d/ds of the lognormal call price is not phi(d1)")
    record_check("symbolic")
    kappa_ = 1 + (kp_ - 1) / lam_
    if sp.simplify((kp_ - 1) * (1 - lam_) / lam_ - (kappa_ - kp_)) != 0:
        raise DerivationFailed("(kappa' - 1)(1 - lambda)/lambda != kappa - kappa'")
    record_check("symbolic")
    weights, norms = (Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)), (1, 2, 3)
    scales = (-1, Fraction(-1, 2), Fraction(1, 2), 1) if full else ((1, -1, 1), (-1, Fraction(1, 2), 1), (Fraction(1, 2), 1, -1))
    configs = itertools.product(scales, repeat=3) if full else scales
    with mpmath.workdps(_DIGITS):
        w = [mpmath.mpf(x.numerator) / x.denominator for x in weights]
        aligned = [(wi, r) for wi, r in zip(w, norms)]
        for kappa in ("0.5", "3"):
            top = [mixture_hockey(aligned, [(1, 0)], 1, kappa), mixture_hockey([(1, 0)], aligned, 1, kappa)]
            for scale in configs:
                mixed = [(wi, r * mpmath.mpf(f.numerator if isinstance(f, Fraction) else f) / (f.denominator if isinstance(f, Fraction) else 1))
                         for wi, r, f in zip(w, norms, scale)]
                for h, bound in zip((mixture_hockey(mixed, [(1, 0)], 1, kappa), mixture_hockey([(1, 0)], mixed, 1, kappa)), top):
                    if h > bound + _ATOL:
                        raise DerivationFailed(f"Lemma C fails for means scaled by {scale} at kappa={kappa}: {h} > {bound}")
    record_check("points")


def mixture_hockey(p: list[tuple], q: list[tuple], sigma, kappa) -> mpmath.mpf:
    """H_kappa(P || Q) for 1-D finite Gaussian mixtures [(weight, mean)], from the definition: the
    sign changes of p - kappa q on a fine grid are refined by bisection, and the P - kappa Q mass of
    every interval where p > kappa q summed with the normal CDF."""
    sigma, kappa = mpmath.mpf(sigma), mpmath.mpf(kappa)
    means = [m for _, m in p + q]
    lo, hi = min(means) - 40 * sigma, max(means) + 40 * sigma

    def density(mix, y):
        return sum(w * mpmath.npdf(y, m, sigma) for w, m in mix)

    def gap(y):
        return density(p, y) - kappa * density(q, y)

    def mass(mix, a, b):
        return sum(w * (mpmath.ncdf((b - m) / sigma) - mpmath.ncdf((a - m) / sigma)) for w, m in mix)

    points = [lo + (hi - lo) * i / _CELLS for i in range(_CELLS + 1)]
    cuts = [mpmath.ninf]
    for a, b in zip(points, points[1:]):
        if (gap(a) > 0) != (gap(b) > 0):
            for _ in range(64):
                mid = (a + b) / 2
                a, b = (mid, b) if (gap(mid) > 0) == (gap(a) > 0) else (a, mid)
            cuts.append((a + b) / 2)
    cuts.append(mpmath.inf)
    total = mpmath.mpf(0)
    for a, b in zip(cuts, cuts[1:]):
        mid = (max(a, lo) + min(b, hi)) / 2
        if gap(mid) > 0:
            total += mass(p, a, b) - kappa * mass(q, a, b)
    return total


def _output(values: tuple, batches: dict[frozenset, Fraction]) -> list[tuple]:
    """The output mixture [(weight, mean)] of records ``values`` (index 0 the target, None absent)."""
    mix: dict = {}
    for kept, p in batches.items():
        mean = sum(values[i] for i in kept if values[i] is not None)
        mix[mean] = mix.get(mean, Fraction(0)) + p
    return [(mpmath.mpf(w.numerator) / w.denominator, mpmath.mpf(m.numerator) / m.denominator) for m, w in mix.items()]


def _antipodal(shift, rate) -> tuple[list, list]:
    return [(1 - rate, 0), (rate, shift)], [(1 - rate, 0), (rate, -shift)]


def _subsampled(shift, rate) -> tuple[list, list]:
    return [(1 - rate, 0), (rate, shift)], [(1, 0)]


def _check_bracket(full: bool) -> None:
    exhaustive = full  # ``full`` is reused below for P(M >= B)
    with mpmath.workdps(_DIGITS):
        sigma = mpmath.mpf(1)
        grid = [Fraction(v) for v in (-1, 0, 1)]  # C = 1
        for n, q, batch in ((3, Fraction(1, 2), 1), (4, Fraction(1, 3), 2))[: 2 if full else 1]:
            law = truncated_batches(n, q, batch)
            batches = {}
            for (a, k), p in law.items():
                batches[k] = batches.get(k, Fraction(0)) + p
            without = _others_only(n, q, batch)
            fq = mpmath.mpf(q.numerator) / q.denominator
            full = 1 - sum((_binom(n - 1, q, m) for m in range(batch)), Fraction(0))
            averaged = Fraction(batch, n) * _sf(n, q, batch) / full if full else Fraction(0)
            labels = [(1 - full, fq, 1)] + ([(full, mpmath.mpf(averaged.numerator) / averaged.denominator, 2)] if full else [])
            kept_rate = q * sum((_binom(n - 1, q, m) for m in range(batch)), Fraction(0)) + Fraction(batch, n) * _sf(n, q, batch)
            kr = mpmath.mpf(kept_rate.numerator) / kept_rate.denominator
            for kappa in _KAPPAS if full else _KAPPAS[::2]:
                upper_r = sum(mpmath.mpf(w.numerator) / w.denominator * mixture_hockey(*_antipodal(s, r), sigma, kappa) for w, r, s in labels)
                upper_a = sum(mpmath.mpf(w.numerator) / w.denominator * mixture_hockey(*_subsampled(s, r), sigma, kappa) for w, r, s in labels)
                upper_add = sum(mpmath.mpf(w.numerator) / w.denominator * mixture_hockey(*_subsampled(s, r)[::-1], sigma, kappa) for w, r, s in labels)
                edge = _edge_bound(n, q, batch, sigma, mpmath.mpf(kappa), fq)
                edge_r = _edge_bound(n, q, batch, sigma, mpmath.mpf(kappa), fq, replace_one=True)
                lower_r = mixture_hockey(*_antipodal(1, kr), sigma, kappa)
                lower_a = mixture_hockey(*_subsampled(1, kr), sigma, kappa)
                for others in itertools.product(grid if n <= 3 and full else grid[::2], repeat=n - 1):
                    for x, x2 in ((Fraction(1), Fraction(-1)), (Fraction(1), Fraction(0)), (Fraction(1, 2), Fraction(-1))):
                        h = mixture_hockey(_output((x, *others), batches), _output((x2, *others), batches), sigma, kappa)
                        if h > min(upper_r, edge_r) + _ATOL:
                            raise DerivationFailed(f"replace-one instance {(x, x2, others)} above the upper bound at kappa={kappa}: {h} > {upper_r}")
                    for x in (Fraction(1), Fraction(-1, 2)):
                        p_out = _output((x, *others), batches)
                        q_out = _output((None, *others), without)
                        for h, upper in ((mixture_hockey(p_out, q_out, sigma, kappa), min(upper_a, edge)), (mixture_hockey(q_out, p_out, sigma, kappa), upper_add)):
                            if h > upper + _ATOL:
                                raise DerivationFailed(f"add/remove instance {(x, others)} above the upper bound at kappa={kappa}: {h} > {upper}")
                zero = (Fraction(0),) * (n - 1)
                attained_r = mixture_hockey(_output((Fraction(1), *zero), batches), _output((Fraction(-1), *zero), batches), sigma, kappa)
                attained_a = mixture_hockey(_output((Fraction(1), *zero), batches), _output((None, *zero), without), sigma, kappa)
                if abs(attained_r - lower_r) > _ATOL or abs(attained_a - lower_a) > _ATOL:
                    raise DerivationFailed(f"attained instances {attained_r}, {attained_a} differ from the attained pairs {lower_r}, {lower_a}")
        for n, draws in ((3, 2), (2, 3))[: 2 if full else 1]:
            law = with_replacement_multiplicity(n, draws)
            weights = [(mpmath.mpf(law.get(k, Fraction(0)).numerator) / law.get(k, Fraction(1)).denominator, k) for k in range(draws + 1)]
            for kappa in _KAPPAS:
                upper = sum(w * _gaussian_hockey(2 * k / sigma, mpmath.mpf(kappa)) for w, k in weights if k > 0)
                upper += sum(w for w, k in weights if k == 0) * max(0, 1 - mpmath.mpf(kappa))
                attained = mixture_hockey([(w, 2 * k) for w, k in weights], [(1, 0)], sigma, kappa)
                others_at = lambda v, x: _multiset_output((x, *(v,) * (n - 1)), n, draws)
                instance = mixture_hockey(others_at(Fraction(-1), Fraction(1)), others_at(Fraction(-1), Fraction(-1)), sigma, kappa)
                above = mpmath.mpf(kappa) > 1  # where the others-at-0 instance is compared (it can be the larger at kappa <= 1)
                zeros = mixture_hockey(others_at(Fraction(0), Fraction(1)), others_at(Fraction(0), Fraction(-1)), sigma, kappa) if above else 0
                hidden = _hidden_empty(weights, sigma, mpmath.mpf(kappa))
                tight = _hidden_multiplicity(weights, sigma, mpmath.mpf(kappa))
                if abs(instance - attained) > _ATOL or zeros > attained + _ATOL or attained > tight + _ATOL or tight > hidden + _ATOL or hidden > upper + _ATOL:
                    raise DerivationFailed(f"with-replacement attained pair {attained} against its instance {instance}, others at 0 {zeros}, "
                                           f"hidden-multiplicity bound {tight}, hidden-K=0 bound {hidden}, upper {upper}")
                inside = [Fraction(-3, 4)] if exhaustive or kappa == "1" else []
                for x, x2, *others in itertools.product((Fraction(1),), (Fraction(-1), Fraction(0)), *[grid[::2] + inside] * (n - 1)):
                    values = (x, x2, *others)
                    p_out = _multiset_output((x, *others), n, draws)
                    q_out = _multiset_output((x2, *others), n, draws)
                    if mixture_hockey(p_out, q_out, sigma, kappa) > tight + _ATOL:
                        raise DerivationFailed(f"with-replacement instance {values} above the hidden-multiplicity bound at kappa={kappa}")
        _check_premise(sigma)
        _check_truncated_premise(sigma)
    record_check("points")


def _gaussian_hockey(mu, kappa) -> mpmath.mpf:
    """H_kappa(N(mu, 1)‖N(0, 1)) = Phi(mu/2 − ln(kappa)/mu) − kappa·Phi(−mu/2 − ln(kappa)/mu) (the
    threshold set; proofs/gaussian_hockey_stick.py derives it)."""
    log_kappa = mpmath.log(kappa)
    return mpmath.ncdf(mu / 2 - log_kappa / mu) - kappa * mpmath.ncdf(-mu / 2 - log_kappa / mu)


def _hidden_empty(weights: list[tuple], sigma, kappa) -> mpmath.mpf:
    """The hiding-K = 0 bound at kappa: eta·H_k(L‖L0) = sum_{k>=1} P(K = k) H_k(N(2k)‖N(0)) at
    k = 1 + (kappa − 1)/eta for kappa >= 1, its dual 1 − kappa + kappa·bound(1/kappa) below."""
    if kappa < 1:
        return 1 - kappa + kappa * _hidden_empty(weights, sigma, 1 / kappa)
    eta = 1 - sum(w for w, k in weights if k == 0)
    inner = 1 + (kappa - 1) / eta
    return sum(w * _gaussian_hockey(2 * k / sigma, inner) for w, k in weights if k > 0)


def _hidden_multiplicity(weights: list[tuple], sigma, kappa) -> mpmath.mpf:
    """The bound that hides the multiplicity (module docstring, Lemma C): for kappa >= 1 the smaller
    of eta[beta H_k(L‖L0) + (1 - beta) H_k(Mix‖N(0))] at k = 1 + (kappa - 1)/eta and
    eta H_{k - kappa}(Mix‖N(0)); its dual 1 - kappa + kappa·bound(1/kappa) below."""
    if kappa < 1:
        return 1 - kappa + kappa * _hidden_multiplicity(weights, sigma, 1 / kappa)
    eta = 1 - sum(w for w, k in weights if k == 0)
    inner = 1 + (kappa - 1) / eta
    beta = kappa / inner
    mix = [(w / eta, 2 * k) for w, k in weights if k > 0]
    revealed = sum(w / eta * _gaussian_hockey(2 * k / sigma, inner) for w, k in weights if k > 0)
    joint = eta * (beta * revealed + (1 - beta) * mixture_hockey(mix, [(1, 0)], sigma, inner))
    if inner - kappa <= 0:
        return joint
    return min(joint, eta * mixture_hockey(mix, [(1, 0)], sigma, inner - kappa))


def _check_premise(sigma) -> None:
    """The finding of the module docstring: with n = 3, m = 3 the others at -3/4 lie above both the
    others at -1 (the attained pair) and at 0 at eps = 0.3."""
    kappa = mpmath.exp(mpmath.mpf("0.3"))
    h = {v: mixture_hockey(_multiset_output((Fraction(1), v, v), 3, 3), _multiset_output((Fraction(-1), v, v), 3, 3), sigma, kappa)
         for v in (Fraction(-1), Fraction(-3, 4), Fraction(0))}
    if not h[Fraction(-3, 4)] > max(h[Fraction(-1)], h[Fraction(0)]) + mpmath.mpf("1e-3"):
        raise DerivationFailed(f"the others at -3/4 are not above the attained pair at eps = 0.3: {h}")
    record_check("points")


def _edge_bound(n: int, q: Fraction, batch: int, sigma, kappa, fq, replace_one: bool = False) -> mpmath.mpf:
    """Step 1b's bound at kappa >= 1: P(M <= B - 2) H_kappa(first label) + P(M >= B - 1) gamma
    H_k(N(0) ‖ c0 N(C) + c1 N(2C)), the first label the Poisson step (add/remove, REMOVE) or the
    antipodal pair (replace-one). Below kappa = 1: the dual under replace-one, none (inf) under add/remove."""
    if kappa < 1:
        return 1 - kappa + kappa * _edge_bound(n, q, batch, sigma, 1 / kappa, fq, True) if replace_one else mpmath.inf
    mp = lambda f: mpmath.mpf(f.numerator) / f.denominator
    below = mp(sum((_binom(n - 1, q, m) for m in range(batch - 1)), Fraction(0)))
    top = 1 - below
    pi0 = mp(_binom(n - 1, q, batch - 1)) / top
    full = 1 - sum((_binom(n - 1, q, m) for m in range(batch)), Fraction(0))
    rate_full = mp(Fraction(batch, n) * _sf(n, q, batch) / full)
    gamma = pi0 * fq + (1 - pi0) * rate_full
    inner = 1 + (kappa - 1) / gamma
    beta = kappa / inner
    c0 = (1 - beta) * pi0 * (1 - fq) / (1 - gamma) + (0 if replace_one else beta * pi0 * fq / gamma)
    hidden = mixture_hockey([(1, 0)], [(c0, 1), (1 - c0, 2)], sigma, inner)
    first = _antipodal(1, fq) if replace_one else _subsampled(1, fq)
    return below * mixture_hockey(*first, sigma, kappa) + top * gamma * hidden


def _check_truncated_premise(sigma) -> None:
    """The truncated finding of the module docstring: n = 6, q = 2/5, B = 2, add/remove with the
    record first, eps = 1: the other records at -3/4 lie above them at -1 and at 0."""
    n, q, batch = 6, Fraction(2, 5), 2
    batches: dict = {}
    for (_, kept), p in truncated_batches(n, q, batch).items():
        batches[kept] = batches.get(kept, Fraction(0)) + p
    without = _others_only(n, q, batch)
    h = {v: mixture_hockey(_output((Fraction(1), *(v,) * (n - 1)), batches), _output((None, *(v,) * (n - 1)), without), sigma, mpmath.e)
         for v in (Fraction(-1), Fraction(-3, 4), Fraction(0))}
    if not h[Fraction(-3, 4)] > max(h[Fraction(-1)], h[Fraction(0)]) + mpmath.mpf("1e-3"):
        raise DerivationFailed(f"truncated: the others at -3/4 are not above the others at -1 at eps = 1: {h}")
    record_check("points")


def _check_atoms(sigma) -> None:
    """Lemma H (b) and (c): for B = 1 every one-dimensional dataset (n = 5, the other records in
    {-C, 0, C}, the record at +C) lies at or below the largest of its values' homogeneous datasets at
    eps in {0, 0.3, 1} (with B = 2 the first loop fails at eps = 1); for B = 2 the others at (-C, -C, -C, 0) lie above both theirs at eps = 1,
    and for B = 3 the others at (-C, -C, -C/2, -C/2) above the dataset at their mean -3C/4 but below the one at -3C/20."""
    n, q = 5, Fraction(2, 5)

    def hockey(batch: int, kappa):
        batches: dict = {}
        for (_, kept), p in truncated_batches(n, q, batch).items():
            batches[kept] = batches.get(kept, Fraction(0)) + p
        without = _others_only(n, q, batch)
        return lambda others: mixture_hockey(_output((Fraction(1), *others), batches), _output((None, *others), without), sigma, kappa)

    values = (Fraction(-1), Fraction(0), Fraction(1))
    for kappa in (mpmath.mpf(1), mpmath.exp(mpmath.mpf(3) / 10), mpmath.e):
        h = hockey(1, kappa)
        alone = {v: h((v,) * (n - 1)) for v in values}
        for others in itertools.combinations_with_replacement(values, n - 1):
            if h(others) > max(alone[v] for v in set(others)) + _ATOL:
                raise DerivationFailed(f"Lemma H (b) fails for B = 1 at kappa = {kappa}: others {others}")
    h = hockey(2, mpmath.e)
    mixed, alone = h((Fraction(-1),) * 3 + (Fraction(0),)), [h((v,) * (n - 1)) for v in (Fraction(-1), Fraction(0))]
    if not mixed > max(alone) + mpmath.mpf("1e-3"):
        raise DerivationFailed(f"Lemma H (c): the mixed dataset is not above its values' datasets for B = 2: {mixed}, {alone}")
    h = hockey(3, mpmath.e)
    half = Fraction(-1, 2)
    mixed, mean, family = h((Fraction(-1),) * 2 + (half,) * 2), h((Fraction(-3, 4),) * (n - 1)), h((Fraction(-3, 20),) * (n - 1))
    if not mean + mpmath.mpf("1e-4") < mixed < family:
        raise DerivationFailed(f"Lemma H (c): B = 3 should put the mixed dataset between its mean's and -3/20's: {mean}, {mixed}, {family}")
    record_check("points")


def _lattice_law(values: tuple, batches: dict) -> dict:
    """{sum: probability} of the batch sum of integer ``values`` (None: absent), exact."""
    law: dict = {}
    for kept, p in batches.items():
        total = sum(values[i] for i in kept if values[i] is not None)
        law[total] = law.get(total, Fraction(0)) + p
    return {k: v for k, v in law.items() if v}


def _others_only(n: int, q: Fraction, batch: int) -> dict[frozenset, Fraction]:
    """The truncated batch of records 1..n-1 alone (the dataset without record 0)."""
    law: dict[frozenset, Fraction] = {}
    for coins in itertools.product((0, 1), repeat=n - 1):
        p = Fraction(1)
        for c in coins:
            p *= q if c else 1 - q
        drawn = [i + 1 for i in range(n - 1) if coins[i]]
        subsets = [tuple(drawn)] if len(drawn) <= batch else list(itertools.combinations(drawn, batch))
        for kept in subsets:
            law[frozenset(kept)] = law.get(frozenset(kept), Fraction(0)) + p / len(subsets)
    return law


def _multiset_output(values: tuple, n: int, draws: int) -> list[tuple]:
    """Output mixture of ``draws`` uniform draws with replacement over the n records ``values``."""
    mix: dict = {}
    for seq in itertools.product(range(n), repeat=draws):
        mean = sum(values[i] for i in seq)
        mix[mean] = mix.get(mean, Fraction(0)) + Fraction(1, n**draws)
    return [(mpmath.mpf(w.numerator) / w.denominator, mpmath.mpf(m.numerator) / m.denominator) for m, w in mix.items()]


def derive(full: bool = False) -> dict:
    """Run every check of the module docstring (step 4 on its first case and two kappas unless
    ``full``: the whole grid takes about a minute); raises DerivationFailed on a disagreement."""
    _check_coupling()
    _check_laws()
    _check_comonotone(full)
    _check_bracket(full)
    with mpmath.workdps(_DIGITS):
        _check_atoms(1)
    return {}


if __name__ == "__main__":  # python proofs/batch_sampling.py [--full]
    derive(full="--full" in sys.argv)
    print("batch_sampling: ok")
