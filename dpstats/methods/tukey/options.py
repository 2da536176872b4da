"""The options of ``method="tukey"``: one frozen dataclass, defaults written once, validated on construction."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpstats.errors import MethodOptionError
from dpstats.methods.spec import MethodOptions, check_bool
from dpstats.validation import shown

__all__ = ["MAX_SHARE", "MIN_M", "TukeyOptions"]

#: the smallest number of models: t = floor(m/4) >= 2, the smallest t for which M(D) >= 0 is possible
MIN_M = 8

#: prep_share and pilot_share lie in (0, MAX_SHARE)
MAX_SHARE = 0.4

_PTR = ("lemma", "mass")
_BLOCKS = ("auto", "moments", "ols")


@dataclass(frozen=True)
class TukeyOptions(MethodOptions):
    """Options of ``tukey`` (TukeyEM with propose-test-release; docs/proofs/tukey.md).

    Attributes
    ----------
    m : int, str or None
        Number of block models: None (default: 1000, more when the budget
        needs more for the test to pass, at most n/d;
        :func:`~dpstats.methods.tukey.plan.default_m`), an int >= 8, or
        ``"private"`` (the same rule on a private lower bound on n).
    ptr : str
        ``"lemma"`` (Amin et al., Lemma 3.6; default) or ``"mass"`` (the
        modified statistic of docs/proofs/tukey.md; never smaller, so the
        test passes more often).
    blocks : str
        ``"moments"``: residual moments around a private pilot, whitened by a
        private Gram matrix shared by all blocks; ``"ols"``: per-block OLS as
        in the paper; ``"auto"`` (default): moments when the public n, d and
        budget say the pilot's Gram matrix is accurate
        (:func:`~dpstats.methods.tukey.plan.choose_blocks`).  A private check
        of the radii may send a moments fit to ``"ols"``; the notes and
        ``info["fallback"]`` say so.
    centre : bool
        Centre the non-intercept columns and the response at private medians
        (only with an intercept column).
    prep_share : float
        Fraction of epsilon spent on the private centres and radii, in (0, 0.4).
    pilot_share : float
        Fraction of epsilon spent on the pilot release (``blocks="moments"``), in (0, 0.4).
    """

    m: int | str | None = None
    ptr: str = "lemma"
    blocks: str = "auto"
    centre: bool = True
    prep_share: float = 0.05
    pilot_share: float = 0.15

    def __post_init__(self) -> None:
        _check_m(self.m)
        if self.ptr not in _PTR:
            raise MethodOptionError(f"ptr must be 'lemma' or 'mass', got {shown(self.ptr)}")
        if self.blocks not in _BLOCKS:
            raise MethodOptionError(f"blocks must be 'auto', 'moments' or 'ols', got {shown(self.blocks)}")
        check_bool(self.centre, "centre")
        for name in ("prep_share", "pilot_share"):
            share = getattr(self, name)
            if isinstance(share, bool) or not (isinstance(share, (int, float)) and 0 < share < MAX_SHARE):
                raise MethodOptionError(f"{name} must lie in (0, {MAX_SHARE:g}), got {shown(share)}")


def _check_m(m: object) -> None:
    """Refuse an ``m`` that is neither None, ``"private"`` nor an integer >= MIN_M (m > n is refused with n)."""
    if m is None or (isinstance(m, str) and m == "private"):
        return
    if isinstance(m, (int, np.integer)) and not isinstance(m, bool) and m >= MIN_M:
        return
    raise MethodOptionError(f"m must be None, 'private' or an integer >= {MIN_M}, got {shown(m)}")
