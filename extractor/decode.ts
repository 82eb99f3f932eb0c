// One decode run: ffmpeg reads forward from a seek point (or the start) and writes one raw RGB
// picture per wanted time to a pipe; we cut the stream into pictures by byte count and name
// each one's own pts from showinfo. Reading the pipe only as fast as frames are consumed is the
// backpressure that keeps memory flat however long the video is.
import { availableParallelism } from "node:os";
import type { PictureSteps } from "./ffmpeg/args.ts";
import { batchDecodeArgs, decodeArgs } from "./ffmpeg/args.ts";
import type { FrameBuffers } from "./ffmpeg/frame-pipe.ts";
import { FrameTool } from "./ffmpeg/frame-pipe.ts";
import type { SpanView } from "./ffmpeg/mp4-spans.ts";
import type { VideoProbe } from "./ffmpeg/probe.ts";
import type { RunningTool } from "./ffmpeg/process.ts";
import { logToolFailure, MediaToolError } from "./ffmpeg/process.ts";
import { log } from "./log.ts";
import type { ThumbnailRows } from "./output/thumbnails.ts";
import { SlotTimeline } from "./slot-timeline.ts";
import type { SlotTimes } from "./slots.ts";
import { PTS_TOLERANCE_SECONDS, toSlotTimes } from "./slots.ts";

export interface DecodeGroup {
  /** Where to seek, seconds from the video's start, or null to read from the beginning. */
  seekSeconds: number | null;
  /** Wanted times, seconds from the video's start, ascending and unique. */
  times: number[];
}

export interface DecodedFrame {
  /** Index into the group's times. */
  slot: number;
  /** RGB24, width × height × 3 bytes; valid until release(). */
  pixels: Buffer;
  /**
   * The small picture ffmpeg made beside it when the picture steps ask for one (args.ts
   * pictureChain), as RGB24 rows `rowWidth` pixels long whose first `width` are the picture;
   * valid until release().
   */
  thumbnail?: ThumbnailRows | null;
  /** Hands the pixel buffer back for the next frame (call once it has been encoded). */
  release(): void;
  /** The delivered frame's own presentation time, seconds from the video's start. */
  pts: number | null;
  /** The file ended early with errors and this time lies past its last decoded frame. */
  pastDecodedEnd: boolean;
}

export interface DecodeContext {
  input: string;
  video: VideoProbe;
  /**
   * The video's length from its first frame (the probe's, or scanned), which the plan marks
   * times past the end by; decodeAll names no time later than the end less two tolerances.
   */
  durationSeconds: number;
  /** The source's average bytes per second (MediaProbe), for the relay's read hints. */
  bytesPerSecond?: number | null;
  picture: PictureSteps;
  signal: AbortSignal;
  buffers: FrameBufferPool;
  /**
   * The input for a run that picks the frames on screen at `slots` (absolute times) and needs
   * no other non-reference picture (ffmpeg/unneeded-frames.ts); null where the source cannot
   * hide them (not H.264 with B-frames in MP4, not through a relay).
   */
  inputFor?: (slots: SlotTimes) => HidingInput | null;
  /**
   * The input for a batch that decodes the frames on screen at `slots` (absolute times) from
   * one view of the file holding only the stretches they need (ffmpeg/mp4-spans.ts); null
   * where the source has no such view (not H.264 in a plain MP4, not through a relay).
   */
  spansFor?: (slots: SlotTimes) => SpanInput | null;
}

/** A batch's view of the file: one input, its video the only stream. */
export interface SpanInput {
  input: string;
  view: SpanView;
  /** The view also hides pictures the run does not need (ffmpeg/unneeded-frames.ts). */
  hidesFrames: boolean;
}

/** A run's own address of the input, hiding the pictures it does not need. */
export interface HidingInput {
  input: string;
  /**
   * For each slot, the time (absolute s) of the frame on screen then by the index the hiding
   * follows. The run delivers each slot's frame only if ffmpeg's says the same.
   */
  shownAt: readonly number[];
}

