"""``__all__`` of the analytic modules matches their public names (STYLE: a test that __all__ matches)."""

import importlib
import inspect

import pytest

MODULES = [
    "verifier.analytic",
    "verifier.analytic.chua_lower",
    "verifier.analytic.combined",
    "verifier.analytic.decomposition",
    "verifier.analytic.poisson_profile",
    "verifier.analytic.recursive",
    "verifier.analytic.rounds",
    "verifier.analytic.truncated_poisson",
    "verifier.certify.methods.analytic",
    "verifier.cli._compare",
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
