"""Every module's ``__all__`` matches its public names (STYLE.md: a test that ``__all__`` matches).

Walks the whole package: each module defines ``__all__``; every public function or class defined in
the module is listed, and every listed name exists.
"""

import importlib
import inspect
import pkgutil

import pytest

import verifier

#: Modules without an API: the ``python -m verifier`` entry point.
NO_API = {"verifier.__main__"}


def module_names():
    for info in pkgutil.walk_packages(verifier.__path__, prefix="verifier."):
        if info.name not in NO_API and not info.name.startswith("verifier._fast."):
            yield info.name


@pytest.mark.parametrize("name", sorted(module_names()))
def test_all_matches_public_definitions(name):
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), f"{name} defines no __all__"
    defined = {
        n
        for n, obj in vars(module).items()
        if not n.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == name
    }
    assert defined <= set(module.__all__), f"public but not in __all__: {defined - set(module.__all__)}"
    for exported in module.__all__:
        assert hasattr(module, exported), f"{name}.__all__ lists {exported!r}, which does not exist"
