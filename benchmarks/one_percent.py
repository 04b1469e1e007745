"""Claims 1% from the truth (issue 33, Done-when 1): how many does ``verifier certify`` decide?

    .venv/bin/python benchmarks/one_percent.py [--reduced] [--out FILE.md] [--time-budget S]

The truths are computed here, outside verifier (this file imports only mpmath, numpy and scipy for
them), by closed forms, binomial sums, 1-D quadrature and loss-law convolution on a fine grid:

- Gaussian, single or T-fold: δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ), μ = Δ√T/σ (Balle & Wang).
- Laplace, one step: 1 − e^{(ε−ε0)/2} on |ε| < ε0 (direct integration). T-fold and Poisson-sampled
  Laplace and Poisson-sampled Gaussian (T <= 3, ADD and REMOVE): the one-step privacy-loss law
  under the first distribution, from its exact CDF (scipy), binned on a grid of width h and
  convolved T times (scipy FFT); δ(ε) = E[(1 − e^{ε−L})_+] grows with L, so rounding every step's
  loss to the bin's upper (lower) end, with the mass beyond the grid at +∞ (dropped), gives an upper
  (lower) value: the truth is their midpoint and the table reports the largest relative half-width.
- Randomized response (k-ary, T-fold): the multinomial sum over output types in mpmath; (ε0, δ0)-DP
  steps: KOV, δ_T(ε) = 1 − (1 − δ0)^T (1 − δ_RR,T(ε)) with binary RR at ε0 (Kairouz, Oh & Viswanath
  2015, Thm 3.3; Steinke 2022, §7).
- Random allocation, t = 2 steps, one of them (Gaussian): a 1-D mpmath quadrature over y1 whose
  inner integral over y2 is a closed form (the likelihood ratio is monotone in y2), both directions.
- zCDP: ρ = Δ²/(2σ²) (Gaussian), and for Laplace and randomized response max over a dense mpmath
  grid of orders of D_α/α together with the KL divergence (its limit at α → 1).

Claims: for each case and direction, (ε(δ)·(1 ± 1%), δ) and (ε, δ(ε)·(1 ± 1%)); zCDP claims ρ(1 ± 1%).
A verdict is wrong if CERTIFIED below the truth or VIOLATED above it. Each claim is decided in this
process by ``verifier.cli.main`` (``certify … --json``), with ``--time-budget``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import mpmath as mp
import numpy as np
from scipy import signal, special

DPS = 30


# ---- truths (no verifier code) --------------------------------------------------------------


def gaussian_delta(mu: float):
    def delta(eps: float) -> float:
        with mp.workdps(DPS):
            m, e = mp.mpf(mu), mp.mpf(eps)
            return float(mp.ncdf(m / 2 - e / m) - mp.exp(e) * mp.ncdf(-m / 2 - e / m))

    return delta


def laplace_delta(eps0: float):
    def delta(eps: float) -> float:
        if eps >= eps0:
            return 0.0
        if eps <= -eps0:
            return -math.expm1(eps)
        return -math.expm1((eps - eps0) / 2)

    return delta


def rr_delta(eps0: float, k: int, times: int):
    def delta(eps: float) -> float:
        with mp.workdps(DPS):
            big = mp.e ** mp.mpf(eps0)
            z = big + k - 1
            kappa = mp.e ** mp.mpf(eps)
            total = mp.mpf(0)
            for a in range(times + 1):
                for b in range(times + 1 - a):
                    r = times - a - b
                    if r and k == 2:
                        continue
                    count = mp.factorial(times) / (mp.factorial(a) * mp.factorial(b) * mp.factorial(r))
                    p = count * (1 / z) ** a * (big / z) ** b * ((k - 2) / z) ** r
                    q = count * (big / z) ** a * (1 / z) ** b * ((k - 2) / z) ** r
                    total += max(p - kappa * q, 0)
            return float(total)

    return delta


def kov_delta(eps0: float, delta0: float, times: int):
    rr = rr_delta(eps0, 2, times)

    def delta(eps: float) -> float:
        keep = (1 - delta0) ** times
        return 1 - keep * (1 - rr(eps))

    return delta


def allocation2_delta(sigma: float, add: bool):
    """Random allocation of one of t = 2 Gaussian steps (σ, Δ = 1). REMOVE: P = ½[N(e1) + N(e2)] vs
    Q = N(0) in R²; ADD the other way round. With a_i = e^{(y_i − ½)/σ²}, P/Q = (a_1 + a_2)/2."""
    def delta(eps: float) -> float:
        with mp.workdps(20):
            s, kappa = mp.mpf(sigma), mp.e ** mp.mpf(eps)
            phi = lambda y, m=0: mp.npdf(y, m, s)
            tail = lambda t, m=0: mp.ncdf(-(t - m) / s)  # P(Y > t), Y ~ N(m, σ²)
            head = lambda t, m=0: mp.ncdf((t - m) / s)

            def inner(y1):
                a1 = mp.e ** ((y1 - mp.mpf(0.5)) / s**2)
                # P(y1, y2) = ½[φ(y1 − 1)φ(y2) + φ(y1)φ(y2 − 1)], Q = φ(y1)φ(y2)
                if not add:  # (P − κQ)_+ : a2 > 2κ − a1  ⇔  y2 > t
                    bound = 2 * kappa - a1
                    if bound <= 0:
                        return (phi(y1, 1) + phi(y1)) / 2 - kappa * phi(y1)
                    t = mp.mpf(0.5) + s**2 * mp.log(bound)
                    return (phi(y1, 1) * tail(t) + phi(y1) * tail(t, 1)) / 2 - kappa * phi(y1) * tail(t)
                bound = 2 / kappa - a1  # (Q − κP)_+ : a2 < 2/κ − a1
                if bound <= 0:
                    return mp.mpf(0)
                t = mp.mpf(0.5) + s**2 * mp.log(bound)
                return phi(y1) * head(t) - kappa * (phi(y1, 1) * head(t) + phi(y1) * head(t, 1)) / 2

            return float(mp.quad(inner, [-mp.inf, -2, 0, 0.5, 1, 3, mp.inf]))

    return delta


#: Bins of a one-step loss law (its grid width is the span of the law over this).
BINS = 2**20


@dataclass
class LossLaw:
    """One step's privacy-loss law under the first distribution: a vectorised CDF P(L <= x) and a
    span [lo, hi] holding all but a negligible mass (what lies outside is rounded as below)."""

    cdf: object  # ndarray -> ndarray
    lo: float
    hi: float

    @property
    def h(self) -> float:
        return (self.hi - self.lo) / BINS

    def binned(self, upper: bool) -> tuple[np.ndarray, float]:
        """(masses on the grid lo + i·h, mass at +∞): every cell's mass moves to its upper end
        (``upper``) or its lower end; mass above hi goes to +∞ (upper) or to hi; mass below lo to lo
        (upper) or is dropped (it only lowers δ)."""
        edges = self.lo + self.h * np.arange(BINS + 1)
        values = np.asarray(self.cdf(edges), dtype=float)
        cells = np.diff(values)
        grid = np.zeros(edges.size)
        above = 1.0 - values[-1]
        if upper:
            grid[1:] += cells
            grid[0] += values[0]
            return grid, above
        grid[:-1] += cells
        grid[-1] += above
        return grid, 0.0


def convolved_delta(law: LossLaw, times: int):
    """δ(ε) of T steps from the binned law: (midpoint of the rounded-up and rounded-down values,
    half-width); the truth lies within the half-width up to float error."""
    runs = {}
    for upper in (True, False):
        grid, infinite = law.binned(upper)
        total, inf_total = grid, infinite
        for _ in range(times - 1):
            total = np.clip(signal.fftconvolve(total, grid), 0, None)
            inf_total = 1 - (1 - inf_total) * (1 - infinite)
        losses = times * law.lo + law.h * np.arange(total.size)
        runs[upper] = (losses, total, inf_total)

    def delta(eps: float) -> tuple[float, float]:
        vals = []
        for upper in (True, False):
            losses, total, inf_total = runs[upper]
            keep = losses > eps
            vals.append(float(np.sum(total[keep] * -np.expm1(eps - losses[keep]))) + inf_total)
        return float(0.5 * (vals[0] + vals[1])), float(0.5 * abs(vals[0] - vals[1]))

    return delta


def laplace_law(eps0: float) -> LossLaw:
    """Laplace step, loss under P: atoms e^{−ε0}/2 at −ε0 and 1/2 at ε0, CDF e^{(x−ε0)/2}/2 between."""
    def cdf(x):
        x = np.asarray(x)
        inner = 0.5 * np.exp((np.clip(x, -eps0, eps0) - eps0) / 2)
        return np.where(x < -eps0, 0.0, np.where(x >= eps0, 1.0, inner))

    pad = eps0 * 1e-3  # atoms strictly inside the span
    return LossLaw(cdf, -eps0 - pad, eps0 + pad)


def poisson_law(base: str, param: float, rate: float, add: bool) -> LossLaw:
    """One Poisson step (rate λ) of a Gaussian (σ = param, Δ = 1) or Laplace (b = param, Δ = 1)
    mechanism. REMOVE: first distribution M = λP + (1−λ)Q, loss ℓ = ln(1 − λ + λe^{ℓ0}); ADD: first
    distribution Q, loss −ℓ. ℓ0 = ln(P/Q)(y) is nondecreasing in y, so the law comes from y-thresholds."""
    lam = rate

    def base_cdfs(t):  # P(ℓ0 <= t) under P and under Q
        if base == "gaussian":
            s = param  # ℓ0(y) = (y − ½)/s²
            y = t * s * s + 0.5
            return special.ndtr((y - 1) / s), special.ndtr(y / s)
        e0 = 1.0 / param
        tc = np.clip(t, -e0, e0)
        under_p = np.where(t < -e0, 0.0, np.where(t >= e0, 1.0, 0.5 * np.exp((tc - e0) / 2)))
        under_q = np.where(t < -e0, 0.0, np.where(t >= e0, 1.0, 1 - 0.5 * np.exp(-(tc + e0) / 2)))
        return under_p, under_q

    def cdf_remove(x, under_m, inclusive=True):  # P(ℓ <= x) ⇔ ℓ0 <= ln((e^x − 1 + λ)/λ)
        arg = np.expm1(np.asarray(x, dtype=float)) / lam
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(arg > -1, np.log1p(np.maximum(arg, -1 + 1e-300)), -np.inf)
        if base == "laplace" and not inclusive:  # the atoms of ℓ0 at ±ε0
            t = np.nextafter(t, -np.inf)
        under_p, under_q = base_cdfs(t)
        out = lam * under_p + (1 - lam) * under_q if under_m else under_q
        return np.where(arg > -1, out, 0.0)

    if base == "gaussian":
        top, bottom = (9.0 * param + 1.0) / param**2, -9.0 / param  # ℓ0 of y in [−9σ, 1 + 9σ]: all but ~1e-19
        span = (math.log1p(lam * math.expm1(bottom)), math.log1p(lam * math.expm1(top)))
        span = (span[0], min(span[1], 60.0))
    else:
        e0 = 1.0 / param
        span = (math.log1p(lam * math.expm1(-e0)), math.log1p(lam * math.expm1(e0)))
    pad = (span[1] - span[0]) * 1e-3
    if not add:
        return LossLaw(lambda x: cdf_remove(x, True), span[0] - pad, span[1] + pad)
    # P_Q(−ℓ <= x) = P_Q(ℓ >= −x) = 1 − P_Q(ℓ < −x)
    return LossLaw(lambda x: 1.0 - cdf_remove(-np.asarray(x), False, inclusive=False), -span[1] - pad, -span[0] + pad)


def renyi_sup(masses_or_laplace) -> float:
    """max(KL, max over a dense grid of α of D_α/α) for Laplace (b, Δ = 1) or RR (ε0, k)."""
    kind, a, b = masses_or_laplace
    with mp.workdps(DPS):
        if kind == "laplace":
            e0 = 1 / mp.mpf(a)
            d = lambda al: mp.log(al / (2 * al - 1) * mp.e ** ((al - 1) * e0) + (al - 1) / (2 * al - 1) * mp.e ** (-al * e0)) / (al - 1)
            kl = e0 + mp.e ** (-e0) - 1
        else:
            e0, k = mp.mpf(a), b
            z = mp.e**e0 + k - 1
            d = lambda al: mp.log((mp.e ** (al * e0) + mp.e ** ((1 - al) * e0) + k - 2) / z) / (al - 1)
            kl = (mp.e**e0 - 1) * e0 / z
        grid = [1 + mp.mpf(10) ** (x / 40) for x in range(-240, 121)]
        return float(max([kl] + [d(al) / al for al in grid]))


# ---- the grid ----------------------------------------------------------------------------------


@dataclass
class Case:
    label: str
    flags: list
    direction: str  # add | remove | both
    truth: object  # eps -> delta (float) or -> (delta, half-width)
    deltas: tuple = (1e-5,)
    eps_range: tuple = (0.0, 60.0)
    rho: float | None = None
    widths: list = field(default_factory=list)


def _value(case: Case, eps: float) -> float:
    got = case.truth(eps)
    if isinstance(got, tuple):
        case.widths.append(got[1] / got[0] if got[0] > 0 else 0.0)
        return got[0]
    return got


def _epsilon_of(case: Case, delta: float) -> float:
    lo, hi = case.eps_range
    if _value(case, lo) <= delta:
        raise ValueError(f"{case.label}: δ({lo}) <= {delta}")
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _value(case, mid) > delta else (lo, mid)
    return 0.5 * (lo + hi)


def cases(reduced: bool) -> list[Case]:
    g = ["--mechanism", "gaussian"]
    out: list[Case] = []
    for sigma, times in ((0.5, 1), (1.0, 1), (4.0, 1), (2.0, 10), (5.0, 100)) if not reduced else ((1.0, 1),):
        flags = [*g, "--sigma", repr(sigma)] + (["--scheme", "composed", "--times", str(times)] if times > 1 else [])
        out.append(Case(f"gaussian σ={sigma} T={times}", flags, "both", gaussian_delta(math.sqrt(times) / sigma), (1e-5, 1e-8)))
    for scale in ((0.5, 1.0, 2.0) if not reduced else (1.0,)):
        out.append(Case(f"laplace b={scale}", ["--mechanism", "laplace", "--scale", repr(scale)], "both", laplace_delta(1 / scale), (1e-3, 1e-5), (-1.0, 1 / scale)))
    lap = [(1.0, 0.5, 5), (1.0, 0.7, 2), (2.0, 1.0, 10)] if not reduced else [(1.0, 0.7, 2)]
    for scale, sens, times in lap:
        law = laplace_law(sens / scale)
        out.append(Case(f"laplace b={scale} Δ={sens} T={times}", ["--mechanism", "laplace", "--scale", repr(scale), "--sensitivity", repr(sens), "--scheme", "composed", "--times", str(times)], "both", convolved_delta(law, times), (1e-4,), (0.0, times * sens / scale)))
    rr = [(0.3, 2, 20), (1.0, 2, 5), (0.5, 4, 10), (2.0, 3, 3)] if not reduced else [(0.3, 2, 20)]
    for eps0, k, times in rr:
        out.append(Case(f"rr ε0={eps0} k={k} T={times}", ["--mechanism", "rr", "--epsilon0", repr(eps0), "--k", str(k), "--scheme", "composed", "--times", str(times)], "both", rr_delta(eps0, k, times), (1e-3, 1e-6), (0.0, times * eps0)))
    if not reduced:
        for eps0, delta0, times in ((0.5, 1e-6, 10), (0.1, 1e-7, 50)):
            out.append(Case(f"approx_dp ε0={eps0} δ0={delta0} T={times}", ["--mechanism", "approx_dp", "--epsilon0", repr(eps0), "--delta0", repr(delta0), "--scheme", "composed", "--times", str(times)], "both", kov_delta(eps0, delta0, times), (1e-4,), (0.0, times * eps0)))
    poisson = [("gaussian", 1.0, 0.1, t) for t in (1, 2, 3)] + [("gaussian", 2.0, 0.01, t) for t in (1, 3)] + [("laplace", 1.0, 0.1, t) for t in (1, 2, 3)]
    if reduced:
        poisson = [("gaussian", 1.0, 0.1, 1), ("laplace", 1.0, 0.1, 2)]
    for base, param, rate, times in poisson:
        for direction in ("add", "remove"):
            law = poisson_law(base, param, rate, direction == "add")
            mech = ["--mechanism", "gaussian", "--sigma", repr(param)] if base == "gaussian" else ["--mechanism", "laplace", "--scale", repr(param)]
            out.append(Case(f"poisson {base} {param} q={rate} T={times}", [*mech, "--scheme", "poisson", "--rate", repr(rate), "--steps", str(times)], direction, convolved_delta(law, times), (1e-5,), (0.0, 20.0)))
    for sigma in ((1.0, 2.0) if not reduced else (1.0,)):
        for direction in ("add", "remove"):
            out.append(Case(f"allocation σ={sigma} t=2", ["--mechanism", "gaussian", "--sigma", repr(sigma), "--scheme", "allocation", "--steps", "2"], direction, allocation2_delta(sigma, direction == "add"), (1e-5,), (0.0, 20.0)))
    zc = [("gaussian", 1.0), ("gaussian", 2.0), ("laplace", 1.0), ("laplace", 10.0), ("rr", 0.3), ("rr", 1.0)] if not reduced else [("laplace", 1.0)]
    for kind, param in zc:
        if kind == "gaussian":
            flags, rho = ["--mechanism", "gaussian", "--sigma", repr(param)], 1 / (2 * param * param)
        elif kind == "laplace":
            flags, rho = ["--mechanism", "laplace", "--scale", repr(param)], renyi_sup(("laplace", param, None))
        else:
            flags, rho = ["--mechanism", "rr", "--epsilon0", repr(param)], renyi_sup(("rr", param, 2))
        out.append(Case(f"zcdp {kind} {param}", flags, "both", None, rho=rho))
    return out


def claims_of(case: Case) -> list[tuple[list, bool]]:
    """(certify flags, whether the claim is true) for the case's ±1% claims."""
    if case.rho is not None:
        return [(["--claim-rho", repr(case.rho * 1.01)], True), (["--claim-rho", repr(case.rho * 0.99)], False)]
    out = []
    for delta in case.deltas:
        eps = _epsilon_of(case, delta)
        out.append((["--epsilon", repr(eps * 1.01), "--delta", repr(delta)], True))
        out.append((["--epsilon", repr(eps * 0.99), "--delta", repr(delta)], False))
        case.widths.clear()
        d_at = _value(case, eps)
        out.append((["--epsilon", repr(eps), "--delta", repr(d_at * 1.01)], True))
        out.append((["--epsilon", repr(eps), "--delta", repr(d_at * 0.99)], False))
    return out


