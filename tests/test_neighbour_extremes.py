"""Neighbouring data sets that differ in ONE extreme row: every private method behaves the same on both, except
through its released noise (issue 15, item 4).

The methods that need no bounds (tukey, robgd, ambssgd, dpsgd) take every finite double, up to about 1.8e308;
their squares, products and sums over rows overflow.  A fit that turns such a row into inf or NaN leaks it three
ways, none of which noise can hide: a NaN passes a noise release and the API refuses it, numpy prints an
overflow warning only on the neighbour that has the row, or an exception escapes.  The bounded methods clip
every row to the declared bounds first, so they should never see the difference; the tests check them too.

For every private method in the registry (new methods are covered automatically; a method-specific option is
added only where the method cannot run without one, or to keep the fit cheap), with and without declared
bounds where the method allows, in memory and read in chunks, a base data set D is fitted and then, for each
extreme pattern, its neighbour D' with one row replaced, with the same seed for the noise.  The test compares
what is not noise:

* the exception (type and message with the numbers masked), if any;
* the set of warnings (category and full message);
* the budget spent (``privacy_spent``: the report's on success, the exception's otherwise), to 1e-9 relative:
  noisy_ols calibrates its last release from a released lower bound on lambda_min, so the grid rounding of
  that release's sensitivity moves the composed epsilon in its 14th digit;
* the summary text (report, notes, tables) with every number masked and spacing collapsed;
* the other renderings and records a user sees, masked the same way: the summary's LaTeX (with the privacy
  report) and HTML, the structure of ``to_json()`` (every key and every text, numbers masked), the keys of
  ``info``, the inference reason, and the history of the fit's ``PrivacyAccountant`` (label, status); the R^2
  line of the LaTeX is masked like the verdict: R^2 and the reason it is not available are post-processing of
  released sums, and noisy_ols calibrates those releases from its released lambda_min bound, so at one seed a
  replaced row changes their noise, not only their values;
* that every released coefficient is finite.

For the bound-free methods it also asserts that the extreme-row fits return (the base fit returns at this n).

The budget (epsilon = 4) keeps every decision that depends on released values (histogram clearances, the PTR
test, fall backs) far from its threshold, so the one-count difference a replaced row makes never flips it here:
the comparison sees the code paths, not the noise.  Everything is deterministic (fixed data and seeds, no
Monte Carlo), so the false-failure rate is 0.  The ``slow`` version uses n = 20,000 (the size at which the
holes were measured), more patterns and two positions of the extreme row.
"""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.methods.registry import MethodSpec, available_methods

LARGEST = float(np.finfo(float).max)
EPSILON, DELTA, SEED = 4.0, 1e-6, 11
FORMULA = "y ~ x1 + x2"
# x2's range is narrower than 1, so the public rescaling divides by a half-width below 1 (an overflow risk)
BOUNDS = {"x1": (-3.0, 3.0), "x2": (-0.5, 0.25), "y": (-8.0, 8.0)}
CHUNK_ROWS = 700  # rows per chunk (at least; a tenth of the rows for larger n, so that passes stay cheap)

#: One extreme row: the values it puts in each column (the other columns keep the row's ordinary values).
PATTERNS: dict[str, dict[str, float]] = {
    "x1=1e300": {"x1": 1e300},
    "x1=-1e300": {"x1": -1e300},
    "x2=1e154": {"x2": 1e154},
    "x1=largest": {"x1": LARGEST},
    "x1=5e-324": {"x1": 5e-324},
    "y=-1e300": {"y": -1e300},
    "x2=-1e154,y=1e300": {"x2": -1e154, "y": 1e300},
    "mixed signs": {"x1": 1e300, "x2": -1e300, "y": 1e300},
}
FAST_PATTERNS = ["x1=1e300", "x2=1e154", "x1=5e-324", "y=-1e300", "mixed signs"]
SLOW_PATTERNS = list(PATTERNS) + ["all largest"]
PATTERNS["all largest"] = {"x1": -LARGEST, "x2": LARGEST, "y": -LARGEST}

