"""The locked room: one run of `node fetch.mjs`, with every layer the specification asks for.

Specification: "The locked room", "Fetcher process interface", "Limits"; DECISIONS 9.

Layers, outermost first:
1. an unprivileged host user (`almanac-room`) when the service runs as root;
2. bubblewrap: new user, mount, pid, network, IPC, UTS and cgroup namespaces, no further user
   namespaces, all capabilities dropped, a new session, death with its parent; a root holding
   only Node and the libraries it loads, `/plugin` and `/sources/<name>` read-only and a
   size-capped private `/tmp`; no `/proc`, `/dev` or `/etc`;
3. a seccomp allow-list (`almanac.sandbox.seccomp`);
4. Node's permission model (read `/plugin`, `/sources`, `/tmp`; write `/tmp`; no child process,
   worker, addon or WASI) and a V8 heap cap of half the memory limit;
5. a control group per run (memory, tasks) where the host allows it, rlimits beneath it, the
   wall-clock deadline and the output cap enforced here.
A missing required layer refuses the run; the room never falls back to running unconfined.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import pwd
import re
import resource
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from almanac.sandbox import seccomp
from almanac.sandbox.cgroups import RunCgroup, create_run_cgroup
from almanac.sandbox.limits import KilledBy, RoomLimits, limit_sentence, rlimits
from almanac.sandbox.stale import run_prefix, stale_entries

ROOM_USER = "almanac-room"
REASON_CHARS = 300
_STDERR_TAIL = 64 * 1024
_TASK_POLL_SECONDS = 0.1
_PIPE_BYTES = 1024 * 1024
_SOURCE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,47}$")
_NODE_IN_ROOM = "/usr/bin/node"
_ENVIRONMENT = {"LANG": "C.UTF-8", "PATH": "/usr/bin"}


class RoomRefused(RuntimeError):
    """The room will not run: a required layer is missing on this host, or the input is unsafe.
    The message (at most 300 characters) is the run's reason."""


@dataclass(frozen=True, slots=True)
class RoomResult:
    """What one run left behind. `reason` is set when the run failed: the limit sentence, or
    the fetcher's last stderr line (at most 300 characters)."""

    exit_code: int | None
    stdout: bytes
    reason: str | None
    killed_by: KilledBy | None
    node_version: str
    layers: Mapping[str, bool]
    wall_seconds: float
    setup_seconds: float
    stderr_tail: str = field(default="", repr=False)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.killed_by is None

    def lines(self) -> list[bytes]:
        """The output split into lines, without the line ends (the records, unchecked)."""
        return self.stdout.splitlines()


@dataclass(frozen=True, slots=True)
class _Program:
    """What runs inside the room. Production always runs Node on `/plugin/fetch.mjs`;
    tests may run another static program with the very same confinement."""

    host_path: Path
    argv: tuple[str, ...]
    libraries: tuple[str, ...]


@functools.cache
def _libraries(binary: str) -> tuple[str, ...]:
    """The shared libraries `binary` loads, as `ldd` lists them (absolute host paths)."""
    listing = subprocess.run(
        ["ldd", binary], capture_output=True, text=True, env={"LC_ALL": "C"}, check=False
    )
    if listing.returncode != 0:
        if "not a dynamic executable" in listing.stdout + listing.stderr:
            return ()
        raise RoomRefused(f"could not list the libraries of {binary}: {listing.stderr.strip()}")
    found = []
    for line in listing.stdout.splitlines():
        match = re.search(r"(?:=>\s*)?(/\S+)\s+\(0x", line)
        if match:
            found.append(match.group(1))
    return tuple(found)


@functools.cache
def _node_version(node: str) -> str:
    done = subprocess.run([node, "--version"], capture_output=True, text=True, env={}, check=True)
    return done.stdout.strip()


@functools.cache
def _bwrap_version(bwrap: str) -> tuple[int, ...]:
    done = subprocess.run([bwrap, "--version"], capture_output=True, text=True, env={})
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout)
    if done.returncode != 0 or not match:
        raise RoomRefused(f"bubblewrap at {bwrap} does not run: {done.stderr.strip()[:200]}")
    return tuple(int(part) for part in match.groups())


