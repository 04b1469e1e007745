"""Conditional composition vs Rényi accounting for one-epoch DP-SGD under random allocation
(Schuchardt & Kalinin §5: CC is tighter for ε <= 1 with k = 1, especially for large b).

    .venv/bin/python benchmarks/matrix_cc_vs_renyi.py B SIGMA [SIGMA ...]

Prints, per σ, the Rényi ε(δ = 1e-5) UPPER bound of each direction (Algorithm 1 exact remove,
Lemma 3.4 add, improved conversion, fractional orders) and the CC ε UPPER bound of each direction
(Algorithm 4, union bound, δ_E = δ/2, PLD composition), with the CC wall time.
"""

from __future__ import annotations

import sys
import time

from verifier._types import Direction
from verifier.matrix import identity, means
from verifier.matrix.conditional import cc_pld
from verifier.pairs import Gaussian
from verifier.rdp import epsilon_upper_for
from verifier.schemes import MatrixMechanism

DELTA = 1e-5


def main() -> None:
    b = int(sys.argv[1])
    strategy = identity(b)
    for sigma in (float(x) for x in sys.argv[2:]):
        scheme = MatrixMechanism(Gaussian(sigma), strategy, b, 1)
        renyi = {d.value: epsilon_upper_for(scheme, DELTA, d).value for d in Direction}
        print(f"b={b} sigma={sigma} renyi {renyi}", flush=True)
        mu = means(strategy, b, 1) / sigma
        for direction in Direction:
            start = time.perf_counter()
            bracket = cc_pld(mu, direction, DELTA / 2)
            eps = float(bracket.epsilon(DELTA / 2).upper)
            print(f"b={b} sigma={sigma} {direction.value} cc {eps} ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
