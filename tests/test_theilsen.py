"""The private Theil-Sen estimator (dpstats.methods.theilsen): options, public refusals, budget, grids, pairing,
chunked equality, extreme rows, accuracy and the black-box privacy audit.

Statistical tests use fixed seeds; each states its false-failure rate (over seeds) in its docstring.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from ledger_helpers import method_steps

import dpstats
from dpstats.bounds import DataBounds
from dpstats.errors import InvalidArgumentError, MethodOptionError
from dpstats.methods import theilsen
from dpstats.methods.registry import get_method
from dpstats.privacy.audit import audit_mechanism
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.rows.sources import CSVSource, DataFrameSource

BOUNDS = {"x": (-5.0, 5.0), "y": (-8.0, 10.0)}
UNIT = DataBounds(np.array([1.0, -1.0]), np.array([1.0, 1.0]), -1.0, 1.0)


def _frame(n: int, seed: int = 0, slope: float = 0.5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame({"x": x, "y": 1.0 + slope * x + rng.normal(size=n)})


def _fit(data, epsilon: float = 1.0, **options):
    return dpstats.dp_ols("y ~ x", data, epsilon, 1e-6, method="theilsen", bounds=BOUNDS, random_state=7, **options)


def _unit_rows(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows [1, x] and y inside the unit box (the units the method sees after the public rescaling)."""
    rng = np.random.default_rng(seed)
    x = np.clip(rng.normal(0.0, 0.3, n), -1, 1)
    return np.column_stack([np.ones(n), x]), np.clip(0.4 * x + 0.2 * rng.normal(size=n), -1, 1)


# -- options and public refusals --------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [{"matchings": 0}, {"matchings": 65}, {"matchings": 2.0}, {"window_rows": 8},
                                     {"bootstrap": 99}, {"inference": 1}, {"alpha": 0.1}])
def test_bad_options_are_refused_before_anything_is_read(options):
    with pytest.raises(MethodOptionError,
                       match="^(matchings|window_rows|bootstrap|inference) must be|'theilsen' does not accept alpha"):
        _fit(_frame(50), **options)


@pytest.mark.parametrize("formula", ["y ~ x + z", "y ~ x - 1", "y ~ 1"])
def test_designs_other_than_one_predictor_with_intercept_are_refused_and_spend_nothing(formula):
    df = _frame(200).assign(z=lambda d: d.x ** 2)
    refusal = "one predictor with an intercept|fits at most 2 design columns"  # the pipeline refuses d > 2 itself
    with pytest.raises(InvalidArgumentError, match=refusal) as info:
        dpstats.dp_ols(formula, df, 1.0, 1e-6, method="theilsen", bounds={**BOUNDS, "z": (0.0, 25.0)})
    assert info.value.privacy_spent == (0.0, 0.0)


def test_the_registry_describes_the_method():
    spec = get_method("theilsen")
    assert spec.needs_bounds and spec.max_columns == 2 and spec.private
    assert spec.proof == "docs/proofs/theilsen.md"
    assert spec.auto_rank is None  # auto's rule (owned by the pipeline's rule) decides when to use it


# -- budget and inference -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("n, epsilon, inference, steps", [(1000, 1.0, True, 5), (1000, 1.0, False, 2),
                                                           (100, 1.0, True, 5), (40, 1.0, True, 2)])
def test_pure_epsilon_budget_is_spent_exactly(n, epsilon, inference, steps):
    res = _fit(_frame(n), epsilon, inference=inference)
    assert res.privacy.epsilon_spent == pytest.approx(epsilon, rel=1e-12)
    assert res.privacy.delta_spent == 0.0
    assert len(method_steps(res.privacy.steps)) == steps  # (and the missing-value screen's Laplace step)
    assert all(s.mechanism in ("exponential", "laplace") for s in res.privacy.steps)


def test_intervals_are_reported_above_the_threshold_and_explained_below():
    res = _fit(_frame(1000))
    ci = res.conf_int()
    assert np.all(np.isfinite(ci.to_numpy())) and np.all(ci[0] < ci[1])
    assert np.all(np.isfinite(res.bse)) and np.all(np.isfinite(res.pvalues))
    small = _fit(_frame(40))  # n * epsilon = 40 * 0.98 < INTERVAL_MIN_N_EPSILON (the screen's share set aside)
    assert theilsen.INTERVAL_MIN_N_EPSILON > 40
    assert not small.inference_available
    assert "n * epsilon = 39.2 (epsilon after the missing-value screen's share) is below" in small.inference_method
    off = _fit(_frame(1000), inference=False)
    assert not off.inference_available and "inference=False" in off.inference_method


def test_interval_reported_is_a_public_rule():
    assert theilsen.interval_reported(1000, 0.25) and theilsen.interval_reported(50, 1.0)
    assert not theilsen.interval_reported(49, 1.0) and not theilsen.interval_reported(1000, 0.049)


# -- grids and pairing --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("grid", [theilsen.slope_grid(0.7), theilsen.radius_grid(3.0, (-4.0, 3.0), 0.6),
                                  theilsen.linear_grid(-2.5, 3.1, 4096)], ids=["slope", "radius", "linear"])
def test_the_arithmetic_cell_index_is_searchsorted(grid):
    rng = np.random.default_rng(0)
    v = np.concatenate([rng.standard_cauchy(50_000) * 10.0 ** rng.uniform(-6, 5, 50_000), grid.edges,
                        np.nextafter(grid.edges, -np.inf), np.nextafter(grid.edges, np.inf),
                        [0.0, -0.0, np.inf, -np.inf, 1e308, -1e308, 5e-324, np.nan]])
    assert np.array_equal(grid.index(v), np.searchsorted(grid.edges, v, side="right"))
    assert grid.values.shape == grid.log_prior.shape == (grid.cells,)
    assert np.all(np.isfinite(grid.log_prior))


