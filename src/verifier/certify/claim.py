"""An (ε, δ) claim about a mechanism run through a scheme, read strictly from JSON or CLI flags.

A claim names the mechanism (one step's dominating pair), the scheme, the neighbouring relation
and the claimed (ε, δ) (or, for a zCDP claim, ``"rho": ρ`` in their place: the mechanism is
ρ-zCDP, D_α <= αρ at every order α > 1; Steinke 2022, Def 11)::

    {"mechanism": {"name": "gaussian", "sigma": 1.0, "sensitivity": 1.0},
     "scheme": {"name": "poisson", "rate": 0.01, "steps": 1000},
     "neighboring": "add_or_remove", "epsilon": 1.83, "delta": 1e-5}

A trade-off claim states ``"fpr": α, "tpr": τ`` in place of (ε, δ): an attacker testing membership at
false-positive rate α has true-positive rate at most τ (in every required direction; decided on
bounds on TPR(α) = inf_ε δ(ε) + e^ε α, verifier.pld.tradeoff)::

    {"mechanism": {"name": "gaussian", "sigma": 1.0}, "scheme": {"name": "single"}, "fpr": 0.01, "tpr": 0.1}

A ``sequence`` scheme is a heterogeneous run: a list of phases run one after another, each a scheme
object (any kind but ``sequence``) with, optionally, its own ``mechanism``; a phase without one runs
the claim's ``mechanism`` (which a sequence claim may then omit when every phase states its own)::

    {"mechanism": {"name": "gaussian", "sigma": 1.1},
     "scheme": {"name": "sequence", "phases": [
         {"name": "poisson", "rate": 0.01, "steps": 1000},
         {"name": "poisson", "rate": 0.01, "steps": 500, "mechanism": {"name": "gaussian", "sigma": 0.9}}]},
     "epsilon": 2.5, "delta": 1e-5}

Errors inside a phase name it by position (``scheme.phases[1].rate``).

Mechanisms beyond the flags (claim files and dp_accounting events): ``rr_uniform`` (noise p, k:
with probability 1 − p the true bucket, else a uniform one), ``discrete_laplace`` (parameter a,
integer sensitivity C), ``discrete_gaussian`` (sigma: N_ℤ(1, σ²) against N_ℤ(0, σ²), sensitivity 1,
add/remove only: a replacement can move the query by 2), ``finite`` (p, q: any finite pair, masses taken as exact), ``gaussian_mixture``
(sigma, sensitivities, probabilities: Σ p_i N(c_i, σ²) against N(0, σ²), add/remove). For the record
pairs (``rr``, ``rr_uniform``, ``approx_dp``, ``finite``: the step on two records) ``replace_one``
under ``single``/``composed`` is the pair itself.

Two kinds describe a class of mechanisms known only through a Rényi bound, and a claim about them is
about the worst member (UPPER from the Rényi bound, LOWER from a member; :mod:`verifier.certify.methods.member`):
the mechanism ``zcdp`` (rho, xi = 0: a step that is (ξ, ρ)-zCDP, D_α <= ξ + ρα; under ``single`` or
``composed`` or as such a phase, or ``poisson`` under add_or_remove (no amplification claimed above);
the statement holds for the claim's relation as given), the mechanisms ``exponential`` and
``permute_and_flip`` (epsilon: one ε-DP selection over scores that move by at most Δ, the worst
score instance; under ``single`` or ``composed`` or as such a phase; :class:`verifier.schemes.Selection`),
and the scheme ``repeat_and_select`` (run: a scheme object, optionally with its own mechanism; mean >= 1
and shape in [0, ∞) of the truncated negative binomial number of runs, or "inf" for Poisson runs; times: how often the whole is
repeated; Papernot & Steinke 2022)::

    {"mechanism": {"name": "gaussian", "sigma": 1.0},
     "scheme": {"name": "repeat_and_select", "mean": 10, "shape": 1,
                "run": {"name": "poisson", "rate": 0.01, "steps": 1000}},
     "epsilon": 5.0, "delta": 1e-5}

``"delta": 0`` is a pure-DP claim (ε-DP), decided on ε(0), the largest privacy loss (see
:func:`verifier.certify.verdict.certify`).

Validation is strict: an unknown or missing field, a value of the wrong type or out of range
raises :class:`~verifier.errors.InvalidArgument` naming the field by its path (``mechanism.sigma``)
before anything is computed.

Neighbouring relations (Steinke 2022, §6.2):

- ``add_or_remove`` (default): both directions, the guarantee is the maximum of the two;
- ``add``, ``remove``: one direction;
- ``replace_one``: one record replaced by another. For an additive-noise mechanism (Gaussian,
  Laplace) whose records each move the query by at most Δ (e.g. clipping at norm C), a replacement
  moves it by at most 2Δ, and the worst pair of outputs (x and −x) attains it; so replace-one
  neighbours are modelled *exactly* as add-or-remove with sensitivity 2Δ, and compositions of such
  steps compose. This reduction is not valid under Poisson subsampling or random allocation (the
  record and its replacement are sampled as one element, the pair becomes a mixture
  ((1−λ)Q + λP, (1−λ)Q + λP') that is not the doubled-sensitivity add/remove pair), nor for
  randomized response (not additive noise). A ``poisson`` claim under ``replace_one`` is modelled
  as :class:`~verifier.schemes.PoissonReplaceOne` (the mixture with a common component: for a
  Gaussian step the antipodal pair, records +C and −C, is attained and dominates every step, so
  it is both bounds; for Laplace, UPPER by Balle et al.'s convex-combination bound over the
  substitution pair, LOWER by an attained pair of neighbours; see verifier.pld.schemes); allocation claims under ``replace_one``
  are rejected.
- fixed-size batches (``without_replacement``: ``dataset_size`` n, ``batch_size`` B, ``steps``) are
  defined for ``replace_one`` neighbours only (Steinke 2022, §6.2: fixed-size sampling needs the
  replacement relation; the chapter gives no add/remove version) and additive-noise mechanisms:
  the batch step's pair has sensitivity 2Δ, and the scheme's bounds use the substitution mixture
  pair (see :class:`verifier.pairs.SubstitutionSubsampled`); other claims are rejected.
- shuffled batches (``shuffled``: ``dataset_size`` n, ``batch_size`` B, ``epochs``, ``drop_last``;
  a data loader that shuffles once per epoch) likewise: replace-one neighbours and additive-noise
  mechanisms only (adding or removing a record changes n and the batch layout; nothing is proven
  for that), the batch step's pair with sensitivity 2Δ (see
  :mod:`verifier.certify.methods.shuffled`).

- truncated Poisson batches (``truncated_poisson``: ``dataset_size`` n, ``rate`` q, ``max_batch`` B,
  ``steps``; dp_accounting's ``TruncatedSubsampledGaussianDpEvent``) and batches drawn with
  replacement (``with_replacement``: ``dataset_size`` n, ``sample_size`` m, ``steps``; replace-one
  only) are modelled for the ``gaussian`` mechanism (Δ the records' norm bound), under replace-one
  and, for truncated Poisson, add/remove with the record's dataset of size n (see
  :mod:`verifier.pairs.batch_sampling`).

The shuffle model and shuffled check-in (Liew, Hasegawa & Takahashi; schemes ``shuffle`` and
``checkin``) are defined for replace-one neighbours only (the paper's footnote 2), and their claims
must say ``"neighboring": "replace_one"``. The model's pair is the step on the two records: for an
additive-noise mechanism with records of norm at most Δ the records x and −x, i.e. sensitivity 2Δ
(with every other user at −x, the shuffled or summed release of the specific pair is that of
(2Δ·e_1, 0, …, 0) shifted, so no generality is lost for the lower bounds); for randomized response
the pair itself.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from verifier._types import Direction, directions_for
from verifier._validation import check_choice, check_integer, check_positive, check_real
from verifier._validation import check_half_open_unit, check_nonnegative, check_rate, check_unit
from verifier.errors import InvalidArgument
from verifier.pairs import ApproxDP, DiscreteGaussian, DiscreteLaplace, DiscretePair, DominatingPair, Gaussian, Laplace, RandomizedResponse, UniformResponse
from verifier.pairs.mixture import mixture_of_gaussians
import verifier.matrix as matrix
from verifier.matrix.strategy import Strategy
from verifier.schemes import AGGREGATIONS, Allocation, BandedPoisson, CheckIn, Composed, MatrixMechanism, MatrixPoisson, Poisson, Scheme, Sequence, Shuffle, Single
from verifier.schemes import PoissonReplaceOne, RepeatAndSelect, SampledZCDP, Selection, ShuffledBatches, TruncatedPoisson, WithoutReplacement, WithReplacement, ZCDP

__all__ = ["Claim", "parse_claim", "model_of", "load_claim", "read_json", "json_value", "strategy_from_fields", "NEIGHBORING", "MECHANISMS", "SCHEMES", "PEER_NAMES"]

NEIGHBORING = ("add_or_remove", "add", "remove", "replace_one")

_Check = Callable[[str, Any], Any]
_REQUIRED = object()


@dataclass(frozen=True)
class _Spec:
    """One JSON object kind: its fields (validator, default or required) and how to build it."""

    fields: dict[str, tuple[_Check, Any]]
    build: Callable[..., Any]
    additive: bool = False  # additive-noise mechanism (replace-one = add/remove with 2Δ)
    record_pair: bool = False  # the pair is the step on two records (replace-one: the pair itself)
    phased: bool = False  # a list of phases, each a scheme with its own mechanism (``sequence``)
    step: bool = False  # a class of steps, a scheme of its own (``zcdp``, ``exponential``, ``permute_and_flip``)
    nested: bool = False  # runs another scheme object, its ``run`` (``repeat_and_select``)


def _positive_integer(name: str, value: Any) -> int:
    return check_integer(name, value, minimum=1)


def _rr_outcomes(name: str, value: Any) -> int:
    return check_integer(name, value, minimum=2)


def _boolean(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgument(name, value, "must be true or false")
    return value


def _dimension(name: str, value: Any) -> int | None:
    """A report's number of coordinates: an integer >= 1, or "any" (None: no bound may assume one)."""
    if value == "any":
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(name, value, 'must be an integer >= 1 or "any"', fix="e.g. --dimension 1 for scalar reports")
    return value


