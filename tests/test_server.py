"""The compile server (nanotile/server.py): while it runs, ``nanotile`` hands its command to
it, and what the command writes, where it writes it, and its exit status are what the
same command writes compiling in its own process. Each test starts a server of its own on
a socket in a fresh private folder (NANOTILE_SERVER_SOCKET); the rest of the suite runs
without one (tests/conftest.py sets NANOTILE_NO_SERVER)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.shared_corpus import TIMES_EIGHT as KERNEL

REPO = Path(__file__).resolve().parents[1]


def nanotile(*argv: str, env: dict, cwd: Path, stdin: str | None = None):
    return subprocess.run([sys.executable, "-m", "nanotile", *argv], cwd=cwd, env=env,
                          input=stdin, capture_output=True, text=True, timeout=300)


@pytest.fixture
def server():
    """(environment that uses the server, environment that does not, a work folder)."""
    folder = Path(tempfile.mkdtemp(prefix="nt-"))  # short: a socket path has <= 107 bytes
    socket_folder = folder / "server"
    socket_folder.mkdir(mode=0o700)
    served = {k: v for k, v in os.environ.items() if k != "NANOTILE_NO_SERVER"}
    served["NANOTILE_SERVER_SOCKET"] = str(socket_folder / "s.sock")
    served["PYTHONPATH"] = str(REPO)
    local = {**served, "NANOTILE_NO_SERVER": "1"}
    work = folder / "work"
    work.mkdir()
    (work / "k.mlir").write_text(KERNEL)
    started = nanotile("server", "start", env=served, cwd=work)
    assert started.returncode == 0 and "running (pid" in started.stdout, started.stderr
    try:
        yield served, local, work
    finally:
        nanotile("server", "stop", env=served, cwd=work)
        shutil.rmtree(folder, ignore_errors=True)


def cpu_ticks(pid: int) -> int:
    """User + system CPU of process ``pid`` so far, in clock ticks (1/100 s)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def served_count(env: dict, work: Path) -> int:
    status = nanotile("server", "status", env=env, cwd=work)
    assert status.returncode == 0, status.stdout
    return int(status.stdout.split(": ")[2].split()[0])  # "...: N compiles served, ..."


def test_the_server_compiles_what_the_command_compiles_where_it_says(server):
    served, local, work = server
    stats = work / "stats"
    for gpu in ("sm_90", "sm_100"):
        # a relative output path: the server writes it in the command's folder
        result = nanotile("k.mlir", "--gpu-name", gpu, "-o", f"served_{gpu}.ptx",
                          env={**served, "NANOTILE_SERVER_STATS": str(stats)}, cwd=work)
        assert result.returncode == 0, result.stderr
        here = nanotile("k.mlir", "--gpu-name", gpu, "-o", f"local_{gpu}.ptx", env=local,
                        cwd=work)
        assert here.returncode == 0, here.stderr
        ptx = (work / f"served_{gpu}.ptx").read_bytes()
        assert b".entry" in ptx and ptx == (work / f"local_{gpu}.ptx").read_bytes()
    # the server did the work (it reports its CPU per request) and counted it
    assert len(stats.read_text().split()) == 2
    assert served_count(served, work) == 2
    # standard output is the command's own: text and PTX printed to a pipe
    printed = nanotile("k.mlir", "--emit=ptx", env=served, cwd=work)
    assert printed.returncode == 0 and printed.stdout.encode() == \
        (work / "local_sm_100.ptx").read_bytes()


def test_bad_input_gets_the_commands_diagnostic_and_status(server):
    served, local, work = server
    for argv, stdin in ((["-"], "%0 = bogus_op : tile<i32>\n"), (["missing.mlir"], None),
                        (["k.mlir", "--emit=nonsense"], None), (["--version"], None)):
        there = nanotile(*argv, env=served, cwd=work, stdin=stdin)
        here = nanotile(*argv, env=local, cwd=work, stdin=stdin)
        assert (there.returncode, there.stdout, there.stderr) == \
            (here.returncode, here.stdout, here.stderr), argv
    assert served_count(served, work) == 4
    assert nanotile("-", env=local, cwd=work, stdin="%0 = bogus_op\n").returncode == 1


def test_the_command_compiles_itself_when_it_should_not_use_the_server(server):
    served, local, work = server
    stats = work / "stats"
    folder = Path(served["NANOTILE_SERVER_SOCKET"]).parent
    folder.chmod(0o755)  # someone else could have put the socket there: not used
    try:
        result = nanotile("k.mlir", "--emit=ptx", env={**served,
                          "NANOTILE_SERVER_STATS": str(stats)}, cwd=work)
    finally:
        folder.chmod(0o700)
    assert result.returncode == 0 and ".entry" in result.stdout
    for env in (local, {**served, "NANOTILE_SERVER_STATS": str(stats)}):
        argv = ["k.mlir", "--emit=ptx"] if env is local else \
            ["k.mlir", "--emit=ptx", "--load-pass-plugin", str(REPO / "examples" /
                                                                "plugin_count_ops.py")]
        assert nanotile(*argv, env=env, cwd=work).returncode == 0
    assert not stats.exists() and served_count(served, work) == 0


def test_stop_and_status(server):
    served, _, work = server
    stopped = nanotile("server", "stop", env=served, cwd=work)
    assert stopped.returncode == 0 and "stopped (pid" in stopped.stdout
    status = nanotile("server", "status", env=served, cwd=work)
    assert status.returncode == 3 and "not running" in status.stdout
    assert not Path(served["NANOTILE_SERVER_SOCKET"]).exists()
    result = nanotile("k.mlir", "--emit=ptx", env=served, cwd=work)  # compiled here
    assert result.returncode == 0 and ".entry" in result.stdout


