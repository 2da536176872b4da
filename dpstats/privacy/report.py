"""The privacy report attached to every fit."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dpstats.privacy.ledger import PrivacyStep
from dpstats.summary_text import split_explanation, wrap_note

__all__ = ["PrivacyReport"]


def _fmt(x: float | None, spec: str = ".4g") -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and math.isnan(x):
        return "-"
    return format(x, spec)


@dataclass(frozen=True)
class PrivacyReport:
    """What a fit promised and spent, step by step (``res.privacy``).

    Built by the pipeline from public facts and the fit's ledger only; it
    prints as plain text (:meth:`lines`) and shows as HTML in Jupyter.

    Attributes
    ----------
    method : str
        The estimator that ran.
    private : bool
        False only for the non-private reference ``ols``.
    epsilon_requested, delta_requested : float
        The budget passed to the fit.
    epsilon_spent, delta_spent : float
        The composed total of the ledger (never above the request).
    steps : tuple of PrivacyStep
        One step per mechanism call, in order.
    relation : str
        The neighbouring relation the guarantee is for.
    guarantee : str
        The kind of guarantee in words: worst-case, conditional or none.
    composition : str
        How the steps were composed into the total.
    n : int
        The number of rows (public).
    assumptions, notes : tuple of str
        Plain-language conditions of the guarantee, and facts a reader must
        know (clipping applied, values treated as public, leaks opted into).
    method_choice : str
        Why ``method="auto"`` picked this method (empty when chosen by name).
    seeded : bool
        True when a seed was given (reproducible noise, for research and
        tests); False means every draw came from the operating system's
        CSPRNG (``dpstats.privacy.secure_random.SecureGenerator``).  The
        non-private ``ols`` draws nothing: its report says so whatever the seed.
    status : str
        ``"released"``, or what happened to a fit that did not release.

    Examples
    --------
    >>> import dpstats
    >>> df = dpstats.datasets.load("mtcars")
    >>> res = dpstats.dp_ols("mpg ~ wt", df, 1.0, 1e-6, method="ssp", bounds={"wt": (1, 6), "mpg": (5, 40)},
    ...                      random_state=0)
    >>> report = res.privacy
    >>> report.lines()[0]
    'Budget requested: epsilon=1, delta=1e-06'
    >>> report.steps_frame()["step"].tolist()
    ['missing-value screen: rows with a missing value', 'noisy X^T X', 'noisy X^T y', 'noisy y^T y (for inference)']
    """

    method: str
    private: bool
    epsilon_requested: float
    delta_requested: float
    epsilon_spent: float
    delta_spent: float
    steps: tuple[PrivacyStep, ...]
    relation: str
    guarantee: str
    composition: str
    n: int
    assumptions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    method_choice: str = ""
    seeded: bool = False
    status: str = "released"

    def steps_frame(self) -> pd.DataFrame:
        """The steps as a table.

        Returns
        -------
        pandas.DataFrame
            One row per mechanism call: step, mechanism, count, dimension,
            sensitivity, norm, noise_scale, epsilon, delta, mu, rho and the
            step's privacy in words.
        """
        rows = [{
            "step": s.name, "mechanism": s.mechanism, "count": s.count, "dimension": s.dimension,
            "sensitivity": s.sensitivity, "norm": s.sensitivity_norm, "noise_scale": s.noise_scale,
            "epsilon": s.epsilon, "delta": s.delta, "mu": s.mu, "rho": s.rho, "privacy": s.describe_privacy(),
        } for s in self.steps]
        return pd.DataFrame(rows, columns=["step", "mechanism", "count", "dimension", "sensitivity", "norm",
                                           "noise_scale", "epsilon", "delta", "mu", "rho", "privacy"])

    def lines(self) -> list[str]:
        """The report as plain-text lines (what ``print(report)`` shows).

        Returns
        -------
        list of str
            Budget requested and spent, the guarantee, the method choice, one
            line per step, assumptions, notes and the random source.
        """
        if not self.private:
            out = ["NOT PRIVATE: method 'ols' is the non-private reference; its output reveals the data."]
        else:
            out = [
                f"Budget requested: epsilon={_fmt(self.epsilon_requested)}, delta={_fmt(self.delta_requested, '.3g')}",
                f"Budget spent:     epsilon={_fmt(self.epsilon_spent)}, delta={_fmt(self.delta_spent, '.3g')}"
                f" ({self.composition})",
                f"Guarantee: {self.guarantee} ({self.relation}; n={self.n} is public)",
            ]
        if self.method_choice:
            out.append(f"Method choice: {self.method_choice}")
        for i, s in enumerate(self.steps, 1):
            rep = f" x{s.count}" if s.count > 1 else ""
            out.append(f"  step {i}: {s.name} [{s.mechanism}{rep}] sensitivity={_fmt(s.sensitivity)}"
                       f" ({_norm_text(s.sensitivity_norm)}), noise scale={_fmt(s.noise_scale)},"
                       f" {s.describe_privacy()}")
        out += [f"Assumption: {a}" for a in self.assumptions]
        out += [f"Note: {n}" for n in self.notes]
        out.append(f"Random source: {self._random_source()}")
        if self.status != "released":
            out.append(f"Status: {self.status}")
        return out

    def _random_source(self, short: bool = False) -> str:
        """Where the noise came from: none for the non-private reference, else the seeded or the OS generator."""
        if not self.private:
            return "none" if short else "none (no privacy noise: the non-private reference draws no random numbers)"
        if self.seeded:
            return "seeded generator" if short else "seeded generator (reproducible; for research and tests only)"
        return ("operating-system CSPRNG" if short
                else "operating-system CSPRNG (every draw reads fresh operating-system entropy via os.urandom)")

    def __str__(self) -> str:
        return "\n".join(part for line in self.lines() for part in wrap_note(line))

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in self.lines())
        return f"<div class='dpstats-privacy'><b>Privacy report ({html.escape(self.method)})</b><ul>{items}</ul></div>"

    def to_dict(self) -> dict[str, Any]:
        """The report as a dictionary of plain Python values.

        Returns
        -------
        dict
            Every attribute, with the steps as a list of records.  A non-private fit's epsilon is ``inf``, as in
            the report itself; ``json.dumps`` would write it as the non-standard ``Infinity``, so for a JSON file
            use the result's :meth:`~dpstats.results.DPRegressionResults.to_json`, which writes every non-finite
            number as null.
        """
        return {
            "method": self.method, "private": self.private,
            "epsilon_requested": self.epsilon_requested, "delta_requested": self.delta_requested,
            "epsilon_spent": self.epsilon_spent, "delta_spent": self.delta_spent,
            "relation": self.relation, "guarantee": self.guarantee, "composition": self.composition,
            "n": self.n, "assumptions": list(self.assumptions), "notes": list(self.notes),
            "method_choice": self.method_choice, "seeded": self.seeded,
            "random_source": self._random_source(short=True), "status": self.status,
            "steps": self.steps_frame().drop(columns=["privacy"]).to_dict(orient="records"),
        }


def _norm_text(norm: str) -> str:
    """A sensitivity's norm as the report's text shows it inside parentheses: a norm with its own parenthetical
    explanation ("normalised (GDP of the block)") is written "normalised; GDP of the block", so that the text never
    nests one parenthesis in another."""
    name, explanation = split_explanation(norm)
    return f"{name}; {explanation}" if explanation else name
