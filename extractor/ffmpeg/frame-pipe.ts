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
  take(): Buffer;
  give(buffer: Buffer): void;
}

let opened = 0;

export class FramePipe {
  /** The end to hand the child as its stdout (spawn's stdio); closed once spawned. */
  childEnd: Socket | null = null;
  private socket: Socket | null = null;
  private readonly buffers: FrameBuffers;
  /** Whole frames read ahead of the consumer before reading pauses. */
  private readonly ahead: number;
  private current: Buffer | null = null;
  private filled = 0;
  private readonly ready: Buffer[] = [];
  private ended = false;
  /** Reading is paused by us (ready holds `ahead` frames) until the consumer takes one. */
  private paused = false;
  /** The consumer waits on something only reading on can bring (whileWaiting). */
  private waiting = 0;
  private wake: (() => void) | null = null;

  private constructor(buffers: FrameBuffers, ahead: number) {
    this.buffers = buffers;
    this.ahead = ahead;
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

  /** The rest of the frame being filled: where the next read lands. */
  private target(): Buffer {
    if (!this.current) {
      this.current = this.buffers.take();
      this.filled = 0;
    }
    return this.current.subarray(this.filled);
  }

  private received(bytes: number): void {
    this.filled += bytes;
    if (!this.current || this.filled < this.buffers.frameBytes) return;
    this.ready.push(this.current);
    this.current = null;
    if (this.ready.length >= this.ahead && this.waiting === 0 && !this.paused) {
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
    if (this.ready.length < this.ahead) this.resume();
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
    this.resume();
    try {
      return await promise;
    } finally {
      this.waiting--;
    }
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.socket?.resume();
  }

  /** Stops reading and hands back every buffer not given to the consumer. */
  close(): void {
    this.socket?.destroy();
    this.childEnd?.destroy();
    for (const frame of this.ready.splice(0)) this.buffers.give(frame);
    if (this.current) this.buffers.give(this.current);
    this.current = null;
  }
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
