"""Neighbours read from files and Dask: one row seen through a transform, an extreme value or a malformed field
changes nothing but the noise (a red-team of session 49).

``test_neighbour_transforms`` and ``test_neighbour_extremes`` replace one row of an in-memory frame;
``test_file_source_audit`` replaces one line of a file with malformed fields.  Here the replaced row reaches the fit
through a CSV file (``CSVSource``, a path, the command line), a Parquet file or a Dask DataFrame (three partitions,
or a layout with an empty partition and one that holds only the replaced row), and through the formula's code:
``y ~ x1 + I(x2 ** 2) + np.log(z) + C(g, levels=[...])`` and ``y ~ np.sqrt(z) + I(x1 / x2)`` (theilsen: one
predictor each).  The patterns: 1e300, -1e300, 5e-324, NaN, inf, a negative under ``np.log`` and ``np.sqrt``, a zero
under the division, a level outside the declared ones, the only row of a level moved to another, and in CSV text in
a number column, an empty field, a quoted field with a comma, a field of 300,000 characters, a line with too many or
too few fields.  Each pair is fitted with the same seed; what is not noise (``test_neighbour_extremes.Outcome``:
the exception's type and masked message, the warnings, the budget spent, the masked summary, LaTeX, HTML and JSON,
the info keys, the inference reason, the accountant's record, the method and the privacy steps) must be equal, and
no message may quote the replaced value.  Deterministic (fixed data and seeds): the false-failure rate is 0.  The
fast version runs four (source, method) cases with the patterns that reach each formula; the ``slow`` version every
private method and ``method="auto"`` on every source, with and without bounds, ``missing="raise"`` and ``"drop"``
(:data:`ITERATIVE` methods on Parquet and the lone-row Dask layout, with the fast patterns).

Found by this red-team and fixed: a CSV file is read by pandas' number parser until a chunk holds a field it cannot
read, and from that chunk on as text, each field converted by ``pd.to_numeric``.  The two readings differed:
the parser reads a chunk whose column holds only ``True``/``False`` as 1 and 0 (``pd.to_numeric``: missing), keeps
the sign of ``-0`` and rounds correctly (``pd.to_numeric`` rounded about one long number in twenty with a leading
``+`` to the neighbouring float).  So one text field anywhere in a file changed how every later row was read: a
file whose indicator column was written as True/False fitted, and its neighbour with ``abc`` in one response was
refused as "about 2000 of the 2000 rows have a missing value" (or, with ``missing="drop"``, fitted on null rows).
The text reading now gives every field the parser's value (:func:`dpstats.rows.csv_fields.text_number`).

The audits at the end run the worst pair of each source many times with fresh noise
(:func:`dpstats.privacy.audit.audit_mechanism`); their false-failure rate is stated at each.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from test_neighbour_extremes import VARIANTS, Outcome, _channels, _history, _masked, assert_same_outcome

import dpstats
from dpstats.methods.registry import available_methods
from dpstats.privacy.audit import audit_mechanism
from dpstats.rows.csv_fields import text_number, text_numbers
from dpstats.rows.sources import CSVSource, ParquetSource

EPSILON, DELTA, SEED = 4.0, 1e-6, 11
MAIN = "y ~ x1 + I(x2 ** 2) + np.log(z) + C(g, levels=['a', 'b', 'c'])"
DIVISION = "y ~ np.sqrt(z) + I(x1 / x2)"
ONE_PREDICTOR = ("y ~ np.log(z)", "y ~ I(x1 / x2)")  # theilsen fits one predictor
#: the bounds of each formula's terms (the division's own bounds: the raw x2's range holds 0)
BOUNDS = {MAIN: {"x1": (-3.0, 3.0), "x2": (-0.5, 0.25), "y": (-8.0, 8.0), "np.log(z)": (-5.0, 5.0)},
          DIVISION: {"np.sqrt(z)": (0.0, 5.0), "I(x1 / x2)": (-50.0, 50.0), "y": (-8.0, 8.0)},
          ONE_PREDICTOR[0]: {"np.log(z)": (-5.0, 5.0), "y": (-8.0, 8.0)},
          ONE_PREDICTOR[1]: {"I(x1 / x2)": (-50.0, 50.0), "y": (-8.0, 8.0)}}
COLUMNS = ["x1", "x2", "z", "g", "y"]
N, ROW, LONE = 2000, 37, 5  # rows; the row the patterns replace; the only row of level 'c'


@dataclasses.dataclass(frozen=True)
class Text:
    """A field written into the CSV file as it is (Parquet and Dask hold the value the CSV reading gives it)."""

    field: str
    value: Any


#: pattern: (row, {column: value}); "line" replaces the whole line (CSV only)
PATTERNS: dict[str, tuple[int, dict[str, Any]]] = {
    "x1=1e300": (ROW, {"x1": 1e300}),
    "x1=-1e300": (ROW, {"x1": -1e300}),
    "x1=5e-324": (ROW, {"x1": 5e-324}),
    "x1=nan": (ROW, {"x1": np.nan}),
    "x1=inf": (ROW, {"x1": np.inf}),
    "y=-1e300": (ROW, {"y": -1e300}),
    "(1e300)**2": (ROW, {"x2": 1e300}),
    "division by 0": (ROW, {"x2": 0.0}),
    "log(-1), sqrt(-1)": (ROW, {"z": -1.0}),
    "log(0)": (ROW, {"z": 0.0}),
    "undeclared level": (ROW, {"g": "zzz"}),
    "lone level gone": (LONE, {"g": "a"}),
    "text in x1": (ROW, {"x1": Text("abc", np.nan)}),
    "empty x1": (ROW, {"x1": Text("", np.nan)}),
    "quoted comma in g": (ROW, {"g": Text('"a,b"', "a,b")}),
    "long g": (ROW, {"g": Text("a" * 300_000, "a" * 300_000)}),
    "long x1": (ROW, {"x1": Text("1" * 300_000, np.inf)}),
    "too many fields": (ROW, {"line": "extra"}),
    "too few fields": (ROW, {"line": "few"}),
}
CSV_ONLY = {"quoted comma in g", "long g", "long x1", "too many fields", "too few fields"}
#: what a message must never quote (the replaced values as they are written; a text the base fit shows too, such as
#: LaTeX's \tabcolsep, is not a quote)
QUOTED = ("abc", "zzz", "1e+300", "1e300", "5e-324", "a,b", "aaaaaaaaaaaa", "111111111111")


def _frame(n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(-0.5, 0.25, size=n),
                       "z": np.exp(rng.normal(size=n)), "g": rng.choice(["a", "b"], size=n).astype(object)})
    df.loc[LONE, "g"] = "c"
    df["y"] = 1.0 + df.x1 - 2.0 * df.x2 + 0.5 * (df.g == "b") + 0.3 * rng.normal(size=n)
    return df[COLUMNS]


def _field(value: Any) -> str:
    if isinstance(value, Text):
        return value.field
    if isinstance(value, str):
        return value
    return "" if np.isnan(value) else repr(float(value))


def _csv_text(frame: pd.DataFrame, pattern: str | None) -> str:
    lines = [",".join(_field(v) for v in row) for row in frame.itertuples(index=False)]
    if pattern is not None:
        row, values = PATTERNS[pattern]
        fields = lines[row].split(",")
        if "line" in values:
            lines[row] = lines[row] + ",9" if values["line"] == "extra" else ",".join(fields[:2])
        else:
            for column, value in values.items():
                fields[COLUMNS.index(column)] = _field(value)
            lines[row] = ",".join(fields)
    return ",".join(COLUMNS) + "\n" + "\n".join(lines) + "\n"


def _typed(frame: pd.DataFrame, pattern: str | None) -> pd.DataFrame:
    """The neighbour as typed data (the value the CSV reading gives a written field)."""
    out = frame.copy()
    if pattern is not None:
        row, values = PATTERNS[pattern]
        for column, value in values.items():
            out.at[row, column] = value.value if isinstance(value, Text) else value
    return out


def _data(source: str, frame: pd.DataFrame, pattern: str | None, tmp: Path) -> Any:
    name = "base" if pattern is None else "neighbour"
    if source in ("csv", "csv path"):
        path = tmp / f"{name}.csv"
        path.write_text(_csv_text(frame, pattern))
        return CSVSource(path, chunksize=700) if source == "csv" else str(path)
    typed = _typed(frame, pattern)
    if source == "parquet":
        pytest.importorskip("pyarrow")
        path = tmp / f"{name}.parquet"
        typed.to_parquet(path, row_group_size=700)
        return ParquetSource(path)
    dd = pytest.importorskip("dask.dataframe")
    if source == "dask":
        return dd.from_pandas(typed, npartitions=3, sort=False)
    # an empty partition, and one that holds only the replaced row (or the row ROW, for the lone level)
    row = PATTERNS[pattern][0] if pattern is not None else ROW
    pieces = [typed.iloc[:row], typed.iloc[row:row + 1], typed.iloc[0:0], typed.iloc[row + 1:]]
    return dd.concat([dd.from_pandas(piece, npartitions=1, sort=False) for piece in pieces])


def _fit(method: str, formula: str, data: Any, bounded: bool, missing: str) -> tuple[Outcome, str]:
    """What the fit shows apart from its noise, and all its text unmasked (to look for quoted values)."""
    accountant = dpstats.PrivacyAccountant(100.0, 0.5)
    options = VARIANTS.get(method, [{}])[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = dpstats.dp_ols(formula, data, epsilon=EPSILON, delta=DELTA, method=method,
                                 bounds=BOUNDS[formula] if bounded else None, random_state=SEED,
                                 accountant=accountant, missing=missing, **options)
        except Exception as exc:  # noqa: BLE001 - the point is to compare whatever escapes
            outcome = Outcome((type(exc).__name__, _masked(str(exc))), getattr(exc, "privacy_spent", None),
                              frozenset(), "", True, (_history(accountant),))
            shown = str(exc)
        else:
            outcome = Outcome(None, (res.privacy.epsilon_spent, res.privacy.delta_spent), frozenset(),
                              _masked(str(res.summary())), bool(np.all(np.isfinite(res.params.to_numpy()))),
                              (*_channels(res, accountant), res.method, _masked(repr(res.privacy.steps))))
            shown = str(res.summary()) + res.summary().as_latex(privacy=True) + res.summary().as_html()
    warned = frozenset((w.category.__name__, _masked(str(w.message))) for w in caught)
    shown += " ".join(str(w.message) for w in caught)
    return dataclasses.replace(outcome, warned=warned), shown


def _uses(formula: str, pattern: str) -> bool:
    values = PATTERNS[pattern][1]
    return "line" in values or any(column in formula for column in values)


def _check(source: str, method: str, bounded: bool, missing: str, patterns: dict[str, list[str]] | None,
           tmp: Path) -> None:
    """Every pattern (``patterns``: those given for each formula) against the base, with the same seed."""
    frame = _frame()
    formulas = ONE_PREDICTOR if method == "theilsen" else (MAIN, DIVISION)
    for formula in formulas:
        base, base_shown = _fit(method, formula, _data(source, frame, None, tmp), bounded, missing)
        for pattern in (list(PATTERNS) if patterns is None else patterns[formula]):
            if not _uses(formula, pattern) or (pattern in CSV_ONLY and not source.startswith("csv")):
                continue
            other, shown = _fit(method, formula, _data(source, frame, pattern, tmp), bounded, missing)
            where = f"{source}, {formula}: {pattern}"
            assert_same_outcome(base, other, where)
            assert not [q for q in QUOTED if q in shown and q not in base_shown], where


SOURCES = ["csv", "csv path", "parquet", "dask", "dask lone partition"]
#: the fast version: per formula, the patterns that reach its transforms (and text and a short line in CSV)
FAST_PATTERNS = {MAIN: ["x1=1e300", "undeclared level", "text in x1", "too few fields"],
                 DIVISION: ["division by 0", "log(-1), sqrt(-1)"]}
FAST_CASES = [("csv", "ssp", True, "raise"), ("csv path", "tukey", False, "raise"),
              ("parquet", "adassp", True, "drop"), ("dask lone partition", "tukey", False, "raise")]


#: the methods that make a pass per round or step (``method="auto"`` without bounds is pgd): their slow cases read
#: Parquet and the Dask layout with the lone row only, with the fast patterns (in memory and in chunks of a frame,
#: ``test_neighbour_transforms`` and ``test_neighbour_extremes`` run them all)
ITERATIVE = {"pgd", "robgd", "ambssgd", "dpsgd", "lasso", "auto"}


def _cases() -> list[Any]:
    cases = []
    for source in SOURCES:
        for name, spec in [*sorted(available_methods().items()), ("auto", None)]:
            if spec is not None and not spec.private or name in ITERATIVE and source not in ("parquet",
                                                                                                "dask lone partition"):
                continue
            for bounded in ([True] if spec is not None and spec.needs_bounds else [False, True]):
                for missing in (["raise", "drop"] if spec is not None and spec.null_rows else ["raise"]):
                    cases.append(pytest.param(source, name, bounded, missing,
                                              id=f"{source}-{name}-{'bounds' if bounded else 'no bounds'}-{missing}"))
    return cases


@pytest.mark.parametrize("source, method, bounded, missing", FAST_CASES)
def test_one_row_of_a_file_or_dask_frame_changes_nothing_but_noise(tmp_path, source, method, bounded, missing):
    _check(source, method, bounded, missing, FAST_PATTERNS, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("source, method, bounded, missing", _cases())
def test_one_row_of_a_file_or_dask_frame_changes_nothing_but_noise_slow(tmp_path, source, method, bounded,
                                                                       missing):
    _check(source, method, bounded, missing, FAST_PATTERNS if method in ITERATIVE else None, tmp_path)


# -- the CSV reading: one field never changes how another is read ---------------------------------------------------

#: fields pandas' number parser reads where pd.to_numeric, the text reading before, gave another value (the boolean
#: tokens in a chunk of them, -0 in a chunk of whole numbers, long numbers with a leading +), and a few more edges
PARSER_FIELDS = ["True", "TRUE", "true", "False", "FALSE", "false", "-0", "-00", "+0", "-0.", "-0e0",
                 "+88081255591.47756190208794", "+6975070199695516387", "+13.4684991124612484331470843e+161",
                 "inf", "-inf", "+inf", "Infinity", "-iNF", "1e-400", "5e-324", "2.4703282292062328e-324",
                 "1.7976931348623159e308", "1e309", " 5", "5 ", "+.5", "-.5e-3", "1.e5", "00012", "1" * 400]


def _parser_reading(fields: list[str]) -> np.ndarray | None:
    """pandas' number parser on a chunk of these fields (None where it cannot read them all)."""
    try:
        return pd.read_csv(io.StringIO("x\n" + "\n".join(fields) + "\n"), dtype={"x": float}).x.to_numpy()
    except ValueError:
        return None