/**
 * A run that follows the file's index (hiding pictures, or reading only some stretches) was
 * about to deliver a frame the index cannot vouch for: another frame than the index says is on
 * screen (the index does not read this file as ffmpeg does, and what it left out may have been
 * wanted), or one decoded in a stretch that did not begin with an IDR picture. The job decodes
 * again without the index (job.ts); nothing of the run is delivered.
 */
export class IndexDisagreed extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IndexDisagreed";
  }
}

/** Throws IndexDisagreed unless the frame about to be delivered is the one the index shows. */
function checkShown(
  hiding: HidingInput | null,
  slot: number,
  pts: number | null,
  slotTime: number,
): void {
  if (!hiding || pts === null) return;
  const shown = hiding.shownAt[slot];
  if (shown === undefined || Math.abs(pts - shown) > PTS_TOLERANCE_SECONDS) {
    throw new IndexDisagreed(
      `at ${slotTime} s ffmpeg shows the frame at ${pts} s, the index the one at ${shown} s`,
    );
  }
}

/**
 * Pictures larger than 1440p's (a 2160p one is 12 MB decoded, 25 MB as RGB) change how a job
 * decodes: one decoder thread per core, runs one at a time, no batches, and the extractor holds
 * one picture at a time.
 */
export function largePicture(size: { width: number; height: number }): boolean {
  return size.width * size.height > 2560 * 1440;
}

/**
 * Reuses the few frame-sized buffers in flight. Fresh 25 MB buffers per 2160p frame are freed
 * only when V8 gets round to it, and RSS climbs by hundreds of MB in the meantime.
 *
 * Above 1440p it also bounds a decode run's pictures to one at a time: its pipe reads the next
 * picture only once the one before has been encoded and given back (FramePipe; counted per
 * run, so a run started ahead never waits on another's pictures).
 * ffmpeg decodes the next picture meanwhile, so nothing waits longer; measured on the bench's
 * 2160p PNG job, the extractor held 160–170 MB with a picture read ahead and a second one
 * encoding beside it, 146–151 MB with one, in the same time.
 */
export class FrameBufferPool implements FrameBuffers {
  readonly frameBytes: number;
  /** Pictures a decode run's pipe may have out at once, its consumer's included. */
  readonly limit: number;
  private readonly free: Buffer[] = [];
  /** Buffers taken and not yet given back: a buffer given twice is taken in only once. */
  private readonly out = new Set<Buffer>();
  private readonly keep: number;
  private readonly listeners = new Set<(buffer: Buffer) => void>();

  /**
   * Buffers of RGB pictures of `size`, with room for the rows of its thumbnail when ffmpeg
   * makes one (PictureSteps.thumbnail); `keep` of them are kept for reuse.
   */
  constructor(size: Pick<PictureSteps, "width" | "height" | "thumbnail">, keep = 4) {
    this.frameBytes = size.width * (size.height + (size.thumbnail?.height ?? 0)) * 3;
    this.keep = keep;
    this.limit = largePicture(size) ? 1 : Number.POSITIVE_INFINITY;
  }

  take(): Buffer {
    const buffer =
      this.free.pop() ?? spareFrames.take(this.frameBytes) ?? Buffer.allocUnsafe(this.frameBytes);
    this.out.add(buffer);
    return buffer;
  }

  give(buffer: Buffer): void {
    if (this.out.delete(buffer)) {
      if (this.free.length < this.keep) this.free.push(buffer);
      else spareFrames.keep(buffer);
    }
    for (const listener of this.listeners) listener(buffer);
  }

  /** The job is done: its free buffers are kept for the next job (SpareFrames). */
  retire(): void {
    for (const buffer of this.free.splice(0)) spareFrames.keep(buffer);
  }

