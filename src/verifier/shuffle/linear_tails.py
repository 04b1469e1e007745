"""Σ_j Σ_a π_j(a)·(c0_j + c1_j·a)_+ for binomial laws π_j and linear terms, as rigorous LOWER and UPPER
bounds, in O(1) per row j after one pass over the rows (suffix sums).

The shuffled k-ary randomized response bounds (:mod:`verifier.shuffle.blanket`,
:mod:`verifier.shuffle.one_symbol`) are hockey-stick divergences Σ (P − E·Q)_+ whose outcomes are pairs
(j, a) with P − E·Q = c0_j + c1_j·a times a binomial mass π_j(a) of a: for each row the positive part
is a half-line of a, so the row's sum is c0·S0(t) + c1·S1(t) with the suffix sums S0(t) = Σ_{a>=t} π(a)
and S1(t) = Σ_{a>=t} a·π(a) past the root t, plus the two outcomes next to the root taken one by one.

Rounding (float64, u = 2^-53): each π_j is :func:`verifier.shuffle.binary.binomial_window`'s, within a
relative ``rel`` of the exact pmf on its window (at most τ of the mass outside each side); the suffix
sums of L nonnegative terms add γ_L (recursive summation), a·π one rounding more. The caller passes its
float coefficients with magnitudes m0 >= |c0|, m1 >= |c1| and ``eta``: the exact coefficients are within
eta·m0 and eta·m1 of the floats. Then a row's float sum is within
(e + eta + 4u)(1 + 2e)·(m0·S0 + m1·S1) of the exact one (e the sums' relative error), and each term
x(a) = c0 + c1·a within err(a) = eta·(m0 + m1·a) + 4u·(|c0| + |c1|·a). The half-line is certified by
signs: x(t − 2) + err < 0 and x(t + 1) − err > 0 with c1 − eta·m1 > 0 (the exact term increases in a);
rows where a check fails, or c1 <= 0, are summed term by term (a decreasing term is the full row's sum
plus the positive part of its negation, which increases). The mass outside the windows is the
caller's to add.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import down, up
from verifier._types import Side
from verifier.shuffle.binary import binomial_window
from verifier.shuffle.worst import UNIT_ROUNDOFF

__all__ = ["BinomialRows", "Linear", "positive_sum", "outer_window"]

_U = UNIT_ROUNDOFF


def outer_window(size: int, rho: arb, rho_c: arb, tau: float) -> tuple[int, npt.NDArray[np.float64], float]:
    """:func:`verifier.shuffle.binary.binomial_window`, with ρ = 1 (a point mass at ``size``) allowed."""
    if rho_c == 0:
        return size, np.ones(1), 0.0
    return binomial_window(size, rho, rho_c, tau)


@dataclass(frozen=True)
class Linear:
    """Coefficients of the rows' terms c0 + c1·a (arrays over the outer index), their magnitude bounds
    m0 >= |c0|, m1 >= |c1|, ``eta`` (the exact coefficients lie within eta·m of the floats) and
    ``row``: which binomial row each outer index uses."""

    c0: npt.NDArray[np.float64]
    c1: npt.NDArray[np.float64]
    m0: npt.NDArray[np.float64]
    m1: npt.NDArray[np.float64]
    eta: float
    row: npt.NDArray[np.int64]

    def negated(self) -> "Linear":
        return Linear(-self.c0, -self.c1, self.m0, self.m1, self.eta, self.row)

    def subset(self, idx: npt.NDArray[np.int64]) -> "Linear":
        return Linear(self.c0[idx], self.c1[idx], self.m0[idx], self.m1[idx], self.eta, self.row[idx])


class BinomialRows:
    """The pmfs of Bin(size_j, ρ) for the given sizes on Chernoff windows (τ outside each side), padded
    into one array, with suffix sums of π and a·π."""

    def __init__(self, sizes: list[int], rho: arb, rho_c: arb, tau: float) -> None:
        windows = [outer_window(s, rho, rho_c, tau) for s in sizes]
        width = max(len(w[1]) for w in windows)
        self.lo = np.array([w[0] for w in windows], dtype=np.int64)
        self.width = width
        self.pmf = np.zeros((len(sizes), width))
        for j, (_, pmf, _) in enumerate(windows):
            self.pmf[j, : len(pmf)] = pmf
        zero = np.zeros((len(sizes), 1))
        self.s0 = np.concatenate((np.cumsum(self.pmf[:, ::-1], axis=1)[:, ::-1], zero), axis=1)
        self.s1 = np.concatenate((np.cumsum((self.pmf * self.values(np.arange(len(sizes))))[:, ::-1], axis=1)[:, ::-1], zero), axis=1)
        rel = max(w[2] for w in windows)
        self.rel = rel  # each pmf value
        self.sum_rel = rel + (width + 2) * _U / (1 - (width + 2) * _U) + 2 * _U  # each suffix sum (of π or a·π)
        self.tau = tau


    def values(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """The values a of the given rows' windows (one row of the padded array each)."""
        return (self.lo[rows][:, None] + np.arange(self.width)[None, :]).astype(np.float64)


