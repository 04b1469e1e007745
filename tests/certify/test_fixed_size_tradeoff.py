"""Issue 40, Done-when 4: ``verifier tradeoff`` on fixed-size batches (``without_replacement``,
replace-one neighbours), against trade-off curves computed independently of verifier.

- Full batches (B = n): the record is in every step and a replacement moves each step's sum by 2C,
  so T steps are the T-fold composition of N(2C, σ²) against N(0, σ²): TPR = Φ(Φ⁻¹(α) + 2C√T/σ)
  (Dong, Roth & Su 2022, Cor 3.3).
- One step, n = 2, B = 1, records in [−C, C] (one-dimensional): the output is x_J + N(0, σ²) with J
  uniform, so a pair of datasets (a, z) against (b, z) is ½N(a) + ½N(z) against ½N(b) + ½N(z). The
  pair the LOWER end uses (every record at v = C, the target replaced by −v) has a monotone
  likelihood ratio, so its TPR is closed form in one order (H0 all at v, H1 the target at −v:
  TPR = ½[α + Φ(Φ⁻¹(α) + 2v/σ)], the ``remove`` orientation, the mixture against N(v)) and one
  root-find in the other (``add``). Every other pair by the most powerful test on the output binned
  at step 0.001 over [−20, 20] with exact cell masses (a post-processing, hence a LOWER estimate of
  the pair's TPR), which the UPPER end must lie above.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize, special

from verifier.cli import main

SIGMA = 2.0
FPRS = (0.01, 0.1, 0.3)
SLACK = 1e-9
#: (a, b, z): H0 the target at a, H1 at b, the other record at z.
PAIRS = ((1.0, -1.0, 1.0), (-1.0, 1.0, 1.0), (1.0, -1.0, 0.0), (1.0, -1.0, -1.0), (0.5, -1.0, 0.2), (1.0, 0.0, -0.5))


def gauss_tpr(alpha: float, mu: float) -> float:
    return float(special.ndtr(special.ndtri(alpha) + mu))


def antipodal_tpr(alpha: float, reverse: bool, v: float = 1.0) -> float:
    """TPR of N(v) (H0) against ½N(−v) + ½N(v) (H1), or the reverse: the likelihood ratio is monotone
    in y, so the test rejects y below (above, ``reverse``) a threshold."""
    if not reverse:
        return 0.5 * (alpha + gauss_tpr(alpha, 2 * v / SIGMA))

    def size(t: float) -> float:
        return 0.5 * float(special.ndtr(-(t + v) / SIGMA) + special.ndtr(-(t - v) / SIGMA))

    threshold = optimize.brentq(lambda t: size(t) - alpha, -60.0, 60.0, xtol=1e-14, rtol=1e-15)
    return float(special.ndtr(-(threshold - v) / SIGMA))


def binned_tpr(alpha: float, a: float, b: float, z: float, step: float = 1e-3, half: float = 20.0) -> float:
    edges = np.concatenate(([-np.inf], np.arange(-half, half + step / 2, step), [np.inf]))

    def law(x: float) -> np.ndarray:
        return 0.5 * (np.diff(special.ndtr((edges - x) / SIGMA)) + np.diff(special.ndtr((edges - z) / SIGMA)))

    p0, p1 = law(a), law(b)
    ratio = np.divide(p1, p0, out=np.full_like(p1, np.inf), where=p0 > 0)
    order = np.argsort(-ratio, kind="stable")
    p0, p1 = p0[order], p1[order]
    size, power = np.cumsum(p0), np.cumsum(p1)
    i = int(np.searchsorted(size, alpha, side="right"))
    before = (size[i - 1], power[i - 1]) if i else (0.0, 0.0)
    return float(before[1] + (alpha - before[0]) / p0[i] * p1[i])


def _tradeoff(capsys, n: int, batch: int, steps: int) -> dict:
    argv = ["tradeoff", "--sigma", str(SIGMA), "--scheme", "without_replacement", "--dataset-size", str(n), "--batch-size", str(batch),
            "--steps", str(steps), "--neighboring", "replace_one", "--fpr", ",".join(map(str, FPRS)), "--json"]
    assert main(argv) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    return {d: [(float(p["directions"][d]["lower"]), float(p["directions"][d]["upper"])) for p in points] for d in ("add", "remove")}


def test_full_batches_are_the_composed_gaussian(capsys):
    """n = B = 4, three steps: the bracket holds Φ(Φ⁻¹(α) + 2√3/σ) and is 1e-4 wide (relative)."""
    got = _tradeoff(capsys, 4, 4, 3)
    for ends in got.values():
        for (lower, upper), alpha in zip(ends, FPRS):
            truth = gauss_tpr(alpha, 2 * math.sqrt(3) / SIGMA)
            assert lower <= truth <= upper and upper - lower <= 1e-4 * truth


def test_reference_closed_form_meets_the_binned_output():
    """The antipodal pair's closed form (both orders) against the binned reference: binned below, within 1e-6."""
    for alpha in FPRS:
        for reverse, pair in ((False, (1.0, -1.0, 1.0)), (True, (-1.0, 1.0, 1.0))):
            truth = antipodal_tpr(alpha, reverse)
            assert truth - 1e-6 <= binned_tpr(alpha, *pair) <= truth + SLACK


def test_one_step_bracket_holds_every_pair_and_its_lower_pair(capsys):
    """n = 2, B = 1, one step: the UPPER end (both directions) is above every pair's binned TPR; each
    direction's LOWER end is below its orientation of the antipodal pair and within 1e-3 of it.
    Catches an upper end from one orientation only (the reverse pair lies above the add order's curve)
    and lower ends of the two directions swapped (remove's is 2.7 times add's at FPR 0.01)."""
    got = _tradeoff(capsys, 2, 1, 1)
    worst = [max(binned_tpr(alpha, *pair) for pair in PAIRS) for alpha in FPRS]
    for direction, ends in got.items():
        for i, alpha in enumerate(FPRS):
            lower, upper = ends[i]
            own = antipodal_tpr(alpha, reverse=direction == "add")
            assert upper >= worst[i] - SLACK
            assert own * (1 - 1e-3) <= lower <= own + SLACK
