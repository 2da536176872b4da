"""DP-SGD and DP-LASSO on data read in chunks: one pass over the data per step (per iteration).

The contract is that of tests/test_chunked.py: for the same data and seed a
chunked or Dask fit is the in-memory fit (DP-SGD's clipped gradient sums
are exact integer sums, so its releases are identical; the lasso's gradient
sums agree up to the order of floating-point additions, checked at a
relative 1e-9), the ledger is the same, and a refused call spends nothing.
Every test is deterministic (fixed seeds, small data, few steps).
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from chunk_helpers import UnreadableSource
from ledger_helpers import method_steps

import dpstats
from dpstats.bounds import DataBounds
from dpstats.errors import (
    BudgetExceededError,
    InsufficientDataError,
    MethodOptionError,
    MissingBoundsError,
)
from dpstats.methods import dpsgd, lasso
from dpstats.methods.registry import FitContext
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.poisson_gaussian import ClippedGridSum, add_grid_sums
from dpstats.rows import InMemoryRows
from dpstats.rows.sources import CSVSource, DataFrameSource

pa = pytest.importorskip("pyarrow")
dd = pytest.importorskip("dask.dataframe")

RTOL = 1e-9
N = 240
FORMULA = "y ~ x1 + x2 + x3 + C(g, levels=['a', 'b'])"
BOUNDS = {"x1": (0.0, 10.0), "x2": (-4.0, 4.0), "x3": (-1.0, 1.0), "y": (-25.0, 30.0)}
# few steps: DP-SGD takes ceil(epochs * n / batch_size) = 5 steps, the lasso 3 iterations
OPTIONS = {"dpsgd": {"batch_size": 24, "epochs": 0.5}, "lasso": {"sparsity": 2, "iterations": 3}}


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"x1": rng.uniform(0, 10, N), "x2": rng.normal(0, 1, N), "x3": rng.uniform(-1, 1, N),
                          "g": rng.choice(["a", "b"], N)})
    frame["y"] = 1 + 0.5 * frame.x1 - 2 * frame.x2 + (frame.g == "b") + rng.normal(0, 1, N)
    return frame


@pytest.fixture(scope="module")
def files(df: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("chunked_sgd")
    csv, parquet = d / "rows.csv", d / "rows.parquet"
    df.to_csv(csv, index=False)
    df.to_parquet(parquet, row_group_size=90)
    return {"csv": str(csv), "parquet": str(parquet)}


def _fit(data, method: str, **kw):
    return dpstats.dp_ols(FORMULA, data, 1.0, 1e-6, method=method, bounds=BOUNDS, random_state=11,
                          **OPTIONS[method], **kw)


def _same_fit(a, b) -> None:
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=RTOL, atol=0)
    assert list(a.params.index) == list(b.params.index) and a.nobs == b.nobs
    steps_a = [(s.name, s.mechanism, s.sensitivity, s.noise_scale, s.epsilon, s.delta) for s in a.privacy.steps]
    steps_b = [(s.name, s.mechanism, s.sensitivity, s.noise_scale, s.epsilon, s.delta) for s in b.privacy.steps]
    assert steps_a == steps_b
    assert b.privacy.epsilon_spent == a.privacy.epsilon_spent


@pytest.mark.parametrize("method", ["dpsgd", "lasso"])
def test_chunked_fit_equals_in_memory_fit(df, files, method):
    reference = _fit(df, method)
    # the lasso's defaults add two passes, the private residual scale and curvature estimate (issue 17 part 5)
    passes = reference.info["steps"] if method == "dpsgd" else reference.info["iterations"] + 2
    partitionings = {
        "DataFrame chunks of 7": DataFrameSource(df, chunksize=7),
        "DataFrame chunks of 100": DataFrameSource(df, chunksize=100),
        "DataFrame in one chunk": DataFrameSource(df, chunksize=N),
        "CSV chunks of 100": CSVSource(files["csv"], chunksize=100),
        "Parquet row groups": files["parquet"],
        "Dask, 3 partitions": dd.from_pandas(df, npartitions=3),
    }
    for label, data in partitionings.items():
        got = _fit(data, method)
        try:
            _same_fit(reference, got)
        except AssertionError as exc:  # pragma: no cover - the message names the partitioning
            raise AssertionError(f"{method} on {label}: {exc}") from None
        # the cost is stated: one pass per step, plus the pass that checks every row before anything is released
        # (it also counts the rows when the source does not know n)
        counting = 1
        assert any("one pass over the data per" in note and f"({passes} passes" in note
                   for note in got.privacy.notes)
        assert any(f"read in chunks ({passes + counting} passes over the data" in note for note in got.privacy.notes)


def test_dpsgd_releases_are_identical_not_just_close(df):
    """The clipped gradient sums are exact integers on the mechanism's grid: any chunking gives the same bits
    (here on the public rescaling with the factor's dummy on its own values, dpsgd.DummyUnits)."""
    a = _fit(df, "dpsgd")
    b = _fit(DataFrameSource(df, chunksize=7), "dpsgd")
    assert a.info["dummies_on_own_values"] and b.info["dummies_on_own_values"]
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())


