"""Composition, the per-fit ledger and the cross-fit accountant.

Everything here is deterministic (fixed seeds, closed forms, dp_accounting)
except ``test_pld_of_k_laplace_steps_is_not_below_the_true_composition``, a
Monte Carlo check whose false-failure rate is stated in its docstring.
Thread tests assert counts and totals, never timings.
"""

from __future__ import annotations

import math
import threading

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from dp_accounting import rdp

import dpstats
from dpstats.errors import BudgetExceededError, DPStatsError, InvalidPrivacyParameterError, UnknownReservationError
from dpstats.methods import registry
from dpstats.methods.registry import MethodFit, MethodOptions, MethodSpec
from dpstats.privacy.accountant import PrivacyAccountant
from dpstats.privacy.calibration import gaussian_epsilon
from dpstats.privacy.composition import _pld_epsilon, compose_epsilon, is_pure
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep
from dpstats.privacy.mechanisms import laplace_mechanism
from dpstats.privacy.missing_screen import SCREEN_SHARE

REL_TOL = 1e-9  # the ledger's documented float slack when comparing a total with the budget


def gauss(mu: float, sens: float = 1.0, count: int = 1, name: str = "g") -> PrivacyStep:
    return PrivacyStep(name, "gaussian", sens, "L2", sens / mu, count=count)


def lap(eps: float, sens: float = 1.0, count: int = 1, name: str = "l") -> PrivacyStep:
    return PrivacyStep(name, "laplace", sens, "L1", sens / eps, epsilon=eps, delta=0.0, count=count)


def expo(eps: float, count: int = 1) -> PrivacyStep:
    return PrivacyStep("e", "exponential", 1.0, "score", math.nan, epsilon=eps, delta=0.0, count=count)


def approx(eps: float, delta: float, count: int = 1) -> PrivacyStep:
    return PrivacyStep("a", "approximate-dp", 1.0, "-", math.nan, epsilon=eps, delta=delta, count=count)


# =============================================================================================
# composition
# =============================================================================================

def test_all_gaussian_ledger_composes_exactly_in_gdp():
    mus, counts, delta = [0.3, 0.5, 0.2], [1, 3, 2], 1e-6
    ledger = PrivacyLedger(10.0, delta)
    for m, c in zip(mus, counts, strict=True):
        ledger.charge(gauss(m, sens=2.0, count=c))
    mu_total = math.sqrt(sum(c * m * m for m, c in zip(mus, counts, strict=True)))
    eps, dlt = ledger.spent
    assert eps == gaussian_epsilon(mu_total, delta)
    assert dlt == delta
    # dp_accounting's PLD accountant agrees (it is an upper bound, GDP is exact); RDP is looser
    event = dp_accounting.ComposedDpEvent([
        dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(1.0 / m), c)
        for m, c in zip(mus, counts, strict=True)])
    acct = dp_accounting.pld.PLDAccountant()
    acct.compose(event)
    pld_eps = acct.get_epsilon(delta)
    assert eps <= pld_eps * (1 + 1e-9)
    assert pld_eps == pytest.approx(eps, rel=1e-4)
    r = rdp.RdpAccountant()
    r.compose(event)
    assert r.get_epsilon(delta) > eps * 1.02


def test_gaussian_2_with_laplace_1_by_pld_and_rdp():
    """A worked example: Gaussian(2) composed with Laplace(1) at delta = 1e-6 gives 3.184 by PLD, 3.351 by RDP."""
    steps = [gauss(0.5), lap(1.0)]
    eps = compose_epsilon(steps, 1e-6)
    assert eps == pytest.approx(3.184, abs=2e-3)
    r = rdp.RdpAccountant()
    r.compose(dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(2.0), dp_accounting.LaplaceDpEvent(1.0)]))
    rdp_eps = r.get_epsilon(1e-6)
    assert rdp_eps == pytest.approx(3.351, abs=2e-3)
    assert eps < rdp_eps - 0.1
    # tighter than basic composition of the exact Gaussian epsilon and the Laplace epsilon
    assert eps < 1.0 + gaussian_epsilon(0.5, 1e-6) - 0.05
    ledger = PrivacyLedger(3.2, 1e-6)
    for s in steps:
        ledger.charge(s)
    assert ledger.spent[0] == pytest.approx(eps)
    # 3.18 does not fit in 3.1
    with pytest.raises(BudgetExceededError,
                       match=r"spend to \(epsilon=3\.18\d*, delta=1e-06\), above its budget \(epsilon=3\.1"):
        led = PrivacyLedger(3.1, 1e-6)
        for s in steps:
            led.charge(s)


