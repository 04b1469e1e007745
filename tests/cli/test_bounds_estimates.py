"""``verifier bounds`` shows the estimate-only methods (Monte Carlo) beside the bounds, in a table of
their own labelled ESTIMATE, for every scheme that has one (issue 15: the matrix mechanism's Rényi,
conditional-composition, projection lower bound and Monte Carlo side by side; generic, so the
Gaussian's ``montecarlo`` shows too). The estimates are checked against independent references:
the Gaussian's exact δ(ε) (Balle & Wang 2018, Thm 8) inside the interval, and for the matrix
mechanism the interval meets the rigorous [lower, upper] bracket (a wrong sign or a wrong pair in
the Monte Carlo, or a bound below the truth, breaks that)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from verifier._types import Direction
from verifier.cli import main
from verifier.cli._bounds import TABLE_WIDTH, estimate_lines
from verifier.cli._table import TINY
from verifier.report.curves import EstimateCurve


def _bounds_json(capsys, *argv: str) -> dict:
    assert main(["bounds", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_matrix_lists_every_method_and_the_estimate_meets_the_bracket(capsys):
    data = _bounds_json(
        capsys, "--scheme", "matrix", "--matrix", "bsr", "--bands", "2", "--batches", "3", "--epochs", "1", "--sigma", "1",
        "--direction", "remove", "--epsilon-max", "2", "--points", "3",
    )
    curves = {(c["method"], c["side"]): c["values"] for c in data["curves"]}
    assert set(curves) == {
        ("rdp", "upper"), ("matrix-cc", "upper"), ("matrix-projection", "lower"), ("matrix-partition", "upper"), ("matrix-partition", "lower"),
        ("matrix-chain", "upper"), ("matrix-chain", "lower"),
    }
    (mc,) = data["estimates"]
    assert (mc["method"], mc["direction"], mc["side"], mc["confidence"]) == ("matrix-mc", "remove", "estimate", 0.99)
    assert not any(c["method"] == "matrix-mc" for c in data["curves"])  # never a bound column
    for i in range(3):
        upper = min(curves[(name, "upper")][i] for name in ("rdp", "matrix-cc", "matrix-partition", "matrix-chain"))
        lower = max(curves[(name, "lower")][i] for name in ("matrix-projection", "matrix-partition", "matrix-chain"))
        assert mc["lower"][i] <= mc["values"][i] <= mc["upper"][i]
        assert mc["lower"][i] <= upper and lower <= mc["upper"][i]
        assert 0.0 < mc["lower"][i]  # the pair is not private at these ε: a nonzero δ, seen by the MC


def test_matrix_table_labels_the_estimate(capsys):
    argv = ["bounds", "--scheme", "matrix", "--matrix", "bsr", "--bands", "2", "--batches", "3", "--epochs", "1", "--sigma", "1",
            "--direction", "remove", "--epsilon-max", "1", "--points", "2"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()[1:]) <= TABLE_WIDTH  # the title line repeats the scheme
    bounds_key = out[out.index("key: [1]"):out.index("ESTIMATES of")]  # the key may wrap
    assert "matrix-mc" not in bounds_key and "matrix-projection" in bounds_key
    assert "ESTIMATES of δ(ε)" in out and "[E1] matrix-mc remove ESTIMATE (99% interval)" in out


def test_gaussian_montecarlo_interval_holds_the_exact_delta(capsys):
    from scipy.stats import norm

    sigma = 1.0
    data = _bounds_json(capsys, "--sigma", str(sigma), "--method", "exact", "--method", "montecarlo", "--epsilon-max", "1", "--points", "3")
    assert {c["method"] for c in data["curves"]} == {"exact:gaussian"}
    assert {(e["method"], e["direction"]) for e in data["estimates"]} == {("montecarlo", "add"), ("montecarlo", "remove")}
    for estimate in data["estimates"]:
        for eps, low, high in zip(data["epsilons"], estimate["lower"], estimate["upper"]):
            exact = norm.cdf(1 / (2 * sigma) - eps * sigma) - math.exp(eps) * norm.cdf(-1 / (2 * sigma) - eps * sigma)
            assert low <= exact <= high


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_estimate_table_fits_and_reads_back(count):
    epsilons = np.linspace(0.0, 8.0, 4)
    rows = [4.94e-324, 0.0514215, 1.12763392e-29, math.nan]
    estimates = [
        EstimateCurve(f"method-with-a-long-name-{i}", Direction.ADD, 0.99, tuple(rows), tuple(r / 2 for r in rows), tuple(r * 2 for r in rows))
        for i in range(count)
    ]
    lines = estimate_lines(epsilons, estimates)
    assert max(len(line) for line in lines) <= TABLE_WIDTH
    assert "not bounds" in lines[0]
    read: dict[str, list[list[float]]] = {}
    header: list[str] = []
    for line in lines[1:]:
        cells = line.split()
        if cells and cells[0] == "ε":
            header = [c for c in cells[1:] if c.startswith("[E")]
        elif header and len(cells) == 1 + 3 * len(header):
            try:
                values = [TINY if c == TINY else float(c) for c in cells[1:]]
            except ValueError:
                continue
            for j, name in enumerate(header):
                read.setdefault(name, []).append(values[3 * j : 3 * j + 3])
    for i, e in enumerate(estimates):
        got = read[f"[E{i + 1}]"]
        for k, (value, low, high) in enumerate(got):
            for printed, expected, side in ((value, e.values[k], None), (low, e.lower[k], "lower"), (high, e.upper[k], "upper")):
                if printed is TINY:  # only a subnormal upper end prints so (issue 32)
                    assert side == "upper" and 0 < expected < 2.3e-308
                elif 0 < expected < 2.3e-308:  # a subnormal estimate or lower end prints as 0
                    assert printed == 0.0 and side != "upper"
                else:
                    assert printed == pytest.approx(expected, rel=1e-5) or (math.isnan(printed) and math.isnan(expected)) or printed == expected
    assert estimate_lines(epsilons, []) == []
