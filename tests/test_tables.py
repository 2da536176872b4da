"""dpstats.table: several fits side by side (text, Markdown, HTML, LaTeX) and the compact single-fit LaTeX."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from conftest import FACTOR_BOUNDS as BOUNDS
from conftest import FACTOR_FORMULA as FORMULA
from conftest import factor_frame

import dpstats
from dpstats.errors import DataTypeError, InvalidArgumentError
from dpstats.table_grid import latex_cell, latex_note, latex_text, row_format
from dpstats.tables import LATEX_PREAMBLE, format_number


@pytest.fixture(scope="module")
def fits():
    df = factor_frame(12_000)
    return {
        "sm": smf.ols(FORMULA, df).fit(),
        "ada": dpstats.dp_ols(FORMULA, df, 4.0, 1e-6, method="adassp", bounds=BOUNDS, random_state=0),
        "tukey": dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="tukey", random_state=0),
        "ols": dpstats.dp_ols(FORMULA, df, math.inf, method="ols"),
    }


def test_mixed_statsmodels_and_dpstats_fits(fits):
    tab = dpstats.table([fits["sm"], fits["ada"], fits["tukey"]])
    frame = tab.to_frame()
    assert list(frame.columns) == ["(1)", "(2)", "(3)"]
    term = "x1"
    i = list(frame.index).index(term)
    for col, key in enumerate(("sm", "ada")):
        shown = row_format(fits[key].params[term], fits[key].bse[term])
        assert frame.iloc[i, col] == format(fits[key].params[term], shown)
        assert frame.iloc[i + 1, col] == f"({format(fits[key].bse[term], shown)})"
    assert frame.iloc[i, 2] == format_number(fits["tukey"].params[term], row_format(fits["tukey"].params[term], np.nan))
    # footer rows: N, R^2, epsilon, delta, method, guarantee
    assert frame.loc["N"].tolist() == ["12,000"] * 3
    assert frame.loc["\u03b5"].tolist() == ["\u221e", "4", "1"]
    assert frame.loc["\u03b4"].tolist() == ["", "1e-6", "1e-6"]
    assert frame.loc["Method"].tolist() == ["OLS", "adassp", "tukey"]
    assert frame.loc["Guarantee"].tolist() == ["not private", "worst-case", "worst-case"]
    assert frame.loc["R\u00b2"].iloc[0] == f"{fits['sm'].rsquared:.3f}"
    assert "Not private, computed directly from the data: (1), a statsmodels OLS fit." in tab.notes
    assert not any(") (" in n for n in tab.notes)  # s44 new-user check: "OLS (statsmodels OLS) (computed ...)"
    text = str(tab)
    assert "x1" in text and "Guarantee" in text and text == tab.as_text() == repr(tab)


def test_missing_inference_and_rsquared_are_dashes_with_the_reason(fits):
    tab = dpstats.table({"OLS": fits["ols"], "TukeyEM": fits["tukey"]})
    frame = tab.to_frame()
    i = list(frame.index).index("x2")
    assert frame.iloc[i + 1]["TukeyEM"] == "\u2014" and frame.iloc[i + 1]["OLS"].startswith("(")
    assert frame.loc["R\u00b2", "TukeyEM"] == "\u2014"
    assert frame.loc["R\u00b2", "OLS"] == f"{fits['ols'].rsquared:.3f}"
    notes = " ".join(tab.notes)
    assert "TukeyEM: no standard errors or p-values" in notes and "exponential mechanism" in notes
    assert "R\u00b2 of TukeyEM: method 'tukey' releases no statistics" in notes
    assert "Not private, computed directly from the data: OLS." in notes


def test_notes_write_r_squared_as_the_row_label_and_say_not_available_once(fits):
    tab = dpstats.table({"OLS": fits["ols"], "TukeyEM": fits["tukey"]})
    for text in (" ".join(tab.notes), tab.as_html(), tab.as_markdown(), str(tab)):
        assert "R^2" not in text
        assert "no standard errors or p-values: not available" not in text
    assert "R\u00b2 of TukeyEM: method 'tukey' releases no statistics that determine R\u00b2." in " ".join(tab.notes)
    assert "R$^2$" in tab.as_latex()


def test_withheld_inference_is_a_dash_with_the_reason():
    df = factor_frame(2000)
    res = dpstats.dp_ols(FORMULA, df, 0.3, 1e-6, method="adassp", bounds=BOUNDS, random_state=0, bootstrap=200)
    assert "noise-to-signal" in res.inference_reason  # released noise-to-signal far above 0.6 at this n and epsilon
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the table reads no NaN accessor
        tab = dpstats.table([res], stars=True)
    frame = tab.to_frame()
    assert (frame.iloc[1:2 * len(res.params):2, 0] == "\u2014").all()
    assert not any(c.endswith("*") for c in frame.iloc[:2 * len(res.params), 0])
    assert any("withheld" in n and "noise" in n for n in tab.notes)


def test_stars_of_a_bootstrap_fit_say_they_come_from_its_own_p_values(fits):
    """s45 new-user check: a pgd column read 1.94* (1.58), a ratio of 1.2 marked at p < 0.1, with no word that the
    mark follows the bootstrap p-value its interval inverts; the notes now say so for the fits whose statistic is
    z*, and only where marks are shown."""
    assert fits["ada"].statistic_labels()[0] == "z*"
    marked = dpstats.table([fits["sm"], fits["ada"]], stars=True).notes
    assert any(n.startswith("Marks of (2) from their bootstrap p-values") for n in marked)
    assert not any("bootstrap p-values" in n for n in dpstats.table([fits["sm"], fits["ada"]]).notes)
    assert not any("bootstrap p-values" in n for n in dpstats.table([fits["sm"]], stars=True).notes)


@pytest.mark.parametrize("stars", [True, {"+": 0.5, "!": 1e-300}])
def test_stars_follow_the_p_values_and_the_legend_is_given(fits, stars):
    tab = dpstats.table([fits["sm"], fits["ada"]], stars=stars)
    frame = tab.to_frame()
    marks = sorted((dpstats.tables.DEFAULT_STARS if stars is True else stars).items(), key=lambda kv: -kv[1])
    for col, res in zip(frame.columns, [fits["sm"], fits["ada"]], strict=True):
        for term, p in res.pvalues.items():
            expected = ""
            for mark, level in marks:
                if p < level:
                    expected = mark
            shown = row_format(res.params[term], res.bse[term])
            assert frame.loc[term, col] == format_number(res.params[term], shown) + expected
    legend = ", ".join(f"{m} p < {level:g}" for m, level in marks) + "."
    assert legend in tab.notes
    assert "$^{" in tab.as_latex() and "<sup>" in tab.as_html()


def test_keep_drop_order_and_rename(fits):
    models = [fits["sm"], fits["ada"]]
    kept = dpstats.table(models, keep=["x2", r"^C\(g"], statistic=None)
    assert list(kept.to_frame().index[:3]) == ["x2", "C(g, levels=['a', 'b', 'c'])[T.b]",
                                               "C(g, levels=['a', 'b', 'c'])[T.c]"]
    dropped = dpstats.table(models, drop=["Intercept", r"\[T\."], statistic=None).to_frame()
    assert list(dropped.index[:2]) == ["x1", "x2"]
    ordered = dpstats.table(models, order=["x2"], rename={"x1": "slope of x1"}, statistic=None).to_frame()
    assert list(ordered.index[:3]) == ["x2", "Intercept", "C(g, levels=['a', 'b', 'c'])[T.b]"]
    assert "slope of x1" in ordered.index and "x1" not in ordered.index
    with pytest.raises(InvalidArgumentError, match="matches no coefficient"):
        dpstats.table(models, keep=["nonexistent"])
    with pytest.raises(DataTypeError, match="list of term names"):  # a TypeError too
        dpstats.table(models, drop="Intercept")
    with pytest.raises(InvalidArgumentError, match="same label"):
        dpstats.table(models, rename={"x1": "x", "x2": "x"})


def test_renamed_terms_of_different_models_share_a_row():
    df = factor_frame(3000)
    df["z"] = df.x1
    a = smf.ols("y ~ x1", df).fit()
    b = smf.ols("y ~ z", df).fit()
    frame = dpstats.table({"A": a, "B": b}, rename={"z": "x1"}).to_frame()
    assert frame.loc["x1", "A"] == format(a.params["x1"], row_format(a.params["x1"], a.bse["x1"]))
    assert frame.loc["x1", "B"] == format(b.params["z"], row_format(b.params["z"], b.bse["z"]))
    assert "z" not in frame.index


def test_intervals_and_other_statistics_in_parentheses(fits):
    res = fits["ada"]
    ci = res.conf_int(0.1)
    frame = dpstats.table([res], statistic="ci", alpha=0.1).to_frame()
    i = list(frame.index).index("x1")
    shown = row_format(res.params["x1"], res.bse["x1"])
    assert frame.iloc[i + 1, 0] == f"[{ci.loc['x1', 0]:{shown}}, {ci.loc['x1', 1]:{shown}}]"
    tab = dpstats.table([res], statistic="p")
    assert "P-values in parentheses." in tab.notes
    assert "90% confidence intervals in brackets." in dpstats.table([res], statistic="ci", alpha=0.1).notes
    assert dpstats.table([res], statistic=None).to_frame().shape[0] == len(res.params) + 7


def test_formats_and_errors(fits):
    assert format_number(0.00012345, 3) == "0.000123" and format_number(-0.0, 3) == "0.000"
    assert format_number(12.3456, ".2g") == "12" and format_number(float("nan")) == "\u2014"
    frame = dpstats.table([fits["sm"]], fmt=1).to_frame()
    assert frame.loc["x1"].iloc[0] == f"{fits['sm'].params['x1']:.1f}"
    for kwargs, words in [({"statistic": "se2"}, "statistic must be one of"), ({"fmt": -1}, "fmt must be None"),
                          ({"fmt": "q"}, "not a format spec"), ({"stars": {"*": 2}}, "stars: '\\*': 2 must map"),
                          ({"stats": ["nobs", "aic"]}, "stats must be a list of"),
                          ({"model_names": ["one"]}, "model_names must be a list of 2"),
                          ({"alpha": 1.5}, "alpha must be a number in")]:
        with pytest.raises(InvalidArgumentError, match=words):
            dpstats.table([fits["sm"], fits["ada"]], **kwargs)
    with pytest.raises(DataTypeError, match="statsmodels results"):  # a TypeError too
        dpstats.table([fits["sm"], "not a fit"])
    with pytest.raises(DataTypeError, match="stars must be"):
        dpstats.table([fits["sm"]], stars="yes")
    with pytest.raises(InvalidArgumentError, match="distinct"):
        dpstats.table([fits["sm"], fits["ada"]], model_names=["A", "A"])


def test_a_row_shows_its_estimate_and_interval_to_the_precision_of_its_standard_error():
    """A coefficient of order 1e-3 with a standard error of order 1e-4 used to print its estimate at 3 decimals and
    its standard error at 3 significant digits (-0.002 (0.000281), interval [-0.002, -0.001]): the estimate sat on
    an interval bound.  Each row takes the decimals that show its standard error to three significant digits (digits=),
    none for large ones, and powers of ten below about 1e-4."""
    assert row_format(-0.001623, 0.000281) == ".6f"
    assert row_format(3.128, 5.423) == ".2f" and row_format(0.52, 0.33) == ".3f" and row_format(0.52, 0.033) == ".4f"
    assert row_format(-83260.449, 151322.008) == ".0f" and row_format(7961.709, 80.129) == ".1f"
    assert row_format(0.1234, 0.0000004) == ".2e"  # more than MAX_DECIMALS decimals
    assert row_format(2.07e-6, 4.08e-7) == ".2e" and row_format(0.52, 0.033, digits=2) == ".3f"
    assert row_format(0.00777, 1.4e-5) == ".6f"  # six decimals still give two significant digits: no powers of ten
    assert row_format(-0.001623, float("nan")) == ".5f"  # no standard error: three significant digits of the estimate
    assert row_format(0.0, float("nan")) == ".3f"
    assert row_format(0.1, 0.0001, ".2g") == ".2g" and row_format(0.1, 0.0001, 1) == 1  # a given fmt is kept
    rng = np.random.default_rng(5)
    n = 4000
    depth = rng.uniform(0, 700, n)
    df = pd.DataFrame({"depth": depth, "y": 5 - 0.0016 * depth + rng.normal(0, 3.0, n)})
    res = dpstats.dp_ols("y ~ depth", df, epsilon=np.inf, method="ols")
    lo, hi = res.conf_int().loc["depth"]
    row = next(line for line in res.summary().as_latex().splitlines() if line.startswith("depth &"))
    shown = row_format(res.params["depth"], res.bse["depth"])
    assert shown == ".6f"  # a standard error of about 2.4e-4
    assert f"{abs(res.params['depth']):{shown}}" in row and f"{abs(lo):{shown}}" in row
    frame = dpstats.table([res]).to_frame()
    i = list(frame.index).index("depth")
    assert frame.iloc[i, 0] == f"{res.params['depth']:{shown}}"
    assert frame.iloc[i + 1, 0] == f"({res.bse['depth']:{shown}})"
    assert dpstats.table([res], fmt=3).to_frame().iloc[i, 0] == f"{res.params['depth']:.3f}"  # fixed when asked
    # a z (t) statistic counts standard errors: two decimals in every table, not the row's
    assert dpstats.table([res], statistic="t").to_frame().iloc[i + 1, 0] == f"({res.tvalues['depth']:.2f})"


def test_large_and_small_coefficients_read_as_in_a_paper():
    """s44 new-user check: a price in dollars printed "-83260.449 (151322.008)" and "[-1083041.064, 512334.983]"
    (three decimals on numbers known to thousands), and a coefficient of order 1e-5 printed in e-notation.  Now a
    row shows its standard error to three significant digits and its estimate and interval to the same decimals,
    with an optional thousands separator, alike in dpstats.table and in the summary's text, HTML and LaTeX; below
    1e-4 a row is in powers of ten (e-notation only in plain text)."""
    rng = np.random.default_rng(3)
    n = 5000
    df = pd.DataFrame({"sqft": rng.uniform(500, 4000, n), "tiny": rng.uniform(0, 1, n)})
    df["price"] = -80_000 + 150 * df["sqft"] + 2e5 * df["tiny"] + rng.normal(0, 150_000, n)
    df["micro"] = df["price"] * 1e-10 + rng.normal(0, 1e-6, n)
    res = dpstats.dp_ols("price ~ sqft + tiny", df, epsilon=np.inf, method="ols")
    for term in ("Intercept", "sqft", "tiny"):
        assert 3 <= len(f"{res.bse[term]:{row_format(res.params[term], res.bse[term])}}".strip("0.").replace(".", ""))
    tab = dpstats.table([res], statistic="ci", thousands=",")
    frame = tab.to_frame()
    est, ci = frame.loc["Intercept"].iloc[0], frame.iloc[1, 0]
    assert re.fullmatch(r"-?\d{1,3}(,\d{3})+", est), est  # no decimals on a number known to thousands, grouped
    assert re.fullmatch(r"\[-?[\d,]+, -?[\d,]+\]", ci) and "." not in ci, ci
    assert "." not in dpstats.table([res]).to_frame().loc["Intercept"].iloc[0]
    text = res.summary().as_text()
    assert f" {res.params['Intercept']:.0f} " in text and "e+0" not in text
    assert f"{res.params['Intercept']:,.0f}" in res.summary(thousands=",").as_text()
    small = dpstats.dp_ols("micro ~ tiny", df, epsilon=np.inf, method="ols")
    se = small.bse["tiny"]
    assert row_format(small.params["tiny"], se) == ".2e"
    assert f"{se:.2e}" in small.summary().as_text() and f"({se:.2e})" in dpstats.table([small]).to_frame().iloc[3, 0]
    mantissa, exponent = f"{se:.2e}".split("e")
    assert f"{mantissa}&times;10<sup>&minus;{int(exponent[1:])}</sup>" in small.summary().as_html()
    assert f"{mantissa}&times;10<sup>&minus;{int(exponent[1:])}</sup>" in dpstats.table([small]).as_html()
    assert f"{mantissa}$\\times 10^{{-{int(exponent[1:])}}}$" in small.summary().as_latex()
    with pytest.raises(InvalidArgumentError, match="digits must be"):
        dpstats.table([res], digits=0)
    with pytest.raises(InvalidArgumentError, match="thousands must be"):
        res.summary(thousands=".")


def test_p_values_and_the_sign_of_z_star_are_explained(fits):
    """p-values are "<0.001" below 0.001 in every table, and a bootstrap's 0 is "<2/B" (it only says p < 2/B);
    z* (the bias-corrected estimate over its standard error) can differ in sign from the coefficient, which is
    correct (the interval and P(boot) follow it), and the notes say so."""
    res = fits["ada"]
    replicates = res._draws.shape[0]
    floor = f"<{2 / replicates:.3g}"
    compact = res.summary().as_latex()
    text = res.summary().as_text()
    if (res.pvalues == 0).any():
        assert floor.replace("<", "\\textless{}") in compact and floor in text
    assert "other side of 0 from coef" in res.inference_method and "other side of 0" in compact
    notes = " ".join(dpstats.table([res], statistic="t").notes)
    assert "z* of (1) (a bootstrap)" in notes and "opposite sign" in notes
    assert "z* of" not in " ".join(dpstats.table([res]).notes)
    assert dpstats.tables._pvalue(0.0004) == "<0.001" and dpstats.tables._pvalue(0.0, 0.002) == "<0.002"
    assert dpstats.tables._pvalue(0.0123) == "0.012"


def _specials_fit() -> dpstats.DPRegressionResults:
    rng = np.random.default_rng(1)
    n = 3000
    levels = ["R&D", "a_b", "100%"]
    df = pd.DataFrame({"dept": pd.Categorical(rng.choice(levels, n), categories=levels),
                       "<b>x</b>": rng.uniform(0, 1, n)})
    df["y"] = df["<b>x</b>"] + rng.normal(0, 0.1, n)
    return dpstats.dp_ols("y ~ Q('<b>x</b>') + C(dept, Treatment('R&D'))", df, 5.0, 1e-6, method="ssp",
                          bounds={"<b>x</b>": (0, 1), "y": (-1, 2)}, random_state=0)


def test_latex_escapes_names_and_has_one_cell_separator_per_column():
    res = _specials_fit()
    latex = dpstats.table([res, res], model_names=["A & B", "C_1"], stars=True).as_latex(label="tab:x")
    assert r"[T.a\_b]" in latex and r"[T.100\%]" in latex and r"A \& B" in latex and r"C\_1" in latex
    assert r"\textless{}b\textgreater{}x\textless{}/b\textgreater{}" in latex
    body = latex.split("\\begin{tabular}")[1].split("\\end{tabular}")[0]
    rows = [r for r in body.splitlines() if r.endswith("\\\\") and "multicolumn" not in r]
    assert len(rows) == 2 * len(res.params) + 1 + 7  # model names, coefficient and statistic rows, footers
    assert all(len(re.findall(r"(?<!\\)&", r)) == 2 for r in rows)  # three columns: two separators
    assert latex.startswith("\\begin{table}") and "\\label{tab:x}" in latex and "\\toprule" in latex
    assert "\\resizebox{\\ifdim\\width>\\linewidth" in latex  # shrinks only when wider than the text
    assert "\\usepackage{booktabs}" in LATEX_PREAMBLE and "\\usepackage{graphicx}" in LATEX_PREAMBLE
    assert "\u2014" not in latex and "\u03b5" not in latex  # dashes and Greek letters as LaTeX


def test_latex_sets_the_quotes_of_term_names_straight():
    """s45 new-user check: pdflatex set C(Type, Treatment("Midsize")) and the README's C(cut, Treatment('Ideal')) with
    closing curly quotes on both sides; table cells now set quotes and backticks straight, notes keep apostrophes."""
    assert latex_cell("C(cut, Treatment('Ideal'))[T.Fair]") == (
        r"C(cut, Treatment(\textquotesingle{}Ideal\textquotesingle{}))[T.Fair]")
    assert latex_cell('Q("MPG.city")') == r"Q(\texttt{\char34}MPG.city\texttt{\char34})"
    assert latex_cell("`x`") == r"\textasciigrave{}x\textasciigrave{}"
    res = _specials_fit()
    for latex in (res.summary().as_latex(), dpstats.table([res]).as_latex()):
        assert r"Q(\textquotesingle{}\textless{}b" in latex and "Treatment(\\textquotesingle{}R\\&D" in latex
        assert "'" not in latex.split("\\begin{tabular}")[1].split("\\end{tabular}")[0]
    assert "replicates' own tails" in latex_text_of_notes(res)


def latex_text_of_notes(res) -> str:
    """The notes under a fit's LaTeX table (running text)."""
    return res.summary().as_latex().split("\\end{tabular}")[1]


