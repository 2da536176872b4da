"""Black-box audits of the fits' data-dependent branches, and of chunk layouts a single row can cause (a red-team of
session 50).

The other audits replace one row by a generic worst case (a corner of the bounds, a missing row, 1e300:
``test_blackbox_audit``, ``test_neighbour_extremes``, ``test_neighbour_sources``).  Here each pair is built to push a
fit through one of its data-dependent branches, at the n where ``method="auto"`` picks the method that has it:

* theilsen (one predictor, small n mu): a row moved across the box, in data with many ties in x (pairs with dx = 0
  count half below and half above every cell), and a two-valued integer predictor at n epsilon >= 250 (the
  two-value profile of the error block);
* dpsgd (auto below n mu 15): the corner pair;
* pgd (auto's default): a two-valued response whose rarer value is rare (the released share decides the clip
  quantile, the two-valued variance floor and whether the rare-outcome rule withholds the intervals), skewed residuals
  at n mu > 320 (the tail correction, its test and the per-coefficient rule), a row of a factor level that no other
  row has (the released scales' floor and the note that names it), and bound-free fits with a signed zero, a
  subnormal beside 1e300 and a single missing variable;
* the missing-value screen near its refusal level (100 missing rows, and 101);
* adassp (auto at large n): the corner pair.

Each pair is run many times with fresh seeded noise on each side through ``dpstats.dp_ols``; the outcome (the
exception's type and masked message, the masked summary, notes, method choice, inference and R^2 reasons, the
finite/non-finite pattern of ``bse`` and ``conf_int``, the ledger's steps by name, mechanism, count, dimension and
norm, the budget spent, each warning) is audited by ``test_blackbox_audit.outcome_bound`` and the x coefficient, its
standard error and its upper confidence limit by :func:`dpstats.privacy.audit.audit_samples` (Clopper-Pearson,
event chosen on half of the runs, evaluated on the other half).  The fast audits run 40 fits per side at a claim of
0.5, which a part present on one side only exceeds (0.77); the ``slow`` ones 1,000 per side at the fit's epsilon.

Found by this red-team and fixed: an empty chunk first among the chunks a pass combined (the first of several CSV
paths empty, an empty first Dask partition, or the empty partitions ``dd.read_csv`` makes after a line longer than
its block size, as one field of 300,000 characters does) failed bound-free pgd, lasso, robgd and ambssgd with
``InternalFitError`` after spending: the group sums of their private clipping domain and lasso's pair sums came back
as int64 zeros (``np.bincount`` with weights gives int64 for no rows), into which the in-place reducer could not add
the other chunks' float sums.  One long line, a row's content, thus decided a refusal.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from test_neighbour_extremes import _masked

import dpstats

B = {"x1": (-3.0, 3.0), "x2": (-0.5, 0.25), "y": (-8.0, 8.0)}


# -- an empty chunk ------------------------------------------------------------------------------------------------

def _plain(n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.uniform(-3.0, 3.0, n), "x2": rng.uniform(-0.5, 0.25, n)})
    df["y"] = 1.0 + df.x1 - 2.0 * df.x2 + 0.5 * rng.normal(size=n)
    return df


#: (method, bounded, options) of the fits that read chunks, cheap options; the first four failed before
CHUNKED = [("pgd", False, {"steps": 20}), ("lasso", True, {"sparsity": 2}), ("robgd", False, {"max_rounds": 10}),
           ("ambssgd", False, {"max_rounds": 10}), ("pgd", True, {"steps": 20}), ("adassp", True, {}),
           ("tukey", False, {}), ("dpsgd", False, {"epochs": 1, "batch_size": 500}), ("theilsen", True, {})]


def _layout(frame: pd.DataFrame, source: str, empty: int | None, tmp: Path) -> Any:
    """``frame`` in 500-row parts, with an empty part inserted at position ``empty`` (None: none), as a Dask
    DataFrame of those partitions or a list of CSV files."""
    parts = [frame.iloc[i:i + 500] for i in range(0, len(frame), 500)]
    if empty is not None:
        parts.insert(empty, frame.iloc[:0])
    if source == "dask":
        dask = pytest.importorskip("dask")
        dd = pytest.importorskip("dask.dataframe")
        return dd.from_delayed([dask.delayed(lambda p: p)(p) for p in parts], meta=frame.iloc[:0])
    paths = []
    for i, part in enumerate(parts):
        path = tmp / f"{empty}-{i:02d}.csv"
        part.to_csv(path, index=False)
        paths.append(str(path))
    return paths


def _fit_outcome(formula: str, data: Any, method: str, bounded: bool, options: dict[str, Any],
                 missing: str = "raise", seed: int = 3) -> tuple[str, np.ndarray | None]:
    """(the masked summary, or the exception's type and masked message; the coefficients, None for a refusal)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = dpstats.dp_ols(formula, data, epsilon=1.0, delta=1e-6, method=method, bounds=B if bounded else None,
                                 random_state=seed, missing=missing, **options)
        except dpstats.errors.DPStatsError as exc:
            return f"{type(exc).__name__}: {_masked(str(exc))}", None
    return _masked(str(res.summary())), res.params.to_numpy()