def test_missing_drop_matches_in_memory(df, tmp_path):
    """Rows with missing values become public null rows, at their own index, in memory and in chunks."""
    bad = df.copy()
    bad.loc[[3, 100, 200], "x2"] = np.nan
    path = tmp_path / "drop.parquet"
    bad.to_parquet(path, row_group_size=70)
    for method in ("dpsgd", "lasso"):
        a = _fit(bad, method, missing="drop")
        b = _fit(str(path), method, missing="drop")
        _same_fit(a, b)
        assert b.nobs == N  # n stays public: the incomplete rows are public null rows


#: At n = 240 and epsilon = 10 the private moments resolve the scales (``dpsgd.scale_floor`` below
#: ``dpsgd.MAX_SCALE_FLOOR``): DP-SGD standardises its rows privately (at epsilon 1, above, it does not).
STANDARDISED_EPSILON = 10.0


def _standardised_fit(data, **kw):
    return dpstats.dp_ols(FORMULA, data, STANDARDISED_EPSILON, 1e-6, method="dpsgd", bounds=BOUNDS,
                          random_state=11, **OPTIONS["dpsgd"], **kw)


def test_standardised_dpsgd_in_chunks_is_the_in_memory_fit(df, files, tmp_path):
    """The private moments are sums over rows too: any chunking (and Dask) gives the same releases, bit for bit,
    with two more passes; with missing="drop" the null rows, read marked, add nothing in memory or in chunks."""
    reference = _standardised_fit(df)
    assert reference.info["standardised"] and len(method_steps(reference.privacy.steps)) == 3
    steps = reference.info["steps"]
    for label, data in {"DataFrame chunks of 7": DataFrameSource(df, chunksize=7),
                        "CSV chunks of 100": CSVSource(files["csv"], chunksize=100),
                        "Dask, 3 partitions": dd.from_pandas(df, npartitions=3)}.items():
        got = _standardised_fit(data)
        _same_fit(reference, got)
        np.testing.assert_array_equal(reference.params.to_numpy(), got.params.to_numpy())
        counting = 1  # the pass that checks every row (and counts them when the source does not know n)
        assert any(f"read in chunks ({steps + 2 + counting} passes over the data" in note
                   for note in got.privacy.notes), label
    bad = df.copy()
    bad.loc[[3, 100, 200], "x2"] = np.nan
    path = tmp_path / "drop.parquet"
    bad.to_parquet(path, row_group_size=70)
    a, b = _standardised_fit(bad, missing="drop"), _standardised_fit(str(path), missing="drop")
    assert a.info["standardised"] and b.nobs == N
    _same_fit(a, b)


def _arrays(n: int = 600, d: int = 5, seed: int = 2) -> tuple[np.ndarray, np.ndarray, DataBounds]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    y = np.clip(X @ np.linspace(1, -1, d) + 0.1 * rng.normal(size=n), -1, 1)
    return X, y, DataBounds(np.full(d, -1.0), np.full(d, 1.0), -1.0, 1.0)