@pytest.mark.parametrize("cell, latex", [
    ("-2.1e-05", "$-$2.1$\\times 10^{-5}$"), ("1e-6", "$10^{-6}$"), ("-1e-06", "$-10^{-6}$"),
    ("[-2e-05, 3.5e+07]", "[$-$2$\\times 10^{-5}$, 3.5$\\times 10^{7}$]"), ("(0.0031)", "(0.0031)"),
    ("-0.000305", "$-$0.000305"), ("1,421", "1,421"),
])
def test_latex_sets_e_notation_as_a_power_of_ten(cell, latex):
    """A number in e-notation reads 2.1e$-$05 in a paper's PDF: numeric cells set it as 2.1 x 10^-5 (s44 new-user
    check, a coefficient of a product of two 0-24 scales); other numbers are unchanged."""
    assert latex_text(cell, numeric=True) == latex
    assert latex_text("delta = 1e-6 spent") == "delta = 1e-6 spent"  # running text (notes) is not a number


def test_latex_tables_show_no_e_notation(fits):
    """The delta footer of dpstats.table and a tiny coefficient of summary().as_latex() as powers of ten."""
    latex = dpstats.table([fits["sm"], fits["ada"]]).as_latex()
    assert "$\\delta$ &  & $10^{-6}$ \\\\" in latex and "e$-$" not in latex
    df = factor_frame(2_000).assign(x1=lambda t: t["x1"] * 1e5)
    res = dpstats.dp_ols(FORMULA, df, 4.0, 1e-6, method="adassp", random_state=0,
                         bounds={**BOUNDS, "x1": tuple(1e5 * b for b in BOUNDS["x1"])})
    body = res.summary().as_latex().split("\\begin{tabular}")[1].split("\\end{tabular}")[0]
    assert "\\times 10^{-" in body and not re.search(r"\de[$+-]", body)


