"""Frames made small for the page: the helper process that draws, downsamples and compresses them
(JPEG, PNG or an H.264 stream) and the frames kept for replay."""
