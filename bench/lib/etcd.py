"""A single-member etcd (Debian's etcd-server) on loopback for the fleet
workload: its own data dir and free ports, stopped on every exit path; and
the keys under a prefix, read over etcd's v3 JSON gateway (docs/fleet.md)."""
import base64
import contextlib
import json
import os
import urllib.error
import urllib.request

from .guard import HarnessError, signals_blocked, spawn, stop, wait_until
from .test_kit import free_port

ETCD = "etcd"
TIMEOUT_S = 2.0


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
