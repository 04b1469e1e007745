"""``verifier check-bound`` refutes the shuffled check-in paper's Lemma 1 as a DP → RDP bound and
deliberately wrong ε bounds, and finds nothing against a correct one.

References independent of verifier: D_λ of ε-randomized response in closed form
(1/(λ−1)) ln(p^λ(1−p)^{1−λ} + (1−p)^λ p^{1−λ}), p = e^ε/(1+e^ε); the Gaussian's exact ε(δ) by the
Balle & Wang 2018 (Thm 8) closed form, inverted with scipy.
"""

from __future__ import annotations

import math
import sys
import textwrap

import mpmath
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from verifier.cli import main
from verifier.properties.check_bound import check_dp_to_rdp, check_epsilon_bound
from verifier.rdp.checkin_published import lemma1_printed
from verifier.schemes import Composed, Poisson, Single


def rr_renyi(order: float, eps: float):
    """In mpmath at 50 digits (float64 rounding would land outside a ball-arithmetic bracket)."""
    with mpmath.workdps(50):
        o, p = mpmath.mpf(order), mpmath.exp(eps) / (1 + mpmath.exp(eps))
        return mpmath.log(p**o * (1 - p) ** (1 - o) + (1 - p) ** o * p ** (1 - o)) / (o - 1)


def exact_gaussian(scheme, delta):
    inner = scheme.scheme if isinstance(scheme, Composed) else scheme
    times = scheme.times if isinstance(scheme, Composed) else 1
    mu = math.sqrt(times) * inner.pair.sensitivity / inner.pair.sigma
    return brentq(lambda e: norm.cdf(-e / mu + mu / 2) - math.exp(e + norm.logcdf(-e / mu - mu / 2)) - delta, -50, 2000, xtol=1e-12)


def test_lemma1_is_refuted_also_at_positive_delta(capsys):
    # ε-RR is (ε, δ)-DP for every δ >= 0; Lemma 1 as printed gives less than its D_2 at δ = 1e-6.
    assert lemma1_printed(2.0, 1.0, 1e-6).value < rr_renyi(2.0, 1.0) == pytest.approx(0.7353, abs=1e-4)
    result = check_dp_to_rdp(lambda lam, e, d: lemma1_printed(lam, e, d).value if d > 0 else math.inf, examples=0)
    assert result.refuted and "δ=0.0" not in result.where
    assert main(["check-bound", "--builtin", "liew-lemma1", "--examples", "5"]) == 1
    assert capsys.readouterr().out.startswith("REFUTED: liew-lemma1")


def test_witness_bracket_holds_the_closed_form():
    result = check_dp_to_rdp(lambda lam, e, d: 0.0, examples=0)  # "RDP is 0": refuted at the largest D_λ on the grid
    order, eps = 16.0, 5.0
    assert result.where.startswith(f"order λ={order}, ε={eps}")
    assert result.bracket.lower <= rr_renyi(order, eps) <= result.bracket.upper


def test_wrong_epsilon_bounds_are_refuted_correct_one_is_not():
    upper = check_epsilon_bound(lambda s, d: 0.9 * exact_gaussian(s, d), "upper", examples=0, kinds=(Single, Composed))
    assert upper.refuted and upper.candidate < upper.bracket.lower
    lower = check_epsilon_bound(lambda s, d: 1.1 * exact_gaussian(s, d) + 1e-3, "lower", examples=0, kinds=(Single, Composed))
    assert lower.refuted and lower.candidate > lower.bracket.upper
    fine = check_epsilon_bound(lambda s, d: exact_gaussian(s, d) + 1e-9, "upper", examples=5, kinds=(Single, Composed))
    assert not fine.refuted and fine.points >= 20


def test_classical_gaussian_refuted_outside_its_regime(capsys):
    assert main(["check-bound", "--builtin", "classical-gaussian", "--examples", "0", "--json"]) == 1
    out = capsys.readouterr().out
    assert '"refuted": true' in out


def test_function_from_a_module(tmp_path, monkeypatch, capsys):
    (tmp_path / "mybounds.py").write_text(
        textwrap.dedent(
            """
            import math
            from verifier.schemes import Poisson

            def eps_upper(scheme, delta):      # forgets the composition: one step's ε for the whole run
                step = scheme.scheme if hasattr(scheme, "times") else scheme
                return math.sqrt(2 * math.log(1.25 / delta)) / step.pair.sigma if not isinstance(scheme, Poisson) else 1e9
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["check-bound", "--function", "mybounds:eps_upper", "--examples", "0"]) == 1
    assert "REFUTED: mybounds:eps_upper" in capsys.readouterr().out
    assert main(["check-bound", "--function", "mybounds:nothing"]) == 2
    assert "function='mybounds:nothing' is invalid" in capsys.readouterr().err
    sys.modules.pop("mybounds", None)


def test_a_module_in_the_current_directory_is_found(tmp_path, monkeypatch, capsys):
    """The README's ``--function mybounds:eps_upper`` run next to mybounds.py, without PYTHONPATH=.
    (the console script does not put the current directory on sys.path). Catches: a lookup that
    relies on sys.path alone (ModuleNotFoundError, exit 2)."""
    (tmp_path / "cwd_bounds.py").write_text("def eps_upper(scheme, delta):\n    return 0.0\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    try:
        assert main(["check-bound", "--function", "cwd_bounds:eps_upper", "--examples", "0"]) == 1  # ε = 0 is no upper bound
        assert "REFUTED: cwd_bounds:eps_upper" in capsys.readouterr().out
    finally:
        sys.modules.pop("cwd_bounds", None)


@pytest.mark.parametrize(
    "source, form, exception",
    [
        ("import math\nf = math.sqrt\n", "epsilon", "TypeError"),  # the wrong signature: sqrt(scheme, delta)
        ("def f(scheme, delta):\n    if delta < 1e-8:\n        raise ValueError('delta too small for my bound')\n    return 100.0\n", "epsilon", "ValueError: delta too small"),
        ("def f(order, epsilon, delta):\n    return 'not a number'\n", "dp-to-rdp", "ValueError"),  # float('not a number')
    ],
)
def test_a_user_function_that_raises_is_bad_input(tmp_path, monkeypatch, capsys, source, form, exception):
    """Exit 2 naming the function, its exception and the call, not exit 4 "DEFECT … report it to the
    verifier maintainers". Catches: the user's exception escaping to the defect handler."""
    (tmp_path / "raising_bounds.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert main(["check-bound", "--function", "raising_bounds:f", "--form", form, "--examples", "3"]) == 2
    finally:
        sys.modules.pop("raising_bounds", None)
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "DEFECT" not in err
    assert err.startswith("verifier: error: function='raising_bounds:f' is invalid: raised ") and exception in err and "when called as f(" in err
