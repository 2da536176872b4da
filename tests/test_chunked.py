"""Data larger than memory: CSV/Parquet files read in chunks and Dask DataFrames (dpstats.rows, dpstats.pipeline).

The contract: for the same data and seed, a fit on chunked data gives the
same answer as the in-memory fit, whatever the partition (the deterministic
statistics agree up to the order of floating-point additions, checked at a
relative 1e-9; the noise draws are identical), the design is built from
public facts before any row is read, and a refused call reads and spends
nothing.  All tests use fixed seeds and small data.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from chunk_helpers import UnreadableSource

import dpstats
from dpstats.errors import (
    BudgetExceededError,
    MissingDataError,
    UndeclaredLevelsError,
)
from dpstats.methods import adassp, tukey
from dpstats.methods.common.permutations import RowPermutation
from dpstats.methods.common.sufficient import StatisticsPass, SufficientStatistics, add_statistics
from dpstats.methods.registry import FitContext
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.rows import InMemoryRows
from dpstats.rows.sources import CSVSource, DataFrameSource, ParquetSource

pa = pytest.importorskip("pyarrow")
dd = pytest.importorskip("dask.dataframe")

RTOL = 1e-9
FORMULA = "y ~ x1 + x2 + C(g, levels=['a', 'b', 'c']) + np.log1p(x1) + x1:x2"
BOUNDS = {"x1": (0.0, 10.0), "x2": (-4.0, 4.0), "y": (-25.0, 30.0)}
LEVELS_FORMULA = "y ~ x1 + x2 + C(g) + np.log1p(x1) + x1:x2"  # levels from levels= or the dtype


def _frame(n: int = 24000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(0, 10, n), "x2": rng.normal(0, 1, n),
                       "g": rng.choice(["a", "b", "c"], n)})
    df["y"] = 1 + 0.5 * df.x1 - 2 * df.x2 + (df.g == "b") + 0.3 * df.x1 * df.x2 + rng.normal(0, 1, n)
    return df


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return _frame()


@pytest.fixture(scope="module")
def files(df: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    d = tmp_path_factory.mktemp("chunked")
    cuts = [0, 5000, 13000, len(df)]
    csvs = []
    for i in range(3):
        p = d / f"part{i}.csv"
        df.iloc[cuts[i]:cuts[i + 1]].to_csv(p, index=False)
        csvs.append(str(p))
    pq_path = d / "all.parquet"
    df.to_parquet(pq_path, row_group_size=3500)
    pq_dir = d / "pq"
    pq_dir.mkdir()
    for i in range(3):
        df.iloc[cuts[i]:cuts[i + 1]].to_parquet(pq_dir / f"part{i}.parquet", row_group_size=2000)
    return {"csv": csvs, "parquet": str(pq_path), "parquet_dir": str(pq_dir)}


def _partitionings(df: pd.DataFrame, files: dict[str, object]) -> dict[str, object]:
    return {
        "DataFrame chunks of 1000": DataFrameSource(df, chunksize=1000),
        "CSV files, default chunks": files["csv"],
        "CSV chunks of 777": CSVSource(files["csv"], chunksize=777),
        "Parquet row groups (path)": files["parquet"],
        "Parquet batches of 1234": ParquetSource(files["parquet"], batch_size=1234),
        "Parquet directory": files["parquet_dir"],
        "Dask, 7 partitions": dd.from_pandas(df, npartitions=7),
        "Dask read_parquet": dd.read_parquet(files["parquet_dir"]),
    }


def _fit(data, method: str, **kw):
    eps = math.inf if method == "ols" else kw.pop("epsilon", 1.0)
    return dpstats.dp_ols(FORMULA, data, eps, 1e-6, method=method, bounds=BOUNDS, random_state=11, **kw)


def _same_fit(a, b) -> None:
    assert list(a.params.index) == list(b.params.index)
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=RTOL, atol=0)
    assert a.nobs == b.nobs
    steps_a = [(s.name, s.mechanism, s.sensitivity, s.noise_scale) for s in a.privacy.steps]
    steps_b = [(s.name, s.mechanism, s.sensitivity, s.noise_scale) for s in b.privacy.steps]
    assert len(steps_a) == len(steps_b)
    for (na, ma, sa, za), (nb, mb, sb, zb) in zip(steps_a, steps_b, strict=True):
        assert (na, ma) == (nb, mb)
        np.testing.assert_allclose([sb, zb], [sa, za], rtol=RTOL)
    # the PLD composition of noise scales that agree to RTOL (noisy_ols's follow released values: sums in another
    # order differ in their last bits)
    np.testing.assert_allclose(b.privacy.epsilon_spent, a.privacy.epsilon_spent, rtol=RTOL)


METHODS = [("ssp", {}), ("adassp", {}), ("noisy_ols", {"epsilon": 8.0}), ("tukey", {}),
           ("tukey", {"blocks": "ols"}), ("ols", {})]


@pytest.mark.parametrize("method,kw", METHODS, ids=[m + ("-" + "-".join(k) if k else "") for m, k in METHODS])
def test_chunked_fit_equals_in_memory_fit_for_every_partitioning(df, files, method, kw):
    reference = _fit(df, method, **dict(kw))
    partitionings = _partitionings(df, files)
    if method == "noisy_ols":  # its PLD accounting is slow; four partitionings cover every source
        partitionings = {k: v for k, v in partitionings.items() if k in {
            "CSV chunks of 777", "Parquet batches of 1234", "Dask, 7 partitions", "DataFrame chunks of 1000"}}
    for label, data in partitionings.items():
        got = _fit(data, method, **dict(kw))
        try:
            _same_fit(reference, got)
        except AssertionError as exc:  # pragma: no cover - the message names the partitioning
            raise AssertionError(f"{method} on {label}: {exc}") from None
        assert any("read in chunks" in note for note in got.privacy.notes)


@pytest.mark.parametrize("method", ["ssp", "adassp"])
def test_inference_quantities_equal_in_memory(df, files, method):
    a = _fit(df, method, epsilon=20.0)  # a budget at which inference is reported, not withheld
    b = _fit(files["parquet"], method, epsilon=20.0)
    assert a.inference_available and b.inference_available, a.inference_reason
    np.testing.assert_allclose(b.bse, a.bse, rtol=1e-8)
    np.testing.assert_allclose(b.conf_int().to_numpy(), a.conf_int().to_numpy(), rtol=1e-8)


def test_dask_on_a_local_two_worker_cluster(df, files):
    """The Dask path on a real distributed cluster (2 worker processes): tasks and the design are pickled to the
    workers, which rebuild patsy's design from public facts; only aggregates come back."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster):
        for method, kw in [("adassp", {}), ("tukey", {})]:
            reference = _fit(df, method, **kw)
            _same_fit(reference, _fit(dd.from_pandas(df, npartitions=5), method, **kw))
        # a spline needs the one-row public prototype on the workers
        f = "y ~ bs(x1, knots=[3, 6], lower_bound=0, upper_bound=10) + x2"
        a = dpstats.dp_ols(f, df, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=2)
        b = dpstats.dp_ols(f, dd.read_parquet(files["parquet_dir"]), 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                           random_state=2)
        _same_fit(a, b)


