"""The locked room, run for real: bubblewrap, seccomp, Node 24's permission model, the run's
cgroup and rlimits. Each hostile fetcher in tests/sandbox/hostile/ must end the way the
specification says ("The locked room", "Limits"), and nothing of the room may be left running.
"""

from __future__ import annotations

import http.server
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from almanac.platform.contract.manifest import Manifest, parse_manifest
from almanac.sandbox.limits import RoomLimits
from almanac.sandbox.room import (
    LockedRoom,
    RoomRefused,
    last_stderr_line,
    run_argv_for_tests,
)

HOSTILE = Path(__file__).parent / "hostile"
SMALL = RoomLimits(seconds=3, megabytes=64)
CONTEXT = {
    "contract": 1,
    "plugin": "test-room",
    "now": "2026-11-21T12:00:00Z",
    "today": "2026-11-21",
}


def _room_uid() -> int:
    if os.geteuid() == 0:
        return pwd.getpwnam("almanac-room").pw_uid
    return os.geteuid()


def _live_room_processes() -> list[str]:
    """Processes of the room's user that are not zombies (a zombie runs nothing)."""
    uid = _room_uid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        mine = uid == os.geteuid() and int(entry.name) == os.getpid()
        zombie = fields["State"].startswith("Z")
        if int(fields["Uid"].split()[0]) == uid and not zombie and not mine:
            found.append(f"{entry.name} {fields['Name']}")
    return found


