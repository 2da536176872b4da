"""DP-RobGD and DP-AMBSSGD on data read in chunks: one pass per round, the same fit as in memory.

The contract (as in tests/test_chunked.py): for the same data and seed, the
chunked fit releases the same values as the in-memory fit, whatever the
partition: the row layout is evaluated row by row from public draws, the
histogram counts are exact integers, and the gradient sums agree up to the
order of floating-point additions (params checked at a relative 1e-9; the
released distance estimates, bin edges, are compared exactly).  Options
that are refused are refused before anything is read or spent.  Everything
is deterministic (fixed seeds): no test here can fail at random.
"""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pytest

import dpstats
from dpstats.errors import InsufficientDataError, MethodOptionError
from dpstats.methods import robgd
from dpstats.methods.common.permutations import RowPermutation, WindowedOrder
from dpstats.methods.common.private_centring import GroupSumsPass, Standardisation, Transformed
from dpstats.methods.common.robust_estimators import (
    DISTANCE_GRID,
    histogram_counts,
    slot_means,
)
from dpstats.methods.common.row_passes import (
    ClipTable,
    GroupedCounts,
    geometric_buckets,
)
from dpstats.methods.registry import FitContext, get_method
from dpstats.privacy import PrivacyAccountant, PrivacyLedger
from dpstats.rows.sources import CSVSource, DataFrameSource, ParquetSource
from dpstats.simulate import robust_regression_data

pa = pytest.importorskip("pyarrow")
dd = pytest.importorskip("dask.dataframe")

RTOL = 1e-9
N = 2500
EPSILON, DELTA = 4.0, 1e-6
# small max_rounds (or given rounds) keep the passes few: each round is one pass over the data
CASES = [("robgd", {"max_rounds": 4}), ("robgd", {"best_iterate": True, "max_rounds": 3}),
         ("robgd", {"rounds": 3, "step_size": 0.5}), ("ambssgd", {"max_rounds": 4}),
         ("ambssgd", {"trace": 1.0, "rounds": 3, "step_size": 0.5})]
IDS = ["-".join([m, *k]) for m, k in CASES]


@pytest.fixture(scope="module")
def sim():
    return robust_regression_data(N, 3, sigma=0.1, corruption=0.05, random_state=0)


@pytest.fixture(scope="module")
def files(sim, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("robust")
    csv, pq = d / "data.csv", d / "data.parquet"
    sim.frame.to_csv(csv, index=False)
    sim.frame.to_parquet(pq, row_group_size=700)
    return {"csv": str(csv), "parquet": str(pq)}


def _fit(sim, data, method: str, **kw):
    return dpstats.dp_ols(sim.formula, data, EPSILON, DELTA, method=method, random_state=7, **kw)


def _same(a, b) -> None:
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=RTOL, atol=1e-15)
    np.testing.assert_array_equal(b.info["gammas"], a.info["gammas"])
    assert b.info["rounds"] == a.info["rounds"] and b.nobs == a.nobs
    for key in ("Gamma", "Theta", "step_size"):
        assert b.info[key] == pytest.approx(a.info[key], rel=RTOL)
    steps = [[(s.name, s.mechanism, s.sensitivity, s.noise_scale, s.count) for s in r.privacy.steps] for r in (a, b)]
    assert steps[0] == steps[1]
    assert b.privacy.epsilon_spent == a.privacy.epsilon_spent and b.privacy.delta_spent == a.privacy.delta_spent
    for part, part_steps in a.info["part_steps"].items():
        assert [(s.name, s.mu, s.count) for s in b.info["part_steps"][part]] == [(s.name, s.mu, s.count)
                                                                              for s in part_steps]


