"""Black-box audits of every private method through ``dpstats.dp_ols``, as an outside reviewer runs them.

An outside review sees a fit only through the public API: the released estimate, and everything else a call
shows (whether it raises, the exception's type and message, the warnings, the privacy report and its notes,
``inference_reason``).  Each audit here fits one method many times with fresh seeded noise on a neighbouring
pair (replace-one, docs/privacy.md, "Neighbouring relation") at small n (60 to 4,000 rows: the smallest each
method fits at, where its released decisions and notes vary from run to run; at n = 500 noisy_ols's private
lambda_min check refuses about half of the fits), and bounds epsilon from below twice
(:mod:`dpstats.privacy.audit`, Clopper-Pearson, the event chosen on half of the runs and evaluated on the other
half):

* on the *outcome*: each run is mapped to its parts, every number masked (``test_neighbour_extremes._masked``):
  the exception's type and message, or the summary's text (tables, privacy report, theory) as a whole, each
  note of the privacy report, the method choice, the inference and R^2 reasons; and each warning; the event is
  "the outcome has this part" (:func:`outcome_bound`);
* on the *estimate*: the x1 coefficient of a released fit, a sentinel for a refusal.

Rows of the pairs: the bounded methods see one row at the low corner of the declared bounds (D) and the same row
at the high corner (D', through values beyond the bounds, which clipping maps there) or missing (a NaN x2 and an
infinite y: a null row for the fit, counted by the screen); the bound-free methods see a row with entries of
order 1e300 or a missing one.

Both bounds must stay at or below the claimed epsilon. For a correct (epsilon, delta)-DP fit each exceeds the claim
with probability at most alpha = 1e-3 over seeds (the false-failure rate of each audit, so at most 2e-3 for a fast
test and 4e-3 for a slow one; the seeds are fixed, so every run is reproducible). A difference that noise does not
explain (a part in every run of D' and in no run of D: a warning, a message or a note that one neighbour alone
gives) gives an outcome bound of log(p / (1 - p)), p = (alpha / 2)^(2 / runs): 1.24 with 60 runs per data set, 0.77
with 40, above the claims of 1 and 0.5 that the fast audits use, so each fast audit catches such a difference
(``test_the_outcome_audit_catches_a_deterministic_difference`` shows it). The ``slow`` audits run 10x the runs and
both rows of each pair. ``test_the_results_object_holds_no_value_of_the_data`` checks the other way a results object
could leak: by holding a value of the data that ``predict``, the error block or a rendering reads.
"""

from __future__ import annotations

import pickle
import struct
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest
from test_neighbour_extremes import _masked

import dpstats
from dpstats.privacy.audit import audit_samples, epsilon_lower_bound

ALPHA = 1e-3  # false-failure rate of each validity audit
DELTA = 1e-6
FORMULA = "y ~ x1 + x2"
BOUNDS = {"x1": (-3.0, 3.0), "x2": (-0.5, 0.25), "y": (-8.0, 8.0)}
LOW_CORNER = {"x1": -3.0, "x2": -0.5, "y": -8.0}
ROW = 7  # the row the pairs replace
REFUSED = 1e6  # the estimate's sentinel for a refusal (the coefficients are of order 1)

#: the row of D' for each pattern: values beyond the bounds that clipping maps to the high corner, a missing row,
#: and the bound-free methods' extreme row
PATTERNS: dict[str, dict[str, float]] = {
    "high corner": {"x1": 1e300, "x2": 7.0, "y": 1e300},
    "missing": {"x2": np.nan, "y": -np.inf},
    "extreme": {"x1": 1e300, "x2": -1e300, "y": 1e300},
}


@dataclass(frozen=True)
class Case:
    """One audited configuration: a method at a small n where its released decisions go either way."""

    method: str
    n: int
    bounded: bool
    epsilon: float
    runs: int  # per data set, in the fast audit
    options: tuple[tuple[str, Any], ...] = ()
    formula: str = FORMULA
    fast_pattern: int = 0  # which of the case's two rows the fast audit uses

    @property
    def label(self) -> str:
        return f"{self.method}-n{self.n}-{'bounds' if self.bounded else 'no bounds'}"


