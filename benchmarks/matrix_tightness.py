"""Benchmark: how tight is each rigorous matrix-mechanism method, and where does it stop (issue 28, item 3).

    nice .venv/bin/python benchmarks/matrix_tightness.py --budget 8 > benchmarks/matrix_tightness.md

Grid: random allocation (``--scheme matrix``: k epochs over b batches, N = b·k steps) with
- BSR (banded square root, p bands) and a BandMF-style banded Toeplitz strategy (p bands,
  c_t = (p − t)/p: a linear taper, not McKenna's optimised coefficients),
- p ∈ {2, 4, 8}, b ∈ {4, 10, 64}, k ∈ {1, 5}; σ = 1, Δ = 1, REMOVE direction, the question δ(ε = 1)
  (σ = 1 keeps δ large enough for the Monte Carlo interval to resolve it).

Every registered rigorous method for the scheme runs alone (``collect_bounds(only=[name])``) under a
time budget of ``--budget`` seconds (a method past it is interrupted where the interrupt can land,
i.e. not inside a compiled kernel call); one that declines, fails or is interrupted is shown with
the reason. For each method: its lower and upper bound on δ(1) (a one-sided method leaves the other
side blank), the relative width (upper − lower)/upper of the best bracket where both sides exist,
and the wall time. Beside them, the Monte Carlo estimate of the full pair (``matrix-mc``'s estimator,
up to 10⁶ samples) with its 99% interval (an estimate, never a bound), under the same budget.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time

from verifier._types import Direction, Quantity
from verifier.certify.method import Guarantee
from verifier.certify.methods.matrix_cc import MAX_STEPS
from verifier.certify.methods.matrix_evidence import MC_MAX_SIZE
from verifier.certify.methods.matrix_partition import MAX_DIMENSION
from verifier.certify.portfolio import call_within, collect_bounds
from verifier.certify.registry import all_methods
from verifier.matrix import bsr, toeplitz
from verifier.matrix.evidence import mc_delta
from verifier.rdp.matrix import scaled_means
from verifier.pairs import Gaussian
from verifier.schemes import MatrixMechanism

SIGMA, EPSILON = 1.0, 1.0
BANDS, BATCHES, EPOCHS = (2, 4, 8), (4, 10, 64), (1, 5)
#: Why a registered matrix method does not take a case on (its ``supports`` range).
LIMITS = {
    "matrix-partition": f"b <= {MAX_DIMENSION} batches only (its dyadic boxes grow like 2^(b·depth))",
    "matrix-cc": f"N·b <= {MAX_STEPS} only (one reverse-hazard row per step and slot)",
    "matrix-mc": f"b·N <= {MC_MAX_SIZE} only",
}


def strategies(size: int, bands: int) -> list[tuple[str, object]]:
    taper = [(bands - t) / bands for t in range(bands)]
    return [("BSR", bsr(size, bands)), ("banded Toeplitz (linear taper)", toeplitz(size, taper))]


def _number(x: float | None) -> str:
    return "" if x is None else f"{x:.4g}"


def run_cell(scheme: MatrixMechanism, budget: float) -> list[tuple[str, str, str, str, str, str]]:
    rows = []
    best_lo, best_hi = None, None
    for method in all_methods():
        if MatrixMechanism not in method.scheme_types:
            continue
        if not method.supports(scheme):
            rows.append((method.name, "", "", "", "", f"declines: {LIMITS.get(method.name, 'outside its range')}"))
            continue
        start = time.perf_counter()
        if method.returns == frozenset({Guarantee.ESTIMATE}):
            samples = int(min(1e6, max(2**14, 4e8 / (scheme.batches * scheme.strategy.size))))
            est = call_within(budget, lambda: mc_delta(scaled_means(scheme), EPSILON, Direction.REMOVE, samples, 7, 0.99))
            seconds = time.perf_counter() - start
            if est is None:
                rows.append((f"{method.name} (estimate)", "", "", "", f"{seconds:.1f}", f"interrupted at {samples} samples, time budget spent"))
            else:
                rows.append((f"{method.name} (estimate)", _number(est.lower), _number(est.upper), "", f"{seconds:.1f}",
                             f"estimate {est.value:.4g}, {est.confidence:.0%} interval, {est.samples} samples"))
            continue
        got = collect_bounds(scheme, Quantity.DELTA, EPSILON, [Direction.REMOVE], only=[method.name], time_budget=budget)
        seconds = time.perf_counter() - start
        why = "; ".join(s.split(": ", 1)[-1] for s in got.skipped)
        lows = [b.value for b in got.bounds if b.side.value == "lower" and b.rigorous]
        highs = [b.value for b in got.bounds if b.side.value == "upper" and b.rigorous]
        lo, hi = (max(lows) if lows else None), (min(highs) if highs else None)
        if lo is not None:
            best_lo = lo if best_lo is None else max(best_lo, lo)
        if hi is not None:
            best_hi = hi if best_hi is None else min(best_hi, hi)
        width = "" if lo is None or hi is None or hi <= 0 else f"{(hi - lo) / hi:.1%}"
        rows.append((method.name, _number(lo), _number(hi), width, f"{seconds:.1f}", why or ("" if lows or highs else "no bound")))
    width = "" if best_lo is None or best_hi is None or best_hi <= 0 else f"{(best_hi - best_lo) / best_hi:.1%}"
    rows.insert(0, ("**best bracket**", _number(best_lo), _number(best_hi), width, "", ""))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=8.0, help="seconds per method and cell")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print("# Matrix mechanisms under random allocation: tightness of each rigorous method\n")
    print(f"Generated by `benchmarks/matrix_tightness.py --budget {args.budget:g}` on {now}, commit {commit}, "
          f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average (1 min) at the start: {os.getloadavg()[0]:.2f}.\n")
    print(f"δ(ε = {EPSILON:g}) in the REMOVE direction, σ = {SIGMA:g}, Δ = 1; each method alone under a "
          f"{args.budget:g} s budget (wall; a compiled kernel call in progress runs to its end, so a time can exceed it). "
          "Width = (upper − lower)/upper. `matrix-mc` is a Monte Carlo ESTIMATE of the full pair with its "
          "interval, never a bound. Times are wall seconds on a shared, loaded machine: indicative only.\n")
    print("| strategy | p | b | k | N | method | lower | upper | width | s | note |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    for k in EPOCHS:
        for b in BATCHES:
            for p in BANDS:
                for label, strategy in strategies(b * k, p):
                    scheme = MatrixMechanism(Gaussian(SIGMA), strategy, b, k)
                    for row in run_cell(scheme, args.budget):
                        print(f"| {label} | {p} | {b} | {k} | {b * k} | " + " | ".join(row) + " |")
                    sys.stdout.flush()
    print(f"\nWhole run: {time.perf_counter() - wall0:.0f} s wall, {time.process_time() - cpu0:.0f} s CPU; "
          f"load average at the end: {os.getloadavg()[0]:.2f}.")


if __name__ == "__main__":
    main()
