"""Estimators.  Importing this package registers every built-in method."""

from dpstats.methods import adassp, ambssgd, dpsgd, lasso, noisy_ols, ols, pgd, robgd, ssp, tukey  # noqa: F401  (registration side effects)
from dpstats.methods.registry import MethodFit, MethodSpec, available_methods, get_method, register

__all__ = ["MethodFit", "MethodSpec", "available_methods", "get_method", "register"]
