"""``nanotile server start|stop|status``: a compile server that keeps nanotile imported.

Starting ``nanotile`` costs about 0.2 s of imports and first-use set-up (the pass
registry, egglog's program, the grammar's tables) before a small kernel's 0.02 s of
compiling; NVIDIA's tileiras does the whole compile in under 0.1 s. The server pays the
start-up once: it imports the compiler, compiles a small kernel for each target to warm
it, and then runs each ``nanotile FILE ...`` that the command's client
(nanotile/server_client.py) hands it, as mypy's dmypy or Gradle's daemon do.

Each request runs in the server process, one at a time, exactly as the command would
run it: in the client's working directory, environment and umask, with the client's
standard input, output and error as its own (file descriptors passed over the Unix
socket), and its exit status sent back. Between requests nothing of a compile stays but
the caches the compiler keeps anyway. The server starts afresh (re-executes itself on the
same socket, so waiting clients are served by the new process) when:

- the files of the nanotile package changed since it started (the client that noticed
  compiles in its own process meanwhile);
- a compile was interrupted (Ctrl-C in the client) or ended in an exception nanotile
  did not catch, either of which may have left a cache half updated;
- its memory grew past ``--max-memory`` megabytes.

It exits after ``--idle-timeout`` seconds without a request, on ``nanotile server
stop``, or on SIGTERM, removing its socket.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import socket
import subprocess
import sys
import time
import traceback

from .server_client import encode, private_folder, read_message, socket_path

IDLE_TIMEOUT = 30 * 60  # seconds without a request before the server exits
MAX_MEMORY = 1024       # megabytes of resident memory before it starts afresh
START_TIMEOUT = 60      # seconds `nanotile server start` waits for the server to listen
REQUEST_TIMEOUT = 10    # seconds a client has to send its request once connected
MAX_SOCKET_PATH = 107   # bytes of a Unix socket's path (sun_path, less its final NUL)
PACKAGE = os.path.dirname(os.path.abspath(__file__))

# A kernel compiled once for each target at start-up, so that the first request finds
# every module imported and every table built (its dense constant brings in NumPy, which
# lower-constants imports for the first constant table it writes).
WARM_UP_KERNEL = """
entry @warm_up(%a: tile<ptr<f32>>, %n: tile<i32>) {
  %token = make_token : token
  %view = make_tensor_view %a, shape = [%n], strides = [1]
      : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %block, %y, %z = get_tile_block_id : tile<i32>
  %part = make_partition_view %view
      : partition_view<tile=(128), tensor_view<?xf32, strides=[1]>>
  %x, %loaded = load_view_tko weak %part[%block] token = %token
      : partition_view<tile=(128), tensor_view<?xf32, strides=[1]>>, tile<i32>
      -> tile<128xf32>, token
  %sum = addf %x, %x : tile<128xf32>
  %stored = store_view_tko weak %sum, %part[%block] token = %loaded
      : tile<128xf32>, partition_view<tile=(128), tensor_view<?xf32, strides=[1]>>,
      tile<i32> -> token
  %steps = constant <f32: [0.0, 1.0, 2.0, 3.0]> : tile<4xf32>
  %quads = make_partition_view %view
      : partition_view<tile=(4), tensor_view<?xf32, strides=[1]>>
  %stored_steps = store_view_tko weak %steps, %quads[%block] token = %stored
      : tile<4xf32>, partition_view<tile=(4), tensor_view<?xf32, strides=[1]>>,
      tile<i32> -> token
  return
}
"""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="nanotile server",
        description="A compile server: while it runs, `nanotile FILE ...` compiles in it "
                    "instead of starting the compiler afresh (set NANOTILE_NO_SERVER=1 "
                    "to compile without it).")
    parser.add_argument("action", choices=("start", "stop", "status", "run"),
                        help="start it in the background, stop it, say whether it runs; "
                             "run: serve in this process (what start runs)")
    parser.add_argument("--socket", default=None,
                        help="the socket to listen on (default: $NANOTILE_SERVER_SOCKET, "
                             "else one per user and nanotile installation)")
    parser.add_argument("--idle-timeout", type=float, default=IDLE_TIMEOUT,
                        help=f"exit after this many seconds without a request "
                             f"(default {IDLE_TIMEOUT})")
    parser.add_argument("--max-memory", type=int, default=MAX_MEMORY,
                        help=f"start afresh when resident memory passes this many MB "
                             f"(default {MAX_MEMORY})")
    parser.add_argument("--listen-fd", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    path = args.socket or socket_path()
    if args.action == "stop":
        return stop(path)
    if args.action == "status":
        return status(path)
    problem = _unusable(path)
    if problem is not None:
        sys.stderr.write(f"nanotile server: error: cannot listen on '{path}': {problem}\n")
        return 1
    if args.action == "start":
        return start(path, args)
    return Server(path, args.idle_timeout, args.max_memory, args.listen_fd).serve()


# ---------------------------------------------------------------------------------------
# The commands


def start(path: str, args) -> int:
    """Start a server in the background on ``path`` and wait until it listens."""
    if ask(path, {"command": "status"}) is not None:
        print(f"nanotile server: already running at {path}")
        return 0
    if not private_folder(path):
        sys.stderr.write(f"nanotile server: error: other users may enter the folder of "
                         f"'{path}', so nanotile would not use a server there (chmod 700 "
                         f"it, or choose another --socket)\n")
        return 1
    command = [sys.executable, "-m", "nanotile.server", "run", "--socket", path,
               "--idle-timeout", str(args.idle_timeout), "--max-memory",
               str(args.max_memory)]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        answer = ask(path, {"command": "status"})
        if answer is not None:
            print(f"nanotile server: running (pid {answer['pid']}) at {path}")
            return 0
        if process.poll() is not None:
            sys.stderr.write(f"nanotile server: error: the server exited with status "
                             f"{process.returncode} before listening (`nanotile server run` "
                             f"serves in the foreground and shows why)\n")
            return 1
        time.sleep(0.05)
    process.kill()
    sys.stderr.write(f"nanotile server: error: the server did not listen within "
                     f"{START_TIMEOUT} s\n")
    return 1


def stop(path: str) -> int:
    answer = ask(path, {"command": "stop"})
    if answer is None:
        print(f"nanotile server: not running at {path}")
        return 0
    print(f"nanotile server: stopped (pid {answer['pid']}, {answer['requests']} "
          f"compiles served)")
    return 0


def status(path: str) -> int:
    answer = ask(path, {"command": "status"})
    if answer is None:
        print(f"nanotile server: not running at {path}")
        return 3  # as `systemctl status` says "not running"
    print(f"nanotile server: running (pid {answer['pid']}) at {path}: "
          f"{answer['requests']} compiles served, {answer['cpu']:.2f} s CPU, "
          f"{answer['memory_mb']} MB resident, up {answer['uptime']:.0f} s")
    return 0


def ask(path: str, message: dict) -> dict | None:
    """Send the server one command (status, stop); its answer, None if none listens."""
    if not os.path.exists(path) or not private_folder(path):
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
        connection.sendall(encode(message))
        return read_message(connection.makefile("rb"))
    except OSError:
        return None
    finally:
        connection.close()


def _private_folder_for(path: str) -> None:
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, mode=0o700, exist_ok=True)


def _unusable(path: str) -> str | None:
    """Why a server cannot listen on ``path`` (its folder made if missing), or None."""
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        return f"a Unix socket's path has at most {MAX_SOCKET_PATH} bytes"
    try:
        _private_folder_for(path)
    except OSError as e:
        return f"cannot make its folder: {e.strerror}"
    return None


# ---------------------------------------------------------------------------------------
# The server


class Restart(Exception):
    """The server should start afresh once the current request has been answered."""


class Server:
    """Listens on ``path``; see the module docstring."""

    def __init__(self, path: str, idle_timeout: float, max_memory: int,
                 listen_fd: int | None) -> None:
        self.path = path
        self.idle_timeout = idle_timeout
        self.max_memory = max_memory
        self.listen_fd = listen_fd
        self.requests = 0
        self.started = time.monotonic()
        self.busy = False
        self.stopping = False  # SIGTERM during a compile: stop once it is answered
        self.socket_inode: int | None = None  # the socket file this server bound
        self.fingerprint = code_fingerprint()

    def serve(self) -> int:
        from .cli import run_here

        self.run_here = run_here
        warm_up()
        from .driver import freeze_warm_state

        freeze_warm_state()  # what warm-up built lives as long as the server
        try:
            listener = self._listen()
        except OSError as e:
            sys.stderr.write(f"nanotile server: error: cannot listen on '{self.path}': "
                             f"{e.strerror}\n")
            return 1
        signal.signal(signal.SIGINT, self._interrupt)
        signal.signal(signal.SIGTERM, self._terminate)
        try:
            while not self.stopping:
                listener.settimeout(self.idle_timeout)
                try:
                    connection, _ = listener.accept()
                except TimeoutError:
                    break
                try:
                    self.stopping |= self._answer(connection)
                except Restart:
                    connection.close()
                    self._restart(listener)
                connection.close()
        except SystemExit:
            pass
        return self._exit(listener)

    def _listen(self) -> socket.socket:
        """The listening socket: inherited from the process this one replaced, or bound
        (to a temporary name, then renamed: a client never finds a socket that does not
        answer yet)."""
        if self.listen_fd is not None:
            self.socket_inode = _inode(self.path)
            return socket.socket(fileno=self.listen_fd)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        temporary = f"{self.path}.{os.getpid()}"
        if os.path.exists(temporary):
            os.unlink(temporary)
        listener.bind(temporary)
        listener.listen(64)
        os.replace(temporary, self.path)
        self.socket_inode = _inode(self.path)
        return listener

    def _answer(self, connection: socket.socket) -> bool:
        """Serve one connection; True when the server should stop."""
        connection.settimeout(REQUEST_TIMEOUT)  # one silent client must not block the rest
        try:
            message, fds, _, _ = socket.recv_fds(connection, 1 << 16, 3)
        except OSError:
            return False
        try:
            try:
                request = _whole_message(message, connection.makefile("rb"))
            except (OSError, ValueError):  # not this protocol: nothing to answer
                return False
            if not isinstance(request, dict):
                return False
            if "command" in request:
                return self._command(connection, request["command"])
            if len(fds) != 3 or not _well_formed(request):
                return False
            return self._compile(connection, request, fds)
        finally:
            for fd in fds:
                os.close(fd)

    def _command(self, connection: socket.socket, command: str) -> bool:
        if command == "stop":
            self._unlink()  # before answering: once stopped, no client finds the socket
        usage = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        _send(connection, {"pid": os.getpid(), "requests": self.requests,
                           "uptime": time.monotonic() - self.started,
                           "cpu": usage.ru_utime + usage.ru_stime + children.ru_utime +
                           children.ru_stime, "memory_mb": usage.ru_maxrss // 1024})
        return command == "stop"

    def _compile(self, connection: socket.socket, request: dict, fds: list[int]) -> bool:
        """Run ``nanotile ARGV`` for the client as its own process would."""
        before = _cpu()
        if code_fingerprint() != self.fingerprint:
            raise Restart  # the client compiles in its own process meanwhile
        _send(connection, {"pid": os.getpid()})
        self.requests += 1
        code, fresh_start = self._run_as_client(request, fds)
        _send(connection, {"exit": code, "cpu": _cpu() - before})
        if fresh_start or _resident_mb() > self.max_memory:
            raise Restart
        return False

    def _run_as_client(self, request: dict, fds: list[int]) -> tuple[int, bool]:
        """The exit status, and whether the compile may have left a cache half updated
        (interrupted, or an internal error)."""
        saved = [os.dup(fd) for fd in (0, 1, 2)]
        cwd = os.getcwd()
        environment = dict(os.environ)
        mask = os.umask(request["umask"] & 0o777)
        try:
            _flush()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            sys.stdin = open(0, "r", closefd=False)
            try:
                os.chdir(request["cwd"])
            except OSError as e:
                sys.stderr.write(f"nanotile: error: cannot work in '{request['cwd']}': "
                                 f"{e.strerror}\n")
                return 1, False
            os.environ.clear()
            os.environ.update(request["env"])
            return self._call(request["argv"])
        finally:
            _flush()
            for target, fd in enumerate(saved):
                os.dup2(fd, target)
                os.close(fd)
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(environment)
            os.umask(mask)

    def _call(self, argv: list[str]) -> tuple[int, bool]:
        self.busy = True
        try:
            code = self.run_here(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # as Python would: the traceback, status 1
            traceback.print_exc()
            return 1, True
        finally:
            self.busy = False
        return code, code == 130

    def _interrupt(self, signum, frame) -> None:
        """A client's Ctrl-C: stop its compile (between requests there is none)."""
        if self.busy:
            raise KeyboardInterrupt

    def _terminate(self, signum, frame) -> None:
        """SIGTERM: exit now, or after the compile under way."""
        self.stopping = True
        if not self.busy:
            raise SystemExit(0)

    def _restart(self, listener: socket.socket) -> None:
        """Replace this process by a fresh server on the same listening socket."""
        os.set_inheritable(listener.fileno(), True)
        os.execv(sys.executable, [sys.executable, "-m", "nanotile.server", "run",
                                  "--socket", self.path, "--idle-timeout",
                                  str(self.idle_timeout), "--max-memory",
                                  str(self.max_memory), "--listen-fd",
                                  str(listener.fileno())])

    def _exit(self, listener: socket.socket) -> int:
        self._unlink()
        listener.close()
        return 0

    def _unlink(self) -> None:
        """Remove the socket, unless another server has bound that path since."""
        if self.socket_inode is not None and _inode(self.path) == self.socket_inode:
            os.unlink(self.path)


