"""The registry of certification methods, collected from the adapter modules."""

from __future__ import annotations

import importlib

from verifier.certify.method import Method
from verifier.certify.methods import ADAPTERS
from verifier.schemes import Scheme

__all__ = ["all_methods", "methods_for"]


def all_methods() -> list[Method]:
    """Every registered method, cheapest first."""
    methods: list[Method] = []
    for module_name in ADAPTERS:
        methods.extend(importlib.import_module(module_name).METHODS)
    return sorted(methods, key=lambda m: m.cost)


def methods_for(scheme: Scheme) -> list[Method]:
    """The registered methods that support ``scheme``, cheapest first."""
    return [m for m in all_methods() if m.supports(scheme)]
