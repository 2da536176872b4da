"""Parquet data sets of several files: the column types they are read with never depend on one row's value
(dpstats.rows.sources._common_schema).

A writer types an untyped (object) column from its values: a file in which a column has no value stores it as
Arrow type ``null``, and whole numbers as integers where another file holds fractions.  Before, any difference of
types between the files refused the data set at no cost, so the value of one row (the only non-missing one of a
column in a file) decided between a fit and a free refusal.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dpstats
from dpstats.errors import DataTypeError, DPStatsError
from dpstats.rows.sources import ParquetSource, _common_schema

N = 400


def _frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(1, 10, N)
    return pd.DataFrame({"x": x, "note": pd.Series(["a"] * N, dtype=object), "y": 2 * x + rng.normal(0, 1, N)})


def _write(directory: Path, frame: pd.DataFrame, cut: int) -> list[str]:
    directory.mkdir()
    paths = []
    for i, part in enumerate((frame.iloc[:cut], frame.iloc[cut:])):
        path = directory / f"part{i}.parquet"
        part.to_parquet(path)
        paths.append(str(path))
    return paths


def _fit(data: object, **kw: object) -> dpstats.DPRegressionResults:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpstats.dp_ols("y ~ x", data, 1.0, 1e-6, method="ssp", bounds={"x": (0, 10), "y": (-10, 40)},
                              random_state=3, **kw)


def test_a_column_without_values_in_one_file_reads_with_the_others(tmp_path):
    """The last file's 'note' holds one value ('a') or none (None): the files are read alike either way, and
    the released fit is the same (the column is not in the formula)."""
    frame = _frame()
    frame.loc[N - 2:, "note"] = None
    with_value, without = frame.copy(), frame.copy()
    with_value.loc[N - 1, "note"] = "a"
    paths_a, paths_b = _write(tmp_path / "a", with_value, N - 2), _write(tmp_path / "b", without, N - 2)
    assert pq.read_schema(paths_a[1]).field("note").type != pq.read_schema(paths_b[1]).field("note").type
    fit_a, fit_b = _fit(paths_a), _fit(paths_b)
    np.testing.assert_array_equal(fit_a.params.to_numpy(), fit_b.params.to_numpy())
    assert _fit(str(tmp_path / "b")).privacy.epsilon_spent > 0


def test_whole_numbers_in_one_file_and_fractions_in_another_read_as_floats(tmp_path):
    """x stored as int64 in one file and float64 in the other: read as float64, the same rows as one file."""
    frame = _frame()
    frame["x"] = np.round(frame["x"])
    ints, floats = frame.iloc[: N // 2].copy(), frame.iloc[N // 2:].copy()
    ints["x"] = ints["x"].astype("int64")
    (tmp_path / "m").mkdir()
    ints.to_parquet(tmp_path / "m" / "p0.parquet")
    floats.to_parquet(tmp_path / "m" / "p1.parquet")
    frame.to_parquet(tmp_path / "one.parquet")
    np.testing.assert_array_equal(_fit(str(tmp_path / "m")).params.to_numpy(),
                                  _fit(str(tmp_path / "one.parquet")).params.to_numpy())


def test_a_column_of_no_values_is_a_column_of_missing_numbers(tmp_path):
    """A column null in every file reads as float64 missing values: used in the formula it is the charged
    missing-value screen that refuses (as it would with one value present), never a free type refusal."""
    frame = _frame()
    frame["z"] = pd.Series([None] * N, dtype=object)
    frame.to_parquet(tmp_path / "z.parquet")
    assert pq.read_schema(tmp_path / "z.parquet").field("z").type == pa.null()
    assert str(ParquetSource(str(tmp_path / "z.parquet")).schema()["z"].dtype) == "float64"
    with pytest.raises(DPStatsError) as err, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dpstats.dp_ols("y ~ z", str(tmp_path / "z.parquet"), 1.0, 1e-6, method="ssp",
                       bounds={"z": (0, 1), "y": (-10, 40)}, random_state=0)
    assert err.value.privacy_spent[0] > 0


def test_the_common_schema_rule():
    s = pa.schema
    assert _common_schema([s([("a", pa.int64())]), s([("a", pa.float64())])]).field("a").type == pa.float64()
    assert _common_schema([s([("a", pa.null())]), s([("a", pa.string())])]).field("a").type == pa.string()
    assert _common_schema([s([("a", pa.null())]), s([("a", pa.null())])]).field("a").type == pa.float64()
    assert _common_schema([s([("a", pa.string())]), s([("a", pa.large_string())])]).field("a").type == \
        pa.large_string()
    assert _common_schema([s([("a", pa.bool_())]), s([("a", pa.int8())])]).field("a").type == pa.float64()
    with pytest.raises(DataTypeError, match="column 'a' with different types"):
        _common_schema([s([("a", pa.string())]), s([("a", pa.int64())])])


def test_files_with_different_columns_are_refused_from_their_schemas(tmp_path):
    frame = _frame()
    (tmp_path / "d").mkdir()
    frame.iloc[:200].to_parquet(tmp_path / "d" / "p0.parquet")
    frame.iloc[200:].rename(columns={"note": "other"}).to_parquet(tmp_path / "d" / "p1.parquet")
    with pytest.raises(DataTypeError, match="different columns") as err:
        _fit(str(tmp_path / "d"))
    assert err.value.privacy_spent == (0.0, 0.0)
