"""TukeyEM's free refusals with a user m, m="private" and ptr="mass": does every refused cell fail its test?

The refusal (``dpstats.methods.tukey.plan.public_refusal``) is decided from n, d, epsilon, delta and the options:
idealised Gaussian block estimates would pass the propose-test-release (PTR) test with probability below 1% (0.1%
with a user's m). This
study switches the check off (both thresholds 0) and runs the test itself, 20 seeds per cell, on the most
favourable data we can simulate, in two ways:

* ``models``: the block estimates themselves drawn i.i.d. standard normal (the limit of per-block OLS on a
  Gaussian design as the blocks grow; blocks of finitely many rows have heavier tails) and passed to the fit's
  own test (:func:`~dpstats.methods.tukey.em.tukey_em`) with the fit's budget split for the cell;
* ``fits``: whole fits (``dpstats.dp_ols``) of y = 1 + x^T 1 + 0.1 e, x and e independent standard normal (d - 1
  slopes and the intercept), the design of the study of session 54.

Cells sit around the refusal's boundary: for a user m, m from 0.5 to 1.5 times the fewest models the check lets
through (blocks of BLOCK_ROWS_PER_COLUMN d rows in the fits); for the default m with ptr="mass" and for
m="private", n from 0.6 to 1.5 times the fewest rows it lets through.  Output: a markdown table per study (the
number of seeds of 20 whose test passed; * marks a cell the check refuses, r one the older checks refuse) and
the budget a refused cell's failed test spent.  Run: ``nice python benchmarks/tukey_refusals.py > out.md``
(about half an hour on one core); ``--quick`` for a smoke test.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

import dpstats
import dpstats.methods.tukey.plan as tukey_plan
from dpstats.errors import PTRFailure
from dpstats.methods.registry import FitContext
from dpstats.methods.tukey import SPEC
from dpstats.methods.tukey.em import tukey_em
from dpstats.methods.tukey.options import TukeyOptions
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep

DELTA = 1e-6
SEEDS = 20
BLOCK_ROWS_PER_COLUMN = 10  # a user m's fits: blocks of 10 d rows (larger blocks are closer to the Gaussian limit)
EPSILONS = (0.5, 1.0, 2.0, 3.0, 5.0)
COLUMNS = (2, 3, 5, 10)
FIT_EPSILONS = (1.0, 3.0)  # whole fits: a smaller grid (a fit of 10^5 rows takes about a second)
FIT_COLUMNS = (2, 5, 10)
M_FACTORS = (0.7, 0.8, 0.9, 0.95, 1.0, 1.1, 1.25)
N_FACTORS = (0.8, 0.9, 0.95, 1.0, 1.1, 1.25)


class _FastLedger(PrivacyLedger):
    """Basic composition only (a valid upper bound), for thousands of runs."""

    def _total(self, steps: list[PrivacyStep]) -> tuple[float, float]:
        return (sum(s.epsilon * s.count for s in steps),  # type: ignore[operator]
                sum((s.delta or 0.0) * s.count for s in steps))


@dataclass(frozen=True)
class Setting:
    """One option set of the study."""

    label: str
    m: int | str | None
    ptr: str

    def options(self, m: int | None = None) -> TukeyOptions:
        return SPEC.parse_options({"m": self.m if m is None else m, "ptr": self.ptr})


SETTINGS = (Setting("user m, ptr='lemma'", "user", "lemma"), Setting("user m, ptr='mass'", "user", "mass"),
            Setting("default m, ptr='mass'", None, "mass"), Setting("m='private', ptr='lemma'", "private", "lemma"),
            Setting("m='private', ptr='mass'", "private", "mass"))


@contextlib.contextmanager
def check_off() -> Iterator[None]:
    """The idealised check switched off (the older checks stay)."""
    saved = tukey_plan.MIN_IDEAL_PASS, tukey_plan.MIN_IDEAL_PASS_GIVEN_M
    tukey_plan.MIN_IDEAL_PASS = tukey_plan.MIN_IDEAL_PASS_GIVEN_M = 0.0
    try:
        yield
    finally:
        tukey_plan.MIN_IDEAL_PASS, tukey_plan.MIN_IDEAL_PASS_GIVEN_M = saved


def context(n: int, d: int, epsilon: float) -> FitContext:
    return FitContext(n=n, d=d, ledger=PrivacyLedger(epsilon, DELTA), rng=np.random.default_rng(0),
                      intercept_index=0)


def verdict(n: int, d: int, epsilon: float, options: TukeyOptions) -> str:
    """"r" (an older check refuses), "*" (the idealised check refuses) or "" (fitted)."""
    ctx = context(n, d, epsilon)
    with check_off():
        if tukey_plan.public_refusal(ctx, options):
            return "r"
    return "*" if tukey_plan.public_refusal(ctx, options) else ""


def fewest(ok: object, lo: int, hi: int) -> int:
    """The smallest integer in (lo, hi] with ok (bisection; ok(hi) must hold)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)  # type: ignore[operator]
    return hi


