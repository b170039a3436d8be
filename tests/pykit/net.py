"""Loopback ports for the servers a test starts."""

import socket


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago (nothing reserves
    it: a server that cannot bind it must say so)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_answers(port, host="127.0.0.1"):
    """Something accepts connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False
