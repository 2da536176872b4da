"""Estimators: one module (or subpackage) per method, each exporting its MethodSpec, and the registry above them.

The package imports no estimator and not the registry: importing a shared block (:mod:`dpstats.methods.common`)
or the types of :mod:`dpstats.methods.spec` from a layer below the estimators runs this file, so it imports
the types only.  :mod:`dpstats.methods.registry` imports every built-in estimator and is where a method is
looked up.  ``available_methods``, ``get_method`` and ``register`` of this package are deprecated aliases of
the registry's (one release), which the registry hands down when it is imported
(:class:`~dpstats.deprecation.MovedUp`).
"""

from typing import Any

from dpstats.deprecation import MovedUp
from dpstats.methods.spec import MethodFit, MethodSpec

__all__ = ["MethodFit", "MethodSpec"]

#: available_methods, get_method, register: deprecated here, added by dpstats.methods.registry
MOVED_UP = MovedUp("dpstats.methods")


def __getattr__(name: str) -> Any:
    return MOVED_UP.get(name)
