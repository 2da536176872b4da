"""dpstats.plotting: coefficient plots, privacy-utility curves, error against n (matplotlib, Agg backend)."""

from __future__ import annotations

import sys

import matplotlib
import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import DataTypeError, InvalidArgumentError
from dpstats.plotting import coef_plot, error_vs_n, privacy_utility, short_name

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BOUNDS = {"x": (0, 10), "y": (-30, 60)}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 10, 3000)
    g = pd.Categorical(rng.choice(["a", "b", "c"], x.size), categories=["a", "b", "c"])
    return pd.DataFrame({"x": x, "g": g, "y": 2.0 + 3.0 * x + rng.normal(0, 5, x.size)})


@pytest.fixture(scope="module")
def fits(data):
    ssp = dpstats.dp_ols("y ~ x + C(g)", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)
    ssp_no_ci = dpstats.dp_ols("y ~ x + C(g)", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0,
                               inference=False)
    ols = dpstats.dp_ols("y ~ x + C(g)", data, float("inf"), method="ols")
    return ssp, ssp_no_ci, ols


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_importing_dpstats_does_not_import_matplotlib():
    code = "import sys, dpstats; print('matplotlib' in sys.modules)"
    import subprocess  # noqa: PLC0415

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_coef_plot_draws_intervals_estimates_and_reference(fits):
    ssp, _, ols = fits
    ax = ssp.plot_coefficients(reference=ols.params, reference_label="OLS")
    ticks = sorted(ax.get_yticklabels(), key=lambda t: -t.get_position()[1])  # top to bottom
    assert [t.get_text() for t in ticks] == ["Intercept", "g: b", "g: c", "x"]  # the design's order, top down
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["ssp, epsilon=1: 95% interval", "OLS"]
    segments = ax.collections[0].get_segments()  # one interval per coefficient, from conf_int
    ci = ssp.conf_int()
    lo = sorted(round(float(s[0][0]), 9) for s in segments)
    assert lo == sorted(round(float(v), 9) for v in ci[0])


def test_coef_plot_without_intervals_and_several_fits(fits):
    ssp, ssp_no_ci, ols = fits
    ax = coef_plot({"with": ssp, "without": ssp_no_ci, "ols": ols}, drop_intercept=True, short_names=False)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "Intercept" not in labels and "C(g)[T.b]" in labels
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["with: 95% interval", "without (no intervals)", "ols: 95% interval"]


def test_coef_plot_takes_a_list_of_fits_as_table_does(fits):
    ssp, ssp_no_ci, _ = fits
    ax = coef_plot([ssp, ssp_no_ci], drop_intercept=True)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(legend) == 2 and legend[0].startswith("(1) ssp") and legend[1].startswith("(2) ssp")
    with pytest.raises(DataTypeError, match="dpstats results"):
        coef_plot([ssp, 5])
    with pytest.raises(InvalidArgumentError, match="at least one"):
        coef_plot([])


def test_coef_plot_takes_a_statsmodels_fit_beside_a_dp_fit(data, fits):
    """coef_plot refused statsmodels results (DataTypeError), so a DP fit could not be drawn beside OLS on the same
    public data: a statsmodels fit (from a formula or from arrays) is now drawn with its own conf_int, matched by
    name and labelled as not private."""
    import statsmodels.api as sm  # noqa: PLC0415
    import statsmodels.formula.api as smf  # noqa: PLC0415

    ssp = fits[0]
    sm_formula = smf.ols("y ~ x + C(g)", data).fit()
    ax = coef_plot({"DP (ssp)": ssp, "OLS": sm_formula}, short_names=False)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["DP (ssp): 95% interval", "OLS: 95% interval"]
    assert sorted(t.get_text() for t in ax.get_yticklabels()) == ["C(g)[T.b]", "C(g)[T.c]", "Intercept", "x"]
    ols_segments = ax.collections[1].get_segments()
    assert sorted(round(float(s[0][0]), 9) for s in ols_segments) == \
        sorted(round(float(v), 9) for v in sm_formula.conf_int(0.05)[0])
    ax = coef_plot([ssp, sm_formula], drop_intercept=True, alpha=0.1)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[1] == "(2) statsmodels OLS (NOT PRIVATE): 90% interval"
    assert ax.get_title() == ssp.formula
    sm_arrays = sm.OLS(data["y"].to_numpy(), sm.add_constant(data[["x"]].to_numpy())).fit()  # names const, x1
    ax = coef_plot(sm_arrays)
    assert sorted(t.get_text() for t in ax.get_yticklabels()) == ["const", "x1"]