def test_pure_steps_compose_by_basic_composition():
    steps = [lap(0.2), expo(0.3), lap(0.05, sens=4.0), expo(0.1, count=2)]
    assert is_pure(steps)
    ledger = PrivacyLedger(1.0, 1e-6)
    for s in steps:
        ledger.charge(s)
    assert ledger.spent == (pytest.approx(0.75, rel=1e-12), 0.0)
    assert ledger.remaining_epsilon == pytest.approx(0.25, rel=1e-9)
    assert not is_pure([*steps, approx(0.1, 1e-8)])
    assert not is_pure([*steps, gauss(0.1)])


def test_shares_that_sum_to_the_budget_report_the_budget_not_its_float_rounding():
    """Shares of epsilon that sum to one in exact arithmetic can add up to an ulp above the budget in floats
    (theilsen's small-n shares at epsilon 3: 3 * 0.61 + 3 * 0.15 + 3 * 0.16 + 3 * 0.06 + 3 * 0.02 > 3); the
    ledger admits them and reports the budget, while a real excess is still refused."""
    shares = (0.61, 0.15, 0.16, 0.06, 0.02)
    ledger = PrivacyLedger(3.0, 0.0)
    for w in shares:
        ledger.charge(lap(3.0 * w))
    assert ledger._total(list(ledger.steps))[0] > 3.0
    assert ledger.spent == (3.0, 0.0)
    assert ledger.remaining_epsilon == 0.0
    with pytest.raises(BudgetExceededError, match="would bring this fit's spend to .*, above its budget"):
        ledger.charge(lap(1e-6))


def test_approximate_steps_compose_basically_or_by_pld():
    steps = [approx(0.2, 1e-7), approx(0.3, 2e-7, count=2)]
    eps = compose_epsilon(steps, 1e-6)
    assert eps <= 0.8 + 1e-12  # never above basic composition (0.8, 5e-7)
    # a step whose own delta exceeds the target delta cannot be covered at any epsilon
    assert compose_epsilon([approx(0.2, 2e-6)], 1e-6) == math.inf
    ledger = PrivacyLedger(100.0, 1e-6)
    with pytest.raises(BudgetExceededError, match="cannot be accounted for at this fit's budget"):
        ledger.charge(approx(0.2, 2e-6))


@pytest.mark.parametrize("make", [lambda c: gauss(0.4, count=c), lambda c: lap(0.3, count=c),
                                  lambda c: expo(0.2, count=c)], ids=["gaussian", "laplace", "exponential"])
def test_count_is_the_same_as_repeating_the_step(make):
    k, delta = 5, 1e-6
    once = PrivacyLedger(100.0, delta)
    once.charge(make(k))
    rep = PrivacyLedger(100.0, delta)
    for _ in range(k):
        rep.charge(make(1))
    assert once.spent[0] == pytest.approx(rep.spent[0], rel=1e-12)
    assert once.spent[1] == rep.spent[1]


def test_count_in_a_mixed_ledger_matches_repetition():
    k, delta = 3, 1e-6
    once = compose_epsilon([gauss(0.5), lap(0.4, count=k)], delta)
    rep = compose_epsilon([gauss(0.5), *[lap(0.4) for _ in range(k)]], delta)
    assert once == pytest.approx(rep, rel=2e-3)
    assert once < gaussian_epsilon(0.5, delta) + k * 0.4  # below basic composition


@pytest.mark.parametrize("mu, delta", [(0.1, 1e-6), (0.5, 1e-6), (1.0, 1e-9), (3.0, 1e-5)])
def test_pld_is_never_below_the_exact_gdp_value(mu, delta):
    exact = gaussian_epsilon(mu, delta)
    got = _pld_epsilon(mu, [], delta)
    assert got >= exact * (1 - 1e-12)
    assert got == pytest.approx(exact, rel=1e-3)


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_pld_of_one_laplace_step_is_not_below_its_closed_form(eps, delta):
    """Lap(1/eps) with sensitivity 1 has delta(e') = 1 - exp((e' - eps)/2): e'(delta) = eps + 2 ln(1 - delta)."""
    exact = eps + 2 * math.log1p(-delta)
    got = _pld_epsilon(0.0, [lap(eps)], delta)
    assert got >= exact * (1 - 1e-12)
    assert got == pytest.approx(exact, rel=1e-4)


