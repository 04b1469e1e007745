"""``--time-budget`` on every command that can run long (issue 41: epsilon, delta, bounds,
calibrate and sweep refused it), with certify's partial-result behaviour: the expensive methods
are cut, the output says which, the closed forms still answer, and nothing cut is stored.
(Tests never assert wall-clock time; the budget's own interrupt is tested in tests/certify.)"""

from __future__ import annotations

import json
import sys

import pytest

from verifier.cli import main

#: A Poisson run where the PLD method takes a while (it is what the budget must cut).
POISSON = ["--sigma", "0.8", "--scheme", "poisson", "--rate", "0.01", "--steps", "1000"]


@pytest.mark.parametrize("command, at", [("epsilon", ["--delta", "1e-5"]), ("delta", ["--epsilon", "2"])])
def test_profile_commands_report_what_the_budget_cut(command, at, capsys):
    # the mutant: the budget accepted but not passed to collect_bounds (pld would run and be listed)
    assert main([command, *POISSON, *at, "--time-budget", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any(entry.startswith("pld") for entry in out["cut_by_time_budget"])
    assert not any(b["method"] == "pld" for b in out["bounds"])
    assert main([command, *POISSON, *at, "--json"]) == 0
    assert any(b["method"] == "pld" for b in json.loads(capsys.readouterr().out)["bounds"])


def test_bounds_grid_shares_the_budget(capsys):
    assert main(["bounds", *POISSON, "--points", "3", "--time-budget", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cut_by_time_budget"] and not any(c["method"] == "pld" for c in out["curves"])


def test_calibrate_answers_with_the_bracket_proven_in_time(capsys):
    # with no time at all the first probe is INCONCLUSIVE: status 3 naming the budget, not a hang
    argv = ["calibrate", "--scheme", "poisson", "--rate", "0.01", "--steps", "1000", "--epsilon", "1", "--delta", "1e-5", "--json"]
    assert main([*argv, "--time-budget", "0"]) == 3
    assert "time budget" in capsys.readouterr().err


def test_sweep_stores_no_point_the_budget_cut(tmp_path, capsys):
    # the mutant: a cut point stored, so that resuming would keep its partial bracket for ever
    store = tmp_path / "s.sqlite"
    argv = ["sweep", *POISSON[:2], "--scheme", "poisson", "--rate", "0.01", "--grid", "steps=100,1000", "--delta", "1e-5", "--store", str(store), "--json"]
    assert main([*argv, "--time-budget", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["computed"] == 0 and out["cut_by_time_budget"] == 2 and out["rows"] == []
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["computed"] == 2


def test_sweep_runs_without_dask(tmp_path, monkeypatch, capsys):
    # issue 41: after `pip install .` (no dask), `sweep --workers 1` exited 2 "needs dask.distributed"
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # any import of it now fails
    argv = ["sweep", "--scheme", "poisson", "--rate", "0.01", "--steps", "100", "--grid", "sigma=1,2", "--delta", "1e-5", "--json"]
    assert main([*argv, "--store", str(tmp_path / "a.sqlite"), "--workers", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["computed"] == 2
    assert main([*argv, "--store", str(tmp_path / "b.sqlite")]) == 0  # the default needs no dask either
    capsys.readouterr()
    assert main([*argv, "--store", str(tmp_path / "c.sqlite"), "--workers", "2"]) == 2  # scaling out does, and says so
    assert "dask" in capsys.readouterr().err


def _parsers():
    import argparse

    from verifier.cli import build_parser

    full = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(full.choices)


@pytest.mark.parametrize("name", sorted(_parsers()))
def test_every_command_takes_a_budget(name):
    # catches a command added (or left) without --time-budget (issue 41: five commands refused it)
    assert any("--time-budget" in action.option_strings for action in _parsers()[name]._actions)


def test_tradeoff_lists_what_the_budget_cut(capsys):
    assert main(["tradeoff", *POISSON, "--fpr", "0.01,0.1", "--time-budget", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any("pld" in line for line in out["cut_by_time_budget"])
    assert not any(b["method"] == "pld" for point in out["points"] for b in point["bounds"])


def test_a_command_without_a_partial_answer_stops_whole(capsys):
    # demo has no partial answer: with no time it stops, prints nothing, and says so (status 3)
    assert main(["demo", "--report", "", "--time-budget", "0.001"]) == 3
    out, err = capsys.readouterr()
    assert out == "" and "--time-budget" in err and err.count("\n") == 1
