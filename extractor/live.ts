// mode live (decision 0360): frames of a live HLS stream as it plays. Without `every`, the
// latest frame now: the last frame of the newest segment. With `every` and `duration`, that
// frame and then one every `every` seconds of stream time, for `duration` seconds: the playlist
// is reloaded at its own pace (hls-live.ts), each wanted time waits until a segment that holds it
// is on the list, and only those segments are fetched. Each segment is handed to ffmpeg on its
// own (its init segment before it) through a loopback relay, and its frames are decoded and
// stored as any job's are (decodeAll, FrameWriter).
//
// Times: a frame's `timestamp` and `pts` are stream time, the presentation time the segments
// themselves carry (tfdt and composition offsets, as ffmpeg reads a segment after its init), in
// seconds. `captured_at` is when the frame was on air: the segment's EXT-X-PROGRAM-DATE-TIME
// plus the frame's offset in it, or, without one, the moment we read the segment.
import type { PlannedFrame } from "../schema/frame-plan.ts";
import { liveFrameOffsets } from "../schema/frame-plan.ts";
import type { ExtractResult, FrameResult, JobOptions } from "../schema/messages.ts";
import { ZIP_ALWAYS_ABOVE_FRAMES } from "../schema/plans.ts";
import { FrameBufferPool } from "./decode.ts";
import { decodeAll } from "./decode-plan.ts";
import { ExtractError } from "./errors.ts";
import { probeMedia, scanVideoDuration } from "./ffmpeg/probe.ts";
import { FrameWriter } from "./frame-writer.ts";
import { log } from "./log.ts";
import type { FrameSink } from "./output/frame-sink.ts";
import type { ProgressSink } from "./output/progress-reporter.ts";
import { pictureSteps } from "./picture-steps.ts";
import type { Slot } from "./scheduler.ts";
import type { OutputSize } from "./sizing.ts";
import { planOutputSize } from "./sizing.ts";
import type { LiveStream } from "./sources/hls-live.ts";
import { LIVE_SEGMENT_BYTES, LiveStreamStalled } from "./sources/hls-live.ts";
import type { Segment } from "./sources/hls-playlist.ts";
import { looksLikeTs, remuxTs, tsTimes } from "./sources/hls-ts.ts";
import type { ServedMedia } from "./sources/ranged-origin.ts";
import { startRelay } from "./sources/relay.ts";

export interface LiveJobSettings {
  signal: AbortSignal;
  progress?: ProgressSink;
  maxFrames: number;
  trace?: { job: string; attempt: string };
  /** Waits for the next reload out of the scheduler's slot (extractor/scheduler.ts). */
  idle?: Slot["idle"];
}

/** Stream times to capture after the first (latest) frame (schema/frame-plan.ts). */
export const liveOffsets = liveFrameOffsets;

/**
 * Seconds watched, for billing (per started minute): with `every`, `every` seconds per
 * frame up to the last one captured, never more than `duration`; the latest frame alone is
 * a moment (billed as one started minute).
 */
export function watchedSeconds(
  options: Pick<JobOptions, "every" | "duration">,
  lastCaptured: number,
): number {
  if (options.every === undefined || options.duration === undefined) return 0;
  return Math.min(options.duration, (lastCaptured + 1) * options.every);
}

interface DecodedSegment {
  /** Stream time of the segment's first frame, seconds. */
  start: number;
  /** Stream time just after its last frame. */
  end: number;
}

