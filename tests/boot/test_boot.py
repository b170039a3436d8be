#!/usr/bin/env python3
"""Boot tier: trimd's .deb in a Debian 12 container booted with systemd.

`setup` builds the .deb (or takes the one scripts/test-all.sh built),
installs it into a cached minbase root (on a loop-backed ext4 of its own),
binds in three loop filesystems (one mounted with discard, one on the
slow-TRIM device, bench/slowtrim, given with --slowtrim) and boots the root
with systemd-nspawn; `check NAME` runs one check against the running
container (the checks are in the modules of CHECK_MODULES, `list` names
them); `cleanup` powers it off and undoes the rest. ctest runs each as a
test of its own (boot_setup, boot_<check>, boot_cleanup: CMakeLists.txt);
`all` runs everything in one go.

A step exits 0 when its checks pass, 1 on a failure, 77 when this machine
lacks root or a tool (a failure instead under CI=true). Everything it made
is undone on every exit path (a setup that fails undoes its own; a run that
was interrupted is undone by the next setup)."""

import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# The modules whose @check functions make the tier, in the order ctest runs
# them (each module's checks in the order they are written there).
CHECK_MODULES = ["boot_service", "boot_citizen", "boot_cockpit", "boot_fleet"]
for _module in CHECK_MODULES:
    __import__(_module)

from boot_context import (FSTRIM_DROPIN, PASS_CONFIG, SLOWTRIM, TAKEOVER,  # noqa: E402
                          TRIMD_DROPIN, TRIMTEST, check)
from boot_root import Container, SlowTrimFs, cached_root_tarball, run, wait_for  # noqa: E402
from boot_cockpit import CockpitLogin  # noqa: E402
from pykit import fixture  # noqa: E402
from pykit.checks import log  # noqa: E402
from pykit.cleanup import Undo  # noqa: E402
from pykit.loopfs import LoopFs  # noqa: E402

checks = check  # fixture.main's name for the registry
NAME = "boot tier"
TOOLS = ["debootstrap", "systemd-nspawn", "nsenter", "dpkg-buildpackage", "dh", "mkfs.ext4",
         "losetup", "setpriv"]


def add_arguments(parser):
    parser.add_argument("--source", help="trimd's source tree (setup: the .deb is built from it)")
    parser.add_argument("--deb", type=Path, help="use this .deb instead of building one")
    parser.add_argument("--slowtrim", help="bench/slowtrim, for the umount in the middle of a chunk")
    parser.add_argument("--artefacts", type=Path, help="where the Cockpit page's screenshot goes")


def missing(args):
    if os.geteuid() != 0:
        return "needs root"
    absent = [tool for tool in TOOLS if shutil.which(tool) is None]
    if absent:
        return "missing tools: " + ", ".join(absent)
    if not Path("/dev/loop-control").exists():
        return "no /dev/loop-control"
    # The Cockpit page is looked at with the browser tier's Chromium.
    browser = [p for p in ("/usr/bin/chromium", "/usr/bin/chromedriver") if not os.access(p, os.X_OK)]
    if browser or run(["/usr/bin/python3", "-c", "import selenium"], check=False).returncode != 0:
        return "missing: chromium, chromium-driver or python3-selenium (for the Cockpit page)"
    if not args.slowtrim or not os.access(args.slowtrim, os.X_OK):
        return f"no slowtrim binary ({args.slowtrim!r}; build with -DTRIMD_BUILD_BENCH=ON)"
    if not Path("/dev/fuse").exists():
        return "no /dev/fuse (slowtrim)"
    if not args.deb and not args.source:
        return "neither --deb nor --source"
    return None


# scripts/test-all.sh builds the .deb beside the other tiers into this
# directory and leaves "ok" or "failed" there when done.
PREBUILT_DEB_DIR = "TRIMD_PREBUILT_DEB_DIR"


def prebuilt_deb():
    """The .deb scripts/test-all.sh built meanwhile; None when it did not
    (then this tier builds its own, and shows why a build fails)."""
    where = os.environ.get(PREBUILT_DEB_DIR)
    if not where:
        return None
    where = Path(where)
    log(f"waiting for the .deb being built in {where}")
    wait_for(lambda: (where / "ok").exists() or (where / "failed").exists(), 1800, step=1.0)
    found = sorted(where.glob("trimd_*.deb"))
    if not (where / "ok").exists() or not found:
        log("the .deb built beside the tiers is not there: building it here")
        return None
    return found[-1]