def test_pld_of_k_laplace_steps_is_not_below_the_true_composition():
    """k Laplace steps: PLD epsilon <= k*eps (basic), and the true delta at that epsilon <= delta.

    The true delta is estimated by Monte Carlo over the privacy loss of the
    dominating pair (Lap(0, b) vs Lap(1, b), sensitivity 1): delta(e) =
    E[(1 - exp(e - L))_+].  False-failure rate: one-sided z-test at 4.5 standard
    errors, 3.4e-6.  The second assertion (PLD is not loose by 0.05) is a
    4.5-sigma test the other way, 3.4e-6.
    """
    k, eps, delta, m = 4, 0.5, 1e-3, 2_000_000
    steps = [lap(eps) for _ in range(k)]
    pld_eps = _pld_epsilon(0.0, steps, delta)
    assert pld_eps < k * eps
    assert compose_epsilon(steps, delta) == pytest.approx(min(pld_eps, k * eps))
    rng = np.random.default_rng(7)
    b = 1.0 / eps
    loss = np.zeros(m)
    for _ in range(k):
        x = rng.laplace(0.0, b, size=m)
        loss += (np.abs(x - 1.0) - np.abs(x)) / b
    for e, expect_below in ((pld_eps, True), (pld_eps - 0.05, False)):
        h = np.clip(-np.expm1(e - loss), 0.0, None)
        est, se = float(h.mean()), float(h.std()) / math.sqrt(m)
        if expect_below:
            assert est <= delta + 4.5 * se
        else:
            assert est > delta + 4.5 * se


# =============================================================================================
# the ledger
# =============================================================================================

def _random_step(rng: np.random.Generator, kind: str, budget_delta: float) -> PrivacyStep:
    count = int(rng.integers(1, 4))
    choice = rng.choice({"pure": ["laplace", "exponential"], "gaussian": ["gaussian"],
                         "mixed": ["laplace", "exponential", "gaussian", "approximate-dp"]}[kind])
    if choice == "gaussian":
        return gauss(float(rng.uniform(0.05, 0.8)), sens=float(rng.uniform(0.5, 3.0)), count=count)
    eps = float(rng.uniform(0.02, 0.6))
    if choice == "laplace":
        return lap(eps, sens=float(rng.uniform(0.5, 3.0)), count=count)
    if choice == "exponential":
        return expo(eps, count=count)
    return approx(eps, float(budget_delta * rng.uniform(0.02, 0.3)), count=1)


def test_ledger_never_records_a_step_beyond_its_budget():
    """Property test over random step sequences (fixed seed 2024)."""
    rng = np.random.default_rng(2024)
    refused = accepted = 0
    plan = [("pure", 8)] * 30 + [("gaussian", 8)] * 30 + [("mixed", 3)] * 3
    for kind, n_steps in plan:
        budget_eps = float(rng.uniform(0.5, 3.0))
        budget_delta = float(10 ** rng.uniform(-9, -4))
        ledger = PrivacyLedger(budget_eps, budget_delta)
        for _ in range(n_steps):
            step = _random_step(rng, kind, budget_delta)
            before = list(ledger.steps)
            try:
                ledger.charge(step)
            except BudgetExceededError:
                refused += 1
                assert ledger.steps == before  # nothing recorded
                candidate = [*before, step]
                total = (sum(s.epsilon * s.count for s in candidate) if is_pure(candidate)
                         else compose_epsilon(candidate, budget_delta))
                assert total > budget_eps * (1 + REL_TOL)  # refused only when it really would overspend
            else:
                accepted += 1
                assert ledger.steps == [*before, step]
            spent_eps, spent_delta = ledger.spent
            assert spent_eps <= budget_eps * (1 + REL_TOL)
            assert spent_delta <= budget_delta
            if kind != "mixed":  # the decision matches an independent computation of the total
                if kind == "pure":
                    assert spent_eps == pytest.approx(sum(s.epsilon * s.count for s in ledger.steps), rel=1e-12)
                else:
                    mu = math.sqrt(sum(s.mu**2 for s in ledger.steps))
                    assert spent_eps == (gaussian_epsilon(mu, budget_delta) if ledger.steps else 0.0)
    assert refused > 30 and accepted > 100  # the sequences exercise both outcomes


# what each refusal names (PrivacyStep is internal, a method's own charge: its checks raise a plain ValueError)
_STEP_FAULTS = {
    "epsilon": r"step needs epsilon >= 0",
    "delta": r"step needs 0 <= delta < 1",
    "gauss": r"a Gaussian step needs noise_scale > 0 and a finite sensitivity >= 0",
    "count": r"count must be an integer >= 1",
    "under": r"epsilon=0\.1 is below sensitivity/noise_scale=1\.0",
}


