"""A bounded slice of bench/fuzz.py in the suite: mutated text and bytecode of the
examples (a fresh clone has them) end accepted, printed back to themselves, or refused
with a located error; random driver flags end with status 0, 1 or 2 and a located message.
Hypothesis with a fixed seed; no time is asserted (the bench measures hangs)."""

from __future__ import annotations

import importlib.util
import random
import signal
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.shared_corpus import EXAMPLES, REPO


def _load_fuzz():
    spec = importlib.util.spec_from_file_location("nanotile_bench_fuzz", REPO / "bench" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


fuzz = _load_fuzz()
TEXTS = [p.read_text() for p in sorted(EXAMPLES.glob("*.mlir"))]
BYTECODE = [p.read_bytes() for p in sorted(EXAMPLES.glob("*.tileirbc"))]
SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])


def _outcome(check) -> str:
    tally = fuzz.Tally()
    outcome = check(tally)
    assert outcome in ("accepted", "refused"), outcome
    return outcome


@settings(max_examples=400, **SETTINGS)
@given(seed=st.integers(0, 2**32), mutations=st.integers(1, 3))
def test_mutated_text(seed: int, mutations: int) -> None:
    rng = random.Random(seed)
    text = rng.choice(TEXTS)
    for _ in range(mutations):
        _, text = fuzz.mutate_text(rng, text)
    _outcome(lambda tally: fuzz.check_text(text, tally))


@settings(max_examples=400, **SETTINGS)
@given(seed=st.integers(0, 2**32))
def test_mutated_bytecode(seed: int) -> None:
    rng = random.Random(seed)
    _, data = fuzz.mutate_bytecode(rng, rng.choice(BYTECODE))
    _outcome(lambda tally: fuzz.check_bytecode(data, tally))


def test_mutation_kinds_change_their_input() -> None:
    """Each mutator does what it says (else the slice above would test nothing)."""
    rng = random.Random(0)
    data = BYTECODE[0]
    assert fuzz.sections(data)[-1][1] == len(data)  # the framing parses to the end
    changed = {kind for kind, new in (fuzz.mutate_bytecode(rng, data) for _ in range(300))
               if new != data}
    assert {"flip", "set", "insert", "delete", "truncate", "length", "swap",
            "duplicate"} <= changed
    text_kinds = {kind for kind, new in (fuzz.mutate_text(rng, TEXTS[0]) for _ in range(300))
                  if new != TEXTS[0]}
    assert {"delete", "duplicate", "swap", "number", "nest", "unicode"} <= text_kinds


@pytest.mark.parametrize("seed", range(12))
def test_random_flags(seed: int, tmp_path) -> None:
    rng = random.Random(seed)
    path = str(rng.choice(sorted(EXAMPLES.glob("*.tileirbc"))))
    flags = [f for f in fuzz.mutate_flags(rng) if f != "--check-semantics"]
    assert fuzz.check_flags(path, flags, str(tmp_path)) in ("accepted", "refused"), flags


def test_a_hang_is_caught_by_the_cpu_alarm() -> None:
    signal.signal(signal.SIGPROF, fuzz._alarm)
    tally = fuzz.Tally()

    def spin() -> str:
        while True:
            pass

    fuzz._guarded(tally, "spin", b"", spin, limit=0.2)
    assert tally.counts["hang"] == 1
