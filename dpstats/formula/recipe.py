"""What rebuilds a fit's patsy DesignInfo, so that results can be pickled.

patsy refuses to pickle its objects, and a fit keeps the DesignInfo of its
right-hand side to evaluate new data in ``predict``.  :class:`DesignRecipe`
stores what rebuilds it, all of it public (the formula's terms and the
declared levels; nothing from the data):

* the right-hand side, written back from the DesignInfo's terms
  (``1 + x + C(g, levels=[...])``, grouped in parentheses when long, as
  :func:`dpstats.formula_all` does, so that patsy's parser does not recurse
  deeply);
* (functions come from dpstats's own formula namespace,
  :data:`dpstats.formula.language.NAMESPACE`, so nothing of the caller's is stored);
* a zero-row prototype frame: a variable that enters as a factor is a
  Categorical with the categories the DesignInfo holds (its public levels),
  any other variable a float column; where a transform cannot be evaluated
  on zero rows (spline bases such as ``bs``), one row of public values
  instead, each numeric variable at the midpoint of its declared bounds
  (1.0 where none were declared), by :func:`dpstats.formula.public_prototype`.

:meth:`DesignRecipe.rebuild` builds the design on the prototype with
:func:`dpstats.formula.design.rebuild_design_infos`, the same rebuild the
workers of a Dask cluster run, which checks the column names against the
original.
:meth:`DesignRecipe.of` rebuilds once, so a design that cannot be rebuilt
this way is refused when the results are pickled (``pickle.PicklingError``
saying why), never when they are loaded.
"""

from __future__ import annotations

import ast
import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from patsy.eval import ast_names

from dpstats.formula.design import public_prototype, rebuild_design_infos
from dpstats.formula.language import CONTRASTS, NAMESPACE
from dpstats.formula.parse import join_terms, quoted_names

__all__ = ["DesignRecipe"]

#: the response of the rebuilt formula (ChunkEvaluator builds both sides; only the right-hand side is kept)
_RESPONSE = "_dpstats_response_"


#: names of the formula language that factor code uses as values (a contrast passed bare, ``C(g, Sum)``; numpy)
_VALUES_OF_THE_LANGUAGE = frozenset({*CONTRASTS, "np", "numpy"})


def _value_names(code: str) -> set[str]:
    """The bare names that factor code uses as values, not as a function or a module (``exp`` in ``I(exp - 20)``
    is a column the data named like numpy's function; in ``exp(x)`` and ``np.exp(x)`` it is the function): a
    column named like a function of the formula language is a variable where the code reads it as a value, as
    patsy's evaluation, which looks the data up first, does."""
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return set()
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    modules = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and id(node) not in called
            and id(node) not in modules and node.id not in _VALUES_OF_THE_LANGUAGE}


def _factor_variable(code: str) -> str | None:
    """The variable a categorical factor codes directly: ``g``, ``C(g, ...)`` or ``C(Q("g"), ...)``; else None."""
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "C" and node.args:
        node = node.args[0]
    if isinstance(node, ast.Name):
        return node.id
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Q" and node.args
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.args[0].value
    return None


@dataclass(frozen=True)
class DesignRecipe:
    """The public facts that rebuild a right-hand-side DesignInfo (module docstring).

    Attributes
    ----------
    rhs : str
        The right-hand side as a patsy formula.
    prototype : pandas.DataFrame
        Zero rows (or one row of public values); the variables with their public dtypes and categories.
    column_names : tuple of str
        The design columns the rebuild must reproduce.
    """

    rhs: str
    prototype: pd.DataFrame
    column_names: tuple[str, ...]

    @classmethod
    def of(cls, design_info: Any, bounds: Mapping[str, tuple[float, float]] | None = None) -> DesignRecipe:
        """The recipe of ``design_info``, checked by rebuilding it.

        Parameters
        ----------
        design_info : patsy.DesignInfo
            A fit's right-hand side.
        bounds : mapping of str to (float, float), optional
            The fit's declared bounds: the values of the one-row prototype where zero rows cannot be evaluated.

        Returns
        -------
        DesignRecipe
            What rebuilds it.

        Raises
        ------
        pickle.PicklingError
            The design cannot be rebuilt this way (saying why).
        """
        categorical: dict[str, tuple[Any, ...]] = {}
        numeric: set[str] = set()
        for factor, finfo in design_info.factor_infos.items():
            code = getattr(factor, "code", None)
            if code is None:
                raise pickle.PicklingError(f"cannot pickle a design with the patsy factor {factor!r} (not a formula "
                                           "term)")
            quoted = quoted_names(code)
            variables = [name for name in [*ast_names(code), *quoted]
                         if name not in NAMESPACE or name in quoted or name in _value_names(code)]
            direct = _factor_variable(code) if finfo.type == "categorical" else None
            for name in variables:
                if name == direct:
                    categorical[name] = tuple(finfo.categories)
                else:
                    numeric.add(name)
        names = [*categorical, *sorted(numeric)]
        zero_rows = pd.DataFrame({name: np.empty(0) if name in numeric
                                  else pd.Categorical([], categories=list(categorical[name])) for name in names},
                                 index=pd.RangeIndex(0))
        failure: Exception | None = None
        for prototype in (zero_rows, public_prototype(zero_rows, bounds)):
            recipe = cls(rhs=_rhs(design_info), prototype=prototype, column_names=tuple(design_info.column_names))
            try:
                recipe.rebuild()
            except Exception as exc:  # noqa: BLE001 - any failure means this design cannot be rebuilt this way
                failure = exc
                continue
            return recipe
        assert failure is not None
        raise pickle.PicklingError(
            "these results cannot be pickled: their design (patsy cannot pickle it) could not be rebuilt from the "
            f"formula's terms on a zero-row or one public row of the variables ({type(failure).__name__}: "
            f"{str(failure).splitlines()[0] if str(failure) else ''}); keep res.params and the formula instead")

    def rebuild(self) -> Any:
        """The DesignInfo, rebuilt on the prototype by :func:`dpstats.formula.design.rebuild_design_infos`.

        Returns
        -------
        patsy.DesignInfo
            The right-hand side's design, with the original column names.
        """
        proto = self.prototype.assign(**{_RESPONSE: np.zeros(len(self.prototype))})
        return rebuild_design_infos(f"{_RESPONSE} ~ {self.rhs}", proto, self.column_names)[1]


def _rhs(design_info: Any) -> str:
    """The right-hand side of ``design_info`` as a formula, its terms in their order, long sums nested."""
    terms = [":".join(f.code for f in t.factors) for t in design_info.terms if t.factors]
    has_intercept = any(not t.factors for t in design_info.terms)
    return ("1" if has_intercept else "0") + (" + " + join_terms(terms) if terms else "")
