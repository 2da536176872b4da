"""The real-data benchmark's data sets: published or standard specifications with public bounds and levels.

Each :class:`Spec` is what a researcher would write down *before* looking at private data: the formula of a
published or textbook regression, the coefficient a paper would discuss (``headline``), public ranges of the
variables with the reason for each (the data set's documentation, a survey's eligibility rule, a unit's
physical range: never the minimum and maximum of the data), and the public factor levels with a common
reference level first.  The data ship in ``benchmarks/data/`` (provenance and licences in its README) or in
the package (``dpstats.datasets``).

``read(spec)`` gives the raw frame after public recoding (renaming, mapping documented codes); ``frame(spec)``
applies the declared levels as Categorical dtypes and drops rows with a missing value in a model variable
(documented per data set: the benchmark's n is the complete-case n, as in the papers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

import dpstats

__all__ = ["SPECS", "Bound", "Spec", "frame", "read", "spec_by_name"]

DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class Bound:
    """A public range of one variable and why it is public."""

    lo: float
    hi: float
    reason: str


@dataclass(frozen=True)
class Spec:
    """One benchmark regression.

    Attributes
    ----------
    name : str
        Short key (``--datasets``).
    title : str
        What the data are.
    formula : str
        The published or standard specification, as a patsy formula.
    headline : str
        The design column of the coefficient a paper would discuss.
    one_predictor : str
        The one-predictor version (response on the headline variable alone), for peers that fit one covariate.
    spec_source : str
        Where the specification comes from.
    bounds : Mapping[str, Bound]
        Public ranges with reasons, keyed by raw variable (or design column / response code).
    levels : Mapping[str, tuple]
        Public factor levels, reference level first.
    level_reasons : Mapping[str, str]
        Why those levels and that reference.
    columns : tuple[str, ...]
        The variables the model uses (rows missing any of them are dropped).
    reader : Callable[[], pandas.DataFrame]
        Reads the vendored file and applies public recoding.
    large : bool
        One of the larger sets (n >= 15,000).
    """

    name: str
    title: str
    formula: str
    headline: str
    one_predictor: str
    spec_source: str
    bounds: Mapping[str, Bound]
    columns: tuple[str, ...]
    reader: Callable[[], pd.DataFrame]
    levels: Mapping[str, tuple] = field(default_factory=dict)
    level_reasons: Mapping[str, str] = field(default_factory=dict)
    large: bool = False

    def bound_pairs(self) -> dict[str, tuple[float, float]]:
        """The bounds as ``dp_ols`` takes them."""
        return {k: (b.lo, b.hi) for k, b in self.bounds.items()}


def _csv(name: str, **kwargs) -> pd.DataFrame:
    return pd.read_csv(DATA / name, compression="gzip", **kwargs)


def read(spec: Spec) -> pd.DataFrame:
    """The raw frame of ``spec`` after public recoding (no levels applied, no rows dropped)."""
    return spec.reader()


def frame(spec: Spec) -> pd.DataFrame:
    """The model frame: declared levels as Categorical dtypes, complete cases of the model's variables."""
    df = read(spec)
    df = df.dropna(subset=list(spec.columns)).reset_index(drop=True)
    for col, lv in spec.levels.items():
        df[col] = pd.Categorical(df[col], categories=list(lv))
    return df[list(spec.columns)]


# -- readers: public recoding only ------------------------------------------------------------------------------

def _diabetes() -> pd.DataFrame:
    names = ["AGE", "SEX", "BMI", "BP", "S1", "S2", "S3", "S4", "S5", "S6"]
    X = pd.read_csv(DATA / "diabetes_data_raw.csv.gz", sep=r"\s+", header=None, names=names, compression="gzip")
    y = pd.read_csv(DATA / "diabetes_target.csv.gz", header=None, names=["Y"], compression="gzip")
    return X.assign(Y=y["Y"].to_numpy())


def _anes96() -> pd.DataFrame:
    df = _csv("anes96.csv.gz", sep="\t")
    return df.rename(columns=lambda c: c.strip("'"))


def _bikeshare() -> pd.DataFrame:
    df = _csv("islp_Bikeshare.csv.gz")
    df["weathersit"] = df["weathersit"].replace({"light rain/snow": "rain/snow", "heavy rain/snow": "rain/snow"})
    return df


