// One extraction job, start to finish: probe, plan the times, choose dense or sparse decoding,
// decode once, encode each picture, store it (and stream the ZIP), and say what happened.
// Any failure ends as a JobError; nothing here throws out of extractFrames.
import type { FramePlan, PlannedFrame } from "../schema/frame-plan.ts";
import { planFrames } from "../schema/frame-plan.ts";
import type { ExtractResult, FrameResult, JobOptions } from "../schema/messages.ts";
import { ZIP_ALWAYS_ABOVE_FRAMES } from "../schema/plans.ts";
import { planJobPreview, storePreview } from "./animated/job-preview.ts";
import { previewSize } from "./animated/preview.ts";
import { budgetedOptions, measuredBudget } from "./budget.ts";
import { attachCaptions } from "./context/captions.ts";
import { describeVideo } from "./context/video.ts";
import type { DecodeContext } from "./decode.ts";
import { FrameBufferPool, IndexDisagreed } from "./decode.ts";
import type { KeyframeHints } from "./decode-plan.ts";
import { decodeAll, lookUpKeyframesEarly } from "./decode-plan.ts";
import { DeadlineError, ExtractError, toJobError, withoutInternalUrls } from "./errors.ts";
import type { Mp4Index } from "./ffmpeg/mp4-index.ts";
import { moovOf, mp4IndexOfMoov } from "./ffmpeg/mp4-index.ts";
import type { SpanView } from "./ffmpeg/mp4-spans.ts";
import { spanIndexOf, spanViewFor } from "./ffmpeg/mp4-spans.ts";
import type { MediaProbe, VideoProbe } from "./ffmpeg/probe.ts";
import { probeMedia, scanVideoDuration } from "./ffmpeg/probe.ts";
import { MediaToolError } from "./ffmpeg/process.ts";
import { PictureIndex } from "./ffmpeg/unneeded-frames.ts";
import { FrameWriter } from "./frame-writer.ts";
import { log } from "./log.ts";
import type { FrameSink } from "./output/frame-sink.ts";
import type { ProgressSink } from "./output/progress-reporter.ts";
import { pictureSteps } from "./picture-steps.ts";
import type { FoundMoments } from "./quality/moments.ts";
import { findMoments, isFoundMode } from "./quality/moments.ts";
import { CANDIDATE_OFFSETS, planCandidates, SkipPicker } from "./quality/skip-picker.ts";
import { repeatsWithText } from "./quality/slides.ts";
import type { Slot } from "./scheduler.ts";
import type { OutputSize } from "./sizing.ts";
import { planOutputSize } from "./sizing.ts";
import { PTS_TOLERANCE_SECONDS } from "./slots.ts";
import type { SourceHandle } from "./source-input.ts";
import { buildStoryboard, framesWithTiles } from "./storyboard/contact-sheet.ts";
import {
  CONTACT_SHEET_FILE_NAME,
  SPRITE_FILE_NAME,
  THUMBNAILS_FILE_NAME,
} from "./storyboard/thumbnail-track.ts";
import { FrameTextReader, sharedOcrPool } from "./text/frame-text.ts";

export interface ExtractionJob {
  /** A local file path or the loopback relay's http://127.0.0.1 URL (see ffmpeg/args.ts). */
  input: string;
  options: JobOptions;
  maxVideoSeconds: number;
  /** Process only the first maxVideoSeconds of a longer video instead of failing (demo). */
  clipToMax: boolean;
  maxFrames: number;
  /** The opened source (platform info, subtitle access), when the service opened one. */
  source?: SourceHandle | null;
  /** The job and attempt ids its log lines carry (edge/log.ts step names), when known. */
  trace?: { job: string; attempt: string };
}

