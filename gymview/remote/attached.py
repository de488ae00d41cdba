"""attach(): the live view of a run published elsewhere, shown in this notebook.

The view is a ``LiveView`` whose loop is the run's: its page's messages (ready, acks, clicks) go to the
run, and the run's messages (frames, states) come back to the page as they are, renumbered where a run
started again (:mod:`.relay`). When the run ends the view says so and keeps its last frame, also as a still
image in the notebook (:mod:`.still`: a saved notebook shows it); when a run of the same name publishes
there again, the view shows it.
"""

from __future__ import annotations

import collections
import numbers
import os
import threading
import time
from typing import Any

from gymview.live import protocol
from gymview.live.controls import SPEEDS
from gymview.live.pacing.throttle import PROCESS_BUDGET, MessageBudget
from gymview.live.widget import LiveView
from gymview.remote.address import Address, parse_address
from gymview.remote.hub import SILENT_SECONDS
from gymview.remote.relay import Renumbering, for_page
from gymview.remote.still import LastFrame
from gymview.remote.tokens import curve_keys, viewer_token
from gymview.remote.viewer import LOST, ViewerLink
from gymview.remote.wire import Message, RunInfo

__all__ = ["ENDED", "AttachedView", "attach"]

ENDED = "ended"  # the state the page shows while no run is attached (its buttons are off)
MAX_PAGES = 16  # pages whose ready and visibility are kept, to tell a run attached later
# Closing a view of a scene the page draws: how long a run that still answers may take to send a picture of it
STILL_WAIT_SECONDS = 10.0
# A run's state messages come when its state changes: they never wait behind frames for the notebook's budget,
# and a run that sends more than this many a second has the rest dropped.
STATES_PER_SECOND = 20


def attach(
    address: str,
    token: str | None = None,
    run: str | int | None = None,
    timeout: float = 10.0,
    display: bool = True,
) -> AttachedView:
    """Show the live view of a run published at ``address`` (by ``gymview.watch(env, publish=...)``).

    Its Pause, Step, Play and Speed act on the run's loop, and Stop ends it (the run's ``step()`` raises
    ``gymview.Stopped``). When the run ends the view says so and keeps its last frame; when a run of the same
    name publishes there again (a restarted script), the view shows it within seconds.

    Args:
        address: ``"HOST:PORT"`` where the run publishes, as this machine reaches it: through an SSH tunnel
            (``ssh -N -L 5555:127.0.0.1:5555 server``) that is ``"127.0.0.1:5555"``.
        token: The token the run printed when it started publishing (None: ``GYMVIEW_TOKEN``, else the token
            file a run on this machine wrote for ``address``).
        run: Which run to show when several publish there: its name (``watch(..., run=...)``, else the env's
            id) or its process id. None: the only one.
        timeout: Seconds to wait for the run to answer.
        display: Show the view now.

    Returns:
        The view (a ``LiveView``); ``view.run`` is the run it shows, ``view.runs`` every run at the address.

    Raises:
        ValueError: When ``address`` is not ``HOST:PORT``, no token is given, or ``run`` matches several runs.
        PermissionError: When the run refuses the token, or does not know it (another token is in use there).
        TimeoutError: When no run (or none that ``run`` names) answers within ``timeout`` seconds.

    Examples:
        >>> import gymnasium as gym, gymview
        >>> env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish="127.0.0.1:5573")
        >>> view = gymview.attach("127.0.0.1:5573", display=False)  # the token: in the file the run wrote
        >>> view.run.name, view.run.pid == os.getpid()
        ('CartPole-v1', True)
        >>> view.close(); env.close()
    """
    where = parse_address(address)
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not timeout > 0:
        raise ValueError(f"timeout must be a number of seconds above 0; got {timeout!r}")
    if run is not None and (isinstance(run, bool) or not isinstance(run, (str, int))):
        raise TypeError(f"run is a run's name (a string) or its process id (an int); got {run!r}")
    view = AttachedView(where, viewer_token(token, where.text), run)
    try:
        view.wait_for_run(float(timeout))
    except BaseException:
        view.close()
        raise
    if display:
        view.show()
    return view


