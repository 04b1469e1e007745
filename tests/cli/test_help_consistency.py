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
    assert "4 defect" in README
    assert "4 a defect in verifier" in SUBPARSERS["certify"].description
    assert "4 internal inconsistency" not in SUBPARSERS["certify"].description