def _same_floats(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))))


def _random_numbers(count: int) -> list[str]:
    rng = random.Random(1)

    def digits(most: int) -> str:
        return "".join(rng.choice("0123456789") for _ in range(rng.randint(1, most)))

    out = []
    for _ in range(count):
        text = rng.choice(["", "-", "+"]) + digits(25)
        if rng.random() < 0.7:
            text += "." + digits(25)
        if rng.random() < 0.4:
            text += rng.choice(["e", "E"]) + rng.choice(["", "-", "+"]) + str(rng.randint(0, 400))
        out.append(text)
    return out


def test_the_text_reading_gives_every_field_the_parsers_value():
    """Each field the number parser reads (alone, in a chunk of booleans, in a chunk of whole numbers, and 20,000
    random decimal numbers) gets the same float, bit for bit, from :func:`text_number`.  Before:
    ``pd.to_numeric`` read True/False as missing, -0 as 0 beside whole numbers, and rounded about one number in
    twenty with a leading + to the neighbouring float."""
    for field in PARSER_FIELDS:
        for chunk in ([field], [field, "True"], [field, "1"], [field, "0.5"]):
            parsed = _parser_reading(chunk)
            if parsed is not None:
                text = pd.read_csv(io.StringIO("x\n" + "\n".join(chunk) + "\n"), dtype={"x": str}).x
                assert _same_floats(parsed, text_numbers(text).to_numpy()), chunk
    fields = _random_numbers(20_000)
    parsed = _parser_reading(fields)
    assert parsed is not None
    assert _same_floats(parsed, np.array([text_number(f) for f in fields]))
    assert np.isnan(text_number("1_000")) and np.isnan(text_number("١٢")) and np.isnan(text_number("abc"))


