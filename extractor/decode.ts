// One decode run: ffmpeg reads forward from a seek point (or the start) and writes one raw RGB
// picture per wanted time to a pipe; we cut the stream into pictures by byte count and name
// each one's own pts from showinfo. Reading the pipe only as fast as frames are consumed is the
// backpressure that keeps memory flat however long the video is.
import type { PictureSteps } from "./ffmpeg/args.ts";
import { decodeArgs } from "./ffmpeg/args.ts";
import type { VideoProbe } from "./ffmpeg/probe.ts";
import type { RunningTool } from "./ffmpeg/process.ts";
import { logToolFailure, MediaToolError, startTool } from "./ffmpeg/process.ts";
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
  picture: PictureSteps;
  signal: AbortSignal;
  buffers: FrameBufferPool;
}

/**
 * Reuses the few frame-sized buffers in flight. Fresh 25 MB buffers per 2160p frame are freed
 * only when V8 gets round to it, and RSS climbs by hundreds of MB in the meantime.
 */
export class FrameBufferPool {
  readonly frameBytes: number;
  private readonly free: Buffer[] = [];
  private readonly keep: number;

  constructor(frameBytes: number, keep = 4) {
    this.frameBytes = frameBytes;
    this.keep = keep;
  }

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafe(this.frameBytes);
  }

  give(buffer: Buffer): void {
    if (this.free.length < this.keep && !this.free.includes(buffer)) this.free.push(buffer);
  }
}

const SHOWINFO_FRAME = /^\[Parsed_showinfo_0 @ [^\]]+\] \[info\] n:\s*\d+\s+pts:\s*(-?\d+)\s/;
const SHOWINFO_LINE = /^\[Parsed_showinfo_0 @/;
const ERROR_LINE = /\[(error|fatal|panic)\]/;
// The end of one of the relay's parts, after which ffmpeg asks for the next (sources/relay.ts):
// not damage in the file. A real failure to go on shows up as its own error.
const PART_END_LINE = /^\[http @ [^\]]+\] \[error\] Stream ends prematurely/;

// A run that seeks and decodes only a few seconds is mostly start-up: one decoder thread does
// it with the least CPU, and the next run decodes on the other core meanwhile (measured).
const SHORT_RUN_SECONDS = 5;

function shortRun(group: DecodeGroup): boolean {
  return (
    group.seekSeconds !== null &&
    group.times[group.times.length - 1] - group.seekSeconds <= SHORT_RUN_SECONDS
  );
}

/** One ffmpeg process for one seek point; it starts at once so the next group can warm up. */
export class DecodeRun {
  readonly group: DecodeGroup;
  readonly slots: SlotTimes;
  private readonly context: DecodeContext;
  private readonly tool: RunningTool;
  private readonly timeline: SlotTimeline;
  private overshot = false;
  private stopped = false;
  private sawErrors = false;

  constructor(context: DecodeContext, group: DecodeGroup) {
    this.context = context;
    this.group = group;
    const start = context.video.startTime;
    this.slots = toSlotTimes(group.times.map((t) => start + t));
    this.timeline = new SlotTimeline(this.slots);
    const { num, den } = context.video.timeBase;
    const seek = group.seekSeconds === null ? null : start + group.seekSeconds;
    const args = decodeArgs({
      input: context.input,
      streamIndex: context.video.streamIndex,
      seekSeconds: seek,
      slots: this.slots,
      timeBase: context.video.timeBase,
      picture: context.picture,
      threads: shortRun(group) ? 1 : undefined,
    });
    this.tool = startTool("ffmpeg", args, {
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
        if (ERROR_LINE.test(line) && !PART_END_LINE.test(line)) this.sawErrors = true;
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
    const frameBytes = pool.frameBytes;
    const start = this.context.video.startTime;
    const frameRate = this.context.video.frameRate ?? 30;
    const tailAllowance = Math.max(1, 3 / frameRate);
    let slot = 0;
    let current = pool.take();
    let filled = 0;
    try {
      for await (const chunk of this.tool.stdout as AsyncIterable<Buffer>) {
        let offset = 0;
        while (offset < chunk.length) {
          const take = Math.min(frameBytes - filled, chunk.length - offset);
          chunk.copy(current, filled, offset, offset + take);
          filled += take;
          offset += take;
          if (filled < frameBytes) continue;
          const pts = await this.timeline.ptsOfSlot(slot);
          if (this.overshot) return;
          const wanted = this.group.times[slot] + start;
          const pixels = current;
          yield {
            slot,
            pixels,
            release: () => pool.give(pixels),
            pts: pts === null ? null : pts - start,
            pastDecodedEnd: this.sawErrors && pts !== null && wanted - pts > tailAllowance,
          };
          slot++;
          current = pool.take();
          filled = 0;
        }
      }
    } finally {
      pool.give(current);
      if (slot < this.group.times.length) this.tool.kill();
    }
    const { code } = await this.tool.exited;
    this.timeline.finish();
    this.context.signal.throwIfAborted();
    if (code !== 0 && !this.overshot && !this.stopped && slot < this.group.times.length) {
      const error = new MediaToolError(
        `ffmpeg failed (${code}) after ${slot} of ${this.group.times.length} frames`,
        this.tool.commandLine,
        this.tool.stderrTail(),
        code,
      );
      logToolFailure(error);
      throw error;
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