def _aggregation(name: str, value: Any) -> str:
    return check_choice(name, value, AGGREGATIONS)


def _phase_list(name: str, value: Any) -> list:
    if not isinstance(value, list):
        raise InvalidArgument(name, value, "must be a JSON array of phase objects (each a scheme object, optionally with its own mechanism)")
    if not value:
        raise InvalidArgument(name, value, "must hold at least one phase (a sequence of nothing releases nothing)")
    return value


def _run_object(name: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidArgument(name, value, "must be a scheme object (the run repeated), optionally with its own mechanism")
    return value


def _shape(name: str, value: Any) -> float:
    """A shape of the number of runs: >= 0, or +inf (Poisson; strict JSON has no Infinity, so the
    string "inf" or "Infinity" stands for it)."""
    if isinstance(value, str) and value.lower() in ("inf", "infinity"):
        return math.inf
    return check_real(name, value, allow_inf=True)


def _optional(check: _Check) -> _Check:
    """A field that may be absent (None) or must pass ``check``."""
    return lambda name, value: None if value is None else check(name, value)


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgument(name, value, "must be a non-empty string")
    return value


def _numbers(name: str, value: Any) -> list[float]:
    if not isinstance(value, list) or not value or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        raise InvalidArgument(name, value, "must be a non-empty list of numbers")
    return [check_real(f"{name}[{i}]", v) for i, v in enumerate(value)]


def _family(name: str, value: Any) -> str:
    return check_choice(name, value, matrix.FAMILIES)


def _claim_strategy(
    size: int,
    matrix: str | None = None,
    matrix_file: str | None = None,
    bands: int | None = None,
    coefficients: list[float] | None = None,
    theta: list[float] | None = None,
    omega: list[float] | None = None,
) -> Strategy:
    """C of a claim's scheme (N = ``size``): a named family (with its parameters) or a file."""
    return strategy_from_fields(size, matrix, matrix_file, bands, coefficients, theta, omega)


def _matrix_scheme(pair: DominatingPair, batches: int, epochs: int, **strategy: Any) -> MatrixMechanism:
    """The matrix scheme of a claim: N = epochs·batches."""
    return MatrixMechanism(pair, _claim_strategy(batches * epochs, **strategy), batches, epochs)


def _banded_poisson_scheme(pair: DominatingPair, groups: int, rate: float, steps: int, **strategy: Any) -> BandedPoisson:
    """The amplified-BandMF scheme of a claim: C with N = ``steps``, b = ``groups``."""
    return BandedPoisson(pair, _claim_strategy(steps, **strategy), groups, rate)


def _matrix_poisson_scheme(pair: DominatingPair, rate: float, steps: int, groups: int, **strategy: Any) -> MatrixPoisson:
    """The MMCC scheme of a claim: C with N = ``steps``, b = ``groups`` (1: every step)."""
    return MatrixPoisson(pair, _claim_strategy(steps, **strategy), rate, groups)


def strategy_from_fields(
    size: int,
    family: str | None,
    matrix_file: str | None,
    bands: int | None,
    coefficients: list[float] | None,
    theta: list[float] | None,
    omega: list[float] | None,
) -> matrix.Strategy:
    """Build C (N = ``size``) from the claim/CLI fields; the parameters a family needs must be
    given and the others absent, so a misspelt or misplaced parameter never goes unnoticed."""
    if (family is None) == (matrix_file is None):
        raise InvalidArgument("matrix", family, "give exactly one of matrix (a family: " + ", ".join(matrix.FAMILIES) + ") and matrix_file")
    if matrix_file is not None:
        wanted: tuple[str, ...] = ()
    else:
        family = check_choice("matrix", family, matrix.FAMILIES)
        wanted = {"identity": (), "bsr": ("bands",), "toeplitz": ("coefficients",), "blt": ("theta", "omega")}[family]
    given = {"bands": bands, "coefficients": coefficients, "theta": theta, "omega": omega}
    for key, value in given.items():
        if key in wanted and value is None:
            raise InvalidArgument(key, None, f"the field is missing (matrix {family!r} needs {', '.join(wanted)})")
        if key not in wanted and value is not None:
            raise InvalidArgument(key, value, f"does not apply to {'matrix_file' if family is None else 'matrix ' + repr(family)}")
    if matrix_file is not None:
        strategy = matrix.load(matrix_file)
    elif family == "identity":
        strategy = matrix.identity(size)
    elif family == "bsr":
        strategy = matrix.bsr(size, bands)  # type: ignore[arg-type]
    elif family == "toeplitz":
        strategy = matrix.toeplitz(size, coefficients)  # type: ignore[arg-type]
    else:
        strategy = matrix.blt(size, theta, omega)  # type: ignore[arg-type]
    if strategy.size != size:
        raise InvalidArgument("matrix_file", matrix_file, f"holds an N×N matrix with N = {strategy.size}, but the run has N = {size} steps")
    return strategy


#: Mechanism kinds: the JSON ``mechanism.name`` values and their fields.
MECHANISMS: dict[str, _Spec] = {
    "gaussian": _Spec({"sigma": (check_positive, _REQUIRED), "sensitivity": (check_positive, 1.0)}, Gaussian, additive=True),
    "laplace": _Spec({"scale": (check_positive, _REQUIRED), "sensitivity": (check_positive, 1.0)}, Laplace, additive=True),
    "rr": _Spec({"epsilon0": (check_positive, _REQUIRED), "k": (_rr_outcomes, 2)}, RandomizedResponse, record_pair=True),
    "approx_dp": _Spec({"epsilon0": (check_nonnegative, _REQUIRED), "delta0": (check_half_open_unit, _REQUIRED)}, ApproxDP, record_pair=True),
    "rr_uniform": _Spec({"noise": (check_unit, _REQUIRED), "k": (_rr_outcomes, 2)}, UniformResponse, record_pair=True),
    "discrete_laplace": _Spec({"parameter": (check_positive, _REQUIRED), "sensitivity": (_positive_integer, 1)}, DiscreteLaplace, additive=True),
    "discrete_gaussian": _Spec({"sigma": (check_positive, _REQUIRED)}, DiscreteGaussian),
    "finite": _Spec({"p": (_numbers, _REQUIRED), "q": (_numbers, _REQUIRED)}, lambda p, q: DiscretePair(tuple(p), tuple(q)), record_pair=True),
    "gaussian_mixture": _Spec(
        {"sigma": (check_positive, _REQUIRED), "sensitivities": (_numbers, _REQUIRED), "probabilities": (_numbers, _REQUIRED)},
        mixture_of_gaussians,
    ),
    "zcdp": _Spec({"rho": (check_positive, _REQUIRED), "xi": (check_nonnegative, 0.0)}, ZCDP, step=True),
    "exponential": _Spec({"epsilon": (check_positive, _REQUIRED)}, lambda epsilon: Selection("exponential", epsilon), step=True),
    "permute_and_flip": _Spec({"epsilon": (check_positive, _REQUIRED)}, lambda epsilon: Selection("permute_and_flip", epsilon), step=True),
}

#: The fields that describe a strategy C (matrix, banded_poisson and matrix_poisson schemes; see strategy_from_fields).
_STRATEGY_FIELDS: dict[str, tuple[_Check, Any]] = {
    "matrix": (_optional(_family), None),
    "matrix_file": (_optional(_text), None),
    "bands": (_optional(_positive_integer), None),
    "coefficients": (_optional(_numbers), None),
    "theta": (_optional(_numbers), None),
    "omega": (_optional(_numbers), None),
}

#: Scheme kinds: the JSON ``scheme.name`` values, their fields and how each wraps the pair.
SCHEMES: dict[str, _Spec] = {
    "single": _Spec({}, lambda pair: Single(pair)),
    "composed": _Spec({"times": (_positive_integer, _REQUIRED)}, lambda pair, times: Composed(Single(pair), times)),
    "poisson": _Spec({"rate": (check_rate, _REQUIRED), "steps": (_positive_integer, _REQUIRED)}, Poisson),
    "allocation": _Spec(
        {"steps": (_positive_integer, _REQUIRED), "k": (_positive_integer, 1), "epochs": (_positive_integer, 1)}, Allocation
    ),
    "without_replacement": _Spec(
        {
            "dataset_size": (_positive_integer, _REQUIRED),
            "batch_size": (_positive_integer, _REQUIRED),
            "steps": (_positive_integer, _REQUIRED),
        },
        WithoutReplacement,
    ),
    "shuffled": _Spec(
        {
            "dataset_size": (_positive_integer, _REQUIRED),
            "batch_size": (_positive_integer, _REQUIRED),
            "epochs": (_positive_integer, 1),
            "drop_last": (_boolean, False),
        },
        ShuffledBatches,
    ),
    "truncated_poisson": _Spec(
        {
            "dataset_size": (_positive_integer, _REQUIRED),
            "rate": (check_rate, _REQUIRED),
            "max_batch": (_positive_integer, _REQUIRED),
            "steps": (_positive_integer, _REQUIRED),
        },
        TruncatedPoisson,
    ),
    "with_replacement": _Spec(
        {
            "dataset_size": (_positive_integer, _REQUIRED),
            "sample_size": (_positive_integer, _REQUIRED),
            "steps": (_positive_integer, _REQUIRED),
        },
        WithReplacement,
    ),
    "sequence": _Spec({"phases": (_phase_list, _REQUIRED)}, Sequence, phased=True),
    "repeat_and_select": _Spec(
        {
            "run": (_run_object, _REQUIRED),
            "mean": (check_real, _REQUIRED),
            "shape": (_shape, _REQUIRED),
            "times": (_positive_integer, 1),
        },
        RepeatAndSelect,
        nested=True,
    ),
    "shuffle": _Spec({"users": (_positive_integer, _REQUIRED), "dimension": (_dimension, None)}, Shuffle),
    "checkin": _Spec(
        {
            "users": (_positive_integer, _REQUIRED),
            "rate": (check_rate, _REQUIRED),
            "rounds": (_positive_integer, 1),
            "aggregation": (_aggregation, "shuffle"),
        },
        CheckIn,
    ),
    "matrix": _Spec(
        {
            "batches": (_positive_integer, _REQUIRED),
            "epochs": (_positive_integer, 1),
            **_STRATEGY_FIELDS,
        },
        _matrix_scheme,
    ),
    "banded_poisson": _Spec(
        {
            "groups": (_positive_integer, _REQUIRED),
            "rate": (check_rate, _REQUIRED),
            "steps": (_positive_integer, _REQUIRED),
            **_STRATEGY_FIELDS,
        },
        _banded_poisson_scheme,
    ),
    "matrix_poisson": _Spec(
        {
            "rate": (check_rate, _REQUIRED),
            "steps": (_positive_integer, _REQUIRED),
            "groups": (_positive_integer, 1),
            **_STRATEGY_FIELDS,
        },
        _matrix_poisson_scheme,
    ),
}

#: The kinds a repeat-and-select's ``run`` may be (a distinct dict: the run may state its own mechanism, as a phase does).
_RUN_KINDS: dict[str, _Spec] = dict(SCHEMES)

#: Schemes under which replace-one neighbours are add/remove with doubled sensitivity (see module doc).
_REPLACE_ONE_SCHEMES = ("single", "composed")
#: Schemes whose replace-one model is a scheme of its own, built from the add/remove pair of one record.
_REPLACE_ONE_MODELS: dict[str, Callable[..., Any]] = {
    "poisson": PoissonReplaceOne,
    "truncated_poisson": lambda pair, **values: TruncatedPoisson(pair, **values, replace_one=True),
}
#: Schemes defined for replace-one neighbours only (see module doc).
_NATIVE_REPLACE_ONE = ("shuffle", "checkin")
#: Batch laws with a model of their own (Gaussian steps; see module doc).
_BATCH_LAWS = ("truncated_poisson", "with_replacement")
#: Fixed-size batches: replace-one neighbours and additive-noise steps only (see module doc).
_FIXED_BATCHES = ("without_replacement", "shuffled")

_TOP_FIELDS = ("mechanism", "scheme", "neighboring", "epsilon", "delta", "source", "rho", "fpr", "tpr")


@dataclass(frozen=True)
class Claim:
    """A validated claim and the model verifier checks it on.

    ``mechanism`` and ``scheme`` are the normalised JSON objects (defaults filled in; a sequence's
    phases each state their mechanism, and ``mechanism`` is None when the claim gave no default
    for them); ``model`` is
    the scheme the bounds are computed for (for ``replace_one`` its pair has sensitivity 2Δ) and
    ``directions`` the adjacency directions the relation requires; ``modelling`` says in words how
    the claim was modelled. Build claims with :func:`parse_claim` or :func:`load_claim`, which
    validate and fill in the model.
    """

    mechanism: dict | None
    scheme: dict
    neighboring: str
    epsilon: float | None
    delta: float | None
    source: str = ""
    model: Scheme = field(default=None, compare=False, repr=False)  # type: ignore[assignment]
    directions: tuple[Direction, ...] = field(default=(), compare=False)
    modelling: str = field(default="", compare=False)
    rho: float | None = None  # a zCDP claim (ρ-zCDP) instead of (ε, δ); epsilon and delta are then None
    fpr: float | None = None  # a trade-off claim: TPR at this false-positive rate is at most ``tpr``
    tpr: float | None = None

    def to_dict(self) -> dict:
        """The claim as JSON (round-trips through :func:`parse_claim`)."""
        out = {
            "mechanism": copy.deepcopy(self.mechanism),
            "scheme": copy.deepcopy(self.scheme),
            "neighboring": self.neighboring,
            "epsilon": self.epsilon,
            "delta": self.delta,
        }
        if self.mechanism is None:
            del out["mechanism"]
        if self.rho is not None:
            del out["epsilon"], out["delta"]
            out["rho"] = self.rho
        if self.tpr is not None:
            del out["epsilon"], out["delta"]
            out["fpr"], out["tpr"] = self.fpr, self.tpr
        if self.source:
            out["source"] = self.source
        return out


def _object(path: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidArgument(path, value, "must be a JSON object")
    return value


def _unknown(path: str, obj: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    extra = sorted(set(obj) - set(allowed))
    if extra:
        key = extra[0]
        shown = key if key.isidentifier() else json.dumps(key)  # a key such as "a\nb" stays on one line
        where = f"{path}." if path else ""
        raise InvalidArgument(f"{where}{shown}", obj[key], f"unknown field (allowed: {', '.join(allowed)})")


#: The peers' names for the same fields (dp_accounting, Opacus, prv_accountant): accepted in a claim
#: object where the field exists, normalised to verifier's name.
PEER_NAMES = {"noise_multiplier": "sigma", "sampling_probability": "rate", "sample_rate": "rate", "num_steps": "steps"}


def _peer_names(path: str, obj: Mapping[str, Any], fields: Mapping[str, Any]) -> Mapping[str, Any]:
    """``obj`` with the peers' names of :data:`PEER_NAMES` renamed where ``fields`` has the field;
    a field given under both names is refused."""
    renamed = dict(obj)
    for peer, ours in PEER_NAMES.items():
        if peer in renamed and ours in fields:
            if ours in renamed:
                raise InvalidArgument(f"{path}.{peer}", renamed[peer], f"gives {ours} a second time ({peer} is another name for {ours})")
            renamed[ours] = renamed.pop(peer)
    return renamed


def _read(path: str, obj: Mapping[str, Any], kinds: dict[str, _Spec], extra: tuple[str, ...] = ()) -> tuple[str, _Spec, dict]:
    """Validate one JSON object against ``kinds``; returns (kind name, spec, normalised fields).
    ``extra`` names fields the caller reads itself (a phase's ``mechanism``); the peers' names
    (:data:`PEER_NAMES`) are read as verifier's."""
    obj = _object(path, obj)
    if "name" not in obj:
        raise InvalidArgument(f"{path}.name", None, f"the field is missing (one of {', '.join(kinds)})")
    name = obj["name"]
    if not isinstance(name, str) or name not in kinds:
        raise InvalidArgument(f"{path}.name", name, f"must be one of {', '.join(kinds)}")
    spec = kinds[name]
    obj = _peer_names(path, obj, spec.fields)
    _unknown(path, obj, ("name", *spec.fields, *extra))
    values: dict[str, Any] = {}
    for key, (check, default) in spec.fields.items():
        if key in obj:
            values[key] = check(f"{path}.{key}", obj[key])
        elif default is _REQUIRED:
            raise InvalidArgument(f"{path}.{key}", None, f"the field is missing (it is required for {path} {name!r})")
        else:
            values[key] = default
    return name, spec, values


def _build(path: str, build: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a constructor, renaming the parameter of an InvalidArgument to its field path."""
    try:
        return build(*args, **kwargs)
    except InvalidArgument as exc:
        raise InvalidArgument(f"{path}.{exc.name}", exc.value, exc.rule, exc.fix) from None


def _pair(path: str, mechanism: Any, scheme_path: str, scheme_name: str, neighboring: str) -> tuple[DominatingPair, dict, str]:
    """The step pair of the mechanism at ``path`` for the scheme at ``scheme_path`` under
    ``neighboring``: (pair, normalised mechanism object, modelling in words); see the module doc."""
    mech_name, mech_spec, mech_values = _read(path, mechanism, MECHANISMS)
    pair_values = dict(mech_values)
    if scheme_name in _BATCH_LAWS:
        return _batch_law_pair(path, mech_name, mech_spec, mech_values, scheme_path, scheme_name, neighboring)
    if scheme_name in _FIXED_BATCHES:
        if neighboring != "replace_one":
            raise InvalidArgument(
                "neighboring",
                neighboring,
                f"is not defined for {scheme_path} {scheme_name!r}: fixed-size batches need replace-one neighbours (Steinke 2022, §6.2; "
                "adding or removing a record changes n and the batch layout, and no bound is proven for that)",
                fix='state "neighboring": "replace_one"',
            )
        if not mech_spec.additive:
            raise InvalidArgument(
                f"{path}.name", mech_name, "fixed-size batches are modelled for additive-noise mechanisms only (gaussian, laplace)"
            )
        pair_values["sensitivity"] = 2.0 * mech_values["sensitivity"]
        modelling = f"replace-one neighbours: the batch step's pair has sensitivity 2×{mech_values['sensitivity']:g} = {pair_values['sensitivity']:g}; "
        if scheme_name == "shuffled":
            from verifier.certify.methods.shuffled import ATTAINED_DATASETS

            modelling += (
                f"shuffled batches bounded above by that pair once per epoch (no amplification) or, where smaller, by the "
                f"clone pair of floor(n/B) shuffled users per epoch (shuffled-clones), and below by the "
                f"{ATTAINED_DATASETS} (C = {mech_values['sensitivity']:g})"
            )
        else:
            modelling += (
                "fixed-size batches at rate B/n bounded above by the substitution pair "
                "(both orientations of the mixture: Balle et al. 2018 Thm 10, Dong, Roth & Su Thm 4.2) and below by "
                "one fixed orientation (an attained pair of neighbours)"
            )
            if mech_name == "gaussian":
                modelling += (
                    "; for Gaussian steps also by the adaptive adversary's recursion, below over the attained "
                    "remove/add orientations and above over a finite cover of every realisable step "
                    "(proofs/fixed_batch_domination.py)"
                )
    elif scheme_name in _NATIVE_REPLACE_ONE:
        if neighboring != "replace_one":
            raise InvalidArgument(
                "neighboring",
                neighboring,
                f"scheme {scheme_name!r} is defined for replace-one neighbours only (Liew et al., footnote 2)",
                fix='state "neighboring": "replace_one"',
            )
        if mech_spec.additive:
            pair_values["sensitivity"] = 2.0 * mech_values["sensitivity"]
            modelling = (
                f"replace-one neighbours: records x and -x of norm <= {mech_values['sensitivity']:g}, the step's pair has "
                f"sensitivity {pair_values['sensitivity']:g}"
            )
        else:
            modelling = "replace-one neighbours: the step's pair is the mechanism on the two records"
    elif neighboring == "replace_one" and mech_spec.record_pair and scheme_name in _REPLACE_ONE_SCHEMES:
        modelling = "replace-one neighbours: the step's pair is the mechanism on the two records"
    elif neighboring == "replace_one":
        if not mech_spec.additive:
            raise InvalidArgument(
                "neighboring", neighboring, f"is modelled only for additive-noise mechanisms (gaussian, laplace), not {mech_name!r}"
            )
        if scheme_name in _REPLACE_ONE_MODELS:
            bounds = (
                "the records +C and -C (dp_accounting's REPLACE_ONE pair), attained and dominating every step, so both bounds"
                if mech_name == "gaussian"
                else f"bounded above by Balle et al. 2018's convex combination over the substitution pair "
                f"(sensitivity {2.0 * mech_values['sensitivity']:g}) and below by the attained records +C and -C (dominance unproven)"
            )
            modelling = (
                "replace-one neighbours under Poisson sampling: the element keeps its coin and its record changes; "
                f"records of norm <= {mech_values['sensitivity']:g}, {bounds}"
            )
            pair = _build(path, mech_spec.build, **pair_values)
            return pair, {"name": mech_name, **mech_values}, modelling
        if scheme_name not in _REPLACE_ONE_SCHEMES:
            raise InvalidArgument(
                "neighboring",
                neighboring,
                f"is not supported for {scheme_path} {scheme_name!r}: under subsampling/allocation a replacement is not an "
                "add/remove step with doubled sensitivity (Steinke 2022, §6.2)",
                fix="state the claim for add_or_remove neighbours",
            )
        pair_values["sensitivity"] = 2.0 * mech_values["sensitivity"]
        modelling = (
            f"replace-one neighbours modelled as add-or-remove with sensitivity 2×{mech_values['sensitivity']:g} = "
            f"{pair_values['sensitivity']:g} (additive noise: a replacement moves the query by at most 2Δ; Steinke 2022, §6.2)"
        )
    else:
        modelling = f"{neighboring} neighbours"
    pair: DominatingPair = _build(path, mech_spec.build, **pair_values)
    return pair, {"name": mech_name, **mech_values}, modelling


def _batch_law_pair(
    path: str, mech_name: str, mech_spec: _Spec, values: dict, scheme_path: str, scheme_name: str, neighboring: str
) -> tuple[DominatingPair, dict, str]:
    """The step pair of a truncated-Poisson or with-replacement scheme (see the module doc)."""
    if mech_name != "gaussian":
        raise InvalidArgument(f"{path}.name", mech_name, f"{scheme_name} batches are modelled for the gaussian mechanism only")
    bound = values["sensitivity"]
    if scheme_name == "with_replacement":
        if neighboring != "replace_one":
            raise InvalidArgument(
                "neighboring", neighboring, f"is not defined for {scheme_path} 'with_replacement': n is public, so neighbours "
                "replace one record (adding one changes n and every record's multiplicity law)", fix='state "neighboring": "replace_one"',
            )
        modelling = (
            f"replace-one neighbours, records of norm <= {bound:g} (one copy moves the sum by {2 * bound:g}): bounded above by the "
            "pair that hides K = 0 from K >= 1 (against K = 0 also the record's multiplicity K ~ Bin(m, 1/n), revealed in the other term), and below by the "
            "record +C against -C with every other record -C"
        )
        return _build(path, mech_spec.build, values["sigma"], 2.0 * bound), {"name": mech_name, **values}, modelling
    relation = "replace-one neighbours (n fixed, the record's value changes)" if neighboring == "replace_one" else (
        f"{neighboring} neighbours (the dataset holding the record has n records, the other n - 1)")
    modelling = (
        f"{relation}, records of norm <= {bound:g}: bounded above by the labelled mixture that reveals the other records' coins "
        "below the cap and only the kept batch above it, and below by the attained pairs with every other record 0 and with every "
        "other record at one value o of norm C, the record at -o or at an angle to -o (against -x under replace-one; verifier.pairs.batch_sampling, "
        "verifier.certify.methods.truncated_attained)"
    )
    return _build(path, mech_spec.build, **values), {"name": mech_name, **values}, modelling


def _scheme(
    path: str, obj: Any, mechanism: Any, mechanism_path: str, neighboring: str, kinds: dict[str, _Spec]
) -> tuple[dict, dict | None, Scheme, str]:
    """The scheme object at ``path`` (one of ``kinds``) run on ``mechanism``: (normalised scheme
    object, normalised mechanism or None for a sequence, model, modelling). A phase object carries
    its own ``mechanism`` or inherits the claim's."""
    is_phase = kinds is not SCHEMES
    name, spec, values = _read(path, obj, kinds, extra=("mechanism",) if is_phase else ())
    if is_phase and "mechanism" in obj:
        mechanism, mechanism_path = obj["mechanism"], f"{path}.mechanism"
    if spec.phased:
        return _sequence(path, values["phases"], mechanism, neighboring)
    if spec.nested:
        return _repeat_and_select(path, values, mechanism, mechanism_path, neighboring)
    if mechanism is None:
        where = f"{path}.mechanism" if is_phase else "mechanism"
        raise InvalidArgument(where, None, "the field is missing (it is required; a phase without one inherits the claim's mechanism)")
    if _names_step(mechanism):
        return _class_step(path, name, values, mechanism, mechanism_path, neighboring)
    pair, mech, modelling = _pair(mechanism_path, mechanism, path, name, neighboring)
    build = _REPLACE_ONE_MODELS.get(name, spec.build) if neighboring == "replace_one" else spec.build
    model = _build(path, build, pair, **values)
    model, exact = _as_composition(model)
    if exact:
        modelling += f"; {exact}"
    if isinstance(model, MatrixMechanism) and model.strategy.signed:
        modelling += "; C has negative entries: accounted through |C| (Schuchardt & Kalinin, Lemma 2.8)"
    return {"name": name, **{k: v for k, v in values.items() if v is not None}}, mech, model, modelling


def _names_step(mechanism: Any) -> bool:
    """Whether a (not yet validated) mechanism object names a class of steps (``zcdp``, a selection)."""
    spec = MECHANISMS.get(mechanism.get("name")) if isinstance(mechanism, Mapping) and isinstance(mechanism.get("name"), str) else None
    return spec is not None and spec.step


def _class_step(path: str, name: str, values: dict, mechanism: Any, mechanism_path: str, neighboring: str) -> tuple[dict, dict, Scheme, str]:
    """A class step under ``single`` or ``composed``: a ``zcdp`` step, the worst (ξ, ρ)-zCDP mechanism,
    bounded above by its Rényi curve and below by its Gaussian member (:class:`verifier.schemes.ZCDP`;
    under ``poisson`` with add/remove neighbours, the same step Poisson-sampled,
    :class:`verifier.schemes.SampledZCDP`), or an ``exponential`` or ``permute_and_flip`` selection, the
    worst score instance (:class:`verifier.schemes.Selection`). The statement is about the claim's
    neighbouring relation as given (no sensitivity is doubled: the scores move by at most Δ under it)."""
    mech_name, mech_spec, mech_values = _read(mechanism_path, mechanism, MECHANISMS)
    sampled = name == "poisson" and neighboring == "add_or_remove" and mech_name == "zcdp"
    if name not in _REPLACE_ONE_SCHEMES and not sampled:
        known = "its Renyi bound" if mech_name == "zcdp" else "its selection rule on worst-case scores"
        where = ", or poisson under add_or_remove neighbours" if mech_name == "zcdp" else ""
        raise InvalidArgument(
            f"{path}.name", name, f"a {mech_name!r} step is known only through {known}: it runs under single or composed "
            f"(or such a phase of a sequence){where}; other samplings are not modelled"
        )
    step = _build(mechanism_path, mech_spec.build, **mech_values)
    if sampled:
        model: Scheme = _build(path, SampledZCDP, step, values["rate"], values["steps"])
    else:
        model = step if name == "single" or values["times"] == 1 else Composed(step, values["times"])
    if isinstance(step, Selection):
        above, below = (("the eps-BR class pair", "the supremum of its two-candidate instances") if step.rule == "exponential" else
                        ("the Laplace pair with Delta/b = epsilon (it dominates every instance, composed too)",
                         "Laplace with Delta/b = epsilon, the supremum of its two-candidate instances"))
        modelling = (
            f"the worst score instance of the {step.rule} selection (epsilon = {step.epsilon:g}, scores moving by at most Delta) "
            f"under the claim's relation: UPPER from {above}, LOWER from {below} (exact for one run); "
            f"composed, LOWER from one fixed two-candidate instance (verifier.certify.methods.selection)"
        )
        return {"name": name, **values}, {"name": mech_name, **mech_values}, model, modelling
    modelling = (
        f"the worst (xi, rho)-zCDP mechanism (rho = {step.rho:g}, xi = {step.xi:g}) under the claim's relation: UPPER from its "
        f"Renyi curve xi + rho*alpha, LOWER from its member, the Gaussian with Delta/sigma = sqrt(2 rho)"
    )
    if sampled:
        modelling += f", Poisson-sampled at rate {values['rate']:g} (no amplification in the UPPER side: sampling never increases D_alpha)"
    return {"name": name, **values}, {"name": mech_name, **mech_values}, model, modelling


def _repeat_and_select(path: str, values: dict, mechanism: Any, mechanism_path: str, neighboring: str) -> tuple[dict, dict | None, Scheme, str]:
    """A ``repeat_and_select`` scheme: its ``run`` is a scheme object (with its own mechanism or the
    claim's), repeated a random number of times and the best run released, ``times`` times over."""
    run_path = f"{path}.run"
    run, mech, inner, note = _scheme(run_path, values["run"], mechanism, mechanism_path, neighboring, _RUN_KINDS)
    if "mechanism" in values["run"] and mech is not None:
        run = {**run, "mechanism": mech}
    model = _build(path, RepeatAndSelect, inner, values["mean"], values["shape"])
    if values["times"] > 1:
        model = Composed(model, values["times"])
    modelling = (
        f"repeat-and-select of the run ({note}): UPPER from Papernot & Steinke 2022 Thm 2 on the run's Renyi curve, "
        "LOWER from the run itself (the number of runs is >= 1)"
    )
    if model.poisson if isinstance(model, RepeatAndSelect) else model.scheme.poisson:
        modelling = (
            f"repeat-and-select of the run ({note}), Poisson({values['mean']:g}) runs: UPPER from Papernot & Steinke 2022 Thm 6 on the "
            "run's Renyi curve and its RDP delta; LOWER from the run mixed with 'nothing released' at e^-mean (only as the whole scheme)"
        )
    shape = "inf" if values["shape"] == math.inf else values["shape"]  # strict JSON has no Infinity
    return {"name": "repeat_and_select", "run": run, "mean": values["mean"], "shape": shape, "times": values["times"]}, mech, model, modelling


def _as_composition(model: Scheme) -> tuple[Scheme, str | None]:
    """A scheme that is exactly a composition of its step, as that composition, and why (None when
    it is not one): k-out-of-t random allocation with k = t puts every element in all t steps of
    every epoch (Feldman & Shenfeld, §2.1: k of the t steps, here all of them), so its run is the
    t·epochs-fold composition of the step. The closed forms, the PLD engine and Monte Carlo then see
    the composition (a t = 1 allocation over 10⁴ epochs took over a minute as an allocation)."""
    if isinstance(model, Allocation) and model.k == model.steps:
        times = model.steps * model.epochs
        composed = Single(model.pair) if times == 1 else Composed(Single(model.pair), times)
        return composed, f"{model.k}-out-of-{model.steps} allocation: every element is in every step, modelled exactly as the {times}-fold composition of the step"
    return model, None


def _sequence(path: str, phases: list, mechanism: Any, neighboring: str) -> tuple[dict, None, Scheme, str]:
    """A ``sequence`` scheme: each phase is a (non-sequence) scheme object with its own mechanism
    or the claim's; the normalised phases always state theirs."""
    kinds = {key: spec for key, spec in SCHEMES.items() if not spec.phased}
    normalised, models, notes = [], [], []
    for index, phase in enumerate(phases):
        where = f"{path}.phases[{index}]"
        scheme, mech, model, note = _scheme(where, phase, mechanism, "mechanism", neighboring, kinds)
        normalised.append({**scheme, "mechanism": mech})
        models.append(model)
        notes.append(note)
    modelling = notes[0] if len(set(notes)) == 1 else "; ".join(f"phases[{i}]: {note}" for i, note in enumerate(notes))
    return {"name": "sequence", "phases": normalised}, None, _build(path, Sequence, tuple(models)), modelling


def parse_claim(obj: Any) -> Claim:
    """Validate a claim given as a JSON-like mapping and build its model (see the module docstring).

    Raises :class:`InvalidArgument` naming the first offending field; computes nothing.
    """
    obj = _object("claim", obj)
    _unknown("", obj, _TOP_FIELDS)
    stated = ("scheme", "rho") if "rho" in obj else ("scheme", "fpr", "tpr") if ("tpr" in obj or "fpr" in obj) else ("scheme", "epsilon", "delta")
    if not _is_sequence(obj.get("scheme")):
        stated = ("mechanism", *stated)  # a sequence's phases may each state their own
    for key in stated:
        if key not in obj:
            raise InvalidArgument(key, None, "the field is missing (it is required)", fix=f"a claim has the fields {', '.join(_TOP_FIELDS[:5])}")
    if "rho" in obj and ("epsilon" in obj or "delta" in obj):
        raise InvalidArgument("rho", obj["rho"], "a zCDP claim states rho instead of epsilon and delta, not beside them")
    if "tpr" in obj and any(key in obj for key in ("epsilon", "delta", "rho")):
        raise InvalidArgument("tpr", obj["tpr"], "a trade-off claim states fpr and tpr instead of epsilon and delta (or rho), not beside them")
    fpr = check_unit("fpr", obj["fpr"]) if "tpr" in obj else None
    tpr = check_unit("tpr", obj["tpr"]) if "tpr" in obj else None
    neighboring = check_choice("neighboring", obj.get("neighboring", "add_or_remove"), NEIGHBORING)
    rho = check_positive("rho", obj["rho"]) if "rho" in obj else None
    epsilon = None if (rho is not None or tpr is not None) else check_real("epsilon", obj["epsilon"])
    delta = None if (rho is not None or tpr is not None) else check_half_open_unit("delta", obj["delta"])  # δ = 0: a pure-DP claim
    source = obj.get("source", "")
    if not isinstance(source, str):
        raise InvalidArgument("source", source, "must be a string (who produced the claim)")
    scheme, mechanism, model, modelling = _scheme("scheme", obj["scheme"], obj.get("mechanism"), "mechanism", neighboring, SCHEMES)
    if mechanism is None and "mechanism" in obj:  # a sequence's default for its phases: validated and kept
        name, _, values = _read("mechanism", obj["mechanism"], MECHANISMS)
        mechanism = {"name": name, **values}
    return Claim(
        mechanism=mechanism,
        scheme=scheme,
        neighboring=neighboring,
        epsilon=epsilon,
        delta=delta,
        source=source,
        model=model,
        directions=directions_for("add_or_remove" if neighboring == "replace_one" else neighboring),
        modelling=modelling,
        rho=rho,
        fpr=fpr,
        tpr=tpr,
    )


def model_of(mechanism: Any, scheme: Any, neighboring: str) -> Scheme:
    """The model of a claim's ``mechanism`` and ``scheme`` objects under ``neighboring`` (what
    :func:`parse_claim` builds, for the commands that bound a scheme without a claim). Raises
    :class:`InvalidArgument` naming the first offending field."""
    neighboring = check_choice("neighboring", neighboring, NEIGHBORING)
    return _scheme("scheme", scheme, mechanism, "mechanism", neighboring, SCHEMES)[2]


def _is_sequence(scheme: Any) -> bool:
    """Whether a (not yet validated) scheme object names a phased or nested scheme (its mechanisms
    may be stated inside it)."""
    if not isinstance(scheme, Mapping):
        return False
    spec = SCHEMES.get(scheme.get("name")) if isinstance(scheme.get("name"), str) else None
    return spec is not None and (spec.phased or spec.nested)


def load_claim(path: str | Path) -> Claim:
    """Read and validate a claim from a JSON file (see :func:`parse_claim`)."""
    return parse_claim(read_json("claim", path))


def read_json(name: str, path: str | Path) -> Any:
    """The JSON value in the file at ``path`` (a small file: at most :data:`MAX_CLAIM_BYTES`), read
    strictly (no NaN/Infinity, UTF-8/16/32 only); errors name the option ``name`` and the path."""
    try:
        with Path(path).open("rb") as handle:
            raw = handle.read(MAX_CLAIM_BYTES + 1)
    except OSError as exc:
        raise InvalidArgument(name, str(path), f"cannot be read ({exc.strerror})") from None
    if len(raw) > MAX_CLAIM_BYTES:
        raise InvalidArgument(name, str(path), f"is larger than {MAX_CLAIM_BYTES} bytes (a {name} is a small JSON object)")
    return json_value(name, _decode(name, str(path), raw), str(path))


def json_value(name: str, text: str, shown: str | None = None) -> Any:
    """The JSON value of ``text``, read strictly (no NaN/Infinity); an error names ``name`` and
    ``shown`` (the file's path; by default the start of the text)."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        where = text[:60] if shown is None else shown
        raise InvalidArgument(name, where, f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None


#: Largest claim file read (a claim is a few hundred bytes; a huge file is a wrong file).
MAX_CLAIM_BYTES = 1 << 20


def _decode(name: str, path: str, raw: bytes) -> str:
    """The text of a claim file: UTF-8 (RFC 8259), with or without a byte-order mark, or UTF-16/32
    recognised by their BOM or NUL-byte pattern (``json.detect_encoding``, as ``json.loads`` does
    for bytes). Any other encoding (Latin-1, …) is refused, never guessed."""
    encoding = json.detect_encoding(raw)
    if encoding == "utf-8" and raw.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InvalidArgument(
            name, path, f"is not valid {encoding.upper()} (byte {raw[exc.start]:#04x} at offset {exc.start})",
            fix="save the file as UTF-8",
        ) from None


def _reject_constant(name: str) -> float:
    """JSON has no NaN/Infinity; Python's reader accepts them unless told otherwise."""
    raise json.JSONDecodeError(f"{name} is not a JSON number", name, 0)
