"""The browser tier's machinery: network and mount namespaces of the test's
own, a private bus shaped like the system bus, the real trimd on it,
cockpit-ws serving the page from a staged install, and headless Chromium
under chromedriver, driven by Selenium. What outlives a step (the fixture's
setup) is pushed as an Undo step to a kept cleanup (tests/pykit), so the
checks, each its own process, find it running and the cleanup test ends it."""

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pykit.checks import log  # noqa: E402,F401  (re-exported)
from pykit.cleanup import Cleanup, Undo, run_step  # noqa: E402,F401  (Cleanup re-exported)
from pykit.net import free_port, port_answers  # noqa: E402
from pykit.proc import run, wait_for  # noqa: E402,F401  (re-exported)

COCKPIT_WS = "/usr/lib/cockpit/cockpit-ws"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
TOOLS = ["dbus-daemon", "busctl", "cockpit-bridge", "losetup", "mkfs.ext4", "mount", "umount",
         "unshare", "ip", "setpriv"]
NOBODY = 65534  # user nobody, group nogroup


def missing_prerequisite(axe_js):
    if os.geteuid() != 0:
        return "needs root"
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    missing += [path for path in (COCKPIT_WS, CHROMIUM, CHROMEDRIVER, str(axe_js))
                if not os.access(path, os.R_OK)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("python3-selenium (run with /usr/bin/python3)")
    if missing:
        return "missing: " + ", ".join(missing)
    if not Path("/dev/loop-control").exists():
        return "no /dev/loop-control"
    return None


# ---- processes that outlive the step that starts them ----

def start_process(kept, name, argv, log_path, **kwargs):
    """A child with its output appended to `log_path`, in a session of its
    own; its stop (SIGTERM, then SIGKILL) pushed to `kept`. Returns its pid."""
    with open(log_path, "ab") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True, **kwargs)
    kept.push(f"stop {name}", Undo.process(process.pid, grace=5))
    return process.pid


def stop_process(pid):
    run_step(Undo.process(pid, grace=5))


def tail(path, chars=3000):
    return Path(path).read_text(errors="replace")[-chars:]


# ---- namespaces ----

_CLONE_NEWNS = 0x00020000
_CLONE_NEWNET = 0x40000000


