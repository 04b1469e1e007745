"""Help texts agree with each other and with the README (issue 32): the same option takes the same
values on every command, an option a command cannot use is not offered, and lists in help texts are
complete. Each test names the inconsistency it catches."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from verifier.audit import PEERS
from verifier.certify.registry import all_methods
from verifier.cli import COMMANDS, build_parser

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


SUBPARSERS = _subparsers()


def _option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((a for a in parser._actions if flag in a.option_strings), None)


def _accepts(action: argparse.Action, text: str) -> bool:
    value = action.type(text) if callable(action.type) else text
    return action.choices is None or value in action.choices


def test_every_command_is_registered():
    assert set(COMMANDS) <= set(SUBPARSERS)


@pytest.mark.parametrize("name", sorted(n for n, p in SUBPARSERS.items() if _option(p, "--neighboring")))
def test_neighboring_takes_the_same_values_everywhere(name):
    """Catches: `--neighboring both` accepted by delta/epsilon/bounds/mc/rdp but refused by certify,
    calibrate and sweep."""
    action = _option(SUBPARSERS[name], "--neighboring")
    for value in ("add_or_remove", "add", "remove", "replace_one", "both"):
        assert _accepts(action, value), f"verifier {name} --neighboring {value}"


def test_neighboring_both_is_add_or_remove_in_a_claim():
    from verifier.cli._certify import claim_json_from_flags

    argv = ["certify", "--sigma", "1", "--epsilon", "1", "--delta", "1e-5", "--neighboring"]
    both = claim_json_from_flags(build_parser("certify").parse_args([*argv, "both"]))
    assert both == claim_json_from_flags(build_parser("certify").parse_args([*argv, "add_or_remove"]))
    assert both["neighboring"] == "add_or_remove"


@pytest.mark.parametrize("name", ["mc", "rdp", "zcdp"])
def test_commands_that_run_no_registered_method_do_not_offer_method(name):
    """Catches: `mc --help` offering --method, refused for every value (and rdp/zcdp ignoring it)."""
    assert _option(SUBPARSERS[name], "--method") is None


@pytest.mark.parametrize("name", sorted(n for n, p in SUBPARSERS.items() if _option(p, "--method")))
def test_method_help_lists_every_registered_name(name):
    """Catches: `--method` help that names no method (or only some)."""
    text = " ".join(_option(SUBPARSERS[name], "--method").help.split())
    for method in {m.name for m in all_methods()}:
        assert re.search(rf"(?<![\w-]){re.escape(method)}(?![\w-])", text), f"verifier {name} --method help lacks {method}"


def test_audit_description_names_every_peer():
    """Catches: the description naming 3 peers of 6."""
    parser = SUBPARSERS["audit"]
    for peer in PEERS:
        assert peer in parser.description


def test_exit_4_has_the_readmes_name_in_certify_help():
    """Catches: `certify --help` calling exit 4 "internal inconsistency" where the README says "defect"."""
    assert re.search(r"\| 4 \| defect", README)
    assert "4 a defect in verifier" in SUBPARSERS["certify"].description
    assert "4 internal inconsistency" not in SUBPARSERS["certify"].description


def _zcdp_rows(argv: list[str], capsys) -> dict[str, float]:
    from verifier.cli import main

    assert main(["epsilon", *argv, "--json"]) == 0
    import json

    payload = json.loads(capsys.readouterr().out)
    return {b["method"]: b["value"] for b in payload["bounds"] if b["method"].startswith("zcdp")}


def test_zcdp_rows_appear_exactly_where_the_zcdp_command_has_a_rule(capsys):
    """`epsilon … --scheme poisson --neighboring replace_one` lists zcdp rows; `verifier zcdp` gives the
    same numbers for the same relation, and under add/remove, where `zcdp` refuses Poisson, `epsilon`
    lists none. Reference: ρ = T·(2Δ)²/(2σ²) = 200 (Steinke 2022 Lemma 12, 33.6, Thm 13) and the
    standard conversion ε = ρ + 2√(ρ ln(1/δ)) (Remark 15). Catches: rows from a rule the zcdp command
    cannot reach, or a zcdp command that disagrees with them."""
    import math

    from verifier.cli import main

    scheme = ["--sigma", "1", "--scheme", "poisson", "--rate", "0.01", "--steps", "100", "--delta", "1e-5"]
    rows = _zcdp_rows([*scheme, "--neighboring", "replace_one"], capsys)
    standard = 200 + 2 * math.sqrt(200 * math.log(1e5))
    assert rows["zcdp:standard"] == pytest.approx(standard, rel=1e-12) and rows["zcdp:standard"] >= standard
    assert main(["zcdp", *scheme, "--neighboring", "replace_one", "--json"]) == 0
    import json

    zcdp = json.loads(capsys.readouterr().out)
    assert zcdp["rho"] == 200.0 and zcdp["epsilon_standard"] == rows["zcdp:standard"] and zcdp["epsilon_prop14"] == rows["zcdp:prop14"]
    assert _zcdp_rows(scheme, capsys) == {}
    assert main(["zcdp", *scheme]) == 2
    assert "--neighboring replace_one" in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(SUBPARSERS))
def test_every_help_text_formats(name):
    """Catches: a help string argparse cannot format (a bare %, a bad metavar) — `verifier NAME --help`
    would crash with a traceback instead of printing the help."""
    text = SUBPARSERS[name].format_help()
    assert text.startswith("usage: verifier") and len(text) > 100
