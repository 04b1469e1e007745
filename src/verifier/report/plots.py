"""δ(ε) curves of every method's upper and lower bounds on a log scale, with a claim marked.

matplotlib is optional (the ``plot`` extra) and imported only when a plot is drawn, with the Agg
backend (no display needed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Sequence

import numpy as np

from verifier._files import atomic_output
from verifier._types import Direction, Side
from verifier.errors import InvalidArgument

__all__ = ["Curve", "plot_delta_curves", "plot_tradeoff", "pyplot", "save_figure", "legend_outside"]


@dataclass(frozen=True)
class Curve:
    """One method's bound on one side, in one direction, at the plot's grid: δ at each ε, or (trade-off
    plots) TPR at each FPR."""

    method: str
    direction: Direction
    side: Side
    values: tuple[float, ...]

    @property
    def label(self) -> str:
        return f"{self.method} {self.direction.value} {self.side.value}"


def pyplot():
    """matplotlib's pyplot on the non-interactive Agg backend (files only, no screen needed)."""
    try:
        import matplotlib
    except ImportError:
        raise InvalidArgument("plot", "matplotlib", "is not installed", fix="pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def legend_outside(fig, ax, fontsize: float = 7) -> None:
    """The legend to the right of the axes, outside them, so that it never covers a curve (issue 19:
    matplotlib's "best" placement covered curves of ``verifier compare``); the figure is widened by
    the legend's width and laid out again."""
    legend = ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    fig.canvas.draw()
    legend_width = legend.get_window_extent().width / fig.dpi
    width, height = fig.get_size_inches()
    fig.set_size_inches(width + legend_width, height)
    fig.tight_layout()


def save_figure(fig, target, option: str) -> None:
    """Write ``fig`` to ``target`` and close it; a path that cannot be written is an invalid
    ``option`` (exit status 2 on the command line), not a traceback."""
    try:
        if isinstance(target, (str, os.PathLike)):
            fmt = Path(target).suffix.lstrip(".") or None
            with atomic_output(target, option, mode="wb") as handle:  # an interrupted run leaves no partial image
                fig.savefig(handle, format=fmt)
        else:  # a file object the caller owns (an in-memory buffer)
            fig.savefig(target)
    except InvalidArgument:
        raise  # atomic_output's own answer already names the option and the reason (issue 30.5)
    except (OSError, ValueError) as exc:
        raise InvalidArgument(option, str(target), f"cannot be written ({exc})") from None
    finally:
        pyplot().close(fig)


#: Decades of δ shown below the largest value: an upper bound of ~1e-308 where δ is exactly 0 (a
#: ball around zero) would otherwise squeeze every other curve into the top of the picture.
DECADES_SHOWN = 20


def _log_limits(curves: Sequence[Curve], claim: tuple[float, float] | None) -> tuple[float, float]:
    """(bottom, top) of the log δ axis: from the smallest positive value, but at most
    :data:`DECADES_SHOWN` decades below the largest, and always two decades below the claim."""
    values = np.array([v for c in curves for v in c.values], dtype=float)
    positive = values[np.isfinite(values) & (values > 0)]
    top = float(positive.max()) if positive.size else 1.0
    bottom = max(float(positive.min()) if positive.size else top * 1e-6, top * 10.0**-DECADES_SHOWN)
    if claim is not None:
        top = max(top, claim[1])
        bottom = min(bottom, claim[1] / 100.0)
    return bottom / 2.0, top * 2.0


def plot_delta_curves(
    epsilons: Sequence[float],
    curves: Sequence[Curve],
    path: str | Path | BinaryIO,
    *,
    claim: tuple[float, float] | None = None,
    title: str = "",
) -> Path | BinaryIO:
    """Draw δ(ε) for every curve (upper bounds solid, lower bounds dashed, one colour per method and
    direction) on a logarithmic δ axis, mark ``claim`` = (ε, δ) with a star and guide lines, and
    save the figure to ``path`` (format from its suffix; a binary file object gets a PNG). Zero values cannot be shown on a log axis
    and are left out of the line; values more than :data:`DECADES_SHOWN` decades below the largest
    fall below the axis. Returns the path written."""
    target = path if hasattr(path, "write") else Path(path)
    eps = np.asarray(epsilons, dtype=float)
    fig, ax, colour_of = _axes(curves)
    for curve in curves:
        values = np.asarray(curve.values, dtype=float)
        shown = np.where(values > 0, values, np.nan)
        colour = colour_of(curve.method, curve.direction.value)
        style = "-" if curve.side is Side.UPPER else "--"
        marker = "v" if curve.side is Side.UPPER else "^"
        ax.plot(eps, shown, style, color=colour, marker=marker, markersize=3, linewidth=1.2, label=curve.label)
    if claim is not None:
        eps_claim, delta_claim = claim
        ax.axhline(delta_claim, color="black", linestyle=":", linewidth=0.8)
        ax.axvline(eps_claim, color="black", linestyle=":", linewidth=0.8)
        ax.plot([eps_claim], [delta_claim], marker="*", color="crimson", markersize=14, linestyle="none",
                label=f"claim (ε={eps_claim:g}, δ={delta_claim:g})")
    ax.set_yscale("log")
    ax.set_ylim(*_log_limits(curves, claim))
    return _finish(fig, ax, target, "ε", "δ(ε)", title or "bounds on δ(ε): upper (solid), lower (dashed)")


def plot_tradeoff(
    fprs: Sequence[float],
    curves: Sequence[Curve],
    path: str | Path | BinaryIO,
    *,
    claim: tuple[float, float] | None = None,
    title: str = "",
) -> Path | BinaryIO:
    """Draw the attacker's TPR against FPR on log–log axes: per method and direction the band between
    the rigorous lower and upper bound shaded, the upper bound solid and the lower dashed, the
    coin flip TPR = FPR dotted, and ``claim`` = (FPR, TPR) marked with a star. Saved like
    :func:`plot_delta_curves`; returns the path written."""
    target = path if hasattr(path, "write") else Path(path)
    x = np.asarray(fprs, dtype=float)
    fig, ax, colour_of = _axes(curves)
    for key in sorted({(c.method, c.direction.value) for c in curves}):
        colour = colour_of(*key)
        sides = {c.side: np.asarray(c.values, dtype=float) for c in curves if (c.method, c.direction.value) == key}
        if Side.LOWER in sides and Side.UPPER in sides:
            ax.fill_between(x, sides[Side.LOWER], sides[Side.UPPER], color=colour, alpha=0.3, linewidth=0)
        for side, values in sides.items():
            style = "-" if side is Side.UPPER else "--"
            ax.plot(x, np.where(values > 0, values, np.nan), style, color=colour, linewidth=1.2, label=f"{key[0]} {key[1]} {side.value}")
    ax.plot(x, x, ":", color="grey", linewidth=0.8, label="coin flip (TPR = FPR)")
    if claim is not None:
        ax.plot([claim[0]], [claim[1]], marker="*", color="crimson", markersize=14, linestyle="none",
                label=f"claim TPR <= {claim[1]:g} at FPR {claim[0]:g}")
    positive = x[x > 0]
    if positive.size and positive.min() < positive.max():
        ax.set_xscale("log")
        ax.set_yscale("log")
    title = title or "membership-inference trade-off: rigorous upper (solid) and lower (dashed) bounds"
    return _finish(fig, ax, target, "false-positive rate α (non-members flagged)", "true-positive rate 1 − β(α) (members flagged)", title)


def _axes(curves: Sequence[Curve]):
    """(figure, axes, colour of (method, direction)): one colour per method and direction."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    keys = sorted({(c.method, c.direction.value) for c in curves})
    return fig, ax, lambda method, direction: colours[keys.index((method, direction)) % len(colours)]


def _finish(fig, ax, target, xlabel: str, ylabel: str, title: str):
    """Label, grid, legend outside, save to ``target``; returns ``target``."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    legend_outside(fig, ax, fontsize=8)
    save_figure(fig, target, "plot")
    return target
