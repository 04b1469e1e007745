"""Certificates validate against the packaged JSON schema, and the schema rejects broken ones."""

import copy
import json

import pytest

from verifier.certify.certificate import FORMAT, schema, to_certificate
from verifier.certify.claim import parse_claim
from verifier.certify.examples import EXAMPLES
from verifier.certify.verdict import certify

jsonschema = pytest.importorskip("jsonschema")


def validate(cert):
    jsonschema.Draft202012Validator(schema()).validate(json.loads(json.dumps(cert)))


def test_schema_is_valid_draft_2020_12():
    jsonschema.Draft202012Validator.check_schema(schema())


@pytest.mark.parametrize("item", EXAMPLES, ids=lambda e: e.name)
def test_example_certificates_validate(item):
    cert = to_certificate(certify(item.parsed()))
    validate(cert)
    assert cert["format"] == FORMAT and cert["verdict"] == item.expected.value
    assert cert["exit_status"] == item.expected.exit_status
    assert set(cert["versions"]) >= {"verifier", "numpy", "scipy", "mpmath", "python-flint", "sympy"}
    for direction in ("add", "remove"):
        summary = cert["directions"][direction]
        assert summary["delta_at_epsilon"]["upper_method"] and summary["epsilon_at_delta"]["lower_method"]
    assert {b["quantity"] for b in cert["bounds"]} == {"delta", "epsilon"}
    assert all(b["citation"] and b["method"] and b["seconds"] >= 0 for b in cert["bounds"])


def test_certificate_without_any_method_validates_with_infinite_ends(monkeypatch):
    import verifier.certify.verdict as verdict

    monkeypatch.setattr(verdict, "select_methods", lambda scheme, only=None: [])
    claim = parse_claim(
        {"mechanism": {"name": "rr", "epsilon0": 1.0}, "scheme": {"name": "allocation", "steps": 4, "k": 2},
         "neighboring": "remove", "epsilon": 0.5, "delta": 0.01}
    )
    cert = to_certificate(certify(claim))
    validate(cert)
    assert cert["verdict"] == "INCONCLUSIVE" and cert["bounds"] == []
    assert cert["directions"]["remove"]["delta_at_epsilon"]["upper"] == "inf"
    assert list(cert["directions"]) == ["remove"]


@pytest.mark.parametrize(
    "path, value",
    [(("verdict",), "PROBABLY"), (("claim", "delta"), 1.5), (("bounds", 0, "side"), "middle"), (("versions",), {})],
)
def test_schema_rejects_broken_certificates(path, value):
    cert = to_certificate(certify(EXAMPLES[0].parsed()))
    broken = copy.deepcopy(cert)
    target = broken
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)