def decide(flags: list, direction: str, budget: float) -> tuple[int, dict, float]:
    from verifier.cli import main

    args = ["certify", *flags, "--neighboring", "add_or_remove" if direction == "both" else direction, "--time-budget", repr(budget), "--json"]
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:  # argparse refusing an option
            code = exc.code if isinstance(exc.code, int) else 2
    seconds = time.perf_counter() - start
    try:
        cert = json.loads(out.getvalue())
    except json.JSONDecodeError:
        cert = {"error": err.getvalue().strip()[-300:]}
    return code, cert, seconds


def run(reduced: bool, budget: float) -> dict:
    rows = []
    for case in cases(reduced):
        for flags, true in claims_of(case):
            code, cert, seconds = decide(case.flags + flags, case.direction, budget)
            wrong = (code == 0 and not true) or (code == 1 and true)
            brackets = {d: v.get("delta_at_epsilon") or v.get("rho") for d, v in cert.get("directions", {}).items()} or cert.get("error", "")
            print(f"{case.label} ({case.direction}) {' '.join(flags)}: exit {code} in {seconds:.1f} s", file=sys.stderr, flush=True)
            rows.append({"case": case.label, "direction": case.direction, "claim": " ".join(flags), "true": true, "exit": code, "wrong": wrong, "seconds": seconds, "brackets": brackets, "truth_halfwidth": max(case.widths, default=0.0)})
    return {"rows": rows}