def _sim_design(n: int, beta: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """x on a width min(1, 0.6 / beta) of the unit range, y = 0.5 + beta (x - centre) + normal error of sd
    0.15 beta width, clipped to the unit box (box diagonal S = 1)."""
    rng = np.random.default_rng(seed)
    width = min(1.0, 0.6 / beta)
    centre = rng.uniform(width / 2, 1 - width / 2)
    x = rng.uniform(centre - width / 2, centre + width / 2, n)
    y = 0.5 + beta * (x - centre) + 0.15 * beta * width * rng.standard_normal(n)
    return np.clip(x, 0.0, 1.0), np.clip(y, 0.0, 1.0)


def _slope_release_relative_error(x: np.ndarray, y: np.ndarray, epsilon: float, k: int = 16):
    """The exact distribution of the private slope median's release on these rows (the exponential mechanism's
    probabilities over the slope grid, fixed public pairing) and each cell's relative distance from the rows'
    least-squares slope."""
    grid = theilsen.slope_grid(1.0)
    pairing = theilsen.WindowedPairing.draw(len(x), 4096, k, np.random.default_rng(0))
    counts = theilsen.SlopePass(pairing, grid, 0, (0.0, 1.0), (0.0, 1.0))(x[:, None], y, 0)
    logits = grid.log_prior + epsilon * theilsen.cell_scores(counts.counts, 0.5 * pairing.pairs,
                                                             0.5 * counts.ties) / (2.0 * k)
    probs = np.exp(logits - logits.max())
    ols = np.polyfit(x, y, 1)[0]
    return probs / probs.sum(), np.abs(grid.values - ols) / abs(ols)


def test_a_slope_of_ten_box_diagonals_is_still_found():
    """x on 6% of its declared range, slope 10 S, n = 50 at epsilon = 3: the release is within 25% of least
    squares with probability above 0.75.  Over 300 data seeds it was 0.81-0.98 (false-failure rate below 1/300).
    A guard for changes of the slope's grid or base measure, which cost most where slopes are large against the
    box diagonal (benchmarks/results/theilsen_tail.md)."""
    probs, rel = _slope_release_relative_error(*_sim_design(50, 10.0, 0), 0.61 * 3.0)
    assert probs[rel <= 0.25].sum() > 0.75


@pytest.mark.parametrize("n, window, k", [(37, 16, 3), (1000, 64, 16), (5, 4096, 2)])
def test_every_row_is_in_at_most_k_pairs_inside_its_window(n, window, k):
    pairing = theilsen.WindowedPairing.draw(n, window, k, np.random.default_rng(1))
    seen = np.zeros(n, dtype=int)
    total = 0
    for j in range(pairing.windows):
        first, second = pairing.local_pairs(j)
        start, stop = pairing.start(j), pairing.start(j + 1)
        assert np.all(first != second) and np.all((first < stop - start) & (second < stop - start))
        np.add.at(seen, start + np.concatenate([first, second]), 1)
        assert all(pairing.window_of(i) == j for i in range(start, stop))
        total += first.size
    assert seen.max() <= k and total == pairing.pairs


def test_cell_scores_change_by_at_most_the_count_change():
    rng = np.random.default_rng(2)
    counts = rng.integers(0, 5, 200)
    other = counts.copy()
    other[[10, 150]] += [-3, 3]  # three slopes move from cell 10 to cell 150 (k = 3)
    diff = theilsen.cell_scores(counts, 250.5, 4.0) - theilsen.cell_scores(other, 250.5, 4.0)
    assert np.max(np.abs(diff)) <= 3.0


# -- chunks -------------------------------------------------------------------------------------------------------

def _same(a, b) -> None:
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())
    np.testing.assert_allclose(a.conf_int().to_numpy(), b.conf_int().to_numpy(), rtol=1e-9)
    assert a.privacy.epsilon_spent == b.privacy.epsilon_spent


def test_chunked_fit_equals_in_memory_fit(tmp_path):
    """The counts are integers, so the medians agree exactly; the interval uses a floating-point sum of x (its
    release is the same up to the order of additions)."""
    df = _frame(3000, seed=4)
    reference = _fit(df, window_rows=256)
    df.iloc[:1234].to_csv(tmp_path / "a.csv", index=False)
    df.iloc[1234:].to_csv(tmp_path / "b.csv", index=False)
    for data in (DataFrameSource(df, chunksize=1000), DataFrameSource(df, chunksize=97),
                 CSVSource([str(tmp_path / "a.csv"), str(tmp_path / "b.csv")], chunksize=500)):
        _same(reference, _fit(data, window_rows=256))


@pytest.mark.parametrize("chunk_rows", [1, 7, 255, 256, 257, 1000])
def test_slope_counts_are_the_same_whatever_the_partition(chunk_rows):
    X, y = _unit_rows(1000, seed=5)
    fits = [theilsen.SPEC.fit_arrays(X, y, ledger=PrivacyLedger(1.0, 0.0), rng=np.random.default_rng(3),
                                     bounds=UNIT, intercept_index=0, chunk_rows=rows, window_rows=256)
            for rows in (None, chunk_rows)]
    np.testing.assert_array_equal(fits[0].params, fits[1].params)
    # the counts are integers and agree exactly; the mean of x is a floating-point sum (order of additions)
    exact = [{k: v for k, v in f.diagnostics.items() if k != "x_mean"} for f in fits]
    assert exact[0] == exact[1]
    assert fits[0].diagnostics["x_mean"] == pytest.approx(fits[1].diagnostics["x_mean"], rel=1e-12)