class _Recorder(InMemoryRows):
    """InMemoryRows that records, per pass, the global indices of the rows each ``fn`` was given."""

    def __init__(self, X: np.ndarray, y: np.ndarray, chunk_rows: int) -> None:
        super().__init__(X, y, chunk_rows)
        self.seen: list[np.ndarray] = []

    def reduce(self, fn, combine):
        rows: list[np.ndarray] = []
        select = fn.select

        class Spy:
            def select(self, offset, count):
                idx = np.asarray(select(offset, count))
                rows.append(offset + idx)
                return idx

            def __call__(self, X, y, offset):
                return fn(X, y, offset)

        out = super().reduce(Spy(), combine)
        self.seen.append(np.concatenate(rows))
        return out


@pytest.mark.parametrize("chunk_rows", [3, 50, 600])
def test_methods_layer_fit_chunks_equals_fit(chunk_rows):
    X, y, bounds = _arrays()
    for module, kw in ((dpsgd, {"batch_size": 30, "epochs": 0.5}), (lasso, {"sparsity": 2})):
        a = module.SPEC.fit_arrays(X, y, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(5),
                                   bounds=bounds, **kw)
        b = module.SPEC.fit_arrays(X, y, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(5),
                                   bounds=bounds, chunk_rows=chunk_rows, **kw)
        if module is dpsgd:
            np.testing.assert_array_equal(b.params, a.params)
        else:
            np.testing.assert_allclose(b.params, a.params, rtol=RTOL)
            assert np.array_equal(b.params != 0, a.params != 0)  # the same support was selected


def test_each_lasso_pass_evaluates_only_its_disjoint_part():
    X, y, bounds = _arrays(n=1000)
    rows = _Recorder(X, y, 64)
    ctx = FitContext(n=1000, d=5, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(1), bounds=bounds)
    # curvature_share=0: the public step, so that every pass is an iteration's (the default adds a curvature pass)
    fit = lasso.fit(rows, ctx, lasso.LassoOptions(sparsity=2, iterations=7, curvature_share=0.0, residual_share=0.0))
    sizes = [len(part) for part in np.array_split(np.arange(1000), 7)]
    assert [len(s) for s in rows.seen] == sizes == [143] * 6 + [142]
    assert np.array_equal(np.sort(np.concatenate(rows.seen)), np.arange(1000))  # every row in exactly one part
    assert fit.diagnostics["iterations"] == 7 and any("7 passes" in note for note in fit.notes)
    # the parts follow the public permutation, not the file order
    assert not np.array_equal(rows.seen[0], np.arange(143))


def test_each_dpsgd_pass_evaluates_only_its_poisson_sample():
    X, y, _ = _arrays(n=2000)
    rows = _Recorder(X, y, 128)
    ctx = FitContext(n=2000, d=5, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(3))
    fit = dpsgd.fit(rows, ctx, dpsgd.DPSGDOptions(batch_size=100, epochs=0.5))
    assert fit.diagnostics["steps"] == len(rows.seen) == math.ceil(0.5 * 2000 / 100)  # one pass per step
    for seen in rows.seen:  # distinct rows, |sample| ~ Binomial(2000, 0.05): mean 100, sd 9.7
        assert np.unique(seen).size == seen.size
        assert 50 < seen.size < 150  # 5 sd: never fails for this seed, and with probability < 1e-5 for any seed


def test_pass_objects_are_picklable_and_sums_are_exact():
    """What a Dask worker receives (fn, combine) pickles; integer partial sums add exactly."""
    X, y, bounds = _arrays(n=50)
    perm = dpstats.methods.common.permutations.RowPermutation.draw(50, np.random.default_rng(0))
    public = lasso._public(50, 5, bounds, lasso.LassoOptions(sparsity=2, iterations=2))
    plan = lasso._plan(public, 1.0 / public.smoothness, 2)
    part = lasso.PartGradient(lasso.PartIndex(perm, plan), 1, np.zeros(5), bounds)
    gram = lasso.GramColumns(bounds, 0, 5)
    pairs = lasso.PairDifferences(perm, bounds, 1.0)
    step = dpsgd.StepSum(np.array([3, 9, 20, 41]), np.ones(5), ClippedGridSum(1.0, -40, 5))
    for fn in (part, gram, pairs, step, lasso.add_arrays, add_grid_sums):
        assert pickle.loads(pickle.dumps(fn)) is not None
    copy = pickle.loads(pickle.dumps(step))
    np.testing.assert_array_equal(copy.select(0, 25), [3, 9, 20])
    np.testing.assert_array_equal(copy.select(25, 25), [16])
    whole = step(X[[3, 9, 20, 41]], y[[3, 9, 20, 41]], 0)
    split = add_grid_sums(copy(X[[3, 9]], y[[3, 9]], 0), copy(X[[20, 41]], y[[20, 41]], 20))
    assert whole.dtype.kind == "i" and np.array_equal(whole, split)


