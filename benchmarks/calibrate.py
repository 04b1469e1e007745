"""Certified calibration of σ vs dp_accounting's ``calibrate_dp_mechanism``, in one run.

    .venv/bin/python benchmarks/calibrate.py [--out FILE.md]
    .venv/bin/python benchmarks/calibrate.py --cost     # calibration vs one certify, CPU and wall

For each case (ε = 1, δ = 1e-5): verifier's certified σ (its certificate is CERTIFIED), the proven
lower end (VIOLATED), the relative gap, the number of certifier runs and the time; and, for the
Poisson case, dp_accounting's calibrated σ (PLD accountant, value_discretization_interval=1e-4,
its default bisection tolerance), which must lie at or above verifier's proven lower end (any σ
below that end provably misses the target). dp_accounting has no random-allocation or matrix
event; those rows show verifier only. For a matrix scheme with at most 3 batches the
``matrix-partition`` method bounds the exact Lemma 2.8 pair from both sides and the bracket closes
to the bisection tolerance; with more batches the bracket is as wide as the gap between the other
rigorous bounds (Rényi / conditional-composition upper, projection lower): calibration cannot be
tighter than the bounds it bisects on. The last column names the methods that decided the safe
end's certificate (upper) and the unsafe end's refutation (lower).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from verifier.certify.calibrate import calibrate

EPSILON, DELTA = 1.0, 1e-5
CASES = [
    ("DP-SGD: Poisson λ=256/60000, T=2344", {"name": "poisson", "rate": 256 / 60000, "steps": 2344}),
    ("random allocation t=1000, 10 epochs", {"name": "allocation", "steps": 1000, "epochs": 10}),
    ("matrix: BSR, 4 bands, 3 batches × 20 epochs", {"name": "matrix", "matrix": "bsr", "bands": 4, "batches": 3, "epochs": 20}),
    ("matrix: BSR, 2 bands, 10 batches × 2 epochs", {"name": "matrix", "matrix": "bsr", "bands": 2, "batches": 10, "epochs": 2}),
]


def deciding_methods(claim: dict, result) -> str:
    """The methods whose rigorous bounds decided the two ends: the safe end's certificate names its
    upper bounds; a fresh run at the largest VIOLATED value names the lower bounds that refute it."""
    import re

    from verifier.certify.claim import parse_claim
    from verifier.certify.verdict import certify

    def named(outcome, side: str) -> set[str]:
        return set(re.findall(rf"\((\S+), {side} bound\)", " ".join(outcome.decision.reasons)))

    upper = named(result.outcome, "upper")
    if result.unsafe is None:
        return f"upper: {', '.join(sorted(upper))}"
    refuted = certify(parse_claim({**claim, "mechanism": {**claim["mechanism"], "sigma": result.unsafe}}))
    return f"upper: {', '.join(sorted(upper))}; lower: {', '.join(sorted(named(refuted, 'lower')))}"


def dp_accounting_sigma(scheme: dict) -> float:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    def event(sigma: float):
        inner = dp_accounting.PoissonSampledDpEvent(scheme["rate"], dp_accounting.GaussianDpEvent(sigma))
        return dp_accounting.SelfComposedDpEvent(inner, scheme["steps"])

    return dp_accounting.calibrate_dp_mechanism(
        lambda: pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4), event, EPSILON, DELTA
    )


def _process(argv: list[str]) -> tuple[float, float, str]:
    """(CPU seconds (user + sys), wall seconds, stdout) of a fresh ``python -m verifier`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "verifier", *argv], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, done.stdout


def cost_against_one_certify() -> None:
    """Issue 30, Done-when 4: the DP-SGD calibration against one certify at the calibrated σ, both as
    fresh processes (start-up included on both sides), CPU and wall, one after the other."""
    scheme = ("--scheme", "poisson", "--rate", repr(256 / 60000), "--steps", "2344", "--epsilon", "1", "--delta", "1e-5")
    cal_cpu, cal_wall, out = _process(["calibrate", *scheme, "--json"])
    answer = json.loads(out)
    cert_cpu, cert_wall, _ = _process(["certify", "--sigma", repr(answer["safe"]), *scheme])
    print(f"Load average (1 min) at the start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores.\n")
    print("| run | σ | certifier runs | CPU s | wall s |")
    print("|---|---|---|---|---|")
    print(f"| `verifier calibrate` (DP-SGD, ε = 1, δ = 1e-5) | {answer['safe']:.6f} | {len(answer['probes'])} + 1 | {cal_cpu:.2f} | {cal_wall:.2f} |")
    print(f"| `verifier certify` at that σ | {answer['safe']:.6f} | 1 | {cert_cpu:.2f} | {cert_wall:.2f} |")
    print(f"| ratio calibrate / certify | | | {cal_cpu / cert_cpu:.2f}× | {cal_wall / cert_wall:.2f}× |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="also write the table as Markdown to this file")
    parser.add_argument("--cost", action="store_true", help="only the calibration-vs-certify cost table (issue 30)")
    args = parser.parse_args()
    if args.cost:
        cost_against_one_certify()
        return
    table = [
        "# Certified calibration of σ (ε = 1, δ = 1e-5) vs dp_accounting's calibrate_dp_mechanism",
        "",
        "Generated by `benchmarks/calibrate.py` (one run, one machine). verifier: σ_safe is CERTIFIED (a rigorous",
        "upper bound meets the target), σ_unsafe is VIOLATED (a rigorous lower bound misses it), so the best",
        "possible σ lies in [σ_unsafe, σ_safe]. dp_accounting's σ must be >= σ_unsafe.",
        "",
        "| case | tool | σ | proven bracket on the best σ | gap | certifier runs | seconds | check | deciding bounds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, scheme in CASES:
        start = time.perf_counter()
        claim = {"mechanism": {"name": "gaussian"}, "scheme": scheme, "epsilon": EPSILON, "delta": DELTA}
        result = calibrate(claim)
        seconds = time.perf_counter() - start
        verdict = result.outcome.verdict.value
        row = (
            f"| {name} | verifier | {result.safe:.6f} | [{result.unsafe:.6f}, {result.safe:.6f}] | {result.gap:.3%} | {len(result.probes)} + 1 "
            f"| {seconds:.1f} | certificate {verdict} | {deciding_methods(claim, result)} |"
        )
        print(row)
        table.append(row)
        if scheme["name"] != "poisson":
            continue
        try:
            start = time.perf_counter()
            theirs = dp_accounting_sigma(scheme)
            seconds = time.perf_counter() - start
        except ImportError as exc:
            table.append(f"| {name} | dp_accounting | not installed ({exc}) | | | | | | |")
            continue
        check = "≥ σ_unsafe: consistent" if theirs >= result.unsafe else "BELOW σ_unsafe: misses the target"
        row = f"| {name} | dp_accounting | {theirs:.6f} | — (one estimate) | — | — | {seconds:.1f} | {check}; {(theirs / result.safe - 1):+.3%} vs verifier | |"
        print(row)
        table.append(row)
    if args.out is not None:
        args.out.write_text("\n".join(table) + "\n")


if __name__ == "__main__":
    main()
