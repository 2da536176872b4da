"""Extreme finite values inside the methods: the overflow-safe helpers, the public values that replace what
cannot be computed, and typed refusals instead of raw exceptions (issue 15, item 4).

Every test is deterministic (fixed data and seeds, exact comparisons or tolerances of floating-point
rounding), so the false-failure rate is 0.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import InvalidBoundsError, MethodOptionError, NoiseScaleRangeError
from dpstats.formula import build_design
from dpstats.methods.common.extremes import (
    LARGEST,
    clamp_finite,
    divide_by_norms,
    residuals,
    row_norms,
    square,
    unit_rows,
)
from dpstats.methods.common.private_centring import CENTRE_GRID
from dpstats.methods.common.robust_estimators import DISTANCE_GRID, clip_factors, separately_clipped_gradient
from dpstats.methods.common.row_passes import ClipTable
from dpstats.methods.common.sufficient import check_statistics_range
from dpstats.methods.registry import get_method
from dpstats.methods.tukey.depth import solve_block_models
from dpstats.methods.tukey.em import tukey_em
from dpstats.privacy.ledger import PrivacyLedger

EXTREME_ROWS = np.array([[1e300, -1e300, 2.0], [LARGEST, LARGEST, LARGEST], [3e154, 0.5, -3e154],
                         [5e-324, 0.0, 1e-310]])


def _ordinary(n: int = 50) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, 3)) * 10.0 ** np.arange(-2, 1)


# ----------------------------------------------------------------------------- the helpers


def test_row_norms_are_the_plain_norms_on_ordinary_rows_and_right_on_extreme_ones() -> None:
    X = _ordinary()
    assert np.array_equal(row_norms(X), np.sqrt(np.einsum("ij,ij->i", X, X)))  # bit for bit
    norms = row_norms(EXTREME_ROWS)
    exact = [math.hypot(*(float(v) for v in row)) if np.isfinite(math.hypot(*row)) else math.inf
             for row in EXTREME_ROWS]
    np.testing.assert_allclose(norms[:3], exact[:3], rtol=1e-15)
    assert math.isinf(norms[1])  # the norm of (LARGEST, LARGEST, LARGEST) exceeds every double
    assert norms[3] == 0.0  # squares that underflow: the plain norm, 0 (a clip factor of 1, as it should be)


def test_clip_factors_scale_every_row_to_the_bound_whatever_its_size() -> None:
    X = np.vstack([_ordinary(), EXTREME_ROWS])
    c = clip_factors(X, 2.0)
    assert np.all(np.isfinite(c)) and np.all((c > 0) & (c <= 1))
    clipped = unit_rows(X[-4:-1]) * 2.0  # the clipped extreme rows: their direction at norm 2
    with np.errstate(over="ignore"):
        np.testing.assert_allclose((X[-4:-1].T * c[-4:-1]).T, clipped, rtol=1e-12)
    ordinary = X[:50]
    norms = np.sqrt(np.einsum("ij,ij->i", ordinary, ordinary))
    assert np.array_equal(c[:50], np.minimum(1.0, 2.0 / np.maximum(norms, np.finfo(float).tiny)))


def test_residuals_are_never_nan_and_bit_for_bit_on_ordinary_rows() -> None:
    X, w = _ordinary(), np.array([1.0, -2.0, 0.5])
    y = X @ w + 1.0
    r = X @ w
    r -= y
    assert np.array_equal(residuals(X, y, w), r)
    ys = np.array([1.0, 2.0, 1e300, 0.0])
    out = residuals(EXTREME_ROWS, ys, w)
    assert not np.any(np.isnan(out))
    assert out[0] == pytest.approx(1e300 * 1.0 - 1e300 * -2.0 + 1.0 - 1.0, rel=1e-15)  # 3e300, recomputed
    assert out[1] == pytest.approx(-0.5 * LARGEST, rel=1e-15)  # L - 2L + 0.5L overflows plainly, not scaled
    huge_w = np.array([LARGEST, -LARGEST, 0.0])
    assert not np.any(np.isnan(residuals(EXTREME_ROWS, ys, huge_w)))


def test_divide_by_norms_and_clamp_and_square() -> None:
    norms = row_norms(EXTREME_ROWS)
    q = divide_by_norms(1.0, EXTREME_ROWS, norms)
    assert np.all(np.isfinite(q)) and q[1] > 0  # 1 / ||x|| of a row whose norm exceeds every double
    a = np.array([np.inf, -np.inf, -LARGEST, 1.0])
    assert clamp_finite(a).tolist() == [LARGEST, -LARGEST, -LARGEST, 1.0]
    assert square(3.0) == 9.0 and square(1e200) == math.inf


def test_histogram_bins_of_overflowed_statistics_are_public() -> None:
    edges = DISTANCE_GRID.index(np.array([0.0, 1.0, np.inf, np.nan, LARGEST]))
    last = DISTANCE_GRID.size - 1
    assert edges.tolist() == [0, 64, last, last, last]
    bins = CENTRE_GRID.index(np.array([np.inf, -np.inf, np.nan, 0.0]))
    assert bins.tolist() == [CENTRE_GRID.size - 1, 0, CENTRE_GRID.size - 1, CENTRE_GRID.index(np.array([0.0]))[0]]


def test_the_clip_table_gives_the_clipped_sum_with_infinite_terms() -> None:
    """DP-AMBSSGD's table (terms r_i x_i clipped to norm C) equals the direct clipped sum, extreme rows included."""
    X = np.vstack([_ordinary(), EXTREME_ROWS[:3]])
    r = np.concatenate([np.linspace(-3, 3, 50), [1e300, -np.inf, 2e300]])
    norms = row_norms(X)
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.abs(r) * norms
    candidates = 0.5 * 2.0 ** np.arange(8)
    table = ClipTable.of(X, r, s, candidates, limit=np.sign(r) * divide_by_norms(1.0, X, norms))
    size = np.where(np.isfinite(s), s, np.inf)  # the size of each term r_i x_i
    for j, C in enumerate(candidates):
        direct = np.sign(r)[:, None] * unit_rows(X) * np.minimum(size, C)[:, None]
        np.testing.assert_allclose(table.at(candidates, j), direct.sum(axis=0), rtol=1e-12, atol=1e-12)
        assert np.all(np.isfinite(table.full[:-1])) and np.all(np.isfinite(table.scaled))