def _leftover_groups() -> list[Path]:
    # Groups are named by the process that made them: this test process's rooms only, so a
    # group another process left (a service killed mid-run elsewhere) cannot fail these tests.
    roots = [Path("/sys/fs/cgroup/memory"), Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")]
    found: list[Path] = []
    for root in roots:
        if root.is_dir():
            found += [p for p in root.rglob(f"almanac-room-{os.getpid()}-*") if p.is_dir()]
    return found


@pytest.fixture(scope="module")
def room() -> LockedRoom:
    return LockedRoom()


@pytest.fixture(autouse=True)
def nothing_left_running() -> Iterator[None]:
    yield
    for _ in range(100):
        if not _live_room_processes():
            break
        time.sleep(0.01)
    assert _live_room_processes() == []
    if os.geteuid() == 0 and Path("/sys/fs/cgroup/memory").is_dir():
        assert _leftover_groups() == []
    leftovers = [p for p in Path("/tmp").glob(f"almanac-room-{os.getpid()}-*") if p.is_dir()]
    assert leftovers == [], "the code copy, downloads and output are deleted after the run"


def _run(
    room: LockedRoom, fetcher: str, limits: RoomLimits = SMALL, **context: object
) -> tuple[object, dict | None]:
    code = (HOSTILE / fetcher).read_bytes()
    result = room.run({"fetch.mjs": code}, {}, {**CONTEXT, **context}, limits)
    lines = result.lines()
    return result, (json.loads(lines[-1]) if lines and lines[-1].startswith(b"{") else None)


# -- a well-behaved fetcher ------------------------------------------------------------------


def test_well_behaved_fetcher_reads_its_context_and_source_and_prints_records(
    room: LockedRoom, tmp_path: Path
) -> None:
    source = tmp_path / "rates.csv"
    source.write_text("date,rate\n2026-11-20,58.91\n2026-11-21,58.97\n")
    code = (HOSTILE / "well_behaved.mjs").read_bytes()
    result = room.run(
        {"fetch.mjs": code, "lib/util.mjs": b"export {}"}, {"rates": source}, CONTEXT, SMALL
    )
    assert result.ok, result.stderr_tail
    assert result.reason is None
    assert [json.loads(line) for line in result.lines()] == [
        {"series": "rate", "date": "2026-11-20", "value": {"rate": 58.91}},
        {"series": "rate", "date": "2026-11-21", "value": {"rate": 58.97}},
    ]
    received = json.loads(last_stderr_line(result.stderr_tail) or "{}")["context"]
    assert received == {**CONTEXT, "sources": {"rates": "/sources/rates"}}
    assert result.node_version.startswith("v24.")
    assert all(
        result.layers[name]
        for name in (
            "bubblewrap",
            "seccomp",
            "user_namespace",
            "network_namespace",
            "node_permission_model",
        )
    )
    assert source.exists(), "the caller's download is left to the caller"


def test_exit_2_keeps_the_last_stderr_line_as_reason(room: LockedRoom, tmp_path: Path) -> None:
    source = tmp_path / "rates.csv"
    source.write_text("fecha,tasa\n2026-11-20,58.91\n")
    code = (HOSTILE / "well_behaved.mjs").read_bytes()
    result = room.run({"fetch.mjs": code}, {"rates": source}, CONTEXT, SMALL)
    assert result.exit_code == 2 and result.killed_by is None
    assert result.reason == "unexpected header in rates: fecha,tasa"


def test_reason_is_cut_at_300_characters(room: LockedRoom) -> None:
    code = b"console.error('x'.repeat(1000)); process.exit(1)"
    result = room.run({"fetch.mjs": code}, {}, CONTEXT, SMALL)
    assert result.exit_code == 1 and result.reason == "x" * 300


def test_environment_is_only_the_locale_path_and_user(room: LockedRoom) -> None:
    os.environ["ALMANAC_TEST_SECRET"] = "must-not-leak"
    try:
        code = b"console.log(JSON.stringify(process.env))"
        result = room.run({"fetch.mjs": code}, {}, CONTEXT, SMALL)
    finally:
        del os.environ["ALMANAC_TEST_SECRET"]
    env = json.loads(result.stdout)
    assert set(env) <= {"LANG", "PATH", "USER", "PWD"}
    assert env["LANG"] == "C.UTF-8" and "must-not-leak" not in result.stdout.decode()


def test_bubblewrap_starts_with_an_empty_environment_and_no_inherited_descriptors(
    room: LockedRoom, tmp_path: Path
) -> None:
    """DECISIONS 9: bubblewrap's environment would be readable in a room that mounts /proc, and
    the parent's descriptors pass through it; both are checked from the host during a run."""
    secret = tmp_path / "secret"
    secret.write_text("host secret")
    leaked = os.open(secret, os.O_RDONLY)
    os.set_inheritable(leaked, True)
    os.environ["ALMANAC_TEST_SECRET"] = "must-not-leak"
    seen: dict[str, object] = {}

    def watch() -> None:
        for _ in range(300):
            for entry in _live_room_processes():
                pid = entry.split()[0]
                try:
                    seen[pid] = (
                        Path(f"/proc/{pid}/environ").read_bytes(),
                        [
                            os.readlink(f"/proc/{pid}/fd/{fd}")
                            for fd in os.listdir(f"/proc/{pid}/fd")
                        ],
                    )
                except OSError:
                    continue
            if len(seen) >= 2:
                return
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        code = b"setTimeout(() => {}, 1500)"
        result = room.run({"fetch.mjs": code}, {}, CONTEXT, SMALL)
    finally:
        os.close(leaked)
        del os.environ["ALMANAC_TEST_SECRET"]
        watcher.join()
    assert result.ok
    assert len(seen) >= 2, "bubblewrap and Node (the namespace's init) were both observed"
    for environ, fds in seen.values():
        assert b"must-not-leak" not in environ
        assert environ in (
            b"",
            b"LANG=C.UTF-8\0PATH=/usr/bin\0USER=almanac-room\0PWD=/plugin\0",
        ) or (os.geteuid() != 0)
        assert str(secret) not in fds


# -- the network is private and reaches nothing ----------------------------------------------


def test_network_reaches_nothing_and_fails_fast(room: LockedRoom) -> None:
    hits: list[str] = []
    connections: list[object] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    class Server(http.server.ThreadingHTTPServer):
        def verify_request(self, request: object, client_address: object) -> bool:
            connections.append(client_address)  # every accepted TCP connection, HTTP or not
            return True

    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        result, outcome = _run(room, "network.mjs", port=server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
    assert result.ok, result.stderr_tail
    assert outcome is not None
    assert outcome["fetch_loopback"] == "ECONNREFUSED"  # the room's own empty loopback
    assert outcome["tcp_loopback"] == "ECONNREFUSED"  # node:net straight to the host's port
    assert outcome["fetch_public"] in ("ENETUNREACH", "EHOSTUNREACH")
    assert outcome["tcp_public"] in ("ENETUNREACH", "EHOSTUNREACH")
    assert outcome["dns_lookup"] in ("EAI_AGAIN", "ENOTFOUND")
    assert outcome["dns_resolve"] in ("ECONNREFUSED", "ETIMEOUT", "ESERVFAIL", "ENOTFOUND")
    assert all(outcome[key] < 2000 for key in outcome if key.endswith("_ms")), outcome
    assert hits == [], "nothing reached the host's loopback server"
    assert connections == [], "not even a bare TCP connection reached the host's loopback"


# -- the root is empty except the plug-in, the sources, Node and /tmp ------------------------


def _require_root(what: str) -> None:
    # scripts/test.sh runs as root and installs util-linux: a missing part fails, never skips.
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.fail(f"{what} needs root and util-linux unshare: run scripts/test.sh as root")


@pytest.fixture
def user_home() -> Iterator[Path]:
    """A stand-in for a non-root user's home on the host: a folder under /home holding a
    private file, both owned by the room's own user, so that only the room (and not the host's
    file permissions) keeps a fetcher from reading it."""
    _require_root("making a home folder under /home")
    home = Path(tempfile.mkdtemp(prefix="almanac-test-home-", dir="/home"))
    try:
        secret = home / ".netrc"
        secret.write_text("machine example.org login someone password hunter2\n")
        for path in (home, secret):
            os.chown(path, _room_uid(), -1)
        home.chmod(0o700)
        yield home
    finally:
        shutil.rmtree(home)


def test_host_files_are_out_of_reach(room: LockedRoom, user_home: Path) -> None:
    homes = [str(user_home), str(user_home / ".netrc"), "/home"]
    result, outcome = _run(room, "read_host.mjs", paths=homes)
    assert result.ok, result.stderr_tail
    assert outcome == {
        **dict.fromkeys(homes, "ERR_ACCESS_DENIED"),
        "/etc/passwd": "ERR_ACCESS_DENIED",
        "/proc/self/environ": "ERR_ACCESS_DENIED",
        "/proc/1/environ": "ERR_ACCESS_DENIED",
        "/root": "ERR_ACCESS_DENIED",
        "/root/.bashrc": "ERR_ACCESS_DENIED",
        "/plugin/../etc/passwd": "ERR_ACCESS_DENIED",
        "/": "ERR_ACCESS_DENIED",
        "/usr/bin/node": "ERR_ACCESS_DENIED",
        "/dev/null": "ERR_ACCESS_DENIED",
    }


def test_nothing_is_written_outside_the_temporary_folder(room: LockedRoom) -> None:
    result, outcome = _run(room, "write_outside.mjs")
    assert result.ok, result.stderr_tail
    assert outcome is not None
    for path in ("/plugin/fetch.mjs", "/plugin/new.mjs", "/sources/evil", "/evil"):
        assert outcome[path] == "ERR_ACCESS_DENIED"
    # node:sqlite ignores the permission model; the read-only mounts stop it
    for path in ("/plugin/evil.db", "/sources/evil.db", "/evil.db"):
        assert outcome[f"sqlite {path}"] != "written", outcome
    assert outcome["sqlite /tmp/ok.db"] == "written"
    assert outcome["rename_tmp"] == "ok"


def test_no_child_process_worker_addon_or_wasi(room: LockedRoom) -> None:
    result, outcome = _run(room, "escape.mjs")
    assert result.ok, result.stderr_tail
    assert outcome is not None
    for name in ("spawnSync", "execSync", "spawn", "worker", "wasi", "thread_bomb"):
        assert outcome[name] == "ERR_ACCESS_DENIED", (name, outcome)
    assert outcome["dlopen"] in ("ERR_ACCESS_DENIED", "ERR_DLOPEN_DISABLED")


def test_a_symbolic_link_in_sources_is_refused_before_running(
    room: LockedRoom, tmp_path: Path
) -> None:
    link = tmp_path / "rates"
    link.symlink_to("/etc/passwd")
    with pytest.raises(RoomRefused, match="symbolic link"):
        room.run({"fetch.mjs": b"console.log('ran')"}, {"rates": link}, CONTEXT, SMALL)


@pytest.mark.parametrize("path", ["../escape.mjs", "/abs.mjs", "a/../../b.mjs", "a\\b.mjs"])
def test_plugin_paths_must_be_plain(room: LockedRoom, path: str) -> None:
    with pytest.raises(RoomRefused, match="plain relative path"):
        room.run({"fetch.mjs": b"", path: b""}, {}, CONTEXT, SMALL)


# -- limits ----------------------------------------------------------------------------------


def test_heap_bomb_ends_on_memory(room: LockedRoom) -> None:
    result, _ = _run(room, "heap_bomb.mjs")
    assert result.killed_by == "memory"
    assert result.reason == "used more than 64 MB"
    assert not result.ok


def test_buffer_bomb_ends_on_memory(room: LockedRoom) -> None:
    result, _ = _run(room, "buffer_bomb.mjs")
    assert result.killed_by == "memory", result.stderr_tail
    assert result.reason == "used more than 64 MB"


def test_endless_loop_ignoring_sigterm_is_killed_at_the_deadline(room: LockedRoom) -> None:
    result, _ = _run(room, "endless.mjs", RoomLimits(seconds=1.5, megabytes=64))
    assert result.killed_by == "time" and result.exit_code is None
    assert result.reason == "ran past 1.5 seconds"
    assert 1.5 <= result.wall_seconds < 10


def test_output_over_64_mb_is_killed_at_overrun(room: LockedRoom) -> None:
    result, _ = _run(room, "flood.mjs", RoomLimits(seconds=10, megabytes=64))
    assert result.killed_by == "output"
    assert result.reason == "printed more than 64 MB"
    assert len(result.stdout) == 64 * 1024 * 1024


def test_a_2_gb_temporary_file_does_not_fit(room: LockedRoom) -> None:
    result, _ = _run(room, "big_temp.mjs", RoomLimits(seconds=10, megabytes=64))
    assert not result.ok
    assert result.killed_by == "memory" or "ENOSPC" in (result.reason or ""), result.stderr_tail
    assert "wrote 2 GB" not in result.stderr_tail


# -- seccomp, mounts and tasks proved by a static program in the same room -------------------


@pytest.fixture(scope="module")
def probe() -> Iterator[Path]:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc is needed to build the room probe (apt-get install gcc libc6-dev)")
    # in a folder the room's user can traverse (pytest's own tmp folders are private to root)
    folder = Path(tempfile.mkdtemp(prefix="room-probe-"))
    folder.chmod(0o755)
    binary = folder / "probe"
    subprocess.run([gcc, "-static", "-O1", "-o", str(binary), str(HOSTILE / "probe.c")], check=True)
    binary.chmod(0o755)
    yield binary
    shutil.rmtree(folder)


def _probe(room: LockedRoom, probe: Path, what: str) -> tuple[object, dict | None]:
    result = run_argv_for_tests(room, probe, [what], SMALL)
    return result, (json.loads(result.stdout) if result.stdout.startswith(b"{") else None)


def test_seccomp_refuses_namespace_mount_trace_and_raw_socket_calls(
    room: LockedRoom, probe: Path
) -> None:
    result, outcome = _probe(room, probe, "syscalls")
    assert result.exit_code == 0, result.stderr_tail
    assert outcome is not None
    for call in (
        "unshare_user",
        "unshare_net",
        "mount_tmpfs",
        "ptrace_init",
        "ptrace_traceme",
        "socket_raw",
        "socket_packet",
        "socket_netlink",
        "clone_newns",
        "setns",
        "bpf",
        "keyctl",
        "perf_event_open",
        "userfaultfd",
        "chroot",
    ):
        assert outcome[call] == "EPERM", (call, outcome)
    assert outcome["clone3"] == "ENOSYS"  # so glibc falls back to clone, whose flags are checked
    assert outcome["io_uring_setup"] == "ENOSYS"
    assert outcome["socket_tcp"] == "ok" and outcome["fork_exit"] == 7
    assert outcome["capabilities"] == 0
    assert outcome["uid"] == _room_uid() and outcome["uid"] != 0


@pytest.mark.parametrize("abi", ["i386", "x32"])
def test_non_native_system_call_abis_are_killed(room: LockedRoom, probe: Path, abi: str) -> None:
    result, outcome = _probe(room, probe, abi)
    assert outcome is None and result.exit_code == 128 + 31
    assert result.reason == "the fetcher was ended by SIGSYS"


def test_the_root_holds_only_node_plugin_sources_and_tmp(
    room: LockedRoom, probe: Path, user_home: Path
) -> None:
    # The probe has no permission model: a user's home must be absent from the room's root
    # even though the room's user could read it on the host.
    result = run_argv_for_tests(room, probe, ["files", str(user_home / ".netrc")], SMALL)
    outcome = json.loads(result.stdout) if result.stdout.startswith(b"{") else None
    assert result.exit_code == 0, result.stderr_tail
    assert outcome is not None
    for path in (
        "/etc/passwd",
        "/proc/1/environ",
        "/proc/self/environ",
        "/root",
        "/dev/null",
        "/sys",
        "/home",
        "/work",
        str(user_home / ".netrc"),
    ):
        assert outcome[path] == "ENOENT", (path, outcome)
    assert outcome["write_plugin"] == "EROFS" and outcome["write_root"] == "EROFS"
    assert outcome["write_tmp"] == "ok"
    assert sorted(outcome["root"].split()) == ["plugin", "sources", "tmp", "usr"]


def test_a_fork_bomb_stops_at_the_task_limit(room: LockedRoom, probe: Path) -> None:
    result, outcome = _probe(room, probe, "forkbomb")
    assert result.killed_by == "tasks", (outcome, result.stderr_tail)
    assert result.reason == "started more than 32 tasks"
    assert outcome is not None and outcome["forks"] < 32


# -- a missing layer refuses the run ---------------------------------------------------------


def test_without_bubblewrap_the_room_refuses_to_run() -> None:
    room = LockedRoom(bwrap="/nonexistent/bwrap")
    with pytest.raises(RoomRefused, match="bubblewrap"):
        room.run({"fetch.mjs": b"console.log('ran')"}, {}, CONTEXT, SMALL)


def test_as_root_without_the_rooms_user_the_room_refuses_to_run() -> None:
    _require_root("dropping to the room's user")
    room = LockedRoom(user="almanac-no-such-user")
    with pytest.raises(RoomRefused, match="never runs as root"):
        room.run({"fetch.mjs": b"console.log('ran')"}, {}, CONTEXT, SMALL)


# A fresh interpreter (compiled_filter() is cached per process) asks the room to run once in a
# private mount namespace where the test has changed what the host offers; it prints what
# happened and every program it started.
_REFUSAL_CHILD = r"""
import json, subprocess, sys
started = []
real_popen = subprocess.Popen
def watched_popen(argv, *args, **kwargs):
    started.append([str(a) for a in argv])
    return real_popen(argv, *args, **kwargs)
subprocess.Popen = watched_popen
from almanac.platform.contract.manifest import Manifest, parse_manifest
from almanac.sandbox.limits import RoomLimits
from almanac.sandbox.room import LockedRoom, RoomRefused
context = json.loads(sys.argv[1])
try:
    result = LockedRoom().run(
        {"fetch.mjs": b"console.log('ran')"}, {}, context, RoomLimits(seconds=3, megabytes=64)
    )
    outcome = {"ran": result.stdout.decode(), "layers": dict(result.layers)}
except RoomRefused as exc:
    outcome = {"refused": str(exc)}
except Exception as exc:
    outcome = {"error": f"{type(exc).__name__}: {exc}"}
outcome["started"] = started
print(json.dumps(outcome))
"""


def _libseccomp_file() -> Path:
    """The file the dynamic loader opens for libseccomp.so.2 on this host."""
    ldconfig = shutil.which("ldconfig", path="/usr/sbin:/sbin:/usr/bin:/bin") or "ldconfig"
    listing = subprocess.run(
        [ldconfig, "-p"], capture_output=True, text=True, check=True, env={"LC_ALL": "C"}
    ).stdout
    native = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(os.uname().machine, "")
    for line in listing.splitlines():
        if line.strip().startswith("libseccomp.so.2 ") and native in line:
            return Path(line.split("=>")[1].strip()).resolve()
    pytest.fail(f"libseccomp.so.2 is not installed: {listing[:200]}")


def _room_on_a_changed_host(tmp_path: Path, mounts: list[str]) -> dict:
    """Run the room once in a private mount namespace after `mounts` (shell commands)."""
    _require_root("changing what the host offers (util-linux unshare)")
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    script = " && ".join([*(m.format(empty=empty) for m in mounts), 'exec "$@"'])
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
            sys.executable,
            "-c",
            _REFUSAL_CHILD,
            json.dumps(CONTEXT),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo / "src")},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