def _indicator_csv(tmp: Path, line: int | None, field: str = "abc", n: int = 1000) -> CSVSource:
    """x is an indicator written as True/False (a float column: no dtype declared), plus -0 and long numbers with
    a leading + in w; ``line`` (if given) gets ``field`` as its response."""
    rng = np.random.default_rng(0)
    x = rng.random(n) < 0.5
    y = 1 + 2 * x + rng.normal(0, 1, n)
    w = [f"+{v:.22f}" if i % 3 else "-0" for i, v in enumerate(rng.uniform(1e10, 1e11, n))]
    lines = [f"{'True' if a else 'False'},{b},{float(c)!r}" for a, b, c in zip(x, w, y, strict=True)]
    if line is not None:
        lines[line] = lines[line].rsplit(",", 1)[0] + "," + field
    path = tmp / f"indicator{line}.csv"
    path.write_text("x,w,y\n" + "\n".join(lines) + "\n")
    return CSVSource(path, chunksize=250)


@pytest.mark.parametrize("line", [3, 600], ids=["first chunk", "third chunk"])
def test_a_text_field_changes_how_no_other_row_of_a_csv_file_is_read(tmp_path, line):
    """The file read with one response replaced by text: every other row holds exactly the values of the file
    without it (before: from that chunk on, True/False were missing, -0 was 0 and the long numbers moved)."""
    base = pd.concat(list(_indicator_csv(tmp_path, None).frames(["x", "w", "y"])), ignore_index=True)
    other = pd.concat(list(_indicator_csv(tmp_path, line).frames(["x", "w", "y"])), ignore_index=True)
    assert np.isnan(other.y[line])
    keep = np.arange(len(base)) != line
    for column in ("x", "w", "y"):
        assert _same_floats(base[column].to_numpy()[keep], other[column].to_numpy()[keep]), column
    assert set(base.x) == {0.0, 1.0}


