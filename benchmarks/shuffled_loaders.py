"""What a DP-SGD data loader costs: one setting (σ = 1.1, n = 60000, B = 256, 10 epochs, δ = 1e-5,
records clipped at 1) under Poisson, fixed-size and shuffled batches, and the partial-batch check of
issue 24's 6.3049. Produces the README's comparison table. With ``--grid``, the shuffled-batch
brackets over σ ∈ {0.8, 1.1, 2, 4, 8}, t ∈ {10², 10³, 10⁴} batches per epoch (B = 256, n = 256t),
E ∈ {1, 10}, δ = 1e-5 (issue 39): today's bracket (allocation LOWER, unamplified UPPER) and the one
with the shuffled-clones UPPER end, with widths, upper/lower ratios and CPU times.

    .venv/bin/python benchmarks/shuffled_loaders.py [--out FILE.md] [--grid]

Rows: verifier's certified ε bracket (max over directions of each side) for Poisson add/remove,
Poisson replace-one, fixed-size batches (replace-one) and shuffled batches (replace-one, drop_last
both ways), with what Opacus's accountants report for the same history where opacus is installed
(a shuffled loader is recorded as Poisson at rate 1/len(loader)).

Partial batch: 60000 = 234·256 + 96, so the target is outside the full batches with probability
96/60000 per epoch. The table gives the allocation engine's bracket for t = 234 (the issue's
number is its lower end), the λ^E mixture bound for n = 60000, and the attained pair itself, one
epoch of the allocation PLD Poisson-subsampled at λ = 59904/60000 (verifier.pld.subsample, both
sides, on the grid of :data:`verifier.certify.methods.shuffled.SUBSAMPLED_STEP`) and composed over
10 epochs, whose DOMINATED side is the ``shuffled`` method's lower end.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path

from verifier._types import Direction, Quantity, Side
from verifier.certify.claim import parse_claim
from verifier.certify.methods.shuffled import ShuffledClones, ShuffledMethod, mixture_lower, subsampled_epochs
from verifier.certify.registry import methods_for
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian
from verifier.schemes import Allocation, ShuffledBatches

SIGMA, N, B, EPOCHS, DELTA = 1.1, 60_000, 256, 10, 1e-5
STEPS = math.ceil(EPOCHS * N / B)  # 2344 for the samplers that draw every step afresh


def bracket(scheme: dict, neighboring: str, only: tuple[str, ...]) -> tuple[float, float]:
    """[max lower, max upper] of ε(δ) over the relation's directions, from the methods ``only``."""
    claim = parse_claim({"mechanism": {"name": "gaussian", "sigma": SIGMA}, "scheme": scheme, "neighboring": neighboring, "epsilon": 1.0, "delta": DELTA})
    lower = upper = -math.inf
    for direction in claim.directions:
        found = []
        for method in methods_for(claim.model):
            if method.name in only:
                try:
                    found += method.epsilon_bounds(claim.model, DELTA, direction)
                except NotApplicable as exc:  # shuffled-clones where it does not amplify
                    print(f"{method.name} declines: {exc}")
        lower = max(lower, max((b.value for b in found if b.side is Side.LOWER), default=-math.inf))
        upper = max(upper, min(b.value for b in found if b.side is Side.UPPER))
    return lower, upper


def opacus(rate: float, steps: int) -> str:
    try:
        from opacus.accountants import GaussianAccountant, PRVAccountant, RDPAccountant
    except ImportError:
        return "(opacus not installed)"
    out = []
    for kind in (PRVAccountant, RDPAccountant, GaussianAccountant):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            accountant = kind()
            accountant.history = [(SIGMA, rate, steps)]
            out.append(f"{kind.__name__.removesuffix('Accountant')} {accountant.get_epsilon(delta=DELTA):.4f}")
    return "Opacus " + ", ".join(out)


GRID_HEADING = "## Shuffled batches through the shuffle model (issue 39; `--grid`)"
GRID_SIGMAS, GRID_USERS, GRID_EPOCHS, GRID_B = (0.8, 1.1, 2.0, 4.0, 8.0), (100, 1000, 10_000), (1, 10), 256


def shuffled_cell(scheme: ShuffledBatches) -> dict:
    """ε(δ) ends of one shuffled scheme: the LOWER end (larger direction) and the unamplified UPPER end
    of ``shuffled``, and the shuffled-clones UPPER end or the reason it declines, with CPU seconds."""
    old = ShuffledMethod()
    start = time.process_time()
    lower = max(next(b.value for b in old.epsilon_bounds(scheme, DELTA, d) if b.side is Side.LOWER) for d in (Direction.ADD, Direction.REMOVE))
    lower_s = time.process_time() - start
    unamplified = next(b.value for b in old.epsilon_bounds(scheme, DELTA, Direction.REMOVE) if b.side is Side.UPPER)
    start = time.process_time()
    try:  # the clone pair is symmetric: one direction answers both
        (found,) = ShuffledClones().epsilon_bounds(scheme, DELTA, Direction.REMOVE)
        clones, note = found.value, found.note
    except NotApplicable as exc:
        clones, note = None, str(exc)
    return {"lower": lower, "lower_s": lower_s, "unamplified": unamplified, "clones": clones, "note": note,
            "clones_s": time.process_time() - start}


