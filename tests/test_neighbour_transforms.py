"""Neighbours that differ in one row seen only through a transform, a factor or the design's rank: every private
method and ``method="auto"`` show the same on both, apart from their noise (a red-team of session 48).

``test_neighbour_extremes`` replaces a row of ``y ~ x1 + x2`` by extreme values.  Here the replaced row reaches
the fit through the formula's code: a variable used only inside ``np.log`` set to 0 (log undefined), -0.0, 1e300
or a missing value; a variable used only inside ``I(x2 ** 2)`` at 1e300 (its square overflows); the only row of a
declared level moved to another level (the level's dummy column is all zero on the neighbour); a value outside
the declared levels; -0.0 in a bare column; and, for ``y ~ x1 + x2 + x3``, the only row off the plane
x3 = x1 + x2 moved onto it (the design is rank deficient on the neighbour).  With and without declared bounds
where the method allows, each pair is fitted with the same seed, and what is not noise
(``test_neighbour_extremes.Outcome``: the exception's type and masked message, the warnings, the budget spent,
the masked summary, LaTeX, HTML and JSON, the info keys, the inference reason and the accountant's record) must
be equal.  The budget (epsilon = 4) keeps every decision that depends on released values far from its threshold.
Deterministic (fixed data and seeds): the false-failure rate is 0.  The ``slow`` version also reads the rows in
chunks and uses ``missing="drop"`` where the method takes it.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from test_neighbour_extremes import VARIANTS, Outcome, _channels, _history, _masked, assert_same_outcome

import dpstats
from dpstats.methods.registry import available_methods

EPSILON, DELTA, SEED = 4.0, 1e-6, 11
TRANSFORMS = "y ~ x1 + I(x2 ** 2) + np.log(z) + C(g, levels=['a', 'b', 'c'])"
ONE_PREDICTOR = "y ~ np.log(z)"  # theilsen fits one predictor
RANK = "y ~ x1 + x2 + x3"
BOUNDS = {"x1": (-3.0, 3.0), "x2": (-0.5, 0.25), "x3": (-4.0, 4.0), "y": (-8.0, 8.0), "np.log(z)": (-5.0, 5.0)}
LONE_LEVEL, OFF_PLANE, ROW = 5, 7, 37  # the only 'c', the only row with x3 != x1 + x2, the row other patterns change

#: pattern: (the row, the values it gets; None for x3: the row's own x1 + x2)
PATTERNS: dict[str, tuple[int, dict[str, Any]]] = {
    "log(0)": (ROW, {"z": 0.0}),
    "log(-0.0)": (ROW, {"z": -0.0}),
    "log(1e300)": (ROW, {"z": 1e300}),
    "log(nan)": (ROW, {"z": np.nan}),
    "(1e300)**2": (ROW, {"x2": 1e300}),
    "x1=-0.0": (ROW, {"x1": -0.0}),
    "lone level gone": (LONE_LEVEL, {"g": "a"}),
    "undeclared level": (ROW, {"g": "zzz"}),
    "rank deficient": (OFF_PLANE, {"x3": None}),
}
_USES = {TRANSFORMS: {"x1", "x2", "z", "g"}, ONE_PREDICTOR: {"z"}, RANK: {"x3"}}


def _frame(n: int = 2000) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(-0.5, 0.25, size=n),
                       "z": np.exp(rng.normal(size=n)), "g": rng.choice(["a", "b"], size=n).astype(object)})
    df["x3"] = df.x1 + df.x2
    df.loc[LONE_LEVEL, "g"] = "c"
    df.loc[OFF_PLANE, "x3"] = 1.0
    df["y"] = 1.0 + df.x1 - 2.0 * df.x2 + 0.5 * (df.g == "b") + 0.3 * rng.normal(size=n)
    return df


def _neighbour(frame: pd.DataFrame, pattern: str) -> pd.DataFrame:
    row, values = PATTERNS[pattern]
    out = frame.copy()
    for column, value in values.items():
        out.at[row, column] = out.at[row, "x1"] + out.at[row, "x2"] if value is None else value
    return out


def _fit(method: str, formula: str, frame: pd.DataFrame, bounded: bool, chunked: bool, missing: str,
         options: dict[str, Any]) -> Outcome:
    accountant = dpstats.PrivacyAccountant(100.0, 0.5)
    bounds = {k: v for k, v in BOUNDS.items() if k in formula} if bounded else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = dpstats.dp_ols(formula, frame, epsilon=EPSILON, delta=DELTA, method=method, bounds=bounds,
                                 random_state=SEED, accountant=accountant, missing=missing,
                                 chunksize=700 if chunked else None, **options)
        except Exception as exc:  # noqa: BLE001 - the point is to compare whatever escapes
            outcome = Outcome((type(exc).__name__, _masked(str(exc))), getattr(exc, "privacy_spent", None),
                              frozenset(), "", True, (_history(accountant),))
        else:
            outcome = Outcome(None, (res.privacy.epsilon_spent, res.privacy.delta_spent), frozenset(),
                              _masked(str(res.summary())), bool(np.all(np.isfinite(res.params.to_numpy()))),
                              (*_channels(res, accountant), res.method, _masked(repr(res.privacy.steps))))
    warned = frozenset((w.category.__name__, _masked(str(w.message))) for w in caught)
    return dataclasses.replace(outcome, warned=warned)


def _cases(slow: bool) -> list[Any]:
    cases = []
    for name, spec in sorted(available_methods().items()):
        if not spec.private:
            continue
        for bounded in ([True] if spec.needs_bounds else [False, True]):
            for chunked in ([False, True] if slow else [False]):
                for missing in (["raise", "drop"] if slow and spec.null_rows else ["raise"]):
                    label = f"{name}-{'bounds' if bounded else 'no bounds'}-{'chunks' if chunked else 'memory'}-" \
                            f"{missing}"
                    cases.append(pytest.param(name, bounded, chunked, missing, id=label))
    cases += [pytest.param("auto", bounded, False, "raise", id=f"auto-{'bounds' if bounded else 'no bounds'}")
              for bounded in (False, True)]
    return cases


def _check(method: str, bounded: bool, chunked: bool, missing: str) -> None:
    options = VARIANTS.get(method, [{}])[0]
    frame = _frame()
    for formula in ((ONE_PREDICTOR,) if method == "theilsen" else (TRANSFORMS, RANK)):
        base = _fit(method, formula, frame, bounded, chunked, missing, options)
        for pattern, (_, values) in PATTERNS.items():
            if not set(values) & _USES[formula]:
                continue
            other = _fit(method, formula, _neighbour(frame, pattern), bounded, chunked, missing, options)
            assert_same_outcome(base, other, f"{formula}: {pattern}")


@pytest.mark.parametrize("method, bounded, chunked, missing", _cases(slow=False))
def test_one_row_seen_through_the_formula_changes_nothing_but_noise(method: str, bounded: bool, chunked: bool,
                                                                   missing: str) -> None:
    _check(method, bounded, chunked, missing)


@pytest.mark.slow
@pytest.mark.parametrize("method, bounded, chunked, missing", [c for c in _cases(slow=True)
                                                               if "chunks" in c.id or "drop" in c.id])
def test_one_row_seen_through_the_formula_changes_nothing_but_noise_slow(method: str, bounded: bool, chunked: bool,
                                                                        missing: str) -> None:
    _check(method, bounded, chunked, missing)


def test_each_pattern_changes_one_row_and_what_it_claims() -> None:
    """Each neighbour differs from the base in one row; the level pattern removes the only 'c' and the rank pattern
    makes x3 = x1 + x2 on every row."""
    frame = _frame()
    for pattern, (row, _) in PATTERNS.items():
        other = _neighbour(frame, pattern)
        changed = [i for i in range(len(frame)) if not frame.iloc[i].equals(other.iloc[i])]
        assert changed == [row], pattern
    assert (frame.g == "c").sum() == 1 and (_neighbour(frame, "lone level gone").g == "c").sum() == 0
    flat = _neighbour(frame, "rank deficient")
    assert np.allclose(flat.x3, flat.x1 + flat.x2) and not np.allclose(frame.x3, frame.x1 + frame.x2)
