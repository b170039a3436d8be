"""One disk image shared by many hosts (W5): a GPT with one small ext4
partition per host and a tenant's partition, so that every host's discards
queue on the same device. Partitions of one loop device, rather than
dm-linear slices: no device-mapper tables to tear down, the kernel makes
/dev/loopNpM itself (`losetup --partscan`), and each partition keeps its
own /proc/diskstats line, so the hosts' discards can be told apart. The
loop device is attached with --partscan (a loop device without it takes
no partitions); detaching it removes them."""
import contextlib
import os

from . import disks, populate
from .guard import run, say, signals_blocked, wait_until

MiB = disks.MiB
# 4 KiB blocks as on a real host's disk (mke2fs picks 1 KiB for a small
# filesystem, below the device's discard granularity); 32 MiB block groups
# spread a host's free extents over three groups. trimd sizes ext4 chunks
# by 8 x block size^2 (128 MiB) whatever -g says, so each host's pass is one
# FITRIM call over its whole filesystem.
MKFS_HOST = disks.MKFS["ext4"] + ["-b", "4096", "-g", "8192"]
TENANT = "tenant"


def sfdisk_script(hosts, host_part):
    lines = ["label: gpt"]
    lines += [f"size={host_part // 1024}KiB, type=linux, name=host{i:02d}" for i in range(hosts)]
    lines.append(f"type=linux, name={TENANT}")
    return "\n".join(lines) + "\n"


def image_size(hosts, host_part, tenant_part):
    return hosts * host_part + tenant_part + 4 * MiB  # the GPT and its backup


def partitions(dev, count):
    """/dev/loopNp1 .. pCOUNT, once the kernel has made them all. A kernel
    without partition parsers (this machine's has neither GPT nor DOS) is
    told them by partx, which reads the GPT itself (BLKPG)."""
    parts = [f"{dev}p{i}" for i in range(1, count + 1)]
    if not all(os.path.exists(p) for p in parts):
        run(["partx", "--add", dev])
    wait_until(lambda: all(os.path.exists(p) for p in parts), 30,
               what=f"{dev}'s {count} partitions")
    return parts


@contextlib.contextmanager
def no_writeback_throttling(dev):
    """The kernel's writeback throttling (blk-wbt) of the one loop device
    lets at most wb_background (4, fewer once latency passes wbt_lat_usec)
    discards of all hosts together into its queue: a limiter that a fleet
    of VMs, each with its own disk queue, does not have. Off while W5 runs,
    restored before the device is detached (loop devices are reused)."""
    path = f"/sys/block/{os.path.basename(dev)}/queue/wbt_lat_usec"
    with open(path) as f:
        before = f.read().strip()
    with signals_blocked():
        with open(path, "w") as f:
            f.write("0")
    try:
        yield before
    finally:
        with signals_blocked():
            with open(path, "w") as f:
                f.write(before)


def host_mounts(bench, hosts):
    return [bench.mnt(f"w5-host{i:02d}") for i in range(hosts)]


@contextlib.contextmanager
def mounted_all(dev, mounts, tenant_mount):
    """Every host's partition and the tenant's, mounted; unmounted on the way out."""
    parts = partitions(dev, len(mounts) + 1)
    with contextlib.ExitStack() as stack:
        for part, mnt in zip(parts, mounts + [tenant_mount]):
            stack.enter_context(disks.mounted(part, mnt))
        yield parts


def make_template(bench, path):
    """Each host's filesystem with `w5_pairs` files freed between as many
    kept (that many free extents for its pass), the tenant's with the
    probe's file. Every configuration runs on a twin of this."""
    p = bench.p
    size = image_size(p.w5_hosts, p.w5_host_part, p.w5_tenant_part)
    say(f"W5: the template: {p.w5_hosts} hosts x {p.w5_host_part // MiB} MiB + a tenant, "
        f"{p.w5_pairs} x {p.w5_file_bytes // 1024} KiB freed per host")
    with open(path, "wb") as f:
        f.truncate(size)
    run(["sfdisk", "--quiet", path], input=sfdisk_script(p.w5_hosts, p.w5_host_part))
    mounts = host_mounts(bench, p.w5_hosts)
    tenant = bench.mnt("w5-tenant")
    written = 0
    with disks.loop_device(path, partscan=True) as dev:
        parts = partitions(dev, p.w5_hosts + 1)
        for part in parts[:-1]:
            run(MKFS_HOST + [part])
        run(disks.MKFS["ext4"] + [parts[-1]])
        with mounted_all(dev, mounts, tenant):
            for mnt in mounts:
                written += populate.interleaved_sets(mnt, p.w5_pairs, [p.w5_file_bytes])["del"]
                run(["rm", "-r", os.path.join(mnt, "del")])
            populate.probe_file(tenant)
            run(["sync"])
    return {"freed": written, "size": size}