export interface ExtractionSettings {
  /** Wall-clock budget for the whole job; every ffmpeg process is killed when it runs out. */
  deadlineSeconds?: number;
  signal?: AbortSignal;
  /** "auto" weighs seeking against decoding; the others force one way (tests, the bench). */
  strategy?: "auto" | "dense" | "sparse";
  /** ffmpeg runs started before the current one is done (default 1, 0 at 4K). */
  runsAhead?: number;
  /**
   * Told once the probe and the plan know the span of video the job covers, before any frame
   * is decoded (the service tells the edge, which may stop a job the account cannot pay for).
   */
  onPlanned?: (plan: { processedSeconds: number }) => void;
  /** Told each stage, and how many frames are made (the service reports it: job.progress). */
  progress?: ProgressSink;
  /**
   * Runs a wait that needs no core out of the run's scheduler slot (a live job between two
   * reloads; extractor/scheduler.ts). Without it, the wait just runs.
   */
  idle?: Slot["idle"];
}

export type ExtractionOutcome = Omit<ExtractResult, "job_id" | "kind" | "attempt_id">;

/** The service passes its configured deadline (extractor/config.ts); this is for the CLI. */
export const DEFAULT_DEADLINE_SECONDS = 900;

export async function extractFrames(
  job: ExtractionJob,
  sink: FrameSink,
  settings: ExtractionSettings = {},
): Promise<ExtractionOutcome> {
  const deadlineSeconds = settings.deadlineSeconds ?? DEFAULT_DEADLINE_SECONDS;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DeadlineError(deadlineSeconds)),
    deadlineSeconds * 1000,
  );
  const stopFromOutside = () => controller.abort(settings.signal?.reason);
  settings.signal?.addEventListener("abort", stopFromOutside, { once: true });
  const outcome = emptyOutcome(job.options);
  try {
    await runJob(
      job,
      sink,
      {
        signal: controller.signal,
        strategy: settings.strategy ?? "auto",
        runsAhead: settings.runsAhead,
        onPlanned: settings.onPlanned,
        progress: settings.progress,
        idle: settings.idle,
      },
      outcome,
    );
  } catch (thrown) {
    const error = controller.signal.aborted ? controller.signal.reason : thrown;
    outcome.status = "failed";
    outcome.error = toJobError(error);
    log("warn", "extraction failed", { error: outcome.error, input: job.input });
  } finally {
    clearTimeout(timer);
    settings.signal?.removeEventListener("abort", stopFromOutside);
    controller.abort();
  }
  return outcome;
}

/**
 * Decoding allocates by the picture's size, which a file's header states: a hostile header
 * claiming 32k×32k must not make the decoder reserve gigabytes. 8K UHD (7680×4320) passes.
 */
const MAX_SOURCE_PIXELS = 8192 * 4320;

/** A failed outcome with nothing known yet; the start of every job's outcome. */
export function emptyOutcome(options: JobOptions): ExtractionOutcome {
  return {
    status: "failed",
    duration_seconds: null,
    processed_seconds: null,
    width: null,
    height: null,
    requested_resolution: options.resolution,
    delivered_resolution: null,
    resolution_note: null,
    frames: [],
    zip: null,
    error: null,
  };
}

interface RunSettings {
  signal: AbortSignal;
  strategy: NonNullable<ExtractionSettings["strategy"]>;
  runsAhead?: number;
  onPlanned?: ExtractionSettings["onPlanned"];
  progress?: ProgressSink;
  idle?: Slot["idle"];
}