#: Options that keep a fit cheap, or that a method cannot run without; variants run a method several ways.
VARIANTS: dict[str, list[dict[str, Any]]] = {
    # iterations=9 (the default N0 here before the accumulated-noise rule, which takes 22 parts of 90 rows): with
    # smaller parts the replaced row's one-sensitivity move flips the fit's "not settled" note
    "lasso": [{"sparsity": 2, "iterations": 9}],
    "ssp": [{"bootstrap": 100}],
    "adassp": [{"bootstrap": 100}],
    "dpsgd": [{"epochs": 1, "batch_size": 500}],
    "tukey": [{}, {"blocks": "moments"}],
    "robgd": [{"max_rounds": 40}],  # with bounds, n = 20,000 would give 1,417 rounds (one pass each when chunked)
    "ambssgd": [{"max_rounds": 40}],
}

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\bnan\b|\binf\b", re.IGNORECASE)


#: The theory block's verdict ("the privacy error is larger than the sampling error for 1 of 3 coefficients"):
#: post-processing of two released, noisy figures per coefficient, so a replaced row flips it at the same seed as it
#: moves any released number (pgd's error block moves when a coefficient's tail-correction test flips); it ends at a
#: full stop before a space, since the coefficients it names can hold one (C(g)[T.b])
_VERDICT = re.compile(r"From the released values: .*?\.(?=\s|$)", re.DOTALL)


def _masked(text: str) -> str:
    """Text with every number replaced by '#', the theory block's verdict by a placeholder, rules (runs of = or -)
    shortened and spacing collapsed, so that only its words and structure remain."""
    text = _NUMBER.sub("#", text)  # first: a number's decimal point would end the verdict's sentence
    text = text.replace("<#", "#")  # a released p-value below the table's floor prints as "<0.001"
    text = _VERDICT.sub("From the released values: (verdict).", text)
    text = re.sub(r"[=\-]{3,}", "=", text)
    return re.sub(r"\s+", " ", text).strip()


@dataclass(frozen=True)
class Outcome:
    """What a fit shows apart from its noise."""

    error: tuple[str, str] | None
    spent: tuple[float, float] | None
    warned: frozenset[tuple[str, str]]
    text: str
    finite: bool
    channels: tuple[str, ...] = ()


#: the LaTeX footnote's R^2 line (module docstring)
_RSQUARED = re.compile(r"R\$\^2\$: .*")


