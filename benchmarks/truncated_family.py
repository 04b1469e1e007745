"""Truncated Poisson where truncation binds (n = 1000, q = 0.05, B = 40, σ = 2, C = 1, 10 steps,
add/remove, δ = 1e-5): which end of verifier's bracket is loose, measured in FLOAT (an experiment,
NOT a bound: float loss laws on a grid of 1e-3 and numpy convolutions).

    .venv/bin/python benchmarks/truncated_family.py [--out FILE.md]

Rows, with the record first (REMOVE):

- instances of the real mechanism in one dimension, the record at +C and every other record at v,
  the same pair at all 10 steps (v = −C is verifier's truncated-attained LOWER bound), and 10 steps
  mixing v = −C with v = −C/2;
- instances in the plane: the record at C(cos θ, sin θ) and every other record at −C·e_1 (θ = 0 is
  the collinear instance; verifier's truncated-attained also bounds θ = π/4 rigorously);
- the two-label UPPER bound (the count M <= B − 1 at rate q with shift C, M >= B at the averaged
  rate q_c with shift 2C), and its M >= B label alone;
- the pair that reveals the count M only below B − j and hides it from B − j on, with every other
  record at −C (a chain of j + 1 points, j = 0 is the two-label bound). For j = 1 it is proven to
  be the worst placement (verifier.pairs.truncated_edge, Lemma C of proofs/batch_sampling.py) and
  verifier uses it. For j >= 2 it would be an UPPER bound only if the collinear chain were the worst
  chain. proofs/batch_sampling.py shows that the collinear instance is not the worst at larger ε on
  tiny cases, so those rows are estimates only;
- the same chains with every other record at −(cos π/4, sin π/4) (for j >= 8 they lie above the
  collinear ones, as the instance in the plane does);
- for j = 2, the bound that also reveals the values of the next two other records drawn (joint
  convexity over them: the worst placement on a grid of angles π/4 apart, unit norms), and the one
  that reveals the two values but not their order (the order is uniform given the pair).

A second table gives verifier's rigorous ε(1e-5) bracket in each direction, under add/remove and
replace-one, and its width (upper − lower)/lower.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from pathlib import Path

import numpy as np
from scipy.special import logsumexp
from scipy.stats import binom

from verifier._types import Quantity
from verifier.certify.claim import parse_claim
from verifier.certify.portfolio import best_bracket, collect_bounds

N, Q, B, SIGMA, STEPS, DELTA = 1000, 0.05, 40, 2.0, 10, 1e-5
STEP = 1e-3  # loss grid
COUNTS = binom.pmf(np.arange(N), N - 1, Q)  # law of the other records' count M
FULL = COUNTS[B:].sum()
RATE_FULL = Q * sum(COUNTS[m] * B / (m + 1) for m in range(B, N)) / FULL  # q_c


def loss_law(p: dict[float, float], q: dict[float, float]) -> tuple[np.ndarray, int]:
    """The law of the loss log(p/q)(y), y ~ P, for one-dimensional Gaussian mixtures {mean: weight},
    on the grid STEP·k: (masses, lowest k)."""
    means = np.array(sorted(set(p) | set(q)))
    y = np.linspace(means.min() - 14 * SIGMA, means.max() + 14 * SIGMA, 200_001)

    def log_density(mix: dict[float, float]) -> np.ndarray:
        m = np.array(list(mix))
        w = np.array(list(mix.values()))
        return logsumexp(-((y[:, None] - m) ** 2) / (2 * SIGMA**2) + np.log(w), axis=1)

    lp = log_density(p)
    index = np.round((lp - log_density(q)) / STEP).astype(int)
    base = int(index.min())
    masses = np.bincount(index - base, weights=np.exp(lp - lp.max()))
    return masses / masses.sum(), base


def epsilon(laws: list[tuple[np.ndarray, int]]) -> float:
    """ε(δ) of the composition of the given one-step loss laws (bisection on δ(ε) = E(1 − e^{ε−L})_+)."""
    total, base = np.array([1.0]), 0
    for masses, low in laws:
        size = len(total) + len(masses) - 1
        n = 1 << (size - 1).bit_length()
        total = np.maximum(np.fft.irfft(np.fft.rfft(total, n) * np.fft.rfft(masses, n), n)[:size], 0.0)
        base += low
    loss = (np.arange(len(total)) + base) * STEP

    def delta(e: float) -> float:
        above = loss > e
        return float(np.sum(total[above] * -np.expm1(e - loss[above])))

    lo, hi = 0.0, 20.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta(mid) > DELTA else (lo, mid)
    return hi


def _put(mix: dict[float, float], mean: float, weight: float) -> None:
    key = round(mean, 9)
    mix[key] = mix.get(key, 0.0) + weight


def instance(v: float) -> tuple[dict, dict]:
    """The record at +1 (present, then absent) and every other record at v: batch sums of the real mechanism."""
    p: dict[float, float] = {}
    q: dict[float, float] = {}
    for m, w in enumerate(COUNTS):
        if w < 1e-30:
            continue
        if m <= B - 1:
            _put(p, m * v, w * (1 - Q))
            _put(p, m * v + 1, w * Q)
            _put(q, m * v, w)
        else:
            kept = Q * B / (m + 1)
            _put(p, (B - 1) * v + 1, w * kept)
            _put(p, B * v, w * (1 - kept))
            _put(q, B * v, w)
    return p, q


def plane_law(p: dict[tuple[float, float], float], q: dict[tuple[float, float], float], h: float = 0.04) -> tuple[np.ndarray, int]:
    """The loss law of Gaussian mixtures in the plane {(u, w): weight} (REMOVE), on the grid STEP·k:
    the densities on a grid of cells of side ``h``."""
    means = np.array(list(p) + list(q))
    u = np.arange(means[:, 0].min() - 9 * SIGMA, means[:, 0].max() + 9 * SIGMA, h)
    v = np.arange(means[:, 1].min() - 9 * SIGMA, means[:, 1].max() + 9 * SIGMA, h)

    def density(mix: dict[tuple[float, float], float]) -> np.ndarray:
        rows: dict[float, np.ndarray] = {}  # the mixture's u-part on each line w = const
        for (mu, mw), weight in mix.items():
            rows[mw] = rows.get(mw, 0.0) + weight * np.exp(-((u - mu) ** 2) / (2 * SIGMA**2))
        return sum(np.outer(row, np.exp(-((v - mw) ** 2) / (2 * SIGMA**2))) for mw, row in rows.items())

    dp, dq = density(p), density(q)
    keep = (dp > 1e-300) & (dq > 1e-300)
    index = np.round(np.log(dp[keep] / dq[keep]) / STEP).astype(int)
    base = int(index.min())
    masses = np.bincount(index - base, weights=dp[keep])
    return masses / masses.sum(), base


def _at(mix: dict, point: np.ndarray, weight: float) -> None:
    key = (round(float(point[0]), 9), round(float(point[1]), 9))
    mix[key] = mix.get(key, 0.0) + weight


def plane_instance(theta: float) -> tuple[dict, dict]:
    """The record at (cos θ, sin θ), every other record at (−1, 0): batch sums of the real mechanism."""
    x, o = np.array([np.cos(theta), np.sin(theta)]), np.array([-1.0, 0.0])
    p: dict = {}
    q: dict = {}
    for m, w in enumerate(COUNTS):
        if w < 1e-30:
            continue
        kept = Q if m <= B - 1 else Q * B / (m + 1)
        _at(p, min(m, B - 1) * o + x, w * kept)
        _at(p, min(m, B) * o, w * (1 - kept))
        _at(q, min(m, B) * o, w)
    return p, q


def plane_chain(j: int, x: np.ndarray, others: list[np.ndarray]) -> tuple[float, dict, dict]:
    """(P(M >= B − j), the pair given M >= B − j with the count hidden): the record at x and the
    next j other records drawn at ``others`` (in that order), their partial sums S_k."""
    weight = COUNTS[B - j:].sum()
    sums = [np.zeros(2)]
    for r in others:
        sums.append(sums[-1] + r)
    p: dict = {}
    q: dict = {}
    for k in range(j + 1):
        pi = (COUNTS[B - j + k] if k < j else FULL) / weight
        rate, landing = (Q, sums[k] + x) if k < j else (RATE_FULL, sums[k - 1] + x)
        _at(q, sums[k], pi)
        _at(p, sums[k], pi * (1 - rate))
        _at(p, landing, pi * rate)
    return weight, p, q


def chain(j: int) -> tuple[float, dict, dict]:
    """(P(M >= B − j), the pair given M >= B − j with the count hidden, the other records at −1)."""
    weight = COUNTS[B - j:].sum()
    p: dict[float, float] = {}
    q: dict[float, float] = {}
    for k in range(j + 1):
        pi = (COUNTS[B - j + k] if k < j else FULL) / weight
        _put(q, -k, pi)
        rate, shift = (Q, 1) if k < j else (RATE_FULL, 2)
        _put(p, -k, pi * (1 - rate))
        _put(p, -k + shift, pi * rate)
    return weight, p, q


def _weighted(chain_pair: tuple[float, dict, dict]) -> tuple[float, tuple[np.ndarray, int]]:
    weight, p, q = chain_pair
    return weight, plane_law(p, q)


def _half(a: dict, b: dict) -> dict:
    """The even mixture of two mixtures."""
    out: dict = {}
    for mix in (a, b):
        for key, w in mix.items():
            out[key] = out.get(key, 0.0) + w / 2
    return out


def labelled(weight: float, pair: tuple[np.ndarray, int], rest: tuple[np.ndarray, int]) -> tuple[np.ndarray, int]:
    """The loss law of a two-label mixture: ``pair`` with probability ``weight``, ``rest`` otherwise."""
    (a, la), (b, lb) = pair, rest
    low = min(la, lb)
    out = np.zeros(max(la + len(a), lb + len(b)) - low)
    out[la - low: la - low + len(a)] += weight * a
    out[lb - low: lb - low + len(b)] += (1 - weight) * b
    return out, low


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    start = time.process_time()
    lines = ["| pair (REMOVE, FLOAT, not a bound) | ε(1e-5) over 10 steps |", "|---|---|"]
    laws = {v: loss_law(*instance(v)) for v in (-1.0, -0.9, -0.75, -0.5, 0.0)}
    for v, law in laws.items():
        lines.append(f"| instance, other records at {v:g} | {epsilon([law] * STEPS):.4f} |")
    lines.append(f"| instance, 8 steps at −1 and 2 at −0.5 | {epsilon([laws[-1.0]] * 8 + [laws[-0.5]] * 2):.4f} |")
    for turn in (0.1, 0.2, 0.25, 0.26, 0.3, 0.4):
        lines.append(f"| instance in the plane, θ = {turn:g}π | {epsilon([plane_law(*plane_instance(turn * np.pi))] * STEPS):.4f} |")
    poisson = loss_law({0.0: 1 - Q, 1.0: Q}, {0.0: 1.0})
    swapped = loss_law({0.0: 1 - RATE_FULL, 2.0: RATE_FULL}, {0.0: 1.0})
    lines.append(f"| two-label UPPER bound | {epsilon([labelled(FULL, swapped, poisson)] * STEPS):.4f} |")
    lines.append(f"| its M >= B label alone | {epsilon([swapped] * STEPS):.4f} |")
    for j in (1, 2, 4, 8, 16):
        weight, p, q = chain(j)
        status = "proven, verifier's UPPER bound for ε >= 0" if j == 1 else "estimate"
        lines.append(f"| count hidden from M >= B − {j}, collinear ({status}) | {epsilon([labelled(weight, loss_law(p, q), poisson)] * STEPS):.4f} |")
    x = np.array([1.0, 0.0])
    toward = [np.array([np.cos(a), np.sin(a)]) for a in np.arange(8) * np.pi / 4]
    for j in (2, 4, 8, 16):
        weight, p, q = plane_chain(j, x, [-toward[1]] * j)
        lines.append(f"| count hidden from M >= B − {j}, others at −(cos π/4, sin π/4) (estimate) | {epsilon([labelled(weight, plane_law(p, q), poisson)] * STEPS):.4f} |")
    revealed = max((epsilon([labelled(*_weighted(plane_chain(2, x, [a, b])), poisson)] * STEPS), i, k)
                   for i, a in enumerate(toward) for k, b in enumerate(toward))
    lines.append(f"| count hidden from M >= B − 2, the next two others' values revealed, worst on the π/4 grid "
                 f"(at {revealed[1]}π/4, {revealed[2]}π/4) | {revealed[0]:.4f} |")
    unordered = []
    for i, k in itertools.combinations_with_replacement(range(8), 2):
        (weight, p1, q1), (_, p2, q2) = plane_chain(2, x, [toward[i], toward[k]]), plane_chain(2, x, [toward[k], toward[i]])
        pair = plane_law(_half(p1, p2), _half(q1, q2))
        unordered.append((epsilon([labelled(weight, pair, poisson)] * STEPS), i, k))
    worst = max(unordered)
    lines.append(f"| count hidden from M >= B − 2, the two others' values revealed but not their order, worst on the π/4 grid "
                 f"(at {worst[1]}π/4, {worst[2]}π/4) | {worst[0]:.4f} |")
    lines += ["", "| verifier's rigorous ε(1e-5) bracket | direction | bracket | width |", "|---|---|---|---|"]
    for relation in ("add_or_remove", "replace_one"):
        claim = parse_claim({"mechanism": {"name": "gaussian", "sigma": SIGMA}, "neighboring": relation, "epsilon": 1.0, "delta": DELTA,
                             "scheme": {"name": "truncated_poisson", "dataset_size": N, "rate": Q, "max_batch": B, "steps": STEPS}})
        collected = collect_bounds(claim.model, Quantity.EPSILON, DELTA, claim.directions)
        for direction in claim.directions:
            bracket = best_bracket(collected.bounds, direction)
            lines.append(f"| {relation} | {direction.value} | [{bracket.lower:.5f}, {bracket.upper:.5f}] | "
                         f"{100 * (bracket.upper - bracket.lower) / bracket.lower:.1f}% |")
    lines.append("")
    lines.append(f"CPU {time.process_time() - start:.1f} s; load average at the end: {os.getloadavg()[0]:.1f}")
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