def test_levels_from_schema_and_from_the_levels_argument(df, files):
    cat = df.assign(g=pd.Categorical(df.g, categories=["a", "b", "c"]))
    a = dpstats.dp_ols(LEVELS_FORMULA, cat, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=4)
    # a Categorical dtype with known categories is schema (pandas and Dask alike)
    for data in (DataFrameSource(cat, chunksize=999), dd.from_pandas(cat, npartitions=4)):
        _same_fit(a, dpstats.dp_ols(LEVELS_FORMULA, data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=4))
    # CSV strings and Parquet columns: levels= declares them
    for data in (files["csv"], files["parquet"]):
        got = dpstats.dp_ols(LEVELS_FORMULA, data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=4,
                             levels={"g": ["a", "b", "c"]})
        _same_fit(a, got)


def test_a_reference_level_of_an_undeclared_factor_is_refused_as_undeclared_levels(df):
    # regression (s51 new-user check): with C(g, Treatment('b')) and no declared levels, patsy failed first on the
    # reference level (absent from the zero-row schema and from the public prototype row), and data read in chunks
    # got a FormulaError on building the design from the schema, where data in memory got UndeclaredLevelsError
    src = UnreadableSource(df)
    for data in (src, df):
        with pytest.raises(UndeclaredLevelsError,
                           match=r"^the levels of 'C\(g, Treatment\('b'\)\)' would be read from the private data"):
            dpstats.dp_ols("y ~ x1 + C(g, Treatment('b'))", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS)
    with pytest.raises(UndeclaredLevelsError, match="allow_data_levels=True is not supported"):
        dpstats.dp_ols("y ~ x1 + C(g, Treatment('b'))", src, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                       allow_data_levels=True)