def test_a_labelled_latex_table_has_a_caption_for_its_reference():
    """\\ref gives a float's number only after a \\caption: a labelled table without a title gets the default
    caption, one with a title its title, and an unlabelled untitled table none."""
    res = _specials_fit()
    labelled = dpstats.table([res]).as_latex(label="tab:x")
    assert labelled.index("\\caption{Regression results}") < labelled.index("\\label{tab:x}")
    assert "\\caption{Wages}" in dpstats.table([res], title="Wages").as_latex(label="tab:x")
    assert "\\caption" not in dpstats.table([res]).as_latex()


def test_html_and_markdown_escape_names():
    res = _specials_fit()
    page = dpstats.table([res], stars=True, title="<i>t</i>").as_html()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page and "R&amp;D" in page
    assert "&lt;i&gt;t&lt;/i&gt;" in page and page.startswith("<table")
    assert dpstats.table([res])._repr_html_() == dpstats.table([res]).as_html()
    md = dpstats.table([res], stars=True).as_markdown()
    assert "\\<b\\>x\\</b\\>" in md and "<b>" not in md
    lines = md.splitlines()
    assert all(line.count("|") - line.count("\\|") == lines[0].count("|") for line in lines if line.startswith("|"))


def test_save_by_extension(tmp_path, fits):
    tab = dpstats.table([fits["ada"]])
    assert tab.save(tmp_path / "t.tex").read_text().startswith("\\begin{table}")
    assert tab.save(tmp_path / "t.md").read_text().startswith("|")
    assert "<table" in tab.save(tmp_path / "t.html").read_text()
    with pytest.raises(InvalidArgumentError, match=".tex, .md"):
        tab.save(tmp_path / "t.docx")