export async function runLiveJob(
  options: JobOptions,
  stream: LiveStream,
  sink: FrameSink,
  settings: LiveJobSettings,
  outcome: ExtractionOutcome,
): Promise<void> {
  const { signal, progress } = settings;
  const offsets = liveOffsets(options);
  if (offsets.length > settings.maxFrames) {
    throw new ExtractError(
      "TooManyFrames",
      `${offsets.length} frames planned, the limit is ${settings.maxFrames}`,
      `This job would produce ${offsets.length} frames; your plan allows ${settings.maxFrames} per job.`,
    );
  }
  const results = new Map<number, FrameResult>();
  offsets.forEach((_, i) => {
    results.set(i + 1, {
      index: i + 1,
      timestamp: 0,
      status: "error",
      key: null,
      pts: null,
      error: "the stream did not reach this time",
      captured_at: null,
      captured_at_source: null,
    });
  });
  const ok = () => [...results.values()].filter((r) => r.status === "ok").length;
  progress?.stage("probing");
  const zipped = options.output !== "urls" || offsets.length > ZIP_ALWAYS_ABOVE_FRAMES;
  let writer: FrameWriter | null = null;
  let size: OutputSize | null = null;
  let buffers: FrameBufferPool | null = null;
  const init = await stream.init();

  /** Decodes the frames on screen at `times` (stream time) in one segment, into `indexes`. */
  const capture = async (segment: Segment, wanted: { index: number; time: number | null }[]) => {
    const receivedAt = Date.now();
    const fetched = await stream.segment(segment);
    // An MPEG-TS segment is remuxed alone to an fMP4 (hls-ts.ts); its stream time is then its
    // own first PTS, which the remux does not keep.
    const ts = looksLikeTs(fetched);
    const bytes = ts
      ? await remuxTs(fetched, LIVE_SEGMENT_BYTES, signal)
      : Buffer.concat([init, fetched]);
    const relay = await startRelay(bufferMedia(bytes));
    try {
      const probe = await probeMedia(relay.url, signal);
      const video = probe.video;
      if (!video)
        throw new ExtractError("NoVideoFound", "the segment has no video track", NO_VIDEO);
      const duration = (await scanVideoDuration(relay.url, video, signal)) ?? segment.duration;
      if (!size || !writer || !buffers) {
        size = planOutputSize(
          { width: video.displayWidth, height: video.displayHeight },
          options.resolution,
          options.max_width,
        );
        outcome.width = video.displayWidth;
        outcome.height = video.displayHeight;
        outcome.delivered_resolution = size.deliveredResolution;
        outcome.resolution_note ??= size.note;
        buffers = new FrameBufferPool(size, 3);
        writer = new FrameWriter(sink, options, size, results, zipped);
        await writer.open();
        progress?.extracting(offsets.length, ok);
      }
      // Stream time = the file's time + shift (0 for fMP4, whose fragments keep their times).
      const start = ts ? tsTimes(fetched).earliest / TS_CLOCK : video.startTime;
      const decoded: DecodedSegment = { start, end: start + duration };
      // The latest frame (time null) is the segment's last: decodeAll decodes a time at the
      // end as its last frame.
      const planned: PlannedFrame[] = wanted.map(({ index, time }) => ({
        index,
        timestamp: Math.max(0, Math.min((time ?? decoded.end) - decoded.start, duration)),
        pastEnd: false,
      }));
      await decodeAll(
        {
          input: relay.url,
          video,
          durationSeconds: duration,
          picture: pictureSteps(video, size),
          signal,
          buffers,
        },
        planned,
        writer,
        { strategy: "dense", keyframeHints: null },
      );
      for (const { index, time } of wanted) {
        const result = results.get(index) as FrameResult;
        if (result.status !== "ok" || result.pts === null) continue;
        const pts = round6(decoded.start + result.pts);
        result.pts = pts;
        result.timestamp = time ?? pts;
        const offsetMs = (pts - decoded.start) * 1000;
        result.captured_at = new Date(
          (segment.programDateTime ?? receivedAt) + Math.max(0, offsetMs),
        ).toISOString();
        result.captured_at_source =
          segment.programDateTime !== null ? "program_date_time" : "received";
      }
      return { decoded };
    } finally {
      await relay.close();
    }
  };

  try {
    // The first frame: the newest segment's last, now.
    const newest = stream.playlist.segments.at(-1) as Segment;
    const first = await capture(newest, [{ index: 1, time: null }]);
    const firstResult = results.get(1) as FrameResult;
    if (firstResult.status !== "ok") {
      throw new ExtractError("ExtractionFailed", "no frame could be decoded", UNDECODABLE);
    }
    const origin = firstResult.timestamp;
    log("info", "live.first_frame", {
      ...settings.trace,
      sequence: newest.sequence,
      stream_time: origin,
    });
    let last = 0;
    if (offsets.length > 1) {
      // The wait for the next reload holds no slot: another job runs in it meanwhile.
      const reload = () => stream.reload(signal);
      const idle = settings.idle;
      const step = { signal, reload: idle ? () => idle(reload) : reload };
      last = await watch(stream, offsets, origin, newest, first.decoded, capture, results, step);
    }
    progress?.stage("uploading");
    const done = writer as FrameWriter | null;
    outcome.zip = done ? await done.finish() : null;
    outcome.frames = [...results.values()];
    outcome.processed_seconds = watchedSeconds(options, last);
    outcome.duration_seconds = outcome.processed_seconds;
    outcome.status = "completed";
  } catch (error) {
    await (writer as FrameWriter | null)?.abort();
    if (error instanceof LiveStreamStalled) {
      throw new ExtractError(
        "DownloadFailed",
        error.message,
        "The live stream stopped advancing, so the job ended; nothing was charged.",
      );
    }
    throw error;
  } finally {
    (buffers as FrameBufferPool | null)?.retire();
  }
}