def test_public_errors_are_decided_before_any_row_is_read(df):
    src = UnreadableSource(df)
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(UndeclaredLevelsError, match=r"the levels of 'C\(g\)' would be read from the private data"):
        dpstats.dp_ols("y ~ x1 + C(g)", src, 1.0, 1e-6, method="ssp", bounds=BOUNDS, accountant=acct)
    with pytest.raises(UndeclaredLevelsError, match="allow_data_levels=True is not supported"):
        dpstats.dp_ols("y ~ x1 + g", src, 1.0, 1e-6, method="ssp", bounds=BOUNDS, allow_data_levels=True,
                       accountant=acct)
    with pytest.raises(dpstats.errors.MissingBoundsError, match="Declare bounds on the variables y"):
        dpstats.dp_ols("y ~ x1", src, 1.0, 1e-6, method="ssp", bounds={"x1": (0, 10)}, accountant=acct)
    with pytest.raises(dpstats.errors.StatefulTransformError,
                       match=r"'center\(x1\)' uses patsy's center\(\), which computes the mean/sd of the private data"):
        dpstats.dp_ols("y ~ center(x1)", src, 1.0, 1e-6, method="ssp", bounds=BOUNDS, accountant=acct)
    with pytest.raises(dpstats.errors.InvalidBoundsError,
                       match="bounds names 'x9', which is not a column of the data, a design column or the response"):
        dpstats.dp_ols("y ~ x1", src, 1.0, 1e-6, method="ssp", bounds={**BOUNDS, "x9": (0, 1)}, accountant=acct)
    with pytest.raises(dpstats.errors.MethodOptionError, match=r"rho must lie in \(0, 1\)"):
        dpstats.dp_ols("y ~ x1", src, 1.0, 1e-6, method="adassp", bounds=BOUNDS, rho=2.0, accountant=acct)
    # a pass-per-round method: refused before counting
    with pytest.raises(dpstats.errors.MissingBoundsError, match="Declare bounds on the variables y"):
        dpstats.dp_ols("y ~ x1", src, 1.0, 1e-6, method="lasso", bounds={"x1": (0, 10)}, sparsity=1,
                       accountant=acct)
    assert acct.spent == (0.0, 0.0)


def test_over_budget_is_refused_before_the_source_is_opened(tmp_path):
    acct = dpstats.PrivacyAccountant(1.0, 1e-6)
    with pytest.raises(BudgetExceededError,
                       match=r"asks for \(epsilon=2, delta=1e-07\) .* has \(epsilon=1, delta=1e-06\) left"):
        dpstats.dp_ols("y ~ x", str(tmp_path / "does-not-exist.parquet"), 2.0, 1e-7, method="ssp",
                       bounds={"x": (0, 1), "y": (0, 1)}, accountant=acct)
    assert acct.spent == (0.0, 0.0)


def test_a_chunk_cannot_change_the_design(df):
    """The first chunk holds only level 'a' (and is tiny); the columns are still those of the declared levels."""
    small = df.head(3000)
    ordered = pd.concat([small[small.g == "a"], small[small.g != "a"]], ignore_index=True)
    a = dpstats.dp_ols(FORMULA, ordered, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=5)
    b = dpstats.dp_ols(FORMULA, DataFrameSource(ordered, 7), 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=5)
    assert "C(g, levels=['a', 'b', 'c'])[T.c]" in b.params.index
    _same_fit(a, b)


