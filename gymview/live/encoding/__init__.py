"""Frames made small for the page: the helper process that draws, downsamples and compresses them
(JPEG, PNG or an H.264 stream), the stream's quality level, and the frames kept for replay."""