def _user_namespaces_available() -> str | None:
    """None when unprivileged user namespaces can be made, else why not."""
    try:
        if int(Path("/proc/sys/user/max_user_namespaces").read_text()) <= 0:
            return "user namespaces are disabled (user.max_user_namespaces is 0)"
    except (OSError, ValueError):
        return "user namespaces are not supported by this kernel"
    for knob in ("/proc/sys/kernel/unprivileged_userns_clone",):
        with contextlib.suppress(OSError, ValueError):
            if int(Path(knob).read_text()) == 0:
                return (
                    "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone)"
                )
    return None


class LockedRoom:
    """Runs one fetcher per call to `run`, in a room built for that run and removed after it."""

    def __init__(
        self,
        *,
        node: Path | None = None,
        bwrap: str = "bwrap",
        user: str = ROOM_USER,
        work_dir: Path | None = None,
        cgroup_parent: Path | None = None,
    ) -> None:
        """`work_dir` holds each run's copy of the code and sources; it must be traversable by
        the room's user (the default is the system temporary folder). `cgroup_parent` names a
        delegated cgroup v2 subtree; by default the room finds the host's own groups."""
        if node is None:
            from almanac.node import node_binary

            node = node_binary()
        self._node = Path(node)
        self._bwrap = bwrap
        self._user = user
        self._work_dir = Path(work_dir) if work_dir else Path(tempfile.gettempdir())
        self._cgroup_parent = cgroup_parent

    # -- host checks ---------------------------------------------------------------------------

    def _identity(self) -> tuple[int, int] | None:
        """(uid, gid) to drop to when running as root; None when the service is unprivileged."""
        if os.geteuid() != 0:
            return None
        try:
            entry = pwd.getpwnam(self._user)
        except KeyError:
            raise RoomRefused(
                f"the room's user {self._user!r} does not exist; run scripts/setup.sh "
                "(the room never runs as root)"
            ) from None
        if entry.pw_uid == 0 or entry.pw_gid == 0:
            raise RoomRefused(f"the room's user {self._user!r} maps to root; refusing to run")
        return entry.pw_uid, entry.pw_gid

    def check_host(self) -> dict[str, bool]:
        """The required layers present on this host, or RoomRefused saying which is missing."""
        bwrap = shutil.which(self._bwrap)
        if bwrap is None:
            raise RoomRefused(
                "bubblewrap (bwrap) is not installed; install it: apt-get install bubblewrap"
            )
        if _bwrap_version(bwrap) < (0, 8, 0):
            raise RoomRefused("bubblewrap 0.8 or later is required (for --disable-userns)")
        missing = _user_namespaces_available()
        if missing:
            raise RoomRefused(missing)
        try:
            seccomp.compiled_filter()
        except seccomp.SeccompUnavailable as exc:
            raise RoomRefused(str(exc)) from exc
        if not Path("/proc/sys/kernel/seccomp/actions_avail").exists():
            raise RoomRefused("the kernel has no seccomp filter support")
        if not self._node.is_file():
            raise RoomRefused(f"Node is missing at {self._node}")
        self._identity()
        return {
            "bubblewrap": True,
            "user_namespace": True,
            "pid_namespace": True,
            "network_namespace": True,
            "mount_namespace": True,
            "ipc_namespace": True,
            "uts_namespace": True,
            "nested_userns_disabled": True,
            "capabilities_dropped": True,
            "seccomp": True,
            "node_permission_model": True,
            "heap_cap": True,
            "tmpfs_size_cap": True,
            "rlimits": True,
        }

    # -- the run -------------------------------------------------------------------------------

    def run(
        self,
        plugin_files: Mapping[str, bytes],
        sources: Mapping[str, Path],
        context: Mapping[str, Any],
        limits: RoomLimits | None = None,
    ) -> RoomResult:
        """Run `node fetch.mjs` once: `plugin_files` (the digest-covered files of the approved
        version, by relative path) at `/plugin`, each source file at `/sources/<name>`, the
        run context on stdin (its `sources` filled with those paths). Raises RoomRefused
        before anything runs when a layer is missing or an input is unsafe."""
        if "fetch.mjs" not in plugin_files:
            raise RoomRefused("the plug-in has no fetch.mjs")
        limits = limits or RoomLimits()
        node = str(self._node)
        program = _Program(
            host_path=self._node,
            argv=(
                _NODE_IN_ROOM,
                "--permission",
                "--allow-fs-read=/plugin",
                "--allow-fs-read=/sources",
                "--allow-fs-read=/tmp",
                "--allow-fs-write=/tmp",
                f"--max-old-space-size={limits.heap_megabytes}",
                "/plugin/fetch.mjs",
            ),
            libraries=_libraries(node),
        )
        full_context = dict(context)
        full_context["sources"] = {name: f"/sources/{name}" for name in sources}
        stdin = json.dumps(full_context, ensure_ascii=False).encode() + b"\n"
        return self._run_program(program, plugin_files, sources, stdin, limits, _node_version(node))

    def _run_program(
        self,
        program: _Program,
        plugin_files: Mapping[str, bytes],
        sources: Mapping[str, Path],
        stdin: bytes,
        limits: RoomLimits,
        version: str,
    ) -> RoomResult:
        began = time.monotonic()
        layers = self.check_host()
        identity = self._identity()
        layers["unprivileged_user"] = identity is not None or os.geteuid() != 0
        _check_sources(sources)
        _check_plugin_paths(plugin_files)

        for stale in stale_entries(self._work_dir):
            shutil.rmtree(stale, ignore_errors=True)
        run_dir = Path(tempfile.mkdtemp(prefix=run_prefix(), dir=self._work_dir))
        group: RunCgroup | None = None
        try:
            _prepare_run_dir(run_dir, plugin_files, sources, identity)
            group = create_run_cgroup(limits, self._cgroup_parent)
            layers["cgroup_memory"] = bool(group and group.memory_dir)
            layers["cgroup_tasks"] = bool(group and group.pids_dir)
            return self._launch(
                program, run_dir, sources, stdin, limits, version, layers, identity, group, began
            )
        finally:
            if group is not None:
                group.kill()
                group.remove()
            shutil.rmtree(run_dir, ignore_errors=True)

    def _bwrap_argv(
        self,
        program: _Program,
        run_dir: Path,
        sources: Mapping[str, Path],
        limits: RoomLimits,
        seccomp_fd: int,
        block_fd: int,
        user_name: str,
        dedicated_user: bool,
    ) -> list[str]:
        bwrap = shutil.which(self._bwrap) or self._bwrap
        argv = _prlimit_argv(limits, dedicated_user=dedicated_user)
        # fmt: off
        argv += [
            bwrap,
            "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup", "--disable-userns",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            # Node is the namespace's init: bubblewrap then reaps it itself, where its own init
            # reports the exit through an eventfd and leaves its zombie to the host's init
            # (measured: the host's init here never reaps, and zombies count against NPROC).
            "--as-pid-1",
            "--hostname", "room", "--clearenv",
        ]
        # fmt: on
        for key, value in {**_ENVIRONMENT, "USER": user_name}.items():
            argv += ["--setenv", key, value]
        argv += ["--ro-bind", str(program.host_path), program.argv[0]]
        for library in program.libraries:
            argv += ["--ro-bind", library, library]
        argv += ["--ro-bind", str(run_dir / "plugin"), "/plugin"]
        argv += ["--dir", "/sources"]
        for name in sources:
            argv += ["--ro-bind", str(run_dir / "sources" / name), f"/sources/{name}"]
        argv += ["--size", str(limits.tmpfs_bytes), "--perms", "0700", "--tmpfs", "/tmp"]
        argv += ["--remount-ro", "/", "--chdir", "/plugin"]
        argv += ["--seccomp", str(seccomp_fd), "--block-fd", str(block_fd)]
        argv += ["--", *program.argv]
        return argv

    def _launch(
        self,
        program: _Program,
        run_dir: Path,
        sources: Mapping[str, Path],
        stdin: bytes,
        limits: RoomLimits,
        version: str,
        layers: dict[str, bool],
        identity: tuple[int, int] | None,
        group: RunCgroup | None,
        began: float,
    ) -> RoomResult:
        user_name = self._user if identity else pwd.getpwuid(os.geteuid()).pw_name
        seccomp_fd = seccomp.filter_fd()
        block_read, block_write = os.pipe()
        try:
            argv = self._bwrap_argv(
                program,
                run_dir,
                sources,
                limits,
                seccomp_fd,
                block_read,
                user_name,
                identity is not None,
            )
            drop: dict[str, Any] = {}
            if identity is not None:
                drop = {"user": identity[0], "group": identity[1], "extra_groups": []}
            # bubblewrap itself starts with an empty environment (DECISIONS 9) and only the
            # descriptors it needs: stdio, the filter and the block pipe.
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={},
                cwd="/",
                close_fds=True,
                pass_fds=(seccomp_fd, block_read),
                start_new_session=True,
                **drop,
            )
        finally:
            os.close(seccomp_fd)
            os.close(block_read)
        try:
            # bubblewrap joins the group at once, so the namespace's init it is about to clone
            # is usually born inside; the init is moved too in case the clone came first. It
            # waits on the block pipe, so nothing runs before both are confined.
            _confine(process.pid, group)
            for pid in _wait_for_sandbox_child(process)[1:]:
                _confine(pid, group)
            setup_seconds = time.monotonic() - began
            started = time.monotonic()
            with contextlib.suppress(BrokenPipeError):  # bubblewrap failed; its stderr says why
                os.write(block_write, b"g")
        finally:
            os.close(block_write)
        try:
            outcome = _supervise(process, stdin, limits, started, group)
        except BaseException:  # the service is stopping: leave nothing running
            _kill_room(process, group)
            raise
        wall = time.monotonic() - started

        killed_by = outcome.killed_by
        tail = outcome.stderr_tail.decode("utf-8", "replace")
        if killed_by is None and process.returncode == 128 + signal.SIGXCPU:
            killed_by = "time"
        if killed_by is None and group is not None and group.oom_kills() > 0:
            killed_by = "memory"
        if killed_by is None and process.returncode != 0 and _heap_exhausted(tail):
            killed_by = "memory"
        if killed_by is None and group is not None and group.task_limit_hits() > 0:
            killed_by = "tasks"
        exit_code = None if outcome.killed_by else process.returncode
        if killed_by is not None:
            reason: str | None = limit_sentence(killed_by, limits)
        elif exit_code != 0:
            reason = last_stderr_line(tail) or _exit_sentence(exit_code)
        else:
            reason = None
        return RoomResult(
            exit_code=exit_code,
            stdout=outcome.stdout,
            reason=reason,
            killed_by=killed_by,
            node_version=version,
            layers=layers,
            wall_seconds=wall,
            setup_seconds=setup_seconds,
            stderr_tail=tail,
        )