  onGive(listener: (buffer: Buffer) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

// Up to 96 MiB of pictures (13 at 1080p with its thumbnail's rows, 4 at 2160p), dropped after
// 30 s unused.
const SPARE_FRAME_BYTES = 96 * 1024 * 1024;
const SPARE_FRAMES_IDLE_MS = 30_000;
// Pictures above 1440p (decode.ts largePicture) are kept only with none of another size.
const LARGE_FRAME_BYTES = 2560 * 1440 * 3;

/**
 * Picture buffers kept from one job for the next. Each job's pool used to allocate its own:
 * a sparse 1080p batch reads its six pictures ahead, so a job took ~12 fresh 6 MB buffers,
 * each mapped afresh by the kernel (the service sets malloc's mmap threshold to 1 MiB,
 * scripts/lib/stack.mjs), and their ~75 MB of external memory a job set off V8's old-space
 * collections. Several sizes are kept at once, up to SPARE_FRAME_BYTES together, the size
 * used longest ago given up first: under load, jobs of 1080p, 720p and 480p run side by side,
 * and keeping one size only dropped the others' buffers at every turn (decision 0279).
 * Pictures above 1440p are kept alone: a 2160p job after 1080p ones starts with none of
 * theirs, and a smaller one's keeps drop its, so what is kept never adds to a large job's
 * peak.
 */
class SpareFrames {
  /** Buffers by their length, the size used last at the end. */
  private readonly kept = new Map<number, Buffer[]>();
  private keptBytes = 0;
  private idle: NodeJS.Timeout | null = null;

  take(frameBytes: number): Buffer | null {
    if (frameBytes > LARGE_FRAME_BYTES) this.dropAllBut(frameBytes);
    const buffers = this.kept.get(frameBytes);
    const buffer = buffers?.pop() ?? null;
    if (!buffers || !buffer) return null;
    this.keptBytes -= frameBytes;
    this.kept.delete(frameBytes);
    if (buffers.length > 0) this.kept.set(frameBytes, buffers);
    return buffer;
  }

  keep(buffer: Buffer): void {
    const size = buffer.length;
    if (size > LARGE_FRAME_BYTES) this.dropAllBut(size);
    else for (const other of this.kept.keys()) if (other > LARGE_FRAME_BYTES) this.drop(other);
    const buffers = this.kept.get(size) ?? [];
    if ((buffers.length + 1) * size > SPARE_FRAME_BYTES) return;
    if (buffers.includes(buffer)) return;
    // Room made from the sizes used longest ago (the Map's first keys).
    for (const other of this.kept.keys()) {
      if (this.keptBytes + size <= SPARE_FRAME_BYTES) break;
      if (other !== size) this.drop(other);
    }
    if (this.keptBytes + size > SPARE_FRAME_BYTES) return;
    buffers.push(buffer);
    this.keptBytes += size;
    this.kept.delete(size);
    this.kept.set(size, buffers);
    if (this.idle) this.idle.refresh();
    else {
      this.idle = setTimeout(() => {
        this.kept.clear();
        this.keptBytes = 0;
        this.idle = null;
      }, SPARE_FRAMES_IDLE_MS);
      this.idle.unref();
    }
  }

  private drop(size: number): void {
    this.keptBytes -= size * (this.kept.get(size)?.length ?? 0);
    this.kept.delete(size);
  }

  private dropAllBut(size: number): void {
    for (const other of [...this.kept.keys()]) if (other !== size) this.drop(other);
  }
}

const spareFrames = new SpareFrames();

const SHOWINFO_FRAME = /^\[Parsed_showinfo_0 @ [^\]]+\] \[info\] n:\s*\d+\s+pts:\s*(-?\d+)\s/;
const SHOWINFO_LINE = /^\[Parsed_showinfo_0 @/;
const ERROR_LINE = /\[(error|fatal|panic)\]/;
// The end of one of the relay's parts, after which ffmpeg asks for the next (sources/relay.ts):
// not damage in the file. A real failure to go on shows up as its own error.
const PART_END_LINE = /^\[http @ [^\]]+\] \[error\] Stream ends prematurely/;
// What ffmpeg says of a picture hidden from its decoder (ffmpeg/unneeded-frames.ts): in a run
// that hides pictures, not damage in the file.
const HIDDEN_PICTURE_LINES = [
  /^\[NULL @ [^\]]+\] \[error\] missing picture in access unit with size \d+\s*$/,
  /^\[h264 @ [^\]]+\] \[error\] no frame!\s*$/,
  /^\[error\] Error while decoding stream #\d+:\d+: Invalid data found when processing input\s*$/,
];

