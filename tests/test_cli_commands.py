"""What every command does alike (nanotile, nanotile run, nanotile-opt, nanotile-translate,
python -m nanotile.passes): output files, help, --version, Ctrl-C, errors on the command
line. The kernel is written here: no corpus needed."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.shared_corpus import TIMES_EIGHT as KERNEL

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def kernel(tmp_path) -> Path:
    path = tmp_path / "k.mlir"
    path.write_text(KERNEL)
    np.savez(tmp_path / "in.npz", p=np.zeros(1, np.int32), x=np.array(5, np.int32))
    return path


def _main(command: str):
    if command == "nanotile":
        from nanotile.cli import main
    elif command == "nanotile-opt":
        from nanotile.opt import main
    elif command == "nanotile-translate":
        from nanotile.translate import main
    else:
        from nanotile.cli_options import main
    return main


def _write_argv(command: str, source: Path, out: Path) -> tuple[str, list[str]]:
    """The command line of ``command`` that writes ``source``'s output to ``out``."""
    if command == "nanotile run":
        return "nanotile", ["run", str(source), "--grid", "1", "--inputs",
                            str(source.parent / "in.npz"), "--outputs", str(out)]
    if command == "nanotile-translate":
        return command, ["-mlir-to-cudatilebc", str(source), "-o", str(out)]
    return command, [str(source), "-o", str(out)]


WRITERS = ["nanotile", "nanotile run", "nanotile-opt", "nanotile-translate",
           "python -m nanotile.passes"]


@pytest.fixture
def umask():
    """Set the umask for one test (and put the old one back)."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


# -- output files ---------------------------------------------------------------------


@pytest.mark.parametrize("command", WRITERS)
def test_outputs_are_created_with_the_umask(command, kernel, tmp_path, umask, capsys):
    for mask, mode in ((0o022, 0o644), (0o077, 0o600), (0o002, 0o664)):
        out = tmp_path / f"out-{mask:o}"
        umask(mask)
        program, argv = _write_argv(command, kernel, out)
        assert _main(program)(argv) == 0, capsys.readouterr().err
        assert stat.S_IMODE(out.stat().st_mode) == mode, (command, oct(mask))


@pytest.mark.parametrize("command", WRITERS)
def test_a_replaced_output_keeps_its_mode(command, kernel, tmp_path, capsys):
    out = tmp_path / "out"
    out.write_text("old")
    out.chmod(0o640)
    program, argv = _write_argv(command, kernel, out)
    assert _main(program)(argv) == 0, capsys.readouterr().err
    assert out.read_bytes() != b"old" and stat.S_IMODE(out.stat().st_mode) == 0o640


@pytest.mark.parametrize("command", WRITERS)
def test_output_into_a_missing_folder_is_one_located_line(command, kernel, tmp_path, capsys):
    out = tmp_path / "missing" / "out"
    program, argv = _write_argv(command, kernel, out)
    assert _main(program)(argv) == 1
    err = capsys.readouterr().err
    assert err == (f"{out}: error: cannot write output: folder '{out.parent}' does not "
                   "exist\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npz", "k.mlir"]


@pytest.mark.parametrize("command", WRITERS)
def test_output_under_a_file_is_one_located_line(command, kernel, tmp_path, capsys):
    out = tmp_path / "k.mlir" / "out"
    program, argv = _write_argv(command, kernel, out)
    assert _main(program)(argv) == 1
    assert capsys.readouterr().err == (f"{out}: error: cannot write output: "
                                       f"'{kernel}' is not a folder\n")


@pytest.mark.parametrize("command", WRITERS)
def test_a_failed_write_leaves_no_file(command, kernel, tmp_path, monkeypatch, capsys):
    """An error in the middle of writing (here: the disk is full) leaves the old output
    and no temporary file."""
    out = tmp_path / "out"
    out.write_text("previous\n")

    class Full:
        """A file whose every write fails (but the first few bytes')."""

        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.f.__exit__(*exc)

        def __getattr__(self, name):
            return getattr(self.f, name)

        def write(self, data):
            self.f.write(data[:3])
            raise OSError(28, "No space left on device")

    real_fdopen, real_open = os.fdopen, open
    monkeypatch.setattr(os, "fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    monkeypatch.setattr("builtins.open", lambda path, mode="r", *a, **k: (
        Full(real_open(path, mode, *a, **k)) if "w" in mode else real_open(path, mode, *a, **k)))
    program, argv = _write_argv(command, kernel, out)
    assert _main(program)(argv) == 1
    assert capsys.readouterr().err == (f"{out}: error: cannot write output: No space left "
                                       "on device\n")
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npz", "k.mlir", "out"]


