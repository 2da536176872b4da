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
from dpstats.errors import MissingDataError, NonFiniteValueError
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
@pytest.mark.parametrize("value, error", [(np.inf, NonFiniteValueError), (np.nan, MissingDataError)],
                         ids=["inf", "nan"])
def test_a_row_outside_the_domain_is_refused_in_chunks_before_anything_is_spent(method: str, bounded: bool,
                                                                               value: float, error: type) -> None:
    formula = "y ~ x1" if method == "theilsen" else "y ~ x1 + x2"
    bounds = {k: v for k, v in BOUNDS.items() if k in formula} if bounded else None
    bad = _frame()
    bad.loc[LAST, "x1"] = value
    acct = dpstats.PrivacyAccountant(10.0, 1e-4)
    for chunksize in (None, CHUNK):
        with pytest.raises(error) as info:
            dpstats.dp_ols(formula, bad, 4.0, 1e-6, method=method, bounds=bounds, accountant=acct, random_state=0,
                           chunksize=chunksize, **OPTIONS.get(method, {}))
        assert tuple(info.value.privacy_spent) == (0.0, 0.0), chunksize
    assert acct.spent == (0.0, 0.0)


def test_chunked_dpsgd_refuses_an_unsampled_non_finite_row_from_dask_too() -> None:
    dd = pytest.importorskip("dask.dataframe")
    bad = _frame()
    bad.loc[LAST, "x1"] = np.inf
    with pytest.raises(NonFiniteValueError) as info:
        dpstats.dp_ols("y ~ x1 + x2", dd.from_pandas(bad, npartitions=3), 4.0, 1e-6, method="dpsgd", random_state=0,
                       **OPTIONS["dpsgd"])
    assert tuple(info.value.privacy_spent) == (0.0, 0.0)


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
