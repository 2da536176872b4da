"""Cost of hardened privacy: exact discrete noise, the OS CSPRNG, cached PLD composition, the budget file.

Run:  python benchmarks/hardened_noise.py [--repeats 50]

Prints markdown tables (median and 90th percentile of wall-clock times over
--repeats runs, after one warm-up run):

1. Noise for one SSP-sized release: a 50 x 50 symmetric matrix (1275 draws)
   plus a 50-vector, through ``symmetric_gaussian_mechanism`` and
   ``gaussian_mechanism_mu`` (ledger charge included), with a seeded PCG64
   generator and with the OS CSPRNG (``SecureGenerator``), against the
   textbook floating-point ``rng.normal`` draws of the same sizes.
2. A scalar release (one Laplace draw, as in TukeyEM's PTR test).
3. Ledger charges for a TukeyEM-like mixed ledger (medians, a Gaussian pilot,
   a Laplace test, a restricted exponential mechanism): composition with cold
   and warm PLD caches.
4. One reserve + settle on a persistent budget file (two fsync'd
   transactions) against the in-memory accountant.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import tempfile
import time

import numpy as np

from dpstats.privacy import composition
from dpstats.privacy.accountant import PrivacyAccountant
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep
from dpstats.privacy.mechanisms import gaussian_mechanism_mu, laplace_mechanism, symmetric_gaussian_mechanism
from dpstats.privacy.secure_random import SecureGenerator


def timed(fn, repeats: int) -> tuple[float, float]:
    fn()  # warm-up (caches, first allocation)
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)) * 1e3, float(np.percentile(ts, 90)) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=50)
    args = ap.parse_args()
    r = args.repeats
    a = np.random.default_rng(1).normal(size=(50, 50))
    gram, vec = a @ a.T, np.ones(50)

    def ssp_release(rng: np.random.Generator):
        def run() -> None:
            ledger = PrivacyLedger(10.0, 1e-5)
            symmetric_gaussian_mechanism(gram, l2_sensitivity=math.sqrt(2), mu=0.5, rng=rng, ledger=ledger, name="G")
            gaussian_mechanism_mu(vec, l2_sensitivity=2.0, mu=0.5, rng=rng, ledger=ledger, name="v")
        return run

    def textbook(rng: np.random.Generator):
        def run() -> None:
            iu = np.triu_indices(50)
            gram[iu] + rng.normal(0.0, 3.0, iu[0].size)
            vec + rng.normal(0.0, 4.0, 50)
        return run

    print(f"Python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs; {r} repeats\n")
    print("| what | median ms | p90 ms |\n|---|---|---|")
    secure = SecureGenerator()  # made once, outside the timed call
    rows = [
        ("50x50 symmetric + 50-vector, hardened, seeded PCG64", ssp_release(np.random.default_rng(0))),
        ("50x50 symmetric + 50-vector, hardened, OS CSPRNG", ssp_release(SecureGenerator())),
        ("50x50 upper triangle + 50-vector, textbook rng.normal (no ledger)", textbook(np.random.default_rng(0))),
        ("one Laplace draw (scalar), hardened, seeded", lambda: laplace_mechanism(
            3.0, l1_sensitivity=1.0, epsilon=0.5, rng=np.random.default_rng(0), ledger=PrivacyLedger(1.0, 1e-6),
            name="ptr")),
        ("one Laplace draw (scalar), hardened, OS CSPRNG", lambda: laplace_mechanism(
            3.0, l1_sensitivity=1.0, epsilon=0.5, rng=secure, ledger=PrivacyLedger(1.0, 1e-6), name="ptr")),
    ]
    for label, fn in rows:
        med, p90 = timed(fn, r)
        print(f"| {label} | {med:.3f} | {p90:.3f} |")

    steps = [PrivacyStep(f"median {i}", "exponential", 1.0, "score", math.nan, epsilon=0.01, delta=0.0)
             for i in range(5)]
    steps += [PrivacyStep("pilot", "gaussian", 1.0, "L2", 1 / 0.031),
              PrivacyStep("PTR", "laplace", 1.0, "L1", 1 / 0.43, epsilon=0.43, delta=0.0, discrete=True),
              PrivacyStep("EM", "exponential", 1.0, "score", math.nan, epsilon=0.43, delta=5e-7)]

    def charge_all() -> None:
        ledger = PrivacyLedger(1.0, 1e-6)
        for s in steps:
            ledger.charge(s)

    def cold() -> None:
        composition._step_pld.cache_clear()
        composition._gaussian_pld.cache_clear()
        composition._fold_cache.clear()
        charge_all()

    print("\n| TukeyEM-like ledger, 8 charges | median ms | p90 ms |\n|---|---|---|")
    for label, fn in (("cold PLD caches (first fit with these parameters)", cold),
                      ("warm PLD caches (later fits)", charge_all)):
        med, p90 = timed(fn, max(5, r // 5))
        print(f"| {label} | {med:.1f} | {p90:.1f} |")

    with tempfile.TemporaryDirectory() as tmp:
        file_acct = PrivacyAccountant(1e9, 0.5, path=os.path.join(tmp, "budget.sqlite"))
        mem_acct = PrivacyAccountant(1e9, 0.5)
        print("\n| reserve + settle | median ms | p90 ms |\n|---|---|---|")
        for label, acct in (("in memory", mem_acct), ("budget file (SQLite, synchronous=FULL)", file_acct)):
            med, p90 = timed(lambda a=acct: a.settle(a.reserve(1e-3, 1e-12, "bench"), 1e-3, 1e-12), r)
            print(f"| {label} | {med:.3f} | {p90:.3f} |")


if __name__ == "__main__":
    main()