CASES = [
    Case("ssp", 60, True, 1.0, 60),
    Case("adassp", 60, True, 1.0, 60, fast_pattern=1),
    # n = 500: the private lambda_min check refuses in about half of the fits
    Case("noisy_ols", 500, True, 1.0, 60),
    Case("lasso", 100, True, 1.0, 60, (("sparsity", 2),), fast_pattern=1),
    Case("theilsen", 60, True, 0.5, 40, formula="y ~ x1"),
    Case("pgd", 100, True, 0.5, 40),
    Case("pgd", 2000, False, 0.5, 40, fast_pattern=1),  # below about 1,800 rows it refuses from n alone
    Case("tukey", 2000, False, 1.0, 60),
    Case("dpsgd", 100, True, 1.0, 60, (("epochs", 1),)),
    Case("dpsgd", 300, False, 0.5, 40, (("epochs", 1),)),
    Case("robgd", 4000, False, 1.0, 60, (("max_rounds", 20),)),
    Case("ambssgd", 4000, False, 1.0, 60, (("max_rounds", 20),), fast_pattern=1),
    Case("auto", 60, True, 1.0, 60),
]


def _frame(case: Case) -> pd.DataFrame:
    """D: a linear design inside the bounds, with row ``ROW`` at the low corner for the bounded cases."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.uniform(-3.0, 3.0, case.n), "x2": rng.uniform(-0.5, 0.25, case.n)})
    df["y"] = 1.0 + df.x1 - 2.0 * df.x2 + 0.5 * rng.normal(size=case.n)
    if case.bounded:
        for column, value in LOW_CORNER.items():
            df.loc[ROW, column] = value
    return df


def _neighbour(frame: pd.DataFrame, pattern: str) -> pd.DataFrame:
    out = frame.copy()
    for column, value in PATTERNS[pattern].items():
        out.loc[ROW, column] = value
    return out


def _patterns(case: Case, slow: bool) -> list[str]:
    mine = ["high corner", "missing"] if case.bounded else ["extreme", "missing"]
    return mine if slow else [mine[case.fast_pattern]]


Outcome = tuple[frozenset[str], float]


def _outcome(case: Case, data: pd.DataFrame, seed: int) -> Outcome:
    """One fit: the parts of its outcome (numbers masked) and its x1 coefficient (``REFUSED`` for a refusal).

    The parts: the exception's type and message, or the summary's text as a whole, each note of the privacy
    report, the method choice, the inference and R^2 reasons; and each warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = dpstats.dp_ols(case.formula, data, epsilon=case.epsilon, delta=DELTA, method=case.method,
                                 bounds=BOUNDS if case.bounded else None, random_state=seed, **dict(case.options))
        except Exception as exc:  # noqa: BLE001 - a refusal is an output too
            parts, estimate = {f"raised {type(exc).__name__}: {_masked(str(exc))}"}, REFUSED
        else:
            parts = {f"summary: {_masked(str(res.summary()))}", f"choice: {_masked(res.privacy.method_choice)}",
                     f"inference: {_masked(str(res.inference_reason))}", f"R^2: {_masked(str(res.rsquared_reason))}"}
            parts |= {f"note: {_masked(note)}" for note in res.privacy.notes}
            estimate = float(res.params["x1"])
    parts |= {f"warned {w.category.__name__}: {_masked(str(w.message))}" for w in caught}
    return frozenset(parts), estimate


def outcome_bound(outcomes_d: Sequence[frozenset[str]], outcomes_dprime: Sequence[frozenset[str]], *, delta: float,
                  alpha: float, seed: int = 0) -> tuple[float, str]:
    """A (1 - alpha) lower bound on epsilon from the parts of the outcomes (the analogue of
    :func:`dpstats.privacy.audit.audit_samples` for text): the event "the outcome has this part" (a message, a
    warning, a note) is chosen on half of the runs, the part and the direction with the largest bound there, and
    evaluated on the other half; returns the bound and the part."""
    order = np.random.default_rng(seed)
    a = [outcomes_d[i] for i in order.permutation(len(outcomes_d))]
    b = [outcomes_dprime[i] for i in order.permutation(len(outcomes_dprime))]
    half = len(a) // 2

    def bound(part: str, swapped: bool, runs: slice) -> float:
        k_p, k_q = sum(part in o for o in a[runs]), sum(part in o for o in b[runs])
        return epsilon_lower_bound(*((k_q, k_p) if swapped else (k_p, k_q)), half, delta, alpha)

    choose, evaluate = slice(0, half), slice(half, 2 * half)
    events = [(bound(part, swapped, choose), part, swapped) for part in sorted(set().union(*a, *b))
              for swapped in (False, True)]
    _, part, swapped = max(events)
    return bound(part, swapped, evaluate), part


