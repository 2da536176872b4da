"""Parquet data: the way each column is read never depends on one row's value (dpstats.rows.sources.
_column_readings).

A writer types an untyped (object) column from its values: a file in which a column has no value stores it as
Arrow type ``null``, whole numbers as integers, one text cell as text.  Before, any difference of types between
the files refused the data set at no cost, so the value of one row (the only non-missing one of a column in a
file, or the only row of a file) decided between a fit and a free refusal (fuzz audits, session 31).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dpstats
from dpstats.errors import DataTypeError, MissingDataError
from dpstats.rows.sources import ParquetSource, _column_readings

N = 400
BOUNDS = {"x": (0, 10), "y": (-10, 40)}


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


def test_decimal_columns_read_as_floats(tmp_path):
    """A database export stores x as decimal128 (pandas would read objects, which bounds refuse as not numeric):
    read as float64, the fit is the one on the same numbers as floats; one file of decimals beside one of floats
    reads the same way."""
    import decimal  # noqa: PLC0415

    frame = _frame().drop(columns="note")
    frame["x"] = np.round(frame["x"], 2)
    as_decimals = pa.table({"x": pa.array([decimal.Decimal(f"{v:.2f}") for v in frame["x"]], pa.decimal128(6, 2)),
                            "y": frame["y"].to_numpy()})
    pq.write_table(as_decimals, tmp_path / "dec.parquet")
    expected = _fit(frame).params.to_numpy()
    np.testing.assert_array_equal(_fit(str(tmp_path / "dec.parquet")).params.to_numpy(), expected)
    (tmp_path / "mixed").mkdir()
    pq.write_table(as_decimals.slice(0, N // 2), tmp_path / "mixed" / "p0.parquet")
    frame.iloc[N // 2:].to_parquet(tmp_path / "mixed" / "p1.parquet", index=False)
    np.testing.assert_array_equal(_fit(str(tmp_path / "mixed")).params.to_numpy(), expected)


def test_a_column_with_one_value_is_read_alike_whatever_that_value(tmp_path):
    """A single file whose object column s has one non-null cell: 'a', None or 7 store it as text, null or
    integers; it is read as objects in each case (pandas' metadata: object), so C(s, levels=...) is read cell by
    cell and the three data sets give the same outcome: a fit with missing="drop" on the same noise (7 is outside
    the levels, like None a missing value), the charged missing-value screen with "raise"."""
    outcomes = []
    for value in ("a", None, 7):
        frame = _frame()
        frame["s"] = pd.Series([None] * N, dtype=object)
        frame.loc[N - 1, "s"] = value
        path = tmp_path / f"one_{value}.parquet"
        frame.to_parquet(path)
        assert str(ParquetSource(str(path)).schema()["s"].dtype) == "object"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dropped = dpstats.dp_ols("y ~ x + C(s, levels=['a', 'b'])", str(path), 1.0, 1e-6, method="pgd",
                                     missing="drop", bounds=BOUNDS, random_state=3)
        screened = "rows have a missing value or a value outside the declared levels in at least one of y, x, s"
        with pytest.raises(MissingDataError, match=screened) as err, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dpstats.dp_ols("y ~ x + C(s, levels=['a', 'b'])", str(path), 1.0, 1e-6, method="pgd", bounds=BOUNDS,
                           random_state=3)
        assert err.value.privacy_spent[0] > 0
        outcomes.append((dropped.privacy.epsilon_spent, type(err.value).__name__))
    assert len(set(outcomes)) == 1


@pytest.mark.parametrize("value", [7, 2.5, True, "text"])
def test_one_row_file_of_any_type_is_read_with_the_others(tmp_path, value):
    """A one-row file whose object column u holds 'q' or another kind of value (stored as text, integer, float or
    boolean): the files are read alike and release the same fit on the same noise."""
    fits = []
    for tag, cell in (("base", "q"), ("neighbour", value)):
        frame = _frame()
        first, last = frame.iloc[: N - 1].copy(), frame.iloc[N - 1:].copy()
        first["u"] = pd.Series(["p"] * (N - 1), dtype=object, index=first.index)
        last["u"] = pd.Series([cell], dtype=object, index=last.index)
        (tmp_path / tag).mkdir(exist_ok=True)
        first.to_parquet(tmp_path / tag / "p0.parquet")
        last.to_parquet(tmp_path / tag / "p1.parquet")
        fits.append(_fit(str(tmp_path / tag)).params.to_numpy())
    np.testing.assert_array_equal(fits[0], fits[1])


def test_integers_beyond_two_to_the_53_read_as_floats_beside_a_float_file(tmp_path):
    """int64 in one file (with 2^62 + 1) and float64 in another: read as float64, never refused."""
    frame = _frame()
    frame["k"] = np.arange(N) % 3
    first, last = frame.iloc[: N - 1].copy(), frame.iloc[N - 1:].copy()
    first.loc[5, "k"] = 2**62 + 1
    last["k"] = last["k"].astype(np.float64) + 0.5
    (tmp_path / "k").mkdir()
    first.to_parquet(tmp_path / "k" / "p0.parquet")
    last.to_parquet(tmp_path / "k" / "p1.parquet")
    assert str(ParquetSource(str(tmp_path / "k")).schema()["k"].dtype) == "float64"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dpstats.dp_ols("y ~ x + k", str(tmp_path / "k"), 1.0, 1e-6, method="ssp",
                             bounds={"x": (0, 10), "k": (0, 3), "y": (-10, 40)}, random_state=0)
    assert np.all(np.isfinite(res.params))


def test_the_readings_rule():
    def schema(kind: pa.DataType, pandas: str | None = None) -> pa.Schema:
        columns = [{"name": "a", "numpy_type": pandas}]
        meta = None if pandas is None else {b"pandas": json.dumps({"columns": columns}).encode()}
        return pa.schema([("a", kind)], metadata=meta)
    def read(*schemas: pa.Schema) -> tuple[frozenset[str], frozenset[str], dict[str, pa.DataType]]:
        readings = _column_readings(schemas)
        return readings.objects, readings.floats, dict(readings.casts)
    none: frozenset[str] = frozenset()
    assert read(schema(pa.int64()), schema(pa.float64())) == (none, {"a"}, {})
    assert read(schema(pa.bool_()), schema(pa.int8())) == (none, {"a"}, {})
    assert read(schema(pa.null()), schema(pa.string())) == (none, none, {"a": pa.string()})
    assert read(schema(pa.float64()), schema(pa.null(), pandas="object")) == (none, none, {"a": pa.float64()})
    assert read(schema(pa.int64()), schema(pa.null()), schema(pa.float64())) == (none, {"a"}, {})
    assert read(schema(pa.null())) == ({"a"}, none, {})
    assert read(schema(pa.string()), schema(pa.int64())) == ({"a"}, none, {})
    assert read(schema(pa.int64(), pandas="object")) == ({"a"}, none, {})
    assert read(schema(pa.null()), schema(pa.int64(), pandas="object")) == ({"a"}, none, {})
    assert read(schema(pa.float64(), pandas="float64")) == (none, none, {})


@pytest.mark.parametrize("rows", [1, 3])
def test_a_numeric_column_without_values_in_one_file_keeps_its_type(tmp_path, rows):
    """Files written from records, the last holding `rows` rows: its x is None on every row (a file the writer
    stores as Arrow null, declared `object` in pandas' metadata) or holds 5.0 in its last row.  Both data sets fit
    with x as a number, and each releases what the same records release in memory
    (fuzz audit, session 32: the null file made the whole column read as objects, and the fit was refused at no
    cost because x then needed declared levels)."""
    rng = np.random.default_rng(0)
    x = rng.uniform(1, 10, N)
    records = [{"x": float(v), "y": float(2 * v + e)} for v, e in zip(x, rng.normal(0, 1, N), strict=True)]
    for last in (5.0, None):
        recs = [dict(r) for r in records]
        for r in recs[N - rows:]:
            r["x"] = None
        recs[-1]["x"] = last
        directory = tmp_path / f"x{last}"
        directory.mkdir()
        pd.DataFrame(recs[:N - rows]).to_parquet(directory / "p0.parquet")
        pd.DataFrame(recs[N - rows:]).to_parquet(directory / "p1.parquet")
        assert ParquetSource(str(directory)).schema()["x"].dtype == np.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dpstats.dp_ols("y ~ x", str(directory), 1.0, 1e-6, method="ssp", missing="drop", bounds=BOUNDS,
                                 random_state=3)
            memory = dpstats.dp_ols("y ~ x", pd.DataFrame(recs), 1.0, 1e-6, method="ssp", missing="drop",
                                    bounds=BOUNDS, random_state=3)
        assert np.all(np.isfinite(res.params))
        assert res.privacy.epsilon_spent == pytest.approx(1.0)
        np.testing.assert_allclose(res.params, memory.params, rtol=1e-9)


def test_files_with_different_columns_are_refused_from_their_schemas(tmp_path):
    frame = _frame()
    (tmp_path / "d").mkdir()
    frame.iloc[:200].to_parquet(tmp_path / "d" / "p0.parquet")
    frame.iloc[200:].rename(columns={"note": "other"}).to_parquet(tmp_path / "d" / "p1.parquet")
    with pytest.raises(DataTypeError, match="different columns") as err:
        _fit(str(tmp_path / "d"))
    assert err.value.privacy_spent == (0.0, 0.0)
