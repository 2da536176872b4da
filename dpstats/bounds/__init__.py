"""Public bounds: interval arithmetic over factor code, each design column's derived range, and clipping.

* :mod:`dpstats.bounds.interval`: :class:`Interval` and interval arithmetic over factor code
  (:func:`interval_of_code`), the domain of each transform (:func:`domain_violation`,
  :func:`domain_requirements`), the comparisons the declared ranges decide (:func:`decided_comparison`) and the
  elementwise functions it bounds (:data:`ELEMENTWISE_FUNCTIONS`), and the name of the function a call of factor
  code calls (:func:`call_name`, which the formula layer reads too);
* :mod:`dpstats.bounds.derive`: the range of every design column and of the response from the declared
  ``bounds={...}`` (:func:`derive_ranges`), what to declare when one is missing (:class:`BoundsAdvice`,
  the message of :class:`~dpstats.errors.MissingBoundsError`), and the values a factor's columns can take
  (:func:`column_values`, from the contrast matrices);
* :mod:`dpstats.bounds.data`: :class:`DataBounds`, the clip ranges a method that needs bounds receives.

Nothing here reads data: every range is a function of the declared bounds, the formula and the schema.
"""

from dpstats.bounds.data import DataBounds
from dpstats.bounds.derive import BoundsAdvice, DesignRanges, column_values, declared_interval, derive_ranges
from dpstats.bounds.interval import (
    ELEMENTWISE_FUNCTIONS,
    NUMPY_NAMES,
    DomainError,
    Interval,
    IntervalError,
    UnsupportedExpressionError,
    call_name,
    decided_comparison,
    domain_requirements,
    domain_violation,
    interval_of_code,
)

__all__ = ["Interval", "DataBounds", "IntervalError", "UnsupportedExpressionError", "DomainError", "interval_of_code",
           "domain_violation", "decided_comparison", "domain_requirements", "ELEMENTWISE_FUNCTIONS", "BoundsAdvice",
           "DesignRanges", "column_values", "declared_interval", "derive_ranges", "NUMPY_NAMES", "call_name"]
