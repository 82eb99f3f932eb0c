// Raw frames through the socket pair (extractor/ffmpeg/frame-pipe.ts): the bytes are exactly
// ffmpeg's own output, reading pauses while the consumer is behind, and every buffer taken is
// handed back however the run ends. The expected bytes come from a separate ffmpeg run to a
// file, never from the code under test.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import type { FrameBuffers } from "../../extractor/ffmpeg/frame-pipe.ts";
import { FrameTool } from "../../extractor/ffmpeg/frame-pipe.ts";
import { makeTestVideo } from "../support/videos.ts";
import { cfrFrameAt, deliveredNumbers, runJob } from "./helpers.ts";

const run = promisify(execFile);
const WIDTH = 64;
const HEIGHT = 48;
const FRAME_BYTES = WIDTH * HEIGHT * 3;

function frameArgs(frames: number): string[] {
  return [
    "-v",
    "error",
    "-f",
    "lavfi",
    "-i",
    `testsrc2=s=${WIDTH}x${HEIGHT}:r=25`,
    "-frames:v",
    String(frames),
    "-f",
    "rawvideo",
    "-pix_fmt",
    "rgb24",
  ];
}

/**
 * Counts what is taken and given back, so a leak or a runaway read shows; a pipe may have
 * `limit` pictures out (the extractor's pool allows one above 1440p).
 */