def test_dask_fit_equals_in_memory_fit():
    dd = pytest.importorskip("dask.dataframe")
    df = _frame(2000, seed=6)
    _same(_fit(df, window_rows=128), _fit(dd.from_pandas(df, npartitions=5), window_rows=128))


# -- one extreme row ----------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\bnan\b|\binf\b", re.IGNORECASE)


def _outcome(df: pd.DataFrame, chunked: bool):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = _fit(DataFrameSource(df, chunksize=300) if chunked else df, 4.0, window_rows=512)
    text = re.sub(r"\s+", " ", _NUMBER.sub("#", str(res.summary())))
    return (frozenset(str(w.message) for w in caught), text, res.privacy.epsilon_spent,
            bool(np.all(np.isfinite(res.params))), bool(np.all(np.isfinite(res.conf_int()))))


@pytest.mark.parametrize("chunked", [False, True], ids=["memory", "chunks"])
def test_one_extreme_row_changes_nothing_but_noise(chunked):
    """Neighbours that differ in one row with extreme finite values: the same warnings, report words and spend
    (deterministic: fixed data and seeds)."""
    base_df = _frame(2000, seed=8)
    base = _outcome(base_df, chunked)
    assert base[3] and base[4]
    for values in ({"x": 1e300}, {"x": -1e300, "y": 1e300}, {"x": 5e-324}, {"y": -np.finfo(float).max}):
        other = base_df.copy()
        for column, value in values.items():
            other.loc[611, column] = value
        assert _outcome(other, chunked) == base, values


# -- accuracy -----------------------------------------------------------------------------------------------------

def test_slope_and_intercept_are_accurate_at_moderate_n():
    """n = 4000, epsilon = 3: the slope's error sd is about 0.02 (sampling and privacy), so a miss of 0.1 is a
    5-sd event (false-failure rate below 1e-6); the intercept's error sd is about 0.03."""
    res = _fit(_frame(4000, seed=9), 3.0)
    assert abs(res.params["x"] - 0.5) < 0.1
    assert abs(res.params["Intercept"] - 1.0) < 0.15
    lo, hi = res.conf_int().loc["x"]
    assert lo < res.params["x"] < hi and hi - lo < 0.3


def test_intervals_cover_at_small_n_epsilon():
    """40 fresh data sets at n = 100, epsilon = 1 (n * epsilon = 100: the simulated bootstrap of the exponential
    mechanisms): at least 34 slope intervals and 34 intercept intervals must cover the truth.  With a true
    coverage of 0.95 each count is Binomial(40, 0.95) and P(count < 34) is 0.34%, so the false-failure rate is
    below 0.7% (0.95 is the nominal level; the simulations of benchmarks/theilsen.py cover more there)."""
    covers = np.zeros(2, dtype=int)
    for seed in range(40):
        df = _frame(100, seed=2000 + seed)
        res = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, method="theilsen", bounds=BOUNDS, random_state=seed,
                             bootstrap=500)
        ci = res.conf_int()
        covers += (ci[0] <= [1.0, 0.5]) & ([1.0, 0.5] <= ci[1])
    assert covers.min() >= 34, covers


def test_intervals_are_informative_at_n_epsilon_200():
    """20 fresh data sets at n = 200, epsilon = 1 (the simulated bootstrap fed by the noisy distance histograms):
    the median width of the slope's interval must be below 5 (the OLS interval is about 0.28 wide there, so 18x
    it; the simulations of benchmarks/theilsen.py give a median of 3-4x with 90% of fits below 7x, while the
    bootstrap fed by the quarter-radius gave over 1,000x).  The median exceeds the bound only if 10 of the 20
    fits do, each with probability below 0.05: a false-failure rate below 1e-7."""
    widths = []
    for seed in range(20):
        df = _frame(200, seed=3000 + seed)
        res = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, method="theilsen", bounds=BOUNDS, random_state=seed,
                             bootstrap=500)
        lo, hi = res.conf_int().loc["x"]
        widths.append(hi - lo)
    assert np.median(widths) < 5.0, widths


def test_the_privacy_error_reads_the_simulated_release():
    """At n * epsilon < 250 the error block's privacy part comes from the simulated mechanisms (its source says
    so) and is finite and positive; deterministic (fixed data and seed)."""
    res = _fit(_frame(150), 1.0, bootstrap=500)
    errors = res.error_bounds.coefficients
    assert "value profiles the released histograms make plausible" in errors.privacy_source
    assert np.all(np.isfinite(errors.privacy)) and np.all(errors.privacy > 0)


def test_the_privacy_error_tracks_the_measured_one_at_small_n_epsilon():
    """Issue 18's band at n * epsilon = 150 (n = 150, epsilon = 1: the simulated model): over 30 fresh data sets
    and noise seeds, the root mean square of the error block's predicted privacy sd of the slope is within a
    factor of 3 of the measured root mean square of b - b_OLS on the same data.  Deterministic (fixed data and
    seeds): these seeds give 0.91, four other blocks of 30 seeds 0.98-1.37; the flat-prior moment it replaced
    over-predicted up to 31 times at n * epsilon = 100 in benchmarks/theilsen.py's simulations."""
    predicted, errors = [], []
    for seed in range(5000, 5030):
        df = _frame(150, seed=seed)
        xc = df["x"] - df["x"].mean()
        b_ols = float(xc @ (df["y"] - df["y"].mean()) / (xc @ xc))
        res = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, method="theilsen", bounds=BOUNDS, random_state=seed,
                             bootstrap=200)
        errors.append(res.params["x"] - b_ols)
        predicted.append(float(res.error_bounds.coefficients.privacy[list(res.params.index).index("x")]))
    ratio = np.sqrt(np.mean(np.square(predicted)) / np.mean(np.square(errors)))
    assert 1 / 3 <= ratio <= 3, ratio


