// What a probe says of a file, whoever answered it: ffprobe (probe.ts) or the MP4's own index
// (mp4-probe.ts, decision 0286).
import type { HdrSource, Rational } from "./args.ts";

export interface VideoProbe {
  /** Absolute index of the stream in the file (what -map takes). */
  streamIndex: number;
  codec: string;
  pixelFormat: string;
  bitDepth: number;
  /** Seconds of video, from its first frame; null when the file does not say. */
  durationSeconds: number | null;
  /** The first frame's timestamp, absolute seconds; times a job asks for are relative to it. */
  startTime: number;
  /** Stored size. */
  width: number;
  height: number;
  /** Size as shown: rotation and non-square pixels applied. */
  displayWidth: number;
  displayHeight: number;
  /** Clockwise degrees a player turns the stored picture (from the display matrix). */
  rotation: 0 | 90 | 180 | 270;
  /** Average frames per second, when known. */
  frameRate: number | null;
  /** The container's nominal and average rates disagree: a variable frame rate. */
  variableFrameRate: boolean;
  timeBase: Rational;
  colorMatrix: string | null;
  hdr: HdrSource | null;
}

export interface MediaProbe {
  formatName: string;
  /** The file's average bytes per second of playback (every stream), when ffprobe knows it. */
  bytesPerSecond?: number | null;
  /** The first video stream that is a moving picture (cover art is not), or null. */
  video: VideoProbe | null;
  hasAudio: boolean;
  /** Every subtitle track, in file order (absent where a probe was built by hand). */
  subtitles?: SubtitleProbe[];
}

export interface SubtitleProbe {
  /** Absolute index of the stream in the file. */
  streamIndex: number;
  /** Position among the subtitle streams: what `-map 0:s:N` takes. */
  subtitleIndex: number;
  codec: string;
  /** The container's language tag as written (MP4 and Matroska use ISO 639-2, "eng"). */
  language: string | null;
  isDefault: boolean;
  /** A subtitle track someone chose to show always (signs, foreign parts); not dialogue. */
  isForced: boolean;
}