def _rows_direct(rows: BinomialRows, lin: Linear, idx: npt.NDArray[np.int64], side: Side) -> npt.NDArray[np.float64]:
    """Term-by-term bounds for the outer indices ``idx`` (any signs of c1)."""
    r = lin.row[idx]
    a, pmf = rows.values(r), rows.pmf[r]
    c0, c1, m0, m1 = (v[idx][:, None] for v in (lin.c0, lin.c1, lin.m0, lin.m1))
    x = c0 + c1 * a
    err = lin.eta * (m0 + m1 * a) + 4 * _U * (np.abs(c0) + np.abs(c1) * a)
    if side is Side.UPPER:
        terms = np.maximum(x + err, 0.0) * pmf * (1 + rows.rel + 2 * _U)
        return np.sum(terms, axis=1) * (1 + (rows.width + 2) * _U)
    terms = np.maximum(x - err, 0.0) * pmf * (1 - rows.rel - 2 * _U)
    return np.sum(terms, axis=1) * (1 - (rows.width + 2) * _U)


def _rows(rows: BinomialRows, lin: Linear, side: Side) -> npt.NDArray[np.float64]:
    """Per outer index, a bound on Σ_a π(a)(c0 + c1·a)_+ on ``side`` (module docstring)."""
    n_out = len(lin.c0)
    out = np.zeros(n_out)
    lo = rows.lo[lin.row]
    increasing = lin.c1 - lin.eta * lin.m1 > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(increasing, -lin.c0 / np.where(increasing, lin.c1, 1.0), 0.0)
    t = np.clip(np.ceil(root), lo, lo + rows.width).astype(np.int64)  # the window's ends settle a root outside it

    def x_err(at: npt.NDArray[np.int64], sel: npt.NDArray[np.int64] | slice = slice(None)) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The float term x(a) at a = ``at`` for the outer indices ``sel``, and its error bound."""
        af = at.astype(np.float64)
        c0, c1, m0, m1 = lin.c0[sel], lin.c1[sel], lin.m0[sel], lin.m1[sel]
        x = c0 + c1 * af
        err = lin.eta * (m0 + m1 * np.abs(af)) + 4 * _U * (np.abs(c0) + np.abs(c1) * np.abs(af))
        return x, err

    below, err_below = x_err(t - 2)
    above, err_above = x_err(t + 1)
    fast = increasing & ((below + err_below < 0) | (t - 2 < lo)) & ((above - err_above > 0) | (t + 1 >= lo + rows.width))
    idx = np.nonzero(fast)[0]
    if len(idx):
        r, tt = lin.row[idx], t[idx]
        start = np.clip(tt + 1 - rows.lo[r], 0, rows.width)
        s0, s1 = rows.s0[r, start], rows.s1[r, start]
        c0, c1, m0, m1 = lin.c0[idx], lin.c1[idx], lin.m0[idx], lin.m1[idx]
        body = c0 * s0 + c1 * s1
        e = rows.sum_rel
        err = (e + lin.eta + 4 * _U) * (1 + 2 * e) * (m0 * s0 + m1 * s1)
        total = body + err if side is Side.UPPER else body - err
        for shift in (-1, 0):  # the two outcomes next to the root
            at = tt + shift
            col = at - rows.lo[r]
            inside = (col >= 0) & (col < rows.width)
            pm = rows.pmf[r, np.clip(col, 0, rows.width - 1)] * inside
            x, xe = x_err(at, idx)
            if side is Side.UPPER:
                total = total + np.maximum(x + xe, 0.0) * pm * (1 + rows.rel + 2 * _U)
            else:
                total = total + np.maximum(x - xe, 0.0) * pm * (1 - rows.rel - 2 * _U)
        out[idx] = total + 4 * _U * np.abs(total) if side is Side.UPPER else total - 4 * _U * np.abs(total)
    slow = np.nonzero(~fast)[0]
    if len(slow):
        out[slow] = _rows_direct(rows, lin, slow, side)
    return out


def _full(rows: BinomialRows, lin: Linear, side: Side) -> npt.NDArray[np.float64]:
    """Per outer index, a bound on Σ_a π(a)(c0 + c1·a) over the whole window (no positive part)."""
    s0, s1 = rows.s0[lin.row, 0], rows.s1[lin.row, 0]
    e = rows.sum_rel
    err = (e + lin.eta + 4 * _U) * (1 + 2 * e) * (lin.m0 * s0 + lin.m1 * s1)
    body = lin.c0 * s0 + lin.c1 * s1
    return body + err + 4 * _U * np.abs(body) if side is Side.UPPER else body - err - 4 * _U * np.abs(body)


def positive_sum(rows: BinomialRows, lin: Linear, side: Side) -> float:
    """A bound on Σ_j Σ_a π_j(a)·(c0_j + c1_j·a)_+ on ``side``, over the rows' windows (module docstring).
    A row whose term decreases in a is Σ π·x + Σ π·(−x)_+, the second increasing."""
    decreasing = lin.c1 + lin.eta * lin.m1 < 0
    per = np.zeros(len(lin.c0))
    inc, dec = np.nonzero(~decreasing)[0], np.nonzero(decreasing)[0]
    if len(inc):
        per[inc] = _rows(rows, lin.subset(inc), side)
    if len(dec):
        sub = lin.subset(dec)
        per[dec] = _full(rows, sub, side) + _rows(rows, sub.negated(), side)
    per = np.maximum(per, 0.0)
    total = float(np.sum(per))
    if side is Side.UPPER:
        return float(up(total * (1 + (len(per) + 2) * _U)))
    return max(0.0, float(down(total * (1 - (len(per) + 2) * _U))))  # down(0) is below 0; δ is not