# -- inputs ----------------------------------------------------------------------------------


def _check_sources(sources: Mapping[str, Path]) -> None:
    """Each source is a regular file under a Key name; a symbolic link is refused, never
    followed, so a download cannot point the room at a host file."""
    for name, path in sources.items():
        if not _SOURCE_NAME.match(name):
            raise RoomRefused(f"source name {name!r} is not a Key")
        try:
            info = os.lstat(path)
        except OSError as exc:
            raise RoomRefused(f"source {name}: {exc.strerror}") from exc
        import stat

        if stat.S_ISLNK(info.st_mode):
            raise RoomRefused(f"source {name} is a symbolic link; refused before running")
        if not stat.S_ISREG(info.st_mode):
            raise RoomRefused(f"source {name} is not a regular file")


def _check_plugin_paths(plugin_files: Mapping[str, bytes]) -> None:
    for relative in plugin_files:
        parts = PurePosixPath(relative).parts
        if (
            not relative
            or relative.startswith("/")
            or "\\" in relative
            or any(part in ("", ".", "..") for part in parts)
            or any(ord(ch) < 32 for ch in relative)
        ):
            raise RoomRefused(f"plug-in path {relative!r} is not a plain relative path")


def _prepare_run_dir(
    run_dir: Path,
    plugin_files: Mapping[str, bytes],
    sources: Mapping[str, Path],
    identity: tuple[int, int] | None,
) -> None:
    """Copy the code and the sources into a fresh folder the room's user can read but not
    change: root-owned, group of the room's user, no write bit for it."""
    gid = identity[1] if identity else -1

    def own(path: Path, mode: int) -> None:
        if identity is not None:
            os.chown(path, 0, gid)
        os.chmod(path, mode)

    own(run_dir, 0o750)
    plugin_dir = run_dir / "plugin"
    sources_dir = run_dir / "sources"
    for directory in (plugin_dir, sources_dir):
        directory.mkdir()
        own(directory, 0o750)
    for relative, content in plugin_files.items():
        target = plugin_dir / relative
        for parent in reversed(target.relative_to(plugin_dir).parents):
            folder = plugin_dir / parent
            if folder != plugin_dir and not folder.exists():
                folder.mkdir()
                own(folder, 0o750)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        own(target, 0o640)
    for name, path in sources.items():
        target = sources_dir / name
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as src, open(target, "xb") as dst:
            shutil.copyfileobj(src, dst, 1024 * 1024)
        own(target, 0o640)