@pytest.mark.parametrize("missing", ["raise", "drop"])
def test_a_text_field_in_a_file_of_true_false_indicators_changes_nothing_but_noise(tmp_path, missing):
    """Before: the file fitted, and its neighbour was refused as "about 1000 of the 1000 rows have a missing value"
    (``missing="raise"``) or fitted on null rows (``"drop"``), from one field."""
    kwargs = {"method": "ssp", "bounds": {"x": (0.0, 1.0), "y": (-5.0, 8.0)}, "missing": missing}
    outcomes = []
    for line in (None, 3):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = dpstats.dp_ols("y ~ x", _indicator_csv(tmp_path, line), epsilon=1.0, delta=1e-6, random_state=3,
                                 **kwargs)
        outcomes.append((_masked(str(res.summary())), [str(w.message) for w in caught], res.params["x"]))
    assert outcomes[0][:2] == outcomes[1][:2]
    assert outcomes[1][2] == pytest.approx(outcomes[0][2], abs=0.5)  # the same fit up to the one row's effect


# -- the command line ----------------------------------------------------------------------------------------------

def _cli(path: Path, formula: str, method: str, missing: str, fmt: str) -> tuple[Any, str, str]:
    from dpstats.cli import main

    argv = ["fit", formula, "--data", str(path), "--epsilon", "4", "--delta", "1e-6", "--seed", "11", "--method",
            method, "--missing", missing, "--format", fmt, "--bounds", json.dumps(BOUNDS[formula])]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("method, missing, fmt", [("ssp", "raise", "text"),
                                                  pytest.param("tukey", "raise", "json", marks=pytest.mark.slow),
                                                  pytest.param("ssp", "drop", "latex", marks=pytest.mark.slow)])
