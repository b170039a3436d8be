"""The browser tier's machinery: a private bus shaped like the system bus, the
real trimd on it, cockpit-ws serving the page from a staged install, and
headless Chromium driven by Selenium. Every process and mount is registered
with a Cleanup stack (tests/boot/boot_root.py), undone on any exit."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "boot"))
from boot_root import Cleanup, LoopFs, run, wait_for  # noqa: E402,F401  (re-exported)

COCKPIT_WS = "/usr/lib/cockpit/cockpit-ws"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
TOOLS = ["dbus-daemon", "busctl", "cockpit-bridge", "losetup", "mkfs.ext4", "mount", "umount",
         "unshare", "ip", "setpriv"]
NOBODY = 65534  # user nobody, group nogroup


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Process:
    """A child with its output in `log_path`; terminated (then killed) on cleanup."""

    def __init__(self, cleanup, name, argv, log_path, **kwargs):
        self.name = name
        self.log_path = Path(log_path)
        with open(self.log_path, "ab") as out:
            self.popen = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, **kwargs)
        cleanup.push(f"stop {name}", self.stop)

    def stop(self):
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()

    def tail(self, chars=3000):
        return self.log_path.read_text(errors="replace")[-chars:]


class Bus:
    """dbus-daemon with the bus tier's system-bus-like config, at a socket in `work`."""

    def __init__(self, cleanup, config, work):
        self.socket = Path(work) / "system_bus"
        self.address = f"unix:path={self.socket}"
        Process(cleanup, "dbus-daemon", ["dbus-daemon", f"--config-file={config}", "--nofork",
                                         f"--address={self.address}"], Path(work) / "dbus.log")
        if not wait_for(self.socket.exists, 10):
            raise RuntimeError("dbus-daemon did not start")

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
    """The built trimd on `bus`, with `config` and a state dir in `work`; start/stop at will."""

    def __init__(self, cleanup, binary, bus, config, work):
        self.cleanup, self.binary, self.bus, self.work = cleanup, binary, bus, Path(work)
        self.config = self.work / "trimd.toml"
        self.config.write_text(config)
        self.process = None

    def start(self):
        argv = [self.binary, "--config", str(self.config), "--state-dir", str(self.work / "state"),
                "--bus-address", self.bus.address, "--log-level", "debug", "--log-format", "json"]
        self.process = Process(self.cleanup, "trimd", argv, self.work / "trimd.log")
        if not wait_for(lambda: self.bus.manager("State") is not None, 15):
            raise RuntimeError("trimd did not come up on the bus:\n" + self.process.tail())

    def stop(self):
        self.process.stop()


class CockpitWs:
    """cockpit-ws --no-tls --local-session=cockpit-bridge on a loopback port,
    as `uid` (the bridge runs as the same user), serving packages from
    `data_dir`/cockpit before /usr/share/cockpit."""

    def __init__(self, cleanup, bus, data_dir, work, uid=0):
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
        self.process = Process(cleanup, f"cockpit-ws (uid {uid})", argv,
                               Path(work) / f"cockpit-ws-{uid}.log", env=env)
        if not wait_for(self._answers, 15):
            raise RuntimeError("cockpit-ws did not answer:\n" + self.process.tail())
        self.url = f"http://127.0.0.1:{self.port}/cockpit/@localhost/trimd/index.html"

    def _answers(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False


def chromium(cleanup, work):
    """Headless Chromium under chromedriver (both Debian's), in this network namespace."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--force-device-scale-factor=1",
                f"--user-data-dir={Path(work) / 'chromium'}"):
        options.add_argument(arg)
    service = Service(CHROMEDRIVER, log_path=str(Path(work) / "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    cleanup.push("quit chromium", driver.quit)
    driver.set_script_timeout(30)
    return driver


def enter_own_network_namespace(argv):
    """Re-runs this script in a network and mount namespace of its own (so no
    other user reaches cockpit-ws's session, and the loop mounts are seen by
    this test's trimd only), with loopback up. Returns only inside it."""
    if os.environ.get("TRIMD_BROWSER_NETNS") == "1":
        run(["ip", "link", "set", "lo", "up"])
        return
    env = dict(os.environ, TRIMD_BROWSER_NETNS="1")
    result = subprocess.run(["unshare", "--net", "--mount", "--propagation", "private", "--",
                             sys.executable, *argv], env=env)
    sys.exit(result.returncode)
