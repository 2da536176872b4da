"""Products and powers centred at released centres where bounds are missing (dpstats.methods.common.product_centring).

Exact checks (no false failures) unless stated: the structure read from the formula, the coefficient map of a mixed
design, the sensitivity of every pass pgd releases on a mixed domain under adversarial rows, and end-to-end fits
(ledger, notes, extreme values, chunked == in memory).  One statistical audit (false-failure rate alpha = 1e-3)
of the two-stage release on a worst-case neighbouring pair.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import patsy
import pytest

import dpstats
from dpstats.bounds.interval import Interval
from dpstats.formula.centring import centrable_design, intercept_model
from dpstats.methods import pgd
from dpstats.methods.common.private_scaling import (
    DeviationSumsPass,
    Domain,
    Standardisation,
    UnitSumsPass,
    free_variables,
)
from dpstats.methods.common.product_centring import PLACEHOLDER, placeholder_ranges, release_centred_moments
from dpstats.privacy.audit import audit_mechanism
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.rows.memory import InMemoryRows
from dpstats.rows.sources import CSVSource

BIG = np.finfo(float).max
FRAME = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "z": [2.0, 3.0, 1.0, 5.0], "g": ["a", "b", "a", "b"]})


def _info(formula: str):
    return patsy.dmatrix(formula, FRAME).design_info


@pytest.mark.parametrize(("formula", "columns", "variables"), [
    ("x + I(x**2)", (2,), (1,)),
    ("x * z", (3,), (1, 2)),
    ("x * C(g)", (3,), (2,)),
    ("x + z + I(x**2) + x:z", (3, 4), (1, 2)),
    ("x + I(x**2) + I(x**3)", (2, 3), (1,)),
])
def test_the_structure_comes_from_the_formula(formula, columns, variables):
    structure = centrable_design(_info(formula))
    assert structure is not None and structure.columns == columns and structure.variables == variables
    # at any centres, 0 included, the same columns are centred and their ranges follow from the variables'
    for centre in (0.0, 3.0):
        centring = structure.at([Interval(centre - 2.0, centre + 2.0)] * len(_info(formula).column_names))
        assert centring.centred == structure.centred


@pytest.mark.parametrize("formula", ["x:z", "0 + x + I(x**2)", "z + x + I(x**2) + I(x**2):z", "x + z"])
def test_designs_without_a_centrable_column_or_with_a_centred_variable_have_no_structure(formula):
    assert centrable_design(_info(formula)) is None


def test_placeholders_replace_only_the_centrable_columns():
    structure = centrable_design(_info("x + I(x**2)"))
    assert placeholder_ranges((None, None, (0.0, 9.0)), structure) == (None, None, PLACEHOLDER)
    assert placeholder_ranges((None, None, None), None) == (None, None, None)


def _mixed_standardisation(rng: np.random.Generator) -> tuple[Standardisation, np.ndarray]:
    """The design 1, x, z, x^2, x z centred at x = 40, z = 15 (weights in the thousands), its mixed columns'
    derived domains, small scales so that every clip binds."""
    info = _info("x + z + I(x**2) + x:z")
    structure = centrable_design(info)
    assert structure is not None
    intervals = [Interval(1.0, 1.0), Interval(20.0, 60.0), Interval(10.0, 20.0), Interval(0.0, 0.0),
                 Interval(0.0, 0.0)]
    centring = structure.at(intervals)
    lo = np.array([iv[0] for iv in centring.intervals])
    hi = np.array([iv[1] for iv in centring.intervals])
    domain = Domain(lo, hi, -3.0, 7.0, intercept_index=0, mix=centring.matrix)
    d = lo.size
    st = Standardisation(domain, np.r_[0.0, rng.uniform(-1, 1, d - 1)], np.r_[1.0, rng.uniform(2.0**-10, 0.5, d - 1)],
                         float(rng.uniform(-1, 1)), float(rng.uniform(2.0**-10, 0.5)))
    return st, centring.matrix


def _raw_rows(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.column_stack([np.ones_like(x), x, z, x**2, x * z])


def test_coefficients_on_the_mixed_design_map_back_exactly():
    """b = M b': the mixed design's fitted values equal the raw design's with the mapped coefficients."""
    rng = np.random.default_rng(0)
    st, mix = _mixed_standardisation(rng)
    x, z = rng.uniform(20, 60, 50), rng.uniform(10, 20, 50)
    X = _raw_rows(x, z)
    theta = rng.normal(size=5)
    A, b = st.affine_back()
    beta = A @ theta + b
    # fitted values on the standardised mixed rows, mapped to y's units, against the raw design with beta
    dom = st.domain
    a_y, b_y = dom.y_mid + dom.y_half * st.y_centre, dom.y_half * st.y_scale
    fitted_z = a_y + b_y * (st.design(X) @ theta)
    np.testing.assert_allclose(X @ beta, fitted_z, rtol=1e-9, atol=1e-9)