# -- help and --version -----------------------------------------------------------------


def _run(*argv: str, stdin: str | None = None, **kwargs) -> subprocess.CompletedProcess:
    """``python ARGV`` with the repository on the path, as a user runs the programs."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, input=stdin,
                          capture_output=True, text=True, check=False, timeout=300, **kwargs)


PROGRAMS = {  # command -> how to start it from Python
    "nanotile": ["-m", "nanotile"],
    "nanotile run": ["-m", "nanotile", "run"],
    "nanotile-opt": ["-c", "import sys; from nanotile.opt import main; sys.exit(main())"],
    "nanotile-translate": ["-c", "import sys; from nanotile.translate import main; "
                                 "sys.exit(main())"],
    "python -m nanotile.passes": ["-m", "nanotile.passes"],
}


@pytest.mark.parametrize("command", PROGRAMS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_goes_to_standard_output(command, flag):
    """`nanotile --help | less` shows the help: it is on stdout, and the status is 0."""
    result = _run(*PROGRAMS[command], flag)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith(f"usage: {command} ")


@pytest.mark.parametrize("command", PROGRAMS)
def test_version(command):
    from nanotile import __version__

    result = _run(*PROGRAMS[command], "--version")
    assert (result.returncode, result.stderr) == (0, "")
    name = command if command == "nanotile" else f"{command} (nanotile)"
    assert result.stdout == f"{name} {__version__}\n"


def test_the_package_version_is_the_one_printed():
    import tomllib

    from nanotile import __version__

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == \
        {"attr": "nanotile.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_nanotile_help_lists_the_commands_and_every_flag(capsys):
    import argparse

    from nanotile import cli_options
    from nanotile.cli import main

    assert main(["--help"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert re.search(r"^  nanotile run FILE +run a kernel", out, re.MULTILINE)
    for program in ("nanotile-opt", "nanotile-translate", "python -m nanotile.passes"):
        assert program in " ".join(out.split())
    groups = re.findall(r"^(\S[^\n]*):$", out, re.MULTILINE)
    assert groups == ["commands", "input and output", "pass pipeline",
                      "dumps and timing (on standard error)",
                      "equality saturation (the eqsat pass)",
                      "information (print on standard output and exit)", "general"]
    parser = argparse.ArgumentParser(add_help=False)
    cli_options.add_arguments(parser)
    flags = {s for action in parser._actions for s in action.option_strings}
    flags |= {"-o", "--output", "--emit", "-j", "--jobs", "--generic", "--debuginfo",
              "--no-verify", "--bytecode-version", "--gpu-name", "-h", "--help",
              "--version"}
    assert {"--list-passes", "--print-pipeline", "--print-language", "--rule-stats",
            "--load-pass-plugin"} <= flags
    for flag in flags:
        assert re.search(rf"(^|[ ,]){re.escape(flag)}\b", out, re.MULTILINE), flag


def test_the_flags_in_nanotile_help_are_accepted(kernel, tmp_path, capsys):
    """Every flag of the driver's own group does what the help says it takes."""
    from nanotile.cli import main

    argv = [str(kernel), "-o", str(tmp_path / "a.mlir"), "--output", str(tmp_path / "b.mlir"),
            "--emit", "text", "-j", "1", "--jobs", "1", "--generic", "--debuginfo",
            "--bytecode-version", "13.3", "--gpu-name", "sm_90", "--target", "sm_90",
            "--no-verify"]
    assert main(argv) == 0, capsys.readouterr().err


def test_nanotile_translate_help_lists_what_it_accepts():
    from nanotile import translate

    for flag in [*translate._MODES, *translate._IGNORED, "-o", "-bytecode-version",
                 "-list-versions", "-split-input-file", "-verify-diagnostics",
                 "-mlir-print-debuginfo", "-allow-unregistered-dialect", "-help",
                 "-version"]:
        assert re.search(rf"^  {flag}\b", translate.HELP, re.MULTILINE), flag
    for line in translate.HELP.splitlines():
        if line.startswith("  -"):
            flag = line.split()[0].split("=")[0]
            value = ["x"] if flag == "-o" else ["13.3"] if flag == "-bytecode-version" else []
            translate.parse_args([flag, *value])  # no UsageError