def test_schema_violations_are_refused_without_values_and_spend_nothing(df, tmp_path):
    screened = dpstats.PrivacyAccountant(5.0, 1e-5)
    bad = df.copy()
    bad.loc[10000:19999, "x2"] = np.nan  # many missing values: the charged screen refuses, naming no value
    p = tmp_path / "missing.csv"
    bad.to_csv(p, index=False)
    with pytest.raises(MissingDataError, match="x2") as missing:
        dpstats.dp_ols(FORMULA, str(p), 1.0, 1e-6, method="adassp", bounds=BOUNDS, accountant=screened)
    assert "noisy count" in str(missing.value) and 0 < screened.spent[0] < 1.0
    # text in a column read as numbers is a missing value (tests/test_non_numbers.py), not a free refusal
    text = df.astype({"x1": object})
    text.loc[15000, "x1"] = "secret-value-123"
    q = tmp_path / "text.csv"
    text.to_csv(q, index=False)
    res = dpstats.dp_ols(FORMULA, CSVSource(str(q), chunksize=4000), 1.0, 1e-6, method="adassp", bounds=BOUNDS,
                         random_state=0)
    assert res.privacy.steps[0].name.startswith("missing-value screen") and "secret" not in res.summary().as_text()
    # a level outside the declared ones makes a null row, as a missing value (a refusal would be a free query)
    outside, first = df.copy(), df.copy()
    outside.loc[12000, "g"] = "zzz-private"
    first.loc[12000, "g"] = None
    fits = [dpstats.dp_ols(FORMULA, DataFrameSource(frame, 5000), 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                           random_state=0) for frame in (outside, first)]
    np.testing.assert_array_equal(fits[0].params.to_numpy(), fits[1].params.to_numpy())
    assert "zzz" not in fits[0].summary().as_text()


def test_a_line_with_more_fields_than_the_header_is_a_row_of_missing_values(df, tmp_path):
    """A CSV line with extra fields is a row of missing values (tests/test_csv_lines.py), counted by the charged
    screen, whichever columns the formula uses: never refused for free, never read with its extra fields
    dropped, and its fields never shown."""
    p, q = tmp_path / "ragged.csv", tmp_path / "empty.csv"
    df.to_csv(p, index=False)
    df.to_csv(q, index=False)
    with open(p, "a") as f:
        f.write("1.0,0.5,a,2.0,SECRET_LEVEL,987654\n")
    with open(q, "a") as f:
        f.write(",,,,\n")
    for formula in (FORMULA, "y ~ x1"):
        fits = [dpstats.dp_ols(formula, CSVSource(str(path), chunksize=4000), 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                               random_state=2) for path in (p, q)]
        np.testing.assert_array_equal(fits[0].params.to_numpy(), fits[1].params.to_numpy())
        text = fits[0].summary().as_text()
        assert "SECRET" not in text and "987654" not in text and fits[0].nobs == len(df) + 1


def test_missing_drop_matches_in_memory(df, tmp_path):
    bad = df.copy()
    bad.loc[[3, 7000, 16000], "x1"] = np.nan
    p = tmp_path / "drop.parquet"
    bad.to_parquet(p, row_group_size=5000)
    a = dpstats.dp_ols(FORMULA, bad, 1.0, 1e-6, method="adassp", bounds=BOUNDS, random_state=6, missing="drop")
    b = dpstats.dp_ols(FORMULA, str(p), 1.0, 1e-6, method="adassp", bounds=BOUNDS, random_state=6, missing="drop")
    _same_fit(a, b)
    assert b.nobs == len(df)  # n stays public: the incomplete rows are public null rows
    # tukey standardises rows itself (a null row would be a data point): refused before anything is read
    for data in (bad, str(p)):
        with pytest.raises(dpstats.errors.InvalidArgumentError, match="missing='drop'"):
            dpstats.dp_ols(FORMULA, data, 1.0, 1e-6, method="tukey", bounds=BOUNDS, missing="drop")


