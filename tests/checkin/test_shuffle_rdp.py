"""Theorem 3 / Eq. (8) of Liew, Hasegawa & Takahashi (shuffle-Gaussian Rényi divergence of one
specific pair), served as a LOWER-bound RDP curve by ``Shuffle``; checked against independent
oracles: the multinomial sum of Eq. (8) itself in mpmath (brute force over compositions), the
closed forms of notes §7 item 17, the notes' printed reference table (§7), and the random-allocation
remove RDP (the same quantity, notes §7 / issue 14)."""

import itertools
import json
import math

import mpmath
import numpy as np
import pytest

from verifier._types import Direction, Side
from verifier.cli import main
from verifier.errors import IncompatibleObjects, InvalidArgument
from verifier.pairs import Gaussian
from verifier.rdp import curve_for, epsilon_upper
from verifier.rdp.shuffle import shuffle_curve, shuffle_lower
from verifier.schemes import Allocation, Composed, Shuffle

#: The kernel and the lower-rounded series agree with the mpmath sum to float accuracy.
RTOL_ORACLE = 1e-12
#: Done-when 1 of issue 14: equal to the allocation remove RDP to 1e-10 relative.
RTOL_ALLOCATION = 1e-10


def eq8_brute_force(n: int, lam: int, sigma: float) -> float:
    """Eq. (8) summed term by term over all compositions k_1 + … + k_n = λ (mpmath, 50 digits)."""
    with mpmath.workdps(50):
        s2 = 2 * mpmath.mpf(sigma) ** 2
        total = mpmath.mpf(0)
        for ks in itertools.product(range(lam + 1), repeat=n):
            if sum(ks) != lam:
                continue
            multinomial = mpmath.factorial(lam) / mpmath.fprod(mpmath.factorial(k) for k in ks)
            total += multinomial * mpmath.exp(sum(k * k for k in ks) / s2)
        value = mpmath.log(mpmath.exp(-lam / s2) / mpmath.mpf(n) ** lam * total) / (lam - 1)
        return float(value)


@pytest.mark.parametrize("n,lam,sigma", [(2, 2, 1.0), (3, 4, 1.0), (4, 5, 2.0), (5, 6, 0.8), (6, 3, 1.5), (1, 7, 0.7)])
def test_eq8_matches_the_multinomial_sum_and_the_notes_small_cases(n, lam, sigma):
    got = float(shuffle_lower(Gaussian(sigma), n, [lam])[0])
    want = eq8_brute_force(n, lam, sigma)
    assert got <= want * (1 + 1e-15)  # a LOWER bound, rounded down
    assert got == pytest.approx(want, rel=RTOL_ORACLE)


def test_notes_small_exact_values():
    notes = {(2, 2, 1.0): 0.6201145069582779, (3, 4, 1.0): 1.0557656030730558, (4, 5, 2.0): 0.17397078303618918,
             (5, 6, 0.8): 3.0800795059015096, (6, 3, 1.5): 0.13531055798163427, (10000, 30, 1.0): 5.7896596306549}
    for (n, lam, sigma), want in notes.items():
        assert float(shuffle_lower(Gaussian(sigma), n, [lam])[0]) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("n,sigma", [(7, 1.0), (100, 0.7), (5000, 2.0)])
def test_closed_forms_at_orders_two_and_three(n, sigma):
    """Notes §7 item 17: G(n,2) = ln(1 + (e^{1/σ²} − 1)/n); G(n,3) = ½ ln([n e^{3/σ²} + 3n(n−1)e^{1/σ²} + n(n−1)(n−2)]/n³)."""
    with mpmath.workdps(40):
        a = mpmath.mpf(1) / sigma**2
        g2 = mpmath.log(1 + mpmath.expm1(a) / n)
        g3 = mpmath.log((n * mpmath.exp(3 * a) + 3 * n * (n - 1) * mpmath.exp(a) + n * (n - 1) * (n - 2)) / mpmath.mpf(n) ** 3) / 2
    got = shuffle_lower(Gaussian(sigma), n, [2, 3])
    assert got[0] == pytest.approx(float(g2), rel=RTOL_ORACLE)
    assert got[1] == pytest.approx(float(g3), rel=1e-11)


#: Notes §7 reference table (printed digits): (n, σ) → values at λ = 2, 4, 8, 16, 32, 64.
NOTES_TABLE = {
    (10, 0.5): ("1.85", "5.69749", "13.6974", "29.6974", "61.6974", "125.697"),
    (10, 1.0): ("0.158565", "0.366683", "1.70754", "5.69742", "13.6974", "29.6974"),
    (10, 2.0): ("0.0280067", "0.0562737", "0.113813", "0.237412", "1.70149", "5.69742"),
    (100, 1.0): ("0.0170369", "0.0347514", "0.07651", "3.39486", "11.3948", "27.3948"),
    (1000, 1.0): ("0.00171681", "0.00344038", "0.00690906", "1.09257", "9.09224", "25.0922"),
    (10000, 0.5): ("0.0053455", "0.0210658", "6.78966", "22.7897", "54.7897", "118.79"),
    (10000, 1.0): ("0.000171813", "0.000343694", "0.000687661", "0.00137642", "6.78966", "22.7897"),
    (10000, 2.0): ("2.84021e-05", "5.68046e-05", "0.00011361", "0.000227226", "0.000454471", "0.00090902"),
}
ORDERS = "2,4,8,16,32,64"


