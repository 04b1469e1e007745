"""Plots that cannot mislead (issue 41): every drawn bound is labelled with its side and the
directions it covers, and an upper bound on one direction only is never drawn as the claim's
answer. The figures are read back from matplotlib's artists (the plotted numbers and legend texts),
not from the image."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from verifier.certify.sweep import ResultStore, evaluate_point, flat_rows, grid_points, run_sweep  # noqa: E402

#: The issue's sweep case: σ = 0.8, 100 Poisson steps at rate 0.01, δ = 1e-5, where max_loss bounds
#: the add direction only (1.005), below the certified ε in [1.5102, 1.5110].
BASE = {"mechanism": {"name": "gaussian", "sigma": 0.8}, "scheme": {"name": "poisson", "rate": 0.01, "steps": 100}, "delta": 1e-5}


@pytest.fixture
def captured(monkeypatch):
    """The figures the plotting functions would save, kept open for reading."""
    figures = []
    import verifier.cli._compare as compare
    import verifier.report.sweep as sweep

    for module in (sweep, compare):
        monkeypatch.setattr(module, "save_figure", lambda fig, target, option: figures.append(fig))
    yield figures
    from verifier.report.plots import pyplot

    for fig in figures:
        pyplot().close(fig)


def _drawn(fig):
    """(label, y values) of every drawn line of every axes."""
    return [(line.get_label(), np.asarray(line.get_ydata(), dtype=float)) for ax in fig.axes for line in ax.get_lines()]


def test_sweep_plot_draws_no_one_direction_bound_below_the_band(tmp_path, captured):
    # the mutant: the old plot drew "max_loss upper" at 1.005 below the band [1.5102, 1.5110]
    from verifier.report.sweep import plot_sweep

    store = ResultStore(tmp_path / "s.sqlite")
    points = grid_points(BASE, {"sigma": [0.8, 1.0]})
    swept = run_sweep(points, store)
    header, rows = flat_rows(store, swept.keys, ["sigma"])
    assert "max_loss:add:upper" in header and "max_loss:remove:upper" not in header  # the case is still the issue's
    plot_sweep(header, rows, ["sigma"], "sigma", tmp_path / "p.png")  # directions: those the methods bound (add, remove)
    (fig,) = captured
    lows = [float(r[header.index("epsilon_lower")]) for r in rows]
    lines = _drawn(fig)
    assert lines
    for label, ys in lines:
        assert all(y >= low for y, low in zip(ys, lows)), f"{label} drawn below the certified lower bound"
        assert "upper bound" in label and "add and remove" in label
    legend = fig.axes[0].get_legend()
    texts = [t.get_text() for t in legend.get_texts()] + [legend.get_title().get_text()]
    assert any("max_loss (add only)" in t for t in texts)  # named apart, not drawn
    assert not any(label.startswith("max_loss") for label, _ in lines)


def test_compare_plot_draws_no_one_direction_upper_bound(tmp_path, captured):
    from verifier._types import Side
    from verifier.cli._compare import Series, _plot

    sigmas = [0.8, 1.0]
    series = [
        Series("pld", Side.UPPER, (1.5110, 0.7181)),
        Series("pld", Side.LOWER, (1.5102, 0.7178)),
        Series("max_loss (add only)", Side.UPPER, (1.005, 0.8)),
        Series("rdp (add only)", Side.LOWER, (1.2, 0.5)),
    ]
    _plot(sigmas, series, str(tmp_path / "c.png"), "test")
    (fig,) = captured
    labels = [label for label, _ in _drawn(fig)]
    assert not any(label.startswith("max_loss") for label in labels)
    assert any(label.startswith("rdp (add only)") and "lower bound" in label for label in labels)  # a lower bound on the maximum too
    assert all(("upper bound" in label) or ("lower bound" in label) for label in labels)
    assert "max_loss (add only)" in fig.axes[0].get_title()