def _audit(case: Case, pattern: str, runs: int, run: Callable[[Case, pd.DataFrame, int], Outcome] = _outcome
           ) -> tuple[float, float, str]:
    """(outcome bound, estimate bound, the outcome's part chosen) for one pair, ``runs`` fits on each side."""
    d, dprime = _frame(case), _neighbour(_frame(case), pattern)
    one = [run(case, d, 10_000 + i) for i in range(runs)]
    other = [run(case, dprime, 20_000 + i) for i in range(runs)]
    outcome, part = outcome_bound([o for o, _ in one], [o for o, _ in other], delta=DELTA, alpha=ALPHA)
    estimate = audit_samples(np.array([e for _, e in one]), np.array([e for _, e in other]), delta=DELTA,
                             alpha=ALPHA).epsilon_lower_bound
    return outcome, estimate, part


def _check(case: Case, slow: bool) -> None:
    runs = case.runs * (10 if slow else 1)
    for pattern in _patterns(case, slow):
        outcome, estimate, part = _audit(case, pattern, runs)
        where = f"{case.label}, {pattern}, {runs} runs per data set"
        assert outcome <= case.epsilon, f"{where}: outcome bound {outcome:.2f} on {part[:300]!r}"
        assert estimate <= case.epsilon, f"{where}: estimate bound {estimate:.2f}"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.label)
def test_blackbox_audit(case: Case) -> None:
    _check(case, slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.label)
def test_blackbox_audit_slow(case: Case) -> None:
    _check(case, slow=True)


def test_the_outcome_audit_catches_a_deterministic_difference() -> None:
    """Power: a fit that warns on the neighbour with the extreme row alone (as the bound-free methods did before
    issue 15) gives an outcome bound above the claim with the fast number of runs."""
    case = Case("ssp", 60, True, 1.0, 60)

    def leaky(case: Case, data: pd.DataFrame, seed: int) -> Outcome:
        parts, estimate = _outcome(case, data, seed)
        return (parts | {"warned RuntimeWarning: overflow"} if data.loc[ROW, "x1"] > 3.0 else parts), estimate

    outcome, _, part = _audit(case, "high corner", case.runs, leaky)
    assert outcome > case.epsilon and "overflow" in part


def test_the_outcome_bound_is_valid_for_identical_outcomes() -> None:
    """Validity of ``outcome_bound``: two samples of one law of outcomes (each of three parts present independently)
    give a bound of 0 in 20 repetitions of 400 runs (each bound is positive for a true epsilon of 0 with
    probability at most alpha, so one of the 20 is with probability at most 0.02; the seeds are fixed)."""
    rng = np.random.default_rng(5)

    def outcomes() -> list[frozenset[str]]:
        present = rng.random((400, 3)) < [0.5, 0.3, 0.05]
        return [frozenset(part for part, there in zip("abc", row, strict=True) if there) for row in present]

    assert max(outcome_bound(outcomes(), outcomes(), delta=0.0, alpha=ALPHA, seed=seed)[0] for seed in range(20)) == 0


#: values of one row, inside the declared bounds, whose 17 significant digits no released number shares by chance
SENTINELS = {"x1": 1.2345678912345678, "x2": 0.12349876543210987, "y": -7.654321234567891}


@pytest.mark.parametrize("case", [case for case in CASES if case.method != "auto"], ids=lambda case: case.label)
def test_the_results_object_holds_no_value_of_the_data(case: Case) -> None:
    """``predict``, ``error_bounds``, the theory block and every rendering read the results object alone: it holds
    no value of a row (docs/privacy.md, "Threat model": the results object is what the adversary sees).  One
    row (and a second row's x1) holds sentinel values; neither their 8 bytes (either byte order) nor their text
    may appear in the pickled results, its JSON or its summary, in memory or read in chunks.  Deterministic: the
    false-failure rate is that of a released double sharing 16 digits with a sentinel, about 1e-16 per number."""
    frame = _frame(case)
    for column, value in SENTINELS.items():
        frame.loc[ROW + 1, column] = value
    frame.loc[ROW + 2, "x1"] = SENTINELS["x1"]
    for chunksize in (None, 100):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                res = dpstats.dp_ols(case.formula, frame, epsilon=4.0, delta=DELTA, method=case.method,
                                     bounds=BOUNDS if case.bounded else None, random_state=1, chunksize=chunksize,
                                     **dict(case.options))
            except dpstats.errors.DPStatsError:
                continue  # a refusal's message is compared in the audits above
        blob = pickle.dumps(res)
        text = f"{res.to_json()}\n{res.summary()}\n{res.summary().as_latex(privacy=True)}"
        for column, value in SENTINELS.items():
            where = f"{case.label}, chunksize={chunksize}: {column}"
            assert struct.pack("<d", value) not in blob and struct.pack(">d", value) not in blob, where
            assert repr(value).encode() not in blob and repr(value)[:12] not in text, where