def _skeleton(value: Any) -> Any:
    """A JSON value with every number replaced by '#' and every text masked: its structure and words."""
    if isinstance(value, dict):
        return {key: _skeleton(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_skeleton(item) for item in value]
    return _masked(value) if isinstance(value, str) else value if value is None or isinstance(value, bool) else "#"


def _channels(res: Any, accountant: dpstats.PrivacyAccountant) -> tuple[str, ...]:
    """The renderings and records of a fit beside its summary text, masked (the sign and the floor of a released
    number, '$-$' and '\\textless{}' in LaTeX, '&lt;' in HTML, are the number's formatting)."""
    summary = res.summary()
    latex = _RSQUARED.sub("R^2: (released)", summary.as_latex(privacy=True).replace("$-$", "-"))
    return (_masked(latex.replace("\\textless{}", "<")), _masked(summary.as_html().replace("&lt;", "<")),
            json.dumps(_skeleton(json.loads(res.to_json())), sort_keys=True), " ".join(sorted(res.info)),
            _masked(str(res.inference_reason)), _history(accountant))


def _history(accountant: dpstats.PrivacyAccountant) -> str:
    return "; ".join(f"{spend.label}: {spend.status}" for spend in accountant.history)


def _fit(method: str, frame: pd.DataFrame, bounded: bool, chunked: bool, options: dict[str, Any]) -> Outcome:
    chunk_rows = max(CHUNK_ROWS, len(frame) // 10)
    accountant = dpstats.PrivacyAccountant(100.0, 0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = dpstats.dp_ols(FORMULA, frame, epsilon=EPSILON, delta=DELTA, method=method,
                                 bounds=BOUNDS if bounded else None, random_state=SEED, accountant=accountant,
                                 chunksize=chunk_rows if chunked else None, **options)
        except Exception as exc:  # noqa: BLE001 - the point is to compare whatever escapes
            spent = getattr(exc, "privacy_spent", None)
            outcome = Outcome((type(exc).__name__, _masked(str(exc))), spent, frozenset(), "", True,
                              (_history(accountant),))
        else:
            outcome = Outcome(None, (res.privacy.epsilon_spent, res.privacy.delta_spent), frozenset(),
                              _masked(str(res.summary())), bool(np.all(np.isfinite(res.params.to_numpy()))),
                              _channels(res, accountant))
    warned = frozenset((w.category.__name__, str(w.message)) for w in caught)
    return dataclasses.replace(outcome, warned=warned)


def _frame(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(-0.5, 0.25, size=n)})
    df["y"] = 1.0 + df.x1 - 2.0 * df.x2 + 0.3 * rng.normal(size=n)
    return df


def _neighbour(frame: pd.DataFrame, pattern: str, row: int) -> pd.DataFrame:
    out = frame.copy()
    for column, value in PATTERNS[pattern].items():
        out.loc[row, column] = value
    return out


def _cases(slow: bool) -> list[Any]:
    """(method, bounded, chunked, options) for every private method in the registry."""
    cases = []
    for name, spec in sorted(available_methods().items()):
        if not spec.private:
            continue
        for options in VARIANTS.get(name, [{}]):
            for bounded in ([True] if spec.needs_bounds else [False, True]):
                for chunked in ([False, True] if spec.supports_chunks else [False]):
                    if not slow and chunked and (bounded or name == "dpsgd") and not spec.needs_bounds:
                        continue  # the fast version reads chunks once per bound-free method
                    label = f"{name}{options or ''}-{'bounds' if bounded else 'no bounds'}-" \
                            f"{'chunks' if chunked else 'memory'}"
                    cases.append(pytest.param(name, bounded, chunked, options, id=label))
    return cases


#: warning categories a fit may give from public facts alone (never from the data)
PUBLIC_WARNINGS = {"UnscaledFitWarning"}


def _rows(n: int, k: int, positions: int) -> list[int]:
    """Rows that pattern k replaces: spread over the data, so that they fall in different parts of each
    method's public layout (samples, splits, blocks, mini-batches)."""
    return [(37 + 613 * k + (n // positions) * j) % n for j in range(positions)]


def assert_same_outcome(base: Outcome, other: Outcome, where: str) -> None:
    """The neighbour's fit shows what the base fit shows (error, warnings, spend, masked text, channels), and its
    numbers are finite."""
    assert other.error == base.error, where
    assert other.warned == base.warned, where
    if base.spent is None:
        assert other.spent is None, where
    else:
        assert other.spent is not None, where
        np.testing.assert_allclose(other.spent, base.spent, rtol=1e-9, err_msg=where)
    assert other.text == base.text, where
    assert other.channels == base.channels, where
    assert other.finite, where


def _check(method: str, bounded: bool, chunked: bool, options: dict[str, Any], n: int, patterns: list[str],
           positions: int) -> None:
    spec: MethodSpec = available_methods()[method]
    frame = _frame(n)
    base = _fit(method, frame, bounded, chunked, options)
    if not spec.needs_bounds:
        assert base.error is None, f"the ordinary fit must return at n={n}: {base.error}"
    # warnings decided from public facts only (which bounds were declared, the options) may be given; every
    # neighbour below must give exactly the same ones
    assert {category for category, _ in base.warned} <= PUBLIC_WARNINGS, base.warned
    for k, pattern in enumerate(patterns):
        for row in _rows(n, k, positions):
            other = _fit(method, _neighbour(frame, pattern, row), bounded, chunked, options)
            assert_same_outcome(base, other, f"{pattern} in row {row}")


@pytest.mark.parametrize("method, bounded, chunked, options", _cases(slow=False))
def test_one_extreme_row_changes_nothing_but_noise(method: str, bounded: bool, chunked: bool,
                                                   options: dict[str, Any]) -> None:
    _check(method, bounded, chunked, options, n=2000, patterns=FAST_PATTERNS, positions=1)


@pytest.mark.slow
@pytest.mark.parametrize("method, bounded, chunked, options", _cases(slow=True))
def test_one_extreme_row_changes_nothing_but_noise_slow(method: str, bounded: bool, chunked: bool,
                                                        options: dict[str, Any]) -> None:
    _check(method, bounded, chunked, options, n=20_000, patterns=SLOW_PATTERNS, positions=2)


def test_the_patterns_are_extreme_and_finite() -> None:
    """The neighbours differ from the base in one row, whose values are finite and overflow when squared (or
    are subnormal)."""
    frame = _frame(100)
    for k, pattern in enumerate(PATTERNS):
        (row,) = _rows(100, k, 1)
        other = _neighbour(frame, pattern, row)
        changed = np.flatnonzero((other.to_numpy() != frame.to_numpy()).any(axis=1))
        assert changed.tolist() == [row]
        values = other.loc[row, list(PATTERNS[pattern])].to_numpy(dtype=float)
        assert np.all(np.isfinite(values))
        with np.errstate(over="ignore"):
            assert np.all(~np.isfinite(values * values * 10.0) | (np.abs(values) < 1e-300))


_LONG_N = 200


def _long_double_fit(entry: str, x0: Any) -> tuple[set[str], tuple[float, float]]:
    """One fit whose row 0 of x is ``x0`` (the other rows long doubles in [0, 1]): the warnings it emitted
    (category and message) and what it spent."""
    from dpstats.sklearn import DPLinearRegression

    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, _LONG_N)
    y = 2 * x + rng.normal(0, 0.1, _LONG_N)
    xs = np.r_[np.longdouble(x0), x[1:].astype(np.longdouble)]
    objects = [x0, *x[1:]]  # a Python list with one long double element
    df = pd.DataFrame({"x": xs, "y": y})
    kw: dict[str, Any] = {"epsilon": 1.0, "delta": 1e-6, "method": "ssp"}
    bounds = {"x": (0.0, 1.0), "y": (-1.0, 3.0)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if entry == "dp_ols transform":
            res = dpstats.dp_ols("y ~ I(x * 2)", df, bounds=bounds, **kw)
        elif entry == "dp_ols chunked":
            res = dpstats.dp_ols("y ~ x", df, bounds=bounds, chunksize=50, **kw)
        elif entry == "dp_ols dict of lists":
            res = dpstats.dp_ols("y ~ x", {"x": objects, "y": list(y)}, bounds=bounds, **kw)
        elif entry == "dp_ols_arrays":
            res = dpstats.dp_ols_arrays(xs.reshape(-1, 1), y, x_bounds=[(0, 1)], y_bounds=(-1, 3),
                                        intercept=False, **kw)
        elif entry == "dp_ols_arrays list of rows":
            res = dpstats.dp_ols_arrays([[v] for v in objects], y, x_bounds=[(0, 1)], y_bounds=(-1, 3),
                                        intercept=False, **kw)
        else:
            est = DPLinearRegression(method="ssp", epsilon=1.0, delta=1e-6, bounds=(0, 1), y_bounds=(-1, 3))
            X = np.array(objects, dtype=object).reshape(-1, 1) if entry == "sklearn objects" else xs.reshape(-1, 1)
            res = est.fit(X, y)
    report = res.privacy_report_ if isinstance(res, DPLinearRegression) else res.privacy
    return ({f"{w.category.__name__}: {w.message}" for w in caught},
            (report.epsilon_spent, report.delta_spent))


@pytest.mark.parametrize("entry", ["dp_ols transform", "dp_ols chunked", "dp_ols dict of lists", "dp_ols_arrays",
                                   "dp_ols_arrays list of rows", "sklearn", "sklearn objects"])
def test_a_long_double_beyond_the_float_range_warns_nothing(entry: str) -> None:
    """Neighbours whose row 0 of x is 0.5 or ``np.longdouble('1e4000')`` (finite, beyond float64): both fit, spend
    the same and emit the same warnings (before: numpy's "overflow encountered in cast", or "in
    number_or_missing", only on the neighbour with the long double: a free answer to whether a row is there)."""
    base = _long_double_fit(entry, np.longdouble(0.5))
    extreme = _long_double_fit(entry, np.longdouble("1e4000"))
    assert extreme == base
    assert not any(w.startswith("RuntimeWarning") for w in extreme[0])
    assert base[1][0] == pytest.approx(1.0)


#: pgd's reparametrised designs: the intercept model of a constant implicit in a factor's full dummies (without
#: bounds) and a power beside slopes by group without the main effect (with bounds), with a factor whose level a
#: neighbour's row can leave out or not declare
REPARAMETRISED = {
    "implicit intercept": ("y ~ 0 + C(g) + x1 + I(x1 ** 2)", None),
    "factored power": ("y ~ C(g) + C(g):x1 + I(x1 ** 2)", {"x1": (-3.0, 3.0), "y": (-8.0, 8.0)}),
}
#: the patterns of a row of the factored designs: extreme values, and values that are not finite, missing or an
#: undeclared level (with ``missing="drop"`` they make a public null row; with ``"raise"`` the screen counts them)
FACTORED_PATTERNS: dict[str, dict[str, Any]] = {
    "x1=1e300": {"x1": 1e300}, "x1=largest": {"x1": LARGEST}, "x1=1e154": {"x1": 1e154}, "x1=5e-324": {"x1": 5e-324},
    "y=-1e300": {"y": -1e300}, "mixed signs": {"x1": -1e300, "y": LARGEST}, "x1=nan": {"x1": np.nan},
    "x1=inf": {"x1": np.inf}, "y=None": {"y": None}, "g=None": {"g": None}, "g undeclared": {"g": "zz"},
}


#: pgd's note that a released spread sits at its floor: post-processing of the released scales, which the replaced
#: row moves by their sensitivity, and the spread of the power I(x1 ** 2) within x1's released domain (centre +- 8
#: released scales) is near that floor at this n, so the note is left out of the comparison, like the verdict
_FLOORED = re.compile(r"Privacy: Note: pgd: the released spread of .*?(?=Privacy: |Theory: |$)")


def _factored_fit(design: str, frame: Any, missing: str, chunked: str) -> Outcome:
    """A pgd fit of a reparametrised design, in memory, in chunks of a frame or from a Dask DataFrame."""
    formula, bounds = REPARAMETRISED[design]
    data = frame
    if chunked == "dask":
        dd = pytest.importorskip("dask.dataframe")
        data = dd.from_pandas(frame, npartitions=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = dpstats.dp_ols(formula, data, epsilon=EPSILON, delta=DELTA, method="pgd", bounds=bounds,
                                 levels={"g": ["a", "b", "c"]}, missing=missing, random_state=SEED,
                                 chunksize=CHUNK_ROWS if chunked == "chunks" else None)
        except Exception as exc:  # noqa: BLE001 - the point is to compare whatever escapes
            outcome = Outcome((type(exc).__name__, _masked(str(exc))), getattr(exc, "privacy_spent", None),
                              frozenset(), "", True)
        else:
            text = _masked(_FLOORED.sub("", re.sub(r"\s+", " ", str(res.summary()))))
            outcome = Outcome(None, (res.privacy.epsilon_spent, res.privacy.delta_spent), frozenset(), text,
                              bool(np.all(np.isfinite(res.params.to_numpy()))))
    warned = frozenset((w.category.__name__, str(w.message)) for w in caught)
    return Outcome(outcome.error, outcome.spent, warned, outcome.text, outcome.finite)


def _factored_check(design: str, missing: str, chunked: str, patterns: list[str]) -> None:
    frame = _frame(2000)
    frame["g"] = np.random.default_rng(1).choice(["a", "b", "c"], len(frame)).astype(object)
    base = _factored_fit(design, frame, missing, chunked)
    assert base.error is None, base.error
    for k, pattern in enumerate(patterns):
        (row,) = _rows(len(frame), k, 1)
        other = frame.copy()
        for column, value in FACTORED_PATTERNS[pattern].items():
            other.loc[row, column] = value
        moved = _factored_fit(design, other, missing, chunked)
        where = f"{pattern} in row {row}"
        assert moved.error is None, where
        assert moved.warned == base.warned, where
        assert moved.spent is not None and base.spent is not None, where
        np.testing.assert_allclose(moved.spent, base.spent, rtol=1e-9, err_msg=where)
        assert moved.text == base.text, where
        assert moved.finite, where


@pytest.mark.parametrize("design, missing, chunked, patterns", [
    ("implicit intercept", "drop", "", ["x1=1e300", "mixed signs", "x1=nan", "g undeclared"]),
    ("implicit intercept", "raise", "", ["x1=largest", "g=None", "x1=inf"]),
    ("factored power", "raise", "", ["y=-1e300", "g undeclared", "y=None"]),
    ("factored power", "drop", "", ["x1=5e-324", "mixed signs", "g=None"]),
])
def test_one_row_of_a_reparametrised_pgd_design_changes_nothing_but_noise(design: str, missing: str, chunked: str,
                                                                          patterns: list[str]) -> None:
    """pgd's intercept model and its factored power centring on neighbours with one extreme, missing or undeclared
    row: the same warnings, budget, masked text and finite coefficients (deterministic: no false failures)."""
    _factored_check(design, missing, chunked, patterns)


@pytest.mark.slow
@pytest.mark.parametrize("design", list(REPARAMETRISED))
@pytest.mark.parametrize("missing", ["drop", "raise"])
@pytest.mark.parametrize("chunked", ["", "chunks", "dask"])
def test_one_row_of_a_reparametrised_pgd_design_changes_nothing_but_noise_slow(design: str, missing: str,
                                                                               chunked: str) -> None:
    """As above, every pattern, in memory, in chunks and from a Dask DataFrame."""
    _factored_check(design, missing, chunked, list(FACTORED_PATTERNS))
