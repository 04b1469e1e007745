"""Throughput of the Gaussian random-allocation privacy-loss sampler (issue 8 target: >= 2·10^7
coordinate evaluations per second per core, i.e. 2·10^4 samples/s at t = 1000).

Compares, in the same run and on one core, the compiled kernel (verifier._fast.mc_allocation,
via verifier.montecarlo.sample_loss) with the plain-NumPy twin
(verifier.reference.montecarlo.gaussian_allocation_losses: numpy normals + scipy logsumexp), and
the whole estimator (sampling + hockey-stick sums at 10 ε) for the remove direction.

    .venv/bin/python benchmarks/mc_allocation.py [--t 1000] [--samples 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from verifier._types import Direction
from verifier.montecarlo import estimate_delta, sample_loss
from verifier.pairs import Gaussian
from verifier.reference.montecarlo import gaussian_allocation_losses
from verifier.schemes import Allocation


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--t", type=int, default=1000, help="allocation steps t (default 1000)")
    parser.add_argument("--samples", type=int, default=20_000, help="samples per timing (default 20000)")
    parser.add_argument("--repeat", type=int, default=3, help="timings per implementation; the best is kept (default 3)")
    args = parser.parse_args()
    scheme = Allocation(Gaussian(1.0), args.t)
    coords = args.samples * args.t
    print(f"Gaussian allocation loss, sigma=1, t={args.t}, {args.samples} samples ({coords:.3g} coordinates), one core")
    for direction in Direction:
        kernel = best_of(args.repeat, lambda: sample_loss(scheme, args.samples, direction, np.random.default_rng(1)))
        numpy_twin = best_of(args.repeat, lambda: gaussian_allocation_losses(args.samples, args.t, 1.0, direction.value, np.random.default_rng(1)))
        print(
            f"  {direction.value:<6}  kernel {coords / kernel:10.3g} coord/s ({args.samples / kernel:9.3g} samples/s)   "
            f"numpy {coords / numpy_twin:10.3g} coord/s   ratio kernel/numpy {numpy_twin / kernel:5.2f}x   "
            f"target 2e7 coord/s: {'met' if coords / kernel >= 2e7 else 'NOT met'}"
        )
    eps = np.linspace(0.0, 2.0, 10)
    whole = best_of(args.repeat, lambda: estimate_delta(scheme, eps, [Direction.REMOVE], args.samples, importance="off"))
    print(f"  estimate_delta (remove, 10 ε, no importance sampling): {args.samples / whole:9.3g} samples/s")


if __name__ == "__main__":
    main()
