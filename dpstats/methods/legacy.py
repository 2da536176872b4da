"""TEMPORARY adapter for the methods not yet ported to ``fit(rows, ctx, options)``: remove it once they are.

``tukey``, ``dpsgd`` and ``lasso`` still define the
previous interface: ``fit(X, y, *, ledger, rng, bounds, **options)`` on
in-memory arrays and ``fit_chunks(rows, *, ledger, rng, bounds, **options)``
on chunked rows, returning a :class:`LegacyMethodFit` (``info`` dict,
``bse``/``draws``), and register a :class:`LegacyMethodSpec` (option names as
a tuple).  They import these three names under their old names
(``MethodFit``, ``MethodSpec``, ``register``), so their code is unchanged.
:func:`register_legacy` turns such a spec into a
:class:`~dpstats.methods.registry.MethodSpec` whose ``fit`` is
:class:`LegacyFit`:

* options: a :class:`LegacyOptions` that accepts the method's option names
  minus the public facts (``intercept_index``, ``column_ranges``,
  ``response_range``, which users can no longer pass) and validates names
  only; the method validates values in its own fit, before it spends;
* public facts: taken from the :class:`~dpstats.methods.registry.FitContext`
  and passed to the old functions under their old names, for the methods
  whose option tuple names them;
* data: one in-memory chunk goes to the old ``fit(X, y, ...)``; any other
  rows (files, Dask, several in-memory chunks) go to ``fit_chunks``;
* result: the old ``info`` dict becomes ``diagnostics`` (its ``"sparsity"``
  also the theory input), ``draws`` a bootstrap :class:`Inference`;
* theory: each method's rate from the table below (to move into the
  method's module when it is ported).

Porting a method (follow :mod:`dpstats.methods.ssp`): one options dataclass,
one ``fit(rows, ctx, options)`` whose passes are ``rows.reduce`` calls (no
separate in-memory path), ``register(MethodSpec(...))`` with the inference
rule and theory rate; then drop its entry here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from dpstats.errors import MethodOptionError
from dpstats.methods.registry import (
    PUBLIC_FACTS, FitContext, Inference, MethodFit, MethodOptions, MethodSpec, TheoryInputs, register,
)
from dpstats.rates import CAI, SPARSE_MODEL, Rate, UpperRate, log_inv, needs_sparsity
from dpstats.rows.base import Rows
from dpstats.rows.memory import InMemoryRows

__all__ = ["LegacyMethodFit", "LegacyMethodSpec", "LegacyOptions", "LegacyFit", "register_legacy"]


@dataclass
class LegacyMethodFit:
    """The previous ``MethodFit``: released coefficients and facts about the fit (``info`` is free-form)."""

    params: np.ndarray
    bse: np.ndarray | None = None
    bse_unavailable_reason: str = "this method does not provide private standard errors yet"
    assumptions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    info: dict[str, Any] = field(default_factory=dict)
    draws: np.ndarray | None = None
    guarantee: str | None = None


@dataclass(frozen=True)
class LegacyMethodSpec:
    """The previous registry entry (the fields the legacy methods set)."""

    name: str
    title: str
    citation: str
    fit: Callable[..., LegacyMethodFit]
    needs_bounds: bool
    private: bool = True
    relation: str = "replace-one"
    guarantee: str = "worst-case"
    regimes: str = ""
    min_rows: Callable[[int], int] = lambda d: d + 1
    options: tuple[str, ...] = ()
    allows_wide: bool = False
    theory: str | None = None
    auto_rank: int | None = None
    auto_min_rows: Callable[[int], int] | None = None
    fit_chunks: Callable[..., LegacyMethodFit] | None = None
    chunks_note: str = ""
    null_rows: bool = False
    raw_units_warning: str = ""


@dataclass(frozen=True)
class LegacyOptions(MethodOptions):
    """The options of a legacy method as given by the user (names checked; values checked by the method)."""

    values: Mapping[str, Any] = field(default_factory=dict)
    accepted: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return cls.accepted

    @classmethod
    def from_user(cls, options: Mapping[str, Any], *, method: str = "this method") -> LegacyOptions:
        unknown = sorted(set(options) - set(cls.accepted))
        if unknown:
            accepted = ", ".join(cls.accepted) or "no options"
            raise MethodOptionError(f"method '{method}' does not accept {', '.join(unknown)}; it accepts {accepted}")
        return cls(values=dict(options))

    def as_dict(self) -> dict[str, Any]:
        return dict(self.values)


class LegacyFit:
    """``fit(rows, ctx, options)`` calling a legacy method's ``fit`` or ``fit_chunks`` (module docstring)."""

    def __init__(self, legacy: LegacyMethodSpec) -> None:
        self.legacy = legacy

    def __call__(self, rows: Rows, ctx: FitContext, options: MethodOptions) -> MethodFit:
        kw = options.as_dict()
        facts = {"intercept_index": ctx.intercept_index, "column_ranges": list(ctx.column_ranges) or None,
                 "response_range": ctx.response_range}
        kw.update({k: v for k, v in facts.items() if k in self.legacy.options})
        common: dict[str, Any] = {"ledger": ctx.ledger, "rng": ctx.rng, "bounds": ctx.bounds}
        if isinstance(rows, InMemoryRows) and rows.one_chunk:
            old = self.legacy.fit(rows.X, rows.y, **common, **kw)
        elif self.legacy.fit_chunks is not None:
            old = self.legacy.fit_chunks(rows, **common, **kw)
        else:  # pragma: no cover - every legacy method has fit_chunks
            raise TypeError(f"method '{self.legacy.name}' has no fit_chunks")
        return translate(old)