def test_dependent_variable_header_spans_equal_names(fits):
    latex = dpstats.table([fits["sm"], fits["ada"], fits["tukey"]]).as_latex()
    assert "\\multicolumn{3}{c}{y}" in latex and "\\cmidrule(lr){2-4}" in latex
    assert 'colspan="3"' in dpstats.table([fits["sm"], fits["ada"], fits["tukey"]]).as_html()
    assert "multicolumn" not in dpstats.table([fits["sm"]], depvar=False).as_latex()


def test_single_fit_latex_is_the_coefficient_table_with_an_optional_privacy_table(fits):
    res = fits["ada"]
    compact = res.summary().as_latex()
    assert "Privacy report" not in compact and "noisy $X" not in compact and "Theory" not in compact
    assert "$P_{\\mathrm{boot}}$" in compact and "$z^*$" in compact  # adassp's p-value is its bootstrap test's
    assert "95\\% CI" in compact and "N = 12,000" in compact
    assert f" & {res.params['x1']:{row_format(res.params['x1'], res.bse['x1'])}} & " in compact
    both = res.summary().as_latex(label="tab:a", privacy=True)
    assert both.startswith(res.summary().as_latex(label="tab:a")) and "\\label{tab:a:privacy}" in both
    assert "Privacy report: adassp" in both and "noisy $X^{T}$ X" in both and "\\tabularnewline" in both
    assert both.count("\\begin{table}") == 2
    tukey = fits["tukey"].summary().as_latex()
    assert "No standard errors (---)" in tukey and "R$^2$: not available" in tukey
    assert "NOT PRIVATE" in fits["ols"].summary().as_latex()