def build_deb(source, out):
    prebuilt = prebuilt_deb()
    if prebuilt:
        return prebuilt
    log("building the .deb")
    script = Path(__file__).resolve().parent / "build_deb.sh"
    run(["bash", str(script), source, str(out)], timeout=1800)
    return next(out.glob("trimd_*.deb"))


def cockpit_deb_beside(deb):
    """trimd-cockpit's .deb, built with trimd's (build_deb.sh) into the same place."""
    found = sorted(deb.parent.glob("trimd-cockpit_*.deb"))
    if not found:
        raise RuntimeError(f"no trimd-cockpit_*.deb beside {deb}")
    return found[-1]


def prepare_root(kept, work, deb, cockpit):
    image = LoopFs.create(kept, work / "root.img", 2048, work / "root")
    tarball = cached_root_tarball(log, deb)
    run(["tar", "-C", str(image.mount_point), "--numeric-owner", "-xf", str(tarball)])
    root = image.mount_point
    shutil.copy(deb, root / "tmp" / "trimd.deb")
    shutil.copy(cockpit.deb, root / "tmp" / "trimd-cockpit.deb")
    log(f"root: dpkg -i {deb.name} {cockpit.deb.name}")
    print(run(["chroot", str(root), "dpkg", "-i", "/tmp/trimd.deb", "/tmp/trimd-cockpit.deb"])
          .stdout.strip()[-400:])
    cockpit.configure(root)
    for unit, text in (("trimd.service", TRIMD_DROPIN), ("fstrim.service", FSTRIM_DROPIN)):
        dropin = root / "etc/systemd/system" / f"{unit}.d"
        dropin.mkdir(parents=True, exist_ok=True)
        (dropin / "boot-test.conf").write_text(text)
    (root / "etc/trimd/trimd.toml").write_text(PASS_CONFIG)
    run(["chroot", str(root), "useradd", "--no-create-home", "alice"])
    run(["chroot", str(root), "chpasswd"], input=f"alice:{cockpit.password}\n")
    return root


def setup(kept, args):
    if args.artefacts:
        args.artefacts.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="trimd-boot-", dir="/var/tmp"))
    kept.push(f"remove {work}", Undo.remove(work))
    deb = args.deb or build_deb(args.source, work / "deb")
    cockpit = CockpitLogin(cockpit_deb_beside(deb))
    root = prepare_root(kept, work, deb, cockpit)
    fs = LoopFs.create(kept, work / "trimtest.img", 1024, work / "trimtest")
    inline = LoopFs.create(kept, work / "takeover.img", 256, work / "takeover",
                           options="discard,noatime")
    # 4000 free extents: one FITRIM over them takes about 12 s at 3 ms each.
    slow = SlowTrimFs(kept, args.slowtrim, work, 512, 8000, 8192, work / "slowtrim")
    log("booting")
    binds = [(fs.mount_point, TRIMTEST), (inline.mount_point, TAKEOVER),
             (slow.mount_point, SLOWTRIM)]
    box = Container.boot(kept, root, f"trimd-boot-{os.getpid()}", binds, work / "console.log")
    booted = box.wait_booted()
    if booted == "no systemd manager socket":
        raise RuntimeError(f"the container did not boot; its console: {work / 'console.log'}")
    log(f"booted: {booted}")
    return {"box": box.handle(), "booted": booted, "fs": fs.handle(), "inline": inline.handle(),
            "cockpit": {"port": cockpit.port, "password": cockpit.password}, "work": str(work)}


def connect(session):
    session.box = Container.attach(session.handle["box"])
    session.fs = LoopFs(**session.handle["fs"])
    session.inline = LoopFs(**session.handle["inline"])
    if not session.box.running():
        raise RuntimeError("the container of the setup is not running")
    # Each check starts afresh: the checks before it may have started trimd
    # more often than StartLimitBurst= allows in StartLimitIntervalSec=
    # (5 in 10 s), and then systemd would refuse the next start, D-Bus
    # activation's included. reset-failed clears the unit's start counter.
    session.box.sh("systemctl reset-failed trimd.service")


if __name__ == "__main__":
    sys.exit(fixture.main(sys.modules[__name__]))