def test_the_moment_of_a_profile_mixture_is_exact_and_deterministic():
    """The slope's moment is computed without random draws: two fits with the same seed agree, and the moment of
    a discrete distribution is half its central 68% squared (deterministic)."""
    values = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    cdf = np.array([0.1, 0.2, 0.8, 0.9, 1.0])
    assert theilsen.quantile_moment(cdf, values) == 1.0
    a, b = (_fit(_frame(150), 1.0, bootstrap=200) for _ in range(2))
    assert np.array_equal(a.error_bounds.coefficients.privacy, b.error_bounds.coefficients.privacy)
    assert np.array_equal(a.conf_int().to_numpy(), b.conf_int().to_numpy())


def _two_level(n: int, share: float, seed: int) -> pd.DataFrame:
    """A 0/1 group g (a share ``share`` at 1) and y = 1 + 0.5 g + a standard normal error."""
    rng = np.random.default_rng(seed)
    g = (rng.uniform(size=n) < share).astype(int)
    return pd.DataFrame({"g": g, "y": 1.0 + 0.5 * g + rng.normal(size=n)})


TWO_LEVEL = "y ~ C(g, levels=[0, 1])"
TWO_LEVEL_BOUNDS = {"y": (-5.0, 7.0)}


def _fit_two_level(df: pd.DataFrame, epsilon: float, seed: int):
    return dpstats.dp_ols(TWO_LEVEL, df, epsilon, 1e-6, method="theilsen", bounds=TWO_LEVEL_BOUNDS,
                          random_state=seed, bootstrap=100)


def test_column_values_come_from_the_contrast_matrices():
    """FitContext.column_values: the entries of each factor's public contrast matrix (products for an
    interaction), None for a numerical column, the same for data sets with different values (deterministic)."""
    import patsy

    from dpstats.bounds import column_values

    frame = pd.DataFrame({"g": [0, 1, 0], "h": ["a", "b", "c"], "x": [0.5, 2.0, 3.0]})
    info = patsy.dmatrix("C(g, levels=[0, 1]) + C(h, Sum, levels=['a', 'b', 'c']) + x + C(g, levels=[0, 1]):x",
                         frame).design_info
    assert column_values(info) == ((1.0,), (0.0, 1.0), (-1.0, 0.0, 1.0), (-1.0, 0.0, 1.0), None, None)
    both = patsy.dmatrix("C(g, levels=[0, 1]):C(h, Sum, levels=['a', 'b', 'c'])", frame).design_info
    assert set(column_values(both)[1:]) <= {(-1.0, 0.0, 1.0), (0.0, 1.0)}

    seen = []

    def spy(ctx, x_col, x_range):
        seen.append(ctx.column_values)
        return theilsen_two_values(ctx, x_col, x_range)

    theilsen_two_values = theilsen.two_values
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(theilsen, "two_values", spy)
        _fit_two_level(_two_level(400, 0.5, 1), 1.0, 3)
        _fit_two_level(pd.DataFrame({"g": np.zeros(400, dtype=int), "y": np.linspace(-4.0, 6.0, 400)}), 1.0, 3)
    # the public rescaling maps the dummy's range [0, 1] to [-1, 1], in both fits whatever the data hold
    assert seen == [((1.0,), (-1.0, 1.0))] * 2


def test_the_two_valued_error_path_is_post_processing(monkeypatch):
    """With and without the two-valued error path (same data and seed), the estimates, standard errors,
    intervals and privacy steps are bit-identical; only the error block's privacy part and its source differ
    (deterministic)."""
    df = _two_level(2000, 0.2, 11)
    after = _fit_two_level(df, 1.0, 5)
    monkeypatch.setattr(theilsen.TwoValueProfile, "from_released", staticmethod(lambda *args: None))
    before = _fit_two_level(df, 1.0, 5)
    assert np.array_equal(after.params.to_numpy(), before.params.to_numpy())
    assert np.array_equal(after.bse.to_numpy(), before.bse.to_numpy())
    assert np.array_equal(after.conf_int().to_numpy(), before.conf_int().to_numpy())
    assert after.privacy.steps == before.privacy.steps
    assert "two-valued predictor" in after.error_bounds.coefficients.privacy_source
    assert "two-valued" not in before.error_bounds.coefficients.privacy_source
    assert not np.array_equal(after.error_bounds.coefficients.privacy, before.error_bounds.coefficients.privacy)


