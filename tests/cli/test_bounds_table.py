"""``verifier bounds`` prints a table that fits TABLE_WIDTH (120) columns whatever the number of
curves, with a key from column number to curve (issue 19: the old table, one 34-character column
per curve, was 466 characters wide for allocation)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verifier._types import Direction, Side
from verifier.cli._bounds import TABLE_WIDTH, table_lines
from verifier.report.plots import Curve

EXTREMES = [0.0, 4.94e-324, 1.0, 0.0514215, 1.12763392e-29, math.inf, 3.62303e-06]


@pytest.mark.parametrize("count", [1, 8, 9, 13, 30])
def test_table_fits_and_reads_back(count):
    epsilons = np.linspace(0.0, 8.0, len(EXTREMES))
    curves = [
        Curve(f"method-with-a-long-name-{i}", Direction.ADD if i % 2 else Direction.REMOVE, Side.UPPER, tuple(np.roll(EXTREMES, i)))
        for i in range(count)
    ]
    lines = table_lines(epsilons, curves)
    assert max(len(line) for line in lines) <= TABLE_WIDTH
    key = " ".join(line.strip() for line in lines if not line.lstrip().startswith(("ε", "[")) and not line[:8].strip().replace(".", "").isdigit())
    for i, curve in enumerate(curves):
        assert f"[{i + 1}] {curve.label}" in key
    # every value is printed, to 6 significant digits, under its own column number
    read: dict[int, list[float]] = {}
    header: list[int] = []
    for line in lines:
        cells = line.split()
        if cells and cells[0] == "ε":
            header = [int(c.strip("[]")) for c in cells[1:]]
        elif header and cells and not line.startswith("key"):
            try:
                values = [float(c) for c in cells]
            except ValueError:
                continue
            for column, value in zip(header, values[1:]):
                read.setdefault(column, []).append(value)
    for i, curve in enumerate(curves):
        got = read[i + 1]
        assert len(got) == len(EXTREMES)
        for value, expected in zip(got, curve.values):
            assert value == pytest.approx(expected, rel=1e-5) or (value == 0.0 and expected < 1e-300) or value == expected


def test_whole_output_fits_for_a_long_scheme_title(capsys):
    """The title line names the scheme's repr, 124 characters for the README's check-in example:
    it wraps at TABLE_WIDTH too (a bare print of the title fails this)."""
    from verifier.cli import main

    status = main(["bounds", "--sigma", "1", "--sensitivity", "2", "--scheme", "checkin", "--users", "1000", "--rate", "0.1",
                   "--rounds", "100", "--aggregation", "sum", "--points", "2"])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0
    assert "rounds=100, aggregation='sum')" in out.replace("\n    ", " ")
    assert max(len(line) for line in out.splitlines()) <= TABLE_WIDTH