def test_a_bad_flag_is_one_line(capsys):
    from nanotile.cli import main
    from nanotile.opt import main as opt_main
    from nanotile.translate import main as translate_main

    assert main(["--bogus"]) == 2
    assert capsys.readouterr().err == ("nanotile: error: unknown option '--bogus' (nanotile "
                                       "--help lists the options)\n")
    assert opt_main(["--bogus"]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
    assert translate_main(["--bogus"]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


# -- --list-passes ----------------------------------------------------------------------


def test_list_passes_shows_whole_descriptions(capsys):
    from nanotile.cli import main
    from nanotile.passes.registry import PASSES

    assert main(["--list-passes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(PASSES)
    columns = set()
    for line, (name, cls) in zip(lines, sorted(PASSES.items())):
        first_paragraph = " ".join(cls.__doc__.strip().split("\n\n")[0].split())
        assert line.startswith(f"  {name} ") and line.endswith(f"  {first_paragraph}"), name
        columns.add(len(line) - len(first_paragraph))
    assert len(columns) == 1  # the descriptions start in one column
    branches = next(line for line in lines if "ptx-simplify-branches" in line)
    assert branches.endswith("drop jumps to the next label, unreachable code and unused "
                             "labels.")


# -- nanotile run -----------------------------------------------------------------------


def test_nanotile_run_targets_what_the_compiler_targets():
    import inspect

    import nanotile
    from nanotile.emulated_run import run_emulated
    from nanotile.passes.pipelines import DEFAULT_TARGET
    from nanotile.run_cli import _parser

    assert DEFAULT_TARGET == "sm_100"
    help_text = _parser().format_help()
    assert re.search(r"--gpu-name.*\n.*\(default\s+sm_100, as for\s+nanotile\)", help_text)
    assert inspect.signature(nanotile.run).parameters["gpu_name"].default is None
    assert inspect.signature(run_emulated).parameters["gpu_name"].default is None


def test_nanotile_run_defaults_to_the_compilers_gpu(kernel, tmp_path, monkeypatch, capsys):
    import nanotile.targets.compile as compile_module
    from nanotile.cli import main

    seen = []
    real = compile_module.compile_to_ptx
    monkeypatch.setattr(compile_module, "compile_to_ptx",
                        lambda module, gpu: seen.append(gpu) or real(module, gpu))
    assert main(["run", str(kernel), "--grid", "1", "--inputs", str(tmp_path / "in.npz"),
                 "--emulate"]) == 0, capsys.readouterr().err
    assert seen == ["sm_100"]


def test_nanotile_run_help_documents_abi_and_npz(capsys):
    from nanotile.cli import main

    assert main(["run", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert re.search(r"--abi \{auto,raw,cutile\} how the arrays of --inputs become", out)
    assert "the .npz convention:" in out
    for words in ("in the order they were saved", "a 0-d array is a scalar",
                  "its shape, its strides", "every array of rank >= 1",
                  "written whole or not at all", "np.savez('in.npz'"):
        assert words in out, words


def test_nanotile_run_prints_a_summary(kernel, tmp_path, capsys):
    from nanotile.cli import main

    out = tmp_path / "out.npz"
    argv = ["run", str(kernel), "--grid", "2,3", "--inputs", str(tmp_path / "in.npz")]
    assert main([*argv, "--outputs", str(out)]) == 0
    stdout, err = capsys.readouterr()
    assert stdout == ""
    assert re.fullmatch(rf"nanotile run: @k, grid 2x3 \(6 blocks\), the interpreter, "
                        rf"\d+\.\d\d\d s; wrote {re.escape(str(out))} \(p\)\n", err)
    assert np.load(out)["p"].tolist() == [40]
    assert main([*argv, "--emulate"]) == 0
    assert re.fullmatch(r"nanotile run: @k, grid 2x3 \(6 blocks\), the PTX emulator "
                        r"\(sm_100\), \d+\.\d\d\d s; no --outputs: nothing written\n",
                        capsys.readouterr().err)
    assert main([*argv, "-q"]) == 0
    assert capsys.readouterr().err == ""


# -- Ctrl-C -----------------------------------------------------------------------------


@pytest.mark.parametrize("command", WRITERS)
def test_ctrl_c_is_one_line_and_status_130(command, kernel, tmp_path, monkeypatch, capsys):
    import nanotile.loader

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(nanotile.loader, "read_input", interrupted)
    monkeypatch.setattr(nanotile.loader, "load_file", interrupted)
    program, argv = _write_argv(command, kernel, tmp_path / "out")
    try:
        status = _main(program)(argv)
    except KeyboardInterrupt:
        pytest.fail("KeyboardInterrupt escaped main()")
    assert status == 130
    assert capsys.readouterr().err == f"{command}: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npz", "k.mlir"]


def _default_ctrl_c() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt(argv: list[str], tmp_path: Path, group: bool) -> subprocess.CompletedProcess:
    """Start ``nanotile ARGV``, wait until it is blocked reading its inputs (FIFOs nobody
    writes), then send SIGINT to its process group (a terminal's Ctrl-C) or to it alone
    (``kill -INT``)."""
    import signal

    code = ("import sys; from nanotile.cli import main; sys.stderr.write('ready\\n'); "
            "sys.stderr.flush(); sys.exit(main(sys.argv[1:]))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # Python installs its Ctrl-C handler only where SIGINT is not ignored, and a test
    # run started in the background by a shell without job control inherits it ignored
    process = subprocess.Popen([sys.executable, "-c", code, *argv], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=_default_ctrl_c)
    assert process.stderr.readline() == "ready\n"
    writers = _wait_for_a_reader([tmp_path / a for a in argv if a.endswith(".mlir")])
    try:
        if group:
            os.killpg(process.pid, signal.SIGINT)
        else:
            os.kill(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        for fd in writers:
            os.close(fd)
    with pytest.raises(ProcessLookupError):  # no worker left in its process group
        os.killpg(process.pid, 0)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _wait_for_a_reader(fifos: list[Path], seconds: float = 60) -> list[int]:
    """Wait (however loaded the machine) until a process has opened one of ``fifos`` to
    read it: opening a FIFO to write without blocking succeeds only then. The write ends
    stay open (the caller closes them), so the reader waits for data, not end of file."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        writers = []
        for fifo in fifos:
            if not fifo.exists():
                continue
            try:
                writers.append(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # ENXIO: no reader yet
                pass
        if writers:
            return writers
        time.sleep(0.05)
    raise AssertionError(f"nobody opened {[f.name for f in fifos]} within {seconds} s")


@pytest.mark.parametrize("group", [True, False], ids=["terminal", "kill"])
@pytest.mark.parametrize("inputs", [1, 3])
def test_ctrl_c_of_a_running_compile(tmp_path, group, inputs):
    """Interrupted while reading its input(s) (with several: in worker processes): one
    line, status 130, no output and no worker left behind."""
    fifos = []
    for n in range(inputs):
        os.mkfifo(tmp_path / f"k{n}.mlir")
        fifos.append(f"k{n}.mlir")
    out = "out" if inputs > 1 else "out.mlir"
    result = _interrupt([*fifos, "-j", "2", "-o", out], tmp_path, group)
    assert (result.returncode, result.stderr, result.stdout) == \
        (130, "nanotile: interrupted\n", "")
    left = [p.name for p in (tmp_path / "out").iterdir()] if inputs > 1 else []
    assert left == [] and not (tmp_path / "out.mlir").exists()
    assert not any(p.name.startswith(".nanotile-") for p in tmp_path.rglob("*"))


# -- binary output and terminals --------------------------------------------------------


def _on_terminal(argv: list[str], cwd: Path) -> tuple[int, bytes, str]:
    """Run ``python ARGV`` with its standard output on a pseudo-terminal: (status, what
    reached the terminal, standard error)."""
    import pty

    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        process = subprocess.Popen([sys.executable, *argv], cwd=cwd, env=env, stdout=slave,
                                   stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        os.close(slave)
        shown = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the program has ended and closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        err = process.stderr.read().decode()
        return process.wait(timeout=120), shown, err
    finally:
        os.close(master)


@pytest.mark.parametrize("argv, flag", [
    (["-m", "nanotile", "k.mlir", "--emit=bytecode"], "--emit=bytecode"),
    (["-m", "nanotile", "k.mlir", "--emit", "cubin"], "--emit=cubin"),
    (["-c", "import sys; from nanotile.translate import main; sys.exit(main())",
      "-mlir-to-cudatilebc", "k.mlir"], "-mlir-to-cudatilebc"),
])
def test_binary_output_is_not_written_to_a_terminal(argv, flag, kernel):
    status, shown, err = _on_terminal(argv, kernel.parent)
    assert (status, shown) == (1, b"")
    assert err == (f"<command line>: error: {flag} writes binary data, which a terminal "
                   "cannot show: give -o FILE (or redirect standard output)\n")


def test_binary_output_goes_to_a_file_or_a_pipe_from_a_terminal(kernel, tmp_path):
    status, shown, err = _on_terminal(["-m", "nanotile", "k.mlir", "--emit=bytecode", "-o",
                                       "k.tileirbc"], kernel.parent)
    assert (status, shown, err) == (0, b"", "")
    assert (tmp_path / "k.tileirbc").read_bytes().startswith(b"\x7fTileIR")
    piped = subprocess.run([sys.executable, "-m", "nanotile", "k.mlir", "--emit=bytecode"],
                           cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                           capture_output=True, check=False, timeout=120)
    assert piped.returncode == 0 and piped.stdout == (tmp_path / "k.tileirbc").read_bytes()


# -- errors on the command line ---------------------------------------------------------

# the languages a module can be in: the input's and those some pass writes
KNOWN = ("(known: tile, tile-canon, tile-opt, tile-ptr, tile-ordered, tile-layout, simt, "
         "ptx-sm90, ptx-sm100)")


@pytest.mark.parametrize("command", ["nanotile", "python -m nanotile.passes"])
@pytest.mark.parametrize("argv, message", [
    (["--print-language", "foo"], f"--print-language: unknown language 'foo' {KNOWN}"),
    (["--diff-languages", "tile", "foo"], f"--diff-languages: unknown language 'foo' {KNOWN}"),
    (["K", "-p", "cse", "--dump-dir=FILE"], "--dump-dir=FILE: 'FILE' is a file, not a folder"),
    (["K", "-p", "eqsat", "--dump-egraph=FILE"],
     "--dump-egraph=FILE: 'FILE' is a file, not a folder"),
    (["K", "-p", "cse", "--dump-dir=FILE/d"], "--dump-dir: cannot write 'FILE/d': Not a "
                                              "directory"),
])
def test_command_line_errors_are_one_located_line(command, argv, message, kernel, tmp_path,
                                                   monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("a file")
    argv = [str(kernel) if a == "K" else a for a in argv]
    assert _main(command)(argv) == 1
    assert capsys.readouterr() == ("", f"<command line>: error: {message}\n")
    assert (tmp_path / "FILE").read_text() == "a file"


def test_an_unwritable_egraph_dump_is_one_located_line(kernel, tmp_path, monkeypatch, capsys):
    from nanotile.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("a file")
    assert main([str(kernel), "-p", "eqsat", "--dump-egraph=FILE/d"]) == 1
    assert capsys.readouterr().err == ("<command line>: error: --dump-egraph: cannot write "
                                       "'FILE/d': Not a directory\n")


@pytest.mark.parametrize("command, flag", [("nanotile", "--load-pass-plugin FILE.py"),
                                           ("nanotile", "--rule-stats"),
                                           ("python -m nanotile.passes", "--load-pass-plugin"),
                                           ("python -m nanotile.passes", "--rule-stats"),
                                           ("nanotile-opt", "-load-pass-plugin=FILE.py")])
def test_help_shows_the_rule_and_plugin_flags(command, flag, capsys):
    assert _main(command)(["--help"]) == 0
    assert flag in capsys.readouterr().out


def test_a_process_freezes_its_warm_state_once(tmp_path):
    """The first compile of a process hands what is alive to gc.freeze (the imports, the
    kernel read), so the pipeline's collections skip it; a later compile in the same
    process (a batch worker, the server) freezes nothing more, so what it leaves
    behind stays collectable."""
    (tmp_path / "k.mlir").write_text(KERNEL)
    script = (
        "import gc, sys\n"
        "from nanotile.driver import main\n"
        "counts = [gc.get_freeze_count()]\n"
        "for out in ('a.ptx', 'b.ptx', 'c.ptx'):\n"
        "    assert main(['k.mlir', '--gpu-name=sm_90', '-o', out]) == 0\n"
        "    counts.append(gc.get_freeze_count())\n"
        "print(*counts)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert done.returncode == 0, done.stderr
    before, first, second, third = map(int, done.stdout.split())
    assert first > before
    assert third <= second <= first  # nothing frozen again (frozen objects may die)
    assert (tmp_path / "c.ptx").read_text() == (tmp_path / "a.ptx").read_text()
