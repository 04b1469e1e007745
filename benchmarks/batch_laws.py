"""Sampling with replacement and truncated Poisson sampling (issue 42): verifier's ε(δ = 1e-5)
bracket, its width (upper − lower)/lower and the CPU time of each case, on the issue's cases.

    .venv/bin/python benchmarks/batch_laws.py [--out FILE.md]

Cases: with replacement, n = 100, m = 20, σ = 1, one step (the issue's one-step claim ε = 5.64244);
with replacement, n = 1000, m = 50, σ = 2, 10 steps (the README's example); truncated Poisson,
n = 1000, q = 0.05, B = 40, σ = 2, 10 steps, add/remove and replace-one, where truncation binds. Brackets are the
maximum over the claim's directions of the rigorous ends (verifier.properties.accountant.claim_epsilon).
The last lines give the load average.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from verifier.certify.claim import parse_claim
from verifier.properties.accountant import claim_epsilon

CASES = (
    ("with replacement, one step (issue)", {"name": "with_replacement", "dataset_size": 100, "sample_size": 20, "steps": 1}, 1.0, "replace_one"),
    ("with replacement, README example", {"name": "with_replacement", "dataset_size": 1000, "sample_size": 50, "steps": 10}, 2.0, "replace_one"),
    ("truncated Poisson, binding", {"name": "truncated_poisson", "dataset_size": 1000, "rate": 0.05, "max_batch": 40, "steps": 10}, 2.0, "add_or_remove"),
    ("truncated Poisson, binding", {"name": "truncated_poisson", "dataset_size": 1000, "rate": 0.05, "max_batch": 40, "steps": 10}, 2.0, "replace_one"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    lines = ["| case | relation | ε(1e-5) bracket | width | CPU s |", "|---|---|---|---|---|"]
    for label, scheme, sigma, relation in CASES:
        claim = parse_claim({"mechanism": {"name": "gaussian", "sigma": sigma}, "scheme": scheme, "neighboring": relation, "epsilon": 1.0, "delta": 1e-5})
        start = time.process_time()
        bracket = claim_epsilon(claim)
        cpu = time.process_time() - start
        width = (bracket.upper - bracket.lower) / bracket.lower
        lines.append(f"| {label} | {relation} | [{bracket.lower:.5f}, {bracket.upper:.5f}] | {100 * width:.1f}% | {cpu:.1f} |")
        print(lines[-1], flush=True)
    lines.append("")
    lines.append(f"load average at the end: {os.getloadavg()[0]:.1f}")
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