@pytest.mark.parametrize(("kwargs", "words"), [
    (dict(rename=["a"]), ["rename must be a mapping", "list"]),
    (dict(title=3), ["title must be a string", "int"]),
    (dict(notes="abc"), ["notes must be a list of strings", "str"]),
    (dict(notes=["ok", 3]), ["notes must be a list of strings", "holding other objects"]),
])
def test_text_arguments_of_wrong_types_are_refused_by_type(fits, kwargs, words):
    with pytest.raises(DataTypeError, match="^(rename|title|notes) must be") as info:
        dpstats.table([fits["ada"]], **kwargs)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_model_names_and_stats_of_wrong_types_are_typed_refusals(fits):
    with pytest.raises(dpstats.errors.InvalidArgumentError, match="model_names must be a list of 1 names"):
        dpstats.table([fits["ada"]], model_names=3)
    with pytest.raises(dpstats.errors.InvalidArgumentError, match="stats must be a list of .*; got NoneType"):
        dpstats.table([fits["ada"]], stats=None)


def test_privacy_latex_fits_on_a_page(fits):
    """as_latex(privacy=True): the steps are the float, the budget, guarantee and notes a paragraph after it that
    breaks across pages (s44 new-user check: pgd's notes, and TukeyEM's 22 steps, made a float taller than the page,
    whose foot pdflatex cut off); TukeyEM's per-column medians share one row."""
    res = dpstats.dp_ols(FORMULA, factor_frame(3_000), 1.0, 1e-6, bounds=BOUNDS, random_state=0)
    report = res.summary().as_latex(label="tab:a", privacy=True).split("\\label{tab:a:privacy}")[1]
    float_part, after = report.split("\\end{table}")
    assert "\\begin{tabular}" in float_part and "Budget spent" not in float_part and "Note: pgd" not in float_part
    head = "{\\footnotesize\\raggedright\\noindent Privacy report of Table~\\ref{tab:a:privacy}"
    assert after.lstrip().startswith(head)
    assert "Budget spent" in after and "Note: pgd" in after
    tukey = fits["tukey"].summary().as_latex(privacy=True)
    rows = [line for line in tukey.splitlines() if "private median of column" in line]
    medians = [s.name for s in fits["tukey"].privacy.steps if "private median of column" in s.name]
    assert len(medians) == 4 and len(rows) == 1 and "private median of column 1-4 (each)" in rows[0]
    assert "draws no random numbers" in fits["ols"].summary().as_latex(privacy=True).split("\\end{table}")[-2]