class CountingBuffers implements FrameBuffers {
  readonly frameBytes = FRAME_BYTES;
  readonly limit: number;
  taken = 0;
  given = 0;
  outstandingPeak = 0;
  private readonly listeners = new Set<(buffer: Buffer) => void>();
  constructor(limit = Number.POSITIVE_INFINITY) {
    this.limit = limit;
  }
  take(): Buffer {
    this.taken++;
    this.outstandingPeak = Math.max(this.outstandingPeak, this.taken - this.given);
    return Buffer.alloc(FRAME_BYTES);
  }
  give(buffer: Buffer): void {
    this.given++;
    for (const listener of this.listeners) listener(buffer);
  }
  onGive(listener: (buffer: Buffer) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

async function expectedBytes(frames: number): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), "stills-frame-pipe-"));
  try {
    const file = join(dir, "frames.rgb");
    await run("ffmpeg", [...frameArgs(frames), file]);
    return await readFile(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Takes every frame left in the tool's output, each copied and given back after `holdMs`
 * (a consumer that encodes), then closes the tool.
 */
async function drain(tool: FrameTool, buffers: FrameBuffers, holdMs = 0): Promise<Buffer[]> {
  const received: Buffer[] = [];
  for (;;) {
    const frame = await tool.nextFrame();
    if (!frame) break;
    received.push(Buffer.from(frame));
    if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
    buffers.give(frame);
  }
  tool.close();
  return received;
}

describe("frames through the socket pair", () => {
  it("are byte for byte ffmpeg's output, frame by frame", async () => {
    const frames = 40;
    const buffers = new CountingBuffers();
    const tool = new FrameTool([...frameArgs(frames), "pipe:1"], buffers, 1, {});
    const received = await drain(tool, buffers);
    expect((await tool.exited).code).toBe(0);
    expect(received).toHaveLength(frames);
    expect(Buffer.concat(received).equals(await expectedBytes(frames))).toBe(true);
  });

  it("pause reading while the consumer is behind, so only a few frames are ever out", async () => {
    const buffers = new CountingBuffers();
    const tool = new FrameTool([...frameArgs(60), "pipe:1"], buffers, 1, {});
    // A slow consumer: ffmpeg could write every frame meanwhile if nothing held it back.
    expect(await drain(tool, buffers, 5)).toHaveLength(60);
    // The frame the consumer holds, one read ahead, one being filled.
    expect(buffers.outstandingPeak).toBeLessThanOrEqual(3);
  });

  it("hold one picture at a time when the buffers allow one, the bytes still exact", async () => {
    // Every picture after the first starts in the pipe's scratch buffer (read as the consumer
    // gives the one before back): the copy out of it must not lose or move a byte.
    const frames = 60;
    const buffers = new CountingBuffers(1);
    const tool = new FrameTool([...frameArgs(frames), "pipe:1"], buffers, 1, {});
    const received = await drain(tool, buffers, 2);
    expect((await tool.exited).code).toBe(0);
    expect(buffers.outstandingPeak).toBe(1);
    expect(received).toHaveLength(frames);
    expect(Buffer.concat(received).equals(await expectedBytes(frames))).toBe(true);
  });

  it("read on at their limit for a wait that only ffmpeg's exit can end", async () => {
    // 60 frames (550 KB) do not fit the socket: ffmpeg exits only once they are read. A pipe
    // that kept its limit through the wait would stall here until the test's timeout.
    const frames = 60;
    const buffers = new CountingBuffers(1);
    const tool = new FrameTool([...frameArgs(frames), "pipe:1"], buffers, 1, {});
    const first = await tool.nextFrame();
    expect(first).not.toBeNull();
    const { code } = await tool.whileWaiting(tool.exited);
    expect(code).toBe(0);
    buffers.give(first as Buffer);
    expect(await drain(tool, buffers)).toHaveLength(frames - 1);
  });

  it("count each pipe's pictures on its own: one left waiting never holds up another", async () => {
    // A run started ahead holds its first picture until the run before it is done (decodeAll):
    // counted against a limit shared by both, that run would wait for itself.
    const buffers = new CountingBuffers(1);
    const ahead = new FrameTool([...frameArgs(10), "pipe:1"], buffers, 1, {});
    expect(await ahead.nextFrame()).not.toBeNull();
    const tool = new FrameTool([...frameArgs(20), "pipe:1"], buffers, 1, {});
    expect(await drain(tool, buffers)).toHaveLength(20);
    ahead.kill();
    ahead.close();
  });

  it("hand every buffer back when the consumer stops early and the process is killed", async () => {
    const buffers = new CountingBuffers();
    const tool = new FrameTool(
      [...frameArgs(500), "pipe:1"],
      buffers,
      Number.POSITIVE_INFINITY,
      {},
    );
    const first = await tool.nextFrame();
    expect(first).not.toBeNull();
    buffers.give(first as Buffer);
    tool.kill();
    tool.close();
    await tool.exited;
    // Give the socket's close a turn to return the frame it was filling.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(buffers.given).toBe(buffers.taken);
  });

  it("never start ffmpeg when killed before the pipe is open", async () => {
    const buffers = new CountingBuffers();
    const tool = new FrameTool([...frameArgs(10), "pipe:1"], buffers, 1, {});
    tool.kill();
    expect(await tool.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(await tool.nextFrame()).toBeNull();
    expect(buffers.given).toBe(buffers.taken);
  });
});

describe("a single run whose last slots come after the last frame", () => {
  it("reads on until ffmpeg exits, so those slots learn their pts (720p, 100 frames in 1 s)", async () => {
    // About three slots per frame: the last few lie after the last frame, whose pts is known
    // only at the end of ffmpeg's output, and 2.7 MB each they overflow the socket. With
    // reading paused at one frame ahead this stalled until the job's deadline.
    const fps = 30;
    const video = await makeTestVideo({ fps, durationSeconds: 1, width: 1280, height: 720 });
    const run = await runJob(video, { mode: "count", count: 100 }, { deadlineSeconds: 10 });
    expect(run.outcome.status).toBe("completed");
    expect(await deliveredNumbers(run)).toEqual(
      run.outcome.frames.map((f) => cfrFrameAt(f.timestamp, fps)),
    );
  });

  it("and above 1440p, where the run holds one picture at a time (2688×1512, 40 in 1 s)", async () => {
    // 12 MB pictures: the pipe reads the next only once the last is encoded, and the slots of
    // the last frame wait for ffmpeg's exit, which needs its last pictures read.
    const fps = 10;
    const video = await makeTestVideo({ fps, durationSeconds: 1, width: 2688, height: 1512 });
    const run = await runJob(video, { mode: "count", count: 40 }, { deadlineSeconds: 20 });
    expect(run.outcome.status).toBe("completed");
    expect(run.outcome.frames.every((f) => f.status === "ok")).toBe(true);
    expect(await deliveredNumbers(run)).toEqual(
      run.outcome.frames.map((f) => cfrFrameAt(f.timestamp, fps)),
    );
  });
});