@pytest.mark.parametrize("method", ["robgd", "ambssgd"])
def test_fit_chunks_equals_fit_with_private_centring(sim, method):
    """With an intercept, an uncentred column and a column with a public range: the released centres and scales,
    and the fit, are the in-memory ones for chunks of 7, 100 and n rows (the transform is elementwise per chunk)."""
    spec = get_method(method)
    X = np.column_stack([np.ones(N), 50.0 + 10.0 * sim.X[:, 0], 1e3 * sim.X[:, 1], np.sign(sim.X[:, 2])])
    kw = {"max_rounds": 3, "intercept_index": 0, "column_ranges": [(1.0, 1.0), None, None, (-1.0, 1.0)]}
    a = spec.fit_arrays(X, sim.y, ledger=PrivacyLedger(EPSILON, DELTA), rng=np.random.default_rng(3), **kw)
    assert a.diagnostics["centre"][3] == 0.0 and a.diagnostics["scale"][3] == 1.0  # the public range: nothing released
    assert 30 < a.diagnostics["centre"][1] < 70 and a.diagnostics["scale"][2] > 100  # released: near 50, 1e3 scale
    for rows in (7, 100, N):
        b = spec.fit_arrays(X, sim.y, ledger=PrivacyLedger(EPSILON, DELTA), rng=np.random.default_rng(3),
                            chunk_rows=rows, **kw)
        for key in ("centre", "scale", "y_centre"):
            np.testing.assert_array_equal(b.diagnostics[key], a.diagnostics[key])
        np.testing.assert_allclose(b.params, a.params, rtol=RTOL, atol=1e-12)
        np.testing.assert_array_equal(b.diagnostics["gammas"], a.diagnostics["gammas"])


@pytest.mark.parametrize("method,kw", CASES, ids=IDS)
def test_fit_chunks_equals_fit_for_every_chunk_size(sim, method, kw):
    """The methods layer: chunks of 7, 100 and n rows give the in-memory fit, with one pass per round plus one per
    setup release (norm histogram, spectrum)."""
    spec = get_method(method)
    led_a = PrivacyLedger(EPSILON, DELTA)
    a = spec.fit_arrays(sim.X, sim.y, ledger=led_a, rng=np.random.default_rng(3), **kw)
    for rows in (7, 100, N):
        led = PrivacyLedger(EPSILON, DELTA)
        b = spec.fit_arrays(sim.X, sim.y, ledger=led, rng=np.random.default_rng(3), chunk_rows=rows, **kw)
        np.testing.assert_allclose(b.params, a.params, rtol=RTOL, atol=1e-15)
        np.testing.assert_array_equal(b.diagnostics["gammas"], a.diagnostics["gammas"])
        pre = int("trace" not in kw)  # private preconditioning (standardize defaults to on unless trace is given)
        assert led.steps == led_a.steps and len(led.steps) == 1 + pre
        T = a.diagnostics["rounds"]
        setup = pre + int("trace" not in kw) + int("rounds" not in kw)  # preconditioning, norm histogram, spectrum
        passes = setup + T + int(kw.get("best_iterate", False))
        assert any(f"{passes} passes over the data" in note and f"T = {T}" in note for note in b.notes)


@pytest.mark.parametrize("method,kw", [("robgd", {"max_rounds": 4}), ("robgd", {"best_iterate": True, "max_rounds": 3}),
                                       ("ambssgd", {"max_rounds": 4})], ids=["robgd", "robgd-best", "ambssgd"])
def test_fit_chunks_equals_fit_with_held_rounds(sim, method, kw):
    """A zero-inflated, skewed response (70% zeros, the rest lognormal): at w = 0 the residual-scale histogram is
    spread out and its mode does not clear its noise, so rounds hold the iterate and pool their histograms
    (PooledHistogram).  The held rounds, the pooled readout and the fit are the in-memory ones for every chunk
    size (the seed is one at which rounds do hold: asserted)."""
    spec = get_method(method)
    rs = np.random.default_rng(5)
    y = np.where(rs.random(N) < 0.7, 0.0, np.exp(2.0 * rs.standard_normal(N)))
    a = spec.fit_arrays(sim.X, y, ledger=PrivacyLedger(EPSILON, DELTA), rng=np.random.default_rng(0), **kw)
    assert a.diagnostics["held_rounds"] >= 1 and np.isinf(a.diagnostics["gammas"]).sum() >= 1
    assert any("held the iterate" in note for note in a.notes)
    for rows in (7, 100, N):
        b = spec.fit_arrays(sim.X, y, ledger=PrivacyLedger(EPSILON, DELTA), rng=np.random.default_rng(0),
                            chunk_rows=rows, **kw)
        np.testing.assert_allclose(b.params, a.params, rtol=RTOL, atol=1e-15)
        np.testing.assert_array_equal(b.diagnostics["gammas"], a.diagnostics["gammas"])
        assert b.diagnostics["held_rounds"] == a.diagnostics["held_rounds"]