/**
 * Captures the frames after the first as the stream plays; returns the index (0-based) of the
 * last offset captured. Frames whose time the stream never reached (it ended) stay errors.
 */
async function watch(
  stream: LiveStream,
  offsets: number[],
  origin: number,
  anchorSegment: Segment,
  anchor: DecodedSegment,
  capture: (
    segment: Segment,
    wanted: { index: number; time: number | null }[],
  ) => Promise<{ decoded: DecodedSegment }>,
  results: Map<number, FrameResult>,
  step: { signal: AbortSignal; reload: () => Promise<unknown> },
): Promise<number> {
  const { signal } = step;
  let next = 1;
  let last = 0;
  // The stream time the anchor segment starts at, exact (probed); later ones are estimated from
  // the EXTINFs after it and made exact again as each is decoded.
  let anchorSequence = anchorSegment.sequence;
  let anchorStart = anchor.start;
  const durations = new Map<number, number>([[anchorSegment.sequence, anchorSegment.duration]]);
  while (next < offsets.length) {
    signal.throwIfAborted();
    const playlist = stream.playlist;
    for (const segment of playlist.segments) durations.set(segment.sequence, segment.duration);
    const startOf = (sequence: number) => {
      let at = anchorStart;
      for (let s = anchorSequence; s < sequence; s += 1) at += durations.get(s) ?? 0;
      return at;
    };
    // Each later segment in turn: the wanted times that fall in it are captured from it.
    for (const segment of playlist.segments) {
      if (segment.sequence <= anchorSequence || next >= offsets.length) continue;
      if (!durations.has(segment.sequence - 1)) {
        // Segments came and went between two reloads: their times are not known any more.
        throw new ExtractError(
          "DownloadFailed",
          `the live playlist dropped segments ${anchorSequence + 1}–${segment.sequence - 1} before they could be read`,
          "The live stream moved on faster than it could be read.",
        );
      }
      const start = startOf(segment.sequence);
      const end = start + segment.duration;
      const wanted: { index: number; time: number }[] = [];
      while (next < offsets.length && origin + offsets[next] < end) {
        wanted.push({ index: next + 1, time: round6(origin + offsets[next]) });
        next += 1;
      }
      if (wanted.length > 0) {
        const { decoded } = await capture(segment, wanted);
        for (const w of wanted) {
          if (results.get(w.index)?.status === "ok") last = w.index - 1;
        }
        anchorStart = decoded.start;
      } else {
        anchorStart = start;
      }
      anchorSequence = segment.sequence;
    }
    if (next >= offsets.length) break;
    if (playlist.ended) {
      for (let k = next; k < offsets.length; k += 1) {
        const result = results.get(k + 1) as FrameResult;
        result.timestamp = round6(origin + offsets[k]);
        result.error = "the stream ended (EXT-X-ENDLIST) before this time";
      }
      break;
    }
    await step.reload();
  }
  return last;
}

/** One segment (after its init) as the relay serves it: a small file in memory. */
function bufferMedia(bytes: Buffer): ServedMedia {
  return {
    contentType: "video/mp4",
    size: async () => bytes.length,
    async pump(start, end, write) {
      await write(bytes.subarray(start, end + 1));
    },
    async close() {},
  };
}

type ExtractionOutcome = Omit<ExtractResult, "job_id" | "kind" | "attempt_id">;

/** MPEG-TS timestamps tick at 90 kHz. */
const TS_CLOCK = 90_000;

const NO_VIDEO = "No video was found in the live stream.";
const UNDECODABLE = "The live stream's newest segment could not be decoded.";

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