def test_the_separately_clipped_gradient_stays_within_its_bound() -> None:
    X = np.vstack([_ordinary(), EXTREME_ROWS])
    y = np.concatenate([np.zeros(50), [-1e300, 0.0, LARGEST, 0.0]])
    w = np.array([1.0, 1.0, 1.0])
    theta_x, theta = 2.0, 3.0
    g = separately_clipped_gradient(X, y, w, clip_factors(X, theta_x), theta)
    assert np.all(np.isfinite(g))
    assert np.linalg.norm(g) <= theta_x * theta * (1 + 1e-12)


# ----------------------------------------------------------------------------- TukeyEM


def test_non_finite_block_models_become_the_public_fallback_point() -> None:
    grams = np.tile(np.eye(2), (4, 1, 1))
    moments = np.ones((4, 2))
    grams[1, 0, 0], moments[2, 1] = np.inf, np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        models = solve_block_models(grams, moments)
    assert models.tolist() == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]


def _models(m: int = 64) -> np.ndarray:
    return np.random.default_rng(1).normal(size=(m, 2)) + np.array([1.0, 2.0])


def _em(models: np.ndarray, seed: int = 3) -> np.ndarray:
    ledger = PrivacyLedger(50.0, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return tukey_em(models, epsilon_ptr=10.0, epsilon_em=10.0, delta=1e-3, rng=np.random.default_rng(seed),
                        ledger=ledger).point


def test_tukey_em_replaces_a_non_finite_model_by_the_fallback_point() -> None:
    models = _models()
    bad = models.copy()
    bad[5] = [np.nan, np.inf]
    fallback = models.copy()
    fallback[5] = 0.0
    assert np.array_equal(_em(bad), _em(fallback))


def test_tukey_em_on_models_near_the_largest_double_is_the_rescaled_fit() -> None:
    """Coordinates above a quarter of the largest double are divided by 4 while the volumes are formed: the
    output is the ordinary fit's, scaled (the approximate depth is scale invariant), and finite."""
    models = _models()
    scale = 2.0 ** 1021  # 2^1021 x (1..4): some entries above LARGEST / 4, none overflowing
    point = _em(models * scale)
    assert np.all(np.isfinite(point))
    np.testing.assert_allclose(point, _em(models) * scale, rtol=1e-9)
    extreme = models.copy()
    extreme[:, 0] = np.where(np.arange(models.shape[0]) % 2, LARGEST, -LARGEST)  # differences overflow
    assert np.all(np.isfinite(_em(extreme)))


# ----------------------------------------------------------------------------- chunked equals in memory


@pytest.mark.parametrize("method", ["robgd", "ambssgd", "tukey"])
def test_chunked_fits_equal_in_memory_fits_with_extreme_rows(method: str) -> None:
    n = 5000
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    y = X @ np.array([1.0, 1.0, -0.5]) + 0.3 * rng.normal(size=n)
    spec = get_method(method)
    for row, values in [(3, (1e300, -LARGEST, 1e300)), (2500, (3e154, 0.5, -3e154)), (4999, (1e300, -1.7e308, 1e300))]:
        Xp, yp = X.copy(), y.copy()
        Xp[row, 1:], yp[row] = values[:2], values[2]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            memory = spec.fit_arrays(Xp.copy(), yp.copy(), ledger=PrivacyLedger(2.0, 1e-6),
                                     rng=np.random.default_rng(4), intercept_index=0).params
            chunks = spec.fit_arrays(Xp, yp, ledger=PrivacyLedger(2.0, 1e-6), rng=np.random.default_rng(4),
                                     intercept_index=0, chunk_rows=777).params
        np.testing.assert_allclose(chunks, memory, rtol=1e-9, err_msg=f"row {row}")


# ----------------------------------------------------------------------------- typed, public refusals


def _frame(n: int = 2000) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=n)})
    df["y"] = df.x + rng.normal(size=n)
    return df


