"""Read back what gymview logged: TensorBoard event files (EventAccumulator) and W&B offline runs."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import pytest
from waiting import wait_until


def tensorboard_videos(log_dir: str | Path) -> dict[str, list[dict]]:
    """Per tag, the video summaries in ``log_dir``: step, width, height, frames and GIF delay (ms)."""
    from PIL import Image
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(log_dir), size_guidance={"images": 0})
    accumulator.Reload()
    found = {}
    for tag in accumulator.Tags()["images"]:
        found[tag] = []
        for event in accumulator.Images(tag):
            gif = Image.open(io.BytesIO(event.encoded_image_string))
            assert gif.format == "GIF"
            delays = []
            for index in range(getattr(gif, "n_frames", 1)):
                gif.seek(index)
                delays.append(gif.info["duration"])
            found[tag].append(dict(step=event.step, width=event.width, height=event.height, delays_ms=delays))
    return found


def gif_frames(video: dict, fps: float) -> int:
    """How many frames of a video at ``fps`` a GIF of ``tensorboard_videos`` plays for: its delays
    summed (Pillow writes a run of equal frames as one, shown for their total time)."""
    return round(sum(video["delays_ms"]) * fps / 1000)


@pytest.fixture
def wandb_offline(tmp_path, monkeypatch):
    """``wandb``, offline and silent (no network). Pass ``dir=str(tmp_path)`` to ``init``: wandb reads
    ``WANDB_DIR`` once per process."""
    wandb = pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_DISABLE_GIT", "true")
    yield wandb
    if wandb.run is not None:
        wandb.finish()


def wandb_logged(root: str | Path, key: str, count: int) -> tuple[Path, list[dict]]:
    """The offline run's files folder and its rows holding ``key``, once there are ``count`` of them:
    wandb's service process writes the run's file on after ``run.finish()`` returns."""
    found: list[dict] = []

    def complete() -> bool:
        nonlocal found
        found = [row for row in wandb_history(root)[1] if f"{key}/path" in row]
        return len(found) >= count

    wait_until(complete, f"{count} rows with {key} in the wandb run under {root}")
    return wandb_history(root)[0], found


def wandb_history(root: str | Path) -> tuple[Path, list[dict]]:
    """The one offline run under ``root / "wandb"``: its files folder and the rows it logged so far."""
    from wandb.proto import wandb_internal_pb2

    (log,) = Path(root).glob("wandb/offline-run-*/run-*.wandb")
    rows = []
    for data in _leveldb_records(log.read_bytes()):
        record = wandb_internal_pb2.Record()
        record.ParseFromString(data)
        if record.WhichOneof("record_type") == "history":
            rows.append({item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item})
    return log.parent / "files", rows


def _leveldb_records(data: bytes):
    """The records of a ``.wandb`` file: a 7-byte header, then LevelDB's log format (32 KiB blocks,
    7-byte record headers: crc32c, length, type full/first/middle/last)."""
    assert data[:4] == b":W&B", data[:7]
    block, header, offset, pending = 32768, 7, 7, b""
    while offset + header <= len(data):
        left = block - offset % block
        if left < header:  # the block's tail is padding
            offset += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[offset : offset + header])
        if offset + header + length > len(data):  # still being written
            break
        chunk = data[offset + header : offset + header + length]
        offset += header + length
        if kind == 0 and length == 0:
            break
        if kind == 1:
            yield chunk
        elif kind == 2:
            pending = chunk
        elif kind == 3:
            pending += chunk
        elif kind == 4:
            yield pending + chunk