# -- process control -------------------------------------------------------------------------

_PRLIMIT_OPTIONS = {
    resource.RLIMIT_CORE: "--core",
    resource.RLIMIT_CPU: "--cpu",
    resource.RLIMIT_DATA: "--data",
    resource.RLIMIT_NOFILE: "--nofile",
    resource.RLIMIT_MEMLOCK: "--memlock",
    resource.RLIMIT_MSGQUEUE: "--msgqueue",
    resource.RLIMIT_NPROC: "--nproc",
}


def _prlimit_argv(limits: RoomLimits, *, dedicated_user: bool) -> list[str]:
    """util-linux `prlimit` lowers its own limits and executes bubblewrap, so the rlimits hold
    from bubblewrap's first instruction without a `preexec_fn` (unsafe in a threaded service;
    and the service may lack CAP_SYS_RESOURCE to set another user's limits afterwards)."""
    prlimit = shutil.which("prlimit", path="/usr/bin:/bin")
    if prlimit is None:
        raise RoomRefused("util-linux prlimit is missing; the room sets its rlimits with it")
    argv = [prlimit]
    for which, (soft, hard) in rlimits(limits, dedicated_user=dedicated_user).items():
        argv.append(f"{_PRLIMIT_OPTIONS[which]}={soft}:{hard}")
    return argv


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _wait_for_sandbox_child(process: subprocess.Popen[bytes], timeout: float = 10.0) -> list[int]:
    """bubblewrap's processes while it waits on the block pipe: itself and the namespace's
    init, which will fork Node once released. Both join the run's group before Node exists."""
    give_up = time.monotonic() + timeout
    while True:
        children = _children(process.pid)
        if children or process.poll() is not None:
            tree = [process.pid, *children]
            for child in children:
                tree += _children(child)
            return tree
        if time.monotonic() > give_up:
            return [process.pid]
        time.sleep(0.0002)