def test_auto_chooses_among_chunk_capable_methods_and_predict_works(df, files):
    res = dpstats.dp_ols(FORMULA, files["parquet"], 1.0, 1e-6, bounds=BOUNDS, random_state=1)
    assert res.method == "pgd"  # n * mu >= 100 and n < 10^5
    pred = res.predict(df.head(5))
    assert pred.shape == (5,) and np.all(np.isfinite(pred))
    nb = dpstats.dp_ols("y ~ x1 + x2", files["csv"], 3.0, 1e-6, random_state=1)  # no bounds: pgd, released domain
    assert nb.method == "pgd"


def test_refusal_after_spending_is_settled(df):
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    tiny = df.head(400)
    with pytest.raises(dpstats.errors.IllConditionedDesignError,
                       match=r"lower bound on lambda_min\(X\^T X\) is .* no finite sensitivity can be certified"):
        dpstats.dp_ols(FORMULA, DataFrameSource(tiny, 100), 0.05, 1e-6, method="noisy_ols", bounds=BOUNDS,
                       accountant=acct, random_state=0)
    assert 0 < acct.spent[0] < 0.05


# --- the methods layer: statistics, block assignment, chunked TukeyEM ---------------------------------------


def test_sufficient_statistics_sum_over_any_partition():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(1000, 4)), rng.normal(size=1000)
    bounds = dpstats.bounds.DataBounds(np.full(4, -1.0), np.full(4, 1.0), -1.0, 1.0)
    whole = SufficientStatistics.from_arrays(X, y, bounds)
    for rows in (1, 7, 333, 1000):
        parts = InMemoryRows(X, y, rows).reduce(StatisticsPass(bounds), add_statistics)
        np.testing.assert_allclose(parts.xtx, whole.xtx, rtol=1e-12)
        np.testing.assert_allclose(parts.xty, whole.xty, rtol=1e-12)
        assert parts.n == whole.n and math.isclose(parts.yty, whole.yty, rel_tol=1e-12)
    led_a, led_b = PrivacyLedger(1.0, 1e-6), PrivacyLedger(1.0, 1e-6)
    a = adassp.SPEC.fit_arrays(X, y, ledger=led_a, rng=np.random.default_rng(1), bounds=bounds)
    # the fit sees the data only through the statistics: rows whose one pass returns them give the same release
    ctx = FitContext(n=1000, d=4, ledger=led_b, rng=np.random.default_rng(1), bounds=bounds)
    b = adassp.fit(_StatisticsRows(whole), ctx, adassp.AdaSSPOptions())
    np.testing.assert_array_equal(a.params, b.params)


class _StatisticsRows:
    """Rows whose every pass returns the given sufficient statistics (a method that reads nothing else)."""

    local = True

    def __init__(self, stats: SufficientStatistics) -> None:
        self.stats, self.n, self.d = stats, stats.n, stats.d

    def reduce(self, pass_fn, combine):
        assert isinstance(pass_fn, StatisticsPass)
        return self.stats


@pytest.mark.parametrize("n", [1, 2, 3, 5, 64, 1000, 4097, 2**32 + 3])
def test_row_permutation_is_a_bijection_evaluable_on_any_slice(n):
    perm = RowPermutation.draw(n, np.random.default_rng(n))
    if n > 10**6:  # 64-bit arithmetic: the inverse undoes the permutation on a sample of positions
        q = np.random.default_rng(0).integers(0, n, 5000)
        np.testing.assert_array_equal(perm.positions(perm.rows_at(q)), q)
        return
    pos = perm.positions(np.arange(n))
    assert np.array_equal(np.sort(pos), np.arange(n))
    cut = n // 3
    np.testing.assert_array_equal(np.concatenate([perm.positions(np.arange(cut)), perm.positions(np.arange(cut, n))]),
                                  pos)
    np.testing.assert_array_equal(perm.order()[pos], np.arange(n))
    np.testing.assert_array_equal(perm.rows_at(pos), np.arange(n))


