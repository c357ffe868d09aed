"""Fuzz nanotile as a user's bad input would: mutated bytecode, mutated text, random flags.

    .venv/bin/python bench/fuzz.py [--bytecode 1000000] [--text 200000] [--flags 2000]
                                   [--jobs 2] [--seed 1] [--sample 0.002] [--save DIR]

Seeds are the corpus files of ../shared/corpus (cuTile kernels and cuda-tile's tests) and
examples/ (all a fresh clone has). Each family makes inputs from them:

- bytecode: bit flips, byte overwrites, insertions, deletions, truncation at a random
  offset and, for each seed file once, at every offset; a section's length field or a
  varint replaced; two sections swapped or one duplicated;
- text: a token deleted, duplicated or swapped with another; a number made huge or odd
  (1e400, 2^70, -0x8000000000000001, nan); deep nesting; unicode (combining marks,
  right-to-left, NUL, emoji, a BOM); truncation;
- flags: a valid kernel compiled with a random choice of the driver's flags (and some
  nonsense ones), in process (a hang there is 120 s of CPU: it is a whole compile).

Every input must end in one of: accepted, or refused with a located CompileError (a byte
offset for bytecode, a line for text). Whatever is accepted is verified, printed, read
back and printed again (the two prints must be equal), and a sample (``--sample``) is
also compiled to PTX and run in the interpreter on random inputs. Anything else is
counted: an unlocated error, a round-trip difference, another exception (a traceback),
an input taking more than 10 s of CPU (a hang). ``--save DIR`` keeps each such input.
The table at the end has the counts per family, the worst CPU time per input and the
peak memory of the worker processes. Exit status 1 if anything but accepted/refused
was seen.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import multiprocessing
import os
import random
import re
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NANOTILE_RAISE_INTERNAL_ERRORS", "1")  # a bug must show as itself

CORPUS = ROOT.parent / "shared" / "corpus"
EXAMPLES = ROOT / "examples"
CPU_LIMIT_S = 10.0  # an input that reads, prints and re-reads longer than this hangs
FLAGS_CPU_LIMIT_S = 120.0  # a whole compile (--check-semantics interprets every stage)
OUTCOMES = ("accepted", "refused", "unlocated", "round-trip", "traceback", "hang")


class Hang(Exception):
    """Raised by the CPU-time alarm inside an input that ran too long."""


# ---------------------------------------------------------------- seeds


def seed_files() -> tuple[list[bytes], list[str]]:
    """Bytecode and text seeds: the corpus where it is, examples/ always."""
    bytecode = [p.read_bytes() for p in sorted(CORPUS.glob("cutile/*.tileirbc"))]
    bytecode += [p.read_bytes() for p in sorted(CORPUS.glob("cutile-tests/*.tileirbc"))]
    bytecode += [p.read_bytes() for p in sorted(EXAMPLES.glob("*.tileirbc"))]
    texts = [p.read_text() for p in sorted(CORPUS.glob("cutile/*.mlir"))]
    texts += [_without_split_markers(p.read_text())
              for p in sorted(CORPUS.glob("cuda-tile-tests/test/**/*.mlir"))
              if "invalid" not in p.name]
    texts += [p.read_text() for p in sorted(EXAMPLES.glob("*.mlir"))]
    return bytecode, texts


def _without_split_markers(text: str) -> str:
    """The first chunk of a ``// -----`` file (the others are separate programs)."""
    return text.split("// -----", 1)[0]


# ---------------------------------------------------------------- bytecode mutations

_HEADER = 12  # magic (8), version major, minor, tag (2)