def test_summary_latex_label_must_be_a_string(fits):
    with pytest.raises(DataTypeError, match="label must be a string"):
        fits["ada"].summary().as_latex(label=3)
    assert "\\label{tab:x}" in fits["ada"].summary().as_latex(label="tab:x")


def test_n_of_a_fit_with_null_rows_is_explained():
    """A private fit's N is every row (public), the incomplete ones included as public null rows, where least
    squares counts the complete rows: on sat.act (700 people, 13 without SATQ) a new user's table showed N = 687
    beside N = 700 without a word (session 43).  A fit with missing="drop" (the incomplete rows are public null
    rows by the user's choice) gets a note, in the table and in its own LaTeX; one with the default screen, and
    least squares, get none."""
    rng = np.random.default_rng(5)
    n = 600
    x = rng.uniform(0, 10, n)
    y = 1 + 2 * x + rng.normal(0, 1, n)
    df = pd.DataFrame({"y": y, "x": x})
    df.loc[:9, "y"] = np.nan
    bounds = {"x": (0, 10), "y": (-10, 40)}
    with_na = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, bounds=bounds, random_state=0, missing="drop")
    no_screen = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, bounds=bounds, random_state=0)  # the default screen
    ols = smf.ols("y ~ x", df).fit()
    notes = dpstats.table({"OLS": ols, "DP": with_na, "DP screened": no_screen}).notes
    null = [note for note in notes if note.startswith("N of")]
    assert null == ["N of DP: every row, including any with a missing value (a public null row that adds nothing "
                    "to the fit); the number of complete rows is private."]
    assert "N counts every row" in with_na.summary().as_latex()
    assert "N counts every row" not in no_screen.summary().as_latex()
    assert not any(note.startswith("N of") for note in dpstats.table({"DP": with_na}, stats=["epsilon"]).notes)