def test_api_fit_on_csv_parquet_dask_and_tiny_chunks_equals_in_memory(sim, files):
    """dp_ols on a CSV in chunks of 100 rows, a Parquet file (row groups of 700), a Dask DataFrame (synchronous
    and threaded schedulers), and a DataFrame in chunks of 7 rows: the in-memory fit, the same ledger."""
    import dask

    for method, kw in (("robgd", {"max_rounds": 4}), ("ambssgd", {"max_rounds": 4})):
        reference = _fit(sim, sim.frame, method, **kw)
        sources = {"CSV chunks of 100": CSVSource(files["csv"], chunksize=100),
                   "Parquet path": files["parquet"],
                   "Parquet batches of 333": ParquetSource(files["parquet"], batch_size=333),
                   "Dask, 4 partitions": dd.from_pandas(sim.frame, npartitions=4)}
        for label, data in sources.items():
            got = _fit(sim, data, method, **kw)
            try:
                _same(reference, got)
            except AssertionError as exc:  # pragma: no cover - the message names the source
                raise AssertionError(f"{method} on {label}: {exc}") from None
            assert any("read in chunks" in note for note in got.privacy.notes)
        with dask.config.set(scheduler="synchronous"):
            _same(reference, _fit(sim, dd.from_pandas(sim.frame, npartitions=3), method, **kw))
    small = {"rounds": 2, "step_size": 0.5}
    _same(_fit(sim, sim.frame, "robgd", **small), _fit(sim, sim.frame, "robgd", chunksize=7, **small))


@pytest.mark.parametrize("intercept", [None, 0])
def test_declared_range_fallback_in_chunks_equals_in_memory(intercept):
    """The preconditioning with declared ranges at a budget where the histograms cannot clear, not even with a
    window of bins (mu = 0.02 at n = 3000: groups of 2 rows), so every declared variable falls back to its clipped
    Gaussian mean and mean absolute deviation (two more passes): chunks of 7, 100 and n rows give the in-memory
    releases, and the fallback is inside the ranges (not their midpoints)."""
    from dpstats.methods.common.private_centring import release_standardisation
    from dpstats.rows.memory import InMemoryRows

    rng = np.random.default_rng(1)
    n = 3000
    X = np.column_stack([np.ones(n), rng.poisson(8, n), rng.uniform(0, 1, n)])
    y = rng.poisson(150, n).astype(float)
    ranges = [(1.0, 1.0), (0.0, 100.0), (0.0, 1.0)]

    def release(chunk_rows):
        rows = InMemoryRows(X, y, chunk_rows)
        return release_standardisation(rows.reduce, n, 3, intercept_index=intercept, column_ranges=ranges, mu=0.02,
                                       rng=np.random.default_rng(4), ledger=PrivacyLedger(EPSILON, DELTA),
                                       declared=(False, True, True), response_range=(0.0, 2000.0))

    st, notes = release(None)
    assert st.passes == 2 + int(intercept is not None) and any("did not clear" in note for note in notes)
    if intercept is not None:
        # noise sd of a centre: width sqrt(3) / (n mu_round) with mu_round = 0.02 / sqrt(8): 8.2 for x (width 100),
        # 163 for y (width 2000); the margins are 4.4 sds (false-failure rate below 2e-5 for a fresh seed) and
        # exclude the ranges' midpoints 50 and 1000
        assert abs(st.centre[1] - 8.0) < 36.0 and abs(st.y_centre - 150.0) < 720.0
    for chunk_rows in (7, 100, n):
        got, got_notes = release(chunk_rows)
        for key in ("centre", "scale"):
            np.testing.assert_array_equal(getattr(got, key), getattr(st, key))
        assert got.y_centre == st.y_centre and got.passes == st.passes and got_notes == notes