/** An error line that says something is wrong with the file or the run. */
function damageLine(line: string, hidesPictures: boolean): boolean {
  return (
    ERROR_LINE.test(line) &&
    !PART_END_LINE.test(line) &&
    !(hidesPictures && HIDDEN_PICTURE_LINES.some((pattern) => pattern.test(line)))
  );
}

// A run that seeks and decodes only a few seconds is mostly start-up: one decoder thread does
// it with the least CPU, and the next run decodes on the other core meanwhile (measured).
const SHORT_RUN_SECONDS = 5;

/**
 * Decoder threads for a long run (ffmpeg's own choice is one per core plus one). Up to 1440p,
 * three frame threads per core: the encoder takes its share of the cores while ffmpeg decodes,
 * and more pictures in flight keep decoding going meanwhile (a 1080p picture is ~3 MB). Above,
 * one per core: a 2160p picture is ~12 MB, and one thread per core both holds less (ffmpeg's
 * chain 219 MB instead of 245) and decodes faster (10 s of 2160p: 1.95 s instead of 2.26 s).
 */
export function longRunThreads(video: { width: number; height: number }): number {
  const cores = availableParallelism();
  return largePicture(video) ? cores : cores * 3;
}

export function shortRun(group: DecodeGroup): boolean {
  return (
    group.seekSeconds !== null &&
    group.times[group.times.length - 1] - group.seekSeconds <= SHORT_RUN_SECONDS
  );
}

/**
 * A run's decoder threads. A short run takes one. So does a run from the start that decodes as
 * little, when other runs follow it: then, too, the other core has work (the next run, or above
 * 1440p, where runs go one at a time, the encoder), and at 2160p each more thread holds ~27 MB
 * of pictures (measured: the bench's 2160p job's ffmpeg peaked at 189 MB in its first run, with
 * two threads, and 162 MB with one; the job as fast, JPEG 3.27 s against 3.31 s, medians of 4).
 * Alone, a run from the start is the whole job, and threads make it faster.
 */
export function decodeThreads(
  group: DecodeGroup,
  video: { width: number; height: number },
  moreRuns: boolean,
): number {
  const fromStartShort =
    group.seekSeconds === null &&
    moreRuns &&
    group.times[group.times.length - 1] <= SHORT_RUN_SECONDS;
  return shortRun(group) || fromStartShort ? 1 : longRunThreads(video);
}

/**
 * A picture as delivered: its pts on the video's clock (pts is absolute, wanted relative), and
 * whether it lies past the last frame of a file that ended early with errors. A frame the index
 * vouched for (checkShown: the frame the index says is on screen at its time) is never past the
 * end, whatever errors the run met elsewhere (a view's unclean stretch, decoded after it). Its
 * release gives the buffer back once, however often it is called.
 */
function deliveredFrame(
  context: DecodeContext,
  slot: number,
  pixels: Buffer,
  pts: number | null,
  wanted: number,
  errors: { sawErrors: boolean; vouched: boolean },
): DecodedFrame {
  const start = context.video.startTime;
  const tailAllowance = Math.max(1, 3 / (context.video.frameRate ?? 30));
  const unvouchedErrors = errors.sawErrors && !errors.vouched;
  let given = false;
  const { width, height, thumbnail } = context.picture;
  const pictureBytes = width * height * 3;
  return {
    slot,
    // With a thumbnail, the buffer holds the frame's rows and then the thumbnail's.
    pixels: thumbnail ? pixels.subarray(0, pictureBytes) : pixels,
    thumbnail: thumbnail
      ? { pixels: pixels.subarray(pictureBytes), rowWidth: width, ...thumbnail }
      : null,
    release: () => {
      if (given) return;
      given = true;
      context.buffers.give(pixels);
    },
    pts: pts === null ? null : pts - start,
    pastDecodedEnd: unvouchedErrors && pts !== null && wanted + start - pts > tailAllowance,
  };
}