def _assert_within_sensitivity(passes, X: np.ndarray, y: np.ndarray, adversarial) -> None:
    """Each pass (name, make, sensitivity) moves by at most its sensitivity (L2) when every third row is replaced
    by each adversarial (row, response): finite outputs on both sides."""
    for name, make, sens in passes:
        base = np.asarray(make()(X, y, 0), dtype=float)
        assert np.all(np.isfinite(base)), name
        worst = 0.0
        for i, (row, yi) in itertools.product(range(0, len(y), 3), adversarial):
            Xp, yp = X.copy(), y.copy()
            Xp[i], yp[i] = row, yi
            moved = np.asarray(make()(Xp, yp, 0), dtype=float)
            assert np.all(np.isfinite(moved)), name
            worst = max(worst, float(np.linalg.norm(moved - base)))
        assert worst <= sens * (1 + 1e-9), name


@pytest.mark.parametrize("seed", range(3))
def test_every_pass_on_a_mixed_domain_moves_at_most_by_its_sensitivity(seed):
    """Exact check: each row replaced by adversarial rows (the corners of x and z, far outside, the largest finite
    doubles, NaN null rows); the product and square columns are recomputed from the row as patsy would (inf where
    they overflow)."""
    rng = np.random.default_rng(seed)
    st, _ = _mixed_standardisation(rng)
    n = 30
    X = _raw_rows(rng.uniform(15, 65, n), rng.uniform(5, 25, n))
    y = rng.uniform(-5, 9, n)
    X[::7], y[::7] = np.nan, np.nan
    values = (20.0, 60.0, -BIG, BIG, 0.0, 1e6, -1e6, 40.0)
    picks = [(xv, zv) for xv, zv in itertools.product(values, (10.0, 20.0, -BIG, BIG, 0.0))]
    adversarial = [(_raw_rows(np.array([xv]), np.array([zv]))[0], float(rng.choice([-3.0, 7.0, BIG, -BIG])))
                   for xv, zv in picks] + [(np.full(5, np.nan), np.nan)]
    cols, resp = free_variables(st.domain)
    k = cols.size + int(resp)
    theta = rng.normal(0, 3, (5, 2))
    clip, radius2 = 0.7, pgd.GRAM_RADIUS2 * 5
    passes = [
        ("centres", lambda: UnitSumsPass(st.domain, cols, resp), 2 * math.sqrt(k)),
        ("scales", lambda: DeviationSumsPass(st.domain, cols, resp, rng.uniform(-1, 1, k) * 0 + 0.3), 2 * math.sqrt(k)),
        ("gram", lambda: pgd.GramPass(st, radius2), math.sqrt(2.0) * radius2),
        ("gradients of 2 chains", lambda: pgd.GradientPass(st, theta, clip), 2 * clip * math.sqrt(2)),
        ("inference", lambda: pgd.InferencePass(st, theta[:, 0], clip), math.sqrt(2.0)),
    ]
    _assert_within_sensitivity(passes, X, y, adversarial)


# -- the two-stage release -----------------------------------------------------------------------------------------

ALPHA = 1e-3
EPS_G, DELTA_G = 2.0, 1e-3


def _release_pair(n: int = 60):
    """x at 40 in every row of D; in D' one row's x is 1000, far beyond the edge of x's domain [20, 60]: clipped,
    the released mean of x moves, and with it the centring of x^2 and the derived domain; the square's centred
    value moves from 0 to the top of its range.  The response is constant."""
    X = _raw_rows(np.full(n, 40.0), np.full(n, 15.0))[:, [0, 1, 3]]
    Xp = X.copy()
    Xp[-1] = [1.0, 1000.0, 1e6]
    y = np.zeros(n)
    return (X, y), (Xp, y)


