"""Execute the vignettes in place, so that they are stored with their outputs.

Run from anywhere:

    python vignettes/build.py                 # every notebook
    python vignettes/build.py 01 04           # only the notebooks whose names start with 01 or 04

Each notebook runs top to bottom in a fresh kernel whose working directory is
``vignettes/`` and whose ``PYTHONPATH`` starts with the repository root, so it
uses this checkout's ``dpstats`` whether or not the package is installed.
Needs the ``test`` extra (nbclient, nbformat, ipykernel, matplotlib).

The documentation site shows the stored notebooks as they are (myst-nb, never
executed there; ``docs/_ext/dpstats_site.py`` copies them into the site and
makes the gallery), so this script is the only place they run.

``tests/test_vignettes.py`` imports :func:`execute` and :func:`compare` from
this file: it re-runs every notebook from a clean kernel and checks that the
stored outputs are current (see :func:`compare`).  When it fails because the
package's output changed on purpose (a new sampler draws different noise, a
reworded report), run this script and commit the regenerated notebooks.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: Cells with this tag have their text outputs compared number by number with a fresh run.
COMPARE_TAG = "compare"
#: Per-cell time limit while executing (seconds); each notebook is meant to take well under a minute.
CELL_TIMEOUT = 600
#: Relative tolerance on printed numbers (on top of one unit in the last printed digit).
RTOL = 1e-3

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def notebooks(selection: list[str] | None = None) -> list[Path]:
    """The vignettes, in order (``NN-name.ipynb``), optionally those whose names start with a selection."""
    paths = sorted(HERE.glob("[0-9][0-9]-*.ipynb"))
    if selection:
        paths = [p for p in paths if any(p.name.startswith(s) for s in selection)]
    return paths


def kernel_env() -> dict[str, str]:
    """The environment of the notebook kernel: this checkout first on PYTHONPATH, a non-interactive backend."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.pop("MPLBACKEND", None)  # the kernel's inline backend renders the figures into the notebook
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # silences a debugger warning of some ipykernels
    return env


def execute(path: Path, timeout: int = CELL_TIMEOUT) -> Any:
    """Run a notebook top to bottom in a fresh kernel and return the executed copy (the file is not written)."""
    import nbformat  # noqa: PLC0415
    from nbclient import NotebookClient  # noqa: PLC0415

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(HERE)}},
                            record_timing=False)
    client.execute(env=kernel_env())
    return nb


def _text_outputs(cell: Any) -> list[tuple[str, str]]:
    """(kind, text) of the outputs a reader sees as text: stdout and the plain-text form of results."""
    out = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream" and o.name == "stdout":
            out.append(("stdout", o.text))
        elif o.output_type in ("execute_result", "display_data") and "text/plain" in o.data:
            if "image/png" in o.data or "image/svg+xml" in o.data:
                continue  # a figure's text form is its repr, with a memory address
            out.append((o.output_type, o.data["text/plain"]))
    # consecutive stdout chunks are one stream (how they are split depends on timing)
    merged: list[tuple[str, str]] = []
    for kind, text in out:
        if merged and kind == "stdout" and merged[-1][0] == "stdout":
            merged[-1] = ("stdout", merged[-1][1] + text)
        else:
            merged.append((kind, text))
    return merged


def _shape(cell: Any) -> list[tuple[str, ...]]:
    """The kinds of output a cell made (stream name or MIME types), without stderr (warnings vary by version)."""
    kinds = set()
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            if o.name != "stderr":
                kinds.add(("stream", o.name))
        elif o.output_type == "error":
            kinds.add(("error", o.ename))
        else:
            kinds.add((o.output_type, *sorted(o.data)))
    return sorted(kinds)


def _numbers_match(a: str, b: str, rtol: float) -> bool:
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    last = max(_last_digit(a), _last_digit(b))
    return abs(x - y) <= max(rtol * max(abs(x), abs(y)), 2 * last)


def _last_digit(s: str) -> float:
    """One unit in the last printed digit of a number (0.001 for '1.234', 1e-07 for '1.5e-06')."""
    mant, _, exp = s.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return 10.0 ** (-decimals + (int(exp) if exp else 0))