/** A decode run whose ffmpeg failed before it delivered every frame: logged, then thrown. */
function decodeFailure(
  tool: RunningTool,
  code: number | null,
  delivered: number,
  total: number,
): MediaToolError {
  const error = new MediaToolError(
    `ffmpeg failed (${code}) after ${delivered} of ${total} frames`,
    tool.commandLine,
    tool.stderrTail(),
    code,
  );
  logToolFailure(error);
  return error;
}

/** One ffmpeg process for one seek point; it starts at once so the next group can warm up. */
export class DecodeRun {
  readonly group: DecodeGroup;
  readonly slots: SlotTimes;
  private readonly context: DecodeContext;
  private readonly tool: FrameTool;
  private readonly timeline: SlotTimeline;
  private readonly hiding: HidingInput | null;
  private overshot = false;
  private stopped = false;
  private sawErrors = false;

  /** `moreRuns`: other runs of the job follow this one (decodeThreads). */
  constructor(context: DecodeContext, group: DecodeGroup, moreRuns = false) {
    this.context = context;
    this.group = group;
    const start = context.video.startTime;
    this.slots = toSlotTimes(group.times.map((t) => start + t));
    this.timeline = new SlotTimeline(this.slots);
    const { num, den } = context.video.timeBase;
    const seek = group.seekSeconds === null ? null : start + group.seekSeconds;
    const hiding = context.inputFor?.(this.slots) ?? null;
    this.hiding = hiding;
    const args = decodeArgs({
      input: hiding?.input ?? context.input,
      hidesFrames: hiding !== null,
      streamIndex: context.video.streamIndex,
      seekSeconds: seek,
      slots: this.slots,
      timeBase: context.video.timeBase,
      picture: context.picture,
      threads: decodeThreads(group, context.video, moreRuns),
    });
    // One frame read ahead: the next is read while the consumer encodes this one (above
    // 1440p only once it has been given back: the pool holds one picture at a time).
    this.tool = new FrameTool(args, context.buffers, 1, {
      signal: context.signal,
      onStderrLine: (line) => {
        const frame = SHOWINFO_FRAME.exec(line);
        if (frame) {
          // Exactly setpts' arithmetic (ticks × av_q2d(time base)), so both count alike.
          const pts = Number(frame[1]) * (num / den);
          if (seek !== null && this.timeline.firstFramePts === null) this.checkSeek(pts);
          this.timeline.observeFrame(pts);
          return true;
        }
        if (damageLine(line, hiding !== null)) this.sawErrors = true;
        return SHOWINFO_LINE.test(line);
      },
    });
    // Slots after the last frame are flushed at end of stream; their pts is known only then.
    this.tool.stderrClosed.then(() => this.timeline.finish());
  }

  /** The seek landed after the first wanted time (an index that lies, or B-frame dts). */
  private checkSeek(firstPts: number): void {
    const firstWanted = this.group.times[0] + this.context.video.startTime;
    if (firstPts > firstWanted + PTS_TOLERANCE_SECONDS) {
      this.overshot = true;
      this.tool.kill();
    }
  }

  get seekOvershot(): boolean {
    return this.overshot;
  }

  /** Stops the process; frames not yet read are dropped. */
  cancel(): void {
    this.stopped = true;
    this.tool.kill();
  }