def translate(old: LegacyMethodFit) -> MethodFit:
    """A :class:`LegacyMethodFit` as a typed :class:`~dpstats.methods.registry.MethodFit`."""
    info = dict(old.info)
    inference = None
    if old.draws is not None:
        inference = Inference("bootstrap", draws=np.asarray(old.draws, dtype=float),
                              noise_to_signal=info.get("noise_to_signal"))
    elif old.bse is not None:  # pragma: no cover - no legacy method gives standard errors without draws
        raise TypeError("a legacy method with standard errors must be ported to the typed interface")
    sparsity = info.get("sparsity")
    return MethodFit(params=old.params, inference=inference, no_inference_reason=old.bse_unavailable_reason,
                     notes=tuple(old.notes), assumptions=tuple(old.assumptions), guarantee=old.guarantee,
                     theory_inputs=TheoryInputs(sparsity=None if sparsity is None else int(sparsity)),
                     diagnostics=info)


# -- the legacy methods' theory rates (move each into its module when it is ported) ---------------------------

_LASSO = Rate(
    "upper", "lasso upper bound", f"{CAI} Thm 17",
    "sqrt(s log d log n / n) + s sqrt(log(1/delta)) log d log^(3/2) n/(n eps)",
    lambda n, d, s: math.sqrt(s * math.log(d) * math.log(n) / n),
    lambda n, d, e, dl, s: s * math.sqrt(log_inv(dl)) * math.log(d) * math.log(n) ** 1.5 / (n * e),
    needs_sparsity, (SPARSE_MODEL, "a high-probability bound, for s_hat ≍ s, T >= K sigma sqrt(log n), the "
                     "paper's step 1/c_x^2 (step_size=1.0 after rescaling) and N0 ≍ log n; dpstats' default "
                     "step 1/L_2s is safe on any design but is not covered by the theorem"), needs_sparsity=True)

_LEGACY_RATES: dict[str, UpperRate] = {
    "lasso": UpperRate(_LASSO),
    "tukey": UpperRate(uncovered_source="TukeyEM (Amin et al. 2023)", why_none=(
        "Amin et al.'s utility theorem (Thm 3.1, via Brown et al. 2021) covers only the exact-depth Tukey EM; "
        "dpstats implements the approximate-depth EM, which has no utility theorem (in practice it needs "
        "n >~ 1000 d with m = 1000 models)")),
    "dpsgd": UpperRate(why_none="no rate for ||b - beta||_2 is proved for DP-SGD in this model"),
}


class _FixedRate:
    """``theory_rate`` returning one registered rate whatever the guarantee (picklable, unlike a lambda)."""

    def __init__(self, upper: UpperRate) -> None:
        self.upper = upper

    def __call__(self, guarantee: str) -> UpperRate:
        return self.upper


def register_legacy(legacy: LegacyMethodSpec) -> MethodSpec:
    """Register a legacy method through the adapter; returns the registered spec."""
    accepted = tuple(o for o in legacy.options if o not in PUBLIC_FACTS)
    options = type(f"{legacy.name.capitalize()}LegacyOptions", (LegacyOptions,), {"accepted": accepted})
    upper = _LEGACY_RATES.get(legacy.name)
    return register(MethodSpec(
        name=legacy.name, title=legacy.title, citation=legacy.citation, fit=LegacyFit(legacy), options=options,
        needs_bounds=legacy.needs_bounds, private=legacy.private, relation=legacy.relation,
        guarantee=legacy.guarantee, regimes=legacy.regimes, min_rows=legacy.min_rows,
        allows_wide=legacy.allows_wide, theory_rate=None if upper is None else _FixedRate(upper),
        auto_rank=legacy.auto_rank, auto_min_rows=legacy.auto_min_rows, raw_units_warning=legacy.raw_units_warning,
        null_rows=legacy.null_rows,
    ))