class _NoReads:
    """RowChunks whose rows must never be read (refusals are decided from public n, d and the options)."""

    local = True

    def __init__(self, n: int, d: int) -> None:
        self.n, self.d = n, d

    def reduce(self, fn, combine):
        raise AssertionError("the data were read")


@pytest.mark.parametrize("method,kw,error", [
    ("robgd", {"gamma_fraction": 1.5}, MethodOptionError),
    ("robgd", {"max_rounds": 1}, MethodOptionError),
    ("ambssgd", {"trace": -1.0}, MethodOptionError),
    ("robgd", {"epsilon": 0.05}, InsufficientDataError),
    ("ambssgd", {"epsilon": 0.01}, InsufficientDataError),
])
def test_refusals_come_before_any_pass_and_spend_nothing(sim, method, kw, error):
    kw = dict(kw)
    epsilon = kw.pop("epsilon", EPSILON)
    led = PrivacyLedger(epsilon, DELTA)
    spec = get_method(method)
    with pytest.raises(error,
                       match=r"gamma_fraction must lie in \(0, 1\.0\)|max_rounds must be an integer >= 2"
                             r"|trace must be a positive|cannot clear its noise even for 2"):
        spec.fit(_NoReads(N, 3), FitContext(n=N, d=3, ledger=led, rng=np.random.default_rng(0)),
                 spec.parse_options(kw, delta=DELTA))
    assert led.steps == []
    acct = PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(error,
                       match=r"gamma_fraction must lie in \(0, 1\.0\)|max_rounds must be an integer >= 2"
                             r"|trace must be a positive|cannot clear its noise even for 2"):
        dpstats.dp_ols(sim.formula, DataFrameSource(sim.frame, 500), epsilon, DELTA, method=method, accountant=acct,
                       **kw)
    assert acct.spent == (0.0, 0.0)


