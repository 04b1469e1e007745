"""``verifier certify``, ``verifier demo`` and ``verifier bounds`` as a user runs them: the issue's
acceptance claims, exit statuses, one-line errors, certificates, plots and the README's command."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import verifier.certify.portfolio as portfolio
import verifier.cli._certify as cli_certify
from verifier._types import Bound, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.certify.registry import all_methods
from verifier.cli import main

ROOT = Path(__file__).resolve().parents[2]
GAUSSIAN = ["certify", "--mechanism", "gaussian", "--sigma", "1", "--delta", "1e-5"]
POISSON = ["certify", "--mechanism", "gaussian", "--sigma", "1", "--scheme", "poisson", "--rate", "0.01", "--steps", "1000", "--delta", "1e-5"]
PLD_REGISTERED = "pld" in {m.name for m in all_methods()}


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse rejects a malformed flag itself (status 2, one line)
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv, status, verdict",
    [
        (GAUSSIAN + ["--epsilon", "4.3772"], 0, "CERTIFIED"),
        (GAUSSIAN + ["--epsilon", "4.30"], 1, "VIOLATED"),
        (GAUSSIAN + ["--epsilon", "-0.0048"], 1, "VIOLATED"),
        (["certify", "--sigma", "2", "--neighboring", "replace_one", "--epsilon", "2.166", "--delta", "1e-5"], 1, "VIOLATED"),
    ],
)
def test_gaussian_acceptance_claims(capsys, argv, status, verdict):
    code, out, err = run(capsys, *argv)
    assert (code, err) == (status, "")
    assert out.startswith(verdict + ":")


@pytest.mark.skipif(not PLD_REGISTERED, reason="needs the PLD method 'pld' (issue: PLD engine), not yet registered in ADAPTERS")
@pytest.mark.parametrize("epsilon, status", [("2.10", 0), ("1.70", 1)])
def test_poisson_acceptance_claims(capsys, epsilon, status):
    code, out, _ = run(capsys, *POISSON, "--epsilon", epsilon, "--json")
    assert code == status
    cert = json.loads(out)
    assert "pld" in cert["methods_run"]


@pytest.fixture
def nothing_computed(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("a malformed claim must be rejected before anything is computed")

    monkeypatch.setattr(cli_certify, "certify", fail)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["certify", "--sigma", "1", "--epsilon", "1"], "delta"),
        (["certify", "--sigma", "1", "--epsilon", "1", "--delta", "1.5"], "delta=1.5"),
        (["certify", "--sigma", "abc", "--epsilon", "1", "--delta", "1e-5"], "--sigma"),
        (["certify", "--sigma", "1", "--scheme", "bogus", "--epsilon", "1", "--delta", "1e-5"], "--scheme"),
        (["certify", "--sigma", "1", "--scheme", "poisson", "--rate", "0.1", "--epsilon", "1", "--delta", "1e-5"], "scheme.steps"),
        (["certify", "--mechanism", "laplace", "--sigma", "1", "--epsilon", "1", "--delta", "1e-5"], "--sigma"),  # refused before the missing --scale
        (["certify", "--sigma", "1", "--scheme", "allocation", "--steps", "3", "--neighboring", "replace_one", "--epsilon", "1", "--delta", "1e-5"], "neighboring"),
        (["certify", "--sigma", "1", "--epsilon", "1", "--delta", "1e-5", "--time-budget", "-1"], "time_budget"),
        (["certify", "--example", "gaussian-certified", "--epsilon", "1"], "epsilon"),
    ],
)
def test_malformed_flag_claims_exit_2_with_one_line(capsys, nothing_computed, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err


@pytest.mark.parametrize(
    "content, needle",
    [
        ({"mechanism": {"name": "gaussian", "sigma": 1}, "scheme": {"name": "single"}, "epsilon": 1}, "delta"),
        ({"mechanism": {"name": "gaussian", "sigma": 1}, "scheme": {"name": "single"}, "epsilon": 1, "delta": 1.5}, "delta=1.5"),
        ({"mechanism": {"name": "gaussian", "sigma": "abc"}, "scheme": {"name": "single"}, "epsilon": 1, "delta": 1e-5}, "mechanism.sigma='abc'"),
        ({"mechanism": {"name": "gaussian", "sigma": 1}, "scheme": {"name": "bogus"}, "epsilon": 1, "delta": 1e-5}, "scheme.name='bogus'"),
        ({"mechanism": {"name": "gaussian", "sigma": 1}, "scheme": {"name": "single"}, "epsilon": 1, "delta": 1e-5, "eps": 2}, "eps"),
        ("not json", "not valid JSON"),
    ],
)
def test_malformed_claim_files_exit_2_with_one_line(capsys, tmp_path, nothing_computed, content, needle):
    path = tmp_path / "claim.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    code, out, err = run(capsys, "certify", str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err


def test_claim_file_json_certificate(capsys, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from verifier.certify.certificate import schema

    claim = {"mechanism": {"name": "gaussian", "sigma": 1.0}, "scheme": {"name": "composed", "times": 4},
             "neighboring": "remove", "epsilon": 1.0, "delta": 0.5, "source": "test"}
    path = tmp_path / "claim.json"
    path.write_text(json.dumps(claim))
    code, out, _ = run(capsys, "certify", str(path), "--json")
    cert = json.loads(out)
    jsonschema.Draft202012Validator(schema()).validate(cert)
    # σ=1 composed 4 times is σ=1/2: δ(1) = 0.6318... > 0.5 (Steinke 2022, Cor 8 with Δ/σ = 2)
    assert code == 1 and cert["verdict"] == "VIOLATED" and list(cert["directions"]) == ["remove"]
    assert cert["claim"]["source"] == "test"


class Contradictory(Method):
    name = "contradictory"
    citation = "a broken method"
    returns = frozenset({Guarantee.EXACT})
    cost = 0

    def supports(self, scheme):
        return True

    def delta_bounds(self, scheme, epsilon, direction):
        return [Bound(0.2, Side.LOWER, direction, Quantity.DELTA, epsilon, "too-high-lower", self.citation),
                Bound(0.1, Side.UPPER, direction, Quantity.DELTA, epsilon, "too-low-upper", self.citation)]

    def epsilon_bounds(self, scheme, delta, direction):
        return []


def test_inconsistent_bounds_exit_4_naming_both(capsys, monkeypatch):
    monkeypatch.setattr(portfolio, "methods_for", lambda scheme: [Contradictory()])
    code, out, err = run(capsys, *GAUSSIAN, "--epsilon", "1")
    assert code == 4 and out == ""
    assert "too-high-lower" in err and "too-low-upper" in err


def test_inconclusive_example_exits_3(capsys):
    code, out, _ = run(capsys, "certify", "--example", "gaussian-at-resolution")
    assert code == 3 and out.startswith("INCONCLUSIVE")


def test_time_budget_zero_runs_only_closed_forms(capsys):
    code, out, _ = run(capsys, "certify", "--example", "gaussian-at-resolution", "--time-budget", "0", "--json")
    cert = json.loads(out)
    closed_forms = {m.name for m in all_methods() if m.cost == 0}
    assert code == 3 and "exact" in cert["methods_run"] and set(cert["methods_run"]) <= closed_forms
    costly = [m.name for m in all_methods() if m.cost > 0 and m.supports(cert_scheme())]
    assert all(any(s.startswith(f"δ: {name}: not run, time budget") for s in cert["skipped"]) for name in costly)


def cert_scheme():
    from verifier.certify.examples import example

    return example("gaussian-at-resolution").parsed().model


def test_demo_json_gives_every_verdict(capsys):
    # the text output and the report are checked in tests/report/test_demo_report.py
    code, out, _ = run(capsys, "demo", "--json", "--report", "")
    assert code == 0
    assert sorted(c["certificate"]["verdict"] for c in json.loads(out)) == ["CERTIFIED", "CERTIFIED", "INCONCLUSIVE", "VIOLATED"]


def test_readme_main_job_command_runs(tmp_path):
    """The command after the install step in the README's "Set up" block, run with this venv (in a
    scratch directory: the demo writes its report there)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(l for l in readme.splitlines() if "pip install ." in l and ".venv/bin/verifier" in l)
    command = line.split("&&")[-1].strip()
    argv = shlex.split(command)
    assert argv[0] == ".venv/bin/verifier"
    script = Path(sys.executable).with_name("verifier")
    done = subprocess.run([str(script), *argv[1:]], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


def test_bounds_table_and_json(capsys):
    code, out, _ = run(capsys, "bounds", "--mechanism", "laplace", "--scale", "1", "--epsilon-max", "2", "--points", "5", "--method", "exact")
    assert code == 0
    rows = [l.split() for l in out.splitlines()[2:7]]
    assert [float(r[0]) for r in rows] == [0.0, 0.5, 1.0, 1.5, 2.0]
    # Laplace(b=1), Δ=1: δ(ε) = 1 − e^{(ε−1)/2} for 0 <= ε <= 1 and 0 beyond (Steinke 2022, Cor 9)
    assert float(rows[1][1]) == pytest.approx(1 - 2.718281828459045 ** (-0.25), rel=1e-5)  # the table prints 6 digits (--json has all)
    assert float(rows[3][1]) == 0.0
    code, out, _ = run(capsys, "bounds", "--example", "gaussian-certified", "--points", "3", "--json", "--method", "exact")
    data = json.loads(out)
    assert code == 0 and data["claim"] == {"epsilon": 4.3772, "delta": 1e-5}
    assert {(c["direction"], c["side"]) for c in data["curves"]} == {("add", "lower"), ("add", "upper"), ("remove", "lower"), ("remove", "upper")}
    code, out, _ = run(capsys, "bounds", "--sigma", "1", "--method", "montecarlo", "--points", "2")  # estimates only, apart
    assert code == 0 and "ESTIMATES of δ(ε)" in out and "key: [1]" not in out
    code, _, err = run(capsys, "bounds", "--sigma", "1", "--method", "montecarlo", "--points", "2", "--plot", "x.png")
    assert code == 2 and "plot" in err and "estimates only" in err


def test_bounds_plot_writes_a_png(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "delta.png"
    code, _, _ = run(capsys, "bounds", "--mechanism", "gaussian", "--sigma", "1", "--epsilon", "4.3772", "--delta", "1e-5",
                     "--points", "9", "--method", "exact", "--plot", str(target))
    assert code == 0
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 10_000


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["bounds", "--sigma", "1", "--points", "1"], "points"),
        (["bounds", "--sigma", "1", "--epsilon-min", "3", "--epsilon-max", "1"], "epsilon_max"),
        (["bounds", "--sigma", "1", "--epsilon", "1"], "delta"),
    ],
)
def test_bounds_rejects_bad_grids(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and needle in err and err.count("\n") == 1
