"""Fixed-size batches, DP-SGD row (σ = 1.1, q = 256/60000, T = 2344, δ = 1e-5): how much ε the cell
dominators of proofs/fixed_batch_domination.py (step 6) would cost a Bellman recursion over a finite
family, measured in FLOAT (a planning experiment, NOT a bound: scipy FFT, float loss laws).

    .venv/bin/python benchmarks/fixed_batch_cells.py [--out FILE.md]

A step pair E(A, B, C) = ((1 − q)N(0) + qN(a), (1 − q)N(0) + qN(b)) with Gram matrix
[[A, C], [C, B]] (a = (√A, 0), b = (C/√A, √(B − C²/A)); 2-D on a grid of σ/110 (0.01 at σ = 1.1), 1-D where the rank is one).
Its loss law is split onto the grid kh (h = 2^-9) keeping P- and Q-mass (the connect-the-dots
discretisation), and the recursion U_k(u) = max_m E[U_{k−1}(u + L_m)], U_0 = (1 − e^{−u})_+, runs on
u ∈ [−17, 20] once for every ε (translation invariance). Rows: the remove/add family alone, then
remove/add plus one candidate dominator and its mirror (B, A, C), as ε(δ) and the increase over the
remove/add family. Realisable steps (C = Cmin(A, B)) add nothing; the cost comes from lowering C
below Cmin with A = 4 (the remove corner), which every cell touching A = 4 must do.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import numpy as np

SIGMA, Q, T, DELTA = 1.1, 256 / 60000, 2344, 1e-5
H = 2.0**-9
U_LOW, U_HIGH, LOSS_LOW, LOSS_HIGH = -17.0, 20.0, -5.0, 10.0


def cmin(a_sq: float, b_sq: float) -> float:
    """The proven Cmin(A, B) of proofs/fixed_batch_domination.py, step 5 (run from the repository root)."""
    from proofs.fixed_batch_domination import cmin as proven

    return proven(a_sq, b_sq)


def _split(loss: np.ndarray, weight: np.ndarray) -> tuple[int, np.ndarray]:
    """Each loss split between its grid neighbours keeping E[e^{−L}] (connect-the-dots); losses
    above LOSS_HIGH sent to the top cell, below LOSS_LOW raised to it (float planning only)."""
    loss = np.clip(loss, LOSS_LOW, LOSS_HIGH)
    k = np.floor(loss / H).astype(np.int64)
    share = (np.exp(-(loss - k * H)) - math.exp(-H)) / -math.expm1(-H)
    first = int(k.min())
    size = int(k.max()) - first + 2
    return first, np.bincount(k - first, weight * share, size) + np.bincount(k - first + 1, weight * (1 - share), size)


def loss_law(a_sq: float, b_sq: float, c: float, sigma: float = SIGMA, q: float = Q) -> tuple[int, np.ndarray]:
    """The grid law of ln(P/Q) under P for E(A, B, C): 1-D where the rank is one, else 2-D on a
    grid of σ/110 over [−8σ − 2, 8σ + 2]^2."""
    from scipy.stats import norm

    if a_sq == 0 or b_sq == 0 or abs(c * c - a_sq * b_sq) < 1e-14:
        a1 = math.sqrt(a_sq)
        b1 = (c / a1) if a_sq > 0 else -math.sqrt(b_sq)
        y = np.linspace(min(a1, b1, 0) - 14 * sigma, max(a1, b1, 0) + 14 * sigma, 2_000_001)
        p = (1 - q) * norm.pdf(y, 0, sigma) + q * norm.pdf(y, a1, sigma)
        qq = (1 - q) * norm.pdf(y, 0, sigma) + q * norm.pdf(y, b1, sigma)
        return _split(np.log(p / qq), p / p.sum())
    a1 = math.sqrt(a_sq)
    b1 = c / a1
    b2 = math.sqrt(max(b_sq - b1 * b1, 0.0))
    axis = np.arange(-8 * sigma - 2, 8 * sigma + 2, sigma / 110)
    y1, y2 = np.meshgrid(axis, axis, indexing="ij")
    base = norm.pdf(y1, 0, sigma) * norm.pdf(y2, 0, sigma)
    p = (1 - q) * base + q * norm.pdf(y1, a1, sigma) * norm.pdf(y2, 0, sigma)
    qq = (1 - q) * base + q * norm.pdf(y1, b1, sigma) * norm.pdf(y2, b2, sigma)
    return _split(np.log(p / qq).ravel(), (p / p.sum()).ravel())


def epsilon(laws: list[tuple[int, np.ndarray]], steps: int = T, delta: float = DELTA) -> float:
    """ε(delta) of the float recursion over ``laws`` after ``steps`` steps (interpolated)."""
    from scipy import fft

    size = int(round((U_HIGH - U_LOW) / H)) + 1
    u = U_LOW + H * np.arange(size)
    low = max(0, -min(k for k, _ in laws))
    high = max(0, max(k + m.size - 1 for k, m in laws))
    n = fft.next_fast_len(size + low + high + max(m.size for _, m in laws))
    kernels = [(k, m.size, fft.rfft(m[::-1], n)) for k, m in laws]
    values = np.maximum(0.0, -np.expm1(-u))
    for _ in range(steps):
        spectrum = fft.rfft(np.concatenate([np.full(low, values[0]), values, np.ones(high)]), n)
        values = np.max(
            [fft.irfft(spectrum * kern, n)[low + k + length - 1 : low + k + length - 1 + size] for k, length, kern in kernels], axis=0
        )
    i = int(np.searchsorted(values, delta))
    return -(u[i - 1] + (delta - values[i - 1]) / (values[i] - values[i - 1]) * H)


def finish(lines: list[str], out: Path | None, start_wall: float, start_cpu: float) -> None:
    """Close the table ``lines`` with the run's wall and CPU seconds and the load average, and write it to
    ``out`` when given."""
    load = os.getloadavg()[0]
    lines += ["", f"{time.time() - start_wall:.0f} s wall, {time.process_time() - start_cpu:.0f} s CPU, load average {load:.2f}."]
    if out:
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    start_wall, start_cpu = time.time(), time.process_time()
    base_laws = [loss_law(4.0, 0.0, 0.0), loss_law(0.0, 4.0, 0.0)]
    base = epsilon(base_laws)
    lines = [
        f"Float recursion (not a bound), h = 2^-9: remove/add family ε = {base:.5f} "
        "(its limit h → 0 is about 6.7584: 6.7638, 6.7599, 6.7588 at h = 2^-8, 2^-9, 2^-10).",
        "",
        "| added member (A, B, C) | Cmin(A, B) | ε | increase |",
        "|---|---|---|---|",
    ]
    print(lines[0], flush=True)
    candidates = [(1.9975**2, 0.0025**2, -1.9975 * 0.0025), (4.0, 0.01, 0.01)]  # realizable
    candidates += [(4.0, b, c * b) for b in (0.01, 0.2, 1.0) for c in (0.6, 0.0)]
    candidates += [(2.0, 2.0, -0.3), (3.0, 1.0, cmin(3.0, 1.0) - 0.3)]
    for a_sq, b_sq, c in candidates:
        c = max(c, -math.sqrt(a_sq * b_sq))
        eps = epsilon(base_laws + [loss_law(a_sq, b_sq, c), loss_law(b_sq, a_sq, c)])
        lines.append(f"| ({a_sq:.6g}, {b_sq:.6g}, {c:.6g}) | {cmin(a_sq, b_sq):.6g} | {eps:.5f} | {eps - base:+.5f} |")
        print(lines[-1], flush=True)
    finish(lines, args.out, start_wall, start_cpu)


if __name__ == "__main__":
    main()
