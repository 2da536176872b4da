"""Public affine rescaling of the design from declared bounds.

Many DP estimators behave far better on centred, unit-scale data: the noise of
sufficient-statistics methods scales with B_X^2 and B_X B_Y, and TukeyEM's
coordinate-wise depth suffers when an intercept sits beside uncentred
features (Amin et al. 2023, sec. 5).  When every column has a declared range
[lo, hi], the map

    x'_j = (x_j - c_j) / s_j,   c_j = (lo_j + hi_j)/2,  s_j = (hi_j - lo_j)/2
    y'   = (y - c_y) / s_y

puts each column in [-1, 1].  It uses only public numbers, so fitting on
(X', y') and mapping the coefficients back,

    b_j = s_y b'_j / s_j,   b_0 = c_y + s_y (b'_0 - sum_j b'_j c_j / s_j),

is post-processing: the privacy guarantee is that of the fit on (X', y').
Centring needs an intercept column to absorb the shifts; without one, columns
and response are only scaled (c = 0, s = max(|lo|, |hi|)).

Before that map, product and power columns may be re-expressed with their
variables centred (:mod:`dpstats.formula.centring`): the fitted design is
X M for a public, invertible M, its ranges those of the centred columns, and
the coefficients map back by b = M (A b' + a).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpstats.bounds import DataBounds

__all__ = ["PublicScaling"]


@dataclass(frozen=True)
class PublicScaling:
    """The public affine map between the user's design and the fitted one."""

    centre: np.ndarray  # c_j per design column (0 for the intercept)
    scale: np.ndarray  # s_j per design column (1 for the intercept)
    y_centre: float
    y_scale: float
    intercept_index: int | None
    limits: tuple[np.ndarray, np.ndarray, float, float]  # the mapped ranges (X' lo, hi; y' lo, hi): values clipped
    mix: np.ndarray | None = None  # M (d, d): the fitted design is X M before the affine map (None: X)

    @classmethod
    def from_bounds(cls, bounds: DataBounds, intercept_index: int | None, mix: np.ndarray | None = None
                    ) -> PublicScaling:
        """The map that puts every column of the fitted design (X M, or X without ``mix``), whose ranges are
        ``bounds``, and the response in [-1, 1]."""
        lo, hi = bounds.column_lo.astype(float), bounds.column_hi.astype(float)
        if intercept_index is not None:
            centre = (lo + hi) / 2.0
            scale = (hi - lo) / 2.0
            y_centre, y_scale = (bounds.y_lo + bounds.y_hi) / 2.0, (bounds.y_hi - bounds.y_lo) / 2.0
        else:
            centre = np.zeros_like(lo)
            scale = np.maximum(np.abs(lo), np.abs(hi))
            y_centre, y_scale = 0.0, max(abs(bounds.y_lo), abs(bounds.y_hi))
        constant = scale <= 0  # a column fixed by its bounds (or the intercept) is left as it is
        centre = np.where(constant, 0.0, centre)
        scale = np.where(constant, 1.0, scale)
        if intercept_index is not None:
            centre[intercept_index], scale[intercept_index] = 0.0, 1.0
        if y_scale <= 0:
            y_centre, y_scale = 0.0, 1.0
        limits = ((lo - centre) / scale, (hi - centre) / scale, (bounds.y_lo - y_centre) / y_scale,
                  (bounds.y_hi - y_centre) / y_scale)
        return cls(centre=centre, scale=scale, y_centre=float(y_centre), y_scale=float(y_scale),
                   intercept_index=intercept_index, mix=mix,
                   limits=(limits[0], limits[1], float(limits[2]), float(limits[3])))

    def transform_bounds(self, bounds: DataBounds) -> DataBounds:
        return DataBounds(column_lo=(bounds.column_lo - self.centre) / self.scale,
                          column_hi=(bounds.column_hi - self.centre) / self.scale,
                          y_lo=(bounds.y_lo - self.y_centre) / self.y_scale,
                          y_hi=(bounds.y_hi - self.y_centre) / self.y_scale)

    def transform(self, X: np.ndarray, y: np.ndarray, inplace: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(X', y'); with ``inplace`` the float arrays X and y are overwritten (saves a copy of the design).

        Every value is then clipped to the declared range it maps (``limits``), without a warning: an
        elementwise, monotone public map, so every row stays finite (a value the division sends beyond the
        largest double included) and depends on its own values only, and a method that needs no bounds (e.g.
        TukeyEM) still fits inside the domain the user declared, as the bounded methods do.  With ``mix`` the
        design is first X M (a new array), its entries first kept within a magnitude at which no sum in X M
        overflows (the NaN marks of null rows stay)."""
        if self.mix is not None:
            limit = float(np.finfo(float).max) / (4.0 * float(np.abs(self.mix).sum(axis=0).max()))
            X = np.clip(X, -limit, limit) @ self.mix
            y = y if inplace else np.array(y, dtype=float)
            inplace = True
        with np.errstate(over="ignore"):
            if not inplace:
                X, y = X - self.centre, y - self.y_centre
            else:
                np.subtract(X, self.centre, out=X)
                np.subtract(y, self.y_centre, out=y)
            np.divide(X, self.scale, out=X)
            np.divide(y, self.y_scale, out=y)
        np.clip(X, self.limits[0], self.limits[1], out=X)  # NaN marks of null rows stay
        np.clip(y, self.limits[2], self.limits[3], out=y)
        return X, y

    def coefficient_map(self) -> tuple[np.ndarray, np.ndarray]:
        """(A, a) with b = A b' + a for coefficients b' fitted on the rescaled design."""
        d = self.centre.size
        A = np.diag(self.y_scale / self.scale)
        a = np.zeros(d)
        if self.intercept_index is not None:
            A[self.intercept_index, :] -= self.y_scale * self.centre / self.scale
            A[self.intercept_index, self.intercept_index] = self.y_scale
            a[self.intercept_index] = self.y_centre
        if self.mix is not None:
            return self.mix @ A, self.mix @ a
        return A, a

    def params_back(self, params_scaled: np.ndarray) -> np.ndarray:
        A, a = self.coefficient_map()
        return A @ params_scaled + a

    def draws_back(self, draws_scaled: np.ndarray) -> np.ndarray:
        """Map bootstrap replicates (B, d) of b' to replicates of b."""
        A, a = self.coefficient_map()
        return draws_scaled @ A.T + a

    def cov_back(self, cov_scaled: np.ndarray) -> np.ndarray:
        A, _ = self.coefficient_map()
        return A @ cov_scaled @ A.T