class _RemoteChunks(InMemoryRows):
    """As if the chunks were on a cluster: TukeyEM's centring then uses histogram passes, not gathered rows."""

    local = False


@pytest.mark.parametrize("blocks,centre,public", [("ols", True, False), ("ols", False, False),
                                                   ("moments", True, False), ("moments", True, True),
                                                   ("ols", True, True)])
def test_tukey_fit_chunks_equals_fit(blocks, centre, public):
    # public: every column and the response have public ranges (declared bounds): domains of the private centres
    # and radii, which are the same releases in memory, in chunks and on a cluster
    rng = np.random.default_rng(4)
    n = 20_000
    X = np.column_stack([np.ones(n), rng.normal(5, 2, (n, 2))])
    y = X @ np.array([1.0, 2.0, -1.0]) + rng.normal(size=n)
    ranges = ((None, (-5.0, 15.0), (-5.0, 15.0)), (-40.0, 40.0)) if public else ((None,) * 3, None)
    options = tukey.SPEC.parse_options(dict(blocks=blocks, centre=centre))

    def run(rows: InMemoryRows):
        ctx = FitContext(n=n, d=3, ledger=PrivacyLedger(2.0, 1e-6), rng=np.random.default_rng(8), intercept_index=0,
                         column_ranges=ranges[0], response_range=ranges[1])
        return tukey.SPEC.fit(rows, ctx, options)

    a = run(InMemoryRows(X.copy(), y.copy()))
    for chunks in (InMemoryRows(X, y, 999), InMemoryRows(X, y, n), _RemoteChunks(X, y, 1234)):
        b = run(chunks)
        np.testing.assert_allclose(b.params, a.params, rtol=RTOL)
        assert (b.diagnostics["m"] == a.diagnostics["m"]
                and b.diagnostics["noisy_distance"] == pytest.approx(a.diagnostics["noisy_distance"]))
        if centre:  # the private centres (and radii) are the same releases
            np.testing.assert_array_equal(b.diagnostics["centres"], a.diagnostics["centres"])
            np.testing.assert_array_equal(b.diagnostics["radii"], a.diagnostics["radii"])


def test_large_partitions_are_processed_in_bounded_slices(df):
    """A chunk (a Dask partition) longer than the slice size is evaluated in slices: bounded working memory."""
    from dpstats.formula import public_design
    from dpstats.rows.chunked import ChunkEvaluator, ChunkTask

    seen: list[int] = []

    def record(X, y, offset):
        seen.append(X.shape[0])
        return X.shape[0]

    design, plan, proto = public_design(FORMULA, df, bounds=BOUNDS)
    ev = ChunkEvaluator(design.formula_expanded, plan, proto, design.column_names, design.response_name)
    total, rows = ChunkTask(ev, None, record, lambda a, b: a + b, max_rows=5000)(df, 0)
    assert total == rows == len(df) and max(seen) <= 5000 and len(seen) == math.ceil(len(df) / 5000)


class _Sample:
    """A pass over a public selection of rows (every 7th row) that names it with ``selection``."""

    def __init__(self, rows: np.ndarray, selection: object) -> None:
        self.rows, self.selection = rows, selection

    def select(self, offset, count):
        lo, hi = np.searchsorted(self.rows, [offset, offset + count])
        return self.rows[lo:hi] - offset

    def __call__(self, X, y, offset):
        return np.column_stack([X, y]).sum(axis=0), X.shape[0]


def _add_sample(a, b):
    return a[0] + b[0], a[1] + b[1]