def test_coef_plot_term_selection(fits):
    ssp = fits[0]
    ax = coef_plot(ssp, terms=["x"])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x"]
    ax = coef_plot(ssp, terms=lambda name: name.startswith("C(g)"))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["g: b", "g: c"]
    with pytest.raises(InvalidArgumentError, match="not among"):
        coef_plot(ssp, terms=["nope"])
    with pytest.raises(InvalidArgumentError, match="no coefficient"):
        coef_plot(ssp, terms=["Intercept"], drop_intercept=True)
    with pytest.raises(InvalidArgumentError, match="at least one"):
        coef_plot({})


@pytest.mark.parametrize("column, label", [
    ("C(cut, Treatment('Ideal'))[T.Good]", "cut: Good"), ("C(cut)[T.Very Good]", "cut: Very Good"),
    ("C(cyl, levels=[4, 6, 8])[T.6]", "cyl: 6"), ("np.log(carat)", "np.log(carat)"), ("Intercept", "Intercept"),
    ("x1:C(g)[T.b]", "x1:C(g)[T.b]"),
])
def test_short_names(column, label):
    assert short_name(column) == label


def test_privacy_utility_reuses_comparison_plot_and_adds_reference(data):
    study = dpstats.compare("y ~ x", data, methods=["ssp", "adassp"], epsilons=[0.5, 2.0], trials=2,
                            data_are_public=True, bounds=BOUNDS, random_state=0, progress=False, verbose=False)
    ax = privacy_utility(study, reference=0.8, reference_label="OLS")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:2] == ["adassp", "ssp"] and legend[-1] == "OLS"
    assert ax.get_xscale() == "log"


def test_error_vs_n_measured_curves_and_bounds():
    ns = [1000, 10_000, 100_000]
    errors = {"a": np.array([[1.0, 2.0, 3.0], [0.5, 0.6, np.nan], [0.1, 0.1, 0.1]]), "b": [2.0, 1.0, np.nan]}
    ax = error_vs_n(ns, errors, sigma=2.0)
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    np.testing.assert_allclose(lines["a (measured)"].get_ydata(), [1.0, 0.275, 0.05])  # medians / sigma
    np.testing.assert_allclose(lines["b (measured)"].get_xdata(), [1000, 10_000])  # NaN point dropped
    assert ax.get_xscale() == ax.get_yscale() == "log"

    ax = error_vs_n(ns, {"a": [0.3, 0.1, 0.03]}, d=10, epsilon=1.0, delta=1e-6, method="noisy_ols")
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert "lower bound, eps=1" in labels and "noisy_ols upper bound, eps=1" in labels and "a (measured)" in labels


def test_error_vs_n_says_in_its_legend_when_a_label_has_no_finite_value():
    # a method refused at every n stood in the legend as "ssp (measured)" with nothing drawn
    ax = error_vs_n([100, 1000], {"pgd": [0.5, 0.1], "ssp": [np.nan, np.nan]})
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["pgd (measured)", "ssp (no finite value: nothing drawn)"]
    plt.close("all")


def test_error_vs_n_rejects_bad_input():
    with pytest.raises(InvalidArgumentError, match="one per n"):
        error_vs_n([1, 2], {"a": [1.0, 2.0, 3.0]})
    with pytest.raises(InvalidArgumentError, match="positive"):
        error_vs_n([0, 2], {"a": [1.0, 2.0]})
    with pytest.raises(InvalidArgumentError, match="sigma"):
        error_vs_n([1, 2], {"a": [1.0, 2.0]}, sigma=0)


def test_saved_coef_plot_keeps_long_labels_inside_the_figure(data, tmp_path):
    # the layout engine: after saving, every tick label's bounding box lies within the figure
    long = dpstats.dp_ols("y ~ x + C(g, Treatment('c'))", data, float("inf"), method="ols")
    ax = long.plot_coefficients(short_names=False)  # labels such as "C(g, Treatment('c'))[T.a]"
    ax.figure.savefig(tmp_path / "coef.png")
    renderer = ax.figure.canvas.get_renderer()
    fig_box = ax.figure.bbox
    for label in ax.get_yticklabels():
        box = label.get_window_extent(renderer)
        assert box.x0 >= fig_box.x0 - 0.5 and box.x1 <= fig_box.x1 + 0.5, label.get_text()
