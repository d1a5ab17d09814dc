"""Almanac past one machine, on this one (issue 34): each machine a network namespace of its own
with its own address on a bridge, all made and unmade here, used by the tests
(`inside_topology.py`), the benchmark (`bench_topology.py`) and `scripts/topology.sh`.

    client 10.77.0.1 (this process: the bridge, readers, operators, `almanac migrate`)
      |
    bridge ----+-------------+-------------+-------------+----------------+
               |             |             |             |                |
           pg .10        api1 .11      api2 .12       lb .20         dagster .30
         PostgreSQL    almanac up    almanac up     HAProxy :80     almanac up
         (throwaway    --only api    --only api     (/health        --only dagster
          cluster)       :8000         :8000         checks)          :3000

The process that builds it must already be in a network and mount namespace of its own
(`unshare --net --mount`, as `run_module_in_namespace` and `main` arrange): the bridge and the
client's address live there, so nothing here touches the machine's own network, and the
machines' namespaces are named in that mount namespace only. Every machine reaches the others
through the bridge and the client through its default route (the source stand-in of the tests
is the client's). Failures are made as they happen to machines: every process of a machine
killed at once (`Machine.kill`), PostgreSQL restarted, and the traffic between two machines
dropped (`cut`: nftables rules in one of them) and let through again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg

REPO = Path(__file__).resolve().parents[2]
SUBNET = "10.77.0"
CLIENT = f"{SUBNET}.1"
BRIDGE = "br-almanac"
ADDRESSES = {"pg": 10, "api1": 11, "api2": 12, "lb": 20, "dagster": 30}
API_PORT = 8000
DAGSTER_PORT = 3000
LB_PORT = 80
DATABASE = "almanac"
START_SECONDS = 240
"""Bound for a machine's part to answer after its start (a loaded 2-core box)."""
MARKER = "ALMANAC_TOPOLOGY_NAMESPACE"
"""Set in the namespace `main` makes, so it is not made twice."""

HAPROXY_CFG = """\
global
    maxconn 4096
    stats socket {socket} mode 600 level admin

defaults
    mode http
    timeout connect 1s
    timeout client 60s
    # A POST (an upload, a sign-in) may take long and is never sent twice.
    timeout server 60s
    timeout check 2s
    # A request whose machine died, closed the connection without an answer or, for a GET
    # or HEAD, said nothing for `GET_SECONDS`, goes to another machine (`redispatch`).
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response response-timeout

frontend readers
    bind {lb}:{lb_port}
    default_backend api

backend api
    balance roundrobin
    option forwardfor
    # Only a request not sent (conn-failure) is tried again unless it is safe to repeat.
    http-request disable-l7-retry unless METH_GET
    http-request set-timeout server {get_seconds}s if METH_GET
    http-response set-header X-Almanac-Machine %[srv_name]
    option httpchk GET /health
    http-check expect status 200
    default-server inter 1s fall 2 rise 2
{servers}
"""
GET_SECONDS = 3
"""How long HAProxy waits for a GET's answer before it asks another machine."""


def _run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload, no-any-return]


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


@dataclass
class Machine:
    """One machine: a named network namespace with its address on the bridge, and the
    processes started on it."""

    name: str
    namespace: str
    address: str
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def netns(self) -> str:
        return f"/run/netns/{self.namespace}"

    def command(self, command: list[str]) -> list[str]:
        return ["nsenter", f"--net={self.netns}", *command]

    def run(self, command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        return _run(self.command(command), **kwargs)

    def start(
        self, command: list[str], env: Mapping[str, str], log: Path
    ) -> subprocess.Popen[bytes]:
        """A process on this machine, its output appended to `log`."""
        with log.open("ab") as out:
            process = subprocess.Popen(
                self.command(command),
                env=dict(env),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.started.append(process)
        return process

    def pids(self) -> set[int]:
        """Every process of the machine: in its network namespace, and below what was started
        on it (the locked room's processes have network namespaces of their own)."""
        listed = subprocess.run(
            ["ip", "netns", "pids", self.namespace], capture_output=True, text=True
        ).stdout.split()
        found = {int(pid) for pid in listed}
        for process in self.started:
            if process.poll() is None:
                found |= {process.pid, *descendants(process.pid)}
        for pid in list(found):
            found |= descendants(pid)
        found.discard(os.getpid())
        return found

    def kill(self) -> int:
        """SIGKILL to every process of the machine at once, as when it loses power; waits
        until none is left. Returns how many there were."""
        pids = self.pids()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for process in self.started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=30)
        self.started = [p for p in self.started if p.poll() is None]
        deadline = time.monotonic() + 30
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.1)
        return len(pids)