def test_the_command_line_prints_the_same_for_neighbouring_csv_files(tmp_path, method, missing, fmt):
    """stdout and stderr equal with every number masked, and no replaced value quoted."""
    frame = _frame()
    for formula in (MAIN, DIVISION):
        path = tmp_path / "data.csv"
        path.write_text(_csv_text(frame, None))
        code, out, err = _cli(path, formula, method, missing, fmt)
        for pattern in ("x1=1e300", "text in x1", "long g", "too many fields", "division by 0"):
            if not _uses(formula, pattern):
                continue
            path.write_text(_csv_text(frame, pattern))
            other = _cli(path, formula, method, missing, fmt)
            assert other[0] == code, pattern
            assert _masked(other[1]) == _masked(out) and _masked(other[2]) == _masked(err), pattern
            assert not [q for q in QUOTED if q in other[1] + other[2] and q not in out + err], pattern


# -- audits: the worst pair of each source, many runs ---------------------------------------------------------------

ALPHA = 1e-3  # false-failure rate of each audit (a correct fit exceeds the claim with probability at most alpha)
RAISED, WARNED = 1e6, 2e6  # a run that raises or warns (the coefficients are of order 1)


def _audit_run(formula: str, method: str, bounds: dict[str, Any] | None, **kwargs: Any) -> Any:
    def run(data: Any, rng: np.random.Generator) -> float:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                res = dpstats.dp_ols(formula, data, epsilon=1.0, delta=1e-6, method=method, bounds=bounds,
                                     random_state=rng, **kwargs)
            except Exception:  # noqa: BLE001 - a refusal is an output too
                return RAISED
        return WARNED if caught else float(res.params.iloc[-1])
    return run