def grid_table() -> list[str]:
    """The issue-39 table (module docstring), one row per (σ, t, E)."""
    lines = [
        "| σ | t | E | today [lower, upper] | ratio | new upper (shuffled-clones) | new ratio | width today → new | CPU lower / new upper |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    amplified, target_ratios = [], []
    for sigma in GRID_SIGMAS:
        for users in GRID_USERS:
            for epochs in GRID_EPOCHS:
                cell = shuffled_cell(ShuffledBatches(Gaussian(sigma, 2.0), GRID_B * users, GRID_B, epochs))
                lo, hi, new = cell["lower"], cell["unamplified"], cell["clones"]
                upper = hi if new is None else min(hi, new)
                shown = "declines" if new is None else f"{new:.5f}"
                lines.append(
                    f"| {sigma:g} | {users} | {epochs} | [{lo:.5f}, {hi:.5f}] | {hi / lo:.1f} | {shown} | {upper / lo:.1f} | "
                    f"{hi - lo:.4f} → {upper - lo:.4f} | {cell['lower_s']:.1f} s / {cell['clones_s']:.1f} s |"
                )
                print(lines[-1], "" if new is not None else f"  ({cell['note']})", flush=True)
                if new is not None and new < hi:
                    amplified.append(f"σ = {sigma:g}, t = {users}, E = {epochs}")
                if sigma >= 4 and users >= 1000:
                    target_ratios.append(upper / lo)
    lines += [
        "",
        f"shuffled-clones gets below the unamplified end in {len(amplified)} of {len(GRID_SIGMAS) * len(GRID_USERS) * len(GRID_EPOCHS)} cells ({'; '.join(amplified)}) "
        "and declines, naming its numbers, in the others. Every new upper end is <= the unamplified one (it declines otherwise).",
        f"Cells with σ >= 4 and t >= 1000: upper/lower ratio {min(target_ratios):.1f} to {max(target_ratios):.1f} (issue 39 asks <= 2: not met).",
    ]
    for drop_last in (False, True):
        cell = shuffled_cell(ShuffledBatches(Gaussian(SIGMA, 2.0), N, B, EPOCHS, drop_last))
        new = "declines: " + cell["note"] if cell["clones"] is None else f"{cell['clones']:.5f}"
        lines.append(f"DP-SGD row (σ = {SIGMA}, n = {N}, B = {B}, {EPOCHS} epochs, drop_last={drop_last}): "
                     f"[{cell['lower']:.5f}, {min(cell['unamplified'], cell['clones'] or math.inf):.5f}]; shuffled-clones {new}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--grid", action="store_true", help="the issue-39 table over sigma, t, E instead of the DP-SGD rows")
    args = parser.parse_args()
    if args.grid:
        text = "\n".join([GRID_HEADING, "", *grid_table()])
        if args.out:  # replace the grid section of the file, keep what is above it
            kept = args.out.read_text(encoding="utf-8").split(GRID_HEADING)[0] if args.out.exists() else ""
            args.out.write_text(kept + text + "\n", encoding="utf-8")
        return
    poisson = {"name": "poisson", "rate": B / N, "steps": STEPS}
    rows = [
        ("Poisson, rate B/n", "add/remove", bracket(poisson, "add_or_remove", ("pld",)), opacus(B / N, STEPS)),
        ("Poisson, rate B/n", "replace-one", bracket(poisson, "replace_one", ("pld",)), ""),
        ("fixed-size B, drawn afresh each step", "replace-one",
         bracket({"name": "without_replacement", "dataset_size": N, "batch_size": B, "steps": STEPS}, "replace_one", ("pld",)), ""),
    ]
    for drop_last, batches in ((False, math.ceil(N / B)), (True, N // B)):
        scheme = {"name": "shuffled", "dataset_size": N, "batch_size": B, "epochs": EPOCHS, "drop_last": drop_last}
        rows.append((f"shuffled, drop_last={drop_last} ({batches} batches)", "replace-one", bracket(scheme, "replace_one", ("shuffled", "shuffled-clones")),
                     opacus(1 / batches, EPOCHS * batches)))
    lines = ["| batches | relation | verifier ε [lower, upper] | what the accountants report |", "|---|---|---|---|"]
    lines += [f"| {what} | {relation} | [{lo:.5f}, {hi:.5f}] | {peer} |" for what, relation, (lo, hi), peer in rows]

    lines += ["", "Partial batch (remove orientation, ε at δ = 1e-5):", "", "| what | ε |", "|---|---|"]
    engine = next(m for m in methods_for(Allocation(Gaussian(SIGMA, 2.0), N // B, 1, EPOCHS)) if m.name == "allocation-pld")
    found = engine.epsilon_bounds(Allocation(Gaussian(SIGMA, 2.0), N // B, 1, EPOCHS), DELTA, Direction.REMOVE)
    lines.append(f"| allocation t = 234, 10 epochs (59904 records) | [{min(b.value for b in found):.5f}, {max(b.value for b in found):.5f}] |")
    scheme = ShuffledBatches(Gaussian(SIGMA, 2.0), N, B, EPOCHS)
    mixture, _ = mixture_lower(scheme, Quantity.EPSILON, DELTA)
    lines.append(f"| λ^E mixture bound for n = 60000 (the lower end before issue 39) | {mixture:.5f} |")
    attained = subsampled_epochs(scheme, Direction.REMOVE)
    lines.append(f"| the attained pair for n = 60000 (PLD subsampling, grid 2^{math.log2(attained.step):.0f}: the lower end now) | "
                 f"[{attained.dominated.epsilon(DELTA):.5f}, {attained.dominating.epsilon(DELTA):.5f}] |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