def text_differences(stored: str, fresh: str, rtol: float = RTOL) -> str | None:
    """None when two texts agree (numbers within tolerance, everything else exactly); else a description."""
    s_nums, f_nums = _NUMBER.findall(stored), _NUMBER.findall(fresh)
    s_rest, f_rest = _NUMBER.sub("#", stored), _NUMBER.sub("#", fresh)
    if s_rest.split() != f_rest.split() or len(s_nums) != len(f_nums):
        # the texts may differ in length: compare the common lines first
        for i, (a, b) in enumerate(zip(stored.splitlines(), fresh.splitlines(), strict=False)):
            if _NUMBER.sub("#", a).split() != _NUMBER.sub("#", b).split():
                return f"text differs at line {i + 1}:\n  stored: {a}\n  fresh:  {b}"
        return f"text differs in length ({len(stored.splitlines())} vs {len(fresh.splitlines())} lines)"
    for a, b in zip(s_nums, f_nums, strict=True):
        if not _numbers_match(a, b, rtol):
            line = next((ln for ln in fresh.splitlines() if b in ln), "")
            return f"number {a} (stored) vs {b} (fresh), beyond tolerance: {line.strip()}"
    return None


def compare(stored: Any, fresh: Any, rtol: float = RTOL) -> list[str]:
    """Problems that make the stored notebook out of date with respect to a fresh run (empty: current).

    * the stored notebook must have been run top to bottom in one kernel:
      code cells numbered 1, 2, 3, ... in order, none unexecuted;
    * the same cells, with the same sources;
    * the fresh run raised no error, and every cell made the same kinds of
      output (stdout, figures, tables, ...) as stored;
    * in cells tagged ``compare``, the text outputs (stdout and the plain
      text of results) agree: numbers within ``rtol`` (or one unit in the
      last printed digit), everything else exactly.
    """
    problems: list[str] = []
    s_code = [c for c in stored.cells if c.cell_type == "code"]
    f_code = [c for c in fresh.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in s_code]
    if counts != list(range(1, len(s_code) + 1)):
        problems.append(f"stored notebook was not run top to bottom in one kernel (execution counts {counts})")
    if [c.source for c in s_code] != [c.source for c in f_code]:
        return problems + ["the code cells differ between the stored and the executed notebook"]
    for k, (s, f) in enumerate(zip(s_code, f_code, strict=True), start=1):
        where = f"cell {k} ({s.source.strip().splitlines()[0][:60] if s.source.strip() else 'empty'!r})"
        errors = [o for o in f.outputs if o.output_type == "error"]
        if errors:
            problems.append(f"{where}: the fresh run raised {errors[0].ename}: {errors[0].evalue}")
            continue
        if _shape(s) != _shape(f):
            problems.append(f"{where}: output kinds differ: stored {_shape(s)}, fresh {_shape(f)}")
            continue
        if COMPARE_TAG in s.metadata.get("tags", []):
            s_txt, f_txt = _text_outputs(s), _text_outputs(f)
            if [k for k, _ in s_txt] != [k for k, _ in f_txt]:
                problems.append(f"{where}: text outputs differ in kind")
                continue
            for (_, a), (_, b) in zip(s_txt, f_txt, strict=True):
                diff = text_differences(a, b, rtol)
                if diff:
                    problems.append(f"{where}: {diff}")
                    break
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="prefixes of notebook names (default: all)")
    args = ap.parse_args(argv)
    import nbformat  # noqa: PLC0415
    from nbclient.exceptions import CellExecutionError  # noqa: PLC0415

    paths = notebooks(args.names)
    if not paths:
        print("no notebook matches", args.names, file=sys.stderr)
        return 1
    failed = []
    for path in paths:
        t0 = time.perf_counter()
        try:
            nb = execute(path)
        except CellExecutionError as exc:  # keep the stored copy; report and go on with the others
            failed.append(path.name)
            last = [line for line in str(exc).splitlines() if line.strip()][-1:]
            print(f"FAILED {path.relative_to(ROOT)} (stored copy kept): {' '.join(last)}", file=sys.stderr,
                  flush=True)
            continue
        nbformat.write(nb, path)
        print(f"executed {path.relative_to(ROOT)} in {time.perf_counter() - t0:.1f} s", flush=True)
    if failed:
        print(f"{len(failed)} notebook(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
