"""Exact discrete samplers (dpstats.privacy.samplers): the draws follow their exact distributions.

Every statistical test uses a fixed seed and states its false-failure rate
(the chance, over seeds, that a correct sampler fails it).  Chi-square tests
pool the cells with expected count below 5 into the two tails; they and the
binomial tests reject at p < 1e-6.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from dpstats.privacy import samplers
from dpstats.privacy.samplers import (
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    gaussian_closeness,
    gaussian_plan,
    laplace_closeness,
    laplace_plan,
    release_on_grid,
)
from dpstats.privacy.secure_random import SecureGenerator

P_MIN = 1e-6  # rejection level of every test below


def _chisquare_pvalue(draws: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    """Chi-square goodness of fit on ``support`` (cells with expected count < 5 merged into the two tails)."""
    n = draws.size
    counts = np.array([np.sum(draws == k) for k in support], dtype=float)
    expected = pmf * n
    below, above = draws < support[0], draws > support[-1]
    keep = expected >= 5
    lo_idx, hi_idx = np.argmax(keep), len(keep) - 1 - np.argmax(keep[::-1])
    obs = np.r_[counts[:lo_idx].sum() + below.sum(), counts[lo_idx:hi_idx + 1], counts[hi_idx + 1:].sum() + above.sum()]
    exp = np.r_[expected[:lo_idx].sum(), expected[lo_idx:hi_idx + 1], expected[hi_idx + 1:].sum()]
    exp[0] += max(0.0, n * (1 - pmf.sum())) / 2  # the mass outside ``support``, split between the tails
    exp[-1] += max(0.0, n * (1 - pmf.sum())) / 2
    mask = exp > 0
    return float(stats.chisquare(obs[mask], exp[mask] * obs.sum() / exp[mask].sum()).pvalue)


def _laplace_pmf(t: int, support: np.ndarray) -> np.ndarray:
    return math.tanh(1.0 / (2 * t)) * np.exp(-np.abs(support) / t)


def _gaussian_pmf(s: int, support: np.ndarray) -> np.ndarray:
    k = np.arange(-40 * s - 40, 40 * s + 41)
    z = np.exp(-(k.astype(float) ** 2) / (2.0 * s * s)).sum()
    return np.exp(-(support.astype(float) ** 2) / (2.0 * s * s)) / z


# ---------------------------------------------------------------------------------------------
# Bernoulli(exp(-gamma))
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 7), Fraction(1, 2), Fraction(1), Fraction(9, 4),
                                   Fraction(5)])
def test_bernoulli_exp_matches_exp_minus_gamma(gamma):
    """False-failure rate: one binomial test, 1e-6."""
    n = 200_000
    draws = bernoulli_exp(gamma, n, np.random.default_rng(1))
    assert draws.dtype == bool and draws.shape == (n,)
    if gamma == 0:
        assert draws.all()
    else:
        assert stats.binomtest(int(draws.sum()), n, math.exp(-float(gamma))).pvalue > P_MIN


def test_bernoulli_exp_refuses_negative_gamma():
    with pytest.raises(ValueError, match="gamma must be >= 0"):
        bernoulli_exp(Fraction(-1, 2), 3, np.random.default_rng(0))


# ---------------------------------------------------------------------------------------------
# discrete Laplace
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("t", [1, 3, 10])
def test_discrete_laplace_matches_its_pmf(t):
    """P(y) = tanh(1/(2t)) exp(-|y|/t): chi-square on the support plus two tail tests.

    False-failure rate: three tests at 1e-6 each.
    """
    n = 300_000
    draws = discrete_laplace(t, n, np.random.default_rng(2 + t))
    assert draws.dtype == np.int64 and draws.shape == (n,)
    support = np.arange(-12 * t, 12 * t + 1)
    assert _chisquare_pvalue(draws, support, _laplace_pmf(t, support)) > P_MIN
    for k in (2 * t, 5 * t):  # P(|Y| >= k) = 2 e^(-k/t) / (1 + e^(-1/t))
        p = 2 * math.exp(-k / t) / (1 + math.exp(-1 / t))
        assert stats.binomtest(int(np.sum(np.abs(draws) >= k)), n, p).pvalue > P_MIN


def test_discrete_laplace_scalar_path_matches_its_pmf():
    """Releases of at most 12 draws use the Python-integer path: same law.  False-failure rate 1e-6."""
    rng = np.random.default_rng(7)
    t = 3
    draws = np.concatenate([discrete_laplace(t, 5, rng) for _ in range(20_000)])
    support = np.arange(-36, 37)
    assert _chisquare_pvalue(draws, support, _laplace_pmf(t, support)) > P_MIN


def test_discrete_laplace_large_parameter_moments():
    """t = 2^52 (the hardened Laplace's scale in grid steps): E|Y| and E Y^2 match.

    E|Y| = 2 tanh(1/(2t)) e^(-1/t) / (1 - e^(-1/t))^2 (about t), E Y^2 about 2 t^2.  False-failure rate:
    two z-tests at 5.7e-7 each.
    """
    t = 1 << 52
    n = 100_000
    y = discrete_laplace(t, n, np.random.default_rng(8)).astype(float) / t
    assert abs(np.mean(np.abs(y)) - 1.0) < 5.0 * 1.0 / math.sqrt(n)  # sd of |Y|/t is 1
    assert abs(np.mean(y * y) - 2.0) < 5.0 * math.sqrt(20.0 / n)


def test_discrete_laplace_rejects_bad_parameters():
    for bad in (0, -3, 1 << 62):
        with pytest.raises(ValueError, match=r"the discrete Laplace parameter must be an integer in \[1, 2\^62\)"):
            discrete_laplace(bad, 3, np.random.default_rng(0))


# ---------------------------------------------------------------------------------------------
# discrete Gaussian
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("s", [1, 2, 5])
def test_discrete_gaussian_matches_its_pmf(s):
    """P(y) proportional to exp(-y^2/(2 s^2)): chi-square plus two tail tests.

    False-failure rate: three tests at 1e-6 each.
    """
    n = 300_000
    draws = discrete_gaussian(s, n, np.random.default_rng(20 + s))
    assert draws.dtype == np.int64 and draws.shape == (n,)
    support = np.arange(-8 * s, 8 * s + 1)
    pmf = _gaussian_pmf(s, support)
    assert _chisquare_pvalue(draws, support, pmf) > P_MIN
    for k in (2 * s, 3 * s):
        big = np.arange(k, 40 * s + 40)
        p = 2 * _gaussian_pmf(s, big).sum()
        assert stats.binomtest(int(np.sum(np.abs(draws) >= k)), n, p).pvalue > P_MIN


def test_discrete_gaussian_scalar_path_matches_its_pmf():
    """The Python-integer path (at most 12 draws): same law.  False-failure rate 1e-6."""
    rng = np.random.default_rng(9)
    s = 2
    draws = np.concatenate([discrete_gaussian(s, 3, rng) for _ in range(30_000)])
    support = np.arange(-16, 17)
    assert _chisquare_pvalue(draws, support, _gaussian_pmf(s, support)) > P_MIN


def test_discrete_gaussian_large_parameter_moments():
    """s = 2^40 (the hardened Gaussian's sd in grid steps): variance s^2, 4th moment 3 s^4, tails.

    False-failure rate: three z/binomial tests at about 1e-6 each.
    """
    s = 1 << 40
    n = 200_000
    y = discrete_gaussian(s, n, np.random.default_rng(10)).astype(float) / s
    assert abs(np.mean(y * y) - 1.0) < 5.0 * math.sqrt(2.0 / n)
    assert abs(np.mean(y**4) - 3.0) < 5.0 * math.sqrt(96.0 / n)
    assert stats.binomtest(int(np.sum(np.abs(y) > 2.5)), n, 2 * stats.norm.sf(2.5)).pvalue > P_MIN


def test_gaussian_acceptance_probability_is_exact_for_a_far_proposal():
    """A proposal y = 13 at s = 4 is kept with probability exp(-(13-4)^2 / 32) (q = 2, r = 1 factors).

    Both the vectorised and the scalar acceptance.  False-failure rate: two binomial tests at 1e-6.
    """
    s, y, n = 4, 13, 100_000
    p = math.exp(-((y - s) ** 2) / (2 * s * s))
    rng = np.random.default_rng(11)
    vec = samplers._gaussian_accept(rng, np.full(n, y, dtype=np.int64), s)
    assert stats.binomtest(int(vec.sum()), n, p).pvalue > P_MIN
    scal = [samplers._gaussian_accept_scalar(rng, -y, s) for _ in range(20_000)]
    assert stats.binomtest(int(sum(scal)), 20_000, p).pvalue > P_MIN


def test_samplers_are_reproducible_with_a_seed_and_work_with_the_csprng():
    a = discrete_gaussian(1 << 40, 100, np.random.default_rng(5))
    b = discrete_gaussian(1 << 40, 100, np.random.default_rng(5))
    assert np.array_equal(a, b)
    c, d = (discrete_laplace(7, 3, np.random.default_rng(6)) for _ in range(2))
    assert np.array_equal(c, d)


def test_samplers_with_the_csprng_match_their_pmf():
    """The OS CSPRNG feeds the same exact algorithms.  Not seeded: false-failure rate 2e-6 (two tests)."""
    gen = SecureGenerator()
    support = np.arange(-24, 25)
    lap = discrete_laplace(3, 100_000, gen)
    assert _chisquare_pvalue(lap, support, _laplace_pmf(3, support)) > P_MIN
    gau = discrete_gaussian(3, 100_000, gen)
    assert _chisquare_pvalue(gau, support, _gaussian_pmf(3, support)) > P_MIN


# ---------------------------------------------------------------------------------------------
# closeness of discrete to rounded continuous noise (the bounds the ledger relies on)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("s", [20, 60, 200])
def test_gaussian_closeness_bound_holds_in_high_precision(s):
    """max over |k| <= 37 s of |log(RG(k)/DG(k))| <= lambda, and both tails <= tau (60-digit arithmetic)."""
    mpmath.mp.dps = 60
    lam, tau = samplers._gaussian_closeness_bound(s, 37.0)
    S = mpmath.mpf(s)
    z = mpmath.nsum(lambda j: mpmath.e ** (-j**2 / (2 * S * S)), [-mpmath.inf, mpmath.inf])
    half = mpmath.mpf(1) / 2
    worst = mpmath.mpf(0)
    top = int(37 * s)
    for k in list(range(0, 3 * s)) + list(range(top - 3 * s, top + 1)):
        dg = mpmath.e ** (-mpmath.mpf(k) ** 2 / (2 * S * S)) / z
        rg = (1 - 2 * mpmath.ncdf(-half / S)) if k == 0 else (
            mpmath.ncdf(-(k - half) / S) - mpmath.ncdf(-(k + half) / S))
        worst = max(worst, abs(mpmath.log(rg / dg)))
    assert worst <= lam
    tail_dg = 2 * mpmath.nsum(lambda k: mpmath.e ** (-k**2 / (2 * S * S)), [top + 1, mpmath.inf]) / z
    tail_rg = 2 * mpmath.ncdf(-(top + half) / S)
    assert tail_dg <= tau and tail_rg <= tau
    assert worst >= 0.5 * lam  # and the bound is not loose (within 3% at s = 200)


@pytest.mark.parametrize("t", [1, 3, 100, 1 << 30])
def test_laplace_closeness_is_the_exact_largest_log_ratio(t):
    mpmath.mp.dps = 60
    T = mpmath.mpf(t)
    z = 1 / (2 * T)
    p = lambda k: mpmath.tanh(z) * mpmath.e ** (-abs(k) / T)  # noqa: E731
    q = lambda k: (1 - mpmath.e ** (-z)) if k == 0 else mpmath.e ** (-abs(k) / T) * mpmath.sinh(z)  # noqa: E731
    assert q(0) + 2 * mpmath.nsum(q, [1, mpmath.inf]) == pytest.approx(1.0, abs=1e-40)
    worst = max(abs(mpmath.log(q(k) / p(k))) for k in range(-20, 21))
    assert float(worst) <= laplace_closeness(t) <= float(worst) * (1 + 1e-5)


def test_closeness_at_the_package_grid_is_negligible():
    lam, tau = gaussian_closeness(1 << 40)
    assert 0 < lam < 1e-22 and 0 < tau < 1e-290
    assert 0 < laplace_closeness(1 << 52) < 1e-16
    with pytest.raises(ValueError, match=r"the closeness bound is stated for s >= 2\^20"):
        gaussian_closeness(1000)


# ---------------------------------------------------------------------------------------------
# grid plans and releases
# ---------------------------------------------------------------------------------------------

def test_gaussian_plan_inflates_the_sensitivity_and_keeps_mu():
    plan = gaussian_plan(2.0, 0.5, 10)
    g = plan.grid
    assert g == 2.0 ** (math.frexp(4.0)[1] - 1 - 40)
    assert (1 << 40) <= plan.param < (1 << 41)
    assert plan.sensitivity >= 2.0 + g * 4  # ceil(sqrt(10)) = 4
    assert plan.sensitivity / plan.noise_scale <= 0.5
    assert plan.noise_scale == g * plan.param


def test_laplace_plan_is_exactly_epsilon_dp():
    plan = laplace_plan(1.0, 0.7, 3)
    g = Fraction(plan.grid)
    assert Fraction(plan.sensitivity) >= 1 + 3 * g
    assert Fraction(plan.sensitivity) / (g * plan.param) <= Fraction(0.7)  # Delta' / (g t) <= epsilon, exactly
    assert (1 << 52) <= plan.param


def test_release_on_grid_handles_huge_values_exactly_and_passes_non_finite_through():
    plan = gaussian_plan(1.0, 1.0, 4)
    x = np.array([1e30, -3.5e25, np.nan, np.inf])
    out = release_on_grid(x, plan, np.random.default_rng(0))
    assert np.isnan(out[2]) and out[3] == np.inf
    assert np.all(np.abs(out[:2] - x[:2]) < 20 * plan.noise_scale + 1e30 * 2**-52)
    small = release_on_grid(np.array([0.25, -7.0]), plan, np.random.default_rng(0))
    assert np.all(small / plan.grid == np.round(small / plan.grid))  # on the grid


def test_to_grid_of_an_array_equals_its_scalar_rule_bit_for_bit():
    # to_grid rounds an array in one buffer (np.clip's definition, min(max(.))); every entry must be the integer
    # the scalar rule round(clip(ldexp(x, -e), -2^1000, 2^1000)) gives it, with the same finite mask (1e300 at
    # exponent -60 leaves int64: the exact object path)
    rng = np.random.default_rng(3)
    plain = np.concatenate([rng.normal(size=50) * 10.0 ** rng.integers(-20, 20, 50), [0.0, -0.0, 5e-324, -2.5, 2.5]])
    for x in (plain, np.array([1e300, -1e300, np.nan, np.inf, -np.inf, 0.5]), np.zeros(0)):
        for exponent in (-60, -3, 0, 7):
            k, finite = samplers.to_grid(x, exponent)
            assert finite.tolist() == np.isfinite(x).tolist()
            expected = [samplers.to_grid(np.float64(v), exponent)[0] for v in x]
            assert [int(a) for a in k.ravel()] == [int(b) for b in expected]


#: sha256 prefixes of discrete_gaussian((1 << 40) + 123, (40, 25)), then discrete_laplace(3, 500), then
#: discrete_gaussian(5, 300) from one generator seeded 7, recorded before the samplers asked numpy for equal bounds
#: as a scalar: any change of the draws (or of their order) changes them
_GOLDEN_DRAWS = {
    "PCG64": ("c2eb1852f46c9093", "bfc440fe5958b6c1", "e74fd98d23aceb2d"),
    "MT19937": ("ecdb9052e616ba77", "6b2f29b7fa3271b8", "f80d2043ce72b589"),
    "Philox": ("0a4987052ee82695", "bf4843f90c788074", "e3cc3f386a901fe2"),
    "SFC64": ("26899e03d9cc554c", "4ebf6379bb6b0703", "c48298982196f21f"),
}


@pytest.mark.parametrize("bit_generator", sorted(_GOLDEN_DRAWS))
def test_seeded_draws_are_the_recorded_ones(bit_generator):
    """The samplers' output for a seeded generator is fixed (a release made with a seed is reproducible across
    versions): deterministic, no false failures."""
    import hashlib

    def digest(a: np.ndarray) -> str:
        return hashlib.sha256(np.ascontiguousarray(a, dtype=np.int64).tobytes()).hexdigest()[:16]

    rng = np.random.Generator(getattr(np.random, bit_generator)(7))
    got = (digest(discrete_gaussian((1 << 40) + 123, (40, 25), rng)), digest(discrete_laplace(3, 500, rng)),
           digest(discrete_gaussian(5, 300, rng)))
    assert got == _GOLDEN_DRAWS[bit_generator]


class _CallRecorder:
    """A numpy Generator stand-in that records the bound of every ``integers`` call."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng, self.highs = rng, []

    def integers(self, low, high, size=None, dtype=np.int64):
        self.highs.append(high)
        return self.rng.integers(low, high, size=size, dtype=dtype)


@pytest.mark.parametrize("bit_generator", ["PCG64", "MT19937", "Philox", "SFC64"])
@pytest.mark.parametrize("high", [1, 2, 7, (1 << 32) - 1, 1 << 32, (1 << 40) + 3, 1 << 62])
def test_equal_bounds_are_drawn_as_one_scalar_bound_with_the_same_values(bit_generator, high):
    """An array of equal bounds is drawn with the bound as a scalar (numpy's fast fill, not one bounded draw per
    element), and gives the values, and leaves the generator in the state, of the per-element draws; mixed bounds
    keep the array.  Deterministic, no false failures."""
    for seed in range(5):
        reference = np.random.Generator(getattr(np.random, bit_generator)(seed))
        recorder = _CallRecorder(np.random.Generator(getattr(np.random, bit_generator)(seed)))
        for size in (2, 3, 1000):
            bounds = np.full(size, high, dtype=np.int64)
            expected = reference.integers(0, bounds, dtype=np.int64)
            got = samplers._below(recorder, bounds)  # type: ignore[arg-type]
            assert np.array_equal(got, expected)
            assert np.ndim(recorder.highs[-1]) == 0
            mixed = np.array([high, 3] * size, dtype=np.int64)
            assert np.array_equal(samplers._below(recorder, mixed), reference.integers(0, mixed, dtype=np.int64))
            assert np.ndim(recorder.highs[-1]) == 1
        assert np.array_equal(recorder.rng.integers(0, 1 << 62, 4), reference.integers(0, 1 << 62, 4))


def _von_neumann_per_lane(rng, num2: np.ndarray, den2: np.ndarray) -> np.ndarray:
    """The von Neumann loop of :func:`samplers._von_neumann` without a first factor, every round's bounds drawn as an
    array of one bound per lane (its form before lanes sharing a denominator were drawn together)."""
    out = np.zeros(num2.size, dtype=bool)
    active, k = np.arange(num2.size), 1
    while active.size:
        n2, d2 = num2[active], den2[active]
        if int(d2.max()) <= samplers._SAFE // k:
            dk = d2 * k
            a = np.ones(active.size, dtype=bool) if k == 1 and np.array_equal(n2, dk) else \
                rng.integers(0, dk, dtype=np.int64) < n2
        else:
            first = rng.integers(0, d2, dtype=np.int64) < n2
            a = first & (rng.integers(0, np.full(active.size, k), dtype=np.int64) == 0)
        if k % 2:
            out[active[~a]] = True
        active, k = active[a], k + 1
    return out


@pytest.mark.parametrize("den", [1, 2, 7, (1 << 40) + 3, (1 << 61) + 1])
def test_a_shared_denominator_gives_the_per_lane_draws(den):
    """Lanes sharing one denominator (the Bernoulli(exp(-1)) runs, the discrete Laplace's exp(-U/t)) draw what the
    per-lane loop draws, and leave the generator where it leaves it, with shared and with per-lane numerators
    (up to the overflow branch, den k > 2^62).  Deterministic, no false failures."""
    for seed in range(4):
        numerators = np.random.default_rng(100 + seed).integers(0, den + 1, 500)
        for num2 in (numerators, np.full(500, den), np.ones(500, dtype=np.int64)):
            ours, ref = np.random.default_rng(seed), np.random.default_rng(seed)
            got = samplers._von_neumann(ours, np.ones(500, dtype=np.int64), np.ones(500, dtype=np.int64),
                                        num2.astype(np.int64), np.full(500, den, dtype=np.int64))
            assert np.array_equal(got, _von_neumann_per_lane(ref, num2.astype(np.int64), np.full(500, den)))
            assert np.array_equal(ours.integers(0, 1 << 62, 3), ref.integers(0, 1 << 62, 3))


def _gaussian_accept_by_lanes(rng, y: np.ndarray, s: int) -> np.ndarray:
    """:func:`samplers._gaussian_accept` as it was built before its factors were set lane by lane only where a
    proposal has more than one (every factor's position computed from a repeated lane index, the lanes' outcomes
    counted with ``bincount``): the reference for the draws, for proposals within 65 s (the vectorised path)."""
    n = y.size
    q, r = np.divmod(np.abs(np.abs(y) - s), s)
    q2 = q * q
    n_e1, n_half = q2 // 2, q2 % 2
    counts = n_e1 + n_half + q + 1
    lanes = np.repeat(np.arange(n), counts)
    m = lanes.size
    start = np.cumsum(counts) - counts
    pos = np.arange(m) - np.repeat(start, counts)
    e1, half = np.repeat(n_e1, counts), np.repeat(n_half, counts)
    rr, qq = np.repeat(r, counts), np.repeat(q, counts)
    num1, den1, num2, den2 = (np.ones(m, dtype=np.int64) for _ in range(4))
    is_half = (pos >= e1) & (pos < e1 + half)
    den2[is_half] = 2
    is_r = (pos >= e1 + half) & (pos < e1 + half + qq)
    num2[is_r], den2[is_r] = rr[is_r], s
    is_sq = pos == e1 + half + qq
    num1[is_sq], den1[is_sq] = rr[is_sq], s
    num2[is_sq], den2[is_sq] = rr[is_sq], 2 * s
    ok = samplers._von_neumann(rng, num1, den1, num2, den2)
    return np.bincount(lanes[~ok], minlength=n) == 0


@pytest.mark.parametrize("bit_generator", ["PCG64", "MT19937", "Philox", "SFC64"])
@pytest.mark.parametrize("s", [1, 2, 5, 1000, (1 << 40) + 123])
def test_gaussian_acceptance_draws_what_the_lane_built_factors_drew(bit_generator, s):
    """The discrete Gaussian's acceptance sets only the factors of proposals far from s (q >= 1) one by one and
    reads each proposal's outcome with one reduction: the same outcomes and the same generator state as the factors
    built from a repeated lane index (:func:`_gaussian_accept_by_lanes`), for proposals near s, far from it (many
    factors, odd and even q^2) and none.  Deterministic, no false failures."""
    for seed in range(3):
        spread = np.random.default_rng(50 + seed)
        for y in (spread.integers(-3 * s, 3 * s + 1, 2000), np.array([s, -s, 0, 2 * s, -3 * s - 1, 5 * s + 7]),
                  np.zeros(0, dtype=np.int64)):
            ours = np.random.Generator(getattr(np.random, bit_generator)(seed))
            ref = np.random.Generator(getattr(np.random, bit_generator)(seed))
            got = samplers._gaussian_accept(ours, y.astype(np.int64), s)
            assert got.dtype == bool
            assert np.array_equal(got, _gaussian_accept_by_lanes(ref, y.astype(np.int64), s))
            assert np.array_equal(ours.integers(0, 1 << 62, 3), ref.integers(0, 1 << 62, 3))
