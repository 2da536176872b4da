"""Replace some configurations' records in a real-data results directory with those of a newer run.

After a change to one method, re-run only its configurations into a scratch directory, then fold them into
``benchmarks/results/real_data`` and note the run in ``meta.json``'s command (the summary's "Command" line)::

    python benchmarks/real_data.py --methods theilsen --seeds 5 --no-peers --out /tmp/run
    python benchmarks/merge_records.py benchmarks/results/real_data /tmp/run "what changed" \\
        "theilsen (1 predictor)" [--datasets engel,faithful]
    python benchmarks/real_data.py --summarise --out benchmarks/results/real_data
    python benchmarks/assemble_report.py

Configurations are the records' ``config`` labels ("auto", "pgd (no bounds)", "auto (1 predictor)", ...),
separated by "|"; with ``--datasets`` only those data sets' records are replaced.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections.abc import Sequence
from pathlib import Path


def load(directory: Path) -> list[dict]:
    """The records of a results directory."""
    with gzip.open(directory / "records.jsonl.gz", "rt") as fh:
        return [json.loads(line) for line in fh]


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("target", type=Path, help="the results directory to update")
    p.add_argument("run", type=Path, help="the newer run's directory")
    p.add_argument("note", help="what changed (goes into the command line of meta.json)")
    p.add_argument("configs", help="configuration labels to replace, separated by '|'")
    p.add_argument("--datasets", help="comma-separated data sets (default: all)")
    args = p.parse_args(argv)
    configs = args.configs.split("|")
    sets = set(args.datasets.split(",")) if args.datasets else None

    def picked(record: dict) -> bool:
        return record["config"] in configs and (sets is None or record["dataset"] in sets)

    old, fresh = load(args.target), load(args.run)
    added = [r for r in fresh if picked(r)]
    if not added:
        raise SystemExit("the newer run has no records of these configurations")
    kept = [r for r in old if not picked(r)]
    print(f"replacing {len(old) - len(kept)} records with {len(added)}")
    with gzip.GzipFile(args.target / "records.jsonl.gz", "wb", mtime=0) as fh:
        fh.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in kept + added).encode())
    meta = json.loads((args.target / "meta.json").read_text())
    run_meta = json.loads((args.run / "meta.json").read_text())
    where = f" on {sorted(sets)}" if sets else ""
    meta["command"] += f"; {args.note}: {configs}{where} from: {run_meta['command']}"
    (args.target / "meta.json").write_text(json.dumps(meta, indent=1))


if __name__ == "__main__":
    main()
