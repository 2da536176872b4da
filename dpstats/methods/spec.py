"""What describes an estimator: the types a method declares, receives and returns.

A method is described by a :class:`MethodSpec` (its name, citation, options
dataclass deriving from :class:`MethodOptions`, public requirements,
:class:`InferenceRule`, theory rate and :class:`AutoRule` regimes); its
``fit(rows, ctx, options)`` receives a :class:`FitContext` and returns a
:class:`MethodFit` (with :class:`Inference`, :class:`ErrorSplit` and
:class:`TheoryInputs`).  ``method="auto"`` decides from :class:`AutoFacts`.

This module is a leaf of the methods layer: it imports no estimator and not
the registry.  The estimators, the shared blocks under
:mod:`dpstats.methods.common` and the layers below the estimators
(:mod:`dpstats.inference`, :mod:`dpstats.results`) import these types from
here; :mod:`dpstats.methods.registry`, which sits above the estimators,
re-exports them with the registry itself, and is their public home (for
authors of a new method).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import MethodOptionError
from dpstats.formula.centring import CentrableDesign
from dpstats.methods.common.sufficient import ReleasedStatistics, ReleasedSums
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.rates import UpperRate
from dpstats.rows.base import Combine, Rows
from dpstats.rows.memory import InMemoryRows
from dpstats.validation import shown

__all__ = ["MethodOptions", "check_bool", "FitContext", "Inference", "InferenceRule", "ErrorSplit", "capped_spread",
           "rare_outcome_withheld",
           "ReleasedStatistics", "ReleasedSums", "TheoryInputs", "MethodFit", "MethodSpec", "FitFunction",
           "FirstPass", "PUBLIC_FACTS", "AutoFacts", "AutoRule"]

OptionsT = TypeVar("OptionsT", bound="MethodOptions")

#: names the pipeline fills from public facts; users cannot pass them as options
PUBLIC_FACTS = ("intercept_index", "column_ranges", "response_range", "column_values")


def _beyond_float_range(value: object) -> bool:
    """Whether ``value`` is a real number (a Python int or Fraction) whose ``float`` overflows: the options' own checks
    (``math.isfinite(value)``, ``float(value)``) raised a bare OverflowError for it, and a repr of more than 4300
    digits raises ValueError."""
    if isinstance(value, (bool, float, np.floating)) or not isinstance(value, numbers.Real):
        return False
    try:
        float(value)
    except OverflowError:
        return True
    return False


@dataclass(frozen=True)
class MethodOptions:
    """Base class of every method's options: a frozen dataclass of the method's real options.

    A subclass declares each option once, with its default, and validates it
    in ``__post_init__`` (a :class:`~dpstats.errors.MethodOptionError` naming
    the option and its valid range).  Checks that need the fit's public
    budget go in :meth:`validate_for`.  The pipeline builds the options with
    :meth:`from_user` and validates them before any data are read, so a bad
    option is a public refusal that spends nothing.

    Examples
    --------
    >>> from dpstats.methods.registry import get_method
    >>> options = get_method("ssp").options.from_user({"bootstrap": 200}, method="ssp")
    >>> options.as_dict()
    {'inference': True, 'bootstrap': 200}
    """

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_user(cls: type[OptionsT], options: Mapping[str, Any], *, method: str = "this method") -> OptionsT:
        """The options given by keyword to ``dp_ols``; unknown names are refused with the list of valid ones.

        Parameters
        ----------
        options : mapping of str to object
            The options by name, as the user gave them.
        method : str, optional
            The method's name, for the error message.

        Returns
        -------
        MethodOptions
            An instance of the class, validated by its ``__post_init__``.

        Raises
        ------
        dpstats.errors.MethodOptionError
            When a name is not an option of the class (or a value is invalid).
        """
        unknown = sorted(set(options) - set(cls.names()))
        if unknown:
            accepted = ", ".join(cls.names()) or "no options"
            raise MethodOptionError(f"method '{method}' does not accept {', '.join(unknown)}; it accepts {accepted}")
        for name, value in options.items():
            if _beyond_float_range(value):
                raise MethodOptionError(
                    f"{name} is {shown(value)}, beyond the float range; every option of method '{method}' is "
                    "computed in floats: pass a number within it")
        return cls(**options)

    def validate_for(self, *, delta: float) -> None:
        """Checks that need the fit's delta (public); called before any data are read.  Default: none.

        Parameters
        ----------
        delta : float
            The fit's delta (public).
        """

    def scale_chosen(self) -> bool:
        """Whether the user set every option that depends on the data's scale (the method's
        ``raw_units_warning`` is then not given).  Default: False.

        Returns
        -------
        bool
            True when the options carry the user's own scale.
        """
        return False

    def as_dict(self) -> dict[str, Any]:
        """The options as a dict, by name in declaration order.

        Returns
        -------
        dict
            ``{option name: value}``.
        """
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def check_bool(value: Any, name: str) -> None:
    """Refuse an option that must be True or False."""
    if not isinstance(value, bool):
        raise MethodOptionError(f"{name} must be True or False, got {shown(value)}")


@dataclass(frozen=True)
class FitContext:
    """What the pipeline hands a method besides its rows and options: public facts and the privacy machinery.

    Built from public facts only.  Ranges are in the units the method sees
    (after the public rescaling when ``rescaled``), None where unknown.

    Attributes
    ----------
    n, d : int
        Rows and design columns (public).
    ledger : PrivacyLedger
        The fit's budget; every release is charged here.
    rng : numpy.random.Generator
        The fit's random source (all noise goes through dpstats.privacy.mechanisms with it).
    intercept_index : int or None
        Position of the intercept column.
    column_ranges : tuple of (float, float) or None
        Public range of each design column (the intercept and factor dummies are bounded by construction).
    response_range : (float, float) or None
        Public range of the response.
    bounds : DataBounds or None
        The clip ranges, for methods that need bounds (None otherwise).
    rescaled : bool
        The public rescaling to [-1, 1] was applied.
    declared_ranges : tuple of bool
        True for each column whose range in ``column_ranges`` comes from the user's declared bounds (a privacy
        domain, wide by design: not a scale), False for a range the design gives by construction (the intercept,
        factor dummies, spline bases) or no range; () means none is declared.
    null_rows : bool
        ``missing="drop"`` in a private fit: incomplete rows are public null rows, NaN-marked where the method reads
        them marked (n counts them; how many there are is private, and a method that needs it releases a count).
        False with the missing-value screen of ``missing="raise"``: its null rows are still marked (or zero), but
        they are few unless the screen refused, so a method divides its sums by n and releases no count.
    column_names : tuple of str
        The design columns' names (public), for notes; () when the caller gave none.
    response_name : str
        The response's name (public), for notes.
    column_values : tuple of (tuple of float) or None
        The values each design column can take when the design fixes them (a factor's dummy columns: the entries
        of its public contrast matrix, e.g. (0.0, 1.0) for a two-level factor; the intercept (1.0,)), None for a
        column with a numerical factor; never read from the data.  () means none is known.
    two_valued_response : bool
        The response takes at most two values by public facts (a boolean, or an integer declared between two
        consecutive integers: :attr:`dpstats.formula.design.Design.two_valued_response`), as in a linear
        probability model.
    method_epsilon : float or None
        Where the fit's ledger also holds its missing-value screen (:mod:`dpstats.privacy.missing_screen`, charged
        before the method's first step): the epsilon the method calibrates to (:attr:`epsilon`), the budget less
        the screen's share.  None: the ledger's whole budget.
    centring : CentrableDesign or None
        The product and power columns a method that releases its own domain and centres may centre at those
        centres (:mod:`dpstats.methods.common.product_centring`), given where the declared bounds did not give the
        public rescaling and ``rescale="centred"`` (public: the formula's structure); None otherwise.
    constant : tuple of float or None
        Where the design has no intercept column but its columns sum to the constant with public weights w
        (``y ~ 0 + C(g) + ...``: :meth:`dpstats.formula.design.Design.constant_weights`) and the declared bounds
        gave no public rescaling: w, with which a method that releases its own domain may fit the intercept model
        (:func:`dpstats.formula.centring.intercept_model`); None otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.methods.registry import FitContext
    >>> from dpstats.privacy.ledger import PrivacyLedger
    >>> ctx = FitContext(n=100, d=2, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(0))
    >>> ctx.epsilon, ctx.delta, ctx.bounds is None
    (1.0, 1e-06, True)
    """

    n: int
    d: int
    ledger: PrivacyLedger
    rng: np.random.Generator
    intercept_index: int | None = None
    column_ranges: tuple[tuple[float, float] | None, ...] = ()
    response_range: tuple[float, float] | None = None
    bounds: DataBounds | None = None
    rescaled: bool = False
    declared_ranges: tuple[bool, ...] = ()
    null_rows: bool = False
    column_names: tuple[str, ...] = ()
    response_name: str = ""
    column_values: tuple[tuple[float, ...] | None, ...] = ()
    two_valued_response: bool = False
    method_epsilon: float | None = None
    centring: CentrableDesign | None = None
    constant: tuple[float, ...] | None = None

    def variable_name(self, variable: int | str) -> str:
        """The name of a design column (by index) or of the response (``"response"``), for notes (public).

        Parameters
        ----------
        variable : int or str
            A design column's index, or ``"response"``.

        Returns
        -------
        str
            The column's name (``"column j"`` when no names were given), or ``"<name> (response)"``.
        """
        if variable == "response":
            return f"{self.response_name} (response)" if self.response_name else "the response"
        j = int(variable)
        return self.column_names[j] if j < len(self.column_names) else f"column {j}"

    @property
    def epsilon(self) -> float:
        """The method's epsilon: the ledger's total budget, or ``method_epsilon`` where the ledger also holds the
        missing-value screen."""
        return self.ledger.epsilon if self.method_epsilon is None else self.method_epsilon

    def require_bounds(self) -> DataBounds:
        """The clip ranges, for a method registered with ``needs_bounds=True`` (the pipeline refuses its fit,
        naming what to declare, when they are missing).

        Returns
        -------
        DataBounds
            ``bounds``.

        Raises
        ------
        ValueError
            When ``bounds`` is None (a method registered without ``needs_bounds=True`` asked for them).
        """
        if self.bounds is None:
            raise ValueError("this method needs the public clip ranges in FitContext.bounds")
        return self.bounds

    @property
    def delta(self) -> float:
        """The fit's delta (the ledger's total budget)."""
        return self.ledger.delta


_INFERENCE_KINDS = ("bootstrap", "normal", "t", "classical")


@dataclass(frozen=True)
class Inference:
    """How the released coefficients' uncertainty is described, from released values only.

    ``kind``: ``"bootstrap"`` (``draws``, replicates (B, d) of the estimator:
    basic bootstrap intervals), ``"normal"`` (``cov``: normal intervals),
    ``"t"`` (``cov`` and ``df``: t intervals) or ``"classical"`` (the
    non-private reference: ``cov`` and ``df``).  ``description`` says how it
    was obtained; ``noise_to_signal`` is the released diagnostic the
    method's withholding rule reads (:class:`InferenceRule`).

    Attributes
    ----------
    kind : str
        ``"bootstrap"``, ``"normal"``, ``"t"`` or ``"classical"``.
    draws : numpy.ndarray or None
        Bootstrap replicates (B, d) of the estimator (``"bootstrap"``).
    cov : numpy.ndarray or None
        Covariance (d, d) of the coefficients (the other kinds).
    df : int or None
        Degrees of freedom (``"t"`` and ``"classical"``).
    description : str
        How the inference was obtained (shown in the summary).
    noise_to_signal : float or None
        The released diagnostic the withholding rule reads.
    target : str
        What the intervals are for, in words (shown in the summary; empty: the regression of the clipped data).
    robust_spread : bool
        For ``"bootstrap"``: the covariance from the replicates' central 95% (each coefficient's standard error their
        width over 2 x 1.96, the normal's; correlations of the replicates winsorised there) rather than their plain
        covariance, for replicates with a few far out (private Theil-Sen's rare exponential-mechanism picks), whose
        plain standard deviation would not match the basic interval (Efron & Tibshirani 1993, ch. 13: percentile
        spreads).

    Raises
    ------
    ValueError
        When ``kind`` is unknown or the fields that kind needs are missing.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.methods.registry import Inference
    >>> inference = Inference("normal", cov=np.diag([4.0, 0.25]), description="plug-in")
    >>> inference.bse
    array([2. , 0.5])
    """

    kind: str
    draws: np.ndarray | None = None
    cov: np.ndarray | None = None
    df: int | None = None
    description: str = ""
    noise_to_signal: float | None = None
    target: str = ""
    robust_spread: bool = False

    def __post_init__(self) -> None:
        if self.kind not in _INFERENCE_KINDS:
            raise ValueError(f"Inference.kind must be one of {', '.join(_INFERENCE_KINDS)}, got {self.kind!r}")
        if self.kind == "bootstrap" and self.draws is None:
            raise ValueError("bootstrap inference needs draws")
        if self.kind != "bootstrap" and self.cov is None:
            raise ValueError(f"{self.kind} inference needs cov")
        if self.kind in ("t", "classical") and self.df is None:
            raise ValueError(f"{self.kind} inference needs df")

    @property
    def covariance(self) -> np.ndarray:
        """``cov``, or the covariance of the bootstrap replicates (NaN without two replicates: a bootstrap not run
        because the inference is withheld)."""
        if self.cov is not None:
            return self.cov
        assert self.draws is not None  # checked at construction
        if self.draws.shape[0] < 2:
            return np.full((self.draws.shape[1],) * 2, np.nan)
        if self.robust_spread:
            return central_covariance(self.draws)
        return np.atleast_2d(np.cov(self.draws, rowvar=False))

    @property
    def bse(self) -> np.ndarray:
        """Standard errors: the square root of the covariance's diagonal."""
        return np.sqrt(np.diag(self.covariance))


def central_covariance(draws: np.ndarray, level: float = 0.95) -> np.ndarray:
    """A covariance of bootstrap replicates from their central ``level`` share: each column's scale is the width of
    its central interval over that of the normal's, and the correlations are those of the replicates winsorised to
    it (Efron & Tibshirani 1993, ch. 13), so that a few replicates far out do not set the standard errors.

    Parameters
    ----------
    draws : numpy.ndarray
        Replicates (B, d), B >= 2.
    level : float
        The central share that sets the scales (0.95: the basic 95% interval's quantiles).

    Returns
    -------
    numpy.ndarray
        The (d, d) covariance (post-processing of the replicates).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> draws = rng.normal(0.0, 2.0, size=(20000, 1))
    >>> draws[:200] = 1e6  # one percent far out: the plain sd is about 1e5
    >>> bool(abs(np.sqrt(central_covariance(draws)[0, 0]) - 2.0) < 0.2)
    True
    """
    from scipy.stats import norm

    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(draws, [tail, 1.0 - tail], axis=0)
    scale = (hi - lo) / (2.0 * float(norm.ppf(1.0 - tail)))
    clipped = np.clip(draws, lo, hi)
    spread = clipped.std(axis=0)
    centred = clipped - clipped.mean(axis=0)
    corr = (centred.T @ centred) / len(draws) / np.outer(np.where(spread > 0, spread, 1.0),
                                                          np.where(spread > 0, spread, 1.0))
    corr = np.where(np.outer(spread > 0, spread > 0), corr, np.eye(draws.shape[1]))
    np.fill_diagonal(corr, 1.0)
    return np.atleast_2d(corr * np.outer(scale, scale))


@dataclass(frozen=True)
class ErrorSplit:
    """The released coefficients' error split into its privacy and sampling parts, from released values only.

    Both are d x d matrices in the method's units (the pipeline maps them to
    the user's through the public rescaling, like the inference):

    ``privacy``: second moment E[(b - b_ls)(b - b_ls)^T] of the difference
    between the released coefficients b and least squares b_ls on the same
    (clipped) data: the privacy noise, and the bias it causes (a ridge, an
    eigenvalue floor).  ``sampling``: the covariance sigma^2 (X^T X)^{-1} of
    b_ls, or None when the fit released nothing that determines sigma^2.
    ``privacy_source`` and ``sampling_source`` say how each was computed (shown in the summary).

    Attributes
    ----------
    privacy : numpy.ndarray
        Second moment (d, d) of the privacy part of the error.
    sampling : numpy.ndarray or None
        Covariance (d, d) of least squares on the same data, or None.
    privacy_source, sampling_source : str
        How each was computed.
    privacy_lower_bound : bool
        True when ``privacy`` leaves out a part of the error known to be large (a bias against least squares
        that no released value measures): the summary then states it as a lower bound and does not conclude
        that sampling is the larger part.
    capped : (numpy.ndarray, numpy.ndarray) or None
        (R, W) when ``privacy`` holds a covariance R capped per coefficient at W's variances
        (:func:`capped_spread`): the cap is per coefficient, so a map to other units (:meth:`in_units`, the
        pipeline's public rescaling, which mixes the intercept with the slopes) caps R again there, in the units
        the user reads, rather than mapping the capped matrix.  None: nothing capped.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.methods.registry import ErrorSplit
    >>> split = ErrorSplit(np.eye(2) * 0.01, np.eye(2) * 0.04, "released noise sds", "plug-in sigma^2")
    >>> np.sqrt(np.diag(split.privacy + split.sampling)).round(3)
    array([0.224, 0.224])
    """

    privacy: np.ndarray
    sampling: np.ndarray | None = None
    privacy_source: str = ""
    sampling_source: str = ""
    privacy_lower_bound: bool = False
    capped: tuple[np.ndarray, np.ndarray] | None = None

    def in_units(self, A: np.ndarray) -> ErrorSplit:
        """The split of the coefficients A b (a public linear map): every matrix M becomes A M A^T, and the capped
        part (``capped``) is capped again in the new units.  Post-processing.

        Parameters
        ----------
        A : numpy.ndarray
            (d, d): the map of the coefficients to the new units (the pipeline's public rescaling).

        Returns
        -------
        ErrorSplit
            The split in the new units.
        """
        privacy, capped = A @ self.privacy @ A.T, None
        if self.capped is not None:
            part, cap = self.capped
            privacy = privacy - A @ capped_spread(part, cap) @ A.T
            capped = (A @ part @ A.T, A @ cap @ A.T)
            privacy = privacy + capped_spread(*capped)
        return dataclasses.replace(self, privacy=privacy, capped=capped,
                                   sampling=None if self.sampling is None else A @ self.sampling @ A.T)


def capped_spread(part: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``part`` (a covariance) with each coefficient's variance capped at ``cap``'s, correlations kept: D R D with
    D = diag(min(1, sqrt(W_jj / R_jj))), R = ``part``, W = ``cap``; positive semi-definite when R is.

    pgd's chains (docs/proofs/pgd.md): the spread without the start offsets the chains kept is fitted per
    eigendirection of the released Gram matrix, and a coefficient that mixes many directions can sum those fits'
    errors into a variance above that of the chains' whole spread, an upper bound on the noise's; the cap keeps
    what that coefficient's spread shows.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.methods.spec import capped_spread
    >>> capped_spread(np.array([[4.0, 1.0], [1.0, 1.0]]), np.eye(2))
    array([[1. , 0.5],
           [0.5, 1. ]])
    """
    r, w = np.diag(part), np.diag(cap)
    scale = np.where(r > w, np.sqrt(w / np.where(r > 0.0, r, 1.0)), 1.0)
    return part * np.outer(scale, scale)


def rare_outcome_withheld(n_mu: float, share: float, *, rare_share: float, rare_min_n_mu_share2: float,
                          rare_from_n_mu: float) -> bool:
    """The rare-outcome rule: whether a fit with a two-valued response whose rarer value has ``share`` of the rows
    withholds its inference (docs/choosing.md, "A rare outcome").  The one predicate behind a fit's reason
    (:func:`dpstats.methods.pgd.rare_outcome_reason`, on the released share) and :func:`dpstats.plan` (on an
    assumed share, :meth:`InferenceRule.withholds_for_outcome`).

    Parameters
    ----------
    n_mu : float
        n * mu(epsilon, delta) of the fit (public).
    share : float
        The share of the response's rarer value (released, or assumed), in [0, 0.5].
    rare_share, rare_min_n_mu_share2, rare_from_n_mu : float
        The rule's thresholds: withheld where ``share`` is below ``rare_share``, n * mu times the square of
        ``share`` is below ``rare_min_n_mu_share2`` (so n * mu times ``share`` below ``rare_min_n_mu_share2`` /
        ``share``: the rarer the outcome, the more of its rows' n * mu its interval needs) and n * mu is at least
        ``rare_from_n_mu`` (``rare_share`` = 0: no such rule).

    Returns
    -------
    bool
        True where inference is withheld.

    Examples
    --------
    >>> rare_outcome_withheld(400.0, 0.05, rare_share=0.1, rare_min_n_mu_share2=3.0, rare_from_n_mu=100.0)
    True
    >>> rare_outcome_withheld(400.0, 0.09, rare_share=0.1, rare_min_n_mu_share2=3.0, rare_from_n_mu=100.0)
    False
    >>> rare_outcome_withheld(400.0, 0.2, rare_share=0.1, rare_min_n_mu_share2=3.0, rare_from_n_mu=100.0)
    False
    """
    return share < rare_share and rare_from_n_mu <= n_mu and n_mu * share ** 2 < rare_min_n_mu_share2


@dataclass(frozen=True)
class InferenceRule:
    """What inference a method gives, and when it is withheld.

    ``kind`` is the :class:`Inference` kind its fits give (``"none"`` when
    none); inference is withheld when the fit's released ``noise_to_signal``
    exceeds ``withhold_above`` (None: never, for this reason), where the
    method's intervals were measured to cover less than 90% of the time
    (:mod:`dpstats.inference`).  A method whose fits give no interval below
    a public size declares it here too (``min_n_mu``, ``min_n_epsilon``), so
    that :func:`dpstats.plan` says in advance whether a fit will report one.

    Attributes
    ----------
    kind : str
        The :class:`Inference` kind the method's fits give, or ``"none"``.
    withhold_above : float or None
        The noise-to-signal ratio above which inference is withheld (None: never).
    min_n_mu : float
        Inference only where n * mu(epsilon, delta) >= this (pgd: 15; 0: no such rule).
    min_n_epsilon : float
        Inference only where n * epsilon >= this (theilsen: 50; 0: no such rule).
    rare_share, rare_min_n_mu_share2 : float
        With a two-valued response, inference is withheld where the rarer value's share is below ``rare_share``
        and n * mu(epsilon, delta) times the square of that share is below ``rare_min_n_mu_share2`` (pgd: 0.1 and
        3; 0: no such rule).
    rare_from_n_mu : float
        The rare-outcome rule applies only where n * mu(epsilon, delta) is at least this (pgd: 100; 0: at every
        n * mu).  The fit reads the share off a released value; :func:`dpstats.plan` takes it as an assumption
        (``outcome_share=``).

    Examples
    --------
    >>> from dpstats.methods.registry import get_method
    >>> get_method("ols").inference_rule.kind
    'classical'
    >>> get_method("pgd").inference_rule.reports_at(60, 1.0, 1e-6)
    False
    >>> get_method("pgd").inference_rule.withholds_for_outcome(1000, 1.0, 1e-6, share=0.05)
    True
    """

    kind: str = "none"
    withhold_above: float | None = None
    min_n_mu: float = 0.0
    min_n_epsilon: float = 0.0
    rare_share: float = 0.0
    rare_min_n_mu_share2: float = 0.0
    rare_from_n_mu: float = 0.0

    def withholds_for_outcome(self, n: float, epsilon: float, delta: float, *, share: float) -> bool:
        """Whether a fit with a two-valued response whose rarer value has this ``share`` of the rows withholds its
        inference by the method's rare-outcome rule (``rare_share``, ``rare_min_n_mu_share2``, ``rare_from_n_mu``).

        Parameters
        ----------
        n : float
            Rows.
        epsilon, delta : float
            The fit's budget.
        share : float
            The share of the response's rarer value, in [0, 0.5].

        Returns
        -------
        bool
            False when the method has no such rule.
        """
        from dpstats.privacy.calibration import gaussian_mu  # noqa: PLC0415 - a leaf module, kept local (as above)

        return rare_outcome_withheld(n * gaussian_mu(epsilon, delta), share, rare_share=self.rare_share,
                                     rare_min_n_mu_share2=self.rare_min_n_mu_share2,
                                     rare_from_n_mu=self.rare_from_n_mu)

    def reports_at(self, n: float, epsilon: float, delta: float) -> bool:
        """Whether a fit at these public facts is large enough to give inference (before any withholding).

        Parameters
        ----------
        n : float
            Rows.
        epsilon, delta : float
            The fit's budget.

        Returns
        -------
        bool
            False when the method gives none, or n is below its public size rule.
        """
        from dpstats.privacy.calibration import gaussian_mu  # noqa: PLC0415 - a leaf module, kept local (as AutoFacts)

        if self.kind == "none" or n * epsilon < self.min_n_epsilon:
            return False
        return not self.min_n_mu or n * gaussian_mu(epsilon, delta) >= self.min_n_mu


@dataclass(frozen=True)
class TheoryInputs:
    """Facts of a fit that select and evaluate its upper rate (:mod:`dpstats.theory`).

    ``sparsity``: the sparsity the fit used (sparse methods); ``inference``:
    the fit spent part of its budget on releases for inference (the rate is
    then evaluated at its point estimate's budget, when the method's rate
    says so).

    Attributes
    ----------
    sparsity : int or None
        The sparsity the fit used (sparse methods), else None.
    inference : bool
        The fit spent part of its budget on releases for inference.

    Examples
    --------
    >>> from dpstats.methods.registry import TheoryInputs
    >>> TheoryInputs(sparsity=3)
    TheoryInputs(sparsity=3, inference=False)
    """

    sparsity: int | None = None
    inference: bool = False


@dataclass(frozen=True)
class MethodFit:
    """What a method returns: the released coefficients and typed facts about the fit.

    Everything in here is released through the ledger or computed from
    released quantities and public facts (post-processing), in the units the
    method saw (the pipeline maps them back through the public rescaling).

    Attributes
    ----------
    params : numpy.ndarray
        The released coefficients (d).
    inference : Inference or None
        Standard errors and intervals, when the method gives them.
    no_inference_reason : str
        Why ``inference`` is None (shown to the user).
    notes, assumptions : tuple of str
        Shown in the privacy report.
    guarantee : str or None
        Overrides the spec's guarantee for this fit (e.g. an opt-in "conditional").
    released : ReleasedStatistics or None
        Noisy X^T X, X^T y, y^T y and their noise sds, when the method released them.
    released_sums : ReleasedSums or None
        The sums a private R^2 needs, from released values only (:func:`dpstats.inference.private_rsquared`).
    rsquared_reason : str
        Why there are no ``released_sums`` (shown as ``DPRegressionResults.rsquared_reason``); "" for the
        default reason.
    theory_inputs : TheoryInputs
        Facts that select and evaluate the method's upper rate.
    error_split : ErrorSplit or None
        The privacy and sampling parts of the coefficients' error, from released values, when the method can
        compute them (the summary's error block; :mod:`dpstats.theory` falls back to rates otherwise).
    rsquared : float or None
        In-sample R^2; only the non-private reference computes it.
    diagnostics : dict
        Free-form by-products for display (``DPRegressionResults.info``); no other layer reads them.
    passes : int
        Passes over the data (set by the pipeline).
    centred : tuple of str
        The product and power columns the method centred itself, at centres it released
        (:mod:`dpstats.methods.common.product_centring`; public names).
    warnings : tuple of (Warning class, str)
        Warnings the pipeline emits with the results (category, message), decided from released values (pgd's
        :class:`~dpstats.errors.ClippedRowsWarning`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.methods.registry import MethodFit
    >>> fit = MethodFit(params=[0.2, 0.5], no_inference_reason="an example without inference")
    >>> fit.params, fit.bse is None
    (array([0.2, 0.5]), True)
    """

    params: np.ndarray
    inference: Inference | None = None
    no_inference_reason: str = "this method reports no private standard errors"
    notes: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()
    guarantee: str | None = None
    released: ReleasedStatistics | None = None
    released_sums: ReleasedSums | None = None
    rsquared_reason: str = ""
    theory_inputs: TheoryInputs = TheoryInputs()
    error_split: ErrorSplit | None = None
    rsquared: float | None = None
    diagnostics: Mapping[str, Any] = field(default_factory=dict)
    passes: int = 0
    centred: tuple[str, ...] = ()
    warnings: tuple[tuple[type[Warning], str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", np.asarray(self.params, dtype=float))

    @property
    def bse(self) -> np.ndarray | None:
        """Standard errors in the method's units (None without inference)."""
        return None if self.inference is None else self.inference.bse


class FitFunction(Protocol):
    """``fit(rows, ctx, options) -> MethodFit`` (see the module docstring).

    Examples
    --------
    >>> from dpstats.methods.registry import get_method
    >>> fit = get_method("ssp").fit  # a FitFunction
    >>> callable(fit)
    True
    """

    def __call__(self, rows: Rows, ctx: FitContext, options: Any) -> MethodFit: ...


@dataclass(frozen=True)
class AutoFacts:
    """What ``method="auto"`` knows when it chooses: public facts only.

    Attributes
    ----------
    n, d : int
        Rows and design columns.
    epsilon, delta : float
        The fit's budget.
    bounds : bool
        True when every design column and the response have a public range (declared, or bounded by
        construction: the intercept and factor dummies).
    unbounded : int
        Variables (design columns other than the intercept, and the response) without a public range.
    null_rows : bool
        ``missing="drop"`` turned incomplete rows into public null rows (the missing-value screen's null rows do
        not count here: they reach a method without null-row support as zero rows).
    intercept : bool
        The design has an intercept column.
    two_valued_response : bool
        The response takes at most two values (a boolean response variable, coded 0/1, or an integer one
        declared between consecutive integers: its dtype and bounds are public).
    screened : bool
        The fit's missing-value screen takes its share of epsilon first, so ``epsilon`` is the rest
        (:func:`~dpstats.privacy.missing_screen.fit_epsilon`); messages name thresholds in the requested epsilon.

    Examples
    --------
    >>> from dpstats.methods.registry import AutoFacts
    >>> facts = AutoFacts(n=800, d=3, epsilon=1.0, delta=1e-6, bounds=False, unbounded=3)
    >>> round(facts.n_mu, 1)
    189.4
    """

    n: int
    d: int
    epsilon: float
    delta: float
    bounds: bool
    unbounded: int = 0
    null_rows: bool = False
    intercept: bool = True
    two_valued_response: bool = False
    screened: bool = False

    @property
    def mu(self) -> float:
        """The GDP parameter of (epsilon, delta): the noise level every method's releases share."""
        from dpstats.privacy.calibration import gaussian_mu  # noqa: PLC0415 - a leaf module, kept local

        return gaussian_mu(self.epsilon, self.delta)

    @property
    def n_mu(self) -> float:
        """n * mu(epsilon, delta): how many rows' worth of signal each unit of noise faces."""
        return self.n * self.mu


@dataclass(frozen=True)
class AutoRule:
    """One regime in which ``method="auto"`` may choose a method, in public facts (:class:`AutoFacts`).

    A method declares the regimes where it was measured to be the best choice (``MethodSpec.auto_rules``);
    :func:`~dpstats.methods.registry.choose_auto` picks, among the methods with a matching rule, the one whose
    rule has the lowest ``rank``.  Ranks order methods that share a regime: a method that reports intervals
    there ranks ahead of one that does not unless the latter was measured to be clearly more accurate.

    Attributes
    ----------
    rank : int
        Preference (lowest wins).
    bounds : str
        ``"all"`` (every variable has a public range), ``"missing"`` (some has none) or ``"any"``.
    min_n_mu, max_n_mu : float
        n * mu(epsilon, delta) in [min_n_mu, max_n_mu).
    min_rows : callable or None
        Public minimum n as a function of d (None: the method's ``min_rows``).
    max_rows : float
        n < max_rows.
    min_d, max_d : int
        d in [min_d, max_d].
    needs_intercept : bool
        Only for designs with an intercept.
    needs_many_response_values : bool
        Not where the response takes at most two values (a method whose target there is not least squares').
    intervals : bool
        The method reports intervals in this regime (said in the choice's reason).
    why : str
        The evidence, in one sentence (docs/choosing.md has the tables); shown in the choice's reason.
    no_interval_reason : callable or None
        ``no_interval_reason(facts) -> str``: when auto chose the method under this rule and the fit reports no
        interval, the results' reason (public facts only), in place of the method's own.

    Raises
    ------
    ValueError
        When ``bounds`` is not ``"all"``, ``"missing"`` or ``"any"``.

    Examples
    --------
    >>> from dpstats.methods.registry import AutoFacts, AutoRule, get_method
    >>> rule = AutoRule(rank=50, bounds="all", min_n_mu=100.0)
    >>> facts = AutoFacts(n=800, d=3, epsilon=1.0, delta=1e-6, bounds=True)
    >>> rule.matches(facts, get_method("ssp"))
    True
    """

    rank: int
    bounds: str = "any"
    min_n_mu: float = 0.0
    max_n_mu: float = math.inf
    min_rows: Callable[[int], int] | None = None
    max_rows: float = math.inf
    min_d: int = 1
    max_d: int = 1 << 30
    needs_intercept: bool = False
    needs_many_response_values: bool = False
    intervals: bool = False
    why: str = ""
    no_interval_reason: Callable[[AutoFacts], str] | None = None

    def __post_init__(self) -> None:
        if self.bounds not in ("all", "missing", "any"):
            raise ValueError("AutoRule.bounds must be 'all', 'missing' or 'any'")

    def matches(self, facts: AutoFacts, spec: MethodSpec) -> bool:
        """Whether the public ``facts`` lie in this regime (and satisfy the method's minimum rows).

        Parameters
        ----------
        facts : AutoFacts
            The public facts of the fit.
        spec : MethodSpec
            The method the rule belongs to (its ``min_rows`` when the rule sets none).

        Returns
        -------
        bool
            True when every condition of the rule holds.
        """
        if self.bounds != "any" and facts.bounds != (self.bounds == "all"):
            return False
        if not (self.min_d <= facts.d <= self.max_d and facts.n < self.max_rows):
            return False
        if (self.needs_intercept and not facts.intercept) or (self.needs_many_response_values
                                                              and facts.two_valued_response):
            return False
        if facts.n < (self.min_rows or spec.min_rows)(facts.d):
            return False
        return self.min_n_mu <= facts.n_mu < self.max_n_mu


#: first_pass(bounds, options) -> (pass, combine): a one-pass method's pass, which needs no n
FirstPass = Callable[[DataBounds | None, Any], tuple[Callable[[np.ndarray, np.ndarray, int], Any], Combine[Any]]]


def _min_rows_default(d: int) -> int:
    return d + 1


@dataclass(frozen=True)
class MethodSpec:
    """Registry entry of one estimator.

    Attributes
    ----------
    name, title, citation : str
        ``method=`` name, a human title and the paper it implements.
    fit : FitFunction
        ``fit(rows, ctx, options) -> MethodFit``.
    options : type[MethodOptions]
        The method's options dataclass.
    needs_bounds : bool
        True when the method needs public data bounds (enforced by clipping).
    private : bool
        False only for the non-private reference ``ols``.
    relation, guarantee : str
        Neighbouring relation and guarantee kind ("worst-case", "conditional", "none").
    regimes : str
        When the method suits, in words (docs and ``method="auto"``'s reason).
    min_rows : callable
        Public minimum n as a function of d.
    allows_wide : bool
        True when d > n is allowed (sparse methods).
    max_columns : int or None
        The most design columns (intercept included) the method fits, a public shape fact (``theilsen``: 2, one
        predictor with an intercept); None: no limit.
    inference_rule : InferenceRule
        The inference the method gives and its withholding threshold.
    theory_rate : callable or None
        ``theory_rate(guarantee) -> UpperRate``: the method's upper rate for a
        fit with that guarantee (:mod:`dpstats.theory`); None when none is registered.
    auto_rules : tuple of AutoRule
        The regimes in which ``method="auto"`` may choose the method
        (:func:`~dpstats.methods.registry.choose_auto`); empty: see ``auto_rank``.
    auto_rank : int or None
        Shorthand for one rule ``AutoRule(rank=auto_rank, min_rows=auto_min_rows)`` (any bounds, any n mu) when
        ``auto_rules`` is empty; None (and no rules) keeps the method out of ``auto``.
    auto_min_rows : callable or None
        Public minimum n (given d) of that shorthand rule; defaults to ``min_rows``.
    auto_rules_for : tuple of (str, AutoRule)
        Regimes this method's study measured for *other* methods: (method name, rule) pairs that
        ``method="auto"`` adds to that method's regimes while it is registered
        (:func:`~dpstats.methods.registry.add_auto_rules`).
    auto_refusal : callable or None
        ``auto_refusal(facts) -> str``: why the method cannot fit under these public facts ("" when it can), for
        methods whose feasibility depends on more than n, d and bounds (the method refuses with the same reason).
    public_refusal : callable or None
        ``public_refusal(ctx, options) -> str``: why the fit would refuse before reading any row, decided from the
        public facts in ``ctx`` (n, d, epsilon, delta, ranges) and the options ("" when it fits), for refusals
        beyond ``min_rows`` and ``max_columns``; :func:`dpstats.plan` asks it, so that the plan agrees with the fit.
    raw_units_warning : str
        Shown as a WARNING in the notes and raised as an :class:`~dpstats.errors.UnscaledFitWarning` when the fit
        ran on the data's own units (no public rescaling) with options left at their unit-scale defaults
        (:meth:`MethodOptions.scale_chosen`), for methods whose defaults assume unit scale.
    null_rows : bool
        True when a zero row (x = 0, including the intercept, and y = 0, in the units the method sees, after its
        clipping) adds nothing to what the method releases, so that ``missing="drop"`` can map each incomplete
        row to such a public null row and keep n public (the sufficient-statistics methods, the lasso and DP-SGD:
        their releases are sums over rows of terms that vanish at a zero row).  Methods that centre or
        standardise rows internally would turn a zero row into a data point, so they refuse ``missing="drop"``,
        unless they read the null rows marked (``null_marks``).
    null_marks : bool
        True when the method reads the public null rows as they are marked (NaN in every column and the
        response) and leaves each of them out of every sum it releases itself, instead of reading zero rows
        (pgd, which centres and standardises its rows); implies ``null_rows``.
    gaussian_only : bool
        True when every release of the method is a Gaussian mechanism step, so that its ledger composes in GDP
        (Dong, Roth & Su 2022): the fit's missing-value screen is then Gaussian too, and the two compose exactly to
        the budget (:mod:`dpstats.privacy.missing_screen`).
    first_pass : callable or None
        For one-pass methods: ``first_pass(bounds, options) -> (pass, combine)``, the method's first pass,
        which needs no n.  When a source knows its row count only by reading (CSV, Dask), the pipeline runs
        this pass to count the rows and the method's own first ``rows.reduce`` of an equal pass is served
        from it, so the data are read once.
    unbounded_guarantee : str
        For a method that needs no bounds: why its guarantee holds for the variables without declared bounds, in a
        few words (the privacy report's Guarantee line); empty: "the method needs none".

    Examples
    --------
    >>> from dpstats.methods.registry import get_method
    >>> spec = get_method("ssp")
    >>> spec.needs_bounds, spec.option_names, spec.proof
    (True, ('inference', 'bootstrap'), 'docs/proofs/ssp.md')
    """

    name: str
    title: str
    citation: str
    fit: FitFunction
    options: type[MethodOptions]
    needs_bounds: bool
    private: bool = True
    relation: str = "replace-one"
    guarantee: str = "worst-case"
    regimes: str = ""
    min_rows: Callable[[int], int] = _min_rows_default
    allows_wide: bool = False
    max_columns: int | None = None
    inference_rule: InferenceRule = InferenceRule()
    theory_rate: Callable[[str], UpperRate] | None = None
    auto_rules: tuple[AutoRule, ...] = ()
    auto_rank: int | None = None
    auto_min_rows: Callable[[int], int] | None = None
    auto_rules_for: tuple[tuple[str, AutoRule], ...] = ()
    auto_refusal: Callable[[AutoFacts], str] | None = None
    public_refusal: Callable[[FitContext, Any], str] | None = None
    raw_units_warning: str = ""
    null_rows: bool = False
    null_marks: bool = False
    gaussian_only: bool = False
    first_pass: FirstPass | None = None
    unbounded_guarantee: str = ""

    proofs_dir: ClassVar[str] = "docs/proofs"

    @property
    def proof(self) -> str:
        """The page with the method's privacy proof and derivations, relative to the repository root."""
        return f"{self.proofs_dir}/{self.name}.md"

    def columns_refusal(self, d: int) -> str:
        """Why the method refuses a design of ``d`` columns whatever the data (more than its ``max_columns``).

        A public shape fact: the fit refuses with it before asking for anything else, and the plan says it.

        Parameters
        ----------
        d : int
            The number of design columns, the intercept included.

        Returns
        -------
        str
            The refusal, or "" where the method fits that many columns.
        """
        if self.max_columns is not None and d > self.max_columns:
            return f"method '{self.name}' fits at most {self.max_columns} design columns; this design has d={d}"
        return ""

    @property
    def option_names(self) -> tuple[str, ...]:
        """The names of the method's options, in declaration order."""
        return self.options.names()

    @property
    def effective_auto_rules(self) -> tuple[AutoRule, ...]:
        """``auto_rules``, or the one rule ``auto_rank`` / ``auto_min_rows`` stand for (none when both are unset)."""
        if self.auto_rules:
            return self.auto_rules
        if self.auto_rank is None:
            return ()
        return (AutoRule(rank=self.auto_rank, min_rows=self.auto_min_rows),)

    def auto_rule(self, facts: AutoFacts, added: tuple[AutoRule, ...] = ()) -> AutoRule | None:
        """The best-ranked of this method's rules that ``facts`` satisfy, if the method can fit there.

        Parameters
        ----------
        facts : AutoFacts
            The public facts of the fit.
        added : tuple of AutoRule, optional
            Rules another method's study adds to this method's (the registry passes them:
            :func:`~dpstats.methods.registry.add_auto_rules`).

        Returns
        -------
        AutoRule or None
            The matching rule of lowest rank, or None when the method cannot be chosen under ``facts``.
        """
        if not self.private or (facts.null_rows and not self.null_rows) or (self.needs_bounds and not facts.bounds):
            return None
        if facts.d > facts.n and not self.allows_wide:
            return None
        rules = [r for r in (*self.effective_auto_rules, *added) if r.matches(facts, self)]
        if not rules or (self.auto_refusal is not None and self.auto_refusal(facts)):
            return None
        return min(rules, key=lambda r: r.rank)

    @property
    def supports_chunks(self) -> bool:
        """Every method reads data in chunks (files, Dask) through the same :class:`~dpstats.rows.base.Rows`."""
        return True

    def parse_options(self, options: Mapping[str, Any], *, delta: float | None = None) -> MethodOptions:
        """The user's options as the method's options dataclass, validated (public facts only, nothing spent).

        Parameters
        ----------
        options : mapping of str to object
            The options by name, as the user gave them.
        delta : float or None, optional
            The fit's delta, for the checks that need it (:meth:`MethodOptions.validate_for`).

        Returns
        -------
        MethodOptions
            The method's options.
        """
        parsed = self.options.from_user(options, method=self.name)
        if delta is not None:
            parsed.validate_for(delta=delta)
        return parsed

    def fit_arrays(self, X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
                   bounds: DataBounds | None = None, intercept_index: int | None = None,
                   column_ranges: Any = None, response_range: tuple[float, float] | None = None,
                   chunk_rows: int | None = None, two_valued_response: bool = False, **options: Any) -> MethodFit:
        """Run the method on arrays X (n x d) and y with the given public facts (tests, benchmarks).

        ``X`` and ``y`` are used as they are (no rescaling, no clipping beyond
        the method's own); ``chunk_rows`` cuts them into chunks of that many
        rows (see :class:`~dpstats.rows.memory.InMemoryRows`).

        Parameters
        ----------
        X : numpy.ndarray
            The design, n x d.
        y : numpy.ndarray
            The response, n.
        ledger : PrivacyLedger
            The fit's budget; every release is charged here.
        rng : numpy.random.Generator
            The fit's random source.
        bounds : DataBounds or None, optional
            The clip ranges, for methods that need them.
        intercept_index : int or None, optional
            Position of the intercept column.
        column_ranges : sequence of (float, float) or None, optional
            Public range of each design column (None: unknown).
        response_range : (float, float) or None, optional
            Public range of the response.
        chunk_rows : int or None, optional
            Rows per chunk (None: one chunk).
        two_valued_response : bool, optional
            Whether the response takes two values by public facts (:attr:`FitContext.two_valued_response`).
        **options : object
            The method's options.

        Returns
        -------
        MethodFit
            The method's fit, in the units of ``X`` and ``y``.

        Examples
        --------
        >>> import numpy as np
        >>> from dpstats.methods.registry import get_method
        >>> from dpstats.privacy.ledger import PrivacyLedger
        >>> rng = np.random.default_rng(0)
        >>> X = np.column_stack([np.ones(200), rng.uniform(-1, 1, 200)])
        >>> y = X @ [0.2, 0.5] + 0.1 * rng.normal(size=200)
        >>> fit = get_method("ols").fit_arrays(X, y, ledger=PrivacyLedger(1.0, 1e-6), rng=rng)
        >>> fit.params.round(1)
        array([0.2, 0.5])
        """
        rows = InMemoryRows(X, y, chunk_rows)
        ranges = tuple(column_ranges) if column_ranges is not None else (None,) * rows.d
        ctx = FitContext(n=rows.n, d=rows.d, ledger=ledger, rng=rng, intercept_index=intercept_index,
                         column_ranges=ranges, response_range=response_range, bounds=bounds,
                         two_valued_response=two_valued_response)
        return self.fit(rows, ctx, self.parse_options(options, delta=ledger.delta))