def test_refusals_read_nothing_and_spend_nothing(df, tmp_path):
    src = UnreadableSource(df, known_rows=N)
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    refusals = [
        (MethodOptionError, "dpsgd", {"clip_norm": -1.0}),
        (MethodOptionError, "dpsgd", {"batch_size": 0}),
        (MethodOptionError, "dpsgd", {"optimizer": "lbfgs"}),
        (MethodOptionError, "lasso", {}),  # no sparsity
        (MethodOptionError, "lasso", {"sparsity": 99}),
        (InsufficientDataError, "lasso", {"sparsity": 1, "iterations": N + 1}),
    ]
    for error, method, kw in refusals:
        with pytest.raises(error,
                           match="^(clip_norm|batch_size|optimizer|sparsity) must be|^lasso needs sparsity=s_hat"
                                 "|n=240 is too few"):
            dpstats.dp_ols(FORMULA, src, 1.0, 1e-6, method=method, bounds=BOUNDS, accountant=acct, **kw)
    # the lasso needs every bound; decided from the schema
    with pytest.raises(MissingBoundsError, match="Declare bounds on the variables x2, x3, y"):
        dpstats.dp_ols(FORMULA, src, 1.0, 1e-6, method="lasso", bounds={"x1": (0.0, 10.0)}, accountant=acct,
                       sparsity=1)
    # over budget: refused before the file is opened
    with pytest.raises(BudgetExceededError, match=r"asks for \(epsilon=6, .* has \(epsilon=5, delta=1e-05\) left"):
        dpstats.dp_ols("y ~ x", str(tmp_path / "absent.parquet"), 6.0, 1e-6, method="dpsgd", accountant=acct)
    assert acct.spent == (0.0, 0.0)


@pytest.mark.slow
def test_dask_on_a_local_two_worker_cluster(df):
    """Tasks are pickled to two worker processes; only integer sums (DP-SGD) or d-vectors (lasso) come back."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster):
        for method in ("dpsgd", "lasso"):
            _same_fit(_fit(df, method), _fit(dd.from_pandas(df, npartitions=4), method))



def test_chunked_dense_lasso_equals_in_memory_fit():
    """A dense lasso fit (sparsity = d) preconditioned by its released Gram matrix (n = 3000 rows: the release is
    precise at epsilon 10) gives the in-memory fit on any chunking: the Gram matrix is one more sum over rows."""
    rng = np.random.default_rng(5)
    n = 3000
    frame = pd.DataFrame({"x1": rng.uniform(0, 10, n), "x2": rng.normal(0, 1, n)})
    frame["y"] = 1 + 0.5 * frame.x1 - 2 * frame.x2 + rng.normal(0, 1, n)
    bounds = {"x1": (0.0, 10.0), "x2": (-4.0, 4.0), "y": (-10.0, 15.0)}

    def fit(data):
        return dpstats.dp_ols("y ~ x1 + x2", data, 10.0, 1e-6, method="lasso", bounds=bounds, random_state=11,
                              sparsity=3)

    reference = fit(frame)
    assert "gram_epsilon" in reference.info
    for data in (DataFrameSource(frame, chunksize=700), dd.from_pandas(frame, npartitions=3)):
        got = fit(data)
        np.testing.assert_allclose(got.params.to_numpy(), reference.params.to_numpy(), rtol=RTOL, atol=0)
        # the Peeling sensitivity follows the released matrix, whose entries carry the order of the additions
        for a, b in zip(reference.privacy.steps, got.privacy.steps, strict=True):
            assert (a.name, a.mechanism, a.epsilon, a.delta) == (b.name, b.mechanism, b.epsilon, b.delta)
            assert b.sensitivity == pytest.approx(a.sensitivity, rel=RTOL)
            assert b.noise_scale == pytest.approx(a.noise_scale, rel=RTOL)
        assert got.privacy.epsilon_spent == pytest.approx(reference.privacy.epsilon_spent, rel=1e-12)