@pytest.mark.parametrize("kwargs, fault", [
    (dict(mechanism="laplace", sensitivity=1.0, noise_scale=1.0, epsilon=float("nan"), delta=0.0), "epsilon"),
    (dict(mechanism="exponential", sensitivity=1.0, noise_scale=math.nan, epsilon=float("nan")), "epsilon"),
    (dict(mechanism="approximate-dp", sensitivity=1.0, noise_scale=math.nan, epsilon=0.1, delta=float("nan")), "delta"),
    (dict(mechanism="approximate-dp", sensitivity=1.0, noise_scale=math.nan, epsilon=0.1, delta=1.5), "delta"),
    (dict(mechanism="exponential", sensitivity=1.0, noise_scale=math.nan, epsilon=-0.1), "epsilon"),
    (dict(mechanism="exponential", sensitivity=1.0, noise_scale=math.nan, epsilon=None), "epsilon"),
    (dict(mechanism="gaussian", sensitivity=float("inf"), noise_scale=1.0), "gauss"),
    (dict(mechanism="gaussian", sensitivity=float("nan"), noise_scale=1.0), "gauss"),
    (dict(mechanism="gaussian", sensitivity=1.0, noise_scale=float("nan")), "gauss"),
    (dict(mechanism="gaussian", sensitivity=1.0, noise_scale=0.0), "gauss"),
    (dict(mechanism="gaussian", sensitivity=1.0, noise_scale=1.0, count=0), "count"),
    (dict(mechanism="gaussian", sensitivity=1.0, noise_scale=1.0, count=1.5), "count"),
    # a Laplace step whose epsilon under-reports sensitivity/noise_scale = 1
    (dict(mechanism="laplace", sensitivity=1.0, noise_scale=1.0, epsilon=0.1, delta=0.0), "under"),
])
def test_malformed_steps_are_rejected(kwargs, fault):
    with pytest.raises(ValueError, match=_STEP_FAULTS[fault]):
        PrivacyStep(name="bad", sensitivity_norm="L1", **kwargs)


@pytest.mark.parametrize("mechanism", ["exponential", "approximate-dp"])
def test_a_step_check_names_the_mechanism_with_its_article(mechanism):
    with pytest.raises(ValueError, match=f"^an {mechanism} step needs epsilon >= 0, got -1"):
        PrivacyStep("bad", mechanism, 1.0, "L1", 1.0, epsilon=-1.0, delta=0.0)


def test_nan_cannot_poison_a_ledger():
    """Before the fix a NaN-epsilon step was recorded and the NaN total then accepted any step."""
    ledger = PrivacyLedger(1.0, 1e-6)
    with pytest.raises(ValueError, match='a laplace step needs epsilon >= 0, got nan'):
        ledger.charge(PrivacyStep("nan", "laplace", 1.0, "L1", 1.0, epsilon=float("nan"), delta=0.0))
    ledger.charge(lap(0.9))
    with pytest.raises(BudgetExceededError, match="would bring this fit's spend to .*, above its budget"):
        ledger.charge(lap(100.0))
    assert ledger.spent == (pytest.approx(0.9), 0.0)
    nan_budget = PrivacyLedger(float("nan"), 1e-6)  # a NaN budget refuses everything
    with pytest.raises(BudgetExceededError, match=r"charged to a non-private ledger \(epsilon=nan\)"):
        nan_budget.charge(lap(0.1))


def test_a_gaussian_step_never_fits_a_pure_budget():
    """delta = 0: a Gaussian release is never (eps, 0)-DP.  Used to be accepted at eps >= 19.3 (underflow)."""
    ledger = PrivacyLedger(30.0, 0.0)
    with pytest.raises(BudgetExceededError,
                       match=r"step 'g' cannot be accounted for at this fit's budget \(epsilon=30, delta=0\): a "
                             r"Gaussian release needs delta > 0, and this fit's delta is 0: give the fit a delta > 0"):
        ledger.charge(gauss(0.5))
    ledger.charge(lap(1.0))
    assert ledger.spent == (1.0, 0.0)


def test_a_non_private_ledger_accepts_no_step():
    ledger = PrivacyLedger(math.inf, 0.0)
    for step in (lap(1.0), gauss(0.5), expo(0.1)):
        with pytest.raises(BudgetExceededError,
                           match=r"non-private ledger \(epsilon=inf\); a non-private fit may not draw privacy noise"):
            ledger.charge(step)
    assert ledger.steps == [] and ledger.spent == (0.0, 0.0)


def test_zero_sensitivity_laplace_in_a_mixed_ledger():
    """A Laplace release of a public quantity (sensitivity 0) costs nothing in PLD composition."""
    ledger = PrivacyLedger(2.0, 1e-6)
    laplace_mechanism(1.0, l1_sensitivity=0.0, epsilon=0.5, rng=np.random.default_rng(0), ledger=ledger, name="z")
    ledger.charge(gauss(0.4))
    assert ledger.spent[0] == pytest.approx(gaussian_epsilon(0.4, 1e-6), rel=1e-3)


def test_concurrent_charges_never_overspend_a_ledger():
    """8 threads x 10 charges of 0.125 against a budget of 1: exactly 8 are recorded."""
    ledger = PrivacyLedger(1.0, 1e-6)
    results: list[bool] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def worker():
        start.wait()
        for _ in range(10):
            try:
                ledger.charge(lap(0.125))
                ok = True
            except BudgetExceededError:
                ok = False
            with lock:
                results.append(ok)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 80 and sum(results) == 8
    assert len(ledger.steps) == 8 and ledger.spent == (1.0, 0.0)