def test_ctrl_c_stops_the_compile_and_the_server_starts_afresh(server):
    """Ctrl-C in the command interrupts its compile in the server as it would here (status
    130, one line, no output file); the server then replaces itself by a fresh process
    (an interrupted compile may have left a cache half updated) that serves on."""
    import signal
    import time

    from tests.shared_corpus import CUTILE_TESTS

    kernels = sorted(CUTILE_TESTS.glob("kernels_layer_norm__layer_norm_bwd_dwdb*.tileirbc"))
    if not kernels:
        pytest.skip("needs ../shared/corpus/cutile-tests (a kernel whose --check-semantics "
                    "compile takes minutes)")
    served, _, work = server
    status = nanotile("server", "status", env=served, cwd=work)
    server_pid = int(status.stdout.split("(pid ")[1].split(")")[0])
    idle = cpu_ticks(server_pid)
    process = subprocess.Popen(
        [sys.executable, "-m", "nanotile", str(kernels[0]), "--gpu-name", "sm_90", "-o",
         "big.ptx", "--check-semantics"], cwd=work, env=served, stderr=subprocess.PIPE,
        text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # the server is compiling (it spends CPU only on a request, which it acknowledges to
    # the command first): half a second of it, and minutes of the compile are left
    deadline = time.monotonic() + 120
    while cpu_ticks(server_pid) - idle < 50 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=300)
    assert (process.returncode, stderr) == (130, "nanotile: interrupted\n")
    assert not (work / "big.ptx").exists()
    result = nanotile("k.mlir", "--emit=ptx", env=served, cwd=work)
    assert result.returncode == 0 and ".entry" in result.stdout
    assert served_count(served, work) == 1  # counted afresh: a new server process


def test_a_stray_connection_does_not_stop_the_server(server):
    """Something else that connects to the socket (garbage, a request without the
    descriptors, nothing at all) is dropped; the server serves on."""
    import socket

    served, _, work = server
    for payload in (b"not json\n", b'{"argv": ["k.mlir"]}\n', b"[1, 2]\n", b""):
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(served["NANOTILE_SERVER_SOCKET"])
        client.sendall(payload)
        client.shutdown(socket.SHUT_WR)
        assert client.recv(100) == b""  # no answer: the connection is closed
        client.close()
    result = nanotile("k.mlir", "--emit=ptx", env=served, cwd=work)
    assert result.returncode == 0 and ".entry" in result.stdout
    assert served_count(served, work) == 1


def test_start_refuses_a_folder_other_users_may_enter():
    """The command would not use a socket others could have placed (nor should a server
    listen where others could connect), so start says so instead of starting one."""
    folder = Path(tempfile.mkdtemp(prefix="nt-"))
    try:
        folder.chmod(0o755)
        env = {k: v for k, v in os.environ.items() if k != "NANOTILE_NO_SERVER"}
        started = nanotile("server", "start", "--socket", str(folder / "s.sock"),
                           env={**env, "PYTHONPATH": str(REPO)}, cwd=folder)
        assert started.returncode == 1 and "other users may enter" in started.stderr
        assert not (folder / "s.sock").exists()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_socket_path_nanotile_cannot_listen_on_is_one_line_of_error():
    env = {k: v for k, v in os.environ.items() if k != "NANOTILE_NO_SERVER"}
    for path, reason in (("/proc/no-such-folder/s.sock", "cannot make its folder"),
                         ("/tmp/" + "x" * 120 + "/s.sock", "at most 107 bytes")):
        for action in ("start", "run"):
            result = nanotile("server", action, "--socket", path,
                              env={**env, "PYTHONPATH": str(REPO)}, cwd=REPO)
            assert result.returncode == 1 and reason in result.stderr
            assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_after_the_warm_up_a_kernel_with_a_constant_table_imports_nothing():
    """The server warms up so that requests find every module imported: a kernel with a
    dense constant (lower-constants writes its table with NumPy) imports no module."""
    script = (
        "import contextlib, io, sys\n"
        "from nanotile.server import warm_up\n"
        "from nanotile.driver import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    warm_up()\n"
        "before = set(sys.modules)\n"
        "for gpu in ('sm_90', 'sm_100'):\n"
        "    assert main([sys.argv[1], '--gpu-name', gpu, '-o', sys.argv[2]]) == 0\n"
        "print(sorted(set(sys.modules) - before))\n")
    kernel = '''entry @table(%a: tile<ptr<i32>>) {
  %token = make_token : token
  %view = make_tensor_view %a, shape = [8], strides = [1] : tensor_view<8xi32, strides=[1]>
  %part = make_partition_view %view : partition_view<tile=(8), tensor_view<8xi32, strides=[1]>>
  %zero = constant <i32: 0> : tile<i32>
  %values = constant <i32: [3, 1, 4, 1, 5, 9, 2, 6]> : tile<8xi32>
  %stored = store_view_tko weak %values, %part[%zero] token = %token
      : tile<8xi32>, partition_view<tile=(8), tensor_view<8xi32, strides=[1]>>, tile<i32> -> token
  return
}
'''
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "table.mlir"
        path.write_text(kernel)
        done = subprocess.run([sys.executable, "-c", script, str(path), str(path) + ".ptx"],
                              cwd=REPO, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
        assert done.returncode == 0, done.stderr
        assert "global" in (Path(folder) / "table.mlir.ptx").read_text()  # a table was made
    assert done.stdout.strip() == "[]"
