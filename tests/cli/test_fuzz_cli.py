"""Fuzzing the command line and claim files (issue 19): whatever comes in, ``verifier certify``
answers with a status in {0, 1, 2, 3} (4 is a defect and fails the test), never a traceback; 2
always comes with exactly one line naming the offending field or flag; 0 and 1 only with that
verdict printed and every bracket in the certificate ordered (lower <= upper).

Inputs: claim objects whose fields are drawn from extreme floats (subnormals, ±0, ±inf, NaN,
1e±308), huge and negative integers, wrong types (strings, booleans, null, lists, objects), with
unknown fields added and required fields dropped; written in UTF-8, UTF-8 with a BOM, UTF-16,
UTF-32 or Latin-1, sometimes truncated or padded past the size limit. CLI runs draw the same values
as flags. Every run has a time budget, so a valid but expensive claim is cut short, not waited on.

Examples per test: FUZZ_EXAMPLES (25) by default, derandomized like the ``ci`` profile; set the
environment variable VERIFIER_FUZZ_EXAMPLES for a larger run (README, "Fuzzing", has the figures).
``pytest --hypothesis-show-statistics`` lists the outcome classes reached (``event``).

Broken implementations this catches (each was true of the code before issue 19): an exception
escaping ``main`` (Python exits 1 = VIOLATED), a claim reader that only decodes UTF-8, a message
promising a range the validator does not accept, a certificate with an inverted bracket.
"""

from __future__ import annotations

import json
import math
import os
import re

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from verifier.certify.claim import MAX_CLAIM_BYTES, MECHANISMS, SCHEMES
from verifier.cli import main

FUZZ_EXAMPLES = int(os.environ.get("VERIFIER_FUZZ_EXAMPLES", "25"))

#: Each certify run may spend this long on methods of cost >= 1 (the fuzz is about answers, not bounds).
BUDGET_SECONDS = "0.5"

FUZZ_SETTINGS = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("VERIFIER_FUZZ_EXAMPLES") is None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)

EXTREME_FLOATS = [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1e-320, 1e-300, 1e-5, 0.5, 1.0, 2.0, -1.0, 1e300, 1e308,
                  1.7976931348623157e308, math.inf, -math.inf, math.nan]
EXTREME_INTS = [0, 1, 2, 3, -1, 10**6, 10**9, 10**20, 10**30, 2**63, -(2**63)]

floats = st.one_of(st.sampled_from(EXTREME_FLOATS), st.floats(allow_nan=True, allow_infinity=True))
ints = st.one_of(st.sampled_from(EXTREME_INTS), st.integers(-(10**6), 10**6))
wrong_types = st.one_of(st.text(max_size=4), st.booleans(), st.none(), st.lists(st.integers(0, 3), max_size=2),
                        st.dictionaries(st.text(max_size=2), st.integers(0, 3), max_size=1))
#: An adversarial value for any field: an extreme float or integer, or the wrong type.
values = st.one_of(floats, ints, wrong_types)

#: Plausible values per field, so that most claims are valid and reach a verdict.
PLAUSIBLE = {
    "sigma": st.floats(0.3, 20.0), "scale": st.floats(0.3, 20.0), "sensitivity": st.floats(0.5, 2.0),
    "epsilon0": st.floats(0.1, 4.0), "delta0": st.floats(0.0, 0.01), "k": st.integers(1, 3),
    "times": st.integers(1, 50), "rate": st.floats(0.001, 1.0), "steps": st.integers(1, 100),
    "epochs": st.integers(1, 2), "epsilon": st.floats(-1.0, 10.0), "delta": st.floats(1e-8, 0.5),
    "neighboring": st.sampled_from(["add_or_remove", "add", "remove", "replace_one"]), "rho": st.floats(0.01, 5.0),
    "users": st.integers(1, 1000), "dataset_size": st.integers(10, 1000), "batch_size": st.integers(1, 10),
    "batches": st.integers(1, 20), "rounds": st.integers(1, 3), "aggregation": st.just("shuffle"),
}


