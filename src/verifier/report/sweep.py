"""Pictures and pages of a sweep: ε(δ) against one swept parameter, one line per method's upper
bound, with the certified band (best rigorous lower to best rigorous upper bound) shaded; one panel
per combination of the other swept parameters.

A method's line is an upper bound on the claim's ε only where it bounds every direction the
neighbouring relation requires (ε of add-or-remove is the maximum over the directions: Feldman &
Shenfeld, Def 2.2). A method that bounds one direction only (``max_loss`` gives add only under
Poisson sampling) is not drawn: its value can sit far below the certified band (1.005 against
[1.5102, 1.5110] at σ = 0.8, 100 steps; issue 41) and would read as the answer. It is named in a
note under the legend instead."""

from __future__ import annotations

import base64
import io
import itertools
import math
from pathlib import Path
from typing import Any, BinaryIO, Sequence

from verifier.certify.sweep import as_float
from verifier.errors import InvalidArgument
from verifier.report.plots import pyplot, save_figure

__all__ = ["plot_sweep", "render_sweep_report", "MAX_PANELS"]

#: Most panels one plot draws (combinations of the swept parameters other than the x axis).
MAX_PANELS = 12

#: The columns of a sweep table that are not a swept parameter or a method's bound.
_SUMMARY = ("epsilon_lower", "epsilon_upper", "verdict", "seconds")


def _method_columns(header: Sequence[str]) -> dict[str, dict[str, str]]:
    """Upper-bound columns ``method:direction:upper`` by method, then direction."""
    out: dict[str, dict[str, str]] = {}
    for column in header:
        parts = column.split(":")
        if len(parts) >= 3 and parts[-1] == "upper":
            out.setdefault(":".join(parts[:-2]), {})[parts[-2]] = column
    return out


def _directions(header: Sequence[str]) -> list[str]:
    """The directions some method bounds: those the sweep's relation requires (the PLD and RDP
    methods bound every required direction, so none is missed)."""
    return sorted({c.split(":")[-2] for c in header if c.count(":") >= 2})


def plot_sweep(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    names: Sequence[str],
    x: str,
    target: str | Path | BinaryIO,
    *,
    title: str = "",
    directions: Sequence[str] | None = None,
) -> None:
    """Draw the sweep (module docstring) to ``target`` (a path, format from its suffix, or a binary
    file object, PNG). A method's line is the maximum of its upper bounds over ``directions`` (the
    relation's; default: every direction some method bounds), drawn only for a method that bounds
    all of them; the others are named in a note. Every legend entry says its side and directions."""
    if x not in names:
        raise InvalidArgument("x", x, f"must be one of the swept parameters: {', '.join(names)}")
    plt = pyplot()
    others = [n for n in names if n != x]
    index = {c: i for i, c in enumerate(header)}
    groups: dict[tuple, list[Sequence[Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[index[n]] for n in others), []).append(row)
    if len(groups) > MAX_PANELS:
        raise InvalidArgument("x", x, f"leaves {len(groups)} panels (combinations of {', '.join(others)}); at most {MAX_PANELS}")
    required = list(directions) if directions is not None else _directions(header)
    over = " and ".join(required)
    by_method = _method_columns(header)
    methods = {m: [cols[d] for d in required] for m, cols in by_method.items() if all(d in cols for d in required)}
    apart = {m: sorted(cols) for m, cols in by_method.items() if m not in methods}
    columns = min(3, max(1, len(groups)))
    lines = math.ceil(max(1, len(groups)) / columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.2 * columns, 3.3 * lines), dpi=110, squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (group, members) in itertools.zip_longest(axes.flat, groups.items(), fillvalue=(None, None)):
        if members is None:
            ax.axis("off")
            continue
        members = sorted(members, key=lambda r: as_float(r[index[x]]))
        xs = [as_float(r[index[x]]) for r in members]
        low = [as_float(r[index["epsilon_lower"]]) for r in members]
        high = [as_float(r[index["epsilon_upper"]]) for r in members]
        shown_low = [lo if math.isfinite(lo) else 0.0 for lo in low]
        ax.fill_between(xs, shown_low, high, color="tab:green", alpha=0.25, label=f"certified band: best lower to best upper bound, max over {over}")
        for colour, (method, cols) in zip(itertools.cycle(colours), methods.items()):
            ys = [max(as_float(r[index[c]]) for c in cols) for r in members]
            ax.plot(xs, ys, "-o", color=colour, markersize=3, linewidth=1.1, label=f"{method} upper bound, max over {over}")
        label = ", ".join(f"{n}={v:g}" if isinstance(v, (int, float)) else f"{n}={v}" for n, v in zip(others, group))
        ax.set_title(label or "ε(δ)", fontsize=9)
        ax.set_xlabel(x)
        ax.set_ylabel("ε(δ)")
        ax.grid(True, alpha=0.3)
    legend = axes.flat[0].legend(fontsize=7)
    if apart:
        named = "; ".join(f"{m} ({', '.join(ds)} only)" for m, ds in apart.items())
        legend.set_title(f"not drawn, one direction only (not a bound on ε of {over}): {named}", prop={"size": 6})
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save_figure(fig, target, "plot")


def render_sweep_report(header: Sequence[str], rows: Sequence[Sequence[Any]], names: Sequence[str], x: str, *, title: str, store: str) -> str:
    """A self-contained HTML page of the sweep: the table and the plot (inline PNG)."""
    from verifier.report.html import page, table, text

    buffer = io.BytesIO()
    plot_sweep(header, rows, names, x, buffer, title=title)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    numeric = tuple(i for i, c in enumerate(header) if c != "verdict")
    body = (
        f"<h1>verifier sweep</h1><p>{text(title)}</p><p class=\"muted\">{len(rows)} points from the store {text(store)}; "
        "bounds are rigorous bounds on ε at the claimed δ, the band runs from the best lower to the best upper bound.</p>"
        f'<img class="plot" alt="ε(δ) against {text(x)}" src="data:image/png;base64,{data}">'
        + table([text(c) for c in header], [[text(_cell(v)) for v in row] for row in rows], numeric=numeric)
    )
    return page(f"verifier sweep: {title}", body)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.8g}"
    return "—" if value is None else str(value)
