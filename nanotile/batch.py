"""``nanotile A B C ...``: compile several inputs in parallel worker processes.

Each input is compiled exactly as ``nanotile A [options]`` would (driver.compile_file)
in one of ``-j N`` worker processes (default: one per CPU), which keep what they imported
and loaded (the back end, egglog's rules) from one input to the next: a corpus compiles
without paying start-up per kernel.

Outputs: with ``-o DIR``, input ``X.tileirbc`` gives ``DIR/X`` plus the suffix of the
emitted kind (``.mlir``, ``.tileirbc``, ``.ptx``, ``.cubin``); without ``-o``, text and
PTX go to standard output, one input after the other, in the order given. What each
compilation prints (diagnostics, dumps) is shown in that order too, never interleaved.
On a terminal a progress line counts the inputs done and failed. The exit status is 1
when any input failed, after all of them were tried. Ctrl-C stops every worker at once:
the inputs done keep their outputs, the others are left as they were (nanotile.tool).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import os
import sys
from pathlib import Path
from typing import Any

SUFFIXES = {"text": ".mlir", "bytecode": ".tileirbc", "ptx": ".ptx", "cubin": ".cubin"}


class _Usage(Exception):
    pass


def compile_many(opts: Any, pipeline_args: Any) -> int:
    """Compile every input of ``opts`` (driver.Options); 0 if all succeeded, 1 if any
    failed, 2 for a command line that cannot work with several inputs."""
    try:
        jobs = [_job(opts, path) for path in opts.inputs]
        _check_outputs(opts, jobs)
    except _Usage as e:
        sys.stderr.write(f"nanotile: error: {e}\n")
        return 2
    workers = min(opts.jobs or _cpus(), len(jobs))
    progress = _Progress(len(jobs), sys.stderr)
    failed = 0
    for status, out, err in _results(jobs, pipeline_args, workers):
        progress.clear()
        if out:
            sys.stdout.buffer.write(out)
            sys.stdout.flush()
        sys.stderr.write(err)
        failed += status != 0
        progress.step(failed)
    progress.done()
    return 1 if failed else 0


def _job(opts: Any, path: str) -> Any:
    """The options of one input: ``opts`` with that input and its own output."""
    if path == "-":
        raise _Usage("standard input ('-') cannot be one of several inputs")
    output = opts.output
    if output != "-":
        output = os.path.join(output, Path(path).stem + SUFFIXES[opts.emit])
    return dataclasses.replace(opts, input=path, inputs=[path], output=output)


def _check_outputs(opts: Any, jobs: list[Any]) -> None:
    if opts.output == "-":
        if opts.emit in ("bytecode", "cubin"):
            raise _Usage(f"several inputs with --emit={opts.emit} need -o DIR (one file "
                         "each)")
        return
    if os.path.exists(opts.output) and not os.path.isdir(opts.output):
        raise _Usage(f"with several inputs, -o names a directory; '{opts.output}' is a file")
    seen: dict[str, str] = {}
    for job in jobs:
        if job.output in seen:
            raise _Usage(f"'{seen[job.output]}' and '{job.input}' would both be written to "
                         f"'{job.output}'")
        seen[job.output] = job.input
    os.makedirs(opts.output, exist_ok=True)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _results(jobs: list[Any], pipeline_args: Any, workers: int):
    """(status, stdout bytes, stderr text) of each job, in the order of ``jobs``."""
    if workers <= 1:
        for job in jobs:
            yield compile_captured(job, pipeline_args)
        return
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_context(),
                               initializer=_start_worker)
    try:
        futures = [pool.submit(_compile_in_worker, job, pipeline_args) for job in jobs]
        for future in futures:
            yield future.result()
    except BaseException:  # Ctrl-C (or the caller stopped early): stop every worker now
        _stop_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()


# Ctrl-C in a worker: a job being compiled stops with KeyboardInterrupt, so that what it
# was writing is cleaned up (nanotile.output), and the worker exits; an idle worker exits
# at once. Either way without a traceback and without starting a next job.
_in_job = False


def _start_worker() -> None:
    import signal

    signal.signal(signal.SIGINT, _on_interrupt)


def _on_interrupt(signum: int, frame: Any) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # one is enough: let the job clean up
    if _in_job:
        raise KeyboardInterrupt
    os._exit(130)


def _compile_in_worker(job: Any, pipeline_args: Any) -> tuple[int, bytes, str]:
    global _in_job
    _in_job = True
    try:
        return compile_captured(job, pipeline_args)
    except KeyboardInterrupt:
        os._exit(130)  # the job has cleaned up; do not take the next one
    finally:
        _in_job = False


def _stop_workers(pool: Any, seconds: float = 5.0) -> None:
    """Pass Ctrl-C on to the workers (a terminal sends it to all of them already; a
    ``kill -INT`` reaches only this process), again while any is alive, since a worker
    the pool was still starting misses the first; one still alive after ``seconds`` (its
    handler not installed yet, or blocked where a signal cannot reach it) is killed, so
    that shutting the pool down never waits for it. ProcessPoolExecutor has no public
    way to reach its processes before Python 3.14 (terminate_workers)."""
    import signal
    import time

    deadline = time.monotonic() + seconds
    while True:
        alive = [p for p in list((getattr(pool, "_processes", None) or {}).values())
                 if p.is_alive()]
        if not alive:
            return
        for process in alive:
            try:
                os.kill(process.pid, signal.SIGKILL if time.monotonic() > deadline
                        else signal.SIGINT)
            except OSError:
                pass  # it has ended already
        if time.monotonic() > deadline:
            return
        time.sleep(0.1)


def _context() -> Any:
    """How to start workers: fork (cheap, nothing to import again) from a process with
    one thread; forking one with several threads (a test runner) may deadlock, so then
    a fork server."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and _threads() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _threads() -> int:
    """Threads of this process, those of libraries included (Linux's /proc)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def compile_captured(job: Any, pipeline_args: Any) -> tuple[int, bytes, str]:
    """driver.compile_file for one input, with what it prints captured."""
    from .driver import compile_file

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        # a copy: compile_file fills in the target on the flags it is given
        status = compile_file(job, copy.copy(pipeline_args))
    return status, out.buffer.getvalue(), err.getvalue()


class _Progress:
    """``[=====>      ]  12/100  1 failed`` on one terminal line, redrawn as inputs
    finish (nothing when the stream is not a terminal)."""

    def __init__(self, total: int, stream: Any) -> None:
        self.total = total
        self.done_count = 0
        self.stream = stream
        self.shown = stream.isatty()

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")

    def step(self, failed: int) -> None:
        self.done_count += 1
        if self.shown:
            filled = 30 * self.done_count // self.total
            bar = "=" * filled + (">" if filled < 30 else "") + " " * (29 - filled)
            width = len(str(self.total))
            self.stream.write(f"[{bar}] {self.done_count:>{width}}/{self.total}"
                              + (f"  {failed} failed" if failed else ""))
            self.stream.flush()

    def done(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