@pytest.mark.parametrize("method", ["ssp", "adassp", "noisy_ols"])
def test_bounds_too_wide_for_double_precision_are_refused_before_anything_is_spent(method: str) -> None:
    """With rescale=False the sums of rows clipped to bounds near 1e200 could overflow for some data only; the
    fit refuses from the bounds alone (beyond MAX_BOUND_MAGNITUDE), before any release."""
    acct = dpstats.PrivacyAccountant(10.0, 1e-4)
    with pytest.raises(InvalidBoundsError, match="reaches beyond"):
        dpstats.dp_ols("y ~ x", _frame(), epsilon=1.0, delta=1e-6, method=method, rescale=False,
                       bounds={"x": (-1e200, 1e200), "y": (-1e200, 1e200)}, accountant=acct)
    assert acct.spent == (0.0, 0.0)


@pytest.mark.parametrize("formula", ["y ~ x + I(1e-320 * x)", "y ~ 0 + np.tanh(x * 1e-320)", "I(y * 1e-320) ~ x",
                                     "y ~ I(x * 1e-60):I(x * 2e-60)"])
@pytest.mark.parametrize("method", ["ssp", "pgd"])
def test_derived_ranges_too_narrow_for_the_rescaling_are_refused_before_anything_is_spent(formula, method) -> None:
    """A derived range of subnormal width: the public rescaling divided by it, and mapping the fit back multiplied a
    coefficient by about 1e319, so dp_ols returned an infinite coefficient with NaN standard errors (and numpy's
    overflow warnings).  Refused from the bounds, as a declared range narrower than MIN_BOUND_WIDTH is."""
    acct = dpstats.PrivacyAccountant(10.0, 1e-4)
    with pytest.raises(InvalidBoundsError, match="narrower than 1e-100"):
        dpstats.dp_ols(formula, _frame(), epsilon=1.0, delta=1e-6, method=method,
                       bounds={"x": (-3.0, 3.0), "y": (-8.0, 8.0)}, accountant=acct, random_state=0)
    assert acct.spent == (0.0, 0.0)


def test_sums_beyond_double_precision_are_refused_from_n_and_the_term_bound() -> None:
    """The sufficient-statistics methods' own check, from n and the bound of one row's term (public): with every
    declared bound at most MAX_BOUND_MAGNITUDE it is reached only by n * d beyond any real data set."""
    check_statistics_range(2000, 1e200)
    with pytest.raises(NoiseScaleRangeError, match="too wide for double precision"):
        check_statistics_range(2000, 1e299)


def test_an_absurd_clip_norm_is_a_typed_refusal_before_anything_is_spent() -> None:
    """The message gives the scale with four significant digits (it printed 17, as repr does)."""
    acct = dpstats.PrivacyAccountant(10.0, 1e-4)
    with pytest.raises(NoiseScaleRangeError, match=r"the noise scale \d(\.\d{1,3})?e\+\d+ is outside the range of a "
                                                   "floating-point grid") as info:
        dpstats.dp_ols("y ~ x", _frame(), epsilon=1.0, delta=1e-6, method="dpsgd", clip_norm=1e300, accountant=acct)
    assert isinstance(info.value, ValueError) and acct.spent == (0.0, 0.0)


