"""Poisson-subsampled Gaussian: verifier's certified PLD bracket vs dp_accounting (pessimistic PLD,
value_discretization_interval=1e-4) vs prv_accountant (eps_error=0.01), in one run.

    .venv/bin/python benchmarks/poisson_pld.py [--repeat N]

Prints, for each case, ε from each tool, verifier's bracket and its relative width, and the time
ratio verifier / dp_accounting (target <= 1/3). The peers are optional: a missing one is reported
and skipped. Times are wall-clock minima over ``--repeat`` runs (fresh objects, no caches).
"""

from __future__ import annotations

import argparse
import time

from verifier._types import Direction
from verifier.pairs import Gaussian
from verifier.pld import scheme_pld
from verifier.schemes import Poisson

CASES = [
    # (sigma, rate, steps, delta, expected ε, verifier grid step)
    (1.0, 0.01, 1000, 1e-5, 1.8282, 2.0**-11),
    (0.8, 0.001, 10_000, 1e-6, 0.9472, 2.0**-13),
]


def verifier_bracket(sigma: float, rate: float, steps: int, delta: float, step: float):
    scheme = Poisson(Gaussian(sigma), rate, steps)
    brackets = [scheme_pld(scheme, d, step=step, target_delta=delta).epsilon(delta) for d in Direction]
    return brackets[0].maximum(brackets[1])


def dp_accounting_epsilon(sigma: float, rate: float, steps: int, delta: float) -> float:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(sigma)), steps
    )
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(event)
    return accountant.get_epsilon(delta)


def prv_epsilon(sigma: float, rate: float, steps: int, delta: float) -> tuple[float, float, float]:
    from prv_accountant import Accountant

    accountant = Accountant(
        noise_multiplier=sigma, sampling_probability=rate, delta=delta, eps_error=0.01, max_compositions=steps
    )
    return accountant.compute_epsilon(num_compositions=steps)  # (lower, estimate, upper)


def timed(fn, repeat: int):
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return value, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    header = f"{'case':<28} {'tool':<14} {'epsilon':>22} {'rel width':>10} {'seconds':>8} {'ratio v/tool':>12}"
    print(header)
    print("-" * len(header))
    for sigma, rate, steps, delta, expected, step in CASES:
        case = f"σ={sigma} λ={rate} T={steps} δ={delta:g}"
        bracket, t_ver = timed(lambda: verifier_bracket(sigma, rate, steps, delta, step), args.repeat)
        contains = "contains" if bracket.contains(expected) else "MISSES"
        print(
            f"{case:<28} {'verifier':<14} {f'[{bracket.lower:.5f}, {bracket.upper:.5f}]':>22} "
            f"{bracket.relative_width:>10.2e} {t_ver:>8.2f} {'1':>12}   ({contains} {expected})"
        )
        for name, fn in (
            ("dp_accounting", lambda: dp_accounting_epsilon(sigma, rate, steps, delta)),
            ("prv_accountant", lambda: prv_epsilon(sigma, rate, steps, delta)),
        ):
            try:
                value, t_peer = timed(fn, args.repeat)
            except ImportError as exc:
                print(f"{case:<28} {name:<14} not installed ({exc})")
                continue
            if isinstance(value, tuple):
                shown, width = f"{value[1]:.5f} [{value[0]:.4f},{value[2]:.4f}]", (value[2] - value[0]) / value[2]
            else:
                shown, width = f"{value:.5f}", float("nan")
            print(f"{case:<28} {name:<14} {shown:>22} {width:>10.2e} {t_peer:>8.2f} {t_ver / t_peer:>12.2f}")


if __name__ == "__main__":
    main()
