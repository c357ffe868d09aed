"""The ``nanotile`` command's side of the compile server (nanotile/server.py).

A fresh ``nanotile`` process spends most of a small kernel's compile importing the
compiler (about 0.2 s of a 0.3 s compile on a 2-core machine; NVIDIA's tileiras takes
under 0.1 s for the whole compile). ``nanotile server start`` keeps one process with
everything imported; while it runs, ``nanotile FILE ...`` hands its command line, working
directory, environment, umask and its standard input, output and error (the file
descriptors themselves) to it over a Unix socket and exits with the status it reports.
Output goes straight to this process's own descriptors, so a terminal, a pipe or a
redirection behaves as if the compile had run here.

This module is imported on every ``nanotile`` start-up, so it imports only what the
interpreter has already loaded (os, sys) and the socket module. ``forward`` returns None
(compile here) when no server is running, when ``NANOTILE_NO_SERVER`` is set, for
commands that change the compiler itself (``--load-pass-plugin``), and when the server
answers that its code is older than the files on disk (it then restarts itself).
"""

from __future__ import annotations

import os
import sys

SOCKET_VARIABLE = "NANOTILE_SERVER_SOCKET"  # a socket path of the user's choosing
DISABLE_VARIABLE = "NANOTILE_NO_SERVER"     # set (to anything): always compile here
STATS_VARIABLE = "NANOTILE_SERVER_STATS"    # a file: append the server's CPU per request
LOCAL_ONLY_FLAGS = ("--load-pass-plugin",)  # registers passes in the process it runs in
INTERRUPTED = 130


def socket_path() -> str:
    """Where this installation's server listens: ``$NANOTILE_SERVER_SOCKET``, else a
    folder only this user may enter (``$XDG_RUNTIME_DIR/nanotile`` or
    ``/tmp/nanotile-UID``), one socket per installed copy of nanotile (named by a hash of
    its folder, so that two checkouts never share a server)."""
    chosen = os.environ.get(SOCKET_VARIABLE)
    if chosen:
        return chosen
    name = f"{_fnv1a(os.path.dirname(os.path.abspath(__file__)).encode()):016x}"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    folder = os.path.join(runtime, "nanotile") if runtime else \
        os.path.join("/tmp", f"nanotile-{os.getuid()}")
    return os.path.join(folder, f"{name}.sock")


def _fnv1a(data: bytes) -> int:
    """The 64-bit FNV-1a hash of ``data``: a name for a folder's socket, computed without
    importing hashlib (whose OpenSSL costs every command about 5 ms of start-up)."""
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def private_folder(path: str) -> bool:
    """The socket's folder is this user's and no one else may enter it: a socket someone
    else placed there would receive this user's files and environment."""
    try:
        info = os.stat(os.path.dirname(path) or ".")
    except OSError:
        return False
    return info.st_uid == os.getuid() and not info.st_mode & 0o077


def forward(argv: list[str]) -> int | None:
    """Run ``nanotile ARGV`` in the server; its exit status, or None to compile here."""
    if os.environ.get(DISABLE_VARIABLE) or any(flag in arg for arg in argv
                                               for flag in LOCAL_ONLY_FLAGS):
        return None
    path = socket_path()
    if not os.path.exists(path) or not private_folder(path):
        return None
    import socket

    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
        request = encode({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ),
                          "umask": _umask()})
        socket.send_fds(connection, [request], [0, 1, 2])
        stream = connection.makefile("rb")
        started = read_message(stream)
    except OSError:
        connection.close()
        return None  # no server (a socket left behind), or it went away: compile here
    if started is None or "pid" not in started:
        connection.close()
        return None  # stale code (the server restarts itself), or it stopped
    return _wait(stream, started["pid"])


def _wait(stream, pid: int) -> int:
    """The exit status the server reports; Ctrl-C here interrupts the compile there."""
    while True:
        try:
            done = read_message(stream)
            break
        except KeyboardInterrupt:
            try:
                os.kill(pid, 2)  # SIGINT: the server stops this compile as nanotile does
            except OSError:
                pass
    if done is None or "exit" not in done:
        sys.stderr.write("nanotile: error: the compile server stopped during the compile "
                         "(nanotile server start restarts it)\n")
        return 1
    stats = os.environ.get(STATS_VARIABLE)
    if stats:
        with open(stats, "a", encoding="utf-8") as f:
            f.write(f"{done.get('cpu', 0.0):.6f}\n")
    return done["exit"]


def encode(message: dict) -> bytes:
    """One message of the protocol: a line of JSON (which escapes newlines in strings)."""
    import json

    return json.dumps(message).encode() + b"\n"


def read_message(stream) -> dict | None:
    """The next message from ``stream`` (a binary file), None at its end."""
    import json

    line = stream.readline()
    return json.loads(line) if line.endswith(b"\n") else None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