def _check_empty_chunk(tmp_path: Path, source: str, method: str, bounded: bool, options: dict[str, Any],
                       positions: tuple[int, ...]) -> None:
    frame = _plain()
    formula = "y ~ x1" if method == "theilsen" else "y ~ x1 + x2"
    base_text, base = _fit_outcome(formula, _layout(frame, source, None, tmp_path), method, bounded, options)
    assert base is not None, base_text
    for empty in positions:
        text, params = _fit_outcome(formula, _layout(frame, source, empty, tmp_path), method, bounded, options)
        assert text == base_text, f"empty part at {empty}: {text[:300]}"
        assert params is not None
        np.testing.assert_allclose(params, base, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("source, method, bounded, options",
                         [("dask", *CHUNKED[0]), ("csv paths", *CHUNKED[0]), ("dask", *CHUNKED[1])],
                         ids=["dask-pgd", "csv-pgd", "dask-lasso"])
def test_an_empty_chunk_changes_nothing(tmp_path, source, method, bounded, options):
    """The same rows with an empty part first among the chunks give the same fit at the same seed: the same
    masked summary, coefficients equal up to the order of floating-point additions.  Before, an empty first chunk
    failed bound-free pgd, lasso, robgd and ambssgd with InternalFitError ("a bug") after spending.
    Deterministic: no false failures."""
    _check_empty_chunk(tmp_path, source, method, bounded, options, (0,))


@pytest.mark.slow
@pytest.mark.parametrize("source", ["dask", "csv paths"])
@pytest.mark.parametrize("method, bounded, options", CHUNKED,
                         ids=[f"{m}-{'bounds' if b else 'no bounds'}" for m, b, _ in CHUNKED])
def test_an_empty_chunk_changes_nothing_slow(tmp_path, source, method, bounded, options):
    """As above, for every method that reads chunks, with the empty part first and third."""
    _check_empty_chunk(tmp_path, source, method, bounded, options, (0, 3))


# -- malformed lines read by dd.read_csv ---------------------------------------------------------------------------

N_LINES = 3000
#: a line that replaces line LINE of the file (after dd.read_csv's sample, in a later partition)
LINES = {
    "clean": None,
    "too many fields": "1.0,0.1,2.0,4.0",
    "too few fields": "1.0,0.1",
    "quoted comma": '"1,5",0.1,2.0',
    "unclosed quote": '"1.5,0.1,2.0',
    "text": "SECRETabc,0.1,2.0",
    "long number": "1" * 300_000 + ",0.1,2.0",
    "long text": "S" * 300_000 + ",0.1,2.0",
    "1e999": "1e999,0.1,2.0",
    "blank": "",
}
LINE = N_LINES - 5


def _csv_lines(tmp: Path, kind: str) -> Path:
    frame = _plain(N_LINES)
    body = [f"{a!r},{b!r},{c!r}" for a, b, c in zip(frame.x1.tolist(), frame.x2.tolist(), frame.y.tolist(),
                                                      strict=True)]
    if LINES[kind] is not None:
        body[LINE] = LINES[kind]
    path = tmp / f"{kind.replace(' ', '_')}.csv"
    path.write_text("x1,x2,y\n" + "\n".join(body) + "\n")
    return path


def _dask_csv_outcome(path: Path, method: str, bounded: bool, missing: str) -> tuple[str, np.ndarray | None]:
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.read_csv(str(path), blocksize=30_000)
    options = {"lasso": {"sparsity": 2}, "robgd": {"max_rounds": 10}, "pgd": {"steps": 20}}.get(method, {})
    return _fit_outcome("y ~ x1 + x2", frame, method, bounded, options, missing=missing)


def _check_dask_lines(tmp_path: Path, method: str, bounded: bool, missing: str) -> None:
    """Each malformed line after dd.read_csv's sample gives either the fit of the same file with that row's values
    missing or infinite (the line parses: too few fields, a blank line, a number beyond the doubles, including
    one of 300,000 digits, whose line leaves empty partitions behind it), or the documented domain check (a
    partition that cannot be computed: one message for every kind, no value quoted, nothing spent).  Every
    exception is a typed DPStatsError."""
    outcomes = {kind: _dask_csv_outcome(_csv_lines(tmp_path, kind), method, bounded, missing) for kind in LINES}
    clean_text, clean = outcomes["clean"]
    assert clean is not None, clean_text
    refusals = {text for text, params in outcomes.values() if params is None}
    assert len(refusals) <= 1, refusals
    for text in refusals:
        assert text.startswith("DataTypeError: a partition of the Dask DataFrame could not be computed"), text
        assert "SECRET" not in text and "SSSS" not in text and "1111" not in text
    for kind in ("too many fields", "quoted comma", "unclosed quote", "text", "long text"):
        assert outcomes[kind][1] is None, kind
    for kind in ("too few fields", "blank", "long number", "1e999"):
        text, params = outcomes[kind]
        assert params is not None, f"{kind}: {text[:300]}"
    # the long number parses as inf, as 1e999 does: the same row, so the same fit (its line only changes the layout)
    assert outcomes["long number"][0] == outcomes["1e999"][0]
    np.testing.assert_allclose(outcomes["long number"][1], outcomes["1e999"][1], rtol=1e-9, atol=1e-12)


def test_malformed_lines_through_dask_read_csv(tmp_path):
    """Bound-free pgd (before, the long number's empty partitions failed it with InternalFitError: see the module
    docstring).  Deterministic: no false failures."""
    _check_dask_lines(tmp_path, "pgd", False, "drop")


@pytest.mark.slow
@pytest.mark.parametrize("method, bounded, missing", [("pgd", False, "raise"), ("pgd", True, "raise"),
                                                      ("adassp", True, "drop"), ("lasso", True, "raise"),
                                                      ("robgd", False, "raise"), ("tukey", False, "raise")])
def test_malformed_lines_through_dask_read_csv_slow(tmp_path, method, bounded, missing):
    _check_dask_lines(tmp_path, method, bounded, missing)
