"""trimd's MESSAGE_IDs, read from the list the C++ is built from
(lib/base/event_ids.def), so that a program reading trimd's log by
MESSAGE_ID can never hold an id trimd does not write. The bench and the
boot tests read them here; nothing copies an id."""
import os
import re

EVENT_IDS_DEF = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "..", "..", "lib", "base", "event_ids.def")
_LINE = re.compile(r'TRIMD_EVENT\((\w+), "([0-9a-f]{32})"\)')


def message_ids(path=EVENT_IDS_DEF):
    """{"PassFinished": "7b0a00ec...", ...}: every event's name (as in C++'s
    EventId) and its id. Raises ValueError on a line it cannot read, so a
    change of the file's form fails loudly instead of losing events."""
    ids = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("//"):
                continue
            match = _LINE.fullmatch(line)
            if match is None:
                raise ValueError(f"{path}:{number}: not TRIMD_EVENT(Name, \"id\"): {line}")
            ids[match.group(1)] = match.group(2)
    if not ids:
        raise ValueError(f"{path}: no event")
    return ids


def message_id(name, path=EVENT_IDS_DEF):
    """The MESSAGE_ID of one event, by its C++ name; KeyError if none."""
    return message_ids(path)[name]
