"""dpstats: differentially private linear regression with an R-style formula interface.

>>> import dpstats
>>> df = dpstats.datasets.load("diamonds")
>>> res = dpstats.dp_ols("price ~ carat + C(cut)", df, epsilon=1.0, delta=1e-6,
...                      bounds={"carat": (0, 3), "price": (0, 20000)}, random_state=0)
>>> print(res.summary())  # doctest: +SKIP
"""

from dpstats import datasets, errors, theory
from dpstats.api import dp_ols
from dpstats.methods import available_methods
from dpstats.privacy import PrivacyAccountant, PrivacyReport
from dpstats.results import DPRegressionResults, InferenceUnavailableError
from dpstats.theory import plan

__version__ = "0.1.0"

__all__ = [
    "dp_ols", "PrivacyAccountant", "PrivacyReport", "DPRegressionResults", "InferenceUnavailableError",
    "available_methods", "datasets", "errors", "theory", "plan", "__version__",
]