def _confine(pid: int, group: RunCgroup | None) -> None:
    with contextlib.suppress(ProcessLookupError):
        if group is not None:
            group.attach(pid)


@dataclass
class _Outcome:
    stdout: bytes
    stderr_tail: bytes
    killed_by: KilledBy | None


def _kill_room(process: subprocess.Popen[bytes], group: RunCgroup | None) -> None:
    """Kill the whole room and leave nothing running: every process of the run's group but
    bubblewrap itself (the pid namespace dies with its init), then bubblewrap once it has
    reaped its init, or at once when it lingers. Without a group, killing bubblewrap takes its
    init down (--die-with-parent) and the namespace with it."""
    if group is not None:
        group.kill(spare=process.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=1.0)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    process.wait()
    if group is not None:
        group.kill()


def _supervise(
    process: subprocess.Popen[bytes],
    stdin: bytes,
    limits: RoomLimits,
    started: float,
    group: RunCgroup | None,
) -> _Outcome:
    """Feed stdin, collect stdout (up to the output cap) and the tail of stderr, and kill the
    room at the deadline or the cap."""
    assert process.stdin and process.stdout and process.stderr
    deadline = started + limits.seconds
    out = bytearray()
    err = bytearray()
    killed_by: KilledBy | None = None
    pending = memoryview(stdin)
    next_task_check = 0.0
    with contextlib.suppress(OSError):  # fewer wake-ups for a fetcher printing megabytes
        fcntl.fcntl(process.stdout.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    with selectors.DefaultSelector() as selector:
        os.set_blocking(process.stdin.fileno(), False)
        selector.register(process.stdin, selectors.EVENT_WRITE)
        selector.register(process.stdout, selectors.EVENT_READ)
        selector.register(process.stderr, selectors.EVENT_READ)
        while any(k.events & selectors.EVENT_READ for k in selector.get_map().values()):
            left = deadline - time.monotonic()
            if left <= 0:
                killed_by = "time"
                break
            if group is not None and time.monotonic() >= next_task_check:
                next_task_check = time.monotonic() + _TASK_POLL_SECONDS
                if group.task_limit_hits() > 0:
                    killed_by = "tasks"
                    break
            for key, _ in selector.select(min(left, _TASK_POLL_SECONDS)):
                stream = key.fileobj
                if stream is process.stdin:
                    try:
                        pending = pending[os.write(process.stdin.fileno(), pending[:65536]) :]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:  # the fetcher need not read its context
                        pending = pending[:0]
                    if not pending:
                        selector.unregister(process.stdin)
                        with contextlib.suppress(OSError):
                            process.stdin.close()
                    continue
                chunk = os.read(stream.fileno(), _PIPE_BYTES)  # type: ignore[union-attr]
                if not chunk:
                    selector.unregister(stream)
                    continue
                if stream is process.stdout:
                    out += chunk
                    if len(out) > limits.output_bytes:
                        killed_by = "output"
                        break
                else:
                    err += chunk
                    if len(err) > 2 * _STDERR_TAIL:
                        del err[:-_STDERR_TAIL]
            if killed_by:
                break
    if killed_by is None:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            killed_by = "time"
    if killed_by is not None:
        _kill_room(process, group)
        del out[limits.output_bytes :]
    for stream in (process.stdin, process.stdout, process.stderr):
        with contextlib.suppress(OSError):
            stream.close()
    return _Outcome(bytes(out), bytes(err[-_STDERR_TAIL:]), killed_by)


def _exit_sentence(exit_code: int | None) -> str:
    """The reason of a failed run that printed nothing to stderr."""
    if exit_code is not None and exit_code > 128:
        with contextlib.suppress(ValueError):
            return f"the fetcher was ended by {signal.Signals(exit_code - 128).name}"
    return f"the fetcher ended with exit code {exit_code}"


def _heap_exhausted(stderr: str) -> bool:
    return "JavaScript heap out of memory" in stderr or "Reached heap limit" in stderr


def last_stderr_line(stderr: str) -> str | None:
    """The fetcher's last non-empty stderr line, at most 300 characters (Fetcher process
    interface, rule 2). Node's own `Node.js v24...` trailer after an uncaught error is not
    the fetcher's line and is skipped."""
    for line in reversed(stderr.splitlines()):
        text = line.strip()
        if not text or re.fullmatch(r"Node\.js v\d+\.\d+\.\d+", text):
            continue
        return text[:REASON_CHARS]
    return None


def run_argv_for_tests(
    room: LockedRoom, binary: Path, args: Sequence[str], limits: RoomLimits
) -> RoomResult:
    """Run a static test program (no libraries) in exactly the room Node gets: same user,
    namespaces, seccomp filter, mounts, rlimits and group. Test-only: the production entry
    point `LockedRoom.run` always runs Node on `/plugin/fetch.mjs`."""
    program = _Program(host_path=binary, argv=("/usr/bin/node", *args), libraries=())
    return room._run_program(program, {"fetch.mjs": b""}, {}, b"", limits, "test-program")