async function runJob(
  asked: ExtractionJob,
  sink: FrameSink,
  settings: RunSettings,
  outcome: ExtractionOutcome,
): Promise<void> {
  const { signal, progress } = settings;
  if (asked.options.mode === "live") {
    // A live stream is watched a segment at a time as it plays (extractor/live.ts).
    const stream = asked.source?.live;
    if (!stream) throw new ExtractError("InvalidUrl", "mode live without a live source", LIVE_ONLY);
    const { runLiveJob } = await import("./live.ts");
    return runLiveJob(
      asked.options,
      stream,
      sink,
      { signal, progress, maxFrames: asked.maxFrames, trace: asked.trace, idle: settings.idle },
      outcome,
    );
  }
  // A budget's count and width are known once the probe has seen the picture (below).
  let job = asked;
  progress?.stage("probing");
  const keyframeHints = lookUpKeyframesEarly(
    job.input,
    job.options.mode === "timestamps" ? (job.options.timestamps ?? null) : null,
    settings.strategy,
    signal,
  );
  const mp4 = mp4IndexFor(job, signal);
  const probe = await probeVideo(job.input, signal);
  const video = probe.video;
  const duration = video.durationSeconds ?? (await scanVideoDuration(job.input, video, signal));
  if (duration === null || !(duration > 0)) {
    throw new ExtractError("NoVideoFound", "the video has no frames", NO_VIDEO_MESSAGE);
  }
  outcome.duration_seconds = round3(duration);
  outcome.video = describeVideo(probe, duration, job.source ?? null);
  log("info", "video.probed", {
    ...job.trace,
    duration_seconds: outcome.duration_seconds,
    width: video.displayWidth,
    height: video.displayHeight,
    codec: video.codec,
  });
  if (video.displayWidth * video.displayHeight > MAX_SOURCE_PIXELS) {
    throw new ExtractError(
      "ExtractionFailed",
      `the video is ${video.displayWidth}×${video.displayHeight}, above the ${MAX_SOURCE_PIXELS}-pixel limit`,
      "This video's picture is larger than we can process (the limit is 8K).",
    );
  }
  outcome.width = video.displayWidth;
  outcome.height = video.displayHeight;
  const usable = usableDuration(duration, job);
  const display = { width: video.displayWidth, height: video.displayHeight };
  job = { ...job, options: budgetedOptions(job.options, display, usable, job.maxFrames) };
  const found = isFoundMode(job.options.mode)
    ? await findMoments(job.input, video, job.options, usable, job.maxFrames, signal)
    : null;
  const plan: FramePlan = found ?? planFrames(job.options, usable);
  if (plan.frames.length > job.maxFrames) {
    throw new ExtractError(
      "TooManyFrames",
      `${plan.frames.length} frames planned, the limit is ${job.maxFrames}`,
      `This job would produce ${plan.frames.length} frames; your plan allows ${job.maxFrames} ` +
        "per job. Use a larger interval, a smaller count or a shorter range.",
    );
  }
  outcome.processed_seconds = plan.processedSeconds;
  settings.onPlanned?.({ processedSeconds: plan.processedSeconds });
  const size = planOutputSize(
    { width: video.displayWidth, height: video.displayHeight },
    job.options.resolution,
    job.options.max_width,
  );
  outcome.delivered_resolution = size.deliveredResolution;
  outcome.resolution_note = size.note;
  // Where the moving preview lies, known before decoding: a start past the end fails now.
  const preview = job.options.animated
    ? await planJobPreview(
        job.input,
        video,
        job.options.animated,
        { start: plan.rangeStart, end: Math.min(plan.rangeEnd, usable) },
        found?.bestMoment,
        usable,
        signal,
      )
    : null;

  const results = new Map<number, FrameResult>();
  for (const frame of plan.frames) {
    results.set(frame.index, {
      index: frame.index,
      timestamp: frame.timestamp,
      status: "error",
      key: null,
      pts: null,
      error: frame.pastEnd
        ? `past the end of the video (${round3(usable)} s)`
        : "no picture could be decoded at this time",
      ...(found?.sceneScores.has(frame.index)
        ? { scene_score: found.sceneScores.get(frame.index) }
        : {}),
      ...bestScoreOf(found, frame.index),
      ...slideOf(found, frame.index),
      // With text: null until the delivered picture is read (text/frame-text.ts).
      ...(job.options.text ? { text: null } : {}),
    });
  }
  const wanted = plan.frames.filter((f) => !f.pastEnd);
  // Every planned frame counts in frames_count: those past the end are done already, the rest
  // as they turn ok (a decode that starts over resets them; the reporter keeps its highest).
  const pastEnd = plan.frames.length - wanted.length;
  progress?.extracting(plan.frames.length, () => pastEnd + okFrames(results));
  const zipped = job.options.output !== "urls" || plan.frames.length > ZIP_ALWAYS_ABOVE_FRAMES;
  if (wanted.length > 0) {
    // ffmpeg scales the thumbnails a sink keeps beside the frames (decision 0283), except
    // where a picker chooses among candidates: it keeps its own copies of the pictures.
    const thumbnails = sink.keepsThumbnails === true && (job.options.skip ?? []).length === 0;
    const picture = pictureSteps(video, size, { thumbnails });
    const context: DecodeContext = {
      input: job.input,
      video,
      durationSeconds: duration,
      bytesPerSecond: probe.bytesPerSecond ?? null,
      picture,
      signal,
      buffers: new FrameBufferPool(picture, 3),
      ...(await readersByIndex(job, video, await mp4)),
    };
    const newWriter = () => {
      const writer = new FrameWriter(sink, job.options, size, results, zipped);
      if (job.options.storyboard) {
        writer.keepTilesFor(framesWithTiles(wanted.map((f) => f.index)));
      }
      if (job.options.text) {
        writer.readTextWith(
          new FrameTextReader(
            sharedOcrPool(),
            job.options.text_languages,
            signal,
            plan.frames.length,
          ),
        );
      }
      return writer;
    };
    let writer = newWriter();
    await writer.open();
    try {
      const inputs = { job, plan, size, usable, settings, keyframeHints: await keyframeHints };
      const untouched = new Map([...results].map(([index, result]) => [index, { ...result }]));
      try {
        await decodeWanted(context, wanted, writer, inputs);
      } catch (error) {
        if (!(error instanceof IndexDisagreed)) throw error;
        // The index the relay hid pictures or served views by does not read this file as
        // ffmpeg does: what was delivered came from runs whose frames were checked, but start
        // again without the index, from a clean slate (the same files are written again).
        log("warn", "the index disagreed with ffmpeg; decoding again without it", {
          ...job.trace,
          error: error.message,
        });
        await writer.abort();
        for (const [index, result] of untouched) results.set(index, { ...result });
        context.inputFor = undefined;
        context.spansFor = undefined;
        writer = newWriter();
        await writer.open();
        await decodeWanted(context, wanted, writer, inputs);
      }
      log("info", "frames.decoded", {
        ...job.trace,
        frames: [...results.values()].filter((f) => f.status === "ok").length,
      });
      if (job.options.storyboard || job.options.captions || job.options.text) {
        progress?.stage("encoding");
      }
      // The text of the last pictures, whose reads went on beside the decoding.
      await writer.finishText();
      if (found?.slides && job.options.text) repeatSlidesByText(found, results);
      if (job.options.storyboard) {
        outcome.storyboard = await storeStoryboard(writer, size, usable);
      }
      if (job.options.captions) {
        const found = await attachCaptions(
          {
            input: job.input,
            probe,
            source: job.source ?? null,
            options: job.options,
            signal,
            store: (name, bytes, type) => writer.addFile(name, bytes, type),
          },
          [...results.values()],
        );
        outcome.captions = found.captions;
        outcome.captions_note = found.note;
      }
      if (job.options.animated && preview) {
        outcome.animated = await storePreview(
          job.input,
          video,
          job.options.animated,
          preview,
          pictureSteps(video, previewSize(job.options.animated.width, display)),
          (name, bytes, type) => writer.addFile(name, bytes, type),
          signal,
        );
      }
      progress?.stage("uploading");
      outcome.zip = await writer.finish();
      log("info", "files.stored", {
        ...job.trace,
        files: [...results.values()].filter((f) => f.key !== null).length,
        zip_bytes: outcome.zip?.bytes ?? null,
      });
    } catch (error) {
      await writer.abort();
      throw error;
    } finally {
      context.buffers.retire();
    }
  }
  outcome.frames = [...results.values()];
  if (job.options.budget) outcome.budget = measuredBudget(job.options, size, outcome.frames);
  const delivered = outcome.frames.filter((f) => f.status === "ok").length;
  if (delivered > 0) {
    outcome.status = "completed";
    return;
  }
  throw wanted.length === 0
    ? new ExtractError(
        "ExtractionFailed",
        `every requested time is past the end of the video (${round3(usable)} s)`,
        `Every requested time is past the end of the video, which is ${round3(usable)} s long.`,
      )
    : new ExtractError(
        "ExtractionFailed",
        "no frame could be decoded",
        "The video could not be decoded: it may be damaged or incomplete.",
      );
}

