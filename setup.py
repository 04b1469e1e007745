"""Build the Cython kernels in src/fast/ as extension modules of ``verifier._fast``.

Every ``src/fast/<name>.pyx`` becomes ``verifier._fast.<name>``; adding a kernel needs no edit here.
``src/fast/*.pxd`` hold inline helpers the kernels cimport (compiled into each, never a module).
"""
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

_HERE = Path(__file__).parent
_SOURCES = sorted((_HERE / "src" / "fast").glob("*.pyx"))

extensions = [
    Extension(
        f"verifier._fast.{source.stem}",
        [str(source.relative_to(_HERE))],
        extra_compile_args=["-O3", "-fno-fast-math", "-ffp-contract=off"],
        libraries=["m"],
    )
    for source in _SOURCES
]

setup(
    ext_modules=cythonize(
        extensions,
        include_path=[str(_HERE / "src" / "fast")],  # shared inline helpers (*.pxd) beside the kernels
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )
)
