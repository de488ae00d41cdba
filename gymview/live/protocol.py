"""Message shapes between the kernel and the browser; mirrored by js/protocol.js.

Kernel → browser (a widget custom message; the image travels as the one binary buffer)::

    {"type": "frame", "v": 2, "seq": 17, "format": "jpeg", "width": 512, "height": 341,
     "step": 1234, "episode": 5, "episode_return": 37.0, "dropped": 456, "acked": 15,
     "agent": null, "returns": null, "row": 1240}

``seq`` counts frames sent by this view, from 0, without gaps: a frame the kernel skips (the
throttle, the message budget, no view shown) never gets a number. ``step``, ``episode`` and
``episode_return`` may be null when the caller gave none. Multi-agent envs (PettingZoo) give ``agent``, the
agent to move next (a name; null when all move at once or the episode is over), and ``returns``, each
agent's running return (``{"player_0": 1.0, "player_1": -1.0}``), in place of ``episode_return``.
``row`` numbers the step the frame shows among the steps the loop kept for the replay's charts (null
when it keeps none; see the ``steps`` message).
``acked`` is the newest ack the kernel has read: when an ack stays unread for a second, the kernel
cannot read acks now (a blocking cell without comms over subshells) and the browser sends them
rarely, so they do not pile up.

With ``"format": "scene"`` the buffer is a state the page draws itself (little-endian float32 numbers), and
``"scene"`` is the id of the scene it is drawn with: the widget's ``_scene`` trait, a JSON description sent
once (``gymview.live.encoding.scene_frames``, ``js/scene.js``).

With ``"format": "h264"`` the buffer is one H.264 access unit (Annex B) of a continuous stream, and the
header adds ``"key": true`` for a key frame (which starts with its SPS and PPS: a decoder can start
there) and ``"codec": "avc1.42c01e"``, the stream's WebCodecs codec string. Every such frame must be
decoded, in order; a page that cannot (it has no key frame yet, or its decoder failed) asks for one.

Browser → kernel (``client`` identifies one browser page; a kernel may have several)::

    {"type": "ready", "v": 2, "client": "k3x9", "codecs": ["h264"]}
        a view was rendered; the kernel resends its latest frame (as an image) and its state (the page sends it
        again until a state comes); ``codecs``: the video codecs this page decodes, and ``"webgl"`` where it
        draws 3D scenes (MuJoCo frames go as pictures while a page lacks it) (``codec="auto"`` streams
        H.264 while every page decodes it)
    {"type": "keyframe", "client": "k3x9"}               this page cannot decode the stream from here: the next
                                                           H.264 frame is a key frame
    {"type": "ack", "seq": 17, "client": "k3x9"}         this page drew frames up to 17 (at most one ack per 250 ms)
    {"type": "visibility", "visible": false, "client": "k3x9"}   this page shows no view of the widget
    {"type": "control", "action": "pause", "id": "k3x9:4"}   a button: pause | play | step | stop | speed
                                                              (with "value": 2.0 or "max") | cancel
                                                              ("of": the id of a click that came too late)
    {"type": "key", "key": "ArrowLeft", "down": true, "id": "k3x9:5"}   a key went down (or up) in the focused view
    {"type": "replay", "index": 12, "id": "k3x9:6"}        show the 12th kept frame (oldest first)
    {"type": "module", "name": "mujoco"}                 this page draws a scene with a module it lacks: send it
    {"type": "steps", "id": "k3x9:7"}                      the replay's charts: send the kept frames' steps

Clicks, keys and replay and steps requests carry an ``id``: the state message names the clicks applied, and a
page's ``cancel`` names the click it gave up on.

Kernel → browser, besides frames::

    {"type": "state", "state": "paused", "speed": 1.0, "fps": 50, "speeds": [0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
     "history": 300, "heard": ["k3x9:4"], "message": ""}
        what the loop does now: ``fps`` is the env's own frame rate (speed 1.0), ``speeds`` the
        choices (the page adds "max", sent back as ``"value": "max"``), ``history`` how many kept
        frames the replay slider has, ``heard`` the ids of the latest clicks applied (the browser
        tells the user when a click is not heard: the kernel could not hear it while the cell runs),
        ``message`` the line to show under the picture (a run's error, why the frames are pictures; ``""``:
        none), the latest the kernel reported, in every state message
    a frame message with ``"replay": 12``: a kept frame shown again, not a new one
    {"type": "module", "name": "mujoco"} + one buffer: the module's JavaScript (``js/scene3d.js``, three.js
        included), sent to a page that asked: once per page, not with every view
    {"type": "steps", "first": 1000, "stride": 1, "columns": {"step": [...], "reward": [...], ...},
     "frames": [1000, 1002, ...], "rows": [{"step": 40, "reward": 1.0, ...}, ...]}
        the steps the kept frames span, from number ``first`` to the latest, as columns (every
        ``stride``-th step; a missing value is null), each kept frame's step number (``frames``,
        null for a frame without one) and its row (``rows``, null when no longer kept)

A background job's status line (:class:`gymview.live.job_status.JobStatus`, a widget of its own)
hears one message, its Stop button::

    {"type": "stop"}

:func:`read` turns any message a page sends into a :class:`FromPage`, checking every field's type,
so the kernel never acts on a malformed one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PROTOCOL_VERSION = 2

FRAME = "frame"
READY = "ready"
KEYFRAME = "keyframe"
ACK = "ack"
VISIBILITY = "visibility"
MODULE = "module"
CONTROL = "control"
KEY = "key"
REPLAY = "replay"
STEPS = "steps"
STATE = "state"
JOB_STOP = "stop"
BUTTONS = ("pause", "play", "step", "stop", "speed")
CANCEL = "cancel"


def frame_header(
    seq: int,
    image_format: str,
    width: int,
    height: int,
    info: dict[str, Any],
    dropped: int,
    acked: int = -1,
) -> dict[str, Any]:
    """The JSON part of a frame message.

    >>> frame_header(0, "jpeg", 4, 2, {"step": 3}, dropped=0)["step"]
    3
    """
    return {
        "type": FRAME,
        "v": PROTOCOL_VERSION,
        "seq": seq,
        "format": image_format,
        "width": width,
        "height": height,
        "step": info.get("step"),
        "episode": info.get("episode"),
        "episode_return": info.get("episode_return"),
        "dropped": dropped,
        "acked": acked,
        "agent": info.get("agent"),
        "returns": info.get("returns"),
        "row": info.get("row"),
    }


def state_message(
    state: str,
    speed: float | None,
    fps: float | None,
    speeds: list[Any],
    history: int,
    heard: list[str],
    message: str | None = None,
) -> dict[str, Any]:
    """The state message: what the loop does now, and the clicks it heard.

    >>> state_message("paused", 1.0, 50.0, [1.0], 3, ["k3x9:4"])["heard"]
    ['k3x9:4']
    """
    return {
        "type": STATE,
        "state": state,
        "speed": speed,
        "fps": fps,
        "speeds": speeds,
        "history": history,
        "heard": heard,
        "message": message,
    }


def module_message(name: str) -> dict[str, Any]:
    """The header of a module sent to a page that asked for it (its JavaScript is the one buffer).

    >>> module_message("mujoco")
    {'type': 'module', 'name': 'mujoco'}
    """
    return {"type": MODULE, "name": name}


def steps_message(window: dict[str, Any], frames: list[int | None], rows: list[Any]) -> dict[str, Any]:
    """The steps the kept frames span, for the replay's charts: ``window`` from
    ``gymview.episodes.recent.KeptSteps.window``, each kept frame's step number and row.

    >>> steps_message({"first": 3, "stride": 1, "columns": {"reward": [1.0]}}, [3], [{"reward": 1.0}])["frames"]
    [3]
    """
    return {"type": STEPS, **window, "frames": frames, "rows": rows}


def replay_header(header: dict[str, Any], index: int) -> dict[str, Any]:
    """A kept frame's header, marked as shown again (not a new frame).

    >>> replay_header(frame_header(4, "png", 2, 2, {}, dropped=0), 1)["replay"]
    1
    """
    return {**header, "replay": index}


def page_hidden(client: str) -> dict[str, Any]:
    """What page ``client`` would say once it shows the view no more: said for it by a notebook that left
    (``gymview.remote``).

    >>> read(page_hidden("k3x9")).visible
    False
    """
    return {"type": VISIBILITY, "visible": False, "client": client}


def key_frame_wanted(client: str) -> dict[str, Any]:
    """Page ``client`` cannot decode the H.264 stream from here (a frame was lost on the way to it).

    >>> read(key_frame_wanted("k3x9")).type
    'keyframe'
    """
    return {"type": KEYFRAME, "client": client}


@dataclass(frozen=True)
class FromPage:
    """A message from a browser page, its fields checked; a field the message lacks (or holds with the
    wrong type) is None."""

    type: str
    id: str | None = None  # clicks, keys and replay requests
    client: str = ""  # ready, ack and visibility
    version: Any = None  # ready: the page's PROTOCOL_VERSION
    seq: int | None = None  # ack
    visible: bool = False  # visibility
    action: str | None = None  # control: one of BUTTONS, or CANCEL
    value: Any = None  # control "speed": a speed, or "max"
    of: str | None = None  # control "cancel": the id of the click to undo
    key: str | None = None  # key
    down: bool = False  # key
    index: int | None = None  # replay
    codecs: tuple[str, ...] | None = None  # ready: the video codecs the page decodes (None: an older page)
    name: str | None = None  # module

    @property
    def is_click(self) -> bool:
        """A message a person causes (a button, a key, the replay slider), which acts at once."""
        return self.type in (CONTROL, KEY, REPLAY, STEPS)


def read(content: Any) -> FromPage | None:
    """The message a page sent, or None when ``content`` is not one.

    >>> read({"type": "control", "action": "pause", "id": "k3x9:4"}).is_click
    True
    >>> read({"type": "ack", "seq": "4"}).seq is None, read(["not", "a", "message"])
    (True, None)
    """
    if not isinstance(content, dict) or not isinstance(content.get("type"), str):
        return None

    def field(name: str, kind: type | tuple[type, ...]) -> Any:
        value = content.get(name)
        return value if isinstance(value, kind) and not (kind is int and isinstance(value, bool)) else None

    return FromPage(
        type=content["type"],
        id=field("id", str),
        client=str(content.get("client", "")),
        version=content.get("v"),
        seq=field("seq", int),
        visible=bool(content.get("visible")),
        action=field("action", str),
        value=content.get("value"),
        of=field("of", str),
        key=field("key", str),
        down=bool(content.get("down")),
        index=field("index", int),
        codecs=_names(content.get("codecs")),
        name=field("name", str),
    )


def _names(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(name for name in value if isinstance(name, str))


def is_job_stop(content: Any) -> bool:
    """True for the Stop button of a background job's status line.

    >>> is_job_stop({"type": "stop"}), is_job_stop({"type": "control", "action": "stop"})
    (True, False)
    """
    return isinstance(content, dict) and content.get("type") == JOB_STOP