def _centred_moments_run(domain: Domain, structure, eps: float, delta: float):
    """The mechanism an audit runs: the two-stage centred release on ``domain`` (the centres' budget nearly all of
    mu(eps, delta)), returning the released standardisation."""
    mu = gaussian_mu(eps, delta)

    def run(data, rng):
        X, y = data
        st, _ = release_centred_moments(InMemoryRows(X, y).reduce, X.shape[0], domain, structure,
                                        mu_centre=mu * math.sqrt(0.99), mu_scale=mu * 0.1, rng=rng,
                                        ledger=PrivacyLedger(eps, delta))
        return st
    return run


def _release_run(eps: float, delta: float):
    structure = centrable_design(_info("x + I(x**2)"))
    # the response's domain is a point (nothing released for it): x and its square share the moments' budget,
    # nearly all of which goes to the centres
    domain = Domain(np.array([1.0, 20.0, 0.0]), np.array([1.0, 60.0, 0.0]), 0.0, 0.0, intercept_index=0)
    return _centred_moments_run(domain, structure, eps, delta)


def test_the_release_pair_moves_the_square_by_its_full_range():
    (X, y), (Xp, _) = _release_pair()
    st = _release_run(EPS_G, DELTA_G)((X, y), np.random.default_rng(0))
    assert st.domain.mix is not None and st.domain.hi[2] > 0.0


def _audit_release(seed: int):
    d_pair, dp_pair = _release_pair()
    return audit_mechanism(_release_run(EPS_G, DELTA_G), d_pair, dp_pair, runs=3_000, delta=DELTA_G, alpha=ALPHA,
                           seed=seed, statistic=lambda st: float(st.centre[2]))


def test_audit_the_two_stage_release():
    """False-failure rate alpha = 1e-3 for the upper assertion: the whole release (both stages, 4 Gaussian vectors
    at mu = mu(2, 1e-3) in all), output = the released centre of the centred square, whose release is the second
    stage's (at about mu 0.49: half the centres' share); the lower bound must not exceed the claim.  It was
    0.18-0.32 at seeds 11-14, so the sanity check (> 0.1: the pair moves the output) holds with a margin."""
    res = _audit_release(seed=11)
    assert 0.1 < res.epsilon_lower_bound <= EPS_G


def test_audit_flags_a_release_that_does_not_clip_the_centred_columns(monkeypatch):
    """Break the domain: the columns of X M are not clipped (the noise still calibrated to the derived ranges).
    The replaced row's centred square is then about 2,300 times its range: the audit's lower bound far exceeds
    the claim (a negligible chance of missing the bug)."""
    def unclipped(self, X):
        X = np.asarray(X, dtype=float)
        if self.mix is not None:
            X = X @ self.mix
        half = self.half
        U = np.where(half > 0, (X - self.mid) / np.where(half > 0, half, 1.0), 0.0)
        U[:, 0] = 1.0
        return U
    monkeypatch.setattr(Domain, "design", unclipped)
    assert _audit_release(seed=12).epsilon_lower_bound > EPS_G


# -- end to end ----------------------------------------------------------------------------------------------------

def _quadratic(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.uniform(20, 60, n), "z": rng.uniform(10, 20, n)})
    df["y"] = 1 + 0.2 * df.x - 0.002 * df.x**2 + 0.01 * df.x * df.z + rng.normal(0, 0.5, n)
    return df


def test_a_bound_free_fit_centres_its_products_and_spends_its_budget():
    df = _quadratic()
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpstats.errors.UncentredColumnsWarning)
        res = dpstats.dp_ols("y ~ x + z + I(x**2) + x:z", df, 1.0, 1e-6, random_state=0)
    assert res.method == "pgd" and res.inference_available
    assert res.privacy.epsilon_spent <= 1.0 + 1e-9
    names = [s.name for s in res.privacy.steps]
    assert sum("centred products and powers" in name for name in names) == 2
    assert any(n.startswith("I(x ** 2), x:z (product or power columns) were fitted with each variable centred at "
                            "their released mean") or "centred at its released mean" in n for n in res.privacy.notes)
    # the domain is released for x, z and y only: the centred columns' follow from x's and z's
    domain_note = next(n for n in res.privacy.notes if "have no public range" in n)
    assert "I(x ** 2)" not in domain_note and "x:z" not in domain_note


