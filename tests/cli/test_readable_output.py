"""Readable output (issue 32): tables within 120 columns, a method the time budget stopped marked
"cut" (not "did not apply"), and schemes named in words, not Python reprs."""

from __future__ import annotations

import json

from verifier._types import Bracket
from verifier.audit import AuditReport, AuditRow
from verifier.cli import main
from verifier.cli._audit import report_lines
from verifier.cli._table import TABLE_WIDTH

LONGEST_ACCOUNTANT = "pld_accounting gaussian_allocation_epsilon_range (upper)"
LONG_CASE = "gaussian(sigma=4, sensitivity=1) without_replacement(dataset_size=1000, batch_size=1000, steps=100), δ=1e-05"


def test_audit_table_fits_120_columns():
    """Catches: one line per row with the case appended (243 characters in the issue). Only the
    copyable reproducer command may be longer."""
    rows = [
        AuditRow(LONGEST_ACCOUNTANT, "add_or_remove", LONG_CASE, 14.132226163159334, Bracket(33.09900130954965, 33.10473), "UNSOUND",
                 reproducer="verifier certify " + "--flag value " * 20, verdict="VIOLATED"),
        AuditRow("dp_accounting RdpAccountant", "replace_one", "gaussian(sigma=1, sensitivity=1) single(), δ=1e-05", 0.0462903, Bracket(0.0146246, 0.0164066), "sound"),
    ]
    lines = report_lines(AuditReport("peer", tuple(rows)))
    assert all(len(line) <= TABLE_WIDTH for line in lines if not line.startswith("  reproduce: "))
    assert LONG_CASE in lines and any(line.split()[:4] == ["UNSOUND", "add_or_remove", "14.1322", "[33.099,"] for line in lines)
    assert LONGEST_ACCOUNTANT in " ".join(" ".join(lines).split())  # wrapped at the end of its line, never cut


def test_compare_says_cut_by_the_time_budget(tmp_path, capsys):
    """--time-budget 0: every method of cost >= 1 and the Poisson curve are stopped before giving a
    bound. Catches: the table/figure calling that "did not apply", a cut method missing from the
    table altogether, the Poisson curve running outside the budget, a table wider than 120."""
    args = ["compare", "--sigma-min", "1", "--sigma-max", "2", "--points", "2", "--steps", "10", "--delta", "1e-6", "--time-budget", "0"]
    assert main([*args, "--json"]) == 0
    series = {(s["label"], s["side"]): s for s in json.loads(capsys.readouterr().out)["series"]}
    for key in (("allocation-pld", "upper"), ("allocation-pld", "lower"), ("decomposition", "upper"), ("Poisson rate k/t (PLD)", "upper")):
        assert series[key]["values"] == [None, None] and series[key]["cut_by_time_budget"] == [True, True], key
    assert main([*args, "--out", str(tmp_path / "c.png")]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= TABLE_WIDTH for line in out.splitlines())
    assert " cut " in out and "cut: stopped or not started because --time-budget was spent" in out
    assert (tmp_path / "c.png").stat().st_size > 1000  # a figure of no bound is drawn, not a matplotlib error


def test_bounds_title_names_the_scheme_in_words(capsys):
    """Catches: `bounds` titles that print the model's repr (Single(pair=Gaussian(…)), MatrixMechanism(… Strategy(…)))."""
    assert main(["bounds", "--sigma", "2", "--scheme", "matrix", "--matrix", "bsr", "--bands", "2", "--batches", "2", "--points", "2",
                 "--method", "matrix-partition", "--json"]) == 0
    title = json.loads(capsys.readouterr().out)["scheme"]
    assert title == "gaussian(sigma=2, sensitivity=1) matrix(batches=2, epochs=1, matrix=bsr, bands=2), add_or_remove"


def test_compare_figure_title_stays_inside_the_figure(tmp_path, monkeypatch, capsys):
    """The figure's title is no wider than its axes, so it stays inside the figure however the legend
    beside it shrinks them. Catches: one long subtitle line (~1100 px at 9 pt), centred on axes ~900 px
    wide, ran off the figure's left edge in the README's compare figure (clipped in the PNG)."""
    import verifier.cli._compare as compare

    saved = []
    real_save = compare.save_figure

    def keep(fig, path, option):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        saved.extend((ax.title.get_window_extent(renderer), ax.get_window_extent(renderer), fig.bbox) for ax in fig.axes)
        return real_save(fig, path, option)

    monkeypatch.setattr(compare, "save_figure", keep)
    args = ["compare", "--sigma-min", "1", "--sigma-max", "2", "--points", "2", "--steps", "10", "--delta", "1e-6", "--time-budget", "0"]
    assert main([*args, "--out", str(tmp_path / "c.png")]) == 0
    capsys.readouterr()
    assert saved
    for title, axes, figure in saved:
        assert title.width <= axes.width and figure.x0 <= title.x0 and title.x1 <= figure.x1, (title, axes, figure)


def test_audit_class_table_fits_120_columns():
    """Issue 40: an unjudged class's reason (dp_accounting's note on SampledWithReplacementDpEvent made
    rows 222 wide) and a class name longer than the old 36-character column. Catches the reason
    appended on one line, and a wrapped reason that loses words."""
    why = ("verifier bounds it (with_replacement, replace-one) but neither the RDP nor the PLD accountant of dp_accounting 0.6 "
           "accepts it: nothing to audit")
    group = "PoissonSampledDpEvent(MixtureOfGaussiansDpEvent)"
    rows = (AuditRow("dp_accounting PLDAccountant", "add_or_remove", "case", 1.0, Bracket(0.9, 1.1), "sound", group=group),)
    lines = report_lines(AuditReport("peer", rows, unjudged=(("SampledWithReplacementDpEvent", why),)))
    start = lines.index("") + 1
    assert all(len(line) <= TABLE_WIDTH for line in lines)
    assert " ".join(" ".join(lines[start:]).split()).endswith(" ".join(why.split()))
    assert any(line.split()[:5] == [group, "1", "0", "1", "0"] for line in lines)
