"""pytest plugin (entry point ``pytest11``: ``verifier``): one test per catalogue property for every
:class:`~verifier.properties.accountant.Accountant` bound to a ``test*`` name in a test module::

    from verifier.properties import Accountant
    from verifier.schemes import Composed, Poisson, Single

    def my_epsilon(scheme, delta):          # your accountant, called on verifier's schemes
        ...

    test_my_accountant = Accountant("mine", my_epsilon, schemes=(Single, Composed, Poisson))

``pytest`` then runs ``test_my_accountant[soundness]``, ``test_my_accountant[monotone_in_steps]``, …
A failure prints the shrunk example, the accountant's number, verifier's bracket and the
``verifier certify`` command that reproduces it. ``--verifier-examples N`` sets the examples per
property (default :data:`~verifier.properties.runner.DEFAULT_EXAMPLES`).

This module is loaded by every pytest run in an environment where verifier is installed, so it
imports nothing heavy until it meets an Accountant.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

__all__ = ["PropertyItem", "pytest_addoption", "pytest_pycollect_makeitem"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("verifier", "verifier property tests of DP accountants")
    group.addoption("--verifier-examples", type=int, default=None, metavar="N", help="Hypothesis examples per property")


class PropertyItem(pytest.Item):
    """One catalogue property run against one accountant."""

    def __init__(self, *, prop: Any, accountant: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prop = prop
        self.accountant = accountant

    def runtest(self) -> None:
        from verifier.properties.runner import DEFAULT_EXAMPLES, run_property

        examples = self.config.getoption("verifier_examples") or DEFAULT_EXAMPLES
        run_property(self.prop, self.accountant, max_examples=examples)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        from verifier.properties.catalogue import PropertyFailure

        if isinstance(excinfo.value, PropertyFailure):
            return f"{excinfo.value}\n  ({self.prop.source}; catches: {self.prop.catches})"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{self.accountant.name}: {self.prop.name} ({self.prop.statement})"


def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> list[PropertyItem] | None:
    accountant_module = sys.modules.get("verifier.properties.accountant")
    if accountant_module is None or not name.startswith("test") or not isinstance(obj, accountant_module.Accountant):
        return None
    from verifier.properties.catalogue import CATALOGUE

    return [
        PropertyItem.from_parent(collector, name=f"{name}[{prop.name}]", prop=prop, accountant=obj)
        for prop in CATALOGUE
        if prop.applies_to(obj)
    ]
