"""Laplace under Poisson replace-one (issue 33, item 4): is the antipodal pair the worst step? A numeric
search, not a proof.

    .venv/bin/python benchmarks/laplace_replace_one.py [--out FILE.md]

A Poisson replace-one step of the Laplace sum with the other records at 0 is
((1−λ)L(0) + λL(x), (1−λ)L(0) + λL(x′)) with |x|, |x′| <= C. For the Gaussian the antipodal pair
(x, x′) = (+C, −C) dominates every such step (proofs/antipodal_dominance.py, Plackett's identity);
for Laplace no proof is known. This script computes δ(ε) of every step on a grid of records
(9 × 9 values of x, x′ in [−C, C]), rates λ, scales b/C and ε (from −½ to 0.999 of the antipodal
pair's largest loss) by scipy quadrature split at the densities' kinks, and reports the largest
ratio δ(step)/δ(antipodal). Two-dimensional L1-bounded records (x = Ce₁ against x′ = Ce₂, and
splits over both coordinates) are compared on a fine grid at λ = 0.1, b = C.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy import integrate

C = 1.0


def _density(y, mean, scale):
    return np.exp(-np.abs(y - mean) / scale) / (2 * scale)


def step_delta(x: float, x_prime: float, epsilon: float, rate: float, scale: float) -> float:
    kappa = np.exp(epsilon)

    def gap(y):
        first = (1 - rate) * _density(y, 0, scale) + rate * _density(y, x, scale)
        second = (1 - rate) * _density(y, 0, scale) + rate * _density(y, x_prime, scale)
        return max(first - kappa * second, 0.0)

    kinks = sorted({0.0, x, x_prime})
    return integrate.quad(gap, -80 * scale, 80 * scale, points=kinks, limit=500, epsabs=1e-15, epsrel=1e-12)[0]


def one_dimensional() -> tuple[int, float, list[str]]:
    checked, worst, exceed = 0, 0.0, []
    for rate in (0.01, 0.1, 0.5, 0.9):
        for scale in (0.5, 1.0, 3.0):
            top = np.log(((1 - rate) + rate * np.exp(C / scale)) / ((1 - rate) + rate * np.exp(-C / scale)))
            for epsilon in np.linspace(-0.5 * top, 0.999 * top, 9):
                antipodal = step_delta(C, -C, epsilon, rate, scale)
                for x in np.linspace(-C, C, 9):
                    for x_prime in np.linspace(-C, C, 9):
                        value = step_delta(x, x_prime, epsilon, rate, scale)
                        checked += 1
                        if value > antipodal * (1 + 1e-9) + 1e-15:
                            exceed.append(f"λ={rate} b={scale} ε={epsilon:.4g} x={x} x′={x_prime}: {value:.6e} > {antipodal:.6e}")
                        if antipodal > 0:
                            worst = max(worst, value / antipodal)
    return checked, worst, exceed


def two_dimensional(rate: float = 0.1, scale: float = 1.0, half_width: float = 25.0, n: int = 2001) -> list[str]:
    y = np.linspace(-half_width, half_width, n)
    step = y[1] - y[0]
    y1, y2 = np.meshgrid(y, y, indexing="ij")
    base = _density(y1, 0, scale) * _density(y2, 0, scale)

    def law(point):
        return (1 - rate) * base + rate * _density(y1, point[0], scale) * _density(y2, point[1], scale)

    configs = {
        "antipodal (C,0) vs (−C,0)": ((C, 0), (-C, 0)),
        "(C,0) vs (0,C)": ((C, 0), (0, C)),
        "(C/2,C/2) vs (−C/2,−C/2)": ((C / 2, C / 2), (-C / 2, -C / 2)),
        "(C,0) vs (−C/2,C/2)": ((C, 0), (-C / 2, C / 2)),
        "(C,0) vs (0,0)": ((C, 0), (0, 0)),
    }
    laws = {name: (law(a), law(b)) for name, (a, b) in configs.items()}
    lines = ["| ε | " + " | ".join(configs) + " |", "|---" * (len(configs) + 1) + "|"]
    for epsilon in (0.0, 0.1, 0.2, 0.22):
        values = [np.trapezoid(np.trapezoid(np.maximum(p - np.exp(epsilon) * q, 0), dx=step), dx=step) for p, q in laws.values()]
        lines.append(f"| {epsilon} | " + " | ".join(f"{v:.4e}" for v in values) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    checked, worst, exceed = one_dimensional()
    report = [
        "# Laplace under Poisson replace-one: is the antipodal pair the worst step? (numeric, not a proof)",
        "",
        f"One dimension: {checked} steps checked; largest δ(step)/δ(antipodal) = {worst!r}; steps above the antipodal pair: {len(exceed)}.",
        *exceed[:20],
        "",
        "Two dimensions (λ = 0.1, b = C = 1, trapezoid on a 2001² grid of [−25, 25]²; δ(ε) per configuration):",
        "",
        *two_dimensional(),
    ]
    text = "\n".join(report) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
