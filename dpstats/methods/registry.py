"""The method registry: one entry per estimator, read by everything else.

A method module defines ``fit(X, y, *, ledger, rng, bounds, **options)`` on
plain numpy arrays and registers a :class:`MethodSpec`.  The API, the summary,
the CLI, the README's method table and the tests parametrised over methods all
read this registry, so adding a method touches one module plus its tests.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np
import pandas as pd

from dpstats.bounds import DataBounds
from dpstats.errors import UnknownMethodError
from dpstats.privacy.ledger import PrivacyLedger

__all__ = ["MethodFit", "MethodSpec", "MethodTable", "register", "get_method", "available_methods", "FitFunction",
           "StatisticsFitFunction", "ChunksFitFunction"]


@dataclass
class MethodFit:
    """What a method returns: the released coefficients and facts about the fit.

    Everything in here is either released through the ledger or computed from
    released quantities and public facts (post-processing).
    """

    params: np.ndarray
    bse: np.ndarray | None = None
    bse_unavailable_reason: str = "this method does not provide private standard errors yet"
    assumptions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    info: dict[str, Any] = field(default_factory=dict)
    draws: np.ndarray | None = None
    """Bootstrap replicates (B, d) of the estimator, simulated from released values only;
    when given, standard errors and intervals come from them."""
    guarantee: str | None = None  # overrides MethodSpec.guarantee for this fit (e.g. an opt-in "conditional")


class FitFunction(Protocol):
    def __call__(self, X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
                 bounds: DataBounds | None, **options: Any) -> MethodFit: ...


class StatisticsFitFunction(Protocol):
    """The release and post-processing of a sufficient-statistics method, from accumulated statistics."""

    def __call__(self, stats: Any, *, ledger: PrivacyLedger, rng: np.random.Generator,
                 bounds: DataBounds | None, **options: Any) -> MethodFit: ...


class ChunksFitFunction(Protocol):
    """A method that reads its rows chunk by chunk through a :class:`~dpstats.methods.sufficient.RowChunks`."""

    def __call__(self, rows: Any, *, ledger: PrivacyLedger, rng: np.random.Generator,
                 bounds: DataBounds | None, **options: Any) -> MethodFit: ...


@dataclass(frozen=True)
class MethodSpec:
    """Registry entry of one estimator.

    Attributes
    ----------
    name, title, citation:
        ``method=`` name, a human title and the paper it implements.
    fit:
        The estimator on numpy arrays.
    needs_bounds:
        True when the method needs public data bounds (enforced by clipping).
    private:
        False only for the non-private reference ``ols``.
    relation, guarantee:
        Neighbouring relation and guarantee kind ("worst-case", "conditional",
        "none").
    regimes:
        When the method suits, in words (for docs and ``auto``).
    min_rows:
        Public minimum n as a function of d.
    options:
        Names of the method-specific keyword options it accepts.
    allows_wide:
        True when d > n is allowed (sparse methods).
    theory:
        Key of its upper bound in :mod:`dpstats.theory`, or None.
    auto_rank:
        Preference of ``method="auto"`` among eligible methods (lowest wins);
        None keeps the method out of ``auto``.
    fit_statistics, plan_statistics:
        Optional, for methods whose data enter only through sums over rows
        (:mod:`dpstats.methods.sufficient`): ``fit_statistics(stats, *, ledger,
        rng, bounds, **options)`` releases and post-processes accumulated
        statistics (the in-memory ``fit`` should call it too, so that both
        paths share one release), and ``plan_statistics(bounds, **options)``
        validates the options and says what to accumulate, before any data
        are read.  Chunked and Dask sources use them.
    fit_chunks:
        Optional: ``fit_chunks(rows, *, ledger, rng, bounds, **options)`` for a
        method that reads a :class:`~dpstats.methods.sufficient.RowChunks`
        in passes (e.g. TukeyEM's per-block statistics).  A method with
        neither this nor ``fit_statistics`` cannot fit chunked data.
    chunks_note:
        Why a method without chunked support has none (shown in the error).
    raw_units_warning:
        A warning for fits on the data's own units (see the field).
    null_rows:
        True when a zero row (x = 0, including the intercept, and y = 0, in
        the units the method sees, after its clipping) adds nothing to what
        the method releases, so that ``missing="drop"`` can map each
        incomplete row to such a public null row and keep n public (the
        sufficient-statistics methods, the lasso and DP-SGD: their releases
        are sums over rows of terms that vanish at a zero row).  Methods that
        centre or standardise rows internally would turn a zero row into a
        data point, so they refuse ``missing="drop"``.
    """

    name: str
    title: str
    citation: str
    fit: FitFunction
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
    """Public minimum n (given d) for ``method="auto"`` to pick this method; defaults to ``min_rows``."""
    fit_statistics: StatisticsFitFunction | None = None
    plan_statistics: Callable[..., Any] | None = None
    fit_chunks: ChunksFitFunction | None = None
    chunks_note: str = ""
    null_rows: bool = False
    raw_units_warning: str = ""
    """Shown as a WARNING when the fit ran on the data's own units (no public rescaling: some variable without
    declared bounds, or ``rescale=False``), for methods whose defaults assume unit scale."""

    @property
    def supports_chunks(self) -> bool:
        """True when the method can fit data read in chunks (files, Dask)."""
        return self.fit_chunks is not None or self.fit_statistics is not None


_REGISTRY: dict[str, MethodSpec] = {}


def register(spec: MethodSpec) -> MethodSpec:
    """Add a method to the registry (its name must be new)."""
    if spec.name in _REGISTRY or spec.name == "auto":
        raise ValueError(f"method '{spec.name}' is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def get_method(name: str) -> MethodSpec:
    """Look up a registered method by name, with a helpful error."""
    if not isinstance(name, str) or name not in _REGISTRY:
        raise UnknownMethodError(
            f"unknown method {name!r}; available: {', '.join(sorted(_REGISTRY))} or 'auto'")
    return _REGISTRY[name]


class MethodTable(dict):
    """The registered methods: a dict from name to :class:`MethodSpec` that shows itself as a table (name,
    title, needs bounds, guarantee, chunks: whether it fits data read in chunks)."""

    def to_frame(self) -> pd.DataFrame:
        """One row per method, indexed by name."""
        rows = [{"name": name, "title": spec.title, "needs bounds": spec.needs_bounds,
                 "guarantee": spec.guarantee if spec.private else "none: NOT PRIVATE",
                 "chunks": spec.supports_chunks} for name, spec in sorted(self.items())]
        return pd.DataFrame(rows, columns=["name", "title", "needs bounds", "guarantee", "chunks"]).set_index("name")

    def _cells(self) -> list[list[str]]:
        frame = self.to_frame()
        header = ["name", *frame.columns]
        body = [[str(name), *("yes" if v is True else "no" if v is False else str(v) for v in row)]
                for name, row in zip(frame.index, frame.itertuples(index=False))]
        return [header, *body]

    def __repr__(self) -> str:
        rows = self._cells()
        widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])

    def _repr_html_(self) -> str:
        head, *body = self._cells()
        cell = "<{0} style='text-align: left'>{1}</{0}>"
        rows = ["<tr>" + "".join(cell.format(tag, html.escape(c)) for c in r) + "</tr>"
                for tag, r in [("th", head), *(("td", r) for r in body)]]
        return "<table>" + "".join(rows) + "</table>"


def available_methods() -> MethodTable:
    """All registered methods, by name (a copy): a mapping name -> :class:`MethodSpec` that prints as a table."""
    return MethodTable(_REGISTRY)