  async *frames(): AsyncGenerator<DecodedFrame> {
    const pool = this.context.buffers;
    let slot = 0;
    try {
      for (;;) {
        const pixels = await this.tool.nextFrame();
        if (!pixels) break;
        // A slot after the last frame learns its pts only once ffmpeg has exited: read on.
        const pts = await this.tool.whileWaiting(this.timeline.ptsOfSlot(slot));
        if (this.overshot) {
          pool.give(pixels);
          return;
        }
        try {
          checkShown(this.hiding, slot, pts, this.context.video.startTime + this.group.times[slot]);
        } catch (error) {
          pool.give(pixels);
          throw error;
        }
        yield deliveredFrame(this.context, slot, pixels, pts, this.group.times[slot], {
          sawErrors: this.sawErrors,
          vouched: this.hiding !== null && pts !== null,
        });
        slot++;
      }
    } finally {
      if (slot < this.group.times.length) this.tool.kill();
      this.tool.close();
    }
    const { code } = await this.tool.exited;
    this.timeline.finish();
    this.context.signal.throwIfAborted();
    if (code !== 0 && !this.overshot && !this.stopped && slot < this.group.times.length) {
      throw decodeFailure(this.tool, code, slot, this.group.times.length);
    }
  }
}

/**
 * All frames of a group, in order. A seek that lands after the first wanted time is retried
 * from earlier (then from the start) before any frame is delivered, so nothing is decoded
 * twice in the normal case and nothing wrong is ever delivered.
 */
export async function* decodeGroup(
  context: DecodeContext,
  firstRun: DecodeRun,
): AsyncGenerator<DecodedFrame> {
  let run = firstRun;
  for (;;) {
    yield* run.frames();
    if (!run.seekOvershot) return;
    const previous = run.group.seekSeconds ?? 0;
    const seekSeconds = previous > 3 ? previous - 3 : null;
    run = new DecodeRun(context, { seekSeconds, times: run.group.times });
  }
}