# Made a user namespace's root with the host's whole identity map (so the room's user exists
# in it), this child sets its namespace's user.max_user_namespaces (the real kernel limit, and
# the file the room reads) and then becomes the room child above. The limit dies with it.
_USERNS_CHILD = r"""
import ctypes, json, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
    sys.exit(f"unshare: {os.strerror(ctypes.get_errno())}")
print("unshared", flush=True)
sys.stdin.readline()  # the test has written the uid and gid maps
limit, child, context = sys.argv[1:]
if limit != "-":
    with open("/proc/sys/user/max_user_namespaces", "w") as knob:
        knob.write(limit)
probe = subprocess.run(["unshare", "--user", "true"], capture_output=True, text=True)
print(json.dumps({"limit": open("/proc/sys/user/max_user_namespaces").read().strip(),
                  "nested_userns": probe.returncode == 0, "why": probe.stderr.strip()}),
      flush=True)
os.execv(sys.executable, [sys.executable, "-c", child, context])
"""


def _room_in_a_user_namespace(limit: str) -> tuple[dict, dict]:
    """Run the room once as root of a fresh user namespace whose user.max_user_namespaces is
    `limit` ("-": left alone). Returns what the namespace offered and what the room did."""
    _require_root("mapping the host's users into a namespace (util-linux unshare)")
    repo = Path(__file__).resolve().parents[2]
    child = subprocess.Popen(
        [sys.executable, "-c", _USERNS_CHILD, limit, _REFUSAL_CHILD, json.dumps(CONTEXT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo / "src")},
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline() == "unshared\n", child.stderr and child.stderr.read()
        for name in ("uid_map", "gid_map"):
            Path(f"/proc/{child.pid}/{name}").write_text("0 0 4294967295\n")
        out, err = child.communicate("go\n", timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    offered, outcome = (json.loads(line) for line in out.splitlines()[-2:])
    return offered, outcome


def test_in_a_user_namespace_with_nested_namespaces_allowed_the_room_runs() -> None:
    """The control for the test below: the same child, the limit left alone."""
    offered, outcome = _room_in_a_user_namespace("-")
    assert offered["nested_userns"] is True, offered
    assert outcome.get("ran") == "ran\n", outcome


def test_without_user_namespaces_the_room_refuses_to_run() -> None:
    """The real host condition: user.max_user_namespaces is 0, so the kernel refuses every new
    user namespace (checked with unshare first). The room says why and starts nothing: no
    bubblewrap, no Node. (This container lacks CAP_SYS_RESOURCE, so the host's own setting
    cannot be changed; the limit is set in a user namespace of the test's own instead.)"""
    offered, outcome = _room_in_a_user_namespace("0")
    assert offered["limit"] == "0" and offered["nested_userns"] is False, offered
    assert outcome.get("refused") == (
        "user namespaces are disabled (user.max_user_namespaces is 0)"
    ), outcome
    assert _started_nothing(outcome), outcome


def _started_nothing(outcome: dict) -> bool:
    return not any("--unshare-user" in argv for argv in outcome["started"])


def test_the_host_check_child_runs_the_room_when_nothing_is_changed(tmp_path: Path) -> None:
    """The control for the two tests below: the same child, the same namespace, no change."""
    outcome = _room_on_a_changed_host(tmp_path, [])
    assert outcome.get("ran") == "ran\n", outcome
    assert outcome["layers"]["seccomp"] is True


def test_with_an_unloadable_libseccomp_the_room_refuses_to_run(tmp_path: Path) -> None:
    # An empty file where the loader finds libseccomp.so.2: the bindings cannot load it.
    library = _libseccomp_file()
    outcome = _room_on_a_changed_host(tmp_path, [f"mount --bind {{empty}} {library}"])
    assert "refused" in outcome, outcome
    assert outcome["refused"].startswith("seccomp is unavailable:"), outcome
    assert "libseccomp" in outcome["refused"]
    assert _started_nothing(outcome), outcome


def test_without_libseccomp_the_room_refuses_to_run(tmp_path: Path) -> None:
    # The library file and the loader's cache both empty: ctypes finds no libseccomp.
    library = _libseccomp_file()
    outcome = _room_on_a_changed_host(
        tmp_path,
        [f"mount --bind {{empty}} {library}", "mount --bind {empty} /etc/ld.so.cache"],
    )
    assert _started_nothing(outcome), outcome
    assert outcome.get("refused", "").startswith("seccomp is unavailable"), outcome


def test_without_seccomp_in_the_kernel_the_room_refuses_to_run(tmp_path: Path) -> None:
    # The kernel's answer: no /proc/sys/kernel/seccomp/actions_avail, as on a kernel built
    # without CONFIG_SECCOMP_FILTER (an empty tmpfs hides the real folder).
    outcome = _room_on_a_changed_host(tmp_path, ["mount -t tmpfs none /proc/sys/kernel/seccomp"])
    assert outcome.get("refused") == "the kernel has no seccomp filter support", outcome
    assert _started_nothing(outcome), outcome


def _manifest(doc: dict[str, object]) -> Manifest:
    parsed = parse_manifest(doc)
    assert parsed.manifest is not None, parsed.problems
    return parsed.manifest


def test_limits_come_from_the_manifest_and_only_lower_the_defaults() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "uk-bank-holidays"
    doc = json.loads((example / "plugin.json").read_text())
    del doc["limits"]
    assert RoomLimits.for_manifest(_manifest(doc)) == RoomLimits(seconds=120, megabytes=256)
    lowered = RoomLimits.for_manifest(
        _manifest({**doc, "limits": {"seconds": 30, "megabytes": 128}})
    )
    assert (lowered.seconds, lowered.megabytes, lowered.heap_megabytes) == (30, 128, 64)
    with pytest.raises(ValueError):
        RoomLimits(seconds=121)
