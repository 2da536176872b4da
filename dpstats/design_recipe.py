"""Deprecated alias of :mod:`dpstats.formula.recipe`; import ``DesignRecipe`` from there.

Kept for one release: importing this module warns with a DeprecationWarning.
"""

from __future__ import annotations

import warnings

from dpstats.formula.recipe import DesignRecipe

__all__ = ["DesignRecipe"]

warnings.warn("dpstats.design_recipe is deprecated: import DesignRecipe from dpstats.formula.recipe",
              DeprecationWarning, stacklevel=2)