# =============================================================================================
# the accountant
# =============================================================================================

def test_accountant_validates_its_budget():
    eps_msg, delta_msg = r"epsilon must be > 0, got", r"delta must lie strictly between 0 and 1, got"
    for eps, delta, pattern in [(0.0, 1e-6, eps_msg), (-1.0, 1e-6, eps_msg), (math.nan, 1e-6, eps_msg),
                                (math.inf, 1e-6, r"an accountant needs a finite epsilon budget"),
                                (1.0, 0.0, delta_msg), (1.0, 1.0, delta_msg)]:
        with pytest.raises(InvalidPrivacyParameterError, match=pattern):
            PrivacyAccountant(eps, delta)


def test_reserve_and_settle():
    acct = PrivacyAccountant(2.0, 1e-6)
    t1 = acct.reserve(1.5, 5e-7, label="a")
    assert acct.remaining == (pytest.approx(0.5), pytest.approx(5e-7))
    assert acct.spent == (0.0, 0.0)  # reserved is not spent
    with pytest.raises(BudgetExceededError, match=r"accountant has \(epsilon=0\.5, delta=5e-07\) left"):
        acct.reserve(0.6, 1e-7)  # the outstanding reservation counts
    s = acct.settle(t1, 1.2, 4e-7)
    assert (s.epsilon, s.delta, s.status, s.label) == (1.2, 4e-7, "released", "a")
    assert acct.spent == (pytest.approx(1.2), pytest.approx(4e-7))
    assert acct.remaining == (pytest.approx(0.8), pytest.approx(6e-7))  # the unspent rest is freed
    with pytest.raises(UnknownReservationError, match='already settled reservation: settle each token that reserve'):
        acct.settle(t1, 0.1, 0.0)  # settled already
    with pytest.raises(KeyError, match='unknown or already settled reservation'):  # still a KeyError
        acct.settle("no-such-token", 0.1, 0.0)


def test_a_step_whose_own_delta_exceeds_the_budget_says_so():
    """The refusal names the step's delta as the cause, not floating point."""
    ledger = PrivacyLedger(1.0, 1e-6)
    step = PrivacyStep(name="x", mechanism="laplace", sensitivity=1.0, sensitivity_norm="L1", noise_scale=2.0,
                       epsilon=0.5, delta=1e-3)
    with pytest.raises(BudgetExceededError, match=r"step 'x' alone spends delta=0\.001, more than the fit's delta: "
                                                  r"give the fit a larger delta; this step was not released, nor"):
        ledger.charge(step)
    assert ledger.steps == []


def test_settle_caps_at_the_reservation():
    acct = PrivacyAccountant(2.0, 1e-6)
    t = acct.reserve(0.5, 2e-7)
    s = acct.settle(t, 5.0, 1e-3)
    assert (s.epsilon, s.delta) == (0.5, 2e-7)
    assert acct.spent == (0.5, 2e-7)


@pytest.mark.parametrize("eps, delta, expect", [
    (-5.0, 1e-7, (0.0, 1e-7)),            # a negative spend must not hand budget back
    (math.nan, 1e-7, (0.5, 1e-7)),        # NaN settles as the whole reservation (fail closed)
    (0.2, math.nan, (0.2, 2e-7)),
])
def test_settle_clamps_malformed_spends(eps, delta, expect):
    acct = PrivacyAccountant(1.0, 1e-6)
    t = acct.reserve(0.5, 2e-7)
    acct.settle(t, eps, delta)
    assert acct.spent == (pytest.approx(expect[0]), pytest.approx(expect[1]))
    # the budget check still works afterwards
    with pytest.raises(BudgetExceededError, match="this fit asks for .* but the accountant has .* left of its"):
        acct.reserve(1.0 - expect[0] + 0.01, 1e-8)
    acct.reserve(1.0 - expect[0] - 0.01, 1e-8)
    assert acct.spent[0] <= 1.0


@pytest.mark.parametrize("eps, delta", [(-1.0, 0.0), (math.nan, 1e-7), (0.1, math.nan), (math.inf, 0.0),
                                        (0.1, -1e-7), (0.1, 1.0)])
def test_reserve_rejects_malformed_requests(eps, delta):
    acct = PrivacyAccountant(1.0, 1e-6)
    with pytest.raises(InvalidPrivacyParameterError,
                       match='a reservation needs a finite epsilon >= 0 and 0 <= delta < 1'):
        acct.reserve(eps, delta)
    assert acct.remaining == (1.0, 1e-6)


