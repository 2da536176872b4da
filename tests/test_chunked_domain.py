"""A row outside the guarantee's domain (an infinite or missing value) is refused before anything is spent, in
chunks as in memory, by every private method and ``auto``.

Before the fix, a method without a first pass (pgd without bounds, robgd, ambssgd, dpsgd) read such a row only in
a pass after its first charge: the refusal came with part or all of the budget spent, and chunked DP-SGD, which
evaluates only each step's Poisson sample, released a fit when no step sampled the row (in memory the same data
are refused, spending nothing).  Now the fit's ledger runs one pass over every row, releasing nothing, before its
first charge.  Every fit is deterministic (fixed data and seeds), so the false-failure rate is 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import MissingDataError
from dpstats.methods.registry import available_methods

N, CHUNK = 1500, 400
BOUNDS = {"x1": (-3.0, 3.0), "x2": (-0.5, 0.25), "y": (-8.0, 8.0)}
OPTIONS: dict[str, dict[str, Any]] = {
    "lasso": {"sparsity": 2, "iterations": 9}, "ssp": {"bootstrap": 100}, "adassp": {"bootstrap": 100},
    "dpsgd": {"epochs": 1, "batch_size": 200}, "robgd": {"max_rounds": 40}, "ambssgd": {"max_rounds": 40}}
LAST = N - 2  # a row DP-SGD's steps never sample at these settings and seed (the old code released the fit)


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.normal(size=N), "x2": rng.uniform(-0.5, 0.25, N)})
    df["y"] = df.x1 + rng.normal(size=N)
    return df


def _cases() -> list[Any]:
    cases = []
    for name, spec in sorted(available_methods().items()):
        if spec.private:
            for bounded in ([True] if spec.needs_bounds else [False, True]):
                cases.append(pytest.param(name, bounded, id=f"{name}-{'bounds' if bounded else 'no bounds'}"))
    return [*cases, pytest.param("auto", False, id="auto-no bounds"), pytest.param("auto", True, id="auto-bounds")]


@pytest.mark.parametrize("method, bounded", _cases())
def test_a_missing_value_goes_through_the_charged_screen_in_memory_and_in_chunks(method: str, bounded: bool) -> None:
    """One missing value (in a row DP-SGD's steps never sample): the row is a public null row and the fit runs, its
    missing-value screen charged before anything else; a thousand missing values: the screen refuses, having spent
    only its own share, before the method releases anything.  The same in memory and in chunks."""
    formula = "y ~ x1" if method == "theilsen" else "y ~ x1 + x2"
    bounds = {k: v for k, v in BOUNDS.items() if k in formula} if bounded else None
    one, many = _frame(), _frame()
    one.loc[LAST, "x1"] = np.nan
    many.loc[:999, "x1"] = np.nan
    for chunksize in (None, CHUNK):
        kw = dict(method=method, bounds=bounds, random_state=0, chunksize=chunksize, **OPTIONS.get(method, {}))
        res = dpstats.dp_ols(formula, one, 4.0, 1e-6, **kw)
        assert res.privacy.steps[0].name.startswith("missing-value screen"), chunksize
        assert np.isfinite(res.params).all() and res.privacy.epsilon_spent <= 4.0 * (1 + 1e-9)
        acct = dpstats.PrivacyAccountant(10.0, 1e-4)
        with pytest.raises(MissingDataError, match="noisy count") as info:
            dpstats.dp_ols(formula, many, 4.0, 1e-6, accountant=acct, **kw)
        spent = tuple(info.value.privacy_spent)
        assert 0.0 < spent[0] < 4.0 and acct.spent[0] == pytest.approx(spent[0]), chunksize


@pytest.mark.parametrize("method, bounded", _cases())
def test_an_infinite_value_is_read_as_zero_in_memory_and_in_chunks(method: str, bounded: bool) -> None:
    """An infinite value is set to 0 on its row (a public map of the row; a refusal would answer for free whether
    any row holds one): the fit equals, release for release, the fit of the same data with 0 there."""
    formula = "y ~ x1" if method == "theilsen" else "y ~ x1 + x2"
    bounds = {k: v for k, v in BOUNDS.items() if k in formula} if bounded else None
    bad, zero = _frame(), _frame()
    bad.loc[LAST, "x1"], zero.loc[LAST, "x1"] = np.inf, 0.0
    for chunksize in (None, CHUNK):
        fits = [dpstats.dp_ols(formula, frame, 4.0, 1e-6, method=method, bounds=bounds, random_state=0,
                               chunksize=chunksize, **OPTIONS.get(method, {})) for frame in (bad, zero)]
        np.testing.assert_array_equal(fits[0].params.to_numpy(), fits[1].params.to_numpy())
        assert fits[0].privacy.epsilon_spent == fits[1].privacy.epsilon_spent


def test_chunked_dpsgd_reads_an_unsampled_infinite_row_from_dask_as_zero() -> None:
    dd = pytest.importorskip("dask.dataframe")
    bad, zero = _frame(), _frame()
    bad.loc[LAST, "x1"], zero.loc[LAST, "x1"] = np.inf, 0.0
    fits = [dpstats.dp_ols("y ~ x1 + x2", dd.from_pandas(frame, npartitions=3), 4.0, 1e-6, method="dpsgd",
                           random_state=0, **OPTIONS["dpsgd"]) for frame in (bad, zero)]
    np.testing.assert_array_equal(fits[0].params.to_numpy(), fits[1].params.to_numpy())


def test_the_check_reads_every_row_once_and_changes_no_release() -> None:
    """The check pass is one more pass (stated in the note) and leaves the released values as they were."""
    df = _frame()
    a = dpstats.dp_ols("y ~ x1 + x2", df, 4.0, 1e-6, method="dpsgd", random_state=0, **OPTIONS["dpsgd"])
    b = dpstats.dp_ols("y ~ x1 + x2", df, 4.0, 1e-6, method="dpsgd", random_state=0, chunksize=CHUNK,
                       **OPTIONS["dpsgd"])
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())
    steps = b.info["steps"]
    assert any(f"read in chunks ({steps + 1} passes over the data, counting and checking every row included)" in note
               for note in b.privacy.notes)


@pytest.mark.parametrize("method", ["ssp", "pgd", "dpsgd"])
def test_a_dask_partition_that_cannot_be_computed_is_a_typed_domain_check(tmp_path, method):
    """dd.read_csv parses every partition with the dtypes it inferred from the first rows; one text field further
    on (in any column of the file) fails its partition when the fit computes it.  That reached the fit as an
    InternalFitError ("a bug"); it is the documented domain check, a DataTypeError that quotes no value, spent
    nothing.  A failure of dpstats's own code inside a Dask task still passes as itself."""
    dd = pytest.importorskip("dask.dataframe")
    from dpstats.errors import DataTypeError
    df = _frame().astype({"x1": object})
    df["note"] = pd.Series(np.arange(N), dtype=object)
    df.loc[N - 10, "note"] = "SECRET_987654"
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    frame = dd.read_csv(path, blocksize=20_000)
    bounds = BOUNDS if method == "ssp" else None
    with pytest.raises(DataTypeError, match="a partition of the Dask DataFrame could not be computed") as info:
        dpstats.dp_ols("y ~ x1", frame, 1.0, method=method, bounds=bounds, random_state=0,
                       **OPTIONS.get(method, {}))
    assert info.value.privacy_spent == (0.0, 0.0)
    assert "SECRET" not in str(info.value) and "987654" not in str(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None


@pytest.mark.parametrize("method", ["ssp", "pgd", "tukey", "dpsgd"])
@pytest.mark.parametrize("defect", ["a column missing", "a column twice", "not a DataFrame"])
def test_a_dask_partition_without_the_schemas_columns_is_the_typed_domain_check(method, defect):
    """A Dask DataFrame built from its partitions without checking them (``dd.from_delayed(...,
    verify_meta=False)``) can hold a partition that lacks a column of its schema, holds one twice, or is not a
    DataFrame.  Where the formula used every column of the frame (and for a repeated column, always), that partition
    reached dpstats's own task and failed there: an InternalFitError ("a bug", KeyError or AttributeError), while the
    same partition with a column the formula does not use was the documented domain check.  Each is now the domain
    check, a DataTypeError that quotes nothing and spends nothing."""
    import dask

    dd = pytest.importorskip("dask.dataframe")
    from dpstats.errors import DataTypeError
    df = _frame()
    parts = [df.iloc[i:i + CHUNK].copy() for i in range(0, N, CHUNK)]
    parts[1] = {"a column missing": parts[1].drop(columns=["x2"]),
                "a column twice": pd.concat([parts[1], parts[1][["x2"]]], axis=1), "not a DataFrame": None}[defect]
    frame = dd.from_delayed([dask.delayed(lambda p: p)(p) for p in parts], meta=df.iloc[:0], verify_meta=False)
    bounds = BOUNDS if method == "ssp" else None
    with pytest.raises(DataTypeError, match="a partition of the Dask DataFrame could not be computed") as info:
        dpstats.dp_ols("y ~ x1 + x2", frame, 1.0, method=method, bounds=bounds, random_state=0,
                       **OPTIONS.get(method, {}))
    assert info.value.privacy_spent == (0.0, 0.0)
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_a_failure_of_dpstats_code_in_a_dask_task_is_not_read_as_the_data(monkeypatch):
    dd = pytest.importorskip("dask.dataframe")
    from dpstats.errors import InternalFitError
    from dpstats.rows import chunked

    def broken(self, *args, **kwargs):
        raise IndexError("a bug")

    monkeypatch.setattr(chunked.ChunkEvaluator, "evaluate_prepared", broken)
    with pytest.raises(InternalFitError,
                       match="reading the data failed with IndexError; its message is withheld") as info:
        dpstats.dp_ols("y ~ x1", dd.from_pandas(_frame(), npartitions=3), 1.0, method="ssp", bounds=BOUNDS,
                       random_state=0)
    assert info.value.original_type == "IndexError"
