"""Compiled kernels (built from ``src/fast/*.pyx``). Import them through the Python wrappers, which
validate input; each kernel has a ``.pyi`` stub here and a slow twin in :mod:`verifier.reference`."""
__all__: list[str] = []
