"""What a tier found: one PASS or FAIL line per check, with the detail of a
failure, counted."""

import time


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what, detail=""):
        """Logs `what` as passed or failed (with `detail` when it failed); returns ok."""
        ok = bool(ok)
        log(("PASS " if ok else "FAIL ") + what + ("" if ok or not detail else f"\n{detail}"))
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok

    def exit_status(self):
        """0 when something passed and nothing failed: a check that asserted nothing fails too."""
        return 1 if self.failed or not self.passed else 0