def test_centring_at_released_means_brings_a_square_close_to_least_squares():
    """The quadratic's slope of x: fitted as written (rescale=False) 0.63 median relative error over 20 seeds in
    benchmarks/uncentred.py, centred at the released means 0.03; one seed here, with a wide margin.

    Deterministic under the fixed seed (relative error 0.022).  Over 100 re-seeds (2-101) the relative error's root
    mean square was 0.071 (mean 0.053, largest 0.22), and the former margin 0.2 failed for 2 of them: 0.35 is 4.9
    of those sds, so a re-seed fails with probability about 2 Phi(-4.9) = 1e-6 (normal tail); the uncentred fit's
    median 0.63 still fails it."""
    import statsmodels.formula.api as smf
    df = _quadratic(4000, seed=1)
    ols = smf.ols("y ~ x + I(x**2)", df).fit().params
    res = dpstats.dp_ols("y ~ x + I(x**2)", df, 1.0, 1e-6, random_state=1)
    assert abs(res.params["x"] - ols["x"]) / abs(ols["x"]) < 0.35


def test_extreme_finite_values_give_finite_coefficients():
    df = _quadratic(2000)
    for value in (1e300, -1e300, 1e154, 5e-324):
        bad = df.copy()
        bad.loc[0, "x"] = value
        bad.loc[1, "z"] = -value
        res = dpstats.dp_ols("y ~ x * z + I(x**2)", bad, 1.0, 1e-6, random_state=0)
        assert np.all(np.isfinite(res.params.to_numpy())) and np.all(np.isfinite(res.conf_int().to_numpy()))


def test_missing_drop_and_chunks_equal_the_in_memory_fit(tmp_path):
    df = _quadratic(2500)
    df.loc[::50, "x"] = np.nan
    csv = tmp_path / "d.csv"
    df.to_csv(csv, index=False)

    def fit(data):
        return dpstats.dp_ols("y ~ x * z + I(x**2)", data, 2.0, 1e-6, method="pgd", random_state=3, missing="drop",
                              steps=40)
    a, b = fit(df), fit(CSVSource([str(csv)], chunksize=777))
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.conf_int().to_numpy(), a.conf_int().to_numpy(), rtol=1e-8, atol=1e-12)
    assert [s.name for s in a.privacy.steps] == [s.name for s in b.privacy.steps]


def test_powers_of_huge_centres_do_not_overflow_into_an_untyped_error():
    """A variable near 1e40 with powers up to 7: a centring weight or range would overflow (Python's float ** raises
    OverflowError).  Without bounds the entries are clamped to finite doubles and the fit runs (finite
    coefficients); with declared bounds of that size the declaration is refused with a typed error, as before."""
    rng = np.random.default_rng(0)
    formula = "y ~ x + I(x**2) + I(x**3) + I(x**4) + I(x**5) + I(x**6) + I(x**7)"
    df = pd.DataFrame({"x": rng.normal(5, 1, 3000) * 1e40, "y": rng.normal(size=3000)})
    res = dpstats.dp_ols(formula, df, 1.0, 1e-6, random_state=0)
    assert np.all(np.isfinite(res.params.to_numpy()))
    structure = centrable_design(patsy.dmatrix(formula.split("~")[1], df.head(3)).design_info)
    assert structure is not None
    centring = structure.at([Interval(1.0, 1.0)] + [Interval(-1e300, 1e300)] * 7)
    assert np.all(np.isfinite(centring.matrix)) and np.all(np.isfinite(np.array(centring.intervals)))
    with pytest.raises(dpstats.errors.InvalidBoundsError, match=r"reaches beyond \+-1e\+100"):
        dpstats.dp_ols(formula, df, 1.0, 1e-6, random_state=0, bounds={"x": (0.0, 1e41), "y": (-5.0, 5.0)})
