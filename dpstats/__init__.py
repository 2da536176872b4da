"""dpstats: differentially private linear regression with an R-style formula interface.

:func:`dp_ols` fits a formula with one of several published private
estimators (:func:`available_methods`) and returns a
:class:`DPRegressionResults` with a summary, standard errors where they can
be trusted, a :class:`PrivacyReport` and the minimax theory at this n, d,
epsilon and delta.  Bounds and factor levels are public facts, declared by
the caller; a :class:`PrivacyAccountant` caps the budget of many fits.

>>> import dpstats
>>> df = dpstats.datasets.load("diamonds")
>>> res = dpstats.dp_ols("price ~ carat + C(cut)", df, epsilon=1.0, delta=1e-6,
...                      bounds={"carat": (0, 3), "price": (0, 20000)}, random_state=0)
>>> res.method, res.nobs
('pgd', 53940)
>>> print(res.summary())  # doctest: +SKIP
"""

from dpstats import datasets, errors, plotting, simulate, theory
from dpstats.api import dp_ols, dp_ols_arrays
from dpstats.api_arrays import formula_all
from dpstats.compare import Comparison, compare
from dpstats.methods.registry import available_methods
from dpstats.planning import plan
from dpstats.privacy import PrivacyAccountant, PrivacyReport
from dpstats.results import DPRegressionResults
from dpstats.tables import RegressionTable, table
from dpstats.theory import plot_plan

__version__ = "0.1.0"

__all__ = [
    "dp_ols", "PrivacyAccountant", "PrivacyReport", "DPRegressionResults",
    "available_methods", "datasets", "errors", "simulate", "theory", "plan", "__version__",
    "dp_ols_arrays", "formula_all", "plot_plan", "compare", "Comparison", "plotting", "table", "RegressionTable",
]


def __getattr__(name: str):
    """``dpstats.sklearn`` is imported on first use, so ``import dpstats`` never needs scikit-learn; the
    deprecated ``InferenceUnavailableError`` (no longer raised) and ``InferenceWithheldWarning`` (no longer
    emitted) stay importable from here with a DeprecationWarning (their home is :mod:`dpstats.errors`)."""
    if name == "sklearn":
        import importlib  # noqa: PLC0415

        return importlib.import_module("dpstats.sklearn")
    if name in ("InferenceUnavailableError", "InferenceWithheldWarning"):
        import warnings  # noqa: PLC0415

        warnings.warn(f"dpstats.{name} is deprecated: a fit without inference returns NaN and "
                      "DPRegressionResults.inference_reason says why (the class is dpstats.errors." + name + ")",
                      DeprecationWarning, stacklevel=2)
        return getattr(errors, name)
    raise AttributeError(f"module 'dpstats' has no attribute {name!r}")