def test_a_numeric_0_1_predictor_and_a_0_1_response_keep_the_linearised_block(monkeypatch):
    """The two-valued path needs public values (a factor, or an integer column declared between consecutive
    integers; a float column's values are not public) and a residual spread that a normal profile can fit: a 0/1
    response puts a quarter of the residuals on one value, and its block stays the linearised one
    (deterministic)."""
    df = _two_level(2000, 0.2, 11)
    numeric = dpstats.dp_ols("y ~ g", df.assign(g=df["g"].astype(float)), 1.0, 1e-6, method="theilsen",
                             bounds={"g": (0.0, 1.0), **TWO_LEVEL_BOUNDS}, random_state=5, bootstrap=100)
    assert "two-valued" not in numeric.error_bounds.coefficients.privacy_source
    integer = dpstats.dp_ols("y ~ g", df.assign(g=df["g"].astype(int)), 1.0, 1e-6, method="theilsen",
                             bounds={"g": (0.0, 1.0), **TWO_LEVEL_BOUNDS}, random_state=5, bootstrap=100)
    assert "two-valued" in integer.error_bounds.coefficients.privacy_source
    rng = np.random.default_rng(2)
    g = (rng.uniform(size=2000) < 0.3).astype(int)
    binary = pd.DataFrame({"g": g, "y": (rng.uniform(size=2000) < 0.3 + 0.3 * g).astype(float)})
    res = dpstats.dp_ols(TWO_LEVEL, binary, 1.0, 1e-6, method="theilsen", bounds={"y": (0.0, 1.0)},
                         random_state=5, bootstrap=100)
    assert "two-valued" not in res.error_bounds.coefficients.privacy_source


def test_the_privacy_error_of_a_two_level_factor_tracks_the_measured_one(monkeypatch):
    """Issue 18's band for a two-level factor at n * epsilon = 3000 (n = 3000, epsilon = 1, a share 0.2 at 1):
    over 20 fresh data sets and noise seeds, the root mean square of the error block's predicted privacy error of
    the slope and of the intercept is within a factor of 3 of the measured root mean square of the released value
    minus the non-private Theil-Sen value on the same pairs (the median of the same k-matching's pair slopes; the
    median residual at it).  Deterministic (fixed data and seeds): these seeds give 0.82 (slope) and 1.32
    (intercept).  False-failure rate over seeds: none of 40 disjoint blocks of 20 seeds (10000-10799) fell outside
    the band (ratios 0.62-1.46 for the slope, 0.46-1.70 for the intercept), so below 1 in 40."""
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    count_window = theilsen.SlopePass._count_window

    def recording(self, acc, j, xs, ys):
        first, second = self.pairing.local_pairs(j)
        pairs.append((self.pairing.start(j) + first, self.pairing.start(j) + second))
        count_window(self, acc, j, xs, ys)

    monkeypatch.setattr(theilsen.SlopePass, "_count_window", recording)
    predicted, measured = [], []
    for seed in range(7000, 7020):
        df = _two_level(3000, 0.2, seed)
        pairs.clear()
        res = _fit_two_level(df, 1.0, seed)
        x, y = df["g"].to_numpy(float), np.clip(df["y"].to_numpy(float), *TWO_LEVEL_BOUNDS["y"])
        first, second = (np.concatenate([p[i] for p in pairs]) for i in (0, 1))
        unequal = x[first] != x[second]
        b = float(np.median((y[second] - y[first])[unequal] / (x[second] - x[first])[unequal]))
        measured.append(res.params.to_numpy() - [np.median(y - b * x), b])
        predicted.append(res.error_bounds.coefficients.privacy)
    ratio = np.sqrt(np.mean(np.square(predicted), axis=0) / np.mean(np.square(measured), axis=0))
    assert np.all((1 / 3 <= ratio) & (ratio <= 3)), ratio


def test_the_distance_histogram_moves_by_at_most_2k():
    """The released histogram's L1 sensitivity: on the worst-case audit pair (every count below a cell moves by
    k) the distance counts, ties bin included, differ by at most 2k in L1 (deterministic)."""
    for k in (4, 16):
        before, after = (_distance_counts(data, k) for data in _audit_pair(20))
        assert 0 < np.abs(before - after).sum() <= 2 * k


@pytest.mark.slow
def test_intervals_cover_the_true_slope():
    """120 fresh data sets at n = 1000, epsilon = 1 (n * epsilon = 1000, where the simulations of BENCHMARKS.md
    cover 92-97%): at least 100 covers must hold.  With a true coverage of 0.93 the count is Binomial(120, 0.93),
    and P(count < 100) is about 0.4%."""
    covers = 0
    for seed in range(120):
        df = _frame(1000, seed=1000 + seed)
        res = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, method="theilsen", bounds=BOUNDS, random_state=seed)
        lo, hi = res.conf_int().loc["x"]
        covers += lo <= 0.5 <= hi
    assert covers >= 100


# -- black-box privacy audit --------------------------------------------------------------------------------------

AUDIT_EPSILON = 2.0


