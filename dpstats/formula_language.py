"""Deprecated alias of :mod:`dpstats.formula.language` and :mod:`dpstats.formula.parse`; import from there.

Kept for one release: importing this module warns with a DeprecationWarning.
"""

from __future__ import annotations

import warnings

from dpstats.formula.language import FORMULA_ENV, NAMESPACE, FactorFacts, check_factor, check_numeric_dtypes
from dpstats.formula.parse import expand_formula, join_terms, model_desc, term

__all__ = ["NAMESPACE", "FORMULA_ENV", "FactorFacts", "check_factor", "check_numeric_dtypes", "expand_formula",
           "model_desc", "term", "join_terms"]

warnings.warn("dpstats.formula_language is deprecated: import from dpstats.formula.language (the allow-list and "
              "NAMESPACE) or dpstats.formula.parse (expand_formula, model_desc, term, join_terms)",
              DeprecationWarning, stacklevel=2)