class AttachedView(LiveView):
    """The view of a run published elsewhere, a ``LiveView`` whose loop is that run's; made by :func:`attach`.

    Attributes:
        address: Where the run publishes.

    Args:
        address: Where the run publishes (``gymview.remote.address.parse_address``).
        token: The run's token.
        run: Which run to show: a name or a process id (None: the only one).

    Examples:
        >>> import gymnasium as gym, gymview
        >>> env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish="127.0.0.1:5575", run="a")
        >>> view = gymview.attach("127.0.0.1:5575", display=False)
        >>> view.run.name, [run.name for run in view.runs], view.stats["relayed"] >= 0
        ('a', ['a'], True)
        >>> view.close(); env.close()
    """

    def __init__(self, address: Address, token: str, run: str | int | None = None) -> None:
        super().__init__(title=f"waiting for a run at {address.text}")
        self.address = address
        self._wanted = run
        self._run_name: str | None = None  # the run's name, once one was shown: a run of that name is shown again
        self._current: RunInfo | None = None
        self._last: RunInfo | None = None
        self._problem: str | None = None
        self._ended: str | None = None  # what the page says since the run shown last ended (None: none did)
        self._numbers = Renumbering()
        self._pages: dict[str, list[dict[str, Any]]] = {}  # page -> its ready and latest visibility
        self._heard: collections.deque[str] = collections.deque(maxlen=16)  # clicks the page is told were heard
        self._stops: collections.deque[str] = collections.deque(maxlen=16)  # Stop clicks sent to the run shown
        self._state_budget = MessageBudget(rate=STATES_PER_SECOND, burst=STATES_PER_SECOND)
        self._state_lock = threading.Lock()
        self._pid = os.getpid()
        self.relayed = 0  # messages passed to the page
        self.skipped = 0  # messages not passed: malformed, or over the notebook's message budget
        self._last_frame = LastFrame()  # for the still image the view leaves in the notebook
        self._runs_link = ViewerLink(address, curve_keys(token), self._hear)
        self._runs_link.start()  # once the view has its link: the link's thread calls back into the view

    # -- what users read ---------------------------------------------------------------------------
    @property
    def run(self) -> RunInfo | None:
        """The run shown now (None while none is: it ended, or has not started again)."""
        return self._current

    @property
    def runs(self) -> list[RunInfo]:
        """Every run publishing at the address, as the hub listed them last."""
        return list(self._runs_link.runs)

    @property
    def stats(self) -> dict[str, Any]:
        """``LiveView.stats``, with ``run`` (the run shown, or None), ``relayed`` (messages passed to the page)
        and ``skipped`` (malformed, or over the notebook's message budget)."""
        return {**super().stats, "run": self._current, "relayed": self.relayed, "skipped": self.skipped}

    def wait_for_run(self, timeout: float) -> RunInfo:
        """Wait until a run is shown.

        Args:
            timeout: Seconds to wait at most.

        Returns:
            The run shown.

        Raises:
            PermissionError: When the run refuses the token, or does not know it.
            ValueError: When several runs match and none was chosen.
            TimeoutError: When no run answers in time (the message says where to look).
        """
        link = self._runs_link
        with link.changed:
            link.changed.wait_for(lambda: self._current is not None or self._problem or link.refused, timeout)
        if link.refused:
            raise PermissionError(f"{link.refused}; attach with the token the run printed, or its GYMVIEW_TOKEN")
        if self._problem:
            raise ValueError(self._problem)
        if self._current is None:
            raise TimeoutError(self._why_not(timeout))
        return self._current

    def close(self) -> None:
        """Leave the run (it goes on, and makes no frame for this notebook) and close the view; shown in a
        notebook, the view leaves its last frame there as a still image (saved with the notebook)."""
        if os.getpid() == self._pid:
            if not self._closed and self._current is not None and self._last_frame.drawn_by_page:
                self._ask_for_picture()
            self._runs_link.close()
        super().close()

    def _ask_for_picture(self) -> None:
        """The page drew the last frame from a scene's state: the run sends it as a picture to a page that has
        just opened, so its pages say so again. Waits while the run is shown (a loaded machine or a slow
        tunnel may take seconds; a run that ends or stops answering sends none), ``STILL_WAIT_SECONDS`` at most."""
        with self._state_lock:
            readies = [kept[0] for kept in self._pages.values() if kept and kept[0].get("type") == protocol.READY]
        if readies and self._display_handle is not None:
            pictured = self._last_frame.pictured
            pictured.clear()
            for ready in readies:
                self._runs_link.to_run(ready)
            ends = time.monotonic() + STILL_WAIT_SECONDS
            while not pictured.wait(0.1) and self._current is not None and time.monotonic() < ends:
                pass

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        if self._display_handle is not None:  # attach() showed it: a cell's result would show it twice
            return {"text/plain": repr(self)}
        return super()._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        return f"<gymview.attach: {self._current or 'no run'} at {self.address.text}>"

    # -- the run's side (on the link's thread) -----------------------------------------------------
    def _hear(self, message: Message) -> None:
        if message.kind == "runs":
            shown = self._current
            self._follow(self._runs_link.runs, self._runs_link.watching)
            if message.head.get("joined") is True and shown is not None and shown.id == self._runs_link.watching:
                self._tell_run_of_pages()  # the hub had forgotten this notebook (silent for a while): pages hidden
        elif message.kind == "to_page":
            self._to_page(message.body, message.buffers)
        elif message.kind == "scene":
            if isinstance(message.body.get("kind"), str) and isinstance(message.body.get("id"), int):
                self._publish_scene(message.body)
        elif message.kind in ("ended", LOST.kind) and self._current is not None:
            run, self._current = self._current, None
            self._runs_link.watch(None)
            with self._state_lock:  # the run ended: a Stop sent to it did its job, whether or not its state came
                self._heard.extend(click for click in self._stops if click not in self._heard)
                self._stops.clear()
            why = "ended" if message.kind == "ended" else f"stopped answering ({SILENT_SECONDS:.0f} s)"
            self._ended = (
                f"the run {run} {why}; the view shows it again when a run named {run.name!r} publishes "
                f"at {self.address.text}"
            )
            self._tell_page(self._ended)
            self._leave_last_frame(keep_widget=True)  # a notebook saved from now on shows the last frame

    def _follow(self, runs: list[RunInfo], watching: str | None) -> None:
        """Take the hub's list: attached to the run chosen, or choose one (and ask the hub for it)."""
        chosen = self._choose(runs)
        if chosen is None:
            return
        if watching != chosen.id:
            self._runs_link.watch(chosen.id)
        elif self._current is None or self._current.id != chosen.id:
            self._show_run(chosen)

    def _choose(self, runs: list[RunInfo]) -> RunInfo | None:
        if self._run_name is not None:  # shown before: a run of that name, the same process first
            named = [run for run in runs if run.name == self._run_name]
            named.sort(key=lambda run: run.pid != (self._last.pid if self._last else None))
            return named[0] if named else None
        wanted = self._wanted
        matching = [run for run in runs if wanted is None or wanted in (run.name, run.id, run.pid)]
        if len(matching) > 1 and not self._problem:
            alike = len({(run.name, run.pid) for run in matching}) < len(matching)  # one process, one name: ids
            listed = "; ".join(f"{run} (id {run.id!r})" if alike else str(run) for run in matching)
            hint = "a name or a pid" if wanted is None else "its pid" if not alike else "its id"
            self._problem = f"{len(matching)} runs publish at {self.address.text}: {listed}. Choose one: run=({hint})"
        return matching[0] if len(matching) == 1 else None

    def _show_run(self, run: RunInfo) -> None:
        with self._state_lock:
            self._current = self._last = run
            self._ended = None
            self._run_name = run.name
            self._numbers.new_run()
        self.title = f"{run.name} · {run.host} · pid {run.pid}"
        self._tell_run_of_pages()

    def _tell_run_of_pages(self) -> None:
        """The run learns of the pages (their ready, their visibility), and sends its latest frame and state."""
        with self._state_lock:
            pages = [message for messages in self._pages.values() for message in messages]
        for message in pages:
            self._runs_link.to_run(message)

    def _to_page(self, content: Any, buffers: list[bytes]) -> None:
        if self._current is None or not for_page(content, buffers):
            self.skipped += 1
            return
        if content["type"] == protocol.STATE:
            with self._state_lock:
                self._heard.extend(c for c in content.get("heard", []) if isinstance(c, str) and c not in self._heard)
            if self._state_budget.try_acquire():
                self.relayed += 1
                self.send(content, buffers)
            else:
                self.skipped += 1
            return
        if self._last_frame.keep(content, buffers):  # its H.264 packets since a key frame were too many
            self._runs_link.to_run(protocol.key_frame_wanted("attach"))
        if not PROCESS_BUDGET.try_acquire():  # the notebook's own limit on messages, whatever the run sends
            self.skipped += 1
            if content.get("format") == "h264":
                self._runs_link.to_run(protocol.key_frame_wanted("attach"))
            return
        if content["type"] == protocol.FRAME:
            with self._state_lock:
                content = self._numbers.out(content)
            if not for_page(content, buffers):  # numbered before the first frame of the run: older than any
                self.skipped += 1
                return
        self.relayed += 1
        self.send(content, buffers)

    def _tell_page(self, message: str | None = None) -> None:
        """The page's buttons are off while no run is shown; ``message`` says why."""
        with self._state_lock:
            heard = list(self._heard)
        self.send(protocol.state_message(ENDED, None, None, list(SPEEDS), 0, heard, message), [])

    # -- the page's side (on a shell thread) -------------------------------------------------------
    def _from_page(self, content: Any) -> None:
        if not isinstance(content, dict):
            return
        kind, client = content.get("type"), content.get("client")
        if kind == protocol.MODULE:  # this notebook's gymview has the page's modules: nothing to ask the run
            self._messages.receive(content)
            return
        with self._state_lock:
            kept_for_later = kind in (protocol.READY, protocol.VISIBILITY) and isinstance(client, str)
            if kept_for_later and (client in self._pages or len(self._pages) < MAX_PAGES):
                kept = self._pages.setdefault(str(client), [])
                kept[:] = [content] if kind == protocol.READY else [*kept[:1], content]
            to_run = self._numbers.back(content) if self._current is not None else None
            click = content.get("id") if isinstance(content.get("id"), str) else None
            if self._current is None and click is not None:
                self._heard.append(click)
            elif click is not None and to_run is not None and content.get("action") == "stop":
                self._stops.append(click)
        if to_run is not None:
            self._runs_link.to_run(to_run)
        elif self._current is None and kind == protocol.READY:  # a page opened (or shown again) after the end
            self._show_last_picture()
            self._tell_page(self._ended or f"no run is shown: waiting for one at {self.address.text}")
        elif self._current is None and kind == protocol.CONTROL:
            self._tell_page(f"no run is shown: waiting for one at {self.address.text}")

    def _show_last_picture(self) -> None:
        """The run's last frame, for a page that opened after the run ended (it has none)."""
        picture = self._last_frame.picture()
        if picture is not None:
            header, data = picture
            with self._state_lock:
                seq = max(self._numbers.top, 0)
            self.send({**header, "seq": seq}, [data])

    def _still_picture(self) -> tuple[dict[str, Any], bytes] | None:
        return self._last_frame.picture()

    def _why_not(self, timeout: float) -> str:
        where = self.address.text
        if not self._runs_link.answered:
            port = self.address.port
            return (
                f"nothing answered at {where} in {timeout:g} s: is a script publishing there "
                f"(gymview.watch(env, publish={where!r}), or GYMVIEW_PUBLISH={where})? From another machine, is the "
                f"SSH tunnel up (ssh -N -L {port}:127.0.0.1:{port} server)?"
            )
        runs = "; ".join(str(run) for run in self._runs_link.runs) or "none"
        silent = self._runs_link.silent_for()
        if silent > SILENT_SECONDS:
            return (
                f"no run {self._wanted!r} at {where} in {timeout:g} s: the process listening there stopped "
                f"answering {silent:.0f} s ago (ended, or stuck?); the runs it listed last: {runs}"
            )
        return f"no run {self._wanted!r} at {where} in {timeout:g} s; the runs there: {runs}"