def boundary(setting: Setting, d: int, epsilon: float) -> int:
    """The fewest models (user m, blocks of BLOCK_ROWS_PER_COLUMN d rows) or rows (default m, m="private") that
    the check lets through."""
    if setting.m == "user":
        return fewest(lambda m: verdict(BLOCK_ROWS_PER_COLUMN * d * m, d, epsilon, setting.options(m)) == "", 8,
                      100_000)
    return fewest(lambda n: verdict(n, d, epsilon, setting.options()) == "", 100 * d, 100_000 * d)


def data(n: int, d: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d - 1))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d - 1)])
    df["y"] = 1.0 + X.sum(axis=1) + 0.1 * rng.normal(size=n)
    return df


def fit_outcome(n: int, d: int, epsilon: float, options: TukeyOptions, seed: int) -> tuple[bool, float]:
    """(passed, epsilon spent) of one whole fit with the idealised check off."""
    df = data(n, d, seed)
    formula = "y ~ " + " + ".join(df.columns[:-1])
    given = {"m": options.m, "ptr": options.ptr}
    with check_off(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            dpstats.dp_ols(formula, df, epsilon, DELTA, method="tukey", random_state=seed, **given)
        except PTRFailure as err:
            return False, float(err.privacy_spent[0])
    return True, epsilon


def model_outcome(n: int, d: int, epsilon: float, options: TukeyOptions, seed: int) -> tuple[bool, float]:
    """(passed, epsilon spent) of the fit's own test on i.i.d. standard normal block estimates, with the fit's
    budget split and number of models (m="private": its own private count)."""
    rng = np.random.default_rng(seed)
    ledger = _FastLedger(epsilon, DELTA)
    ctx = FitContext(n=n, d=d, ledger=ledger, rng=rng, intercept_index=0)
    with check_off():
        plan = tukey_plan.make_plan(ctx, options, tukey_plan.FitLog())
    share_m = tukey_plan.PRIVATE_M_SHARE if options.m == "private" else 0.0
    spent_before = epsilon * (share_m + plan.share_prep + plan.share_pilot + plan.share_check)
    try:
        tukey_em(rng.normal(size=(plan.n_models, d)), epsilon_ptr=plan.epsilon_tukey, epsilon_em=plan.epsilon_tukey,
                 delta=plan.delta_tukey, rng=rng, ledger=ledger, ptr=plan.ptr)
    except PTRFailure:
        return False, spent_before + plan.epsilon_tukey
    return True, epsilon


def cells(setting: Setting, kind: str, quick: bool) -> Iterator[tuple[float, int, float, int, TukeyOptions]]:
    """(epsilon, d, factor, n, options) around the boundary."""
    epsilons = (1.0,) if quick else FIT_EPSILONS if kind == "fits" else EPSILONS
    columns = (2,) if quick else FIT_COLUMNS if kind == "fits" else COLUMNS
    for epsilon in epsilons:
        for d in columns:
            edge = boundary(setting, d, epsilon)
            for factor in (M_FACTORS if setting.m == "user" else N_FACTORS):
                if setting.m == "user":
                    m = max(8, round(factor * edge))
                    yield epsilon, d, factor, BLOCK_ROWS_PER_COLUMN * d * m, setting.options(m)
                else:
                    yield epsilon, d, factor, max(100 * d, round(factor * edge)), setting.options()


@dataclass(frozen=True)
class Cell:
    """One cell's outcome: its place, the check's verdict and the seeds whose test passed."""

    epsilon: float
    d: int
    factor: float
    n: int
    options: TukeyOptions
    mark: str
    passed: int
    spent: tuple[float, ...]  # epsilon fractions spent by the failed tests


def outcomes(setting: Setting, kind: str, seeds: int, quick: bool = False) -> Iterator[Cell]:
    """Every cell of the study of ``setting`` (``kind``: "models" or "fits"); cells the older checks refuse are not
    run (passed 0, no spend)."""
    outcome = fit_outcome if kind == "fits" else model_outcome
    for epsilon, d, factor, n, options in cells(setting, kind, quick):
        mark = verdict(n, d, epsilon, options)
        if mark == "r":
            yield Cell(epsilon, d, factor, n, options, mark, 0, ())
            continue
        results = [outcome(n, d, epsilon, options, seed) for seed in range(seeds)]
        spent = tuple(spent / epsilon for p, spent in results if not p)
        yield Cell(epsilon, d, factor, n, options, mark, sum(p for p, _ in results), spent)


def study(setting: Setting, kind: str, seeds: int, quick: bool) -> tuple[list[str], list[float]]:
    """The table's lines and the epsilon fractions spent by the failed tests of refused cells."""
    rows: dict[tuple[float, int], list[str]] = {}
    factors: list[float] = []
    saved: list[float] = []
    for cell in outcomes(setting, kind, seeds, quick):
        if cell.factor not in factors:
            factors.append(cell.factor)
        size = f"m={cell.options.m}" if setting.m == "user" else f"n={cell.n}"
        shown = "r" if cell.mark == "r" else f"{cell.passed}{cell.mark}"
        rows.setdefault((cell.epsilon, cell.d), []).append(f"{size}: {shown}")
        if cell.mark == "*":
            saved += cell.spent
        print(f"{setting.label} {kind} eps={cell.epsilon} d={cell.d} {size}: {shown}", file=sys.stderr)
    scale = "m / boundary" if setting.m == "user" else "n / boundary"
    head = "| epsilon | d | " + " | ".join(f"{scale} {f:g}" for f in factors) + " |"
    lines = [head, "|" + "---|" * (len(factors) + 2)]
    lines += [f"| {e:g} | {d} | " + " | ".join(v) + " |" for (e, d), v in rows.items()]
    return lines, saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--kind", choices=["models", "fits", "both"], default="both")
    parser.add_argument("--setting", type=int, nargs="*", help="indices into SETTINGS (default: all)")
    args = parser.parse_args()
    kinds = ("models", "fits") if args.kind == "both" else (args.kind,)
    chosen = [SETTINGS[i] for i in args.setting] if args.setting else list(SETTINGS)
    print(f"dpstats {dpstats.__version__}; delta={DELTA:g}; {args.seeds} seeds per cell; passes of the PTR test "
          "(* refused by the idealised check, r by the older checks)\n")
    for setting in chosen:
        for kind in kinds:
            lines, saved = study(setting, kind, args.seeds, args.quick)
            print(f"### {setting.label}, {kind}\n")
            print("\n".join(lines))
            if saved:
                print(f"\nRefused cells: {len(saved)} failed tests, each spending on average "
                      f"{np.mean(saved):.0%} of epsilon (range {min(saved):.0%} to {max(saved):.0%}).")
            print()


if __name__ == "__main__":
    main()