def field_value(name: str) -> st.SearchStrategy:
    """Seven times in eight a plausible value for the field, else an adversarial one."""
    plausible = PLAUSIBLE.get(name, st.floats(0.1, 10.0))
    return _one_in(8).flatmap(lambda adversarial: values if adversarial else plausible)


def _one_in(n: int) -> st.SearchStrategy[bool]:
    """True about once in ``n`` draws (st.sampled_from picks uniformly; st.integers favours its ends)."""
    return st.sampled_from([False] * (n - 1) + [True])


@st.composite
def named_object(draw, kinds: dict) -> dict:
    """A mechanism or scheme object: a known (sometimes unknown) name, its fields drawn from
    ``values``, a field sometimes dropped, an unknown one sometimes added."""
    name = draw(st.text(max_size=6)) if draw(_one_in(10)) else draw(st.sampled_from(sorted(kinds)))
    spec = kinds.get(name)
    obj: dict = {"name": name}
    for field in (spec.fields if spec else ()):
        if not draw(_one_in(20)):  # drop a field one time in twenty
            obj[field] = draw(field_value(field))
    if draw(_one_in(10)):
        obj[draw(st.text(min_size=1, max_size=6))] = draw(values)
    return obj


@st.composite
def claims(draw) -> dict:
    claim = {"mechanism": draw(named_object(MECHANISMS)), "scheme": draw(named_object(SCHEMES))}
    for field in ("epsilon", "delta", "neighboring"):
        if not draw(_one_in(20)):
            claim[field] = draw(field_value(field))
    if draw(_one_in(20)):
        claim[draw(st.sampled_from(["rho", "source", "extra"]))] = draw(values)
    return claim


def _document(claim: dict, encoding: str, cut: int | None, oversize: bool) -> bytes:
    text = json.dumps(claim, ensure_ascii=False)  # NaN/inf become the non-JSON tokens NaN/Infinity
    if oversize:
        text += " " * (MAX_CLAIM_BYTES + 1)
    data = text.encode(encoding, errors="replace")
    return data[:cut] if cut is not None else data


#: A usage or input error: one line naming the flag or field (``verifier: error: scheme.rate=2.0 is
#: invalid: …`` or argparse's ``verifier certify: error: argument --sigma: …``).
ONE_LINE_ERROR = re.compile(r"^verifier(?: \w+)?: error: (?:argument |unrecognized arguments|the following arguments|.+=.* is invalid: )")

STATUS_WORD = {0: "CERTIFIED", 1: "VIOLATED", 3: "INCONCLUSIVE"}


def _number(x):
    return {"inf": math.inf, "-inf": -math.inf}.get(x, x)


def _event(label: str) -> None:
    from hypothesis.control import currently_in_test_context

    if currently_in_test_context():
        event(label)


def _check_answer(status: int, out: str, err: str) -> None:
    """The properties every run must satisfy (module docstring)."""
    assert status in (0, 1, 2, 3), f"status {status}: {err}"
    assert "Traceback" not in err
    if status == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and ONE_LINE_ERROR.match(lines[0]), err
        field = re.match(r"^verifier: error: ([\w.]+)", lines[0])
        _event(f"2: {field.group(1) if field else 'usage'}")
        return
    certificate = json.loads(out)
    assert certificate["verdict"] == STATUS_WORD[status] and certificate["exit_status"] == status
    _event(f"{status}: {certificate['verdict']}")
    for entry in certificate["directions"].values():
        for bracket in entry.values():
            lower, upper = _number(bracket["lower"]), _number(bracket["upper"])
            assert lower is None or lower <= upper, bracket