def sections(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each section, header included, as far as the framing parses."""
    spans, i = [], _HEADER
    while i < len(data):
        start = i
        ident = data[i]
        i += 1
        if ident == 0:
            spans.append((start, i))
            break
        length, i = _varint(data, i)
        if ident & 0x80:
            alignment, i = _varint(data, i)
            while i < len(data) and data[i] == 0xCB:
                i += 1
        i += length
        if length is None or i > len(data):
            break
        spans.append((start, i))
    return spans


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while i < len(data):
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i
    return 0, i


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def mutate_bytecode(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """One mutation of ``data``: (its kind, the new bytes)."""
    kind = rng.choice(("flip", "flip", "flip", "set", "set", "insert", "delete",
                       "truncate", "length", "varint", "swap", "duplicate"))
    buf = bytearray(data)
    i = rng.randrange(len(buf)) if buf else 0
    if kind == "flip" and buf:
        buf[i] ^= 1 << rng.randrange(8)
    elif kind == "set" and buf:
        buf[i] = rng.randrange(256)
    elif kind == "insert":
        buf[i:i] = rng.randbytes(rng.randint(1, 8))
    elif kind == "delete":
        del buf[i:i + rng.randint(1, 16)]
    elif kind == "truncate":
        del buf[i:]
    elif kind == "varint":
        buf[i:i + 1] = b"\xff" * rng.randint(1, 9) + b"\x01"
    else:
        return kind, _mutate_sections(rng, kind, data)
    return kind, bytes(buf)


def _mutate_sections(rng: random.Random, kind: str, data: bytes) -> bytes:
    spans = [s for s in sections(data) if s[1] - s[0] > 1]
    if not spans:
        return data
    start, end = rng.choice(spans)
    if kind == "length":  # a section's length field, a little or a lot off
        _, length_start = start, start + 1
        old, after = _varint(data, length_start)
        new = rng.choice((0, 1, old - 1, old + 1, old * 2, 2**31, 2**63))
        return data[:length_start] + _encode_varint(max(new, 0)) + data[after:]
    if kind == "duplicate":
        return data[:end] + data[start:end] + data[end:]
    other_start, other_end = rng.choice(spans)
    if (other_start, other_end) == (start, end):
        return data
    first, second = sorted(((start, end), (other_start, other_end)))
    return (data[:first[0]] + data[second[0]:second[1]] + data[first[1]:second[0]]
            + data[first[0]:first[1]] + data[second[1]:])


# ---------------------------------------------------------------- text mutations

_TOKEN = re.compile(r'\s+|"(?:[^"\\]|\\.)*"|[%@#!^]?[\w.$]+|.', re.S)
_NUMBER = re.compile(r"-?\d[\w.+-]*$")
_ODD_NUMBERS = ("1e400", "-1e400", "1180591620717411303424", "-9223372036854775809",
                "0x8000000000000000000", "nan", "inf", "-0", "00000000000000000001",
                "1.5", "0x", "1e", "4294967296", "2147483648")
_UNICODE = ("\u0301", "\u202e", "\x00", "\U0001f600", "\ufeff", "\u00e9", "\u3042",
            "\ud7ff", "\u2028", "\x7f")


def mutate_text(rng: random.Random, text: str) -> tuple[str, str]:
    """One mutation of ``text``: (its kind, the new text)."""
    tokens = _TOKEN.findall(text)
    kind = rng.choice(("delete", "duplicate", "swap", "number", "number", "nest",
                       "unicode", "truncate"))
    words = [i for i, t in enumerate(tokens) if not t.isspace()]
    if not words:
        return kind, text
    i = rng.choice(words)
    if kind == "delete":
        del tokens[i]
    elif kind == "duplicate":
        tokens.insert(i, tokens[i])
    elif kind == "swap":
        j = rng.choice(words)
        tokens[i], tokens[j] = tokens[j], tokens[i]
    elif kind == "number":
        numbers = [k for k in words if _NUMBER.match(tokens[k])] or words
        tokens[rng.choice(numbers)] = rng.choice(_ODD_NUMBERS)
    elif kind == "nest":
        depth = rng.choice((10, 100, 1000, 5000))
        opener = rng.choice(("(", "[", "<", "{", "if %c {", "tile<", "array<i32: "))
        tokens.insert(i, opener * depth)
    elif kind == "unicode":
        tokens.insert(i, rng.choice(_UNICODE) * rng.choice((1, 1, 3, 1000)))
    else:
        return kind, "".join(tokens[:i])
    return kind, "".join(tokens)


# ---------------------------------------------------------------- flag mutations

_FLAGS = ("--dump-after=all", "--print-language", "--time-passes", "--emit=ptx",
          "--emit=text", "--emit=bytecode", "--gpu-name=sm_90", "--gpu-name=sm_100",
          "--gpu-name=sm_42", "--no-verify", "--check-semantics", "-p=cse,dce",
          "-p=nonsense", "-p=cse{x=1}", "--pass-pipeline=cse,eqsat", "--dump-after=cse",
          "--dump-after=nothing", "--emit=nonsense", "-o", "--list-passes",
          "--print-language=tile", "--print-language=nothing", "--", "-", "--opt-level=9",
          "--rules=/nonexistent.egg", "--layout-strategy=greedy", "--dump-egraph")


def mutate_flags(rng: random.Random) -> list[str]:
    flags = rng.sample(_FLAGS, rng.randint(1, 4))
    return [f if f != "-o" else "-o=" + rng.choice(("/nonexistent/x", "OUT")) for f in flags]


# ---------------------------------------------------------------- checking one input


@dataclass
class Tally:
    counts: Counter = field(default_factory=Counter)
    compiled: int = 0
    interpreted: int = 0
    worst_cpu: float = 0.0
    worst_kind: str = ""
    findings: list[tuple[str, str, bytes]] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.counts.update(other.counts)
        self.compiled += other.compiled
        self.interpreted += other.interpreted
        if other.worst_cpu > self.worst_cpu:
            self.worst_cpu, self.worst_kind = other.worst_cpu, other.worst_kind
        self.findings += other.findings


def _alarm(signum, frame):  # noqa: ARG001 - a signal handler's signature
    raise Hang()


def _located(error, binary: bool) -> bool:
    diagnostic = error.diagnostics[0]
    return bool(diagnostic.message) and (
        diagnostic.offset is not None if binary else
        diagnostic.line is not None or diagnostic.offset is not None)


def check_module(module, tally: Tally, sample: bool) -> str:
    """Verify, print, re-read and re-print an accepted module; compile and run a sample."""
    from nanotile.diagnostics import CompileError
    from nanotile.ir.parser import parse_modules
    from nanotile.ir.printer import print_modules
    from nanotile.verify import verify_module

    if any(d.severity == "error" for d in verify_module(module)):
        return "refused"  # read, but not a valid program: the verifier said so, located
    printed = print_modules([module])
    try:
        again = print_modules(parse_modules(printed, "printed.mlir"))
    except CompileError:
        return "round-trip"
    if again != printed:
        return "round-trip"
    if sample:
        _compile_and_run(module, tally)
    return "accepted"


def _compile_and_run(module, tally: Tally) -> None:
    import copy

    import numpy as np

    from nanotile.diagnostics import CompileError
    from nanotile.interp import InterpError, run
    from nanotile.passes.semantics import make_inputs
    from nanotile.targets.compile import compile_to_ptx

    try:
        compile_to_ptx(copy.deepcopy(module), "sm_90")  # compiling lowers it in place
        tally.compiled += 1
    except CompileError:
        pass
    for entry in module.entries():
        try:
            _, arguments = make_inputs(entry, np.random.default_rng(0))
            run(module, entry.attributes["sym_name"], 1, *arguments, out=io.StringIO(),
                max_iterations=100_000)
            tally.interpreted += 1
        except (InterpError, CompileError):
            pass


def check_bytecode(data: bytes, tally: Tally, sample: bool = False) -> str:
    from nanotile.bytecode.reader import read_bytecode
    from nanotile.diagnostics import CompileError

    try:
        module = read_bytecode(data, "fuzz.tileirbc")
    except CompileError as error:
        return "refused" if _located(error, binary=True) else "unlocated"
    return check_module(module, tally, sample)


def check_text(text: str, tally: Tally, sample: bool = False) -> str:
    from nanotile.diagnostics import CompileError
    from nanotile.ir.parser import parse_modules

    try:
        modules = parse_modules(text, "fuzz.mlir")
    except CompileError as error:
        return "refused" if _located(error, binary=False) else "unlocated"
    outcomes = [check_module(m, tally, sample) for m in modules]
    return next((o for o in outcomes if o != "accepted"), "accepted")


# `file:line:col: error:`, `file: error:` or `<command line>: error:`
_LOCATED_MESSAGE = re.compile(r"(^|\n)(\S+?(:\d+)*|<command line>): error: ")


def check_flags(path: str, flags: list[str], folder: str) -> str:
    from nanotile.driver import main

    flags = [f.replace("OUT", os.path.join(folder, "out")) for f in flags]
    stdout = io.TextIOWrapper(io.BytesIO())  # has .buffer, for binary output
    stderr = io.StringIO()
    # in the scratch folder: a flag may take a path from the next one (--dump-egraph -)
    with contextlib.chdir(folder), contextlib.redirect_stdout(stdout), \
            contextlib.redirect_stderr(stderr):
        status = main([os.path.abspath(path), *flags])
    if "internal error" in stderr.getvalue() or status not in (0, 1, 2):
        raise RuntimeError(f"status {status}: {stderr.getvalue()[-300:]}")
    if status == 1 and not _LOCATED_MESSAGE.search(stderr.getvalue()):
        return "unlocated"
    return "accepted" if status == 0 else "refused"


def _guarded(tally: Tally, kind: str, payload: bytes, check,
             limit: float = CPU_LIMIT_S) -> None:
    """Run ``check()`` under the CPU alarm and count its outcome."""
    start = time.process_time()
    signal.setitimer(signal.ITIMER_PROF, limit)
    try:
        outcome = check()
    except Hang:
        outcome = "hang"
    except RecursionError:
        outcome = "traceback"
    except Exception:  # noqa: BLE001 - anything but a located CompileError is a bug
        outcome = "traceback"
        payload += b"\n# " + traceback.format_exc().encode()[-2000:]
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    cpu = time.process_time() - start
    if cpu > tally.worst_cpu:
        tally.worst_cpu, tally.worst_kind = cpu, kind
    tally.counts[outcome] += 1
    if outcome not in ("accepted", "refused") and len(tally.findings) < 20:
        tally.findings.append((outcome, kind, payload))


# ---------------------------------------------------------------- workers


def fuzz_chunk(job: tuple[str, int, int, float]) -> tuple[str, Tally, float]:
    """Run ``count`` inputs of ``family`` from ``seed``; (family, tally, peak RSS MiB)."""
    family, seed, count, sample_rate = job
    signal.signal(signal.SIGPROF, _alarm)
    rng = random.Random(seed)
    bytecode, texts = seed_files()
    tally = Tally()
    if family == "bytecode":
        for _ in range(count):
            kind, data = mutate_bytecode(rng, rng.choice(bytecode))
            sample = rng.random() < sample_rate
            _guarded(tally, kind, data, lambda: check_bytecode(data, tally, sample))
    elif family == "truncate":  # every offset of one seed file
        data = bytecode[seed % len(bytecode)]
        for end in range(len(data)):
            _guarded(tally, "truncate-all", data[:end],
                     lambda: check_bytecode(data[:end], tally))
    elif family == "text":
        for _ in range(count):
            kind, text = mutate_text(rng, rng.choice(texts))
            sample = rng.random() < sample_rate
            _guarded(tally, kind, text.encode("utf-8", "surrogatepass"),
                     lambda: check_text(text, tally, sample))
    else:
        kernels = sorted(EXAMPLES.glob("*.tileirbc")) + sorted(CORPUS.glob("cutile/*.mlir"))
        with tempfile.TemporaryDirectory() as folder:
            for _ in range(count):
                path, flags = str(rng.choice(kernels)), mutate_flags(rng)
                _guarded(tally, " ".join(flags), f"{path} {' '.join(flags)}".encode(),
                         lambda: check_flags(path, flags, folder), FLAGS_CPU_LIMIT_S)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return family, tally, peak


def _jobs(args) -> list[tuple[str, int, int, float]]:
    jobs, chunk = [], 5000
    bytecode, _ = seed_files()
    for family, total in (("bytecode", args.bytecode), ("text", args.text),
                          ("flags", args.flags)):
        size = chunk if family != "flags" else 50
        for n in range(0, total, size):
            jobs.append((family, args.seed * 1_000_003 + len(jobs), min(size, total - n),
                         args.sample))
    jobs += [("truncate", i, 0, 0.0) for i in range(min(args.truncate_files, len(bytecode)))]
    return jobs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytecode", type=int, default=1_000_000)
    parser.add_argument("--text", type=int, default=200_000)
    parser.add_argument("--flags", type=int, default=2_000)
    parser.add_argument("--truncate-files", type=int, default=20,
                        help="seed files truncated at every offset")
    parser.add_argument("--sample", type=float, default=0.002,
                        help="share of accepted inputs also compiled and interpreted")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save", metavar="DIR", help="keep every finding here")
    args = parser.parse_args()
    start = time.perf_counter()
    totals = {f: Tally() for f in ("bytecode", "truncate", "text", "flags")}
    peaks = {f: 0.0 for f in totals}
    for job, result in _run_jobs(_jobs(args), args.jobs):
        family = job[0]
        if result is None:  # the worker died (a crash below Python): a finding
            lost = Tally()
            lost.counts["traceback"] += 1
            lost.findings.append(("crash", f"worker died in chunk {job}", b""))
            totals[family].add(lost)
            continue
        _, tally, peak = result
        totals[family].add(tally)
        peaks[family] = max(peaks[family], peak)
    print(_table(totals, peaks, time.perf_counter() - start))
    findings = [(f, t) for f in totals for t in totals[f].findings]
    if args.save:
        _save(Path(args.save), findings)
    for family, (outcome, kind, payload) in findings[:10]:
        print(f"{family} {outcome} ({kind}): {payload[-300:]!r}")
    return 1 if findings else 0


def _run_jobs(jobs: list, workers: int):
    """(job, fuzz_chunk's result) for every job, in parallel; a job whose worker process
    died gives None (found by rerunning the unfinished jobs one by one)."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("spawn")
    pending = list(jobs)
    while pending:
        alone = len(pending) == 1 or workers == 0
        with ProcessPoolExecutor(1 if alone else workers, mp_context=context) as pool:
            futures = [(job, pool.submit(fuzz_chunk, job)) for job in pending]
            unfinished = []
            for job, future in futures:
                try:
                    yield job, future.result()
                except BrokenProcessPool:
                    unfinished.append(job)
        if alone and unfinished:
            yield unfinished[0], None
            unfinished = unfinished[1:]
        if len(unfinished) and not alone:
            # isolate the job that kills its worker: one job per pool from here on
            for job in unfinished:
                yield from _run_jobs([job], 0)
            unfinished = []
        pending = unfinished


def _table(totals: dict[str, Tally], peaks: dict[str, float], seconds: float) -> str:
    header = (f"{'family':<10}{'inputs':>10}" + "".join(f"{o:>11}" for o in OUTCOMES)
              + f"{'compiled':>10}{'run':>8}{'worst CPU s':>13}{'peak MiB':>10}")
    lines = [header, "-" * len(header)]
    for family, tally in totals.items():
        inputs = sum(tally.counts.values())
        lines.append(f"{family:<10}{inputs:>10}"
                     + "".join(f"{tally.counts[o]:>11}" for o in OUTCOMES)
                     + f"{tally.compiled:>10}{tally.interpreted:>8}"
                     + f"{tally.worst_cpu:>13.2f}{peaks[family]:>10.0f}")
    lines.append(f"wall time {seconds:.0f} s")
    return "\n".join(lines)


def _save(folder: Path, findings) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i, (family, (outcome, kind, payload)) in enumerate(findings):
        (folder / f"{i:03d}-{family}-{outcome}.bin").write_bytes(payload)


if __name__ == "__main__":
    sys.exit(main())