def _audit_pair(n: int) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Worst case for the slope release: row 0 has the smallest x; at y = 1 all its pair slopes lie below every
    other slope, at y = -1 above, so every count below a cell moves by the full k between the neighbours (and
    the residual count by 1)."""
    x = np.linspace(-1.0, 1.0, n)
    X = np.column_stack([np.ones(n), x])
    y = 0.3 * np.sin(7.0 * x)
    low, high = y.copy(), y.copy()
    low[0], high[0] = 1.0, -1.0
    return (X, low), (X, high)


def _audit_run(matchings: int):
    def run(data, rng):
        X, y = data
        ledger = PrivacyLedger(AUDIT_EPSILON, 0.0)
        return theilsen.SPEC.fit_arrays(X, y, ledger=ledger, rng=rng, bounds=UNIT, intercept_index=0,
                                        matchings=matchings, inference=False).params
    return run


def _audit(runs: int, seed: int, matchings: int = 16):
    d, d_prime = _audit_pair(20)
    return audit_mechanism(_audit_run(matchings), d, d_prime, runs=runs, alpha=1e-3, seed=seed,
                           statistic=lambda params: float(params[1]))


@pytest.mark.parametrize("k", [4, 16])
def test_the_audit_pair_moves_the_slope_counts_by_k(k):
    (X, y), (_, y2) = _audit_pair(20)
    pairing = theilsen.WindowedPairing.draw(20, 4096, k, np.random.default_rng(0))
    grid = theilsen.slope_grid(1.0)
    pas = theilsen.SlopePass(pairing, grid, 1, (-1.0, 1.0), (-1.0, 1.0))
    a, b = pas(X, y, 0), pas(X, y2, 0)
    moved = np.cumsum(a.counts) - np.cumsum(b.counts)
    assert np.max(np.abs(moved)) == k


def test_audit_theilsen():
    """False-failure rate alpha = 1e-3 for the upper assertion.  The slope release carries 0.75 epsilon = 1.5
    and the non-monotone exponential mechanism shows at most half of it on this pair; the lower bound was
    0.16-0.32 over seeds 31-34 (k = 16), so the sanity check (> 0) is met unless the pair stops moving the
    output."""
    res = _audit(1500, seed=31)
    assert 0.0 < res.epsilon_lower_bound <= AUDIT_EPSILON


def test_audit_flags_a_theilsen_that_ignores_the_k_matchings(monkeypatch):
    """A bug that charges the slope counts sensitivity 1 instead of k = 16 (16x too little noise) is caught: the
    audit's lower bound exceeds the claim (it was 3.3-3.7 over seeds 31-34; fixed seed)."""
    original = theilsen.private_cell

    def broken(grid, counts, target, *, below, sensitivity, epsilon, rng, ledger, name):
        return original(grid, counts, target, below=below, sensitivity=1.0, epsilon=epsilon, rng=rng,
                        ledger=ledger, name=name)

    monkeypatch.setattr(theilsen, "private_cell", broken)
    res = _audit(1500, seed=32)
    assert res.epsilon_lower_bound > AUDIT_EPSILON


#: the public centre of the audited distance histogram (a released median in a fit): with it the audit pair's
#: moved slopes land in other distance bins
AUDIT_CENTRE = 0.5


def _distance_counts(data, k: int) -> np.ndarray:
    X, y = data
    pairing = theilsen.WindowedPairing.draw(len(y), 4096, k, np.random.default_rng(0))
    grid = theilsen.slope_grid(1.0)
    counts = theilsen.SlopePass(pairing, grid, 1, (-1.0, 1.0), (-1.0, 1.0))(X, y, 0)
    return theilsen.distance_counts(grid, counts.counts, AUDIT_CENTRE, theilsen.distance_edges(1.0, (-4.0, 3.0)),
                                    counts.ties)


def _histogram_run(k: int, sensitivity: float):
    """One release of the noisy distance histogram (the fit's spread_release at n * epsilon < 250) with the whole
    audit budget, on a fixed public pairing; the bin that moves most between the audit pair is audited."""
    def run(data, rng):
        X, y = data
        pairing = theilsen.WindowedPairing.draw(len(y), 4096, k, np.random.default_rng(0))
        grid = theilsen.slope_grid(1.0)
        counts = theilsen.SlopePass(pairing, grid, 1, (-1.0, 1.0), (-1.0, 1.0))(X, y, 0)
        release = theilsen.spread_release(
            grid, counts.counts, AUDIT_CENTRE, 0, count=float(pairing.pairs), sensitivity=sensitivity, epsilon=1.0,
            epsilon_spread=AUDIT_EPSILON, rank_variance=0.0, simulate=True, radii=(1.0, (-4.0, 3.0), 0.2),
            ties=counts.ties, rng=rng, ledger=PrivacyLedger(AUDIT_EPSILON, 0.0), what="pair slopes",
            profile_prior=theilsen.slope_profile_prior(None, 1.0))
        return release.histogram
    return run


def _histogram_audit(runs: int, seed: int, sensitivity: float, k: int = 16):
    d, d_prime = _audit_pair(20)
    moved = int(np.argmax(np.abs(_distance_counts(d, k) - _distance_counts(d_prime, k))))
    return audit_mechanism(_histogram_run(k, sensitivity), d, d_prime, runs=runs, alpha=1e-3, seed=seed,
                           statistic=lambda hist: float(hist[moved]))


def test_audit_the_distance_histogram():
    """False-failure rate alpha = 1e-3 for the upper assertion.  The audited bin moves by at most k of the 2k
    the noise is calibrated to, so about half of the claimed epsilon can show; the sanity check (> 0) fails only
    if the pair stops moving that bin."""
    res = _histogram_audit(1500, seed=51, sensitivity=16.0)
    assert 0.0 < res.epsilon_lower_bound <= AUDIT_EPSILON


def test_audit_flags_a_histogram_that_ignores_the_k_matchings():
    """A bug that calibrates the histogram to one pair per row (sensitivity 1 instead of k = 16: 16x too little
    noise) is caught: the audit's lower bound exceeds the claim (fixed seed)."""
    res = _histogram_audit(1500, seed=52, sensitivity=1.0)
    assert res.epsilon_lower_bound > AUDIT_EPSILON


@pytest.mark.slow
def test_audit_the_distance_histogram_slow():
    """False-failure rate alpha = 1e-3 (10x the runs of the fast audit)."""
    res = _histogram_audit(15_000, seed=53, sensitivity=16.0)
    assert 0.0 < res.epsilon_lower_bound <= AUDIT_EPSILON


@pytest.mark.slow
@pytest.mark.parametrize("matchings", [1, 4, 16])
def test_audit_theilsen_slow(matchings):
    """False-failure rate alpha = 1e-3 per number of matchings (10x the runs of the fast audit)."""
    res = _audit(15_000, seed=40 + matchings, matchings=matchings)
    assert 0.0 < res.epsilon_lower_bound <= AUDIT_EPSILON


