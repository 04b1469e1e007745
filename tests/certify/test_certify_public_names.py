"""``__all__`` of the certification and report modules matches their public names."""

import importlib
import inspect

import pytest

MODULES = [
    "verifier.certify.claim",
    "verifier.certify.verdict",
    "verifier.certify.certificate",
    "verifier.certify.coverage",
    "verifier.certify.examples",
    "verifier.certify.portfolio",
    "verifier.report.plots",
    "verifier.cli._certify",
    "verifier.cli._bounds",
    "verifier.cli._demo",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_matches_public_definitions(name):
    module = importlib.import_module(name)
    defined = {
        n for n, obj in vars(module).items()
        if not n.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == name
    }
    assert defined <= set(module.__all__), f"public but not in __all__: {defined - set(module.__all__)}"
    for exported in module.__all__:
        assert hasattr(module, exported)
