"""Mechanisms (dpstats.privacy.mechanisms): noise matches the calibration, charge before drawing.

Statistical tests use fixed seeds.  Their false-failure rates (the chance that a
correct implementation fails, over seeds) are stated per test; with fixed seeds
the outcome is reproducible.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpstats.errors import BudgetExceededError, InvalidPrivacyParameterError, MethodOptionError, NoiseScaleRangeError
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep
from dpstats.privacy.mechanisms import (
    exponential_mechanism,
    gaussian_mechanism,
    gaussian_mechanism_mu,
    laplace_mechanism,
    make_rng,
    permutation,
    public_uniform,
    symmetric_gaussian_mechanism,
)

N = 200_000
Z = 5.0  # two-sided z bound of every moment check: false-failure rate 5.7e-7 each


def _big_ledger() -> PrivacyLedger:
    return PrivacyLedger(1e6, 0.5)


def _binomial_ok(k: int, n: int, p: float, alpha: float = 1e-6) -> bool:
    return stats.binomtest(k, n, p).pvalue > alpha


# ---------------------------------------------------------------------------------------------
# Laplace
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sens, eps", [(1.0, 1.0), (2.0, 0.5), (0.3, 4.0)])
def test_laplace_variance_and_tails_match_scale(sens, eps):
    """Lap(b), b = sens/eps: variance 2 b^2, P(|Z| > t) = exp(-t/b).

    False-failure rate: variance z-test 5.7e-7, three binomial tail tests 1e-6 each.
    """
    b = sens / eps
    rng = np.random.default_rng(11)
    ledger = _big_ledger()
    out = laplace_mechanism(np.zeros(N), l1_sensitivity=sens, epsilon=eps, rng=rng, ledger=ledger, name="t")
    assert out.shape == (N,)
    step = ledger.steps[-1]
    assert step.mechanism == "laplace" and step.noise_scale == pytest.approx(b) and step.epsilon == eps
    var = float(np.mean(out**2))  # the mean is known to be 0
    se = math.sqrt(20.0 / N) * b * b  # Var(Z^2) = E Z^4 - (E Z^2)^2 = 24 b^4 - 4 b^4
    assert abs(var - 2 * b * b) < Z * se
    for t in (0.5 * b, 2 * b, 5 * b):
        assert _binomial_ok(int(np.sum(np.abs(out) > t)), N, math.exp(-t / b))
    # the noise is centred on the value
    shifted = laplace_mechanism(np.full(1000, 7.0), l1_sensitivity=sens, epsilon=eps, rng=rng, ledger=ledger,
                                name="t")
    assert abs(np.median(shifted) - 7.0) < 0.2 * b


def test_laplace_scalar_in_scalar_out():
    """A scalar gets a float back: the same draw as the one-element vector under the same seed, with noise added."""
    out = laplace_mechanism(3.0, l1_sensitivity=1.0, epsilon=1.0, rng=np.random.default_rng(0),
                            ledger=_big_ledger(), name="s")
    vector = laplace_mechanism(np.array([3.0]), l1_sensitivity=1.0, epsilon=1.0, rng=np.random.default_rng(0),
                               ledger=_big_ledger(), name="s")
    assert isinstance(out, float) and vector.shape == (1,)
    assert out == vector[0] and out != 3.0


# ---------------------------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sens, eps, delta", [(1.0, 1.0, 1e-6), (2.5, 0.3, 1e-5), (0.1, 5.0, 1e-9)])
def test_gaussian_variance_and_tails_match_the_exact_calibration(sens, eps, delta):
    """sigma = sens / gaussian_mu(eps, delta); variance sigma^2; tails via the normal sf.

    The noise is a discrete Gaussian on the grid g = 2^(floor(log2 sigma) - 40) (hardened sampler): the
    recorded sensitivity is sens + g ceil(sqrt(N)) (the rounding allowance of N coordinates), the recorded
    sd is g * ceil(that / (mu g)), so it lies in [sigma, sigma (1 + 2^-40 (1 + ceil(sqrt(N)) / mu))], and
    the recorded mu' = sensitivity / sd never exceeds mu.

    False-failure rate: variance z-test 5.7e-7, three binomial tail tests 1e-6 each.
    """
    mu = gaussian_mu(eps, delta)
    sigma = sens / mu
    rng = np.random.default_rng(12)
    ledger = _big_ledger()
    out = gaussian_mechanism(np.zeros(N), l2_sensitivity=sens, epsilon=eps, delta=delta, rng=rng, ledger=ledger,
                             name="g")
    step = ledger.steps[-1]
    g = 2.0 ** (math.frexp(sigma)[1] - 1 - 40)
    root = math.isqrt(N - 1) + 1  # ceil(sqrt(N)); N is not a square
    assert step.mechanism == "gaussian"
    assert sigma <= step.noise_scale <= sigma * (1 + 2.0**-40 * (1 + root / mu))
    assert step.sensitivity == pytest.approx(sens + g * root, rel=1e-15) and step.sensitivity >= sens + g * root
    assert step.noise_scale / g == math.ceil(step.sensitivity / (mu * g))
    assert step.mu <= mu and step.mu == pytest.approx(mu, rel=1e-9)
    assert np.all(out / g == np.round(out / g))  # every output on the public grid
    var = float(np.mean(out**2))
    assert abs(var - sigma**2) < Z * math.sqrt(2.0 / N) * sigma**2
    for t in (0.5 * sigma, 2 * sigma, 3.5 * sigma):
        assert _binomial_ok(int(np.sum(np.abs(out) > t)), N, 2 * stats.norm.sf(t / sigma))


def test_gaussian_mechanism_mu_uses_sigma_sens_over_mu():
    """False-failure rate: one variance z-test, 5.7e-7."""
    rng = np.random.default_rng(13)
    out = gaussian_mechanism_mu(np.zeros(N), l2_sensitivity=3.0, mu=0.5, rng=rng, ledger=_big_ledger(), name="g")
    assert abs(np.mean(out**2) - 36.0) < Z * math.sqrt(2.0 / N) * 36.0


def test_gaussian_rejects_zero_sensitivity_without_charging():
    ledger = _big_ledger()
    with pytest.raises(NoiseScaleRangeError,
                       match="a Gaussian release with zero sensitivity needs no noise; do not charge it"):
        gaussian_mechanism_mu(1.0, l2_sensitivity=0.0, mu=1.0, rng=np.random.default_rng(0), ledger=ledger, name="z")
    assert ledger.steps == []


# ---------------------------------------------------------------------------------------------
# symmetric matrix mechanism
# ---------------------------------------------------------------------------------------------

def test_symmetric_matrix_mechanism_is_symmetric_with_the_right_variance():
    """Noise N(0, (sens/mu)^2) on and above the diagonal, mirrored below.

    False-failure rate: 10 per-entry variance z-tests at 5.7e-7 each, 45 correlation
    z-tests at 5.7e-7 each: below 4e-5 in all.
    """
    d, reps, sens, mu = 4, 6000, 2.0, 0.8
    sigma = sens / mu
    rng = np.random.default_rng(14)
    base = np.arange(16, dtype=float).reshape(4, 4)
    base = base + base.T
    draws = np.empty((reps, d, d))
    for r in range(reps):
        ledger = PrivacyLedger(10.0, 1e-5)
        out = symmetric_gaussian_mechanism(base, l2_sensitivity=sens, mu=mu, rng=rng, ledger=ledger, name="m")
        assert len(ledger.steps) == 1 and ledger.steps[0].dimension == d * (d + 1) // 2
        assert ledger.steps[0].mu == pytest.approx(mu)
        draws[r] = out - base
    assert np.array_equal(draws, np.swapaxes(draws, 1, 2))  # exactly symmetric
    iu = np.triu_indices(d)
    upper = draws[:, iu[0], iu[1]]  # (reps, 10): diagonal and above
    var = np.mean(upper**2, axis=0)
    assert np.all(np.abs(var - sigma**2) < Z * math.sqrt(2.0 / reps) * sigma**2)
    corr = np.corrcoef(upper, rowvar=False)[np.triu_indices(upper.shape[1], 1)]
    assert np.all(np.abs(corr) < Z / math.sqrt(reps))  # independent entries


def test_symmetric_matrix_mechanism_rejects_non_square():
    with pytest.raises(ValueError, match="matrix must be square"):
        symmetric_gaussian_mechanism(np.zeros((2, 3)), l2_sensitivity=1.0, mu=1.0, rng=np.random.default_rng(0),
                                     ledger=_big_ledger(), name="m")


# ---------------------------------------------------------------------------------------------
# exponential mechanism
# ---------------------------------------------------------------------------------------------

SCORES = np.array([0.0, 1.0, 2.0, 3.0, 1.5, -1.0])
LOG_BASE = np.log(np.array([1.0, 2.0, 0.5, 1.0, 3.0, 1.0]))


def _em_frequencies(monotone: bool, draws: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    counts = np.zeros(SCORES.size, dtype=int)
    for _ in range(draws):
        ledger = PrivacyLedger(10.0, 1e-6)
        i = exponential_mechanism(LOG_BASE, SCORES, sensitivity=2.0, epsilon=1.2, rng=rng, ledger=ledger,
                                  name="em", monotone=monotone)
        counts[i] += 1
    return counts


def _em_probabilities(factor: float) -> np.ndarray:
    w = np.exp(LOG_BASE + factor * SCORES)
    return w / w.sum()


@pytest.mark.parametrize("monotone", [False, True])
def test_exponential_mechanism_frequencies(monotone):
    """P(i) proportional to base_i * exp(eps*score_i/(2 sens)) (or eps*score_i/sens when monotone).

    False-failure rate: the chi-square goodness-of-fit test at alpha = 1e-4.  The same
    counts must be rejected (p < 1e-8) against the other variant's probabilities, so the
    test has power to tell the two exponents apart.
    """
    eps, sens, draws = 1.2, 2.0, 20_000
    counts = _em_frequencies(monotone, draws, seed=21 + monotone)
    right = _em_probabilities(eps / sens if monotone else eps / (2 * sens))
    wrong = _em_probabilities(eps / (2 * sens) if monotone else eps / sens)
    assert stats.chisquare(counts, draws * right).pvalue > 1e-4
    assert stats.chisquare(counts, draws * wrong).pvalue < 1e-8


def test_exponential_mechanism_never_picks_zero_base_measure_and_charges():
    rng = np.random.default_rng(3)
    log_base = np.array([-np.inf, 0.0, -np.inf])
    scores = np.array([100.0, 0.0, 100.0])
    ledger = PrivacyLedger(1e3, 1e-6)
    picks = {exponential_mechanism(log_base, scores, sensitivity=1.0, epsilon=1.0, rng=rng, ledger=ledger,
                                   name="em") for _ in range(200)}
    assert picks == {1}
    assert len(ledger.steps) == 200 and all(s.mechanism == "exponential" and s.epsilon == 1.0 for s in ledger.steps)
    assert ledger.spent == (pytest.approx(200.0), 0.0)
    with pytest.raises(ValueError, match="every candidate has zero base measure"):
        exponential_mechanism(np.full(3, -np.inf), scores, sensitivity=1.0, epsilon=1.0, rng=rng, ledger=ledger,
                              name="em")
    with pytest.raises(ValueError, match="log_base_measure and scores must be 1-d arrays of equal, non-zero length"):
        exponential_mechanism(np.zeros(2), np.zeros(3), sensitivity=1.0, epsilon=1.0, rng=rng, ledger=ledger,
                              name="em")
    assert len(ledger.steps) == 200  # refusals charged nothing


# ---------------------------------------------------------------------------------------------
# charge before drawing
# ---------------------------------------------------------------------------------------------

def _calls():
    """(name, call(rng, ledger)) of every charged mechanism, each asking for epsilon 1."""
    return [
        ("laplace", lambda rng, led: laplace_mechanism(np.zeros(3), l1_sensitivity=1.0, epsilon=1.0, rng=rng,
                                                       ledger=led, name="x")),
        ("gaussian", lambda rng, led: gaussian_mechanism(np.zeros(3), l2_sensitivity=1.0, epsilon=1.0, delta=1e-6,
                                                         rng=rng, ledger=led, name="x")),
        ("gaussian_mu", lambda rng, led: gaussian_mechanism_mu(0.0, l2_sensitivity=1.0, mu=gaussian_mu(1.0, 1e-6),
                                                               rng=rng, ledger=led, name="x")),
        ("symmetric", lambda rng, led: symmetric_gaussian_mechanism(np.eye(3), l2_sensitivity=1.0,
                                                                    mu=gaussian_mu(1.0, 1e-6), rng=rng,
                                                                    ledger=led, name="x")),
        ("exponential", lambda rng, led: exponential_mechanism(np.zeros(4), np.arange(4.0), sensitivity=1.0,
                                                               epsilon=1.0, rng=rng, ledger=led, name="x")),
    ]


@pytest.mark.parametrize("name, call", _calls(), ids=[c[0] for c in _calls()])
def test_mechanisms_charge_before_drawing(name, call):
    """A ledger with too little budget refuses, records nothing, and the generator is untouched."""
    for ledger in (PrivacyLedger(0.5, 1e-6),  # too small from the start
                   _partly_spent_ledger()):  # enough at first, not after an earlier step
        before_steps = list(ledger.steps)
        rng = np.random.default_rng(99)
        state = rng.bit_generator.state
        with pytest.raises(BudgetExceededError, match="step 'x' would bring this fit's spend to .*, above its budget"):
            call(rng, ledger)
        assert rng.bit_generator.state == state  # nothing was drawn
        assert ledger.steps == before_steps
    # with enough budget the same call charges once and draws
    ledger = PrivacyLedger(1.0 + 1e-12, 1e-6)
    rng = np.random.default_rng(99)
    state = rng.bit_generator.state
    call(rng, ledger)
    assert len(ledger.steps) == 1
    assert rng.bit_generator.state != state


def _partly_spent_ledger() -> PrivacyLedger:
    ledger = PrivacyLedger(1.5, 1e-6)
    ledger.charge(PrivacyStep("earlier", "laplace", 1.0, "L1", 1.0 / 0.8, epsilon=0.8, delta=0.0))
    return ledger


# a negative, NaN or infinite sensitivity is the typed NoiseScaleRangeError the API reports (a ValueError too); the
# negative and NaN ones were a plain ValueError
_INFINITE_SENSITIVITY = r"the sensitivity of a release is infinite in double precision"


@pytest.mark.parametrize("bad, error, pattern", [
    (-1.0, NoiseScaleRangeError, r"sensitivity must be finite and >= 0, got -1$"),
    (float("nan"), NoiseScaleRangeError, r"sensitivity must be finite and >= 0, got nan$"),
    (float("inf"), NoiseScaleRangeError, _INFINITE_SENSITIVITY)])
def test_invalid_sensitivity_is_refused_before_charging(bad, error, pattern):
    ledger = _big_ledger()
    rng = np.random.default_rng(0)
    with pytest.raises(error, match=pattern):
        laplace_mechanism(1.0, l1_sensitivity=bad, epsilon=1.0, rng=rng, ledger=ledger, name="x")
    with pytest.raises(error, match=pattern):
        gaussian_mechanism_mu(1.0, l2_sensitivity=bad, mu=1.0, rng=rng, ledger=ledger, name="x")
    with pytest.raises(error, match=pattern):
        exponential_mechanism(np.zeros(2), np.zeros(2), sensitivity=bad, epsilon=1.0, rng=rng, ledger=ledger,
                              name="x")
    assert ledger.steps == []


@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan")])
def test_invalid_epsilon_is_refused_before_charging(eps):
    ledger = _big_ledger()
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidPrivacyParameterError, match=f"epsilon must be > 0, got {eps:.4g}$"):
        laplace_mechanism(1.0, l1_sensitivity=1.0, epsilon=eps, rng=rng, ledger=ledger, name="x")
    with pytest.raises(InvalidPrivacyParameterError, match=f"mu must be > 0, got {eps:.4g}$"):
        gaussian_mechanism_mu(1.0, l2_sensitivity=1.0, mu=eps, rng=rng, ledger=ledger, name="x")
    with pytest.raises(InvalidPrivacyParameterError, match=f"exponential mechanism needs epsilon > 0 and 0 <= delta "
                                                           f"< 1, got epsilon={eps:.4g}, delta=0$"):
        exponential_mechanism(np.zeros(2), np.zeros(2), sensitivity=1.0, epsilon=eps, rng=rng, ledger=ledger,
                              name="x")
    assert ledger.steps == []


def test_public_randomness_is_not_charged():
    rng = np.random.default_rng(5)
    p = permutation(10, rng)
    assert sorted(p.tolist()) == list(range(10))
    u = public_uniform(-1.0, 2.0, (50,), rng)
    assert u.shape == (50,) and np.all((u >= -1.0) & (u < 2.0))


# ---------------------------------------------------------------------------------------------
# make_rng
# ---------------------------------------------------------------------------------------------

def test_make_rng_seeded_is_reproducible_and_flagged():
    for seed in (0, 12345, np.int64(7), np.uint32(3)):
        g1, s1 = make_rng(seed)
        g2, s2 = make_rng(seed)
        assert s1 is True and s2 is True
        assert np.array_equal(g1.random(5), g2.random(5))
    g, seeded = make_rng(1)
    assert not np.array_equal(g.random(5), make_rng(2)[0].random(5))


def test_make_rng_passes_a_generator_through_as_seeded():
    gen = np.random.default_rng(4)
    out, seeded = make_rng(gen)
    assert out is gen and seeded is True


def test_make_rng_none_uses_the_os_csprng():
    """Unseeded: a SecureGenerator drawing from os.urandom (not a PRNG seeded once from OS entropy); two of
    them differ (a collision of 4 x 53 random bits has probability 2^-212)."""
    from dpstats.privacy.secure_random import SecureGenerator
    (g1, s1), (g2, s2) = make_rng(None), make_rng(None)
    assert s1 is False and s2 is False
    assert isinstance(g1, SecureGenerator) and isinstance(g1, np.random.Generator)
    assert not np.array_equal(g1.random(4), g2.random(4))


@pytest.mark.parametrize("bad", [True, False, "123", 1.5, 2.0, [1, 2], np.bool_(True), object()])
def test_make_rng_rejects_non_seeds(bad):
    with pytest.raises(MethodOptionError, match="random_state must be None, a non-negative int seed"):
        make_rng(bad)


def test_a_seed_sequence_is_a_seed_as_an_int_is():
    """make_rng (every entry point's seed check) refused a numpy SeedSequence: it now gives a seeded PCG64 stream,
    the same every time the same sequence is given, and spawn_generators spawns reproducible children from it."""
    from dpstats.privacy.mechanisms import make_rng, spawn_generators  # noqa: PLC0415

    seq = np.random.SeedSequence(7)
    (a, seeded_a), (b, seeded_b) = make_rng(seq), make_rng(seq)
    assert seeded_a and seeded_b and a.random() == b.random()
    first = [g.random() for g in spawn_generators(seq, 3)]
    assert first == [g.random() for g in spawn_generators(seq, 3)] and len(set(first)) == 3