class Topology:
    """The machines of the module's drawing, made by `build` and unmade by `teardown`."""

    def __init__(self, work: Path, prefix: str | None = None) -> None:
        self.work = work
        self.prefix = prefix or f"almanac{os.getpid()}"
        self.machines = {
            name: Machine(name, f"{self.prefix}-{name}", f"{SUBNET}.{last}")
            for name, last in ADDRESSES.items()
        }
        self.pg_dir = Path(tempfile.mkdtemp(prefix="almanac-topology-pg-"))
        self.pg_bin = Path(sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1])
        self.database_url = f"postgresql+psycopg://postgres@{self['pg'].address}:5432/{DATABASE}"
        self.lb = f"http://{self['lb'].address}:{LB_PORT}"
        self.ui = f"http://{self['dagster'].address}:{DAGSTER_PORT}"
        self.haproxy_socket = self.work / "haproxy.sock"

    def __getitem__(self, name: str) -> Machine:
        return self.machines[name]

    def api(self, name: str) -> str:
        return f"http://{self[name].address}:{API_PORT}"

    # The network

    def build_network(self) -> None:
        """The bridge with the client's address, and each machine on it."""
        assert os.environ.get(MARKER) == "1" or os.environ.get("ALMANAC_TEST_INSIDE_NAMESPACE"), (
            "the topology is built only in a network namespace of its own (see the module)"
        )
        _run(["ip", "link", "set", "lo", "up"])
        _run(["ip", "link", "add", BRIDGE, "type", "bridge"])
        _run(["ip", "addr", "add", f"{CLIENT}/24", "dev", BRIDGE])
        _run(["ip", "link", "set", BRIDGE, "up"])
        for machine in self.machines.values():
            self._wire(machine)

    def _wire(self, machine: Machine) -> None:
        veth = f"v-{machine.name}"
        _run(["ip", "netns", "add", machine.namespace])
        _run(
            [
                "ip",
                "link",
                "add",
                veth,
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                machine.namespace,
            ]
        )
        _run(["ip", "link", "set", veth, "master", BRIDGE, "up"])
        inside = ["ip", "-n", machine.namespace]
        _run([*inside, "link", "set", "lo", "up"])
        _run([*inside, "addr", "add", f"{machine.address}/24", "dev", "eth0"])
        _run([*inside, "link", "set", "eth0", "up"])
        _run([*inside, "route", "add", "default", "via", CLIENT])

    def cut(self, machine: str, other: str) -> None:
        """Every packet between `machine` and `other` dropped, both ways, without a word (an
        nftables table in `machine`): connections hang as over a broken link."""
        address = self[other].address
        rules = (
            "table inet almanac_cut {\n"
            "  chain out { type filter hook output priority 0; policy accept;"
            f" ip daddr {address} drop; }}\n"
            "  chain in { type filter hook input priority 0; policy accept;"
            f" ip saddr {address} drop; }}\n"
            "}\n"
        )
        self[machine].run(["nft", "-f", "-"], input=rules)

    def mend(self, machine: str) -> None:
        """The packets `cut` dropped go through again."""
        self[machine].run(["nft", "delete", "table", "inet", "almanac_cut"])

    # PostgreSQL

    def _as_postgres(self, command: str) -> list[str]:
        return self["pg"].command(["su", "postgres", "-s", "/bin/sh", "-c", command])

    def start_postgres(self) -> None:
        """A throwaway cluster of its own (scripts/pg_throwaway.sh's, on the machine's address),
        with the database `DATABASE`."""
        data = self.pg_dir / "data"
        shutil.chown(self.pg_dir, "postgres")
        _run(
            [
                "su",
                "postgres",
                "-s",
                "/bin/sh",
                "-c",
                f"{self.pg_bin}/initdb -D {data} -U postgres -A trust",
            ]
        )
        with (data / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {SUBNET}.0/24 trust\n")
        options = (
            f"-p 5432 -k {self.pg_dir} -c listen_addresses={self['pg'].address}"
            " -c max_connections=300 -c fsync=off"
        )
        _run(
            self._as_postgres(
                f"{self.pg_bin}/pg_ctl -D {data} -l {self.pg_dir}/log -w -o '{options}' start"
            )
        )
        with psycopg.connect(self.plain_url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')

    def restart_postgres(self) -> float:
        """PostgreSQL stopped (fast: every session ended) and started again; returns how long it
        did not answer, in seconds."""
        began = time.monotonic()
        data, log = self.pg_dir / "data", self.pg_dir / "log"
        _run(self._as_postgres(f"{self.pg_bin}/pg_ctl -D {data} -l {log} -w -m fast restart"))
        return time.monotonic() - began

    def plain_url(self, database: str = DATABASE) -> str:
        return f"postgresql://postgres@{self['pg'].address}:5432/{database}"

    # Almanac

    def environment(self, machine: str, home: Path) -> dict[str, str]:
        """`almanac`'s settings on `machine`: its own home, the shared store, its address."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ALMANAC_", "DAGSTER_"))}
        env.update(
            ALMANAC_HOME=str(home),
            ALMANAC_DATABASE_URL=self.database_url,
            ALMANAC_HOST=self[machine].address,
            ALMANAC_PORT=str(API_PORT),
            ALMANAC_DAGSTER_PORT=str(DAGSTER_PORT),
            ALMANAC_BASE_URL=self.lb,
            # uvicorn takes the reader's address from HAProxy's X-Forwarded-For.
            FORWARDED_ALLOW_IPS=self["lb"].address,
        )
        return env

    def migrate(self) -> str:
        """`almanac migrate`, once, from the client (an operator's machine)."""
        done = subprocess.run(
            [str(Path(sys.executable).parent / "almanac"), "migrate"],
            env=self.environment("pg", self.work / "operator"),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def start_role(self, machine: str, role: str) -> subprocess.Popen[bytes]:
        """`almanac up --only role` on `machine`, as an operator starts it there."""
        home = self.work / machine
        return self[machine].start(
            [str(Path(sys.executable).parent / "almanac"), "up", "--only", role],
            self.environment(machine, home),
            self.log(machine),
        )

    def log(self, machine: str) -> Path:
        return self.work / f"{machine}.log"

    def start_haproxy(self, servers: tuple[str, ...] = ("api1", "api2")) -> None:
        config = self.work / "haproxy.cfg"
        config.write_text(
            HAPROXY_CFG.format(
                socket=self.haproxy_socket,
                lb=self["lb"].address,
                lb_port=LB_PORT,
                get_seconds=GET_SECONDS,
                servers="\n".join(
                    f"    server {name} {self[name].address}:{API_PORT} check" for name in servers
                ),
            )
        )
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        self["lb"].start([haproxy, "-f", str(config), "-db"], os.environ, self.log("lb"))

    def haproxy(self, command: str) -> str:
        """One command on HAProxy's stats socket (`show stat`, `disable server api/api2`)."""
        import socket

        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(self.haproxy_socket))
            sock.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def server_states(self) -> dict[str, str]:
        """HAProxy's view of each API machine: UP, DOWN, MAINT, ..."""
        lines = self.haproxy("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        states = {}
        for line in lines[1:]:
            row = dict(zip(header, line.split(","), strict=False))
            if row.get("pxname") == "api" and row.get("svname") not in ("FRONTEND", "BACKEND"):
                states[row["svname"]] = row["status"]
        return states

    def wait_until(self, what: str, probe: object, bound: float = START_SECONDS) -> float:
        """Seconds until `probe()` is true; AssertionError naming `what` (with the logs' ends)
        after `bound`."""
        began = time.monotonic()
        while time.monotonic() - began < bound:
            with contextlib.suppress(httpx.HTTPError, OSError, psycopg.Error):
                if probe():  # type: ignore[operator]
                    return time.monotonic() - began
            time.sleep(0.2)
        tails = "".join(
            f"\n--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
            for path in sorted(self.work.glob("*.log"))
        )
        raise AssertionError(f"{what}: not within {bound} s{tails}")

    def answers(self, url: str) -> bool:
        return httpx.get(url, timeout=2).status_code == 200

    def start_api(self, machine: str) -> float:
        """The API role on `machine`, once it answers; returns the seconds it took."""
        self.start_role(machine, "api")
        return self.wait_until(
            f"{machine}'s API", lambda: self.answers(f"{self.api(machine)}/health")
        )

    def start_dagster(self) -> float:
        """The Dagster role, once its webserver answers; returns the seconds it took."""
        self.start_role("dagster", "dagster")
        return self.wait_until(
            "Dagster's webserver", lambda: self.answers(f"{self.ui}/server_info")
        )

    def wait_for_haproxy(self, up: tuple[str, ...] = ("api1", "api2")) -> float:
        return self.wait_until(
            f"HAProxy seeing {', '.join(up)} up",
            lambda: all(self.server_states().get(name) == "UP" for name in up),
        )

    def build(self) -> dict[str, float]:
        """Everything of the drawing, started in order: network, PostgreSQL, `almanac migrate`,
        the API machines, HAProxy, the Dagster machine. Returns the seconds each took."""
        took: dict[str, float] = {}
        began = time.monotonic()
        self.build_network()
        self.start_postgres()
        took["network and PostgreSQL"] = time.monotonic() - began
        began = time.monotonic()
        self.migrate()
        took["almanac migrate"] = time.monotonic() - began
        for name in ("api1", "api2"):
            self.start_role(name, "api")
        self.start_role("dagster", "dagster")
        self.start_haproxy()
        took["API machines behind HAProxy"] = self.wait_for_haproxy()
        took["Dagster machine"] = self.wait_until(
            "Dagster's webserver", lambda: self.answers(f"{self.ui}/server_info")
        )
        return took

    def teardown(self) -> None:
        """Every process of every machine killed, the namespaces and the bridge removed, the
        cluster's folder deleted."""
        for machine in self.machines.values():
            machine.kill()
        for machine in self.machines.values():
            subprocess.run(["ip", "netns", "del", machine.namespace], capture_output=True)
        subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True)
        shutil.rmtree(self.pg_dir, ignore_errors=True)


@contextlib.contextmanager
def topology(work: Path) -> Iterator[Topology]:
    """A built topology, torn down afterwards whatever happened."""
    made = Topology(work)
    try:
        made.build()
        yield made
    finally:
        made.teardown()


def main(argv: list[str]) -> int:
    """`scripts/topology.sh`: build the topology, print where everything is, and keep it until
    Ctrl-C (`--check`: ask HAProxy's /health through both API machines, then tear down)."""
    if os.environ.get(MARKER) != "1":
        # Once more, in a network and mount namespace of its own.
        command = [
            "unshare",
            "--net",
            "--mount",
            "--propagation",
            "private",
            sys.executable,
            "-m",
            "tests.topology.machines",
            *argv,
        ]
        # Ctrl-C reaches the namespace's process too, which tears the topology down itself.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        return subprocess.run(command, env={**os.environ, MARKER: "1"}, cwd=REPO).returncode
    work = Path(tempfile.mkdtemp(prefix="almanac-topology-"))
    stopped = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopped
        stopped = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    made = Topology(work)
    try:
        for step, seconds in made.build().items():
            print(f"{step}: {seconds:.1f} s", flush=True)
        print(f"HAProxy: {made.lb} -> {made.server_states()}")
        print(f"Dagster UI: {made.ui}; store: {made.database_url}; logs: {work}")
        answers = {httpx.get(f"{made.lb}/health").headers["x-almanac-machine"] for _ in range(4)}
        print(f"/health through HAProxy answered by {sorted(answers)}", flush=True)
        if "--check" in argv:
            return 0 if answers == {"api1", "api2"} else 1
        print(
            f"Reach it from this machine with: nsenter --net --target {os.getpid()} curl "
            f"{made.lb}/health ; Ctrl-C tears it down.",
            flush=True,
        )
        while not stopped:
            time.sleep(0.5)
        return 0
    finally:
        made.teardown()
        shutil.rmtree(work, ignore_errors=True)
        print("topology torn down", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
