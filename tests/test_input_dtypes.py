"""The input side, as an adversary who controls the data's values and dtypes (session 52's dtype red-team).

The contract (``docs/privacy.md``, ``docs/architecture.md``): messages, warnings and exception types are built from
public facts only; once the data are touched no exception escapes untyped or uncharged; a refusal decided by
private values is charged; a type the caller declares is a public fact, and what it decides is decided from the
declaration, before anything is spent.  The red-team fitted neighbouring data sets (one row changed) through every
method, ``missing="raise"`` and ``"drop"``, in memory, in chunks, from Dask partitions whose dtypes differ from the
schema, through the command line and ``predict()``, over pandas' nullable, categorical, text, Arrow, sparse, date,
period, complex, extreme-integer and narrow-float dtypes and object columns mixing every kind of cell.  The tests
below pin what it found and fixed; every test is deterministic (fixed data and seeds), so its false-failure rate
is 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.cli import main
from dpstats.errors import DataTypeError, UndeclaredLevelsError
from dpstats.rows.sources import CSVSource

BOUNDS = {"x": (0.0, 1.0), "y": (0.0, 5.0)}
LEVELS_FORMULA = "y ~ x + C(g, levels=['a', 'b', 'c'])"


@pytest.fixture()
def csv_path(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    n = 300
    x = rng.uniform(0, 1, n)
    g = np.array(["a", "b", "c"])[np.arange(n) % 3]
    df = pd.DataFrame({"x": x, "g": g, "y": 1 + 2 * x + 0.5 * (np.arange(n) % 3)})
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def test_a_csv_column_declared_category_without_categories_is_text(csv_path: Path) -> None:
    """``CSVSource(dtype={"g": "category"})`` (pandas' categorical type without categories; the module's docstring
    lists ``category`` among the text types) failed every chunk's conversion (its categories were None): with
    ``C(g, levels=[...])`` the fit reserved and charged its whole budget, then raised an ``InternalFitError`` ("a
    bug"), whatever the rows held.  It is now text, read against the levels the call declares, and fits as the
    column declared ``str`` does; without declared levels it is refused from the schema, nothing spent."""
    kw = {"epsilon": 2.0, "bounds": BOUNDS, "random_state": 1}
    res = dpstats.dp_ols(LEVELS_FORMULA, CSVSource(str(csv_path), dtype={"g": "category"}, chunksize=50), **kw)
    text = dpstats.dp_ols(LEVELS_FORMULA, CSVSource(str(csv_path), dtype={"g": "str"}, chunksize=50), **kw)
    pd.testing.assert_series_equal(res.params, text.params)
    with pytest.raises(UndeclaredLevelsError, match="would be read from the private data") as caught:
        dpstats.dp_ols("y ~ x + g", CSVSource(str(csv_path), dtype={"g": "category"}), **kw)
    assert caught.value.privacy_spent == (0.0, 0.0)


@pytest.mark.parametrize("declared", ["decimal128(10, 2)[pyarrow]", "int64[nonsense]"])
def test_a_declared_type_pandas_cannot_parse_is_a_typed_refusal(csv_path: Path, declared: str) -> None:
    """pandas refuses some type names with a ``NotImplementedError`` or a ``ValueError`` (not the ``TypeError``
    that was caught): ``CSVSource(dtype=...)`` let it escape untyped.  Decided from the declaration only."""
    with pytest.raises(DataTypeError, match="a type pandas does not know"):
        CSVSource(str(csv_path), dtype={"x": declared})


def _cli(capsys: pytest.CaptureFixture[str], csv_path: Path, dtypes: dict[str, str]) -> tuple[int, str]:
    code = main(["fit", LEVELS_FORMULA, "--data", str(csv_path), "--epsilon", "1", "--seed", "0",
                 "--bounds", json.dumps(BOUNDS), "--dtypes", json.dumps(dtypes)])
    return code, capsys.readouterr().err


def test_a_dtypes_name_numpy_cannot_parse_is_one_line(capsys: pytest.CaptureFixture[str], csv_path: Path) -> None:
    """``--dtypes '{"x": "decimal128(10, 2)[pyarrow]"}'``: numpy refuses the name with a ``ValueError``, which
    escaped the command line as a traceback (only a ``TypeError`` was caught)."""
    code, err = _cli(capsys, csv_path, {"x": "decimal128(10, 2)[pyarrow]"})
    assert code == 2 and err.startswith("error: --dtypes") and "numpy type name" in err and "Traceback" not in err


@pytest.mark.parametrize("declared", ["datetime64[ns]", "complex128", "timedelta64[s]"])
def test_a_dtypes_type_no_field_can_take_is_refused_as_the_declaration(capsys: pytest.CaptureFixture[str],
                                                                       csv_path: Path, declared: str) -> None:
    """``--dtypes`` with a date, complex or duration type was refused as "cannot read ... as CSV: its header is not
    text, or the file cannot be split into lines", blaming a file that was fine; the refusal is the declaration's
    (as ``CSVSource`` says), and now says so."""
    code, err = _cli(capsys, csv_path, {"x": declared})
    assert code == 2 and err.startswith("error: --dtypes: column 'x' is declared as ")
    assert "cannot always be read as" in err and "cannot read" not in err and "Traceback" not in err
