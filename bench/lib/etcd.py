"""etcd (Debian's etcd-server) on loopback for the fleet workloads: a single
member (W5) or a cluster of three (W6), each with its own data dir and free
ports, stopped on every exit path; which member leads; and the keys under a
prefix, read over etcd's v3 JSON gateway (docs/fleet.md)."""
import base64
import contextlib
import json
import os
import signal
import urllib.error
import urllib.request

from .guard import HarnessError, signals_blocked, spawn, stop, wait_until
from .test_kit import free_port

ETCD = "etcd"
TIMEOUT_S = 2.0
HEARTBEAT_MS = 250  # a cluster's raft heartbeat (cluster())


def _post(url, path, body):
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as reply:
        return json.load(reply)


def healthy(url):
    try:
        with urllib.request.urlopen(url + "/health", timeout=TIMEOUT_S) as reply:
            return json.load(reply).get("health") == "true"
    except (OSError, ValueError, urllib.error.URLError):
        return False


def _b64(text):
    return base64.b64encode(text.encode()).decode()


def prefix_end(prefix):
    """The range end that covers every key starting with `prefix`."""
    raw = bytearray(prefix.encode())
    raw[-1] += 1
    return raw.decode()


def keys_under(url, prefix):
    """[(key, create_revision)] under `prefix`, oldest first; None when etcd
    does not answer (the sample is then left out, not counted as 0)."""
    try:
        reply = _post(url, "/v3/kv/range", {"key": _b64(prefix), "range_end": _b64(prefix_end(prefix))})
    except (OSError, ValueError, urllib.error.URLError):
        return None
    kvs = [(base64.b64decode(kv["key"]).decode(errors="replace"), int(kv["create_revision"]))
           for kv in reply.get("kvs", [])]
    return sorted(kvs, key=lambda kv: (kv[1], kv[0]))


def leader(urls):
    """The index of the member that leads (by its own status), or None."""
    for i, url in enumerate(urls):
        try:
            status = _post(url, "/v3/maintenance/status", {})
        except (OSError, ValueError, urllib.error.URLError):
            continue
        if status.get("leader") and status.get("leader") == status.get("header", {}).get("member_id"):
            return i
    return None


def _member_args(name, data_dir, client_url, peer_url, cluster):
    return [ETCD, f"--name={name}", f"--data-dir={data_dir}",
            f"--listen-client-urls={client_url}", f"--advertise-client-urls={client_url}",
            f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster={cluster}", "--initial-cluster-state=new",
            # Three members and the simulator share this machine's CPUs: with
            # etcd's defaults (100 ms heartbeats, 1 s election timeout) a busy
            # second starts an election, and W6 at 1,000 hosts saw twenty of
            # them in three minutes. etcd's tuning guide sizes these to the
            # environment: the election timeout ten heartbeats, as default.
            f"--heartbeat-interval={HEARTBEAT_MS}", f"--election-timeout={10 * HEARTBEAT_MS}"]


@contextlib.contextmanager
def cluster(work_dir, log_dir, size=3):
    """Starts `size` members as one cluster; yields [(client URL, process)]
    once a leader is elected; stops them all (and only them) on the way out.
    Their open-file limit is this process's (the caller raises it)."""
    names = [f"m{i + 1}" for i in range(size)]
    clients = [f"http://127.0.0.1:{free_port()}" for _ in names]
    peers = [f"http://127.0.0.1:{free_port()}" for _ in names]
    initial = ",".join(f"{n}={p}" for n, p in zip(names, peers))
    procs = []
    try:
        for name, client_url, peer_url in zip(names, clients, peers):
            data_dir = os.path.join(work_dir, name)
            os.makedirs(data_dir, exist_ok=True)
            procs.append(spawn(_member_args(name, data_dir, client_url, peer_url, initial),
                               log_path=os.path.join(log_dir, f"etcd-{name}.log")))
        wait_until(lambda: leader(clients) is not None or any(p.poll() is not None for p in procs),
                   60, interval=0.2, what="the etcd cluster to elect a leader")
        if any(p.poll() is not None for p in procs):
            raise HarnessError(f"an etcd member exited; see {log_dir}/etcd-*.log")
        yield list(zip(clients, procs))
    finally:
        with signals_blocked():
            for proc in procs:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGCONT)  # a paused member stops too
                stop(proc, grace=10.0)


@contextlib.contextmanager
def member(work_dir, log_path):
    """Starts etcd; yields its client URL; stops it (and it alone) on the way out."""
    client_url = f"http://127.0.0.1:{free_port()}"
    peer_url = f"http://127.0.0.1:{free_port()}"
    os.makedirs(work_dir, exist_ok=True)
    proc = spawn([ETCD, "--name=w5", f"--data-dir={os.path.join(work_dir, 'data')}",
                  f"--listen-client-urls={client_url}", f"--advertise-client-urls={client_url}",
                  f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
                  f"--initial-cluster=w5={peer_url}"], log_path=log_path)
    try:
        wait_until(lambda: healthy(client_url) or proc.poll() is not None, 30,
                   interval=0.1, what="etcd to answer")
        if proc.poll() is not None:
            raise HarnessError(f"etcd exited ({proc.returncode}); see {log_path}")
        yield client_url
    finally:
        with signals_blocked():
            stop(proc, grace=10.0)
