"""The clip ranges a method that needs bounds receives: :class:`DataBounds`.

Methods that need bounds clip every design row and response to these public
ranges (derived from the declared bounds by :mod:`dpstats.bounds.derive`), so
the declared bounds hold for every row whatever the data are: that is what
makes the sensitivities worst-case.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DataBounds"]


@dataclass(frozen=True)
class DataBounds:
    """Per-design-column clip ranges and the response range, all public.

    Attributes
    ----------
    column_lo, column_hi : numpy.ndarray
        Clip range of each design column (length d).
    y_lo, y_hi : float
        Clip range of the response.
    null_rows : bool
        True when the data may hold public null rows (``missing="drop"``):
        rows whose response is NaN, put there by the formula layer for rows
        with a missing value.  :meth:`clip` sets them to zero (design row and
        response) *after* clipping, so that a null row adds nothing to any
        sum over rows (clipping would move it: the intercept's range is
        [1, 1]).  A public fact: it depends on the option, not on the data.
    """

    column_lo: np.ndarray
    column_hi: np.ndarray
    y_lo: float
    y_hi: float
    null_rows: bool = False

    @property
    def x_norm(self) -> float:
        """B_X: bound on the Euclidean norm of a clipped design row."""
        return float(np.sqrt(np.sum(np.maximum(self.column_lo**2, self.column_hi**2))))

    @property
    def y_abs(self) -> float:
        """B_Y: bound on |y| of a clipped response."""
        return float(max(abs(self.y_lo), abs(self.y_hi)))

    def clip(self, X: np.ndarray, y: np.ndarray, inplace: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Clip X column-wise and y to the declared ranges; null rows (``null_rows``) become zero rows.

        Parameters
        ----------
        X : numpy.ndarray
            Design rows (n, d).
        y : numpy.ndarray
            Responses (n,).
        inplace : bool
            Overwrite the float arrays X and y (for chunks that are the caller's own); otherwise new arrays are
            returned and the inputs are untouched.

        Returns
        -------
        tuple of numpy.ndarray
            The clipped ``(X, y)``.
        """
        # one scalar clip to the envelope of all ranges (fast), then the columns with narrower ranges
        Xc = np.clip(X, self.column_lo.min(), self.column_hi.max(), out=X if inplace else None)
        narrower = np.flatnonzero((self.column_lo > self.column_lo.min()) | (self.column_hi < self.column_hi.max()))
        for j in narrower:
            np.clip(Xc[:, j], self.column_lo[j], self.column_hi[j], out=Xc[:, j])
        yc = np.clip(y, self.y_lo, self.y_hi, out=y if inplace else None)
        if self.null_rows:
            null = np.isnan(yc)
            if null.any():
                Xc[null] = 0.0
                yc[null] = 0.0
        return Xc, yc

    def describe(self, names: list[str] | None = None) -> str:
        """The clipping in words, for the privacy report.

        Parameters
        ----------
        names : list of str or None
            The design columns' names (unused: the text gives the bound on the row norm, B_X, and the
            response's range).

        Returns
        -------
        str
            One sentence, from the declared bounds only.
        """
        return (f"design rows clipped to declared per-column ranges (||x||_2 <= {self.x_norm:.4g}); "
                f"response clipped to [{self.y_lo:.4g}, {self.y_hi:.4g}]")