def test_audit_a_text_field_beside_csv_indicators(tmp_path):
    """The pair that leaked (before: a deterministic refusal on the neighbour only, a bound of 1.24 > 1 with 60
    runs).  False-failure rate alpha = 1e-3."""
    run = _audit_run("y ~ x", "ssp", {"x": (0.0, 1.0), "y": (-5.0, 8.0)})
    res = audit_mechanism(run, _indicator_csv(tmp_path, None, n=400), _indicator_csv(tmp_path, 3, n=400), runs=60,
                          delta=1e-6, alpha=ALPHA, seed=51)
    assert res.epsilon_lower_bound <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("source, pattern", [("csv", "long x1"), ("parquet", "division by 0"),
                                             ("dask lone partition", "x1=1e300")])
def test_audit_the_worst_row_of_each_source(tmp_path, source, pattern):
    """tukey without bounds (every finite double enters) on ``y ~ np.sqrt(z) + I(x1 / x2)`` and the pattern that
    puts the most extreme value into it; 300 runs per data set.  False-failure rate alpha = 1e-3 per audit."""
    frame = _frame()
    base = _data(source, frame, None, tmp_path)
    other = _data(source, frame, pattern, tmp_path)
    res = audit_mechanism(_audit_run(DIVISION, "tukey", None), base, other, runs=300, delta=1e-6, alpha=ALPHA,
                          seed=52)
    assert res.epsilon_lower_bound <= 1.0