def summary(result: dict) -> str:
    rows = result["rows"]
    n = len(rows)
    inconclusive = [r for r in rows if r["exit"] == 3]
    wrong = [r for r in rows if r["wrong"]]
    other = [r for r in rows if r["exit"] not in (0, 1, 3)]
    lines = [
        f"claims: {n}; wrong verdicts: {len(wrong)}; INCONCLUSIVE: {len(inconclusive)} ({100 * len(inconclusive) / max(n, 1):.1f}%); other exits: {len(other)}",
        f"slowest claim: {max(r['seconds'] for r in rows):.1f} s; total {sum(r['seconds'] for r in rows):.0f} s; largest truth half-width (convolved cases): {max(r['truth_halfwidth'] for r in rows):.2e} relative",
    ]
    for r in wrong + inconclusive + other:
        lines.append(f"- {'WRONG' if r['wrong'] else 'exit ' + str(r['exit'])}: {r['case']} ({r['direction']}) {r['claim']} (true claim: {r['true']}); brackets {r['brackets']}; {r['seconds']:.1f} s")
    return "\n".join(lines)


NOTES = """Truths are computed outside verifier (module docstring). The convolved truths carry a
half-width (rounded-up vs rounded-down loss laws); the largest, printed below, is under 1%, so every
claim is on a known side of its truth. What is not in the grid and why: Laplace under Poisson
replace-one has no known truth (no dominating pair is proven, see the README's section on
replace-one), so its claims cannot be scored; verifier's bracket there stays wide (Balle et al.'s
convex combination above, the attained pair below)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reduced", action="store_true", help="the small grid of the test")
    parser.add_argument("--time-budget", type=float, default=30.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    result = run(args.reduced, args.time_budget)
    text = summary(result)
    table = ["| case | direction | claim | true? | exit | s |", "|---|---|---|---|---|---|"]
    for r in result["rows"]:
        table.append(f"| {r['case']} | {r['direction']} | {r['claim']} | {r['true']} | {r['exit']} | {r['seconds']:.2f} |")
    load = os.getloadavg()[0]
    report = f"# Claims at ±1% of the truth (issue 33)\n\nMachine load average at the end: {load:.2f} (2 shared cores).\n\n{NOTES}\n\n{text}\n\n" + "\n".join(table) + "\n"
    if args.out:
        args.out.write_text(report)
    print(report)


if __name__ == "__main__":
    main()
