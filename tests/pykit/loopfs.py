"""A sparse file with an ext4 on a loop device, mounted: what a trim
reclaims shows as the backing file's allocation dropping."""

import os
from pathlib import Path

from .cleanup import Undo
from .proc import run


class LoopFs:
    def __init__(self, backing, mount_point, device):
        self.backing = Path(backing)
        self.mount_point = Path(mount_point)
        self.device = device

    @classmethod
    def create(cls, cleanup, backing, size_mib, mount_point, mkfs_args=(), options="nodiscard"):
        """Made, mounted and registered with `cleanup` (Undo steps, so a
        fixture's cleanup test can undo them)."""
        backing = Path(backing)
        run(["truncate", "-s", f"{size_mib}M", str(backing)])
        cleanup.push(f"remove {backing}", Undo.remove(backing))
        device = run(["losetup", "--find", "--show", str(backing)]).stdout.strip()
        cleanup.push(f"detach {device}", Undo.command(["losetup", "-d", device]))
        run(["mkfs.ext4", "-q", "-F", *mkfs_args, device])
        Path(mount_point).mkdir(parents=True, exist_ok=True)
        run(["mount", "-o", options, device, str(mount_point)])
        cleanup.push(f"unmount {mount_point}", Undo.command(["umount", "-l", mount_point]))
        return cls(backing, mount_point, device)

    def handle(self):
        """What another process needs to find it again: LoopFs(**handle)."""
        return {"backing": str(self.backing), "mount_point": str(self.mount_point),
                "device": self.device}

    def options(self):
        """(per-mount options, superblock options) of the mount, as this
        process's mount namespace sees them; None when it is not mounted."""
        found = None
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                if fields[4] == str(self.mount_point):
                    found = (fields[5].split(","), fields[-1].split(","))
        return found

    def allocated_bytes(self):
        return os.stat(self.backing).st_blocks * 512
