"""Every random draw of a fit goes through dpstats.privacy (its mechanisms and samplers) with the fit's generator.

A static scan of the package: outside ``dpstats/privacy/`` no module draws from a generator or builds one, except
the simulators of ``dpstats.simulate`` (synthetic data for examples, no fit) and the planning context, whose
generator nothing draws from (``pipeline.planned_context``).  A new draw elsewhere fails here: route it through a
function of :mod:`dpstats.privacy.mechanisms` (``public_uniform``, ``permutation``, ``keyed_public_generator``,
``spawn_generators``, the mechanisms).  Deterministic.
"""

from __future__ import annotations

import re
from pathlib import Path

import dpstats

PACKAGE = Path(dpstats.__file__).resolve().parent
DRAW = re.compile(r"\b\w*(rng|gen|generator)\.(normal|uniform|gumbel|integers|random|choice|permutation|permuted|"
                  r"standard_normal|exponential|laplace|binomial|poisson|shuffle|multivariate_normal|standard_t|"
                  r"beta|gamma|bytes)\(|np\.random\.(default_rng|normal|uniform|rand|randn|seed|choice|"
                  r"SeedSequence|Generator|PCG64|RandomState)\(|\bimport random\b|\bsecrets\.")
ALLOWED = {("simulate.py", "rng = random_state if"), ("simulate.py", "rng."),
           ("pipeline.py", "PrivacyLedger(epsilon, delta), np.random.default_rng(0)")}


def test_no_random_draw_outside_the_privacy_modules():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("privacy/"):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if ">>>" in code or not DRAW.search(code):
                continue
            if any(relative == name and fragment in code for name, fragment in ALLOWED):
                continue
            found.append(f"{relative}:{number}: {line.strip()}")
    assert not found, "random draws outside dpstats/privacy:\n" + "\n".join(found)