const NO_VIDEO_MESSAGE = "No video was found at this link.";
const LIVE_ONLY = "mode live reads a live HLS playlist (.m3u8) only.";

/**
 * The index of an H.264 MP4, read beside the probe, when the source has a relay that can serve
 * runs what the index says they need (ffmpeg/unneeded-frames.ts, ffmpeg/mp4-spans.ts).
 */
function mp4IndexFor(job: ExtractionJob, signal: AbortSignal): Promise<Mp4Index | null> {
  if (!job.source?.hidingRelay) return Promise.resolve(null);
  // The moov the probe and the keyframe lookup read too, read once (mp4-index.ts moovOf).
  return moovOf(job.input, signal).then((found) => found && mp4IndexOfMoov(found));
}

/**
 * DecodeContext.inputFor and spansFor for the job's source, where the index reads the track the
 * probe chose on ffmpeg's clock (its first frame where the probe says the video starts):
 * - inputFor: only H.264 with B-frames has pictures nothing refers to (PictureIndex.of);
 * - spansFor: a batch reads one view of the file (ffmpeg/mp4-spans.ts), when the job already
 *   reads its source through the relay (a local file is read as it is) and the moov is the
 *   file's sole one.
 */
async function readersByIndex(
  job: ExtractionJob,
  video: VideoProbe,
  mp4: Mp4Index | null,
): Promise<Pick<DecodeContext, "inputFor" | "spansFor">> {
  const layout = mp4?.layout;
  const firstShown = layout?.pts.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
  const sameTrack =
    video.codec === "h264" &&
    layout?.streamIndex === video.streamIndex &&
    Math.abs((firstShown ?? Number.NaN) - video.startTime) <= PTS_TOLERANCE_SECONDS;
  if (!mp4 || !layout || !sameTrack || !job.source?.hidingRelay) return {};
  const relay = await job.source.hidingRelay();
  const pictures = PictureIndex.ofFrames(layout);
  // Only B-frames are pictures nothing refers to (PictureIndex.of).
  const hider = layout.reordered ? pictures : null;
  const spans =
    mp4.moovAt !== null && pictures && /^http:/.test(job.input)
      ? spanIndexOf(mp4.moov, layout)
      : null;
  const file = {
    moovAt: mp4.moovAt ?? 0,
    moovBytes: mp4.moov.length,
    fileSize: mp4.fileSize,
    lengthSize: layout.lengthSize,
  };
  const views: SpanView[] = [];
  return {
    inputFor: hider
      ? (slots) => {
          const frames = hider.forSlots(slots);
          return { input: relay.withoutUnneededFrames(frames), shownAt: frames.shownAt };
        }
      : undefined,
    spansFor:
      spans && pictures
        ? (slots) => {
            // A file with open GOPs has no clean stretches to read: its batches seek.
            if (views.some((v) => v.unclean)) return null;
            const onScreen = pictures.onScreen(slots);
            const view = spanViewFor(spans, onScreen, file);
            if (!view) return null;
            views.push(view);
            const hidden = hider?.forSlots(slots, onScreen) ?? null;
            return { input: relay.withSpans(view, hidden), view, hidesFrames: hidden !== null };
          }
        : undefined,
  };
}