@pytest.mark.parametrize("separator", ["\n", "\t", "\r", "\u2028", "\u200b"])
def test_a_control_or_line_breaking_thousands_separator_is_refused(separator):
    """A newline (or tab, a line separator, a zero-width space) as thousands= split the table's rows (text, LaTeX)
    and was accepted; it is the typed refusal like any invalid separator.  Thin spaces stay valid."""
    from dpstats.table_grid import check_thousands
    with pytest.raises(InvalidArgumentError, match="thousands must be"):
        check_thousands(separator)
    assert check_thousands("\u2009") == "\u2009" and check_thousands("\u202f") == "\u202f"


def test_a_number_beyond_a_doubles_digits_is_written_in_powers_of_ten():
    """An estimate of 1e300 (a withheld standard error: the scale is the estimate's) was written in fixed point, 301
    digits most of them noise; from 1e15 a row is in e-notation, to its standard error's last significant digit."""
    from dpstats.table_grid import format_number, row_format
    assert format_number(1e300, row_format(1e300, float("nan")), ",") == "1.00e+300"
    assert format_number(-1e300, row_format(-1e300, float("inf"))) == "-1.00e+300"
    shown = row_format(2.5e17, 1.234e16)
    assert (format_number(2.5e17, shown), format_number(1.234e16, shown)) == ("2.500e+17", "1.234e+16")
    assert row_format(123456.7, 80.1) == ".1f" and row_format(1e14, 3.0e12) == ".0f"  # below 1e15: fixed point


def test_a_table_of_several_private_fits_states_their_total_budget() -> None:
    """A short and a long regression fitted privately from one budget (a paper's nested models): the notes give
    what the private fits spent together by basic composition (the sums of their epsilons and deltas), which a
    methods section reports, in text, LaTeX (delta as a power of ten, as in the footer) and HTML; a table of one
    private fit beside least squares keeps the per-fit note only.  Deterministic: no test of a random outcome."""
    df = dpstats.datasets.load("mtcars")
    bounds = {"wt": (1, 6), "hp": (50, 350), "mpg": (10, 35)}
    acct = dpstats.PrivacyAccountant(epsilon=2.0, delta=2e-6)
    short = dpstats.dp_ols("mpg ~ wt", df, 1.0, 1e-6, method="ssp", bounds=bounds, accountant=acct, random_state=0)
    long = dpstats.dp_ols("mpg ~ wt + hp", df, 1.0, 1e-6, method="ssp", bounds=bounds, accountant=acct,
                          random_state=1)
    ols = dpstats.dp_ols("mpg ~ wt + hp", df, epsilon=float("inf"), method="ols")
    tab = dpstats.table({"OLS": ols, "(1)": short, "(2)": long})
    total = ("Together, on the same data, (1), (2) spent at most \u03b5 = 2, \u03b4 = 2e-6 "
             "(the sums: basic composition).")
    assert total in " ".join(str(tab).split())  # the text wraps its notes
    assert ("Together, on the same data, (1), (2) spent at most $\\varepsilon$ = 2, $\\delta$ = 2$\\times 10^{-6}$ "
            "(the sums: basic composition).") in tab.as_latex()
    assert "2&times;10<sup>&minus;6</sup>" in tab.as_html()
    assert "Together" not in str(dpstats.table({"OLS": ols, "(2)": long}))
    assert latex_note("x12e-5 and 2e-6") == "x12e-5 and 2$\\times 10^{-6}$"  # not inside a name


