"""The parts of the tests' Python kit (tests/pykit) the bench shares: the
CI rule and free_port. The bench runs from the source tree (it reads
lib/base/event_ids.def and the build directory too), so it imports them
from there instead of keeping copies."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests"))
from pykit.ci import running_under_ci  # noqa: E402,F401  (re-exported)
from pykit.net import free_port  # noqa: E402,F401  (re-exported)
