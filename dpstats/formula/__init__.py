"""The formula layer: formula text and data -> the public design, for fitting and for prediction.

One job per module, in import order (each imports only those above it):

* :mod:`~dpstats.formula.parse`: formula text -> patsy terms (``y ~ .``, nesting of long sums, ``poly(x, k)``)
  and reading a factor's code without evaluating it;
* :mod:`~dpstats.formula.values`: what a column's values are from its dtype, and the rule that matches values to
  declared levels;
* :mod:`~dpstats.formula.language`: the allow-list of row-wise factor code and the namespace it is evaluated in;
* :mod:`~dpstats.formula.frame`: :class:`FramePlan`, how a frame (or a chunk) is prepared: missing values and
  public null rows, declared levels, clipping of transformed variables, extension dtypes;
* :mod:`~dpstats.formula.schema`: the formula checked against the schema before any row is read, and its plan;
* :mod:`~dpstats.formula.centring`: the public centring of product and power columns, a reparametrisation of
  the design that private fits see (:func:`~dpstats.formula.centring.public_centring`);
* :mod:`~dpstats.formula.design`: :class:`Design`, :func:`build_design` (a frame in memory) and
  :func:`public_design` (a schema, for data read in chunks);
* :mod:`~dpstats.formula.predict`: the design evaluated on new data (:func:`design_matrix_for_prediction`);
* :mod:`~dpstats.formula.recipe`: :class:`DesignRecipe`, what rebuilds a design when results are unpickled.

Each design column's range is derived from the declared bounds in the bounds layer
(:func:`dpstats.bounds.derive_ranges`), which imports nothing from here.
"""

from dpstats.formula.design import Design, build_design, public_design, public_prototype
from dpstats.formula.frame import FramePlan
from dpstats.formula.predict import design_matrix_for_prediction
from dpstats.formula.recipe import DesignRecipe

__all__ = ["Design", "FramePlan", "build_design", "public_design", "design_matrix_for_prediction",
           "public_prototype", "DesignRecipe"]
