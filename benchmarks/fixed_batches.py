"""Fixed-size batches under replace-one: what dp_accounting's RDP accountant reports against
verifier's certified PLD bracket, over batch fraction q = B/n and noise σ (records clipped at 1).

    .venv/bin/python benchmarks/fixed_batches.py [--out FILE.md] [--claims-only] [--rows SIGMA:B ...]

dp_accounting's ``SampledWithoutReplacementDpEvent`` RDP (Wang-Balle-Kasiviswanathan) takes the
noise multiplier σ as if the replace-one sensitivity were 1, but a replacement moves a sum of
records clipped at 1 by 2 (google/differential-privacy #378): the column "dp_acc σ" is what users
get, "dp_acc σ/2" what the same theorem gives with the right sensitivity. verifier's bracket is the
maximum over both directions of the rigorous ends: "before" the PLD method alone ([attained fixed
orientation, substitution pair]), "after" with the ``adaptive`` method beside it (the recursion over
the orientations an adaptive adversary picks: LOWER over remove/add, attained; UPPER over a finite
cover of every realisable step, when the method gives one). Widths are (upper − lower)/lower. The
verdict is the one verifier gives the "dp_acc σ" claim on the "after" bracket. n = 60000, δ = 1e-5,
T = 10 epochs (T = ⌈10/q⌉ steps; 2344 at B = 256, the issue's DP-SGD case). Each row gives its CPU
seconds and the load average (1 min) when it started; the last line the whole table's.

First, the DP-SGD row's claims (issue 42, Done when 1), each a fresh ``python -m verifier`` process
as a user runs it (CPU = user + sys of the child, which load does not inflate): ``certify`` at
ε = 6.85 (true, 0.7% above the upper end) and 6.70 (false), and ``epsilon``. ``--claims-only`` runs
just those; ``--rows 8:256 4:600`` only the named rows of the table (without the claims).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

from verifier._types import Direction, Side
from verifier.certify.methods.adaptive_batches import AdaptiveBatches, AdaptiveCover
from verifier.certify.methods.pld import PLDMethod
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian
from verifier.schemes import WithoutReplacement

sys.path.insert(0, str(Path(__file__).resolve().parent))
from production import run_process  # noqa: E402

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


def _bracket(bounds) -> tuple[float, float]:
    """The largest ε over the directions: max of the lower ends, max over directions of each
    direction's smallest upper end."""
    lower = max(b.value for b in bounds if b.side is Side.LOWER)
    upper = max(min(b.value for b in bounds if b.side is Side.UPPER and b.direction is d) for d in Direction)
    return lower, upper


def _pld_bounds(scheme: WithoutReplacement) -> list:
    return [b for d in Direction for b in PLDMethod().epsilon_bounds(scheme, DELTA, d)]


def pld_bracket(sigma: float, batch: int, steps: int) -> tuple[float, float]:
    """The PLD method's ε bracket alone ("before")."""
    return _bracket(_pld_bounds(WithoutReplacement(Gaussian(sigma, 2.0), N, batch, steps)))


def verifier_brackets(sigma: float, batch: int, steps: int):
    """(before, after): the PLD method's ε bounds alone, then with the adaptive methods' beside them."""
    scheme = WithoutReplacement(Gaussian(sigma, 2.0), N, batch, steps)
    pld = _pld_bounds(scheme)
    adaptive = [b for m in (AdaptiveBatches(), AdaptiveCover()) if m.supports(scheme) for b in _bounds(m, scheme)]
    return _bracket(pld), _bracket(pld + adaptive)


def _bounds(method, scheme: WithoutReplacement) -> list:
    """The method's ε bounds in both directions, none where it declines (e.g. no cover planned)."""
    try:
        return [b for d in Direction for b in method.epsilon_bounds(scheme, DELTA, d)]
    except NotApplicable as reason:
        print(f"  {method.name} declines: {reason}", flush=True)
        return []


DP_SGD = ("--sigma", "1.1", "--scheme", "without_replacement", "--dataset-size", "60000", "--batch-size", "256", "--steps", "2344",
          "--neighboring", "replace_one", "--delta", "1e-5")  # fmt: skip
CLAIMS = (("certify", "--epsilon", "6.85"), ("certify", "--epsilon", "6.70"), ("epsilon",))


def claim_rows() -> list[str]:
    """The DP-SGD row's commands, one fresh process each: verdict (exit code) or bracket, CPU, wall, load."""
    lines = ["| command | answer | CPU s | wall s | load |", "|---|---|---|---|---|"]
    for extra in CLAIMS:
        load = os.getloadavg()[0]
        got = run_process([sys.executable, "-m", "verifier", extra[0], *DP_SGD, *extra[1:], "--json"], 1800)
        if "timeout" in got:
            answer, cpu, wall = "timed out", got["cpu_at_least"], got["wall_at_least"]
        else:
            out = json.loads(got["stdout"])
            answer = f"[{out['lower']:.4f}, {out['upper']:.4f}]" if extra[0] == "epsilon" else f"{out.get('verdict', '?')} (exit {got['rc']})"
            cpu, wall = got["cpu"], got["wall"]
        lines.append(f"| `verifier {' '.join(extra)}` | {answer} | {cpu:.1f} | {wall:.1f} | {load:.2f} |")
        print(lines[-1], flush=True)
    return lines


def _width(bracket: tuple[float, float]) -> str:
    lower, upper = bracket
    return f"{100 * (upper - lower) / lower:.2f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--claims-only", action="store_true")
    parser.add_argument("--rows", nargs="*", default=None, help="SIGMA:B pairs of the table to run (default: all)")
    args = parser.parse_args()
    lines = claim_rows() + [""] if args.rows is None else []
    if args.claims_only:
        if args.out:
            args.out.write_text("\n".join(lines), encoding="utf-8")
        return
    lines += [
        "| σ | q = B/n | T | dp_acc σ | dp_acc σ/2 | before [lower, upper] | width | after [lower, upper] | width | verdict on dp_acc σ | CPU s | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    wanted = None if args.rows is None else {(float(s), int(b)) for s, b in (r.split(":") for r in args.rows)}
    wall, cpu = time.perf_counter(), time.process_time()
    for sigma in SIGMAS:
        for batch in BATCHES:
            if wanted is not None and (sigma, batch) not in wanted:
                continue
            row_cpu, load = time.process_time(), os.getloadavg()[0]
            steps = math.ceil(EPOCHS * N / batch)
            reported = dp_accounting_rdp(sigma, batch, steps)
            right = dp_accounting_rdp(sigma / 2, batch, steps)
            before, after = verifier_brackets(sigma, batch, steps)
            lower, upper = after
            verdict = "VIOLATED" if reported < lower else "CERTIFIED" if reported >= upper else "INCONCLUSIVE"
            lines.append(
                f"| {sigma:g} | {batch / N:.4g} | {steps} | {reported:.4f} | {right:.4f} | [{before[0]:.4f}, {before[1]:.4f}] | "
                f"{_width(before)} | [{lower:.4f}, {upper:.4f}] | {_width(after)} | {verdict} | {time.process_time() - row_cpu:.0f} | {load:.2f} |"
            )
            print(lines[-1], flush=True)
    lines.append("")
    lines.append(
        f"{time.perf_counter() - wall:.0f} s wall, {time.process_time() - cpu:.0f} s CPU, load average {os.getloadavg()[0]:.2f}."
    )
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
