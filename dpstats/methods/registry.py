"""The method registry: the one place an estimator is described, read by every other layer.

An estimator is one module (or subpackage) under :mod:`dpstats.methods` that
defines, with the types of :mod:`dpstats.methods.spec`,

* a frozen options dataclass subclassing :class:`MethodOptions` (its real
  options, defaults written once, validation in ``__post_init__``);
* ``fit(rows, ctx, options) -> MethodFit``, reading the data only through
  :class:`~dpstats.rows.base.Rows` passes, drawing noise only through
  ``ctx.ledger`` and ``ctx.rng``, and calibrating to ``ctx.epsilon`` and
  ``ctx.delta`` (never ``ctx.ledger.epsilon``: the ledger's budget also
  holds the fit's missing-value screen, charged before the method's first
  step);
* ``SPEC = MethodSpec(...)``, a module constant: its name, citation, options
  class, public requirements, inference rule and theory rate (importing the
  module registers nothing);

and is imported here and listed in ``_BUILTIN_MODULES``
(:data:`BUILTIN_METHODS` are their names).  :mod:`dpstats.methods.ssp` is the
reference example.  A method of another package is added with
:func:`register`.

This module sits above the estimators: it imports every built-in one and
registers its ``SPEC`` when it is imported, so the registry is complete as
soon as it can be read.  The pipeline, ``method="auto"``, the summary, the
theory tables, the planning, the CLI, the README's method table and the
parametrised tests read it; no other module keeps a table keyed by method
name.  The layers below the estimators (:mod:`dpstats.inference`, the
shared blocks) never read it: they take a method's facts as arguments.
The types of :mod:`dpstats.methods.spec` are re-exported here, their public
home for authors of a new method.
"""

from __future__ import annotations

import difflib
import html
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from dpstats.errors import UnknownMethodError
from dpstats.inference import MOVED_UP as INFERENCE_MOVED_UP
from dpstats.inference import withholding_reason
from dpstats.methods import MOVED_UP as PACKAGE_MOVED_UP
from dpstats.methods import adassp, ambssgd, dpsgd, lasso, noisy_ols, ols, pgd, robgd, ssp, theilsen, tukey
from dpstats.methods.spec import (
    PUBLIC_FACTS,
    AutoFacts,
    AutoRule,
    ErrorSplit,
    FitContext,
    FitFunction,
    Inference,
    InferenceRule,
    MethodFit,
    MethodOptions,
    MethodSpec,
    ReleasedStatistics,
    ReleasedSums,
    TheoryInputs,
)

__all__ = ["MethodOptions", "FitContext", "Inference", "InferenceRule", "ErrorSplit", "ReleasedStatistics",
           "ReleasedSums", "TheoryInputs", "MethodFit", "MethodSpec", "MethodTable", "FitFunction", "register",
           "get_method", "available_methods", "PUBLIC_FACTS", "BUILTIN_METHODS", "AutoFacts", "AutoRule", "choose_auto",
           "add_auto_rules"]

#: the built-in estimators: modules (or subpackages) of :mod:`dpstats.methods`, each exporting its MethodSpec as
#: ``SPEC`` (a module's name is its method's name); registered in this order when the registry is imported (the
#: order :func:`available_methods` lists them in): the reference example ssp first, then by name
_BUILTIN_MODULES = (ssp, adassp, ambssgd, dpsgd, lasso, noisy_ols, ols, pgd, robgd, theilsen, tukey)

#: the names of the built-in estimators (their modules' names), by name
BUILTIN_METHODS = tuple(sorted(module.SPEC.name for module in _BUILTIN_MODULES))

_REGISTRY: dict[str, MethodSpec] = {}