const BATCH_SHOWINFO_FRAME = /^\[showinfo@g(\d+) @ [^\]]+\] \[info\] n:\s*\d+\s+pts:\s*(-?\d+)\s/;
const BATCH_SHOWINFO_LINE = /^\[showinfo@g\d+ @/;
// How far past a group's last time its input is read, in frames: one after that time must be
// seen to know the one before it is on screen (a frame that is not seen sends the group to a
// single run, so a short read costs time, never exactness).
const BATCH_READ_PAST_FRAMES = 2;
// What ffmpeg reads beyond the packets it decodes: its 32 KiB I/O buffer, refilled whole, and
// the packet that ends its read (measured: without it every input came back for one or two
// more small parts, each a round trip to the origin; with it none did).
const READ_AHEAD_BYTES = 64 * 1024;

/**
 * What the relay may fetch at once for an input that decodes `readSeconds` from a keyframe
 * (ffmpeg/args.ts inputWithReadHint): the span at the file's average rate, plus the keyframe,
 * which is several average frames on its own (a 1080p keyframe of 40 KB among 12.5 KB frames:
 * the average alone fell 40–130 KB short of every seek's read), plus ffmpeg's read-ahead.
 */
export function expectedReadBytes(
  readSeconds: number,
  bytesPerSecond: number | null | undefined,
  keyframeBytes: number | null | undefined,
): number | null {
  if (!bytesPerSecond) return null;
  return Math.round(readSeconds * bytesPerSecond + (keyframeBytes ?? 0) + READ_AHEAD_BYTES);
}

/** A group whose seek lands on a known keyframe (seconds from the video's start). */
export interface BatchGroup extends DecodeGroup {
  keyframeSeconds: number;
  /** The keyframe's packet size, when the lookup said it (the relay's read hint). */
  keyframeBytes?: number | null;
}

/**
 * Several short groups in one ffmpeg process, their frames in turn on one pipe. Where the
 * source has a view of only the stretches they need (DecodeContext.spansFor), the process
 * reads that one input from its start (ffmpeg/mp4-spans.ts: one decoder, the file opened once);
 * else each group is an input of its own with its own seek (ffmpeg/args.ts batchDecodeArgs),
 * its pts from its own showinfo. The pipe is read from the start, ahead of the consumer, so
 * ffmpeg never waits on us (while a slot's pts is still unknown, or while an earlier run is
 * consumed); the planner keeps a batch to a few frames (decode-plan.ts), which bounds what
 * that holds.
 */
export class BatchRun {
  readonly groups: BatchGroup[];
  /** All the groups' times in order, as one group (what the caller maps slots with). */
  readonly group: DecodeGroup;
  private readonly context: DecodeContext;
  private readonly tool: FrameTool;
  /**
   * What names each slot's pts, from its first slot on: one per group's input, or one for the
   * view; with what its frames are checked against, where it follows the index.
   */
  private readonly reads: { first: number; timeline: SlotTimeline; check: HidingInput | null }[];
  /** First slot of each group in the batch's frame order. */
  private readonly offsets: number[];
  private readonly view: SpanView | null;
  private overshotGroup: number | null = null;
  private sawErrors = false;
  /** Frames delivered so far, in the batch's order; decodeBatch goes on from there. */
  delivered = 0;

  constructor(context: DecodeContext, groups: BatchGroup[]) {
    this.context = context;
    this.groups = groups;
    this.group = { seekSeconds: groups[0].seekSeconds, times: groups.flatMap((g) => g.times) };
    const start = context.video.startTime;
    this.offsets = [];
    let offset = 0;
    for (const g of groups) {
      this.offsets.push(offset);
      offset += g.times.length;
    }
    const { num, den } = context.video.timeBase;
    const allSlots = toSlotTimes(this.group.times.map((t) => start + t));
    const span = context.spansFor?.(allSlots) ?? null;
    this.view = span?.view ?? null;
    let args: string[];
    let hiding: boolean;
    if (span) {
      this.reads = [
        {
          first: 0,
          timeline: new SlotTimeline(allSlots),
          check: { input: span.input, shownAt: span.view.shownAt },
        },
      ];
      hiding = span.hidesFrames;
      log("debug", "batch reads a view", {
        groups: groups.length,
        stretches: span.view.spans.length,
        hides: span.hidesFrames,
      });
      args = decodeArgs({
        input: span.input,
        hidesFrames: span.hidesFrames,
        streamIndex: 0,
        seekSeconds: null,
        slots: allSlots,
        timeBase: context.video.timeBase,
        picture: context.picture,
        threads: 1,
      });
    } else {
      const slots = groups.map((g) => toSlotTimes(g.times.map((t) => start + t)));
      this.reads = slots.map((part, k) => ({
        first: this.offsets[k],
        timeline: new SlotTimeline(part),
        check: context.inputFor?.(part) ?? null,
      }));
      const parts = groups.map((g, k) => {
        const readSeconds =
          g.times[g.times.length - 1] -
          g.keyframeSeconds +
          BATCH_READ_PAST_FRAMES / (context.video.frameRate ?? 10);
        return {
          seekSeconds: start + (g.seekSeconds ?? 0),
          readSeconds,
          readBytes: expectedReadBytes(readSeconds, context.bytesPerSecond, g.keyframeBytes),
          slots: slots[k],
          input: this.reads[k].check?.input,
        };
      });
      hiding = parts.some((part) => part.input !== undefined);
      args = batchDecodeArgs({
        input: context.input,
        streamIndex: context.video.streamIndex,
        timeBase: context.video.timeBase,
        picture: context.picture,
        parts,
      });
    }
    // Read from the start and never paused: a batch waiting its turn decodes all its seeks
    // meanwhile instead of stopping at its first frame in a full pipe (measured: the second of
    // two batches finished 0.5 s after the first; now with it). The planner keeps a batch to a
    // few frames (decode-plan.ts), which bounds what that holds.
    this.tool = new FrameTool(args, context.buffers, Number.POSITIVE_INFINITY, {
      signal: context.signal,
      onStderrLine: (line) => {
        const frame = span ? SHOWINFO_FRAME.exec(line) : BATCH_SHOWINFO_FRAME.exec(line);
        if (frame) {
          const k = span ? 0 : Number(frame[1]);
          const timeline = this.reads[k]?.timeline;
          if (!timeline) return true;
          const pts = Number(frame[span ? 1 : 2]) * (num / den);
          if (!span && timeline.firstFramePts === null) this.checkSeek(k, pts);
          timeline.observeFrame(pts);
          return true;
        }
        if (damageLine(line, hiding)) this.sawErrors = true;
        return span ? SHOWINFO_LINE.test(line) : BATCH_SHOWINFO_LINE.test(line);
      },
    });
    this.tool.stderrClosed.then(() => {
      for (const read of this.reads) read.timeline.finish();
    });
  }

  private checkSeek(k: number, firstPts: number): void {
    const firstWanted = this.groups[k].times[0] + this.context.video.startTime;
    if (firstPts > firstWanted + PTS_TOLERANCE_SECONDS) {
      this.overshotGroup = Math.min(this.overshotGroup ?? k, k);
      this.tool.kill();
    }
  }

  /** The group a seek overshot, from which the caller decodes on alone; null if none. */
  get overshot(): number | null {
    return this.overshotGroup;
  }

  /** First slot of group k in the batch. */
  offsetOf(k: number): number {
    return this.offsets[k];
  }

  cancel(): void {
    this.tool.kill();
    this.tool.close();
  }

  async *frames(): AsyncGenerator<DecodedFrame> {
    const pool = this.context.buffers;
    const start = this.context.video.startTime;
    const total = this.group.times.length;
    let read = 0;
    try {
      for (let slot = 0; slot < total; slot++) {
        const pixels = await this.tool.nextFrame();
        if (!pixels) break;
        while (read + 1 < this.reads.length && slot >= this.reads[read + 1].first) read++;
        const { timeline, first, check } = this.reads[read];
        const pts = await timeline.ptsOfSlot(slot - first);
        const wanted = this.group.times[slot] + start;
        // Only a frame seen after the wanted time proves the one before it is on screen; a
        // slot settled at the end of the input's read is decoded again alone.
        const seenPast = (timeline.lastFramePts ?? -Infinity) > wanted + PTS_TOLERANCE_SECONDS;
        const overshot = this.overshotGroup !== null && slot >= this.offsets[this.overshotGroup];
        // A view's stretch decoded from an I-frame that is not IDR (an open GOP) may have
        // referred to the stretch before: what is left is decoded from its own seeks.
        const unclean = this.view !== null && !this.view.startsClean(slot);
        if (!seenPast || overshot || unclean) {
          if (unclean) log("debug", "a stretch of the view does not begin with an IDR picture");
          pool.give(pixels);
          break;
        }
        try {
          checkShown(check, slot - first, pts, wanted);
        } catch (error) {
          pool.give(pixels);
          throw error;
        }
        this.delivered = slot + 1;
        yield deliveredFrame(this.context, slot, pixels, pts, this.group.times[slot], {
          sawErrors: this.sawErrors,
          vouched: check !== null && pts !== null,
        });
      }
    } finally {
      if (this.delivered < total) this.tool.kill();
      this.tool.close();
    }
    const { code } = await this.tool.exited;
    this.context.signal.throwIfAborted();
    // A batch that fell short is finished by decodeBatch; only a failed ffmpeg is an error,
    // and not one that read a view: its groups are decoded again on their own.
    if (code !== 0 && code !== null && this.overshotGroup === null && this.delivered < total) {
      const failure = decodeFailure(this.tool, code, this.delivered, total);
      if (!this.view) throw failure;
    }
  }
}

/**
 * All frames of a batch, in order. Where a seek overshot (or the batch ended early), the
 * groups not yet delivered are decoded one run each, with a single run's own retries, so
 * nothing is delivered twice and nothing wrong is delivered.
 */
export async function* decodeBatch(
  context: DecodeContext,
  batch: BatchRun,
): AsyncGenerator<DecodedFrame> {
  yield* batch.frames();
  for (let k = 0; k < batch.groups.length; k++) {
    const offset = batch.offsetOf(k);
    const group = batch.groups[k];
    if (batch.delivered >= offset + group.times.length) continue;
    log("debug", "batch group decoded alone", {
      seek: group.seekSeconds,
      overshot: batch.overshot,
    });
    for await (const frame of decodeGroup(context, new DecodeRun(context, group))) {
      const slot = offset + frame.slot;
      if (slot < batch.delivered) {
        frame.release();
        continue;
      }
      yield { ...frame, slot };
    }
  }
}