def _college() -> pd.DataFrame:
    return _csv("islp_College.csv.gz").rename(columns=lambda c: c.replace(".", "_"))


def _nhefs() -> pd.DataFrame:
    df = _csv("nhefs.csv.gz")
    for col in ("sex", "race"):  # documented 0/1 codes (0 = male / white), read as numbers
        df[col] = pd.to_numeric(df[col])
    return df


def _titanic() -> pd.DataFrame:
    df = _csv("titanic.csv.gz")
    df["survived"] = df["survived"].map({"no": 0.0, "yes": 1.0})  # documented coding
    return df


def _penguins() -> pd.DataFrame:
    df = dpstats.datasets.load("penguins")
    for col in ("species", "sex"):
        df[col] = df[col].astype(object)
    return df


def _diamonds() -> pd.DataFrame:
    df = dpstats.datasets.load("diamonds")
    for col in ("cut", "color", "clarity"):
        df[col] = df[col].astype(object)
    return df


# -- the specifications -------------------------------------------------------------------------------------------

_PCT = "a percentage: 0-100 by definition"
_DUMMY = "a 0/1 indicator by definition"

SPECS: tuple[Spec, ...] = (
    Spec(
        name="engel", title="Engel's food expenditure of 235 Belgian working-class households (1857)",
        formula="foodexp ~ income", headline="income", one_predictor="foodexp ~ income",
        spec_source="Koenker & Bassett (1982), Econometrica 50: 43-61; Koenker (2005), Quantile Regression, ch. 1 "
                    "(the Engel curve: food expenditure on household income)",
        bounds={"income": Bound(0, 10_000, "annual income of a 19th-century Belgian working-class household, "
                                           "francs: a generous cap for Engel's budget surveys"),
                "foodexp": Bound(0, 5_000, "annual food spending of the same households, francs (below income)")},
        columns=("foodexp", "income"), reader=lambda: _csv("engel.csv.gz")),
    Spec(
        name="grunfeld", title="Grunfeld's investment panel: 11 US firms, 1935-1954",
        formula="invest ~ value + capital + C(firm)", headline="value", one_predictor="invest ~ value",
        spec_source="Grunfeld (1958); the within (firm fixed-effects) regression of Baltagi (2005), Econometric "
                    "Analysis of Panel Data, ch. 2",
        bounds={"invest": Bound(0, 3_000, "gross investment, millions of 1947 dollars: above what the largest US "
                                          "firm (General Motors) invested in any year of the period"),
                "value": Bound(0, 10_000, "market value, millions of 1947 dollars: a cap above the largest US firm"),
                "capital": Bound(0, 5_000, "stock of plant and equipment, millions of 1947 dollars")},
        levels={"firm": ("General Motors", "US Steel", "General Electric", "Chrysler", "Atlantic Refining", "IBM",
                         "Union Oil", "Westinghouse", "Goodyear", "Diamond Match", "American Steel")},
        level_reasons={"firm": "the 11 firms listed in the data set's documentation (balanced panel: 20 years "
                               "each); reference General Motors, the first listed"},
        columns=("invest", "value", "capital", "firm"), reader=lambda: _csv("grunfeld.csv.gz")),
    Spec(
        name="macrodata", title="US quarterly macroeconomic series, 1959Q1-2009Q3 (FRED)",
        formula="np.log(realcons) ~ np.log(realdpi)", headline="np.log(realdpi)",
        one_predictor="np.log(realcons) ~ np.log(realdpi)",
        spec_source="the log-linear aggregate consumption function (e.g. Greene, Econometric Analysis, the "
                    "consumption function examples on US quarterly data)",
        bounds={"realcons": Bound(500, 20_000, "real personal consumption, billions of chained 2005 $ (annual "
                                               "rate): positive and below a cap above US GDP in the period"),
                "realdpi": Bound(500, 20_000, "real disposable income, same units and reasoning")},
        columns=("realcons", "realdpi"), reader=lambda: _csv("macrodata.csv.gz")),
    Spec(
        name="anes96", title="American National Election Study 1996: party identification of 944 respondents",
        formula="PID ~ np.log(popul + 0.1) + selfLR + age + educ + income", headline="selfLR",
        one_predictor="PID ~ selfLR",
        spec_source="the covariates of statsmodels' multinomial-logit example on these data (party identification "
                    "on place size, self-placed ideology, age, education, income), as a linear model",
        bounds={"PID": Bound(0, 6, "documented 7-point party-identification scale (0 strong Democrat - 6 strong "
                                   "Republican)"),
                "selfLR": Bound(1, 7, "documented 7-point left-right self-placement scale"),
                "age": Bound(18, 100, "voting-age adults"),
                "educ": Bound(1, 7, "documented education codes 1-7"),
                "income": Bound(1, 24, "documented household income codes 1-24"),
                "popul": Bound(0, 10_000, "census place population in thousands (no US place has 10 million "
                                          "people)")},
        columns=("PID", "popul", "selfLR", "age", "educ", "income"), reader=_anes96),
    Spec(
        name="diabetes", title="Diabetes progression of 442 patients (Efron et al. 2004)",
        formula="Y ~ AGE + SEX + BMI + BP + S1 + S2 + S3 + S4 + S5 + S6", headline="BMI",
        one_predictor="Y ~ BMI",
        spec_source="Efron, Hastie, Johnstone & Tibshirani (2004), Least angle regression, Ann. Statist. 32, "
                    "section 1 (the full linear model on the ten baseline variables)",
        bounds={"AGE": Bound(18, 90, "adult patients, years"),
                "SEX": Bound(1, 2, "documented coding 1/2"),
                "BMI": Bound(15, 60, "body mass index, kg/m^2: adult physiological range"),
                "BP": Bound(50, 160, "average blood pressure, mm Hg: physiological range"),
                "S1": Bound(80, 400, "total serum cholesterol, mg/dl: clinical range"),
                "S2": Bound(20, 300, "LDL cholesterol, mg/dl: clinical range"),
                "S3": Bound(10, 120, "HDL cholesterol, mg/dl: clinical range"),
                "S4": Bound(1, 12, "total/HDL cholesterol ratio: clinical range"),
                "S5": Bound(3, 7, "log serum triglycerides: ln of 20-1100 mg/dl"),
                "S6": Bound(40, 200, "blood glucose, mg/dl: clinical range"),
                "Y": Bound(0, 400, "disease progression score one year after baseline (documented as an "
                                   "integer score in the low hundreds; 0-400 is a generous cap)")},
        columns=("Y", "AGE", "SEX", "BMI", "BP", "S1", "S2", "S3", "S4", "S5", "S6"), reader=_diabetes),
    Spec(
        name="auto", title="Auto MPG: 392 cars of model years 1970-1982",
        formula="mpg ~ cylinders + displacement + horsepower + weight + acceleration + year + C(origin)",
        headline="weight", one_predictor="mpg ~ weight",
        spec_source="James, Witten, Hastie & Tibshirani (2021), An Introduction to Statistical Learning (2nd ed.), "
                    "ch. 3, exercise 9 (mpg on all other variables except the name; origin as a factor)",
        bounds={"mpg": Bound(5, 60, "fuel economy of 1970s-80s passenger cars, miles per gallon"),
                "cylinders": Bound(3, 12, "engine cylinders of production passenger cars"),
                "displacement": Bound(50, 500, "engine displacement, cubic inches: production cars"),
                "horsepower": Bound(40, 250, "passenger-car engines of the period"),
                "weight": Bound(1_500, 5_500, "curb weight of passenger cars, lbs"),
                "acceleration": Bound(5, 30, "0-60 mph time, seconds"),
                "year": Bound(70, 82, "documented model years 1970-1982")},
        levels={"origin": (1, 2, 3)},
        level_reasons={"origin": "documented codes 1 American, 2 European, 3 Japanese; reference American, the "
                                 "most common origin in the US market"},
        columns=("mpg", "cylinders", "displacement", "horsepower", "weight", "acceleration", "year", "origin"),
        reader=lambda: _csv("islp_Auto.csv.gz")),
    Spec(
        name="boston", title="Boston housing: 506 census tracts, 1970 (Harrison & Rubinfeld)",
        formula="np.log(medv) ~ I(rm ** 2) + age + np.log(dis) + np.log(rad) + tax + ptratio + np.log(lstat) "
                "+ crim + zn + indus + chas + I(nox ** 2)",
        headline="I(nox ** 2)", one_predictor="np.log(medv) ~ I(nox ** 2)",
        spec_source="Harrison & Rubinfeld (1978), J. Environ. Econ. Manag. 5: 81-102, the hedonic housing-price "
                    "equation (without the variable B, which ISLP omits)",
        bounds={"medv": Bound(1, 50, "median home value, $1000s: documented censoring at 50"),
                "rm": Bound(1, 10, "average rooms per dwelling"),
                "age": Bound(0, 100, "share of units built before 1940: " + _PCT),
                "dis": Bound(0.5, 15, "weighted distance to Boston employment centres, miles: the metro area"),
                "rad": Bound(1, 24, "index of accessibility to radial highways, documented as an index 1-24"),
                "tax": Bound(100, 1_000, "property-tax rate per $10,000"),
                "ptratio": Bound(10, 30, "pupils per teacher"),
                "lstat": Bound(0.5, 100, "share of lower-status population: " + _PCT + " (log needs > 0)"),
                "crim": Bound(0, 100, "crimes per capita (per 100 residents at most)"),
                "zn": Bound(0, 100, "share of residential land zoned for large lots: " + _PCT),
                "indus": Bound(0, 100, "share of non-retail business acres: " + _PCT),
                "chas": Bound(0, 1, "Charles River tract: " + _DUMMY),
                "nox": Bound(0.2, 1.0, "nitric oxides, parts per 10 million: urban air range")},
        columns=("medv", "rm", "age", "dis", "rad", "tax", "ptratio", "lstat", "crim", "zn", "indus", "chas", "nox"),
        reader=lambda: _csv("islp_Boston.csv.gz")),
    Spec(
        name="wage", title="Wages of 3,000 male workers in the Mid-Atlantic region, 2003-2009 (CPS)",
        formula="logwage ~ age + I(age ** 2) + year + C(education)",
        headline="C(education)[T.4. College Grad]", one_predictor="logwage ~ C(education)",
        spec_source="James et al. (2021), ISLR2 ch. 7: wage on a polynomial in age, year and education "
                    "(sections 7.1 and 7.7), on the log scale",
        bounds={"age": Bound(18, 80, "adult workers, years"),
                "year": Bound(2003, 2009, "documented survey years 2003-2009"),
                "logwage": Bound(2.3, 6.2, "log of annual wage in $1000s between 10 and 500")},
        levels={"education": ("2. HS Grad", "1. < HS Grad", "3. Some College", "4. College Grad",
                              "5. Advanced Degree")},
        level_reasons={"education": "documented five education levels; reference high-school graduate, the most "
                                    "common level in the CPS"},
        columns=("logwage", "age", "year", "education"), reader=lambda: _csv("islp_Wage.csv.gz")),
    Spec(
        name="hitters", title="Salaries of 263 major-league baseball players, 1987",
        formula="Salary ~ AtBat + Hits + Walks + CRBI + C(Division) + PutOuts", headline="Hits",
        one_predictor="Salary ~ Hits",
        spec_source="James et al. (2021), ISLR2 section 6.5.1: the best six-variable model of best-subset "
                    "selection",
        bounds={"Salary": Bound(0, 5_000, "1987 annual salary, $1000s (the top salaries were about $2.5M)"),
                "AtBat": Bound(0, 800, "at-bats in one season (a full season is about 700)"),
                "Hits": Bound(0, 300, "hits in one season (the record is 262)"),
                "Walks": Bound(0, 250, "walks in one season"),
                "CRBI": Bound(0, 2_500, "career runs batted in (the record is about 2,300)"),
                "PutOuts": Bound(0, 2_000, "put-outs in one season")},
        levels={"Division": ("E", "W")},
        level_reasons={"Division": "the two divisions of each league; reference East (as in the book)"},
        columns=("Salary", "AtBat", "Hits", "Walks", "CRBI", "Division", "PutOuts"),
        reader=lambda: _csv("islp_Hitters.csv.gz")),
    Spec(
        name="college", title="777 US colleges (US News and World Report, 1995)",
        formula="Outstate ~ C(Private) + Room_Board + PhD + perc_alumni + Expend + Grad_Rate", headline="Expend",
        one_predictor="Outstate ~ Expend",
        spec_source="James et al. (2021), ISLR2 ch. 7, exercise 10: out-of-state tuition on the other variables "
                    "(the six predictors forward stepwise selection keeps)",
        bounds={"Outstate": Bound(0, 30_000, "out-of-state tuition, $ per year (1995)"),
                "Room_Board": Bound(0, 15_000, "room and board, $ per year"),
                "PhD": Bound(0, 100, "share of faculty with a PhD: " + _PCT),
                "perc_alumni": Bound(0, 100, "share of alumni who donate: " + _PCT),
                "Expend": Bound(0, 100_000, "instructional expenditure per student, $"),
                "Grad_Rate": Bound(0, 100, "graduation rate: " + _PCT)},
        levels={"Private": ("Yes", "No")},
        level_reasons={"Private": "private or public; reference private, the more common kind of US college"},
        columns=("Outstate", "Private", "Room_Board", "PhD", "perc_alumni", "Expend", "Grad_Rate"),
        reader=_college),
    Spec(
        name="bikeshare", title="Hourly Capital Bikeshare rentals, Washington DC, 2011 (8,645 hours)",
        formula="bikers ~ C(mnth) + C(hr) + workingday + temp + C(weathersit)", headline="temp",
        one_predictor="bikers ~ temp",
        spec_source="James et al. (2021), ISLR2 section 4.6.1 (least squares fit of bikers, Table 4.10; "
                    "the one heavy-rain hour merged with light rain)",
        bounds={"bikers": Bound(0, 2_000, "rentals in one hour across the 2011 system (a few hundred docks)"),
                "workingday": Bound(0, 1, _DUMMY),
                "temp": Bound(0, 1, "documented: temperature in Celsius normalised to [0, 1] (divided by 41)")},
        levels={"mnth": ("Jan", "Feb", "March", "April", "May", "June", "July", "Aug", "Sept", "Oct", "Nov", "Dec"),
                "hr": tuple(range(24)),
                "weathersit": ("clear", "cloudy/misty", "rain/snow")},
        level_reasons={"mnth": "the twelve months; reference January as in the book",
                       "hr": "hours 0-23; reference midnight",
                       "weathersit": "the documented weather situations, 'light rain/snow' and 'heavy rain/snow' "
                                     "merged into 'rain/snow' (the documented heavy level holds a single hour, "
                                     "which a train/test split cannot estimate); reference clear, the most "
                                     "common"},
        columns=("bikers", "mnth", "hr", "workingday", "temp", "weathersit"),
        reader=_bikeshare),
    Spec(
        name="mpg", title="Fuel economy of 234 cars, model years 1999 and 2008 (EPA)",
        formula="hwy ~ displ + year + C(drv)", headline="displ", one_predictor="hwy ~ displ",
        spec_source="the relation shown in Wickham & Grolemund, R for Data Science (2017), ch. 3 (highway mileage "
                    "against engine displacement, by drive train), as a linear model",
        bounds={"hwy": Bound(5, 60, "highway miles per gallon of passenger cars"),
                "displ": Bound(1, 8, "engine displacement, litres: production passenger cars"),
                "year": Bound(1999, 2008, "documented model years 1999 and 2008")},
        levels={"drv": ("f", "4", "r")},
        level_reasons={"drv": "documented drive trains f (front), 4 (four-wheel), r (rear); reference front, the "
                              "most common"},
        columns=("hwy", "displ", "year", "drv"), reader=lambda: _csv("mpg.csv.gz")),
    Spec(
        name="faithful", title="Old Faithful geyser: 272 eruptions",
        formula="waiting ~ eruptions", headline="eruptions", one_predictor="waiting ~ eruptions",
        spec_source="Azzalini & Bowman (1990), Appl. Statist. 39: 357-365: the waiting time to the next eruption "
                    "on the eruption's duration, the textbook regression on these data",
        bounds={"eruptions": Bound(0, 10, "eruption duration, minutes"),
                "waiting": Bound(0, 150, "minutes to the next eruption")},
        columns=("waiting", "eruptions"), reader=lambda: _csv("faithful.csv.gz")),
    Spec(
        name="txhousing", title="Monthly home sales in 46 Texas cities, 2000-2015",
        formula="np.log(sales) ~ C(city) + C(month) + year", headline="C(month)[T.6]",
        one_predictor="np.log(sales) ~ C(month)",
        spec_source="Wickham, ggplot2 (2016), ch. 11 'Modelling for visualisation': log sales on month to remove "
                    "the seasonal pattern, here pooled over cities with city effects and a trend",
        bounds={"sales": Bound(1, 20_000, "home sales in one month in one Texas market (log needs > 0)"),
                "year": Bound(2000, 2015, "documented period 2000-2015")},
        levels={"city": ("Houston", "Abilene", "Amarillo", "Arlington", "Austin", "Bay Area", "Beaumont",
                         "Brazoria County", "Brownsville", "Bryan-College Station", "Collin County",
                         "Corpus Christi", "Dallas", "Denton County", "El Paso", "Fort Bend", "Fort Worth",
                         "Galveston", "Garland", "Harlingen", "Irving", "Kerrville", "Killeen-Fort Hood", "Laredo",
                         "Longview-Marshall", "Lubbock", "Lufkin", "McAllen", "Midland", "Montgomery County",
                         "Nacogdoches", "NE Tarrant County", "Odessa", "Paris", "Port Arthur", "San Angelo",
                         "San Antonio", "San Marcos", "Sherman-Denison", "South Padre Island", "Temple-Belton",
                         "Texarkana", "Tyler", "Victoria", "Waco", "Wichita Falls"),
                "month": tuple(range(1, 13))},
        level_reasons={"city": "the 46 markets of the Texas A&M Real Estate Center series (documented); "
                               "reference Houston, the largest market (the panel is balanced)",
                       "month": "calendar months; reference January"},
        columns=("sales", "city", "month", "year"), reader=lambda: _csv("txhousing.csv.gz")),
    Spec(
        name="penguins", title="Palmer penguins: 333 adults with complete measurements",
        formula="body_mass_g ~ flipper_length_mm + C(species) + C(sex)", headline="flipper_length_mm",
        one_predictor="body_mass_g ~ flipper_length_mm",
        spec_source="Gorman, Williams & Fraser (2014), PLoS ONE 9: e90081 (body mass on structural size by species "
                    "and sex); the standard palmerpenguins regression",
        bounds={"body_mass_g": Bound(2_000, 7_000, "adult Pygoscelis penguins, g (data/README.md)"),
                "flipper_length_mm": Bound(150, 250, "adult Pygoscelis penguins, mm (data/README.md)")},
        levels={"species": ("Adelie", "Chinstrap", "Gentoo"), "sex": ("female", "male")},
        level_reasons={"species": "documented three species; reference Adelie, the most common",
                       "sex": "documented female, male; reference female (the documented first level)"},
        columns=("body_mass_g", "flipper_length_mm", "species", "sex"), reader=_penguins),
    Spec(
        name="nhefs", title="NHEFS: weight gain after smoking cessation, 1,566 adults (What If)",
        formula="wt82_71 ~ qsmk + sex + race + age + I(age ** 2) + C(education) + smokeintensity "
                "+ I(smokeintensity ** 2) + smokeyrs + I(smokeyrs ** 2) + C(exercise) + C(active) + wt71 "
                "+ I(wt71 ** 2) + qsmk:smokeintensity",
        headline="qsmk", one_predictor="wt82_71 ~ qsmk",
        spec_source="Hernan & Robins (2020), Causal Inference: What If, ch. 15, Program 15.1 (outcome regression "
                    "of weight gain on quitting smoking and confounders)",
        bounds={"wt82_71": Bound(-50, 50, "weight change over 11 years, kg"),
                "qsmk": Bound(0, 1, "quit smoking: " + _DUMMY),
                "sex": Bound(0, 1, "documented 0/1 code"), "race": Bound(0, 1, "documented 0/1 code"),
                "age": Bound(25, 74, "NHANES I eligibility: ages 25-74 in 1971 (documented)"),
                "smokeintensity": Bound(0, 80, "cigarettes per day in 1971 (NHEFS records up to 80)"),
                "smokeyrs": Bound(0, 70, "years of smoking, at most age minus childhood"),
                "wt71": Bound(30, 200, "adult body weight in 1971, kg")},
        levels={"education": (3, 1, 2, 4, 5), "exercise": (1, 0, 2), "active": (1, 0, 2)},
        level_reasons={"education": "documented codes 1-5; reference 3 (high school), the most common",
                       "exercise": "documented codes 0-2; reference 1 (moderate), the most common",
                       "active": "documented codes 0-2; reference 1 (moderately active), the most common"},
        columns=("wt82_71", "qsmk", "sex", "race", "age", "education", "smokeintensity", "smokeyrs", "exercise",
                 "active", "wt71"),
        reader=_nhefs),
    Spec(
        name="card", title="Card's NLSYM young men, 1976: returns to schooling (3,010 men)",
        formula="lwage ~ educ + exper + I(exper ** 2) + black + south + smsa", headline="educ",
        one_predictor="lwage ~ educ",
        spec_source="Card (1995), in Aspects of Labour Economics: the OLS returns-to-schooling regression",
        bounds={"lwage": Bound(3.9, 8.5, "log hourly wage in cents between 50 cents and $50 (1976)"),
                "educ": Bound(0, 20, "years of schooling"),
                "exper": Bound(0, 30, "potential experience of men aged 24-34 in 1976 (Card's sample)"),
                "black": Bound(0, 1, _DUMMY), "south": Bound(0, 1, _DUMMY), "smsa": Bound(0, 1, _DUMMY)},
        columns=("lwage", "educ", "exper", "black", "south", "smsa"), reader=lambda: _csv("close_college.csv.gz")),
    Spec(
        name="titanic", title="Titanic passengers and crew (2,201 people)",
        formula="survived ~ C(cls) + C(age) + C(sex)", headline="C(sex)[T.women]", one_predictor="survived ~ C(sex)",
        spec_source="Dawson (1995), J. Statist. Educ. 3(3) (survival by class, age and sex), as a linear "
                    "probability model",
        bounds={"survived": Bound(0, 1, "survived: " + _DUMMY)},
        levels={"cls": ("crew", "1st class", "2nd class", "3rd class"), "age": ("adults", "child"),
                "sex": ("man", "women")},
        level_reasons={"cls": "documented crew and three classes; reference crew, the largest group",
                       "age": "documented adult/child; reference adults", "sex": "documented; reference men"},
        columns=("survived", "cls", "age", "sex"), reader=lambda: _titanic().rename(columns={"class": "cls"})),
    Spec(
        name="castle", title="Castle-doctrine laws and homicide: 50 US states, 2000-2010",
        formula="l_homicide ~ post + C(sid) + C(year)", headline="post", one_predictor="l_homicide ~ post",
        spec_source="Cheng & Hoekstra (2013), J. Human Resources 48: 821-854, two-way fixed-effects regression; "
                    "Cunningham (2021), Causal Inference: The Mixtape, ch. 9",
        bounds={"l_homicide": Bound(-2.3, 3.9, "log homicides per 100,000 residents, rates between 0.1 and 50"),
                "post": Bound(0, 1, "share of the year a castle-doctrine law was in force")},
        levels={"sid": tuple(i for i in range(1, 52) if i != 9), "year": tuple(range(2000, 2011))},
        level_reasons={"sid": "state ids 1-51 in alphabetical order, without 9 (District of Columbia, not in the "
                              "study); reference state 1 (balanced panel)",
                       "year": "the study years 2000-2010; reference 2000"},
        columns=("l_homicide", "post", "sid", "year"), reader=lambda: _csv("castle.csv.gz")),
    Spec(
        name="gapminder", title="Gapminder: life expectancy of 142 countries, 1952-2007 (1,704 country-years)",
        formula="lifeExp ~ np.log(gdpPercap) + year + C(continent)", headline="np.log(gdpPercap)",
        one_predictor="lifeExp ~ np.log(gdpPercap)",
        spec_source="the Preston curve (Preston 1975, Population Studies 29: 231-248): life expectancy on log "
                    "income per head, with a trend and continent effects",
        bounds={"lifeExp": Bound(20, 90, "period life expectancy at birth, years"),
                "gdpPercap": Bound(100, 150_000, "GDP per head, international dollars"),
                "year": Bound(1952, 2007, "documented years 1952-2007")},
        levels={"continent": ("Africa", "Americas", "Asia", "Europe", "Oceania")},
        level_reasons={"continent": "five continents; reference Africa, the continent with most countries"},
        columns=("lifeExp", "gdpPercap", "year", "continent"), reader=lambda: _csv("gapminder.csv.gz")),
    Spec(
        name="cps", title="CPS comparison group of Dehejia & Wahba (15,992 men): 1978 earnings",
        formula="re78 ~ age + I(age ** 2) + educ + black + hisp + marr + nodegree + re74 + re75", headline="educ",
        one_predictor="re78 ~ educ",
        spec_source="LaLonde (1986), AER 76: 604-620, and Dehejia & Wahba (1999), JASA 94: 1053-1062: the "
                    "earnings equation on the CPS comparison sample",
        bounds={"re78": Bound(0, 30_000, "annual earnings, 1982 dollars: above the Social Security taxable "
                                         "maximum at which these earnings records are censored"),
                "re74": Bound(0, 30_000, "same as re78"), "re75": Bound(0, 30_000, "same as re78"),
                "age": Bound(16, 55, "the sample's documented age restriction"),
                "educ": Bound(0, 18, "years of schooling, top-coded at 18 in the CPS"),
                "black": Bound(0, 1, _DUMMY), "hisp": Bound(0, 1, _DUMMY), "marr": Bound(0, 1, _DUMMY),
                "nodegree": Bound(0, 1, _DUMMY)},
        columns=("re78", "age", "educ", "black", "hisp", "marr", "nodegree", "re74", "re75"),
        reader=lambda: _csv("cps_mixtape.csv.gz"), large=True),
    Spec(
        name="randhie", title="RAND Health Insurance Experiment: 20,190 person-years",
        formula="mdvis ~ lncoins + idp + lpi + fmde + physlm + disea + hlthg + hlthf + hlthp", headline="lncoins",
        one_predictor="mdvis ~ lncoins",
        spec_source="Cameron & Trivedi (2005), Microeconometrics, ch. 20 (doctor visits on the insurance "
                    "variables and health status), as a linear model",
        bounds={"mdvis": Bound(0, 100, "outpatient doctor visits in a year"),
                "lncoins": Bound(0, 4.62, "documented: ln(coinsurance + 1) with coinsurance in 0-100"),
                "idp": Bound(0, 1, _DUMMY),
                "lpi": Bound(0, 8, "documented ln(max(1, participation incentive)); payments under $3,000"),
                "fmde": Bound(0, 10, "documented ln(max(1, MDE / (0.01 coinsurance))) of a deductible under $1,000"),
                "physlm": Bound(0, 1, _DUMMY), "disea": Bound(0, 100, "count of chronic diseases (an index)"),
                "hlthg": Bound(0, 1, _DUMMY), "hlthf": Bound(0, 1, _DUMMY), "hlthp": Bound(0, 1, _DUMMY)},
        columns=("mdvis", "lncoins", "idp", "lpi", "fmde", "physlm", "disea", "hlthg", "hlthf", "hlthp"),
        reader=lambda: _csv("randhie.csv.gz"), large=True),
    Spec(
        name="diamonds", title="Prices of 53,940 round-cut diamonds (ggplot2)",
        formula="np.log(price) ~ np.log(carat) + C(cut) + C(color) + C(clarity)", headline="np.log(carat)",
        one_predictor="np.log(price) ~ np.log(carat)",
        spec_source="Wickham & Grolemund (2017), R for Data Science, ch. 24 'Model building' (log price on log "
                    "carat, colour, cut and clarity)",
        bounds={"price": Bound(326, 18_823, "documented range in ggplot2's ?diamonds"),
                "carat": Bound(0.2, 5.01, "documented range in ggplot2's ?diamonds")},
        levels={"cut": ("Ideal", "Fair", "Good", "Very Good", "Premium"),
                "color": ("G", "D", "E", "F", "H", "I", "J"),
                "clarity": ("SI1", "I1", "SI2", "VS2", "VS1", "VVS2", "VVS1", "IF")},
        level_reasons={"cut": "documented grades; reference Ideal, the most common grade in the trade",
                       "color": "documented colours D-J; reference G, a middle and common colour",
                       "clarity": "documented GIA grades; reference SI1, a middle and common grade"},
        columns=("price", "carat", "cut", "color", "clarity"), reader=_diamonds, large=True),
)


def spec_by_name(name: str) -> Spec:
    """The spec called ``name`` (KeyError with the list of names otherwise)."""
    for spec in SPECS:
        if spec.name == name:
            return spec
    raise KeyError(f"unknown data set {name!r}; known: {', '.join(s.name for s in SPECS)}")
