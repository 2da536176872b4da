"""A CSV file's column types come from public facts, never from the data (red team, session 22).

Before: CSVSource took each column's type from how pandas parsed the first 1000 rows, and read text columns chunk
by chunk with pandas' own per-chunk inference.  Two neighbouring data sets inside the declared domain then had
different, deterministic outcomes, at no cost:

* ``C(g, levels=['1', '2', 'a'])``: with one row at level 'a' (among the first rows) the column was text and the
  fit ran; with that row at level '1' the column was numeric and the fit was refused ("levels ... are text but the
  column's dtype is float64 ... Nothing was read or spent", although the data had been read);
* with chunks of 10 rows, a chunk without an 'a' was read as integers, which are not among the text levels:
  refused, while its neighbour with an 'a' in that chunk fitted;
* a finite number written as a long integer (``100000000000000000000``, beyond uint64) made the column text: the
  fit was refused ("bounds were given for 'x', which is not numeric"), while its neighbour fitted.

A refusal that costs nothing and happens on one neighbour only is a one-bit oracle (epsilon = infinity).  The
checks here are deterministic: both neighbours must fit, with the same design and the same ledger.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.rows.sources import CSVSource

BOUNDS = {"x": (-1.0, 1.0), "y": (-2.0, 2.0)}
N = 60


def _write(path: Path, first_g: str, first_x: str = "0.5") -> str:
    """60 rows of x, g in {'1', '2'}, y; row 0 has g = first_g and x = first_x (as written in the file)."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, N).round(4)
    g = rng.choice(["1", "2"], N)
    y = np.clip(x + 0.3 * rng.normal(size=N), -2, 2).round(4)
    lines = ["x,g,y"] + [f"{a},{b},{c}" for a, b, c in zip(x, g, y, strict=True)]
    lines[1] = f"{first_x},{first_g},{y[0]}"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _fit(data: object, formula: str, **kw: object) -> dpstats.DPRegressionResults:
    return dpstats.dp_ols(formula, data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=3, **kw)


def _same_outcome(a: dpstats.DPRegressionResults, b: dpstats.DPRegressionResults) -> None:
    assert list(a.params.index) == list(b.params.index)
    assert [(s.name, s.sensitivity, s.noise_scale) for s in a.privacy.steps] == \
        [(s.name, s.sensitivity, s.noise_scale) for s in b.privacy.steps]


@pytest.mark.parametrize("formula, levels", [
    ("y ~ x + C(g, levels=['1', '2', 'a'])", None),
    ("y ~ x + g", {"g": ["1", "2", "a"]}),
])
@pytest.mark.parametrize("chunksize", [None, 10])
def test_a_rare_text_level_does_not_change_the_outcome(tmp_path, formula, levels, chunksize):
    with_a = _write(tmp_path / "a.csv", "a")
    without = _write(tmp_path / "one.csv", "1")
    kw = {} if chunksize is None else {"chunksize": chunksize}
    _same_outcome(_fit(with_a, formula, levels=levels, **kw), _fit(without, formula, levels=levels, **kw))


def test_a_long_integer_is_a_number(tmp_path):
    big = _write(tmp_path / "big.csv", "1", first_x="100000000000000000000")  # 1e20: clipped to the bound 1
    small = _write(tmp_path / "small.csv", "1", first_x="1")
    formula = "y ~ x + C(g, levels=['1', '2'])"
    a, b = _fit(big, formula), _fit(small, formula)
    _same_outcome(a, b)
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())  # the same clipped data, same seed


def test_types_are_read_from_the_header_only(tmp_path):
    src = CSVSource(_write(tmp_path / "a.csv", "a"))
    schema = src.with_text_columns({"g": ("a",)}).schema()
    assert len(schema) == 0 and schema["x"].dtype == float and schema["y"].dtype == float
    assert not pd.api.types.is_numeric_dtype(schema["g"].dtype)
    assert src.schema()["g"].dtype == float  # no declared text levels: a number, whatever the rows hold


@pytest.mark.parametrize("token", ["NA", "None", "null", "NaN", "n/a"])
@pytest.mark.parametrize("chunksize", [None, 10])
def test_a_declared_level_that_pandas_reads_as_missing_is_a_level(tmp_path, token, chunksize):
    """A declared text level such as "None" (no treatment) or the country code "NA" is a value of the domain: a
    row holding it fits from the file as in memory, instead of a free refusal (pandas' default missing tokens)."""
    formula, levels = "y ~ x + g", {"g": ["1", "2", token]}
    kw = {} if chunksize is None else {"chunksize": chunksize}
    path = _write(tmp_path / "t.csv", token)
    res = _fit(path, formula, levels=levels, **kw)
    _same_outcome(res, _fit(_write(tmp_path / "one.csv", "1"), formula, levels=levels, **kw))
    in_memory = _fit(pd.read_csv(path, keep_default_na=False, dtype={"g": str}), formula, levels=levels)
    np.testing.assert_array_equal(res.params.to_numpy(), in_memory.params.to_numpy())


def test_undeclared_missing_tokens_are_still_missing(tmp_path):
    """Only declared levels leave pandas' missing tokens: "NA" in a text column without that level, and in a
    numeric column, is still a missing value: a null row, counted by the charged missing-value screen with
    missing="raise" and not counted with "drop"; the non-private reference refuses it."""
    text = _write(tmp_path / "text.csv", "NA")
    number = _write(tmp_path / "number.csv", "1", first_x="NA")
    for path in (text, number):
        with pytest.raises(dpstats.errors.MissingDataError,
                           match=r"missing values in [gx]\. Impute missing values with a public rule"):
            dpstats.dp_ols("y ~ x + g", path, np.inf, method="ols", levels={"g": ["1", "2"]})
        screened = _fit(path, "y ~ x + g", levels={"g": ["1", "2"]})
        assert screened.privacy.steps[0].name.startswith("missing-value screen") and screened.params.notna().all()
        assert _fit(path, "y ~ x + g", levels={"g": ["1", "2"]}, missing="drop").params.notna().all()