def test_refused_reservation_changes_nothing():
    acct = PrivacyAccountant(1.0, 1e-6)
    acct.settle(acct.reserve(0.7, 1e-7), 0.7, 1e-7)
    before = (acct.spent, acct.remaining, acct.history)
    with pytest.raises(BudgetExceededError,
                       match=r"asks for \(epsilon=0\.31, .* has \(epsilon=0\.3, delta=9e-07\) left"):
        acct.reserve(0.31, 1e-7)
    with pytest.raises(BudgetExceededError,
                       match=r"asks for \(epsilon=0\.1, delta=9\.5e-07\) .* has \(epsilon=0\.3, delta=9e-07\) left"):
        acct.reserve(0.1, 9.5e-7)  # delta is checked too
    assert (acct.spent, acct.remaining, acct.history) == before


def test_concurrent_reservations_never_exceed_the_budget():
    """16 threads reserve and settle random amounts; the settled total never exceeds the budget."""
    acct = PrivacyAccountant(3.0, 1e-5)
    errors: list[str] = []
    stop = threading.Event()

    def monitor():
        while not stop.is_set():
            e, d = acct.spent
            if e > 3.0 * (1 + 1e-12) or d > 1e-5 * (1 + 1e-12):
                errors.append(f"overspent: {e}, {d}")

    def worker(seed):
        rng = np.random.default_rng(seed)
        for _ in range(60):
            want = float(rng.uniform(0.01, 0.2))
            try:
                token = acct.reserve(want, 1e-8)
            except BudgetExceededError:
                continue
            acct.settle(token, want * float(rng.uniform(0.5, 1.5)), 1e-8)

    mon = threading.Thread(target=monitor)
    mon.start()
    threads = [threading.Thread(target=worker, args=(s,)) for s in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    mon.join()
    assert errors == []
    spent_eps, _ = acct.spent
    assert 2.8 < spent_eps <= 3.0 * (1 + 1e-12)  # the budget was (almost) used up, never exceeded
    assert acct.remaining[0] < 0.2


# =============================================================================================
# the accountant through dp_ols
# =============================================================================================

def _frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    return pd.DataFrame({"x": x, "y": 2 * x + rng.normal(0, 0.1, n)})


BOUNDS = {"x": (0.0, 1.0), "y": (-1.0, 3.0)}


@pytest.fixture
def temp_method():
    """Register test-only methods; they are removed from the registry afterwards."""
    added: list[str] = []

    def add(name: str, fit) -> str:
        def rows_fit(rows, ctx, options):  # the test's fit on arrays, given the in-memory rows (one chunk)
            return rows.reduce(lambda X, y, offset: fit(X, y, ledger=ctx.ledger, rng=ctx.rng, bounds=ctx.bounds,
                                                        epsilon=ctx.epsilon), lambda a, b: a)

        registry.register(MethodSpec(name=name, title="test only", citation="-", fit=rows_fit, options=MethodOptions,
                                     needs_bounds=False))
        added.append(name)
        return name

    yield add
    for name in added:
        registry._REGISTRY.pop(name, None)


class _PTRRefusal(DPStatsError):
    pass


def test_refused_fit_spends_nothing_and_never_runs_the_method(temp_method):
    calls: list[int] = []

    def fit(X, y, *, ledger, rng, bounds, **opts):
        calls.append(1)
        laplace_mechanism(0.0, l1_sensitivity=1.0, epsilon=opts["epsilon"], rng=rng, ledger=ledger, name="all")
        return MethodFit(params=np.zeros(X.shape[1]))

    name = temp_method("_test_counting", fit)
    acct = PrivacyAccountant(1.0, 1e-6)
    dpstats.dp_ols("y ~ x", _frame(), epsilon=0.6, delta=5e-7, method=name, accountant=acct, random_state=0)
    assert calls == [1]
    before = (acct.spent, acct.remaining, acct.history)
    with pytest.raises(BudgetExceededError, match='this fit asks for .* but the accountant has .* left of its'):
        dpstats.dp_ols("y ~ x", _frame(), epsilon=0.6, delta=1e-7, method=name, accountant=acct, random_state=0)
    assert calls == [1]  # the method (and so any mechanism) never ran
    assert (acct.spent, acct.remaining, acct.history) == before


def test_refused_ssp_fit_spends_nothing():
    acct = PrivacyAccountant(1.0, 1e-6)
    dpstats.dp_ols("y ~ x", _frame(), epsilon=0.8, delta=5e-7, method="ssp", bounds=BOUNDS, accountant=acct,
                   random_state=1)
    before = (acct.spent, acct.remaining, acct.history)
    with pytest.raises(BudgetExceededError, match='this fit asks for .* but the accountant has .* left of its'):
        dpstats.dp_ols("y ~ x", _frame(), epsilon=0.8, delta=5e-7, method="ssp", bounds=BOUNDS, accountant=acct,
                       random_state=1)
    assert (acct.spent, acct.remaining, acct.history) == before
    assert len(before[2]) == 1 and before[2][0].epsilon <= 0.8


class _Spy:
    """An array-like column that records every time its values are read."""

    reads: list[str] = []

    def __init__(self, values, name):
        self._values, self._name = np.asarray(values), name

    def __array__(self, dtype=None, copy=None):
        _Spy.reads.append(self._name)
        return self._values if dtype is None else self._values.astype(dtype)

    def __len__(self):
        return len(self._values)


def test_refused_fit_does_not_touch_the_data():
    df = _frame()
    acct = PrivacyAccountant(1.0, 1e-6)
    acct.settle(acct.reserve(0.9, 1e-7), 0.9, 1e-7)
    _Spy.reads.clear()
    data = {"x": _Spy(df["x"], "x"), "y": _Spy(df["y"], "y")}
    with pytest.raises(BudgetExceededError, match='this fit asks for .* but the accountant has .* left of its'):
        dpstats.dp_ols("y ~ x", data, epsilon=0.5, delta=1e-7, method="ssp", bounds=BOUNDS, accountant=acct,
                       random_state=0)
    assert _Spy.reads == []


def test_spy_detects_data_access():
    """The spy used above does see a fit that reads the data (so the test above is meaningful)."""
    df = _frame()
    _Spy.reads.clear()
    data = {"x": _Spy(df["x"], "x"), "y": _Spy(df["y"], "y")}
    dpstats.dp_ols("y ~ x", data, epsilon=0.5, delta=1e-7, method="ssp", bounds=BOUNDS, random_state=0)
    assert set(_Spy.reads) == {"x", "y"}


def test_spend_is_recorded_when_a_fit_fails_after_spending(temp_method):
    def fit(X, y, *, ledger, rng, bounds, **opts):
        laplace_mechanism(0.0, l1_sensitivity=1.0, epsilon=0.3, rng=rng, ledger=ledger, name="noisy count")
        raise _PTRRefusal("propose-test-release refused")

    name = temp_method("_test_fails_after_spending", fit)
    acct = PrivacyAccountant(1.0, 1e-6)
    with pytest.raises(_PTRRefusal, match='propose-test-release refused') as info:
        dpstats.dp_ols("y ~ x", _frame(), epsilon=0.5, delta=1e-7, method=name, accountant=acct, random_state=0)
    spent = 0.3 + SCREEN_SHARE * 0.5  # the method's count and the missing-value screen's Laplace share
    assert info.value.privacy_spent == (pytest.approx(spent), 0.0)
    hist = acct.history
    assert len(hist) == 1 and hist[0].status == "failed after spending"
    assert hist[0].epsilon == pytest.approx(spent) and hist[0].delta == 0.0
    assert acct.remaining == (pytest.approx(1 - spent), pytest.approx(1e-6))  # the unspent rest was freed


def test_fit_refused_by_its_own_ledger_spends_only_the_screen(temp_method):
    def fit(X, y, *, ledger, rng, bounds, **opts):
        laplace_mechanism(0.0, l1_sensitivity=1.0, epsilon=2.0, rng=rng, ledger=ledger, name="too much")
        raise AssertionError("unreachable: the ledger refuses the step")

    name = temp_method("_test_overspends", fit)
    acct = PrivacyAccountant(1.0, 1e-6)
    with pytest.raises(BudgetExceededError,
                       match="step 'too much' would bring this fit's spend to .*, above its budget") as info:
        dpstats.dp_ols("y ~ x", _frame(), epsilon=0.5, delta=1e-7, method=name, accountant=acct, random_state=0)
    # the missing-value screen was released before the method's step, which the ledger refused
    assert info.value.privacy_spent == (pytest.approx(SCREEN_SHARE * 0.5), 0.0)
    assert [s.epsilon for s in acct.history] == [pytest.approx(SCREEN_SHARE * 0.5)]
    integers = _frame().assign(x=lambda d: (10 * d.x).astype(int), y=lambda d: (10 * d.y).astype(int))
    with pytest.raises(BudgetExceededError,
                       # no column can hold a missing value: no screen, nothing spent
                       match="step 'too much' would bring this fit's spend to .*, above its budget"):
        dpstats.dp_ols("y ~ x", integers, epsilon=0.5, delta=1e-7, method=name, accountant=acct, random_state=0)
    assert len(acct.history) == 1


def test_concurrent_fits_from_threads():
    """8 threads x 6 ssp fits of (0.125, 1e-7) against (2, 1e-5): exactly floor(2/0.125) = 16 succeed."""
    acct = PrivacyAccountant(2.0, 1e-5)
    df = _frame(60)
    outcomes: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def worker(seed):
        start.wait()
        for i in range(6):
            try:
                dpstats.dp_ols("y ~ x", df, epsilon=0.125, delta=1e-7, method="ssp", bounds=BOUNDS,
                               accountant=acct, random_state=seed * 100 + i)
                result = "ok"
            except BudgetExceededError:
                result = "refused"
            with lock:
                outcomes.append(result)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outcomes) == 48
    assert outcomes.count("ok") == math.floor(2.0 / 0.125) == 16
    spent_eps, spent_delta = acct.spent
    assert spent_eps <= 2.0 and spent_delta <= 1e-5
    assert len(acct.history) == 16 and all(s.status == "released" for s in acct.history)
    # ssp spends its request exactly (GDP-calibrated), so no 17th fit could have fitted
    assert all(s.epsilon == pytest.approx(0.125, rel=1e-6) for s in acct.history)