def register(spec: MethodSpec) -> MethodSpec:
    """Add a method to the registry (its name must be new, also among the built-in methods) and return its spec.

    The rules its spec adds to other methods' regimes (``MethodSpec.auto_rules_for``) are added with
    :func:`add_auto_rules`.  The registry registers the built-in methods itself; a method of another package
    (a plug-in) calls this once.

    Parameters
    ----------
    spec : MethodSpec
        The method's description.

    Returns
    -------
    MethodSpec
        ``spec``, so that a plug-in's module can write ``SPEC = register(MethodSpec(...))``.

    Raises
    ------
    ValueError
        When the name is taken (or is ``"auto"``), or a withholding threshold is not finite.
    TypeError
        When ``spec.options`` is not a :class:`MethodOptions` dataclass.

    Examples
    --------
    A name that is already registered is refused:

    >>> from dpstats.methods.registry import get_method, register
    >>> register(get_method("ssp"))
    Traceback (most recent call last):
    ...
    ValueError: method 'ssp' is already registered
    """
    if spec.name in _REGISTRY or spec.name == "auto":
        raise ValueError(f"method '{spec.name}' is already registered")
    if not (isinstance(spec.options, type) and issubclass(spec.options, MethodOptions)):
        raise TypeError(f"method '{spec.name}': options must be a MethodOptions dataclass")
    if spec.inference_rule.withhold_above is not None and not math.isfinite(spec.inference_rule.withhold_above):
        raise ValueError(f"method '{spec.name}': a withholding threshold must be finite")
    _REGISTRY[spec.name] = spec
    for name, rule in spec.auto_rules_for:
        add_auto_rules(name, (rule,))
    return spec


def get_method(name: str) -> MethodSpec:
    """Look up a registered method by name, with a helpful error.

    Parameters
    ----------
    name : str
        The method's registered name.

    Returns
    -------
    MethodSpec
        Its description.

    Raises
    ------
    UnknownMethodError
        No method of that name, listing the registered ones.

    Examples
    --------
    >>> from dpstats.methods.registry import get_method
    >>> get_method("ssp").title
    'Sufficient statistics perturbation'
    """
    if not isinstance(name, str) or name not in _REGISTRY:
        raise UnknownMethodError(f"unknown method {name!r}{_did_you_mean(name)}; available: "
                                 f"{', '.join(sorted(_REGISTRY))} or 'auto'")
    return _REGISTRY[name]


def _did_you_mean(name: object) -> str:
    """'; did you mean ...' for a name that differs from a registered method or 'auto' in case or spelling."""
    if not isinstance(name, str):
        return ""
    names = [*sorted(_REGISTRY), "auto"]
    folded = {n.lower(): n for n in names}
    match = folded.get(name.lower()) or next(iter(difflib.get_close_matches(name.lower(), names, n=1)), None)
    return f"; did you mean {match!r}" if match else ""


class MethodTable(dict):
    """The registered methods: a dict from name to :class:`MethodSpec` that shows itself as a table (name,
    title, needs bounds, guarantee, chunks: whether it fits data read in chunks).

    Examples
    --------
    >>> from dpstats import available_methods
    >>> table = available_methods()
    >>> table.to_frame().loc["ols", "guarantee"]
    'none: NOT PRIVATE'
    """

    def to_frame(self) -> pd.DataFrame:
        """One row per method, indexed by name.

        Returns
        -------
        pandas.DataFrame
            Columns ``title``, ``needs bounds``, ``guarantee`` and ``chunks``, indexed by ``name``.
        """
        rows = [{"name": name, "title": spec.title, "needs bounds": spec.needs_bounds,
                 "guarantee": spec.guarantee if spec.private else "none: NOT PRIVATE",
                 "chunks": spec.supports_chunks} for name, spec in sorted(self.items())]
        return pd.DataFrame(rows, columns=["name", "title", "needs bounds", "guarantee", "chunks"]).set_index("name")

    def _cells(self) -> list[list[str]]:
        frame = self.to_frame()
        header = ["name", *frame.columns]
        body = [[str(name), *("yes" if v is True else "no" if v is False else str(v) for v in row)]
                for name, row in zip(frame.index, frame.itertuples(index=False), strict=True)]
        return [header, *body]

    def __repr__(self) -> str:
        rows = self._cells()
        widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])

    def _repr_html_(self) -> str:
        head, *body = self._cells()
        cell = "<{0} style='text-align: left'>{1}</{0}>"
        rows = ["<tr>" + "".join(cell.format(tag, html.escape(c)) for c in r) + "</tr>"
                for tag, r in [("th", head), *(("td", r) for r in body)]]
        return "<table>" + "".join(rows) + "</table>"


