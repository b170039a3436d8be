#!/usr/bin/env python3
"""Lays out the sysfs fixtures of tests/unit/test_sysfs_stacks.cpp and
tests/unit/test_power_supply.cpp.

Each directory next to this script is the part of /sys that trimd reads
(lib/system/block_topology.cpp), for one storage stack this machine's kernel cannot
build (no md, no device-mapper, no NVMe), laid out as the kernel does
(Documentation/ABI/testing/sysfs-block, sysfs-class-block):

  devices/<bus path>/block/sda          SCSI/SATA disks sit in a "block" dir
  devices/<pci path>/nvme/nvme0/nvme0n1 NVMe namespaces sit under their controller
  devices/virtual/block/dm-0, md0       stacked devices
  devices/virtual/nvme-subsystem/nvme-subsys0/nvme0n1   a multipath namespace head
  <disk>/<disk>N/partition              partitions: inside their disk, no queue/
  <disk>/queue/discard_max_bytes ...    whole disks and stacked devices only
  <holder>/slaves/<lower> and <lower>/holders/<holder>   relative symlinks
  block/<disk>, class/block/<any>, dev/block/<major:minor>   relative symlinks

The power-* trees are /sys/class/power_supply (lib/system/power_supply.cpp,
Documentation/ABI/testing/sysfs-class-power): class/power_supply/<name>
links to devices/.../power_supply/<name>, which holds type, online, status,
present and scope as the ACPI, UCSI and HID drivers write them.

Git keeps no empty directories: an empty slaves/ or holders/ is left out,
which is also how trimd reads a missing one.

Run it from anywhere to regenerate every tree (they are committed as such).
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))

SATA = "devices/pci0000:00/0000:00:17.0/ata{port}/host{port}/target{port}:0:0/{port}:0:0:0/block"
NVME_PCI = "devices/pci0000:00/0000:00:1d.{fn}/0000:3d:00.{fn}/nvme/nvme{ctrl}"
VIRTUAL = "devices/virtual/block"
NVME_SUBSYS = "devices/virtual/nvme-subsystem/nvme-subsys{subsys}"

SSD = {"discard_granularity": 4096, "discard_max_bytes": 2147450880, "rotational": 0}
NVME = {"discard_granularity": 512, "discard_max_bytes": 2199023255040, "rotational": 0}
HDD = {"discard_granularity": 0, "discard_max_bytes": 0, "rotational": 1}


class Tree:
    def __init__(self, name):
        self.root = os.path.join(HERE, name)
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root)

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as out:
            out.write(f"{text}\n")

    def link(self, at, target):
        at_path = os.path.join(self.root, at)
        os.makedirs(os.path.dirname(at_path), exist_ok=True)
        os.symlink(os.path.relpath(os.path.join(self.root, target), os.path.dirname(at_path)),
                   at_path)

    def device(self, path, devno, sectors):
        name = os.path.basename(path)
        self.write(f"{path}/dev", devno)
        self.write(f"{path}/size", sectors)
        self.link(f"dev/block/{devno}", path)
        self.link(f"class/block/{name}", path)
        return path

    def disk(self, parent, name, devno, sectors, queue, hidden=False):
        path = self.device(f"{parent}/{name}", devno, sectors)
        for key, value in queue.items():
            self.write(f"{path}/queue/{key}", value)
        if not hidden:  # hidden disks (NVMe multipath paths) have no /sys/block entry
            self.link(f"block/{name}", path)
        return path

    def partition(self, disk, number, devno, start, sectors):
        name = os.path.basename(disk)
        name += f"p{number}" if name[-1].isdigit() else str(number)
        path = self.device(f"{disk}/{name}", devno, sectors)
        self.write(f"{path}/partition", number)
        self.write(f"{path}/start", start)
        return path

    def stack(self, holder, lower):
        self.link(f"{holder}/slaves/{os.path.basename(lower)}", lower)
        self.link(f"{lower}/holders/{os.path.basename(holder)}", holder)

    def dm(self, name, devno, sectors, queue, dm_name, dm_uuid, lowers):
        path = self.disk(VIRTUAL, name, devno, sectors, queue)
        self.write(f"{path}/dm/name", dm_name)
        self.write(f"{path}/dm/uuid", dm_uuid)
        self.write(f"{path}/dm/suspended", 0)
        for lower in lowers:
            self.stack(path, lower)
        return path

    def md(self, name, devno, sectors, queue, level, lowers):
        path = self.disk(VIRTUAL, name, devno, sectors, queue)
        self.write(f"{path}/md/level", level)
        self.write(f"{path}/md/raid_disks", len(lowers))
        for lower in lowers:
            self.stack(path, lower)
            # md's own view of its members: md/dev-sdb1/block -> the member
            self.link(f"{path}/md/dev-{os.path.basename(lower)}/block", lower)
        return path


ATA_DEVICE = "devices/pci0000:00/0000:00:17.0/ata{port}/link{port}/dev{port}.0/ata_device/dev{port}.0"


def sata(tree, port, name, devno, sectors, queue=SSD, trim="unqueued"):
    # libata says how it sends TRIM: "unqueued", "queued", "forced_unqueued"
    # (a drive on the kernel's no-queued-TRIM list) or "unsupported".
    tree.write(f"{ATA_DEVICE.format(port=port)}/trim", trim)
    return tree.disk(SATA.format(port=port), name, devno, sectors, queue)


def md_raid0():
    # md0: raid0 of two whole SATA SSDs, 512 KiB chunks.
    t = Tree("md-raid0")
    sdb = sata(t, 1, "sdb", "8:16", 1000215216, trim="queued")
    sdc = sata(t, 2, "sdc", "8:32", 1000215216, trim="forced_unqueued")
    t.md("md0", "9:0", 2000429056,
         {"discard_granularity": 524288, "discard_max_bytes": 2147450880, "rotational": 0},
         "raid0", [sdb, sdc])


def md_raid1():
    # md1: raid1 of a partition on each of two NVMe namespaces; its discard
    # limits are the smaller of its members'.
    t = Tree("md-raid1")
    nvme0n1 = t.disk(NVME_PCI.format(fn=0, ctrl=0), "nvme0n1", "259:0", 1000215216, NVME)
    nvme1n1 = t.disk(NVME_PCI.format(fn=1, ctrl=1), "nvme1n1", "259:3", 1953525168,
                     {"discard_granularity": 4096, "discard_max_bytes": 1073741824, "rotational": 0})
    p0 = t.partition(nvme0n1, 2, "259:2", 1050624, 999162880)
    p1 = t.partition(nvme1n1, 2, "259:5", 1050624, 999162880)
    t.partition(nvme0n1, 1, "259:1", 2048, 1048576)  # /boot/efi, not in the array
    t.md("md1", "9:1", 999030784,
         {"discard_granularity": 4096, "discard_max_bytes": 1073741824, "rotational": 0},
         "raid1", [p0, p1])


def dm_crypt():
    # dm-0: LUKS2 on sda3, opened without allow_discards: no discard at all.
    t = Tree("dm-crypt")
    sda = sata(t, 1, "sda", "8:0", 1000215216)
    t.partition(sda, 1, "8:1", 2048, 1048576)
    sda3 = t.partition(sda, 3, "8:3", 3147776, 997065728)
    t.dm("dm-0", "254:0", 997032960,
         {"discard_granularity": 0, "discard_max_bytes": 0, "rotational": 0},
         "luks-7f3c2a1e-5b4d-4e6f-8a9b-0c1d2e3f4a5b",
         "CRYPT-LUKS2-7f3c2a1e5b4d4e6f8a9b0c1d2e3f4a5b-luks-7f3c2a1e-5b4d-4e6f-8a9b-0c1d2e3f4a5b",
         [sda3])


def dm_thin():
    # dm-3: an LVM thin volume in pool vg0/pool (dm-2, "-tpool"), whose data
    # (dm-1) is on sdb1 and metadata (dm-0) on nvme0n1p3. Discards on a thin
    # volume work in pool blocks (64 KiB).
    t = Tree("dm-thin")
    sdb = sata(t, 2, "sdb", "8:16", 3907029168)
    sdb1 = t.partition(sdb, 1, "8:17", 2048, 3907026944)
    nvme0n1 = t.disk(NVME_PCI.format(fn=0, ctrl=0), "nvme0n1", "259:0", 1000215216, NVME)
    nvme0n1p3 = t.partition(nvme0n1, 3, "259:3", 998115328, 2097152)
    vg = "LVM-Jp8HbWc0w1kHfMrbQ2yXqk3vT4aS5dZ6"
    tmeta = t.dm("dm-0", "254:0", 262144, SSD | {"discard_max_bytes": 2147450880},
                 "vg0-pool_tmeta", f"{vg}mT1eTaDaTaaaaaaaaaaaaaaaaaaaaaaa-tmeta", [nvme0n1p3])
    tdata = t.dm("dm-1", "254:1", 3900000000, SSD,
                 "vg0-pool_tdata", f"{vg}dA7aDaTaaaaaaaaaaaaaaaaaaaaaaaaa-tdata", [sdb1])
    tpool = t.dm("dm-2", "254:2", 3900000000,
                 {"discard_granularity": 65536, "discard_max_bytes": 65536, "rotational": 0},
                 "vg0-pool-tpool", f"{vg}pOoLpOoLaaaaaaaaaaaaaaaaaaaaaaaa-tpool", [tmeta, tdata])
    t.dm("dm-3", "254:3", 209715200,
         {"discard_granularity": 65536, "discard_max_bytes": 65536, "rotational": 0},
         "vg0-thinvol", f"{vg}tHiNvOlaaaaaaaaaaaaaaaaaaaaaaaaa", [tpool])


def lvm_linear():
    # dm-0: one LVM linear volume spanning sdb1 (SSD) and all of sdc (an SSD
    # with a smaller discard limit): the stack takes the smaller.
    t = Tree("lvm-linear")
    sdb = sata(t, 2, "sdb", "8:16", 500118192)
    sdb1 = t.partition(sdb, 1, "8:17", 2048, 500116144)
    sdc = sata(t, 3, "sdc", "8:32", 500118192,
               {"discard_granularity": 4096, "discard_max_bytes": 67108864, "rotational": 0})
    t.dm("dm-0", "254:0", 1000226816,
         {"discard_granularity": 4096, "discard_max_bytes": 67108864, "rotational": 0},
         "vg1-data", "LVM-Qm3vX9bL2kR7tY5wN8pJ4hF6dS1aZ0cEgUi7oK2lM9nB3vC5xZ8qW1eR4tY6uI0o",
         [sdb1, sdc])


def nvme_namespaces():
    # One controller, two namespaces with partitions: each namespace is a
    # disk of its own, with its own queue and /proc/diskstats line.
    t = Tree("nvme-namespaces")
    ctrl = NVME_PCI.format(fn=0, ctrl=0)
    n1 = t.disk(ctrl, "nvme0n1", "259:0", 500107608, NVME)
    n2 = t.disk(ctrl, "nvme0n2", "259:3", 500107608,
                {"discard_granularity": 4096, "discard_max_bytes": 4294966784, "rotational": 0})
    t.partition(n1, 1, "259:1", 2048, 1048576)
    t.partition(n1, 2, "259:2", 1050624, 499056984)
    t.partition(n2, 1, "259:4", 2048, 500105560)


def nvme_multipath():
    # Native NVMe multipath: namespace 1 of subsystem 0 reached through two
    # controllers. The head nvme0n1 is the block device (its partitions on
    # it); the paths nvme0c0n1 and nvme0c1n1 are hidden disks listed under
    # the head's multipath/ (drivers/nvme/host/multipath.c), not slaves.
    t = Tree("nvme-multipath")
    paths = []
    for ctrl in (0, 1):
        paths.append(t.disk(NVME_PCI.format(fn=ctrl, ctrl=ctrl), f"nvme0c{ctrl}n1",
                            f"259:{10 + ctrl}", 3907029168, NVME, hidden=True))
    head = t.disk(NVME_SUBSYS.format(subsys=0), "nvme0n1", "259:0", 3907029168, NVME)
    for path in paths:
        t.link(f"{head}/multipath/{os.path.basename(path)}", path)
    t.partition(head, 1, "259:1", 2048, 3907026944)


ACPI = "devices/LNXSYSTM:00/LNXSYBUS:00/PNP0A08:00/device:00/{device}/power_supply/{name}"
UCSI = "devices/platform/USBC000:00/power_supply/{name}"
HID = "devices/pci0000:00/0000:00:14.0/usb1/1-4/1-4:1.2/0003:046D:4082.0004/power_supply/{name}"


def supply(tree, path, attributes):
    for key, value in attributes.items():
        tree.write(f"{path}/{key}", value)
    tree.link(f"class/power_supply/{os.path.basename(path)}", path)


def acpi_laptop(name, ac_online, battery_status):
    t = Tree(name)
    supply(t, ACPI.format(device="ACPI0003:00", name="AC"), {"type": "Mains", "online": ac_online})
    supply(t, ACPI.format(device="PNP0C0A:00", name="BAT0"),
           {"type": "Battery", "present": 1, "status": battery_status, "capacity": 81})
    return t


def power_on_ac():
    acpi_laptop("power-on-ac", 1, "Charging")


def power_on_battery():
    acpi_laptop("power-on-battery", 0, "Discharging")


def power_usb_c():
    # Charged through USB-C (UCSI): no Mains supply; the battery held at a
    # charge threshold says "Not charging".
    t = Tree("power-usb-c")
    supply(t, UCSI.format(name="ucsi-source-psy-USBC000:001"),
           {"type": "USB", "usb_type": "C [PD] PD_PPS", "online": 1, "scope": "System"})
    supply(t, ACPI.format(device="PNP0C0A:00", name="BAT0"),
           {"type": "Battery", "present": 1, "status": "Not charging"})


def power_desktop():
    # No system battery; a wireless mouse's battery is a Device's, not the machine's.
    t = Tree("power-desktop")
    supply(t, HID.format(name="hid-00:11:22:33:44:55-battery"),
           {"type": "Battery", "scope": "Device", "present": 1, "status": "Discharging"})


if __name__ == "__main__":
    for make in (md_raid0, md_raid1, dm_crypt, dm_thin, lvm_linear, nvme_namespaces,
                 nvme_multipath, power_on_ac, power_on_battery, power_usb_c, power_desktop):
        make()