interface DecodeInputs {
  job: ExtractionJob;
  plan: FramePlan;
  size: OutputSize;
  usable: number;
  settings: RunSettings;
  keyframeHints: KeyframeHints | null;
}

/**
 * One decode of the wanted moments; with `skip`, of a few candidates around each (see
 * quality/skip-picker.ts), the writer encoding only the picker's choices. Keyframes are read
 * one seek each: a seek lands on the keyframe itself, so nothing between them is decoded.
 */
async function decodeWanted(
  context: DecodeContext,
  wanted: PlannedFrame[],
  writer: FrameWriter,
  { job, plan, size, usable, settings, keyframeHints }: DecodeInputs,
): Promise<void> {
  const strategy =
    job.options.mode === "keyframes" && settings.strategy === "auto" ? "sparse" : settings.strategy;
  const decodeSettings = { strategy, runsAhead: settings.runsAhead, keyframeHints };
  const skip = job.options.skip ?? [];
  if (skip.length === 0) {
    // Interval and count times are an even grid, which one run takes at any length, and a
    // dense run split in two would decode the start twice: only found moments are split.
    const chunks = isFoundMode(job.options.mode)
      ? decodeChunks(wanted, (frame) => frame.timestamp)
      : [wanted];
    for (const chunk of chunks) await decodeAll(context, chunk, writer, decodeSettings);
    return;
  }
  const candidates = planCandidates(
    wanted,
    { start: plan.rangeStart, end: Math.min(plan.rangeEnd, usable) },
    job.options.mode === "scenes",
  );
  writer.pickWith(new SkipPicker(skip, candidates, wanted, size));
  const wantedTimeOf = (c: PlannedFrame) => candidates.ofCandidate.get(c.index)?.wantedTime;
  for (const chunk of decodeChunks(candidates.candidates, wantedTimeOf)) {
    await decodeAll(context, chunk, writer, decodeSettings);
  }
  await writer.finishPicking();
}

