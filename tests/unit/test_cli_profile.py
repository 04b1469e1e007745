"""``verifier delta`` / ``verifier epsilon`` as a user runs them (the issue's acceptance values)."""

import json
import subprocess
import sys

import pytest

from verifier.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv, exact, width",
    [
        (["delta", "--mechanism", "gaussian", "--sigma", "1", "--epsilon", "1"], 0.12693673750664395, 1e-15),
        (["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--delta", "1e-10"], 6.547924066864951, 1e-9),
    ],
)
def test_gaussian_json_brackets_the_exact_value(capsys, argv, exact, width):
    code, out, _ = run(capsys, *argv, "--json")
    data = json.loads(out)
    assert code == 0
    assert data["lower"] <= exact <= data["upper"]
    assert data["upper"] - data["lower"] <= width
    assert {"quantity", "direction", "lower", "upper", "bounds"} <= set(data)
    assert all({"method", "side", "direction", "value"} <= set(b) for b in data["bounds"])


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["delta", "--mechanism", "gaussian", "--sigma", "-1", "--epsilon", "1"], "sigma=-1.0"),
        (["delta", "--mechanism", "gaussian", "--sigma", "abc", "--epsilon", "1"], "--sigma"),
        (["epsilon", "--mechanism", "rr", "--epsilon0", "1", "--delta", "1.5"], "delta=1.5"),
        (["delta", "--mechanism", "laplace", "--epsilon", "1"], "scale"),
        (["delta", "--sigma", "nan", "--epsilon", "1"], "sigma"),
    ],
)
def test_invalid_input_exits_2_with_one_line(capsys, argv, needle):
    with pytest.raises(SystemExit) if "abc" in argv else _no_raise():
        code = main(argv)
        assert code == 2
    out, err = capsys.readouterr()
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


class _no_raise:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_console_script_help_and_version_and_exit_status():
    help_run = subprocess.run([sys.executable, "-m", "verifier", "--help"], capture_output=True, text=True)
    assert help_run.returncode == 0 and "delta" in help_run.stdout
    version = subprocess.run([sys.executable, "-m", "verifier", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("verifier ")
    bad = subprocess.run(
        [sys.executable, "-m", "verifier", "delta", "--mechanism", "gaussian", "--sigma", "-1", "--epsilon", "1"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("mechanism", [["--mechanism", "laplace", "--scale", "2"], ["--mechanism", "rr", "--epsilon0", "1"]])
def test_other_mechanisms_print_a_table(capsys, mechanism):
    code, out, _ = run(capsys, "epsilon", *mechanism, "--delta", "1e-3", "--direction", "add")
    assert code == 0 and "add" in out and "upper" in out