def _misplaced_data_calls(frame: pd.DataFrame) -> dict[str, Callable[[], Any]]:
    """Calls that pass the data, or one of its columns, where a public argument belongs (a caller's slip: the
    data as ``plan``'s first argument, a column as epsilon, as a pair of bounds or as a method option)."""
    from dpstats.sklearn import DPLinearRegression

    X, y = frame[["x1", "x2"]], frame["y"]
    plan = {"formula": FORMULA, "bounds": BOUNDS, "epsilon": 1.0, "delta": DELTA}
    return {
        "plan(data)": lambda: dpstats.plan(frame, **plan, n=60),
        "plan(n=column)": lambda: dpstats.plan(**plan, n=frame["x1"]),
        "plan(spread=data)": lambda: dpstats.plan(**plan, n=60, spread=frame),
        "plan(residual_sd=array)": lambda: dpstats.plan(**plan, n=60, residual_sd=frame["x1"].to_numpy()),
        "plan(outcome_share=column)": lambda: dpstats.plan(**plan, n=60, outcome_share=frame["x1"]),
        "plan(missing=column)": lambda: dpstats.plan(**plan, n=60, missing=frame["x1"]),
        "dp_ols(epsilon=column)": lambda: dpstats.dp_ols(FORMULA, frame, frame["x1"], bounds=BOUNDS),
        "dp_ols(delta=array)": lambda: dpstats.dp_ols(FORMULA, frame, 1.0, frame["x1"].to_numpy(), bounds=BOUNDS),
        "dp_ols(bounds pair=column)": lambda: dpstats.dp_ols(FORMULA, frame, 1.0, bounds={**BOUNDS, "x1": frame["x1"]}),
        "dp_ols_arrays(y_bounds=column)": lambda: dpstats.dp_ols_arrays(
            X.to_numpy(), y.to_numpy(), intercept=False, epsilon=1.0, x_bounds=[(-3, 3), (-1, 1)],
            y_bounds=frame["x1"].to_numpy()),
        "DPLinearRegression(y_bounds=column)": lambda: DPLinearRegression(
            epsilon=1.0, bounds=(-3, 3), y_bounds=frame["x1"].to_numpy()).fit(X, y),
        "DPLinearRegression(epsilon=column)": lambda: DPLinearRegression(
            epsilon=frame["x1"], bounds=(-3, 3), y_bounds=(-8, 8)).fit(X, y),
        "PrivacyAccountant(epsilon=column)": lambda: dpstats.PrivacyAccountant(frame["x1"], DELTA),
        **{f"{method}({option}=column)": _option_call(frame, method, option) for method, option in
           [("lasso", "step_size"), ("dpsgd", "epochs"), ("noisy_ols", "truncation"), ("robgd", "gamma_fraction"),
            ("tukey", "m")]},
    }


def _option_call(frame: pd.DataFrame, method: str, option: str) -> Callable[[], Any]:
    """A fit given a column of the data as a method option."""
    extra = {"sparsity": 2} if method == "lasso" else {}
    return lambda: dpstats.dp_ols(FORMULA, frame, 1.0, bounds=BOUNDS, method=method, **extra,
                                  **{option: frame["x1"]})


@pytest.mark.parametrize("call", list(_misplaced_data_calls(pd.DataFrame(columns=["x1", "x2", "y"]))))
def test_a_refusal_never_quotes_data_passed_as_an_argument(call: str) -> None:
    """The refusal of an argument that holds the data names its type and shape, never its values: the same message
    for two neighbours that differ in x1 of one row (before, ``shown`` and the pair and budget checks quoted the
    argument's repr, so ``plan(df, ...)`` printed the rows).  Deterministic: no false failures."""
    frame = _frame(CASES[0])
    neighbour = frame.copy()
    neighbour.loc[0, "x1"] = SENTINELS["x1"]
    messages = []
    for data in (frame, neighbour):
        with pytest.raises(dpstats.errors.DPStatsError,
                           match=r"got an? (Series|DataFrame|numpy array) of shape \(60,( 3)?\)") as refused:
            _misplaced_data_calls(data)[call]()
        messages.append(str(refused.value))
    assert messages[0] == messages[1], messages[1][:300]
    assert repr(SENTINELS["x1"])[:8] not in messages[1] and "shape" in messages[1]
