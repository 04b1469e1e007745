"""Fixed-size batches under replace-one: what dp_accounting's RDP accountant reports against
verifier's certified PLD bracket, over batch fraction q = B/n and noise σ (records clipped at 1).

    .venv/bin/python benchmarks/fixed_batches.py [--out FILE.md]

dp_accounting's ``SampledWithoutReplacementDpEvent`` RDP (Wang-Balle-Kasiviswanathan) takes the
noise multiplier σ as if the replace-one sensitivity were 1, but a replacement moves a sum of
records clipped at 1 by 2 (google/differential-privacy #378): the column "dp_acc σ" is what users
get, "dp_acc σ/2" what the same theorem gives with the right sensitivity. verifier's bracket is the
maximum over both directions of the PLD method's [LOWER, UPPER] (attained fixed orientation, the
substitution pair). The verdict is the one verifier gives the "dp_acc σ" claim. n = 60000, δ = 1e-5,
T = 10 epochs (T = ⌈10/q⌉ steps; 2344 at B = 256, the issue's DP-SGD case).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from verifier._types import Direction, Side
from verifier.certify.methods.pld import PLDMethod
from verifier.pairs import Gaussian
from verifier.schemes import WithoutReplacement

N, DELTA, EPOCHS = 60_000, 1e-5, 10
BATCHES = (60_000, 6_000, 600, 256)
SIGMAS = (1.1, 2.0, 4.0, 8.0, 16.0)


def dp_accounting_rdp(sigma: float, batch: int, steps: int) -> float:
    from dp_accounting import dp_event, rdp
    from dp_accounting.privacy_accountant import NeighboringRelation

    accountant = rdp.RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    event = dp_event.SampledWithoutReplacementDpEvent(N, batch, dp_event.GaussianDpEvent(sigma))
    accountant.compose(dp_event.SelfComposedDpEvent(event, steps))
    return accountant.get_epsilon(DELTA)


def verifier_bracket(sigma: float, batch: int, steps: int):
    """The PLD method's ε bounds (its own grid refinement, as in a verdict), max over directions."""
    scheme = WithoutReplacement(Gaussian(sigma, 2.0), N, batch, steps)
    bounds = [b for d in Direction for b in PLDMethod().epsilon_bounds(scheme, DELTA, d)]
    return max(b.value for b in bounds if b.side is Side.LOWER), max(b.value for b in bounds if b.side is Side.UPPER)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    lines = [
        "| σ | q = B/n | T | dp_acc σ | dp_acc σ/2 | verifier [lower, upper] | verdict on dp_acc σ |",
        "|---|---|---|---|---|---|---|",
    ]
    for sigma in SIGMAS:
        for batch in BATCHES:
            steps = math.ceil(EPOCHS * N / batch)
            reported = dp_accounting_rdp(sigma, batch, steps)
            right = dp_accounting_rdp(sigma / 2, batch, steps)
            lower, upper = verifier_bracket(sigma, batch, steps)
            verdict = "VIOLATED" if reported < lower else "CERTIFIED" if reported >= upper else "INCONCLUSIVE"
            lines.append(
                f"| {sigma:g} | {batch / N:.4g} | {steps} | {reported:.4f} | {right:.4f} | [{lower:.4f}, {upper:.4f}] | {verdict} |"
            )
            print(lines[-1], flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