def test_an_in_memory_accountant_writes_and_reads_its_history_as_json(tmp_path):
    """The in-memory accountant had no export (a budget file has ``dpstats budget show --format json``): to_json
    writes the same document (budget, spend, history, held reservations), from_json reads it back with every fit
    still spent, and a document that is not one is a typed refusal."""
    import io  # noqa: PLC0415
    import json  # noqa: PLC0415

    from dpstats.errors import BudgetFileError  # noqa: PLC0415

    acct = PrivacyAccountant(3.0, 1e-5)
    acct.settle(acct.reserve(1.0, 2e-6, "ssp: y ~ x"), 1.0, 2e-6)
    acct.settle(acct.reserve(0.5, 1e-6, "tukey: y ~ x"), 0.0, 0.0, status="refused")  # spent nothing: not listed
    acct.settle(acct.reserve(0.5, 1e-6, "tukey: y ~ z"), 0.25, 0.0, status="failed after spending")
    held = acct.reserve(0.4, 1e-6, "running")
    document = json.loads(acct.to_json(tmp_path / "ledger.json"))
    assert document["format"] == "dpstats privacy budget" and document["path"] is None
    assert (document["epsilon"], document["delta"], document["spent"]) == (3.0, 1e-5, [1.25, 2e-6])
    assert document["held"] == [0.4, 1e-6] and document["seeded_fits"] == "allow"
    assert [(r["label"], r["spent"], r["status"]) for r in document["reservations"]] == [
        ("ssp: y ~ x", [1.0, 2e-6], "released"), ("tukey: y ~ z", [0.25, 0.0], "failed after spending"),
        ("running", None, "reserved")]
    copy = PrivacyAccountant.from_json(tmp_path / "ledger.json")
    assert [(s.label, s.epsilon, s.delta, s.status) for s in copy.history] == [
        ("ssp: y ~ x", 1.0, 2e-6, "released"), ("tukey: y ~ z", 0.25, 0.0, "failed after spending"),
        ("running", 0.4, 1e-6, "held when exported (counted as spent)")]
    assert [s.when for s in copy.history[:2]] == [s.when for s in acct.history]
    assert copy.remaining == pytest.approx((1.35, 7e-6))
    acct.settle(held, 0.4, 1e-6)
    with pytest.raises(BudgetFileError, match="is not a dpstats budget document: its format"):
        PrivacyAccountant.from_json(io.StringIO('{"format": "something else", "epsilon": 1}'))
    with pytest.raises(BudgetFileError, match="a field is missing or malformed"):
        PrivacyAccountant.from_json(io.StringIO('{"epsilon": 1.0, "delta": 1e-6}'))
    with pytest.raises(BudgetFileError, match="is not JSON"):
        PrivacyAccountant.from_json(io.StringIO("epsilon=1"))
    with pytest.raises(InvalidPrivacyParameterError, match="epsilon"):
        PrivacyAccountant.from_json(io.StringIO('{"epsilon": -1.0, "delta": 1e-6, "reservations": []}'))



def test_from_json_reads_the_text_to_json_returns():
    """s53's third new-user check: ``PrivacyAccountant.from_json(acct.to_json())`` took the document's text for a
    path and failed with an untyped ``OSError`` ("File name too long"); the text, as to_json returns it, is read as
    the document, with the same typed refusals."""
    from dpstats.errors import BudgetFileError  # noqa: PLC0415

    acct = PrivacyAccountant(2.0, 1e-5)
    acct.settle(acct.reserve(0.5, 1e-6, "ssp: y ~ x"), 0.5, 1e-6)
    copy = PrivacyAccountant.from_json(acct.to_json())
    assert copy.remaining == pytest.approx(acct.remaining) and [s.label for s in copy.history] == ["ssp: y ~ x"]
    with pytest.raises(BudgetFileError, match="the JSON document is not a dpstats budget document"):
        PrivacyAccountant.from_json('  {"format": "something else"}')
