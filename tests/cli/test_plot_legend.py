"""The plot legend never covers a curve (issue 19: ``verifier compare``'s legend sat on its curves).
Checked geometrically: the drawn legend's box lies right of the axes' box, for as many entries as
``compare`` draws. The mutant (matplotlib's default placement inside the axes) overlaps."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from verifier.report.plots import legend_outside, pyplot  # noqa: E402


def _figure(entries: int):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=100)
    x = np.geomspace(0.3, 10, 20)
    for i in range(entries):
        ax.plot(x, (i + 1) / x, label=f"method number {i} with a long label (upper)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    return plt, fig, ax


@pytest.mark.parametrize("entries", [3, 16])
def test_legend_is_outside_the_axes(entries):
    plt, fig, ax = _figure(entries)
    try:
        legend_outside(fig, ax)
        fig.canvas.draw()
        legend_box, axes_box, figure_box = ax.get_legend().get_window_extent(), ax.get_window_extent(), fig.bbox
        assert legend_box.x0 >= axes_box.x1  # right of the plotting area: no curve under it
        assert legend_box.x1 <= figure_box.x1 + 1  # and inside the saved image
    finally:
        plt.close(fig)


def test_default_placement_would_overlap():
    plt, fig, ax = _figure(16)
    try:
        legend = ax.legend(fontsize=7)
        fig.canvas.draw()
        assert legend.get_window_extent().overlaps(ax.get_window_extent())
    finally:
        plt.close(fig)
