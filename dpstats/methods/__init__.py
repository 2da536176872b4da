"""Estimators: one module (or subpackage) per method, each described by its MethodSpec in the registry.

The package imports no estimator: :mod:`dpstats.methods.registry` imports the built-in ones
(:data:`~dpstats.methods.registry.BUILTIN_METHODS`) on the first lookup, so that importing the registry or a
shared block (:mod:`dpstats.methods.common`) from a lower layer loads no estimator.
"""

from dpstats.methods.registry import MethodFit, MethodSpec, available_methods, get_method, register

__all__ = ["MethodFit", "MethodSpec", "available_methods", "get_method", "register"]
