"""Hardened privacy: floating-point-safe noise (Mironov 2012) and the operating-system CSPRNG.

Statistical tests use fixed seeds (or the unseeded CSPRNG where that is the
point) and state their false-failure rates.
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import pickle

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpstats
from dpstats.privacy import secure_random
from dpstats.privacy.audit import epsilon_lower_bound
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep, reference_delta
from dpstats.privacy.mechanisms import (
    gaussian_block,
    gaussian_mechanism,
    gaussian_mechanism_mu,
    laplace_mechanism,
    make_rng,
    symmetric_gaussian_mechanism,
)
from dpstats.privacy.peeling import peeling
from dpstats.privacy.poisson_gaussian import poisson_gaussian_block
from dpstats.privacy.samplers import gaussian_plan, laplace_plan
from dpstats.privacy.secure_random import SecureGenerator


def _off_grid_near_zero(y: np.ndarray) -> np.ndarray:
    """The Mironov-style event: |y| < 1/2 and y is not a multiple of 2^-53."""
    scaled = np.ldexp(y, 53)
    return (np.abs(y) < 0.5) & (scaled != np.round(scaled))


# ---------------------------------------------------------------------------------------------
# Mironov (2012): the textbook floating-point Laplace leaks, ours does not
# ---------------------------------------------------------------------------------------------

def test_textbook_floating_point_laplace_leaks_through_low_bits():
    """value + numpy Laplace(1/epsilon), epsilon = 1, on the neighbours 0 and 1 (a count).

    From 1, an output below 1/2 is 1 + noise with noise in (-3/2, -1/2): computed exactly (Sterbenz), a
    multiple of 2^-53.  From 0 the output is the noise itself, whose spacing near 0 is far finer.  So the
    event "|y| < 1/2 and y not a multiple of 2^-53" has probability about 0.27 from 0 and exactly 0 from 1:
    the privacy loss is infinite, whatever epsilon the noise scale suggests.  The audit's lower
    confidence bound on epsilon (alpha = 1e-6) is far above the claim 1.
    """
    rng = np.random.default_rng(0)
    n = 100_000
    from_0 = _off_grid_near_zero(0.0 + rng.laplace(0.0, 1.0, n)).sum()
    from_1 = _off_grid_near_zero(1.0 + rng.laplace(0.0, 1.0, n)).sum()
    assert from_0 > 20_000 and from_1 == 0
    assert epsilon_lower_bound(int(from_0), int(from_1), n, 0.0, 1e-6) > 5.0


def test_hardened_laplace_does_not_leak_through_low_bits():
    """Our laplace_mechanism on the same pair: every output is on the public grid g = 2^-52, so the leaking
    event never happens.  The released value is the integer round(x / g) + Y (Y the same for the same
    seed) converted to the nearest double: where that conversion is exact (|output| < 1 here) the outputs
    from 0 and 1 differ by exactly 1.0, draw by draw; beyond, the conversion (post-processing of the
    integer) rounds the last bit, identically for both inputs' integers.
    """
    n = 20_000
    out = {}
    for x in (0.0, 1.0):
        rng = np.random.default_rng(3)  # the same noise for both inputs
        out[x] = np.array([laplace_mechanism(x, l1_sensitivity=1.0, epsilon=1.0, rng=rng,
                                             ledger=PrivacyLedger(1.0, 0.5), name="count") for _ in range(n)])
    g = laplace_plan(1.0, 1.0, 1).grid
    assert g == 2.0**-52
    for x in (0.0, 1.0):
        assert not _off_grid_near_zero(out[x]).any()
        assert np.all(np.ldexp(out[x], 52) == np.round(np.ldexp(out[x], 52)))  # on the grid
    exact = np.abs(out[0.0]) < 1.0
    # deterministic under the fixed seed; |Laplace(1)| < 1 has probability 1 - 1/e = 0.632, so the count is
    # Binomial(20000, 0.632) (mean 12642, sd 68): 0.5 n is 39 sds below, and a re-seed fails with probability below
    # exp(-n KL(0.5 || 0.632)) = exp(-722) (Chernoff)
    assert exact.sum() > 0.5 * n
    assert np.array_equal(out[1.0][exact] - out[0.0][exact], np.ones(int(exact.sum())))  # an exact shift


def test_hardened_laplace_low_bit_events_are_within_epsilon():
    """Low-order bits of the grid index (y / g mod 2^k) have the same law from 0 and from 1.

    For each k in 1..8 and each residue, the audit's lower confidence bound on epsilon stays below the
    claim.  False-failure rate: at most 510 events at alpha = 1e-6 each, about 5e-4.
    """
    n = 20_000
    idx = {}
    for x, seed in ((0.0, 11), (1.0, 12)):
        rng = np.random.default_rng(seed)
        y = np.array([laplace_mechanism(x, l1_sensitivity=1.0, epsilon=1.0, rng=rng,
                                        ledger=PrivacyLedger(1.0, 0.5), name="count") for _ in range(n)])
        idx[x] = np.round(np.ldexp(y, 52)).astype(np.int64)
    for k in range(1, 9):
        for r in range(2**k):
            p = int(np.sum(idx[0.0] % 2**k == r))
            q = int(np.sum(idx[1.0] % 2**k == r))
            assert epsilon_lower_bound(p, q, n, 0.0, 1e-6) <= 1.0
            assert epsilon_lower_bound(q, p, n, 0.0, 1e-6) <= 1.0


def test_hardened_gaussian_outputs_are_exact_shifts_on_the_grid():
    """Gaussian mechanism on neighbours 0 and 1 with the same seed: outputs differ by exactly 1.0."""
    plan = gaussian_plan(1.0, 1.0, 1)
    a = gaussian_mechanism_mu(np.zeros(1000), l2_sensitivity=1.0, mu=1.0, rng=np.random.default_rng(4),
                              ledger=PrivacyLedger(1e6, 0.5), name="a")
    b = gaussian_mechanism_mu(np.ones(1000), l2_sensitivity=1.0, mu=1.0, rng=np.random.default_rng(4),
                              ledger=PrivacyLedger(1e6, 0.5), name="b")
    assert np.array_equal(b - a, np.ones(1000))
    assert np.all(a / plan.grid == np.round(a / plan.grid))


# ---------------------------------------------------------------------------------------------
# every noise draw is on a public grid
# ---------------------------------------------------------------------------------------------

def _grid_of(note: str) -> float:
    exponent = int(note.split("on the grid 2^")[1].split()[0])
    return 2.0**exponent


def _on_grid(values: np.ndarray, g: float) -> bool:
    v = np.asarray(values, dtype=float) / g
    return bool(np.all(v == np.round(v)))


def test_every_additive_mechanism_releases_on_its_public_grid():
    rng = np.random.default_rng(5)
    ledger = PrivacyLedger(1e6, 0.5)
    x = rng.normal(size=7) * 100
    lap = laplace_mechanism(x, l1_sensitivity=2.0, epsilon=0.5, rng=rng, ledger=ledger, name="lap")
    assert _on_grid(lap, _grid_of(ledger.steps[-1].note)) and ledger.steps[-1].discrete
    gau = gaussian_mechanism(x, l2_sensitivity=2.0, epsilon=1.0, delta=1e-6, rng=rng, ledger=ledger, name="gau")
    assert _on_grid(gau, _grid_of(ledger.steps[-1].note)) and ledger.steps[-1].closeness_epsilon > 0
    m = rng.normal(size=(5, 5))
    sym = symmetric_gaussian_mechanism(m + m.T, l2_sensitivity=1.0, mu=0.5, rng=rng, ledger=ledger, name="sym")
    assert _on_grid(sym, _grid_of(ledger.steps[-1].note)) and np.array_equal(sym, sym.T)
    block = gaussian_block(rounds=2, mu_round=0.3, ledger=ledger, name="blk", dimension=4)
    for sens in (1.0, 3.0):
        out = block.release(x[:4], l2_sensitivity=sens, rng=rng)
        assert _on_grid(out, gaussian_plan(sens, 0.3, 4).grid)
    pel = peeling(x, sparsity=2, linf_sensitivity=0.1, epsilon=1.0, delta=1e-6, rng=rng, ledger=ledger)
    assert _on_grid(pel[pel != 0], _grid_of(ledger.steps[-1].note))
    dpsgd = poisson_gaussian_block(noise_multiplier=1.0, sampling_rate=0.5, rounds=1, clip_norm=1.0, n=50,
                                   ledger=PrivacyLedger(1e6, 0.5), name="sgd", dimension=3)
    rows = rng.normal(size=(50, 3))[dpsgd.sample(rng)]
    assert _on_grid(dpsgd.release_clipped_sum(rows, rng), _grid_of(ledger.steps[-1].note))


def test_no_mechanism_draws_floating_point_noise():
    """The numpy continuous samplers are never called for additive noise (only Gumbel for the exponential
    mechanism, which is documented as floating-point)."""
    class NoContinuousNoise:
        def __init__(self, rng):
            self._rng = rng

        def __getattr__(self, name):
            if name in ("normal", "laplace", "standard_normal", "gumbel", "exponential", "random", "uniform"):
                raise AssertionError(f"floating-point draw rng.{name}")
            return getattr(self._rng, name)

    rng = NoContinuousNoise(np.random.default_rng(6))
    ledger = PrivacyLedger(1e6, 0.5)
    laplace_mechanism(np.ones(3), l1_sensitivity=1.0, epsilon=1.0, rng=rng, ledger=ledger, name="a")
    gaussian_mechanism_mu(np.ones(30), l2_sensitivity=1.0, mu=1.0, rng=rng, ledger=ledger, name="b")
    gaussian_block(rounds=1, mu_round=1.0, ledger=ledger, name="c").release(np.ones(2), l2_sensitivity=1.0, rng=rng)
    peeling(np.arange(5.0), sparsity=2, linf_sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=rng,
            ledger=PrivacyLedger(1.0, 1e-6))


# ---------------------------------------------------------------------------------------------
# the ledger accounts for what is sampled
# ---------------------------------------------------------------------------------------------

def test_hardened_steps_describe_the_sampled_mechanism():
    ledger = PrivacyLedger(2.0, 1e-6)
    gaussian_mechanism(np.zeros(10), l2_sensitivity=1.0, epsilon=1.0, delta=5e-7, rng=np.random.default_rng(0),
                       ledger=ledger, name="g")
    laplace_mechanism(0.0, l1_sensitivity=1.0, epsilon=0.5, rng=np.random.default_rng(0), ledger=ledger, name="l")
    g, lap = ledger.steps
    assert g.mechanism == "gaussian" and "discrete Gaussian on the grid 2^" in g.note
    assert g.sensitivity > 1.0 and 0 < g.closeness_epsilon < 1e-20 and 0 < g.closeness_delta < 1e-280
    assert lap.mechanism == "laplace" and lap.discrete and "discrete Laplace on the grid 2^" in lap.note
    assert lap.epsilon == 0.5 and lap.epsilon * lap.noise_scale >= lap.sensitivity
    eps, delta = ledger.spent
    assert eps <= 2.0 and delta == 1e-6


def test_closeness_enters_the_total_as_two_lambda_and_a_smaller_delta():
    base = PrivacyStep("g", "gaussian", 1.0, "L2", 2.0)
    close = PrivacyStep("g", "gaussian", 1.0, "L2", 2.0, closeness_epsilon=1e-6, closeness_delta=1e-300)
    lap = PrivacyStep("l", "laplace", 1.0, "L1", 2.0, epsilon=0.5, delta=0.0)
    a, b = PrivacyLedger(10.0, 1e-5), PrivacyLedger(10.0, 1e-5)
    a.charge(base), a.charge(lap)
    b.charge(close), b.charge(lap)
    from dpstats.privacy.composition import compose_epsilon
    expected = compose_epsilon([close, lap], reference_delta(1e-5, 1e-6, 1e-300)) + 2e-6
    assert b.spent[0] == pytest.approx(expected, rel=1e-12) and b.spent[0] > a.spent[0]
    assert reference_delta(1e-5, 0.0, 0.0) == 1e-5 and reference_delta(1e-5, 1e-9, 0.0) < 1e-5


def test_closeness_is_only_for_gaussian_steps():
    with pytest.raises(ValueError, match="only Gaussian steps carry a closeness allowance"):
        PrivacyStep("l", "laplace", 1.0, "L1", 2.0, epsilon=0.5, delta=0.0, closeness_epsilon=1e-9)
    with pytest.raises(ValueError, match="discrete=True marks a discrete Laplace step"):
        PrivacyStep("g", "gaussian", 1.0, "L2", 2.0, discrete=True)


def test_discrete_laplace_composes_as_randomized_response_in_pld():
    """A discrete Laplace step is not dominated by the continuous Laplace PLD; it enters PLD composition as
    randomized response with its epsilon, which is never below the Laplace PLD value."""
    from dpstats.privacy.composition import compose_epsilon
    gauss = PrivacyStep("g", "gaussian", 1.0, "L2", 1 / 0.3)
    cont = PrivacyStep("l", "laplace", 1.0, "L1", 2.5, epsilon=0.4, delta=0.0)
    disc = PrivacyStep("l", "laplace", 1.0, "L1", 2.5, epsilon=0.4, delta=0.0, discrete=True)
    e_cont, e_disc = compose_epsilon([gauss, cont], 1e-6), compose_epsilon([gauss, disc], 1e-6)
    assert e_cont <= e_disc <= 0.4 + compose_epsilon([gauss], 1e-6)


# ---------------------------------------------------------------------------------------------
# random source
# ---------------------------------------------------------------------------------------------

def test_unseeded_fits_draw_from_the_os_csprng(monkeypatch):
    """random_state=None: a SecureGenerator reads os.urandom for the noise, numpy's PCG64 is never seeded,
    and the report says so."""
    calls = []
    real = os.urandom

    def counting(n):
        calls.append(n)
        return real(n)

    monkeypatch.setattr(secure_random.os, "urandom", counting)

    def no_default_rng(*args, **kwargs):
        raise AssertionError("numpy.random.default_rng was used")

    monkeypatch.setattr(np.random, "default_rng", no_default_rng)
    rng, seeded = make_rng(None)
    assert isinstance(rng, SecureGenerator) and seeded is False
    df = pd.DataFrame({"x": np.linspace(-1, 1, 200), "y": np.linspace(0, 1, 200)})
    res = dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp", bounds={"x": (-1, 1), "y": (0, 1)})
    assert calls and not res.privacy.seeded
    assert "operating-system CSPRNG" in str(res.privacy)


def test_a_seed_is_reproducible_and_reported_as_seeded():
    df = pd.DataFrame({"x": np.linspace(-1, 1, 200), "y": np.linspace(0, 1, 200)})
    fits = [dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=1e-6, method="ssp", bounds={"x": (-1, 1), "y": (0, 1)},
                           random_state=3) for _ in range(2)]
    assert np.array_equal(fits[0].params, fits[1].params) and fits[0].privacy.seeded
    assert "seeded generator" in str(fits[0].privacy)
    gen, seeded = make_rng(SecureGenerator())
    assert seeded is False


def test_secure_generator_methods_have_the_right_laws():
    """Uniform integers (chi-square), doubles, normals, Gumbel and Laplace (KS) from os.urandom.

    Not seeded: false-failure rate 7e-6 (seven tests at 1e-6).
    """
    g = SecureGenerator()
    ints = g.integers(0, 7, size=70_000)
    assert ints.min() >= 0 and ints.max() <= 6
    assert stats.chisquare(np.bincount(ints, minlength=7)).pvalue > 1e-6
    big = g.integers(0, np.array([3, 2**62]), size=None)
    assert big.shape == (2,) and 0 <= big[0] < 3 and 0 <= big[1] < 2**62
    assert stats.kstest(g.random(50_000), "uniform").pvalue > 1e-6
    assert stats.kstest(g.normal(2.0, 3.0, 50_000), "norm", args=(2.0, 3.0)).pvalue > 1e-6
    assert stats.kstest(g.gumbel(size=50_000), "gumbel_r").pvalue > 1e-6
    assert stats.kstest(g.laplace(size=50_000), "laplace").pvalue > 1e-6
    assert stats.kstest(g.uniform(-1.0, 1.0, 50_000), "uniform", args=(-1.0, 2.0)).pvalue > 1e-6
    perm = g.permutation(1000)
    assert sorted(perm.tolist()) == list(range(1000))
    assert 0 <= g.binomial(100, 0.3) <= 100
    assert len(set(g.choice(10**6, 5000, replace=False).tolist())) == 5000
    pairs = [tuple(g.choice(4, 2, replace=False)) for _ in range(12_000)]  # 12 ordered pairs, uniform
    counts = np.array([pairs.count((i, j)) for i in range(4) for j in range(4) if i != j])
    assert counts.sum() == 12_000 and stats.chisquare(counts).pvalue > 1e-6


def test_secure_generator_copies_and_forks_share_nothing():
    g = SecureGenerator()
    g.random()  # fill the buffer
    for other in (copy.copy(g), copy.deepcopy(g), pickle.loads(pickle.dumps(g))):
        assert isinstance(other, SecureGenerator) and other is not g
        assert not np.array_equal(other.integers(0, 2**62, size=4), g.integers(0, 2**62, size=4))
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        a, b = pool.map(_draw_in_child, [g, g])
    assert not np.array_equal(a, b)


def _draw_in_child(gen: SecureGenerator) -> np.ndarray:
    return gen.integers(0, 2**62, size=4)


def test_secure_generator_after_fork_does_not_replay_the_parent_buffer():
    g = SecureGenerator()
    g.random()  # the buffer now holds unread bytes
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        os.write(w, g.integers(0, 2**62, size=4).astype("<i8").tobytes())
        os._exit(0)
    os.close(w)
    child = np.frombuffer(os.read(r, 64), dtype="<i8")
    os.waitpid(pid, 0)
    parent = g.integers(0, 2**62, size=4)
    assert not np.array_equal(child, parent)
