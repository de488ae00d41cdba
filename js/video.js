// H.264 frames through WebCodecs: every frame of the stream is decoded, in order, from a key frame on.
// The kernel sends a key frame when a page asks (it joined mid-stream, or its decoder failed).

// The stream's codec string when checking what this browser decodes (the kernel's baseline profile).
export const PROBE_CODEC = "avc1.42c01f";
// A page asks for a key frame at most this often: the deltas that arrive until it comes ask nothing.
export const KEY_ASK_MS = 500;

/** The video codecs this browser decodes: ["h264"], or [] (no WebCodecs, or no H.264 in it). */
export async function videoCodecs(decoderClass = globalThis.VideoDecoder) {
  if (typeof decoderClass !== "function" || typeof globalThis.EncodedVideoChunk !== "function") return [];
  try {
    const { supported } = await decoderClass.isConfigSupported({ codec: PROBE_CODEC, optimizeForLatency: true });
    return supported ? ["h264"] : [];
  } catch {
    return [];
  }
}

/** One H.264 stream's decoder: `push` each frame; `onFrame(header, videoFrame)` gets the pictures. */
export class VideoFrames {
  /**
   * @param {(header: object, frame: VideoFrame) => void} onFrame
   * @param {(error: Error) => void} onError
   * @param {(init: object) => VideoDecoder} makeDecoder
   */
  constructor(onFrame, onError, makeDecoder = (init) => new VideoDecoder(init)) {
    this.onFrame = onFrame;
    this.onError = onError;
    this.makeDecoder = makeDecoder;
    this.decoder = null;
    this.config = "";
    /** @type {Map<number, object>} headers of frames in the decoder, by seq */
    this.headers = new Map();
    this.closed = false; // for good: frames the decoder still outputs are closed, not shown
  }

  /** Decode one frame; false when it cannot be (no key frame since the start or the last error). */
  push(header, bytes) {
    if (this.closed) return false;
    const config = `${header.codec}/${header.width}x${header.height}`;
    if (header.key && config !== this.config) this.reset();
    try {
      if (this.decoder === null) {
        if (!header.key || !header.codec) return false;
        this.decoder = this.makeDecoder({
          output: (frame) => this.output(frame),
          error: (error) => this.fail(error),
        });
        // no coded size: a picture of odd size is coded one row or column larger (the canvas clips it)
        this.decoder.configure({ codec: header.codec, optimizeForLatency: true });
        this.config = config;
      }
      this.headers.set(header.seq, header);
      this.decoder.decode(new EncodedVideoChunk({ type: header.key ? "key" : "delta", timestamp: header.seq, data: bytes }));
    } catch (error) { // no WebCodecs here (codec="h264" on a page without it), or a configuration it refuses
      this.fail(error);
      return false;
    }
    return true;
  }

  output(frame) {
    if (this.closed) {
      frame.close();
      return;
    }
    const header = this.headers.get(frame.timestamp);
    for (const seq of this.headers.keys()) {
      if (seq > frame.timestamp) break;
      this.headers.delete(seq);
    }
    if (header === undefined) frame.close();
    else this.onFrame(header, frame);
  }

  fail(error) {
    this.reset();
    if (!this.closed) this.onError(error);
  }

  /** Drop the decoder: the next key frame starts a new one. */
  reset() {
    const decoder = this.decoder;
    this.decoder = null;
    this.config = "";
    this.headers.clear();
    if (decoder !== null && decoder.state !== "closed") decoder.close();
  }

  /** Drop the decoder for good (the widget is going away). */
  close() {
    this.closed = true;
    this.reset();
  }
}