def test_covariate_tail_outside_its_public_range_is_refused() -> None:
    for tail in (1e9, 1e-9):
        with pytest.raises(MethodOptionError, match="covariate_tail"):
            dpstats.dp_ols("y ~ x", _frame(), epsilon=1.0, delta=1e-6, method="robgd", covariate_tail=tail)


def test_a_lasso_step_too_small_for_a_double_is_a_typed_refusal() -> None:
    """log(n) / (eta c_x^2) is inf: n parts (not an OverflowError), and a Peeling scale too small to sample."""
    acct = dpstats.PrivacyAccountant(10.0, 1e-4)
    with pytest.raises(NoiseScaleRangeError, match=r"the noise scale must be finite and > 0, got 0;"):
        dpstats.dp_ols("y ~ x", _frame(200), epsilon=1.0, delta=1e-6, method="lasso", sparsity=1, step_size=1e-320,
                       bounds={"x": (-4, 4), "y": (-8, 8)}, accountant=acct)
    assert acct.spent == (0.0, 0.0)


def test_a_spread_beyond_the_released_domains_scale_grid_is_flagged_in_the_notes() -> None:
    """pgd without bounds: a variable whose released spread lands in the scale grid's last bin is clipped to a
    domain that may be far narrower than its values; the notes say so (from the released bin alone), and an
    ordinary scale gives no such note."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.normal(5.0, 2.0, 800)})
    frame["y"] = 1.0 + 0.5 * frame["x"] + rng.normal(0.0, 1.0, 800)
    flagged = []
    for scale in (1.0, 1e12, 1e200):
        res = dpstats.dp_ols("y ~ x", frame.assign(x=frame["x"] * scale), 1.0, 1e-6, method="pgd", random_state=1)
        assert np.all(np.isfinite(res.params))
        flagged.append(any("top bin of the scale grid" in note and "variable x:" in note
                           for note in res.privacy.notes))
    assert flagged == [False, True, True]


@pytest.mark.parametrize("dtype", ["float32", "Float32", "float16"])
def test_narrow_float_columns_are_transformed_in_double_precision(dtype: str) -> None:
    """A float32 (or float16, or nullable Float32) column is widened to float64 before the formula's transforms (a
    decision on the dtype alone): I(x * x) of a finite float32 value near its largest is finite in double precision,
    so a bound-free fit of it releases instead of refusing the row as non-finite, and the design column is the
    float64 product."""
    rng = np.random.default_rng(0)
    x = rng.uniform(0.0, 1.0, 400)
    x[3] = 6e4 if dtype == "float16" else 3e38
    df = pd.DataFrame({"x": pd.array(x, dtype=dtype), "y": rng.normal(size=400)})
    res = dpstats.dp_ols("y ~ I(x * x)", df, 3.0, 1e-6, method="pgd", random_state=0)
    assert np.all(np.isfinite(res.params.to_numpy()))
    design = build_design("y ~ I(x * x)", df)
    widened = np.asarray(df["x"].to_numpy(dtype=np.float64))
    np.testing.assert_array_equal(design.X[:, 1], widened * widened)


@pytest.mark.parametrize("method", ["tukey", "robgd", "theilsen"])
def test_declared_bounds_clip_the_rows_of_methods_that_need_none(method):
    """With every bound declared, the public rescaling clips the rows to the declared ranges for a method that
    needs no bounds too: responses of +-1e308 in a column declared [-20, 40] give coefficients inside what the
    declared box allows (TukeyEM returned about 1e307 before), the same fit as the responses clipped by hand."""
    rng = np.random.default_rng(5)
    n = 4000
    formula = "y ~ x" if method == "theilsen" else "y ~ x + z"
    df = pd.DataFrame({"x": rng.uniform(0, 10, n), "z": rng.uniform(0, 5, n)})
    df["y"] = np.where(np.arange(n) % 2 == 0, 1e308, -1e308)
    bounds = {"x": (0.0, 10.0), "z": (0.0, 5.0), "y": (-20.0, 40.0)}
    wild = dpstats.dp_ols(formula, df, 10.0, 1e-6, method=method, bounds=bounds, random_state=0)
    tame = dpstats.dp_ols(formula, df.assign(y=df.y.clip(-20.0, 40.0)), 10.0, 1e-6, method=method, bounds=bounds,
                          random_state=0)
    np.testing.assert_allclose(wild.params.to_numpy(), tame.params.to_numpy(), rtol=1e-12, atol=1e-12)
    assert np.all(np.abs(wild.params.to_numpy()) < 1e3)
