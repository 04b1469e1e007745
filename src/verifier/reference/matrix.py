"""Slow, trusted twins of the matrix-mechanism Rényi accountant (Schuchardt & Kalinin).

- :func:`tuple_sum_remove`: Lemma 3.2, eq. (5) with the sign of the last term corrected (notes §2.3):
  the literal sum over all (r_1..r_α) ∈ [b]^α, in mpmath (tiny b and α only);
- :func:`count_sum_remove`: the same sum grouped by the counts r_j = #{i : tuple_i = j} (each
  count vector stands for α!/Π r_j! tuples with the same exponent), in mpmath: C(α + b − 1, b − 1)
  terms instead of b^α, so orders up to 8 at a dozen batches stay cheap;
- :func:`dp_log_sums`: Algorithm 1 as printed (with the line-28 correction of notes §6 item 6),
  plain Python dictionaries over (partial count, suffix) states — the twin of the kernel
  :mod:`verifier._fast.matrix_dp`; it is exact only for b >= 3p − 3 (notes §2.4), like the kernel.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import numpy.typing as npt

__all__ = ["tuple_sum_remove", "count_sum_remove", "dp_log_sums"]


def tuple_sum_remove(gram: npt.ArrayLike, sigma: float, alpha: int, dps: int = 40) -> float:
    """R_α(P̂‖Q̂) = (1/(α−1)) log Σ_{r ∈ [b]^α} exp(Σ_{j1≠j2} G_{r_j1 r_j2}/(2σ²)) − α log b/(α−1)
    (Lemma 3.2, eq. 5 corrected), summed literally."""
    g = np.asarray(gram, dtype=float)
    b = g.shape[0]
    with mpmath.workdps(dps):
        s2 = mpmath.mpf(sigma) ** 2
        total = mpmath.mpf(0)
        for r in itertools.product(range(b), repeat=alpha):
            acc = mpmath.mpf(0)
            for j1 in range(alpha):
                for j2 in range(alpha):
                    if j1 != j2:
                        acc += mpmath.mpf(float(g[r[j1], r[j2]]))
            total += mpmath.exp(acc / (2 * s2))
        return float((mpmath.log(total) - alpha * mpmath.log(b)) / (alpha - 1))


def _count_vectors(total: int, slots: int):
    if slots == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _count_vectors(total - first, slots - 1):
            yield (first,) + rest


def count_sum_remove(gamma: npt.ArrayLike, alpha: int, dps: int = 40) -> mpmath.mpf:
    """R_α(P̂‖Q̂) of Lemma 3.2 (eq. 5 corrected) for the scaled Gram matrix Γ = G/σ² (taken as
    exact), at ``dps`` digits: the tuple sum Σ_{t ∈ [b]^α} exp(Σ_{i≠i'} Γ_{t_i t_i'}/2) grouped by
    counts, Σ_r α!/Π_j r_j! · exp(Σ_j Γ_jj r_j(r_j − 1)/2 + Σ_{j<j'} Γ_jj' r_j r_j')."""
    g = np.asarray(gamma, dtype=float)
    b = g.shape[0]
    with mpmath.workdps(dps):
        entries = [[mpmath.mpf(float(g[i, j])) for j in range(b)] for i in range(b)]
        fact = [mpmath.factorial(k) for k in range(alpha + 1)]
        total = mpmath.mpf(0)
        for r in _count_vectors(alpha, b):
            support = [j for j in range(b) if r[j]]
            exponent = mpmath.mpf(0)
            weight = fact[alpha]
            for x, j in enumerate(support):
                weight /= fact[r[j]]
                exponent += entries[j][j] * (r[j] * (r[j] - 1) // 2)
                for jj in support[:x]:
                    exponent += entries[j][jj] * (r[j] * r[jj])
            total += weight * mpmath.exp(exponent)
        return (mpmath.log(total) - alpha * mpmath.log(b)) / (alpha - 1)


def dp_log_sums(h: npt.ArrayLike, bands: int, amax: int) -> list[float]:
    """log S_m, m = 0..amax, of Algorithm 1 on the (already truncated, σ²-scaled) matrix ``h`` with
    bandwidth ``bands``; see the kernel's docstring for S_m."""
    h = np.asarray(h, dtype=float)
    b, p = h.shape[0], bands
    L = p - 1
    lf = [math.lgamma(t + 1) for t in range(amax + 1)]
    out = [-math.inf] * (amax + 1)

    def lse(x: float, y: float) -> float:
        if x == -math.inf:
            return y
        if y == -math.inf:
            return x
        top = max(x, y)
        return top + math.log(math.exp(x - top) + math.exp(y - top))

    for prefix in itertools.product(range(amax + 1), repeat=L):
        if sum(prefix) > amax:
            continue
        lw = sum(h[i, i] * l * (l - 1) / 2 - lf[l] for i, l in enumerate(prefix))
        lw += sum(h[i, j] * prefix[i] * prefix[j] for i in range(L) for j in range(i))
        states = {(sum(prefix), tuple(prefix)): lw}
        for k in range(L, b):
            new: dict = {}
            for (m, r), w in states.items():
                s1 = sum(h[k, k - L + u] * r[u] for u in range(L))
                for t in range(amax - m + 1):
                    key = (m + t, (r[1:] + (t,)) if L else ())
                    new[key] = lse(new.get(key, -math.inf), w + h[k, k] * t * (t - 1) / 2 + s1 * t - lf[t])
            states = new
        for (m, r), w in states.items():
            glue = sum(h[i, b - 1 - j] * prefix[i] * r[L - 1 - j] for i in range(L) for j in range(L))
            out[m] = lse(out[m], w + glue)
    return out