def test_passes_over_one_selection_read_a_cluster_once(df):
    """On Dask, passes that name the same selection read the partitions once: the first keeps the selected rows
    where it read them and every such pass runs on them, with the results of reading the data each time."""
    from dpstats.formula import public_design
    from dpstats.rows.chunked import ChunkedRows, ChunkEvaluator
    from dpstats.rows.sources import DaskSource

    design, plan, proto = public_design(FORMULA, df, bounds=BOUNDS)
    ev = ChunkEvaluator(design.formula_expanded, plan, proto, design.column_names, design.response_name)
    rows_at = np.arange(3, len(df), 7)
    X, y = ev.evaluate(df)
    expected = np.column_stack([X, y])[rows_at].sum(axis=0)
    rows = ChunkedRows(DaskSource(dd.from_pandas(df, npartitions=5)), ev, None, n=len(df))
    reads = rows.passes
    first = rows.reduce(_Sample(rows_at, rows_at), _add_sample)
    again = rows.reduce(_Sample(rows_at, rows_at), _add_sample)
    assert rows.passes == reads + 1  # the second pass ran on the kept rows
    same_rows = rows_at.copy()
    other = rows.reduce(_Sample(rows_at, same_rows), _add_sample)  # another selection object: read again
    assert rows.passes == reads + 2
    rows.reduce(lambda X, y, offset: X.shape[0], lambda a, b: a + b)  # a pass over every row releases them
    rows.reduce(_Sample(rows_at, same_rows), _add_sample)
    assert rows.passes == reads + 4
    for got in (first, again, other):
        np.testing.assert_allclose(got[0], expected, rtol=1e-12)
        assert got[1] == rows_at.size
    np.testing.assert_array_equal(first[0], again[0])


def test_a_dask_count_is_kept_for_its_own_evaluator_only(df):
    """The per-partition counts are kept by the evaluator's id together with the evaluator itself: an entry whose
    id matches a new evaluator's (an id freed and reused) is counted again, not served."""
    from dpstats.rows.sources import DaskSource

    source = DaskSource(dd.from_pandas(df, npartitions=4))

    class Counter:
        def __init__(self, keep_every):
            self.keep_every = keep_every

        def count(self, frame):
            return len(frame) // self.keep_every

    first, second = Counter(1), Counter(2)
    assert source.count(first.count, ["x"]) == len(df)
    stale = (id(second), ("x",))
    source._counted[stale] = (first, [10 ** 6] * 4)  # as if ``second`` took a freed evaluator's id
    assert source.count(second.count, ["x"]) == sum(int(k) // 2 for k in source.frame.map_partitions(len).compute())
    assert source.count(first.count, ["x"]) == len(df)



@pytest.mark.parametrize(("column", "cell", "like"), [("x", "secret-abc", np.nan), ("y", "secret-abc", np.nan),
                                                      ("b", "secret-abc", np.nan), ("b", "1", True)])
def test_a_partition_whose_type_is_not_the_schemas_is_read_by_the_schema(column, cell, like):
    """A Dask partition's computed dtype comes from its own rows (one text cell makes a float column ``object``),
    while the schema is its ``_meta``: the cell is read by the schema's type, element by element (text in a number
    column is missing, as in a CSV file), so the fit equals its neighbour's with a missing value (or the bool) there.
    Before, the partition's conversion to floats failed on the text and the fit was refused at no cost
    (``InternalFitError`` for a number column, ``FormulaError`` for a bool one) while the neighbour fitted."""
    import dask

    rng = np.random.default_rng(3)
    n = 1200
    base = pd.DataFrame({"x": rng.uniform(0, 10, n), "b": rng.random(n) < 0.5})
    base["y"] = 1 + 0.5 * base["x"] + base["b"] + rng.normal(0, 1, n)

    def partitions(value):
        parts = [base.iloc[i:i + 300].copy() for i in range(0, n, 300)]
        cells = list(parts[2][column])
        cells[5] = value
        parts[2][column] = pd.Series(cells, index=parts[2].index, dtype=object)
        return dd.from_delayed([dask.delayed(lambda p: p)(p) for p in parts], meta=base.iloc[:0], verify_meta=False)

    fits = []
    for value in (cell, like):
        with dask.config.set(scheduler="synchronous"):
            fits.append(dpstats.dp_ols("y ~ x + b", partitions(value), 1.0, 1e-6, method="ssp",
                                       bounds={"x": (0, 10), "y": (-5, 20)}, random_state=0))
    np.testing.assert_array_equal(fits[0].params.to_numpy(), fits[1].params.to_numpy())
    assert "secret" not in fits[0].summary().as_text()