/**
 * One decode run takes at most 2000 uneven times (slots.ts): scenes and keyframes can find
 * more, and skip's candidates multiply a job's times by up to 9. So the times go to the engine
 * in runs under that limit, one after another (one more seek per run), never splitting the
 * frames that share a key (a wanted frame's candidates).
 */
const MOST_TIMES_PER_DECODE = 1500;

function decodeChunks(
  frames: PlannedFrame[],
  keyOf: (frame: PlannedFrame) => number | undefined,
): PlannedFrame[][] {
  const chunks: PlannedFrame[][] = [];
  let chunk: PlannedFrame[] = [];
  let key: number | undefined;
  for (const frame of frames) {
    const next = keyOf(frame);
    if (next !== key && chunk.length >= MOST_TIMES_PER_DECODE - CANDIDATE_OFFSETS.length) {
      chunks.push(chunk);
      chunk = [];
    }
    key = next;
    chunk.push(frame);
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** The contact sheet, sprite and thumbnail track of the delivered frames, stored as files. */
async function storeStoryboard(
  writer: FrameWriter,
  size: OutputSize,
  durationSeconds: number,
): Promise<ExtractionOutcome["storyboard"]> {
  const board = await buildStoryboard(writer.tiles, size, durationSeconds);
  if (!board) return null;
  // One at a time: each is also a ZIP entry, and entries are written in order.
  const imageKey = await writer.addFile(CONTACT_SHEET_FILE_NAME, board.sheet, "image/jpeg");
  const spriteKey = await writer.addFile(SPRITE_FILE_NAME, board.sprite, "image/jpeg");
  const vttKey = await writer.addFile(
    THUMBNAILS_FILE_NAME,
    Buffer.from(board.vtt),
    "text/vtt; charset=utf-8",
  );
  return {
    image_key: imageKey,
    sprite_key: spriteKey,
    vtt_key: vttKey,
    columns: board.columns,
    rows: board.rows,
    tile_width: board.tileWidth,
    tile_height: board.tileHeight,
  };
}

async function probeVideo(
  input: string,
  signal: AbortSignal,
): Promise<MediaProbe & { video: VideoProbe }> {
  let probe: Awaited<ReturnType<typeof probeMedia>>;
  try {
    probe = await probeMedia(input, signal);
  } catch (error) {
    if (signal.aborted || !(error instanceof MediaToolError)) throw error;
    // ffprobe's last line names its input, which may be the relay's secret address.
    const lastLine = error.stderrTail.trim().split("\n").pop() ?? "";
    throw new ExtractError(
      "NoVideoFound",
      `not a readable video file: ${withoutInternalUrls(lastLine)}`,
      "The link does not lead to a video file that can be read (it may be empty or damaged).",
    );
  }
  if (!probe.video) {
    const what = probe.hasAudio ? "audio only, no video track" : "no video track";
    throw new ExtractError("NoVideoFound", `${probe.formatName}: ${what}`, NO_VIDEO_MESSAGE);
  }
  return { ...probe, video: probe.video };
}

/**
 * How much of the video the job covers: its range, or up to its last timestamp. The plan's
 * longest video applies to this span (as the edge applies it to a range at creation), so a
 * minute from a long video is allowed.
 */
function processedSpan(duration: number, options: JobOptions): number {
  if (options.mode === "timestamps") {
    return Math.min(duration, Math.max(0, ...(options.timestamps ?? [])));
  }
  const start = Math.min(options.start ?? 0, duration);
  return Math.max(0, Math.min(options.end ?? duration, duration) - start);
}

function usableDuration(duration: number, job: ExtractionJob): number {
  if (processedSpan(duration, job.options) <= job.maxVideoSeconds) return duration;
  if (job.clipToMax) return job.maxVideoSeconds;
  const limit =
    job.maxVideoSeconds >= 60
      ? `${Math.round(job.maxVideoSeconds / 60)} minutes`
      : `${job.maxVideoSeconds} seconds`;
  throw new ExtractError(
    "VideoTooLong",
    `the video lasts ${round3(duration)} s, the limit is ${job.maxVideoSeconds} s`,
    `This video is longer than your plan allows (${limit}).`,
  );
}

function okFrames(results: Map<number, FrameResult>): number {
  let ok = 0;
  for (const result of results.values()) if (result.status === "ok") ok++;
  return ok;
}

/** A slides-mode frame's slide: its span and the frame it repeats (1-based), by picture. */
function slideOf(found: FoundMoments | null, index: number): Partial<FrameResult> {
  const showing = found?.slides?.[index - 1];
  if (!showing) return {};
  const repeatOf = showing.repeatOf === null ? null : showing.repeatOf + 1;
  return { slide: { start: showing.start, end: showing.end, repeat_of: repeatOf } };
}

/** With text, the text read on each slide's frame joins the picture in judging repeats. */
function repeatSlidesByText(found: FoundMoments, results: Map<number, FrameResult>): void {
  const showings = found.slides ?? [];
  const texts = showings.map((_, i) => results.get(i + 1)?.text?.content ?? null);
  repeatsWithText(showings, texts).forEach((repeatOf, i) => {
    const result = results.get(i + 1);
    if (result?.slide) result.slide.repeat_of = repeatOf === null ? null : repeatOf + 1;
  });
}

/** A best-mode frame's score and its parts, as the result carries them. */
function bestScoreOf(found: FoundMoments | null, index: number): Partial<FrameResult> {
  const best = found?.bestScores.get(index);
  return best ? { score: best.score, score_parts: best.parts } : {};
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
