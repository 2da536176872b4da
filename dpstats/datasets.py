"""Bundled real data sets (shipped inside the package; no download at run time).

Each loader returns a DataFrame whose factors have a pandas Categorical dtype
with their *public* levels (from the data set's documentation, not from the
values present), so formulas can use them without declaring levels again.
``describe(name)`` gives provenance, licence and public ranges of the numeric
variables, which the examples use as ``bounds=``.  For diamonds these are the
ranges printed in ggplot2's documentation of the data set; for penguins and
mtcars, whose documentation gives none, they are round ranges from domain
knowledge (see ``data/README.md``).  A public data set's published ranges are
fine as bounds for a demonstration; for private data, bounds must come from
domain knowledge, never from the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

import pandas as pd

from dpstats.errors import DPStatsError

__all__ = ["load", "list", "describe", "DatasetInfo", "UnknownDatasetError"]

_list = list


class UnknownDatasetError(DPStatsError, KeyError):
    """``load``/``describe`` was given a name that is not a bundled data set.

    The message lists the bundled data sets.
    """

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class DatasetInfo:
    """Facts about a bundled data set (all public: from its documentation, not its values).

    Attributes
    ----------
    name : str
        The name :func:`load` takes.
    file : str
        The packaged file.
    title : str
        What the data are.
    source : str
        Where the file comes from.
    licence : str
        The licences of the package it comes from and of the data.
    n_rows : int
        Number of rows.
    levels : dict of str to list
        Public factor levels, which :func:`load` applies as Categorical dtypes.
    documented_ranges : dict of str to (float, float)
        Public ranges of numeric variables, usable as ``bounds=``.
    example_formula : str
        The formula of the examples (``dpstats example`` for diamonds).
    drop_columns : tuple of str
        Columns the examples leave out.
    ranges_source : str
        Where ``documented_ranges`` come from.
    example_note : str
        The public facts behind the example's choices.

    Examples
    --------
    >>> import dpstats
    >>> info = dpstats.datasets.describe("diamonds")
    >>> info.n_rows, info.documented_ranges["carat"]
    (53940, (0.2, 5.01))
    """

    name: str
    file: str
    title: str
    source: str
    licence: str
    n_rows: int
    levels: dict[str, _list] = field(default_factory=dict)
    documented_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    example_formula: str = ""
    drop_columns: tuple[str, ...] = ()
    ranges_source: str = ""
    example_note: str = ""


_DATASETS: dict[str, DatasetInfo] = {
    "diamonds": DatasetInfo(
        name="diamonds", file="diamonds.csv.gz",
        title="Prices and attributes of 53,940 round-cut diamonds",
        source="ggplot2 (Wickham), as shipped in the plotnine 0.15.9 wheel (plotnine/data/diamonds.csv)",
        licence="MIT (ggplot2 and plotnine)", n_rows=53940,
        levels={"cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
                "color": ["J", "I", "H", "G", "F", "E", "D"],
                "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]},
        # ranges as printed in ggplot2's documentation of the data set (?diamonds)
        documented_ranges={"price": (326, 18823), "carat": (0.2, 5.01), "x": (0, 10.74), "y": (0, 58.9),
                           "z": (0, 31.8), "depth": (43, 79), "table": (43, 95)},
        example_formula="np.log(price) ~ np.log(carat) + C(cut, Treatment('Ideal')) + C(color, Treatment('G'))",
        ranges_source="the ranges printed in ggplot2's documentation of the data set (?diamonds)",
        # the most common grades, from the level counts of this public data set as R prints them with
        # summary(ggplot2::diamonds): cut Ideal 21551, Premium 13791, ...; color G 11292, E 9797, ...
        example_note=("reference levels: the most common grades, cut 'Ideal' (21,551 of the 53,940 diamonds) and "
                      "color 'G' (11,292), from the level counts of this public data set (R: "
                      "summary(ggplot2::diamonds)); a rare reference level would make the dummies nearly collinear "
                      "with the intercept. With private data, choose them from domain knowledge."),
    ),
    "penguins": DatasetInfo(
        name="penguins", file="penguins.csv.gz",
        title="Palmer Archipelago penguins: size measurements of 344 penguins (11 rows with missing values)",
        source="palmerpenguins 0.1.6 wheel (palmerpenguins/data/penguins.csv); Gorman, Williams & Fraser (2014)",
        licence="MIT (package); data CC0", n_rows=344,
        levels={"species": ["Adelie", "Chinstrap", "Gentoo"], "island": ["Biscoe", "Dream", "Torgersen"],
                "sex": ["female", "male"]},
        documented_ranges={"body_mass_g": (2000, 7000), "flipper_length_mm": (150, 250),
                           "bill_length_mm": (30, 65), "bill_depth_mm": (12, 24)},
        example_formula="body_mass_g ~ flipper_length_mm + C(species) + C(sex)",
        ranges_source=("round ranges from domain knowledge of adult Pygoscelis penguins (the data set's "
                       "documentation gives no ranges); not computed from the data"),
    ),
    "mtcars": DatasetInfo(
        name="mtcars", file="mtcars.csv.gz",
        title="Motor Trend 1974 road tests of 32 cars",
        source="R datasets via plotnine 0.15.9 wheel (plotnine/data/mtcars.csv); Henderson & Velleman (1981)",
        licence="MIT (plotnine); data public domain", n_rows=32,
        levels={},
        documented_ranges={"mpg": (5, 40), "wt": (1, 6), "hp": (40, 350)},
        example_formula="mpg ~ wt + hp + C(cyl, levels=[4, 6, 8])",
        ranges_source=("round ranges from domain knowledge of 1970s production cars (wt in 1000 lbs; R's ?mtcars "
                       "gives no ranges); not computed from the data"),
    ),
}


def list() -> _list:  # noqa: A001 - mirrors the documented API dpstats.datasets.list()
    """Names of the bundled data sets.

    Returns
    -------
    list of str
        The names :func:`load` and :func:`describe` take, sorted.

    Examples
    --------
    >>> import dpstats
    >>> dpstats.datasets.list()
    ['diamonds', 'mtcars', 'penguins']
    """
    return sorted(_DATASETS)


def describe(name: str) -> DatasetInfo:
    """Provenance, licence, public levels and public ranges of a bundled data set.

    Parameters
    ----------
    name : str
        One of :func:`list`.

    Returns
    -------
    DatasetInfo
        A copy (changing it changes nothing in the package).

    Raises
    ------
    UnknownDatasetError
        ``name`` is not a bundled data set.

    Examples
    --------
    >>> import dpstats
    >>> dpstats.datasets.describe("penguins").levels["species"]
    ['Adelie', 'Chinstrap', 'Gentoo']
    """
    if not isinstance(name, str) or name not in _DATASETS:
        raise UnknownDatasetError(f"unknown data set {name!r}; bundled: {', '.join(list())}")
    info = _DATASETS[name]
    return replace(info, levels={k: _list(v) for k, v in info.levels.items()},
                   documented_ranges=dict(info.documented_ranges))


def _data_file(filename: str):
    """The packaged file (installed as ``dpstats.data``), or ``data/`` of a source checkout."""
    try:
        return resources.files("dpstats.data").joinpath(filename)
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "data" / filename


def load(name: str) -> pd.DataFrame:
    """Load a bundled data set as a DataFrame with public Categorical levels.

    Parameters
    ----------
    name : str
        One of :func:`list`.

    Returns
    -------
    pandas.DataFrame
        The data; each factor has a Categorical dtype with its documented
        levels (``describe(name).levels``), so formulas need not declare them.

    Raises
    ------
    UnknownDatasetError
        ``name`` is not a bundled data set.

    Examples
    --------
    >>> import dpstats
    >>> df = dpstats.datasets.load("diamonds")
    >>> df.shape
    (53940, 10)
    >>> df["cut"].cat.categories.tolist()
    ['Fair', 'Good', 'Very Good', 'Premium', 'Ideal']
    """
    info = describe(name)
    with _data_file(info.file).open("rb") as fh:
        df = pd.read_csv(fh, compression="gzip")
    for col, lv in info.levels.items():
        df[col] = pd.Categorical(df[col], categories=lv, ordered=False)
    return df