def available_methods() -> MethodTable:
    """All registered methods, by name (a copy): a mapping name -> :class:`MethodSpec` that prints as a table.

    Returns
    -------
    MethodTable
        ``{name: MethodSpec}``, shown as a table (name, title, needs bounds, guarantee, chunks).

    Examples
    --------
    >>> from dpstats import available_methods
    >>> methods = available_methods()
    >>> "ssp" in methods, methods["ssp"].needs_bounds
    (True, True)
    """
    return MethodTable(_REGISTRY)


#: Rules added by another module for a method that may or may not be registered (:func:`add_auto_rules`).
_ADDED_AUTO_RULES: dict[str, tuple[AutoRule, ...]] = {}


def add_auto_rules(name: str, rules: tuple[AutoRule, ...]) -> None:
    """Add ``rules`` to the method ``name``'s regimes for ``method="auto"``, whether or not ``name`` is registered
    (yet): they apply only while it is (:func:`choose_auto` looks at the registered methods).

    For a regime measured by another method's study.  A registered method declares such rules in its spec
    (``MethodSpec.auto_rules_for``, added by :func:`register`): e.g. pgd's, where auto falls back to a point
    estimate below pgd's interval threshold (dpstats/methods/pgd.py, docs/choosing.md).

    Parameters
    ----------
    name : str
        The method's name (registered or not).
    rules : tuple of AutoRule
        The regimes to add.

    Examples
    --------
    >>> from dpstats.methods.registry import AutoRule, add_auto_rules
    >>> add_auto_rules("a_method_not_registered", (AutoRule(rank=99),))  # no effect until it is registered
    """
    _ADDED_AUTO_RULES[name] = (*_ADDED_AUTO_RULES.get(name, ()), *rules)


def choose_auto(facts: AutoFacts) -> tuple[MethodSpec, AutoRule] | None:
    """The method ``method="auto"`` fits with under the public ``facts``: among the registered methods with a
    matching rule (:meth:`MethodSpec.auto_rule`), the lowest rank (ties: the name); None when there is none.

    This is the whole of auto's rule: each method's regimes are its registered facts (``auto_rules``), chosen on
    simulations and the real-data benchmark (docs/choosing.md).

    Parameters
    ----------
    facts : AutoFacts
        The public facts of the fit.

    Returns
    -------
    tuple of (MethodSpec, AutoRule) or None
        The chosen method and the rule that chose it, or None when no method matches.

    Examples
    --------
    >>> from dpstats.methods.registry import AutoFacts, choose_auto
    >>> spec, rule = choose_auto(AutoFacts(n=800, d=3, epsilon=1.0, delta=1e-6, bounds=True))
    >>> spec.name
    'pgd'
    """
    eligible = [(rule, spec) for spec in _REGISTRY.values()
                if (rule := spec.auto_rule(facts, _ADDED_AUTO_RULES.get(spec.name, ()))) is not None]
    if not eligible:
        return None
    rule, spec = min(eligible, key=lambda pair: (pair[0].rank, pair[1].name))
    return spec, rule


for _module in _BUILTIN_MODULES:
    register(_module.SPEC)


# -- names that read the registry, kept for one release where they used to be (dpstats.deprecation.MovedUp) ---------

def _withheld_reason(method: str, info: Mapping[str, Any], draws: np.ndarray | None,
                     bse: np.ndarray | None = None) -> str:
    """The deprecated ``dpstats.inference.withheld_reason``: :func:`~dpstats.inference.withholding_reason` with a
    registered method's threshold and a fit's diagnostics ``info`` (its ``"noise_to_signal"``)."""
    ratio = info.get("noise_to_signal")
    return withholding_reason(method, None if ratio is None else float(ratio),
                              get_method(method).inference_rule.withhold_above, draws, bse)


PACKAGE_MOVED_UP.add("available_methods", "dpstats.available_methods", available_methods)
PACKAGE_MOVED_UP.add("get_method", f"{__name__}.get_method", get_method)
PACKAGE_MOVED_UP.add("register", f"{__name__}.register", register)
INFERENCE_MOVED_UP.add("withheld_reason", "dpstats.inference.withholding_reason with the method's "
                       "MethodSpec.inference_rule.withhold_above", _withheld_reason)
INFERENCE_MOVED_UP.add("WITHHOLD_THRESHOLD", "each method's MethodSpec.inference_rule.withhold_above",
                       {name: spec.inference_rule.withhold_above for name, spec in _REGISTRY.items()
                        if spec.inference_rule.withhold_above is not None})