def start_namespaces(kept):
    """A process that holds a new network and mount namespace (private
    mount propagation: the test's loop mounts stay in it, seen by its trimd
    only) for the checks to enter; loopback is brought up in it. Returns its pid."""
    holder = subprocess.Popen(["unshare", "--net", "--mount", "--propagation", "private", "--",
                               "sleep", "infinity"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    kept.push("end the namespaces", Undo.process(holder.pid, grace=5))
    own = os.readlink("/proc/self/ns/net")
    if not wait_for(lambda: _net_namespace(holder.pid) not in (None, own), 10, step=0.02):
        raise RuntimeError("unshare did not make its namespaces")
    return holder.pid


def _net_namespace(pid):
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def enter_namespaces(pid):
    """This process (still single-threaded: before Selenium or anything
    that starts a thread) joins `pid`'s network and mount namespaces."""
    libc = ctypes.CDLL(None, use_errno=True)
    cwd = os.getcwd()
    for kind, flag in (("net", _CLONE_NEWNET), ("mnt", _CLONE_NEWNS)):
        fd = os.open(f"/proc/{pid}/ns/{kind}", os.O_RDONLY)
        try:
            if libc.setns(fd, flag) != 0:
                error = ctypes.get_errno()
                raise OSError(error, f"setns {kind} of {pid}: {os.strerror(error)}")
        finally:
            os.close(fd)
    os.chdir(cwd)  # setns of a mount namespace moves to its root
    run(["ip", "link", "set", "lo", "up"])


# ---- the bus, trimd, cockpit-ws ----

class Bus:
    """dbus-daemon with the test config shaped like the system bus, at a socket in `work`."""

    def __init__(self, address):
        self.address = address

    @classmethod
    def start(cls, kept, config, work):
        socket = Path(work) / "system_bus"
        bus = cls(f"unix:path={socket}")
        start_process(kept, "dbus-daemon", ["dbus-daemon", f"--config-file={config}", "--nofork",
                                            f"--address={bus.address}"], Path(work) / "dbus.log")
        if not wait_for(socket.exists, 10):
            raise RuntimeError("dbus-daemon did not start")
        return bus

    def busctl(self, *args, check=True):
        return run(["busctl", f"--address={self.address}", *args], check=check, timeout=20)

    def get(self, path, interface, prop):
        """A property's value as busctl prints it, without its type: '"paused"' -> 'paused'."""
        out = self.busctl("get-property", "org.trimd.trimd1", path, interface, prop, check=False)
        if out.returncode != 0:
            return None
        value = out.stdout.strip().split(" ", 1)[1]
        return value.strip('"')

    def manager(self, prop):
        return self.get("/org/trimd/trimd1", "org.trimd.trimd1.Manager", prop)

    def filesystem_path(self, mount_point):
        tree = self.busctl("--list", "tree", "org.trimd.trimd1", check=False).stdout.split()
        for path in tree:
            if path.startswith("/org/trimd/trimd1/filesystem/") and \
                    self.get(path, "org.trimd.trimd1.Filesystem", "MountPoint") == str(mount_point):
                return path
        return None


class Trimd:
    """The built trimd on `bus`, with its config and state dir in `work`;
    start() (its stop pushed to `kept`) and stop() at will."""

    def __init__(self, binary, bus, work, pid=None):
        self.binary, self.bus, self.work, self.pid = binary, bus, Path(work), pid
        self.config = self.work / "trimd.toml"
        self.log = self.work / "trimd.log"

    def start(self, kept):
        argv = [self.binary, "--config", str(self.config), "--state-dir", str(self.work / "state"),
                "--bus-address", self.bus.address, "--log-level", "debug", "--log-format", "json"]
        self.pid = start_process(kept, "trimd", argv, self.log)
        if not wait_for(lambda: self.bus.manager("State") is not None, 15):
            raise RuntimeError("trimd did not come up on the bus:\n" + tail(self.log))

    def stop(self):
        stop_process(self.pid)


class CockpitWs:
    """cockpit-ws --no-tls --local-session=cockpit-bridge on a loopback port,
    as `uid` (the bridge runs as the same user), serving packages from
    `data_dir`/cockpit before /usr/share/cockpit."""

    PAGE = "/cockpit/@localhost/trimd/index.html"

    def __init__(self, kept, bus, data_dir, work, uid=0):
        self.port = free_port()
        home = Path(work) / f"home-{uid}"
        home.mkdir(exist_ok=True)
        os.chown(home, uid, uid)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
               "XDG_DATA_DIRS": f"{data_dir}:/usr/share", "LANG": "C.UTF-8",
               # Both buses are the private one: the bridge must not autolaunch a session bus.
               "DBUS_SYSTEM_BUS_ADDRESS": bus.address, "DBUS_SESSION_BUS_ADDRESS": bus.address}
        prefix = [] if uid == 0 else ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        argv = prefix + [COCKPIT_WS, "--no-tls", "--address", "127.0.0.1", "--port", str(self.port),
                         "--local-session=cockpit-bridge"]
        log_path = Path(work) / f"cockpit-ws-{uid}.log"
        self.pid = start_process(kept, f"cockpit-ws (uid {uid})", argv, log_path, env=env)
        if not wait_for(lambda: port_answers(self.port), 15):
            raise RuntimeError("cockpit-ws did not answer:\n" + tail(log_path))
        self.url = url_of(self.port)


def url_of(port):
    return f"http://127.0.0.1:{port}{CockpitWs.PAGE}"


# ---- Chromium ----

def _options(work):
    from selenium import webdriver
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--force-device-scale-factor=1",
                f"--user-data-dir={Path(work) / 'chromium'}"):
        options.add_argument(arg)
    return options


def chromium(cleanup, work):
    """Headless Chromium under chromedriver (both Debian's), for this process
    alone: both go when `cleanup` runs."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    service = Service(CHROMEDRIVER, log_path=str(Path(work) / "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=_options(work))
    cleanup.push("quit chromium", driver.quit)
    driver.set_script_timeout(30)
    return driver


def start_browser(kept, work):
    """chromedriver and a Chromium session in it that outlive this process:
    {"url": ..., "session": ...} for attach_browser() in another one."""
    from selenium import webdriver
    port = free_port()
    start_process(kept, "chromedriver", [CHROMEDRIVER, f"--port={port}"],
                  Path(work) / "chromedriver.log")
    url = f"http://127.0.0.1:{port}"
    if not wait_for(lambda: port_answers(port), 15):
        raise RuntimeError("chromedriver did not answer:\n" + tail(Path(work) / "chromedriver.log"))
    driver = webdriver.Remote(command_executor=url, options=_options(work))
    session = {"url": url, "session": driver.session_id}
    quit_session = "import urllib.request as u; u.urlopen(u.Request(%r, method='DELETE'), timeout=30)"
    kept.push("quit chromium", Undo.command(
        [sys.executable, "-c", quit_session % f"{url}/session/{driver.session_id}"]))
    driver.set_script_timeout(30)
    return session


def attach_browser(browser):
    """The session start_browser() made, driven from this process (which
    must not quit it: the cleanup test does)."""
    from selenium import webdriver

    class Attached(webdriver.Remote):
        def start_session(self, capabilities, browser_profile=None):
            self.session_id = browser["session"]
            self.caps = {"browserName": "chrome"}

    return Attached(command_executor=browser["url"], options=webdriver.ChromeOptions())
