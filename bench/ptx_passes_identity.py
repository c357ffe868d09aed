"""Check that a change to the ptx-* passes keeps their results identical, and time them.

The passes' outputs are pinned on real inputs: the PTX select-instructions writes for the
corpus/cutile kernels and a sample of cutile-tests, both targets. ``save`` lowers the
kernels once and stores that PTX in DIR (so later checks do not depend on the lowering,
which changes on its own schedule); ``record`` runs, on each stored input, every ptx pass
alone, the default PTX pipeline step by step and the pipeline with loop hoisting free of
its register budget, and writes a digest of every result to DIR/digests.json (and the
pass times); ``check`` does the same and names every result that differs from the
recorded digests.

    .venv/bin/python bench/ptx_passes_identity.py save DIR [--sample N] [KERNEL.tileirbc ...]
    .venv/bin/python bench/ptx_passes_identity.py record DIR
    .venv/bin/python bench/ptx_passes_identity.py check DIR
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = (ROOT / ".." / "shared" / "corpus").resolve()
TARGETS = ["sm_90", "sm_100"]


def kernel_files(sample: int | None, explicit: list[str]) -> list[Path]:
    if explicit:
        return [Path(p) for p in explicit]
    files = sorted((CORPUS / "cutile").glob("*.tileirbc"))
    tests = sorted((CORPUS / "cutile-tests").glob("*.tileirbc"))
    if sample:
        tests = tests[::max(1, len(tests) // sample)][:sample]
    return files + tests


def lowered(path: Path, target: str) -> str | None:
    """The PTX select-instructions writes for the kernel (None if it does not compile)."""
    import nanotile.targets  # noqa: F401
    from nanotile.diagnostics import CompileError
    from nanotile.loader import load_file
    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    try:
        module = load_file(str(path))
        PipelineRun(RunOptions(verify=False, stop_after="select-instructions"), io.StringIO()).run(
            module, parse_pipeline(default_pipeline(target)))
    except (CompileError, RecursionError):
        return None
    return module.ptx.render() if module.ptx is not None else None


def save(directory: Path, files: list[Path]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for n, path in enumerate(files, 1):
        for target in TARGETS:
            out = directory / f"{path.stem}.{target}.ptx"
            if out.exists():
                continue
            text = lowered(path, target)
            if text is not None:
                out.write_text(text)
        progress(n, len(files))


def progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        print(f"\r{done}/{total}", end="" if done < total else "\n", file=sys.stderr,
              flush=True)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def results(text: str, times: dict[str, float]) -> dict[str, str]:
    """Digest of every result: each pass alone, the pipeline after each step, and the
    pipeline with unbounded hoisting."""
    import nanotile.targets  # noqa: F401
    from nanotile.passes.base import PassContext
    from nanotile.passes.registry import PASSES, parse_pipeline
    from nanotile.targets.ptx.ir import load_ptx_module
    from nanotile.targets.ptx.passes import PIPELINE, STEPS

    out = {}
    for name in sorted(n for n in PASSES if n.startswith("ptx-")):
        module = load_ptx_module(text)
        (step,) = parse_pipeline(name)
        step.apply(module, PassContext())
        out[f"alone {name}"] = digest(module.ptx.render())
    unbounded = ",".join("ptx-hoist-loop-invariants{max-pressure=100000}"
                         if s == "ptx-hoist-loop-invariants" else s for s in STEPS)
    for label, pipeline in (("pipeline", PIPELINE), ("unbounded", unbounded)):
        module = load_ptx_module(text)
        for k, step in enumerate(parse_pipeline(pipeline)):
            t0 = time.perf_counter()
            step.apply(module, PassContext())
            if label == "pipeline":
                times[step.name] += time.perf_counter() - t0
            out[f"{label} {k} {step.name}"] = digest(module.ptx.render())
    return out


def record(directory: Path, check: bool) -> int:
    path = directory / "digests.json"
    want = json.loads(path.read_text()) if check else {}
    got: dict[str, dict[str, str]] = {}
    times: dict[str, float] = defaultdict(float)
    inputs = sorted(directory.glob("*.ptx"))
    bad = 0
    t0 = time.perf_counter()
    for n, ptx in enumerate(inputs, 1):
        got[ptx.name] = results(ptx.read_text(), times)
        if check:
            for key, value in got[ptx.name].items():
                if want.get(ptx.name, {}).get(key) != value:
                    print(f"DIFFERS: {ptx.name}: {key}")
                    bad += 1
        progress(n, len(inputs))
    total = sum(times.values())
    print(f"{len(inputs)} inputs, {time.perf_counter() - t0:.1f} s in all; the PTX pipeline "
          f"{total:.2f} s:")
    for name, seconds in sorted(times.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<32} {seconds:8.2f} s  {100 * seconds / total:5.1f}%")
    if not check:
        path.write_text(json.dumps(got, indent=0, sort_keys=True))
    else:
        print("identical" if not bad else f"{bad} results differ")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["save", "record", "check"])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--sample", type=int, default=None,
                        help="cutile-tests kernels to take (evenly spaced; default all)")
    parser.add_argument("kernels", nargs="*", help="bytecode files (default: the corpus)")
    args = parser.parse_args()
    if args.command == "save":
        save(args.directory, kernel_files(args.sample, args.kernels))
        return 0
    return record(args.directory, args.command == "check")


if __name__ == "__main__":
    sys.exit(main())