@pytest.mark.parametrize(("bounds", "rescale"), [(None, "centred"), ("all", False)])
def test_a_product_of_a_centred_column_is_still_warned_about(bounds, rescale):
    """``I(x**2):z`` centres a power inside a product, which only declared bounds centre: pgd then centres none of
    the design's products and powers, and the report must say they were fitted as written (the warning was lost
    when the structure for released centres, which leaves such designs out, also decided the warning)."""
    df = _quadratic(2000)
    declared = {"x": (20.0, 60.0), "z": (10.0, 20.0), "y": (-5.0, 15.0)} if bounds == "all" else None
    with pytest.warns(dpstats.errors.UncentredColumnsWarning, match=r"I\(x \*\* 2\):z"):
        res = dpstats.dp_ols("y ~ x + z + I(x**2) + x:z + I(x**2):z", df, 1.0, 1e-6, bounds=declared,
                             rescale=rescale, random_state=0)
    assert res.method == "pgd"
    assert not any("centred at its released mean" in n for n in res.privacy.notes)
    assert any(n.startswith("WARNING: I(x ** 2), x:z, I(x ** 2):z (product or power columns) fitted as written")
               for n in res.privacy.notes)


# -- an implicit constant: the intercept model, then the centring (pgd's step 0) -------------------------------------

def _implicit_standardisation(rng: np.random.Generator) -> Standardisation:
    """``0 + C(g) + x + I(x**2)``: g's two dummies sum to 1 (w = (1, 1, 0, 0)); pgd's intercept model M_i makes
    the first dummy the constant, and the square centred at x = 40 takes its constant term on the dummies (M_c):
    the rows are those of X M_c M_i, with small scales so that every clip binds."""
    info = _info("0 + C(g) + x + I(x**2)")
    w = np.array([1.0, 1.0, 0.0, 0.0])
    k, implicit = intercept_model(w)
    structure = centrable_design(info, constant=w)
    assert k == 0 and structure is not None and structure.columns == (3,) and structure.variables == (2,)
    centring = structure.at([Interval(1.0, 1.0), Interval(0.0, 1.0), Interval(20.0, 60.0), Interval(0.0, 0.0)])
    lo = np.array([iv[0] for iv in centring.intervals])
    hi = np.array([iv[1] for iv in centring.intervals])
    domain = Domain(lo, hi, -3.0, 7.0, intercept_index=0, mix=centring.matrix @ implicit)
    return Standardisation(domain, np.r_[0.0, rng.uniform(-1, 1, 3)], np.r_[1.0, rng.uniform(2.0**-10, 0.5, 3)],
                           float(rng.uniform(-1, 1)), float(rng.uniform(2.0**-10, 0.5)))