# -- a two-valued predictor: the slope grid ends at the largest possible slope ------------------------------------

def test_the_slope_grid_of_a_two_valued_predictor_ends_at_its_largest_slope():
    """A pair with dx != 0 has |dx| = |x1 - x0| and |dy| <= the response's range, so its slope is at most
    (y range) / |x1 - x0| = S (x range) / |x1 - x0| (S the box diagonal): the grid's top decade is
    log10((x range) / |x1 - x0|); a column whose values are not public keeps the general grid."""
    assert theilsen.slope_decades(None, (-1.0, 1.0)) == theilsen.SLOPE_DECADES
    assert theilsen.slope_decades((-1.0, 1.0), (-1.0, 1.0)) == (theilsen.SLOPE_DECADES[0], 0.0)
    assert theilsen.slope_decades((0.0, 0.5), (0.0, 2.0))[1] == pytest.approx(np.log10(4.0))
    grid = theilsen.slope_grid(3.0, theilsen.slope_decades((-1.0, 1.0), (-1.0, 1.0)))
    assert grid.edges[-1] == pytest.approx(3.0) and grid.edges[0] == pytest.approx(-3.0)


def test_a_two_level_factor_at_small_n_epsilon_gets_a_possible_slope_and_a_covering_interval():
    """n = 120, epsilon = 0.5 (n epsilon = 60, the smallest with an interval): a 0/1 dummy's slope is at most the
    response's range (12) in absolute value, and every release over 40 data sets is; the intervals (percentile
    orientation at the grid's ends) cover the OLS slope in at least 36 of the 40 and are at most 100 OLS widths
    wide.  With the general grid (up to 1000 box diagonals) the median error was 217 times the slope and the
    intervals about 17,800 OLS widths (benchmarks/theilsen_two_level.py).  Deterministic (fixed data and seeds);
    in a simulation of 100 data sets per setting the coverage was 1.00 here and 0.97-1.00 from n epsilon = 60 to
    250, so the chance that 40 fresh seeds miss more than 4 times is below 1%."""
    import statsmodels.formula.api as smf

    covers, widths = 0, []
    for seed in range(40):
        df = _two_level(120, 0.5, 200 + seed)
        df["y"] = df["y"].clip(*TWO_LEVEL_BOUNDS["y"])
        ols = smf.ols(TWO_LEVEL, df).fit()
        b_ols, se = float(ols.params.iloc[1]), float(ols.bse.iloc[1])
        res = _fit_two_level(df, 0.5, seed)
        b = float(res.params.iloc[1])
        assert abs(b) <= TWO_LEVEL_BOUNDS["y"][1] - TWO_LEVEL_BOUNDS["y"][0] + 1e-9
        lo, hi = res.conf_int().iloc[1]
        covers += lo <= b_ols <= hi
        widths.append((hi - lo) / (2 * 1.96 * se))
    assert covers >= 36
    assert np.median(widths) <= 100.0


