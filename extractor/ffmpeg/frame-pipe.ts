// Raw frames from ffmpeg straight into our frame buffers.
//
// A child's stdout pipe hands Node a fresh Buffer for every read (64 KiB at most), which we
// then copied into a frame buffer. At 6 MB per 1080p frame that is gigabytes of short-lived
// buffers per dense job, and the mark-compacts they force (measured: ~50 for 240 frames of
// 1080p) took CPU the decoder needed. Here ffmpeg's stdout is one end of a connected Unix
// socket instead (abstract namespace: no file, nothing another process could open), and we
// read the other end with `onread`, which has the kernel write each read into the frame buffer
// being filled. Nothing is allocated per read and nothing is copied twice.
import { once } from "node:events";
import { connect, createServer, type Socket } from "node:net";
import type { RunningTool, RunOptions } from "./process.ts";
import { commandLineOf, startToolInto } from "./process.ts";

/** Where the frame buffers come from and go back to (decode.ts FrameBufferPool). */
export interface FrameBuffers {
  readonly frameBytes: number;
  /**
   * Pictures one bounded pipe may have out at once, counting those its consumer still holds:
   * at the limit it reads on only when one of them comes back.
   */
  readonly limit: number;
  take(): Buffer;
  give(buffer: Buffer): void;
  /** Calls `listener` with every buffer given back; answers how to stop. */
  onGive(listener: (buffer: Buffer) => void): () => void;
}

// Where a read lands while no picture buffer may be taken (at most this, never past a frame).
const SCRATCH_BYTES = 64 * 1024;
// How long a bounded pipe at its limit waits for a pts before reading on anyway (whileWaiting).
const PTS_GRACE_MS = 20;

let opened = 0;

export class FramePipe {
  /** The end to hand the child as its stdout (spawn's stdio); closed once spawned. */
  childEnd: Socket | null = null;
  private socket: Socket | null = null;
  private readonly buffers: FrameBuffers;
  /** Whole frames read ahead of the consumer before reading pauses. */
  private readonly ahead: number;
  /**
   * Also pauses while it has `buffers.limit` pictures out (its consumer's included). A pipe
   * that reads ahead without bound (a batch, whose pictures' times are known only at its end)
   * is not.
   */
  private readonly bounded: boolean;
  /** This pipe's buffers not yet given back: filling, ready, or with the consumer. */
  private readonly out = new Set<Buffer>();
  private current: Buffer | null = null;
  private filled = 0;
  /** Where the next read lands while at the limit (target()), and whether it does. */
  private scratch: Buffer | null = null;
  private toScratch = false;
  private stopListening: () => void = () => {};
  private readonly ready: Buffer[] = [];
  private ended = false;
  /** Reading is paused by us (atLimit) until the consumer takes a frame or gives one back. */
  private paused = false;
  /** The consumer waits on something only reading on can bring (whileWaiting). */
  private waiting = 0;
  private wake: (() => void) | null = null;
  /** A wait at the limit outlasted PTS_GRACE_MS (whileWaiting). */
  private graceOutlasted = false;

  private constructor(buffers: FrameBuffers, ahead: number) {
    this.buffers = buffers;
    this.ahead = ahead;
    this.bounded = Number.isFinite(ahead);
    if (this.bounded) {
      this.stopListening = buffers.onGive((buffer) => {
        if (this.out.delete(buffer)) this.resumeIfRoom();
      });
    }
  }

  /**
   * A connected pair: a listener on a fresh abstract name, one connection to it, and the
   * listener closed again at once.
   */
  static async open(buffers: FrameBuffers, ahead: number): Promise<FramePipe> {
    const pipe = new FramePipe(buffers, ahead);
    const server = createServer({ pauseOnConnect: true });
    const name = `\0stills-frames-${process.pid}-${++opened}-${Math.random().toString(36).slice(2)}`;
    server.listen(name);
    await once(server, "listening");
    const socket = connect({
      path: name,
      onread: {
        buffer: () => pipe.target(),
        callback: (bytes: number) => {
          pipe.received(bytes);
          return true;
        },
      },
    });
    const finish = () => pipe.finish();
    socket.on("end", finish);
    socket.on("close", finish);
    // A reset when ffmpeg is killed mid-frame: the frames read so far stand, the rest is gone.
    socket.on("error", finish);
    const [[childEnd]] = await Promise.all([
      once(server, "connection") as Promise<[Socket]>,
      once(socket, "connect"),
    ]);
    server.close();
    pipe.socket = socket;
    pipe.childEnd = childEnd;
    return pipe;
  }

  private finish(): void {
    this.ended = true;
    if (this.current) this.buffers.give(this.current);
    this.current = null;
    this.notify();
  }

  /** As many pictures out as this pipe may have. */
  private full(): boolean {
    return this.bounded && this.out.size >= this.buffers.limit;
  }

  /** No further picture may be read into memory now. */
  private atLimit(): boolean {
    return this.ready.length >= this.ahead || this.full();
  }

  private take(): Buffer {
    const buffer = this.buffers.take();
    if (this.bounded) this.out.add(buffer);
    return buffer;
  }