def test_pass_functions_pickle(sim):
    """What a pass ships to a Dask worker pickles and computes the same partial result after the trip."""
    lay = robgd.RobGDLayout.draw(N, 0.2, 2, np.random.default_rng(1))
    fn = robgd._RoundPass(robgd._Preparer(lay, None), np.full(3, 0.1), 2.0, robgd.threshold_candidates(2.4))
    X, y = sim.X[100:900], sim.y[100:900]
    a, b = fn(X, y, 100), pickle.loads(pickle.dumps(fn))(X, y, 100)
    np.testing.assert_array_equal(a.counts.counts, b.counts.counts)
    np.testing.assert_array_equal(a.gradient.table.full, b.gradient.table.full)  # type: ignore[union-attr]
    st = Standardisation(np.array([0.0, 1.0, -2.0]), np.array([1.0, 3.0, 0.5]), 0, 0.25)
    sums = GroupSumsPass(RowPermutation.draw(N, np.random.default_rng(2)), 4, N // 4, np.array([1, 2]), True)
    for f in (Transformed(fn, st), sums):
        a, b = f(X, y, 100), pickle.loads(pickle.dumps(f))(X, y, 100)
        np.testing.assert_array_equal(a.counts.counts if hasattr(a, "counts") else a,
                                      b.counts.counts if hasattr(b, "counts") else b)


# --- the pieces ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n,window", [(1, 4), (5, 4), (1024, 1024), (2500, 1024), (3000, 1000), (77, 1)])
def test_windowed_order_is_a_bijection_of_every_window(n, window):
    order = WindowedOrder.draw(n, window, np.random.default_rng(n))
    rows = np.arange(n)
    j, q = order.local_positions(rows)
    assert np.array_equal(j, rows // window)
    for w in np.unique(j):
        size = min(window, n - w * window)
        assert np.array_equal(np.sort(q[j == w]), np.arange(size))
    cut = n // 3  # evaluated on any slice: the same positions
    parts = [order.local_positions(rows[:cut])[1], order.local_positions(rows[cut:])[1]]
    np.testing.assert_array_equal(np.concatenate(parts), q)


def test_robgd_layout_is_stratified_and_its_groups_stay_in_a_window():
    n, b = 5000, 2
    lay = robgd.RobGDLayout.draw(n, 0.2, b, np.random.default_rng(2))
    a = lay.a_index(np.arange(n))
    per, n_a = robgd.RobGDLayout.split_sizes(n, 0.2, b)
    assert per == 204 and np.array_equal(np.sort(a[a >= 0]), np.arange(n_a)) and n_a % b == 0
    window = np.arange(n) // robgd.WINDOW
    full = window < n // robgd.WINDOW
    assert np.all(np.bincount(window[(a >= 0) & full]) == per)
    groups, windows = a[a >= 0] // b, window[a >= 0]
    by_group = windows[np.argsort(groups, kind="stable")].reshape(-1, b)  # each group has exactly b rows
    assert np.all(by_group == by_group[:, :1])
    norm = lay.norm_groups(np.arange(n_a), 37)
    assert np.all(np.bincount(norm[norm >= 0]) == 37) and np.sum(norm < 0) == n_a % 37


def test_grouped_counts_merge_in_any_order_to_the_in_memory_counts():
    rng = np.random.default_rng(5)
    k, b = 300, 3
    values = rng.exponential(size=(k, b))
    expected = histogram_counts(slot_means(values), DISTANCE_GRID)
    groups, slots = np.repeat(np.arange(k), b), np.tile(np.arange(b), k)
    flat = values.ravel()
    cuts = [0, 1, 2, 50, 51, 400, 899, 900]
    parts = [GroupedCounts.of(groups[lo:hi], slots[lo:hi], flat[lo:hi], b, DISTANCE_GRID)
             for lo, hi in itertools.pairwise(cuts)]
    for order in (range(len(parts)), [3, 0, 6, 1, 5, 2, 4]):
        acc = None
        for i in order:
            part = GroupedCounts(parts[i].counts.copy(), parts[i].pending_ids, parts[i].pending_values,
                                 parts[i].pending_have, DISTANCE_GRID)
            acc = part if acc is None else acc.merge(part)
        assert acc is not None and acc.pending_ids.size == 0
        np.testing.assert_array_equal(acc.counts, expected)


def test_clip_table_gives_the_clipped_sum_at_every_candidate():
    rng = np.random.default_rng(6)
    X, r = rng.normal(size=(4000, 3)), rng.standard_cauchy(4000)
    r[:5] = 0.0
    cands = robgd.threshold_candidates(1.7)
    s = np.abs(r)
    np.testing.assert_array_equal(geometric_buckets(s, cands), np.searchsorted(cands, s, side="left"))
    edge = np.concatenate([s, cands[60:70]])  # values equal to a candidate are not clipped
    np.testing.assert_array_equal(geometric_buckets(edge, cands), np.searchsorted(cands, edge, side="left"))
    table = ClipTable.of(X[:1000], r[:1000], s[:1000], cands)
    for start in range(1000, 4000, 1000):
        part = ClipTable.of(X[start:start + 1000], r[start:start + 1000], s[start:start + 1000], cands)
        table.full += part.full
        table.scaled += part.scaled
    for j in (0, 55, 63, 64, 70, 127):
        direct = X.T @ np.clip(r, -cands[j], cands[j])
        np.testing.assert_allclose(table.at(cands, j), direct, rtol=1e-10, atol=1e-12 * max(1.0, cands[j]))
    assert math.isclose(float(np.abs(table.at(cands, 127) - X.T @ r).max()), 0.0, abs_tol=1e-6 * np.abs(r).sum())


def test_missing_drop_is_refused_for_methods_that_standardise_rows(sim, tmp_path):
    # robgd standardises rows itself, so a public null row would be a data point: missing='drop' is refused before
    # anything is read or spent, in memory and in chunks
    bad = sim.frame.copy()
    bad.loc[[3, 1500], "x1"] = np.nan
    p = tmp_path / "drop.parquet"
    bad.to_parquet(p, row_group_size=600)
    for data in (bad, str(p)):
        with pytest.raises(dpstats.errors.InvalidArgumentError, match="missing='drop'"):
            _fit(sim, data, "robgd", missing="drop", rounds=2, step_size=0.5)