@pytest.mark.parametrize("chunksize", [7, 1000])
def test_text_in_a_numeric_column_is_a_missing_value(tmp_path, chunksize):
    """Before: a field that does not read as a number in a column read as numbers refused the fit at no cost (a
    free refusal decided by one row).  Now it is a missing value, as an empty field is: the row is a null row that
    the charged missing-value screen counts, and the release is the same as with an empty field, whether the text
    is in the first chunk or in a later one (read again as text from that chunk on)."""
    text = _write(tmp_path / "t.csv", "1", first_x="secret-123")
    empty = _write(tmp_path / "e.csv", "1", first_x="")
    lines = Path(text).read_text().splitlines()
    lines[50] = "not a number," + lines[50].split(",", 1)[1]  # a later chunk when chunksize = 7
    Path(text).write_text("\n".join(lines) + "\n")
    lines = Path(empty).read_text().splitlines()
    lines[50] = "," + lines[50].split(",", 1)[1]
    Path(empty).write_text("\n".join(lines) + "\n")
    formula = "y ~ x + C(g, levels=['1', '2'])"
    a, b = (_fit(CSVSource(p, chunksize=chunksize), formula) for p in (text, empty))
    _same_outcome(a, b)
    assert a.params.equals(b.params) and a.privacy.steps[0].name.startswith("missing-value screen")
    assert "secret" not in str(a.summary())


def test_text_in_a_column_of_declared_dtype_is_a_missing_value(tmp_path):
    """A dtype the caller declares is the column's type, and a field that does not fit it is a missing value
    (tests/test_csv_lines.py): the same release as an empty field, on the same noise, the value never shown."""
    text, empty = (_write(tmp_path / f"{k}.csv", "1", first_x=v) for k, v in (("t", "secret-123"), ("e", "")))
    a, b = (_fit(CSVSource(p, dtype={"x": "float64"}), "y ~ x + C(g, levels=['1', '2'])") for p in (text, empty))
    assert a.params.equals(b.params) and "secret" not in str(a.summary())


def test_infer_rows_is_deprecated_and_ignored(tmp_path):
    path = _write(tmp_path / "a.csv", "a")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        src = CSVSource(path, infer_rows=5)
    assert any(issubclass(w.category, DeprecationWarning) and "infer_rows" in str(w.message) for w in caught)
    assert src.schema()["g"].dtype == float


def test_the_command_line_reads_csv_types_from_public_facts(tmp_path, capsys):
    from dpstats.cli import main  # noqa: PLC0415

    def fit(path: str) -> tuple[int, str]:
        code = main(["fit", "y ~ x + C(g, levels=['1', '2', 'a'])", "--data", path, "--epsilon", "1", "--method",
                     "ssp", "--bounds", '{"x": [-1, 1], "y": [-2, 2]}', "--seed", "0", "--format", "json"])
        out, err = capsys.readouterr()
        return code, err

    assert fit(_write(tmp_path / "a.csv", "a")) == (0, "")
    assert fit(_write(tmp_path / "one.csv", "1")) == (0, "")
    for row in (3, 40):  # a quote that is never closed: that line is a row of missing values, wherever it is
        bad = tmp_path / f"bad{row}.csv"
        lines = Path(_write(bad, "1")).read_text().splitlines()
        lines[row] = '"secret' + lines[row]
        bad.write_text("\n".join(lines) + "\n")
        code, err = fit(str(bad))
        assert code == 0 and "secret" not in err


def test_the_command_line_refuses_what_the_declarations_decide_before_reading_a_row(tmp_path, capsys):
    """A factor without declared levels is refused as such (from the formula and the header), whatever the rows
    hold: a file whose g column has a text level and one whose g is all numbers get the same message."""
    from dpstats.cli import main  # noqa: PLC0415

    errors = set()
    for first_g in ("a", "1"):
        code = main(["fit", "y ~ x + C(g)", "--data", _write(tmp_path / f"{first_g}.csv", first_g), "--epsilon", "1",
                     "--method", "ssp", "--bounds", '{"x": [-1, 1], "y": [-2, 2]}'])
        assert code == 2
        errors.add(capsys.readouterr().err)
    assert len(errors) == 1 and "the levels of 'C(g)' would be read from the private data" in errors.pop()


def test_a_blank_line_is_a_row_of_missing_values(tmp_path):
    """Before: pandas skipped a blank line, so n (public) told whether a line of the file was blank (a
    replace-one neighbour with one row blanked had n - 1 rows).  Now every line after the header is a row: a blank
    line is a row of missing values, released exactly as a line of empty fields is."""
    blank = _write(tmp_path / "b.csv", "1")
    empty = _write(tmp_path / "e.csv", "1")
    for path, line in ((blank, ""), (empty, ",,")):
        lines = Path(path).read_text().splitlines()
        lines[30] = line
        Path(path).write_text("\n".join(lines) + "\n")
    formula = "y ~ x + C(g, levels=['1', '2'])"
    a, b = (_fit(CSVSource(p, chunksize=16), formula) for p in (blank, empty))
    assert a.nobs == b.nobs == N
    _same_outcome(a, b)
    assert a.params.equals(b.params)