def _certify(capsys, argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@FUZZ_SETTINGS
@given(
    claim=claims(),
    encoding=st.sampled_from(["utf-8"] * 5 + ["utf-8-sig", "utf-16", "utf-16-le", "utf-32", "latin-1"]),
    cut=_one_in(10).flatmap(lambda truncated: st.integers(0, 200) if truncated else st.none()),
    oversize=_one_in(30),
)
def test_fuzz_claim_files(capsys, tmp_path, claim, encoding, cut, oversize):
    path = tmp_path / "claim.json"
    path.write_bytes(_document(claim, encoding, cut, oversize))
    _check_answer(*_certify(capsys, ["certify", str(path), "--json", "--time-budget", BUDGET_SECONDS]))


def _flag_value(value) -> str:
    return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (list, dict, bool)) or value is None else repr(value)


@st.composite
def certify_flags(draw) -> list[str]:
    argv = ["certify", "--json", "--time-budget", BUDGET_SECONDS]
    mechanism = draw(st.sampled_from(["gaussian", "gaussian", "laplace", "rr", "approx_dp", "nope"]))
    scheme = draw(st.sampled_from(["single", "composed", "poisson", "allocation"]))
    argv += ["--mechanism", mechanism, "--scheme", scheme]
    needed = {"gaussian": ["sigma"], "laplace": ["scale"], "rr": ["epsilon0"], "approx_dp": ["epsilon0", "delta0"]}.get(mechanism, [])
    needed += {"single": [], "composed": ["times"], "poisson": ["rate", "steps"], "allocation": ["steps"]}[scheme] + ["epsilon", "delta"]
    for name in ("sigma", "scale", "epsilon0", "delta0", "times", "rate", "steps", "k", "epsilon", "delta"):
        if draw(_one_in(20)) != (name in needed):  # the flags the choice needs, usually; another rarely
            argv += [f"--{name}", _flag_value(draw(field_value(name)))]
    return argv


@FUZZ_SETTINGS
@given(argv=certify_flags())
def test_fuzz_certify_flags(capsys, argv):
    try:
        status, out, err = _certify(capsys, argv)
    except SystemExit as exc:  # argparse's own usage errors exit 2 from inside parse_args
        out, err = capsys.readouterr()
        status = exc.code
    _check_answer(status, out, err)


@pytest.mark.parametrize(
    "claim",
    [
        {"mechanism": {"name": "gaussian", "sigma": 1e-320}, "scheme": {"name": "single"}, "epsilon": 1.0, "delta": 1e-5},
        {"mechanism": {"name": "gaussian", "sigma": 1e300}, "scheme": {"name": "composed", "times": 10**20}, "epsilon": 1.0, "delta": 1e-5},
        {"mechanism": {"name": "laplace", "scale": 5e-324}, "scheme": {"name": "single"}, "epsilon": 1.0, "delta": 1e-5},
        {"mechanism": {"name": "rr", "epsilon0": 1e308}, "scheme": {"name": "single"}, "epsilon": 1.0, "delta": 1e-5},
        {"mechanism": {"name": "gaussian", "sigma": 1.0}, "scheme": {"name": "poisson", "rate": 1.0, "steps": 10**30}, "epsilon": 1.0, "delta": 1e-5},
        {"mechanism": {"name": "approx_dp", "epsilon0": 1e300, "delta0": 0.5}, "scheme": {"name": "composed", "times": 3}, "epsilon": -1.0, "delta": 1e-5},

        {"mechanism": {"name": "approx_dp", "epsilon0": 1.0, ":": 0.0, "a\nb": 1}, "scheme": {"name": "single"}, "epsilon": 0.0, "delta": 0.5},
    ],
)
def test_known_extremes(capsys, tmp_path, claim):
    """Corners the strategies reach only by luck, pinned."""
    path = tmp_path / "claim.json"
    path.write_text(json.dumps(claim), encoding="utf-8")
    _check_answer(*_certify(capsys, ["certify", str(path), "--json", "--time-budget", BUDGET_SECONDS]))