def _two_level_audit_pair(n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Worst case for a two-level factor's slope release: rows 0-3 are the upper group, so most of row 0's k pairs
    have dx != 0 and the non-tied pairs are few (the median among them moves far); at y = 7 (the top of the
    response's range) row 0's pair slopes are the largest possible, at y = -5 the smallest, so every count below a
    cell of the shortened grid between them moves by row 0's non-tied pairs."""
    g = (np.arange(n) < 4).astype(int)
    y = 1.0 + 0.3 * np.sin(7.0 * np.arange(n))
    low, high = pd.DataFrame({"g": g, "y": y}), pd.DataFrame({"g": g, "y": y})
    low.loc[0, "y"], high.loc[0, "y"] = TWO_LEVEL_BOUNDS["y"]
    return low, high


def _two_level_audit(runs: int, seed: int):
    def run(frame, rng):
        return dpstats.dp_ols(TWO_LEVEL, frame, AUDIT_EPSILON, 1e-6, method="theilsen", bounds=TWO_LEVEL_BOUNDS,
                              random_state=rng, inference=False).params.iloc[1]

    d, d_prime = _two_level_audit_pair(20)
    return audit_mechanism(run, d, d_prime, runs=runs, alpha=1e-3, seed=seed, statistic=float)


def test_audit_theilsen_on_a_two_level_factor():
    """The whole fit through the formula (the factor's public values shorten the slope grid), point estimate only,
    at epsilon = 2 on the worst-case pair above.  False-failure rate alpha = 1e-3 for the upper assertion; the
    lower bound is a sanity check that the pair moves the release (0.19-0.23 over seeds 61-64)."""
    res = _two_level_audit(1500, seed=61)
    assert 0.0 < res.epsilon_lower_bound <= AUDIT_EPSILON


@pytest.mark.slow
def test_audit_theilsen_on_a_two_level_factor_slow():
    """False-failure rate alpha = 1e-3 (10x the runs of the fast audit)."""
    res = _two_level_audit(15_000, seed=65)
    assert 0.0 < res.epsilon_lower_bound <= AUDIT_EPSILON


def test_a_two_level_factor_fit_says_what_its_slope_estimates():
    """The slope of a two-level factor is a median of group differences, not the difference of means: the fit
    says so (a public fact: the predictor is a two-level factor, or an integer column declared (0, 1)), and a
    float column's fit does not."""
    df = _two_level(300, 0.5, 3)
    assert any("Hodges-Lehmann" in note for note in _fit_two_level(df, 1.0, 1).privacy.notes)
    fits = [dpstats.dp_ols("y ~ g", df.assign(g=df["g"].astype(kind)), 1.0, 1e-6, method="theilsen",
                           bounds={"g": (0.0, 1.0), **TWO_LEVEL_BOUNDS}, random_state=1, bootstrap=100)
            for kind in (float, int)]
    assert [any("Hodges-Lehmann" in note for note in fit.privacy.notes) for fit in fits] == [False, True]


# -- the slope grid's resolution (linearised regime) ----------------------------------------------------------------

def test_slope_grid_is_finer_where_the_linearised_model_runs():
    """1% cells where the bootstrap simulates the mechanisms on the grid; 1 + 1 / sqrt(n) from n * epsilon = 250
    on, between 1 + FINE_GRID_FLOOR and GRID_RATIO (a public function of n)."""
    assert theilsen.slope_grid_ratio(100_000, simulate=True) == theilsen.GRID_RATIO
    assert theilsen.slope_grid_ratio(50, simulate=False) == theilsen.GRID_RATIO
    assert theilsen.slope_grid_ratio(10_000, simulate=False) == theilsen.GRID_RATIO
    assert theilsen.slope_grid_ratio(1_000_000, simulate=False) == pytest.approx(1.001)
    assert theilsen.slope_grid_ratio(10**12, simulate=False) == pytest.approx(1.0 + theilsen.FINE_GRID_FLOOR)
    g = theilsen.slope_grid(1.0, ratio=1.001).edges
    positive = g[g > 0]
    assert np.max(positive[1:] / positive[:-1]) <= 1.001 + 1e-12


def test_cell_width_of_inner_and_end_cells():
    grid = theilsen.linear_grid(0.0, 1.0, 4)  # edges 0.25, 0.5, 0.75 inside; two unbounded end cells
    assert [grid.width(c) for c in range(grid.cells)] == pytest.approx([0.25] * 4)


def test_large_n_slope_interval_covers_the_true_slope():
    """At n = 10^5 the slope's standard error (0.003 here) was a third of a 1% grid cell, and the intervals
    covered the true slope in 26 of 40 data sets at epsilon 1; with the finer grid and the cell's uniform error
    in the draws, 39 of 40.  Threshold 34 of 40: a 95% interval misses 7 or more of 40 with probability 0.003."""
    covered = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        x = rng.standard_normal(100_000)
        y = 1.0 + x + rng.standard_normal(100_000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dpstats.dp_ols_arrays(x[:, None], y, 1.0, 1e-6, method="theilsen", x_bounds=[(-6.0, 6.0)],
                                        y_bounds=(-27.0, 27.0), intercept=True, random_state=seed)
        lo, hi = res.conf_int().to_numpy()[1]
        covered += bool(lo <= 1.0 <= hi)
    assert covered >= 34


def test_the_epsilon_an_interval_needs_is_printed_rounded_up():
    """n = 111: intervals need n * epsilon >= 50, epsilon >= 0.45045 (no screen on integer columns).  The fit's
    reason printed "epsilon >= 0.45", and a fit at 0.45 still has none; the plan's status the same.  Deterministic
    in what is checked (the message is built from n and epsilon alone)."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x": rng.integers(50, 101, 111), "y": rng.integers(0, 201, 111)})
    bounds = {"x": (50, 100), "y": (0, 200)}
    fit = dpstats.dp_ols("y ~ x", data, 0.45, 1e-6, bounds=bounds, method="theilsen", random_state=0)
    assert "or epsilon >= 0.451 at this n)" in fit.inference_reason
    plan = dpstats.plan(formula="y ~ x", bounds=bounds, n=111, epsilon=0.45, delta=1e-6, method="theilsen",
                        dtypes={"x": "int64", "y": "int64"})
    assert "from epsilon >= 0.451 at this n" in str(plan)


def test_standard_errors_match_the_interval_when_a_few_replicates_are_far_out() -> None:
    """A few of Theil-Sen's bootstrap replicates lie far out (the exponential mechanism's unlikely picks), so their
    plain standard deviation (here 5.9 against a central spread of 0.74) gave a standard error eight times the basic
    interval's half-width over 1.96, and a z* near 0 beside an interval that excluded 0 (s52 new-user check, The
    Effect's avocado demand curve: std err 6.13 beside [-1.96, -0.21]). The standard error is now the replicates'
    central 95% over 2 x 1.96, and z* is read against it. Deterministic (seed 0)."""
    from dpstats.methods.spec import central_covariance

    rng = np.random.default_rng(5)
    price = rng.uniform(0.67, 1.78, 169)
    volume = np.exp(15.5 - 0.7 * np.log(price) + rng.normal(0, 0.15, 169))
    df = pd.DataFrame({"price": price, "volume": volume})
    res = dpstats.dp_ols("np.log(volume) ~ np.log(price)", df, 1.0, 1e-6,
                         bounds={"price": (0.25, 5), "volume": (1e5, 1e8)}, random_state=0)
    assert res.method == "theilsen"
    draws = res._draws
    lo, hi = np.quantile(draws[:, 1], [0.025, 0.975])
    assert np.std(draws[:, 1], ddof=1) > 5 * (hi - lo) / 3.92  # the replicates have far-out ones
    assert res.bse.iloc[1] == pytest.approx((hi - lo) / (2 * 1.959964), rel=1e-6)
    assert np.allclose(res.bse.to_numpy(), np.sqrt(np.diag(central_covariance(draws))))
    z = (2 * res.params.to_numpy() - np.median(draws, axis=0)) / res.bse.to_numpy()
    assert np.allclose(res.tvalues.to_numpy(), z)
