"""The processes of a multi-host run watch each other, so that one that dies makes the others
stop at once with one line, instead of hanging.

Why JAX's own detection is not enough: a collective whose other end died usually fails at
once (gloo's connection drops), but not always: before this module, the surviving process 0
stayed blocked in a chunk's collective (``block_until_ready``) in 3 of 6 kills of process 1
(likely one of its devices waiting for its other device, which the failure had stopped).
JAX's coordination service would end it after the heartbeat timeout (100 s by default), with
its fatal message and a stack dump.

So every process keeps one TCP connection to process 0 (a star, made when the run is
joined): the kernel closes the connections of a process that dies, however it dies, so
process 0 learns of any death at once and leaves (:func:`leave`); the others then learn of
process 0's end (through their connection, and JAX's coordination service, hosted by process
0, ends them too, with its own message, sometimes first). A connection carries one message
before it closes: ``done`` (the process ends normally: stop watching it) or ``fail`` (it
leaves with an error: the others leave too, after a pause in which they may stop with the
same error themselves). A connection that closes without a message is a death.
"""

from __future__ import annotations

import atexit
import os
import selectors
import socket
import struct
import sys
import threading
import time

import jax
import numpy as np

DONE, FAIL = b"done", b"fail"
FAIL_PAUSE = 3.0     # seconds a process leaves the others to stop with the same error first
CONNECT_TIMEOUT = 60.0

_lock = threading.Lock()
_leaving = threading.Lock()   # held by the thread that ends the process
_conns: list[socket.socket] = []
_started = False
_closing = False              # this process is ending: its own closed sockets are no news


def start(coordinator_host: str, status: int) -> None:
    """Connect this process to process 0 (all processes call it, once, right after joining).
    ``status`` is the exit status of a process that leaves because another one is gone.
    A process that cannot connect warns and goes on unwatched (JAX's timeouts still hold)."""
    global _started
    if _started:
        return
    _started = True
    from jax.experimental import multihost_utils
    me, n = jax.process_index(), jax.process_count()
    server = None
    if me == 0:
        server = socket.create_server(("", 0), backlog=n)
        port = server.getsockname()[1]
    else:
        port = 0
    port = int(np.asarray(multihost_utils.broadcast_one_to_all(np.int32(port))))
    if me == 0:
        peers = _accept(server, n - 1)
        server.close()
        threading.Thread(target=_watch, args=(peers, me, n, status), daemon=True,
                         name="jaxgames-watchdog").start()
    else:
        try:
            conn = socket.create_connection((coordinator_host, port), timeout=CONNECT_TIMEOUT)
            conn.settimeout(None)
            conn.sendall(struct.pack("!i", me))
        except OSError as e:
            _warn(f"cannot reach process 0 at {coordinator_host}:{port} to watch it ({e}); "
                  f"a dead process is then noticed by JAX's heartbeat timeout only")
            return
        with _lock:
            _conns.append(conn)
        threading.Thread(target=_watch, args=({conn: 0}, me, n, status), daemon=True,
                         name="jaxgames-watchdog").start()
    atexit.register(_say, DONE)


def leave(message: str | None, status: int) -> None:
    """End this process now: print ``message``, tell the others it failed (``status`` != 0),
    and ``os._exit(status)`` without waiting at JAX's exit barrier for processes that may be
    waiting for this one. Only the first thread that calls it prints."""
    if not _leaving.acquire(blocking=False):
        time.sleep(60)  # another thread is ending the process
        os._exit(status)
    if message is not None:
        sys.stderr.write(message + "\n")  # one write: the launcher shares the stream
    sys.stdout.flush()
    sys.stderr.flush()
    _say(FAIL if status else DONE)
    os._exit(status)


def _accept(server: socket.socket, count: int) -> dict:
    """{connection: process} of the ``count`` other processes."""
    peers = {}
    server.settimeout(CONNECT_TIMEOUT)
    while len(peers) < count:
        try:
            conn, _ = server.accept()
            conn.settimeout(CONNECT_TIMEOUT)
            (who,) = struct.unpack("!i", _recv_exactly(conn, 4))
            conn.settimeout(None)
        except (OSError, struct.error) as e:
            _warn(f"{count - len(peers)} process(es) did not connect to be watched ({e}); a "
                  f"dead one is then noticed by JAX's heartbeat timeout only")
            break
        peers[conn] = who
    with _lock:
        _conns.extend(peers)
    return peers


def _watch(peers: dict, me: int, n: int, status: int) -> None:
    sel = selectors.DefaultSelector()
    for conn in peers:
        sel.register(conn, selectors.EVENT_READ)
    while peers:
        for key, _ in sel.select():
            conn = key.fileobj
            try:
                data = conn.recv(16)
            except OSError:
                data = b""
            if _closing:
                return
            who = peers.pop(conn)
            sel.unregister(conn)
            if data.startswith(DONE):
                continue
            if data.startswith(FAIL):
                time.sleep(FAIL_PAUSE)  # it may be an error every process meets: let ours come
                leave(f"{_prog()}: error: process {who} of this multi-host run stopped with an "
                      f"error (see its output); process {me} of {n} stops too", status)
            leave(f"{_prog()}: error: process {who} of this multi-host run is gone (its "
                  f"connection dropped: killed, crashed or its host lost); process {me} of {n} "
                  f"stops too", status)


def _say(message: bytes) -> None:
    """Send ``message`` on every connection, once, and close them."""
    global _closing
    _closing = True
    with _lock:
        conns = list(_conns)
        _conns.clear()
    for conn in conns:
        try:
            conn.sendall(message)
            conn.close()
        except OSError:
            pass


def _recv_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise OSError("connection closed")
        data += chunk
    return data


def _prog() -> str:
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return f"python -m {spec.name}" if spec is not None and spec.name else os.path.basename(sys.argv[0])


def _warn(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")
    sys.stderr.flush()