def test_fits_of_different_n_are_not_said_to_share_their_data():
    """s55 new-user check: a table of a fit on Rossi's 432 prisoners beside one on Democracy and Dictatorship's 1,808
    leaders said "Together, on the same data, rossi, dd spent at most epsilon = 2": n is public and differs, so the
    rows are not the same; the sum now binds only where their rows overlap, and the note says so.  Deterministic."""
    df = dpstats.datasets.load("mtcars")
    bounds = {"wt": (1, 6), "mpg": (10, 35)}
    whole = dpstats.dp_ols("mpg ~ wt", df, 1.0, 1e-6, method="ssp", bounds=bounds, random_state=0)
    part = dpstats.dp_ols("mpg ~ wt", df.iloc[:20], 0.5, 1e-6, method="ssp", bounds=bounds, random_state=1)
    text = " ".join(str(dpstats.table({"all": whole, "part": part})).split())
    assert "on the same data" not in text
    assert ("all, part were fitted on different numbers of rows: where their rows overlap they spent together at most "
            "\u03b5 = 1.5, \u03b4 = 2e-6 (the sums: basic composition); on disjoint data sets each spent only its "
            "own.") in text


def test_terms_left_out_by_keep_or_drop_are_named_in_the_notes() -> None:
    """A short and a long regression shown with ``keep`` (the headline and age only) looked like the same model: the
    notes now name the terms not shown and the models that have them, as a journal table's "controls" line does
    (term names are the formula's, public); a table that shows every term has no such note.  Deterministic."""
    df = dpstats.datasets.load("mtcars")
    short = dpstats.dp_ols("mpg ~ wt", df, epsilon=float("inf"), method="ols")
    long = dpstats.dp_ols("mpg ~ wt + hp + qsec", df, epsilon=float("inf"), method="ols")
    tab = dpstats.table({"(1)": short, "(2)": long}, keep=["wt"])
    text = " ".join(str(tab).split())
    assert "Not shown: Intercept in (1), (2); hp, qsec in (2)." in text
    assert "Not shown: Intercept in (1), (2); hp, qsec in (2)." in tab.as_latex()
    assert "Not shown: Intercept in (1), (2)." in str(dpstats.table([short, long], drop=["Intercept"]))
    assert "Not shown" not in str(dpstats.table({"(1)": short, "(2)": long}))


def test_text_notes_keep_a_symbol_with_its_figure_when_they_wrap() -> None:
    """The text table wraps its notes at its width; "δ = 2e-6" and "ε = 2" were broken across lines where the width
    fell inside them ("... at most ε =" / "2, δ = 2e-6 ..."), which reads as a missing figure.  A note padded so that
    the break falls at every point of the figures: each stays on one line, and the words are as given.  LaTeX and
    HTML, which the reader's renderer breaks, are as before.  Deterministic: no test of a random outcome."""
    ols = dpstats.dp_ols("mpg ~ wt", dpstats.datasets.load("mtcars"), epsilon=float("inf"), method="ols")
    for pad in range(1, 41):
        note = "x" * pad + " the private fits spent at most \u03b5 = 2, \u03b4 = 2e-6 together (basic composition)."
        tab = dpstats.table([ols], notes=[note])
        text = tab.as_text()
        lines = text.split("\n")
        lines = lines[[line.startswith("x" * pad + " ") for line in lines].index(True):]  # our note (the last)
        assert " ".join(" ".join(lines).split()) == note
        assert all(not line.rstrip().endswith(("\u03b5 =", "\u03b4 =", "\u03b5", "\u03b4")) for line in lines)
        assert "\u03b5 = 2," in text and "\u03b4 = 2e-6" in text
        assert "$\\delta$ = 2$\\times 10^{-6}$" in tab.as_latex()
        assert "\u03b4 = 2&times;10<sup>&minus;6</sup>" in tab.as_html()


def test_markdown_escapes_dollars_and_ampersands():
    """Jupyter, MyST and pandoc read $...$ in Markdown as mathematics, so income brackets such as "$25k-$50k" in a
    level came out as an italic formula, and "&lt;5" as an entity ("<5"); both are now backslash-escaped, which
    CommonMark shows as the characters themselves."""
    rng = np.random.default_rng(2)
    levels = ["$25k-$50k", "&lt;5", "R&D"]
    df = pd.DataFrame({"inc": pd.Categorical(rng.choice(levels, 500), categories=levels),
                       "x": rng.uniform(0, 1, 500)})
    df["y"] = df["x"] + rng.normal(0, 0.1, 500)
    res = dpstats.dp_ols("y ~ x + C(inc, Treatment('R&D'))", df, 5.0, 1e-6, method="ssp",
                         bounds={"x": (0, 1), "y": (-1, 2)}, random_state=0)
    md = dpstats.table([res]).as_markdown()
    assert "T.\\$25k-\\$50k" in md and "T.\\&lt;5" in md
    assert re.search(r"(?<!\\)[$&]", md) is None
