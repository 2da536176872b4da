"""The per-chunk memo of public values is shared by the threads of a local source: concurrent look-ups must never
fail (before the lock, a key evicted between the membership test and the read raised KeyError, which surfaced as an
InternalFitError of robgd on chunked data in the slow neighbour audit)."""

from __future__ import annotations

import random
import sys
import threading
from collections.abc import Iterator

import pytest

from dpstats.methods.common.row_passes import KeyCache


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    """Switch threads every microsecond, so an unguarded check-then-read interleaves within the test."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def test_concurrent_gets_with_evictions_return_the_right_value_and_never_raise(fast_thread_switching: None) -> None:
    cache = KeyCache(size=2)
    errors: list[str] = []

    def hammer(seed: int) -> None:
        draw = random.Random(seed)
        for _ in range(20_000):
            key = draw.randrange(6)
            try:
                if cache.get(key, lambda k=key: k * 10) != key * 10:
                    errors.append("wrong value")
            except Exception as exc:  # noqa: BLE001 - any escape is the failure being tested
                errors.append(type(exc).__name__)

    threads = [threading.Thread(target=hammer, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_the_cache_keeps_at_most_its_size_and_pickles_empty() -> None:
    import pickle  # noqa: PLC0415

    cache = KeyCache(size=3)
    for key in range(10):
        assert cache.get(key, lambda k=key: -k) == -key
    assert len(cache._items) == 3  # noqa: SLF001 - the bound is the point
    clone = pickle.loads(pickle.dumps(cache))
    assert clone.size == 3 and clone._items == {}  # noqa: SLF001
    assert clone.get(1, lambda: 7) == 7