  /**
   * The rest of the frame being filled: where the next read lands. Node asks for it right after
   * every read, paused or not; at the limit no picture buffer is taken for a read that may
   * never come, and one that does come lands in a small scratch buffer (received()).
   */
  private target(): Buffer {
    this.toScratch = false;
    if (!this.current) {
      if (this.full()) {
        this.scratch ??= Buffer.allocUnsafe(Math.min(SCRATCH_BYTES, this.buffers.frameBytes));
        this.toScratch = true;
        return this.scratch;
      }
      this.current = this.take();
      this.filled = 0;
    }
    return this.current.subarray(this.filled);
  }

  private received(bytes: number): void {
    if (this.toScratch && this.scratch) {
      // Read while at the limit (reading went on for a wait): a picture buffer now.
      this.toScratch = false;
      this.current = this.take();
      this.filled = 0;
      this.scratch.copy(this.current, 0, 0, bytes);
    }
    this.filled += bytes;
    if (!this.current || this.filled < this.buffers.frameBytes) return;
    this.ready.push(this.current);
    this.current = null;
    if (this.atLimit() && this.waiting === 0 && !this.paused) {
      this.paused = true;
      this.socket?.pause();
    }
    this.notify();
  }

  private notify(): void {
    this.wake?.();
    this.wake = null;
  }

  /** The next whole frame, or null once the stream has ended (a partial frame is dropped). */
  async next(): Promise<Buffer | null> {
    while (this.ready.length === 0 && !this.ended) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
    const frame = this.ready.shift() ?? null;
    this.resumeIfRoom();
    return frame;
  }

  /**
   * Reads on, past `ahead`, until `promise` settles: for a wait that only the end of ffmpeg's
   * output can end. The pts of slots after the last frame is known only once ffmpeg has exited,
   * and it cannot exit while its last frames wait in a socket we stopped reading (a 720p clip
   * at 100 frames a second stalled that way until the job's deadline).
   */
  async whileWaiting<T>(promise: Promise<T>): Promise<T> {
    this.waiting++;
    try {
      // At its limit a bounded pipe first gives the wait a moment: the pts is almost always on
      // its way through stderr already (showinfo prints a frame before its pixels are written),
      // and reading on would take another picture buffer. Only a slot after the last frame
      // needs ffmpeg's exit, which needs its last pictures read.
      // Once a wait has outlasted it, the run is at its end: later waits read on at once.
      if (this.full() && !this.ended && !this.graceOutlasted) {
        if (await settledWithin(promise, PTS_GRACE_MS)) return await promise;
        this.graceOutlasted = true;
      }
      this.resume();
      return await promise;
    } finally {
      this.waiting--;
    }
  }

  private resumeIfRoom(): void {
    if (!this.atLimit()) this.resume();
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.socket?.resume();
  }

  /** Stops reading and hands back every buffer not given to the consumer. */
  close(): void {
    this.stopListening();
    this.socket?.destroy();
    this.childEnd?.destroy();
    for (const frame of this.ready.splice(0)) this.buffers.give(frame);
    if (this.current) this.buffers.give(this.current);
    this.current = null;
  }
}

/** Whether `promise` settles within `ms` (waiting at most that long); never throws. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return settled;
}

/**
 * ffmpeg writing raw frames into a FramePipe. The pipe opens asynchronously, so the process
 * starts a moment after construction; a kill before that keeps it from starting at all.
 */
export class FrameTool implements RunningTool {
  readonly commandLine: string;
  readonly exited: RunningTool["exited"];
  readonly stderrClosed: Promise<void>;
  private readonly pipe: Promise<FramePipe | null>;
  private running: RunningTool | null = null;
  private killed = false;
  private closed = false;

  constructor(args: string[], buffers: FrameBuffers, ahead: number, options: RunOptions) {
    this.commandLine = commandLineOf("ffmpeg", args);
    this.pipe = FramePipe.open(buffers, ahead).then((pipe) => {
      if (this.killed || this.closed || !pipe.childEnd) {
        pipe.close();
        return null;
      }
      this.running = startToolInto("ffmpeg", args, pipe.childEnd, options);
      return pipe;
    });
    this.exited = this.pipe.then((pipe) =>
      pipe && this.running ? this.running.exited : { code: null, signal: "SIGKILL" as const },
    );
    this.stderrClosed = this.pipe.then((pipe) =>
      pipe && this.running ? this.running.stderrClosed : undefined,
    );
  }

  /** The next whole frame, or null at the end of the output. */
  async nextFrame(): Promise<Buffer | null> {
    const pipe = await this.pipe;
    return pipe ? pipe.next() : null;
  }

  /** Reads on until `promise` settles (FramePipe.whileWaiting). */
  async whileWaiting<T>(promise: Promise<T>): Promise<T> {
    const pipe = await this.pipe;
    return pipe ? pipe.whileWaiting(promise) : promise;
  }

  stderrTail(): string {
    return this.running?.stderrTail() ?? "";
  }

  kill(): void {
    this.killed = true;
    this.running?.kill();
  }

  /** Stops reading; frames read but not taken go back to the buffers. */
  close(): void {
    this.closed = true;
    this.pipe.then((pipe) => pipe?.close());
  }
}