def _dummy_rows(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.column_stack([1.0 - g, g, x, x**2])


def test_the_intercept_model_of_an_implicit_constant_maps_back_exactly():
    """b = M_c M_i b': on rows whose dummies sum to 1, the standardised rows' fitted values equal the raw design's
    with the mapped coefficients, and the fitted design's first column is the constant."""
    rng = np.random.default_rng(1)
    st = _implicit_standardisation(rng)
    X = _dummy_rows(rng.integers(0, 2, 50).astype(float), rng.uniform(20, 60, 50))
    theta = rng.normal(size=4)
    A, b = st.affine_back()
    dom = st.domain
    a_y, b_y = dom.y_mid + dom.y_half * st.y_centre, dom.y_half * st.y_scale
    np.testing.assert_allclose(X @ (A @ theta + b), a_y + b_y * (st.design(X) @ theta), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(dom.columns(X)[:, 0], 1.0)
    np.testing.assert_allclose(dom.columns(X)[:, 3], (X[:, 2] - 40.0) ** 2, rtol=1e-9)


@pytest.mark.parametrize("seed", range(2))
def test_every_pass_on_the_intercept_model_moves_at_most_by_its_sensitivity(seed):
    """Exact check, as for the mixed domain above: each row replaced by adversarial rows whose dummies need not sum
    to 1 (0, 1, 5, +-the largest double) and whose x is at the domain's corners, far outside or the largest
    doubles (the square recomputed from it), and NaN null rows."""
    rng = np.random.default_rng(seed)
    st = _implicit_standardisation(rng)
    n = 30
    X = _dummy_rows(rng.integers(0, 2, n).astype(float), rng.uniform(15, 65, n))
    y = rng.uniform(-5, 9, n)
    X[::7], y[::7] = np.nan, np.nan
    adversarial = [(_dummy_rows(np.array([gv]), np.array([xv]))[0], float(rng.choice([-3.0, 7.0, BIG, -BIG])))
                   for gv, xv in itertools.product((0.0, 1.0, 5.0, -BIG, BIG), (20.0, 60.0, -BIG, BIG, 0.0, 1e6))]
    adversarial.append((np.full(4, np.nan), np.nan))
    cols, resp = free_variables(st.domain)
    k = cols.size + int(resp)
    theta = rng.normal(0, 3, (4, 2))
    clip, radius2 = 0.7, pgd.GRAM_RADIUS2 * 4
    passes = [
        ("centres", lambda: UnitSumsPass(st.domain, cols, resp), 2 * math.sqrt(k)),
        ("scales", lambda: DeviationSumsPass(st.domain, cols, resp, np.full(k, 0.3)), 2 * math.sqrt(k)),
        ("gram", lambda: pgd.GramPass(st, radius2), math.sqrt(2.0) * radius2),
        ("gradients of 2 chains", lambda: pgd.GradientPass(st, theta, clip), 2 * clip * math.sqrt(2)),
        ("inference", lambda: pgd.InferencePass(st, theta[:, 0], clip), math.sqrt(2.0)),
        ("rows beyond the domain", lambda: pgd.OutsideDomainPass(st, cols, resp), 1.0),
    ]
    _assert_within_sensitivity(passes, X, y, adversarial)


def _implicit_release_run(eps: float, delta: float):
    """The two-stage release on ``0 + C(g) + x + I(x**2)``'s intercept model (domain mix M_i, centring X M_c M_i),
    as pgd makes it without bounds."""
    w = np.array([1.0, 1.0, 0.0, 0.0])
    _, implicit = intercept_model(w)
    structure = centrable_design(_info("0 + C(g) + x + I(x**2)"), constant=w)
    domain = Domain(np.array([1.0, 0.0, 20.0, 0.0]), np.array([1.0, 1.0, 60.0, 0.0]), 0.0, 0.0, intercept_index=0,
                    mix=implicit)
    return _centred_moments_run(domain, structure, eps, delta)


def test_audit_the_two_stage_release_on_the_intercept_model():
    """False-failure rate alpha = 1e-3 for the upper assertion.  D: every row at level a with x = 40; in D' one
    row's dummies are (2, -1) (they still sum to 1, but lie outside their range) and its x is 1000, far beyond x's
    domain [20, 60]: the released mean of x and the centred square's value move to the edge.  Output = the released
    centre of the centred square.  The lower bound was 0.07-0.18 at seeds 11-13 (two pairs), so the check that the
    pair moves the output (> 0) holds with a margin."""
    X = _dummy_rows(np.zeros(60), np.full(60, 40.0))
    Xp = X.copy()
    Xp[-1] = _dummy_rows(np.array([-1.0]), np.array([1000.0]))[0]
    y = np.zeros(60)
    res = audit_mechanism(_implicit_release_run(EPS_G, DELTA_G), (X, y), (Xp, y), runs=3_000, delta=DELTA_G,
                          alpha=ALPHA, seed=13, statistic=lambda st: float(st.centre[3]))
    assert 0.0 < res.epsilon_lower_bound <= EPS_G


def test_the_intercept_model_with_missing_drop_and_chunks_equals_the_in_memory_fit(tmp_path):
    """``y ~ 0 + C(g) + x + I(x**2)`` without bounds (pgd's intercept model and the power centred at its released
    mean) with ``missing="drop"``: read from a CSV in chunks of 777 rows it releases what the in-memory fit
    releases (to rounding of the chunks' sums), and says it fitted the intercept model."""
    df = _quadratic(2500)
    df["g"] = pd.Categorical(np.random.default_rng(5).choice(["a", "b", "c"], len(df)), categories=["a", "b", "c"])
    df.loc[::50, "x"] = np.nan
    csv = tmp_path / "d.csv"
    df.to_csv(csv, index=False)

    def fit(data):
        return dpstats.dp_ols("y ~ 0 + C(g, levels=['a', 'b', 'c']) + x + I(x**2)", data, 2.0, 1e-6, method="pgd",
                              random_state=3, missing="drop", steps=40)
    a, b = fit(df), fit(CSVSource([str(csv)], chunksize=777))
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.conf_int().to_numpy(), a.conf_int().to_numpy(), rtol=1e-8, atol=1e-12)
    assert [s.name for s in a.privacy.steps] == [s.name for s in b.privacy.steps]
    assert any("pgd fitted the same model" in note for note in a.privacy.notes)
