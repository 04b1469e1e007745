"""``verifier bounds`` prints a table that fits TABLE_WIDTH (120) columns whatever the number of
curves, with a key from column number to curve (issue 19: the old table, one 34-character column
per curve, was 466 characters wide for allocation)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verifier._types import Direction, Side
from verifier.cli._bounds import TABLE_WIDTH, table_lines
from verifier.cli._table import TINY, table_number
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
                values = [_read(c) for c in cells]
            except ValueError:
                continue
            for column, value in zip(header, values[1:]):
                read.setdefault(column, []).append(value)
    for i, curve in enumerate(curves):
        got = read[i + 1]
        assert len(got) == len(EXTREMES)
        for value, expected in zip(got, curve.values):
            if value is TINY:  # a subnormal UPPER bound: printed as "<1e-300", never as round-off digits
                assert 0 < expected < 2.3e-308
            else:
                assert value == pytest.approx(expected, rel=1e-5) or value == expected


def _read(cell: str):
    return TINY if cell == TINY else float(cell)


def test_subnormals_print_toward_safety():
    """Issue 32: no 4.94066e-324 in a table. An UPPER bound that small prints "<1e-300" (still an upper
    bound), a LOWER bound "0" (still a lower bound). Catches: round-off digits printed, or a lower
    bound printed as "<1e-300" (which would read as an upper bound)."""
    curves = [Curve("m", Direction.ADD, Side.UPPER, (5e-324, 0.5)), Curve("m", Direction.ADD, Side.LOWER, (5e-324, 0.25))]
    rows = table_lines(np.array([1.0, 2.0]), curves)[1:3]
    assert rows[0].split() == ["1", TINY, "0"] and rows[1].split() == ["2", "0.5", "0.25"]
    assert table_number(-5e-324, "lower") == ">-1e-300" and table_number(-5e-324, "upper") == "0"
    assert table_number(2.2250738585072014e-308, "upper") == "2.22507e-308"  # the smallest normal prints as it is


def test_whole_output_fits_for_a_long_scheme_title(capsys):
    """The title line names the scheme in words (issue 32: not its Python repr), 122 characters for
    the README's check-in example: it wraps at TABLE_WIDTH too (a bare print of the title fails this)."""
    from verifier.cli import main

    status = main(["bounds", "--sigma", "1", "--sensitivity", "2", "--scheme", "checkin", "--users", "1000", "--rate", "0.1",
                   "--rounds", "100", "--aggregation", "sum", "--points", "2"])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0
    title = " ".join(line.strip() for line in out.split("\n       ε")[0].splitlines())  # the lines above the table
    assert title == "bounds on δ(ε) for gaussian(sigma=1, sensitivity=2) checkin(users=1000, rate=0.1, rounds=100, aggregation=sum), add_or_remove"
    assert max(len(line) for line in out.splitlines()) <= TABLE_WIDTH
