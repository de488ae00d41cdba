"""A slow network link between Chromium and a Jupyter server: a TCP proxy on 127.0.0.1 that carries
``rate`` bits a second each way, shared by all connections, and delays every byte by ``latency``
seconds, as a remote notebook behind a thin line sees it.

    with SlowLink(server_port) as link:
        page.goto(f"http://127.0.0.1:{link.port}/lab/...")  # at full speed: the app's megabytes
        link.limit(rate=1_000_000, latency=0.040)              # as if cached, then the thin line

Bytes wait in the proxy's queue while the link is busy (a deep buffer, like most real uplinks),
so a sender that outruns the link sees its lag grow, not bytes lost.
"""

from __future__ import annotations

import queue
import socket
import threading
import time

CHUNK = 16 * 1024


class _Direction:
    """One direction of the link: when its next byte can leave, shared by every connection."""

    def __init__(self) -> None:
        self.bytes_per_second: float | None = None  # None: as fast as the sockets go
        self.free_at = 0.0
        self.lock = threading.Lock()
        self.carried = 0

    def departure(self, size: int) -> float:
        with self.lock:
            self.carried += size
            if self.bytes_per_second is None:
                return time.monotonic()
            self.free_at = max(time.monotonic(), self.free_at) + size / self.bytes_per_second
            return self.free_at


class SlowLink:
    """The proxy: :attr:`port` forwards to ``target_port``; :meth:`close` (or the ``with`` block's end)
    stops it and every connection through it."""

    def __init__(self, target_port: int) -> None:
        self.target_port, self.latency = target_port, 0.0
        self.down, self.up = _Direction(), _Direction()  # server → browser, browser → server
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._sockets: list[socket.socket] = [self._listener]
        self._threads: list[threading.Thread] = []
        self._start(self._accept)

    def limit(self, rate: float | None, latency: float) -> None:
        """From now on carry ``rate`` bits a second each way (None: as fast as the sockets go), each
        byte ``latency`` seconds late."""
        for direction in (self.down, self.up):
            with direction.lock:
                direction.bytes_per_second = None if rate is None else rate / 8
        self.latency = latency

    def __enter__(self) -> SlowLink:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        for sock in list(self._sockets):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        for thread in self._threads:
            thread.join(timeout=5)

    def _start(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True, name="slow-link")
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                browser, _ = self._listener.accept()
                server = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                return
            for sock in (browser, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._sockets.append(sock)
            for source, sink, direction in ((server, browser, self.down), (browser, server, self.up)):
                due: queue.SimpleQueue = queue.SimpleQueue()
                self._start(self._read, source, direction, due)
                self._start(self._deliver, sink, due)

    def _read(self, source: socket.socket, direction: _Direction, due: queue.SimpleQueue) -> None:
        while True:
            try:
                data = source.recv(CHUNK)
            except OSError:
                data = b""
            if not data:
                due.put(None)
                return
            due.put((direction.departure(len(data)) + self.latency, data))

    def _deliver(self, sink: socket.socket, due: queue.SimpleQueue) -> None:
        while True:
            item = due.get()
            if item is None or self._stop.is_set():
                try:
                    sink.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            at, data = item
            wait = at - time.monotonic()
            if wait > 0 and self._stop.wait(wait):
                return
            try:
                sink.sendall(data)
            except OSError:
                return