def warm_up() -> None:
    """Compile WARM_UP_KERNEL for each target (imports, caches, egglog's program)."""
    import tempfile

    from .driver import main as driver_main

    with tempfile.TemporaryDirectory() as folder:
        kernel = os.path.join(folder, "warm_up.mlir")
        with open(kernel, "w", encoding="utf-8") as f:
            f.write(WARM_UP_KERNEL)
        for gpu in ("sm_90", "sm_100"):
            if driver_main([kernel, "--gpu-name", gpu, "-o", kernel + ".ptx"]):
                raise SystemExit(f"nanotile server: the warm-up kernel did not compile "
                                 f"for {gpu}")


def code_fingerprint() -> tuple:
    """The nanotile package's source files, their sizes and modification times."""
    files = []
    for root, _, names in os.walk(PACKAGE):
        for name in names:
            if name.endswith((".py", ".lark", ".egg")):
                info = os.stat(os.path.join(root, name))
                files.append((root, name, info.st_mtime_ns, info.st_size))
    return tuple(sorted(files))


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _whole_message(first: bytes, reader) -> dict | None:
    """The request that starts with ``first`` (read on until its newline)."""
    import json

    while not first.endswith(b"\n"):
        more = reader.readline()
        if not more:
            return None
        first += more
    return json.loads(first)


def _well_formed(request: dict) -> bool:
    argv, env = request.get("argv"), request.get("env")
    return isinstance(argv, list) and all(isinstance(a, str) for a in argv) and \
        isinstance(request.get("cwd"), str) and isinstance(request.get("umask"), int) and \
        isinstance(env, dict) and \
        all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())


def _send(connection: socket.socket, message: dict) -> None:
    try:
        connection.sendall(encode(message))
    except OSError:
        pass  # the client went away: its compile still finishes


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def _cpu() -> float:
    """CPU seconds of this process and the children it waited for (ptxas)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _resident_mb() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // (1 << 20)
    except OSError:
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