def runs_at(address: str, token: str | None = None, timeout: float = 5.0) -> list[RunInfo]:
    """The runs publishing at ``address`` (name, host and pid of each), without attaching to one.

    Args:
        address: ``"HOST:PORT"`` where they publish.
        token: Their token (None: ``GYMVIEW_TOKEN``, else the address's token file on this machine).
        timeout: Seconds to wait for an answer.

    Returns:
        The runs, in order of name.

    Raises:
        ValueError: When ``address`` is not ``HOST:PORT``, or no token is given.
        PermissionError: When the runs there refuse the token, or do not know it.
        TimeoutError: When nothing answers there within ``timeout`` seconds.

    Examples:
        >>> import gymnasium as gym, gymview
        >>> env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), publish="127.0.0.1:5574", run="demo")
        >>> [run.name for run in runs_at("127.0.0.1:5574")]
        ['demo']
        >>> env.close()
    """
    where = parse_address(address)
    link = ViewerLink(where, curve_keys(viewer_token(token, where.text)), lambda message: None).start()
    try:
        with link.changed:
            link.changed.wait_for(lambda: link.answered or link.refused, timeout)
        if link.refused:
            raise PermissionError(f"{link.refused}: use the token the run printed, or its GYMVIEW_TOKEN")
        if not link.answered:
            raise TimeoutError(f"nothing answered at {where.text} in {timeout:g} s")
        return list(link.runs)
    finally:
        link.close()
