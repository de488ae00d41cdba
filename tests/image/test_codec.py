import io

import numpy as np
import pytest
from PIL import Image

import gymview.image.codec as encode
from gymview.image.codec import check_format, check_quality, encode_frame


def _gradient(h=120, w=160):
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([x * 255 // w, y * 255 // h, (x + y) % 256], axis=2).astype(np.uint8)


@pytest.mark.parametrize("use_simplejpeg", [True, False])
def test_jpeg_round_trip_is_close(monkeypatch, use_simplejpeg):
    if not use_simplejpeg:
        monkeypatch.setattr(encode, "simplejpeg", None)
    elif encode.simplejpeg is None:
        pytest.skip("simplejpeg not installed")
    frame = _gradient()
    data = encode_frame(frame, "jpeg", quality=90)
    assert data[:2] == b"\xff\xd8"
    decoded = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    assert decoded.shape == frame.shape
    assert np.abs(decoded.astype(int) - frame).mean() < 4


def test_png_is_lossless_and_quality_lowers_jpeg_size():
    frame = _gradient()
    decoded = np.asarray(Image.open(io.BytesIO(encode_frame(frame, "png"))))
    assert np.array_equal(decoded, frame)
    assert len(encode_frame(frame, "jpeg", 20)) < len(encode_frame(frame, "jpeg", 95))


def test_format_and_quality_checks():
    assert check_format("JPG") == "jpeg" and check_format("png") == "png"
    with pytest.raises(ValueError, match="one of"):
        check_format("gif")
    for bad in (0, 101, 50.5, True, "80"):
        with pytest.raises(ValueError, match="1 to 100"):
            check_quality(bad)