def _rdp_json(capsys, *flags: str) -> dict:
    assert main(["rdp", "--mechanism", "gaussian", *flags, "--orders", ORDERS, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("n,sigma", list(NOTES_TABLE), ids=lambda x: str(x))
def test_cli_shuffle_is_marked_lower_equals_allocation_and_the_notes_table(capsys, n, sigma):
    shuffle = _rdp_json(capsys, "--sigma", str(sigma), "--scheme", "shuffle", "--users", str(n))
    allocation = _rdp_json(capsys, "--sigma", str(sigma), "--scheme", "allocation", "--steps", str(n), "--direction", "remove")
    assert shuffle["side"] == "lower" and allocation["side"] == "upper"
    assert "LOWER" in shuffle["citation"] and "Eq. (8)" in shuffle["citation"]
    np.testing.assert_allclose(shuffle["values"], allocation["values"], rtol=RTOL_ALLOCATION)
    for got, printed in zip(shuffle["values"], NOTES_TABLE[(n, sigma)]):
        digits = len(printed.split("e")[0].replace(".", "").replace("-", "").lstrip("0"))
        assert float(f"{got:.{digits}g}") == float(printed), (got, printed)


def test_properties_sandwich_monotonicity():
    """Notes §7 items 16, 18, 21: n = 1 is the Gaussian RDP; max(0, λ/2σ² − ln n) <= G <= λ/2σ²;
    non-increasing in n and in σ, non-decreasing in λ."""
    orders = np.arange(2, 41)
    for sigma in (0.6, 1.0, 3.0):
        g1 = shuffle_lower(Gaussian(sigma), 1, orders)
        np.testing.assert_allclose(g1, orders / (2 * sigma**2), rtol=1e-13)
        prev = g1
        for n in (2, 5, 50, 5000):
            g = shuffle_lower(Gaussian(sigma), n, orders)
            assert np.all(g <= orders / (2 * sigma**2) * (1 + 1e-13))
            assert np.all(g >= orders / (2 * sigma**2) - math.log(n) - 1e-12)
            assert np.all(g <= prev * (1 + 1e-12)) and np.all(np.diff(g) >= -1e-12)
            prev = g
    assert np.all(shuffle_lower(Gaussian(2.0), 30, orders) <= shuffle_lower(Gaussian(1.0), 30, orders))


def test_direction_matters_reverse_divergence_differs():
    """Notes §7 item 22: Eq. (8) is D(mixture ‖ N(0, σ²I)); the reverse order (computed by quadrature
    for n = 2) is a different number, so swapping the arguments would be caught."""
    sigma, lam = 1.0, 3
    x = np.linspace(-12.0, 12.0, 2401)  # trapezoid on a fine grid: ~1e-10 accurate, far below the gap
    gx, gy = np.meshgrid(x, x)
    pdf = lambda z, mu: np.exp(-((z - mu) ** 2) / (2 * sigma**2)) / math.sqrt(2 * math.pi * sigma**2)  # noqa: E731
    q = pdf(gx, 0) * pdf(gy, 0)
    mix = (pdf(gx, 1) * pdf(gy, 0) + pdf(gx, 0) * pdf(gy, 1)) / 2
    reverse = math.log(np.trapezoid(np.trapezoid(q**lam * mix ** (1 - lam), x), x)) / (lam - 1)
    forward_quad = math.log(np.trapezoid(np.trapezoid(mix**lam * q ** (1 - lam), x), x)) / (lam - 1)
    forward = float(shuffle_lower(Gaussian(sigma), 2, [lam])[0])
    assert forward == pytest.approx(forward_quad, rel=1e-8)
    assert abs(reverse - forward) > 1e-2


def test_curve_is_lower_and_refuses_conversion_and_upper_composition():
    curve = curve_for(Shuffle(Gaussian(1.0), 100), [2, 2.5, 3, 1.5], Direction.REMOVE)
    assert curve.side is Side.LOWER
    assert list(curve.exact) == [False, True, False, True]  # orders sorted: 1.5, 2, 2.5, 3
    assert curve.values[0] == 0.0 and curve.values[2] == curve.values[1]
    with pytest.raises(InvalidArgument, match="LOWER"):
        epsilon_upper(curve, 1e-5)
    composed = curve_for(Composed(Shuffle(Gaussian(1.0), 100), 3), [2, 3], Direction.ADD)
    assert composed.side is Side.LOWER
    np.testing.assert_allclose(composed.values, 3 * shuffle_curve(Gaussian(1.0), 100, [2, 3], Direction.ADD).values, rtol=1e-15)
    upper = curve_for(Allocation(Gaussian(1.0), 100), [2, 3], Direction.ADD)
    with pytest.raises(IncompatibleObjects, match="side"):
        composed.compose(upper)


def test_cli_bad_users_is_one_line_exit_2(capsys):
    assert main(["rdp", "--sigma", "1", "--scheme", "shuffle", "--users", "0"]) == 2
    err = capsys.readouterr().err
    assert "users" in err and "Traceback" not in err
    assert main(["rdp", "--sigma", "1", "--scheme", "shuffle"]) == 2
