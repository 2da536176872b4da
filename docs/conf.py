"""Sphinx configuration of the dpstats documentation site.

Build (from the repository root; the README's "Documentation" section):

    python -m pip install ".[docs]" && python -m sphinx -W --keep-going -b html docs docs/_build/html

Everything the site shows is built from this repository: the Markdown pages in
``docs/``, the docstrings (autosummary/autodoc + numpydoc), one page per
registered method and the API pages generated at build time by
``docs/_ext/dpstats_site.py`` from the method registry and the public modules'
``__all__``, the stored vignettes (myst-nb, never executed here), BENCHMARKS.md
and CHANGELOG.md.  No page needs the network (no intersphinx).  ``-W`` makes
every warning an error: a broken cross-reference (nitpicky mode), a broken
local link (MyST), a docstring that does not parse, or a public name whose
docstring fails the checks of ``docs/_ext/dpstats_docstrings.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # document this checkout's dpstats, whatever is installed
sys.path.insert(0, str(DOCS / "_ext"))

import dpstats  # noqa: E402

# -- Project -------------------------------------------------------------------------------------------------------

project = "dpstats"
author = "dpstats developers"
copyright = "dpstats developers, MIT licence"  # noqa: A001
release = dpstats.__version__
version = release

# -- Extensions ----------------------------------------------------------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",  # MyST Markdown pages and the stored notebooks (includes myst_parser)
    "sphinx_copybutton",
    "dpstats_site",  # generates docs/methods/, docs/api/ and docs/vignettes/ at build time
    "dpstats_docstrings",  # docstring checks of the public names (numpydoc validation) + alias resolution
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
# methods/_*.md: generated snippets that pages include
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "_templates", "methods/_*"]
templates_path = ["_templates"]

# -- Checks: warnings are errors with -W ---------------------------------------------------------------------------

# Every cross-reference must resolve.  Intersphinx needs the network, so references to third-party objects
# (mostly from signatures and docstring types) cannot resolve here; only those are ignored, by package.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|pandas|pd|scipy|patsy|statsmodels|sklearn|matplotlib|dask|pyarrow|dp_accounting)(\..*)?"),
    (r"py:.*", r"(collections\.abc|typing|pathlib|os|sqlite3|numbers|datetime)\..*"),
]
suppress_warnings = [
    # BENCHMARKS.md is assembled from the benchmarks' own result files, whose heading levels skip (H2 to H5);
    # a style warning, not a broken link
    "myst.header",
]

# -- Docstring checks (docs/_ext/dpstats_docstrings.py) ----------------------------------------------------------

# Module exclusions ({module: [checks]}): checks skipped for every documented object a module defines.  Empty:
# every documented object passes (issue 20).  A branch that must land while another changes the same module may
# list a module here for a while; the build fails on a check that no object of the module fails any more, so an
# entry cannot outlive its need.
dpstats_docstring_module_exclusions: dict[str, list[str]] = {}
# "RST": the docstring does not parse as reStructuredText (the |x| of absolute values reads as a substitution
# reference); its bars are escaped.  Per name; other checks may be listed per name too.
dpstats_docstring_exclusions: dict[str, list[str]] = {
    "dpstats.inference.noisy_estimate_covariance": ["RST"],
    "dpstats.inference.private_rsquared": ["RST"],
}

# -- MyST and notebooks --------------------------------------------------------------------------------------------

myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "attrs_inline"]
myst_heading_anchors = 4  # `[text](page.md#a-heading)` links to headings down to level 4
nb_execution_mode = "off"  # the vignettes are stored with their outputs (vignettes/build.py runs them)
nb_merge_streams = True

# -- autodoc, autosummary, numpydoc --------------------------------------------------------------------------------

autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # the numpydoc docstrings give the types (`name : type`)
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
add_module_names = False
numpydoc_show_class_members = False  # the class template lists members with autodoc
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True

# -- HTML ----------------------------------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"dpstats {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_depth": 3,
    "show_nav_level": 1,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "changelog": []}
html_static_path: list[str] = []
html_show_sourcelink = False
