// For origins that ignore byte ranges: the one answer is written to a temp file as it arrives
// and served from there, so the source is still downloaded only once however ffmpeg seeks.
import { mkdtemp, open, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { sourceDirPrefix } from "../leftovers.ts";
import { asSourceError, interruptedDownload } from "./errors.ts";
import type { ChunkWriter, ServedMedia } from "./ranged-origin.ts";

const READ_CHUNK = 256 * 1024;

export class DownloadedOrigin implements ServedMedia {
  readonly contentType: string;
  private readonly announcedBytes: number | null;
  private readonly directory: Promise<string>;
  private downloaded = 0;
  private finished = false;
  private failure: Error | null = null;
  private readonly waiters = new Set<() => void>();
  private readonly done: Promise<void>;
  private readonly body: Readable;

  /** `head` is what was already read from `body` (the probe); both go to the file in order. */
  constructor(head: Buffer, body: Readable, announcedBytes: number | null, contentType: string) {
    this.contentType = contentType;
    this.announcedBytes = announcedBytes;
    this.body = body;
    // Named with its owner, so a later start can remove it if this process dies hard.
    this.directory = mkdtemp(sourceDirPrefix());
    this.done = this.download(head, body);
    this.done.catch(() => {});
  }

  private async download(head: Buffer, body: Readable): Promise<void> {
    try {
      const file = await open(join(await this.directory, "media"), "w");
      try {
        // Counted only once written, so a reader never reads past what is on disk.
        for (const source of [[head], body] as Iterable<Buffer>[]) {
          for await (const piece of source) {
            await file.write(piece);
            this.downloaded += piece.length;
            this.wake();
          }
        }
      } finally {
        await file.close();
      }
      if (this.announcedBytes !== null && this.downloaded !== this.announcedBytes) {
        throw interruptedDownload(
          `the source ended after ${this.downloaded} of ${this.announcedBytes} bytes`,
        );
      }
    } catch (error) {
      this.failure = asSourceError(error, "downloading the source");
    } finally {
      body.destroy();
      this.finished = true;
      this.wake();
    }
  }

  async size(): Promise<number> {
    if (this.announcedBytes !== null) return this.announcedBytes;
    await this.done;
    if (this.failure) throw this.failure;
    return this.downloaded;
  }

  async pump(start: number, end: number, write: ChunkWriter, signal: AbortSignal): Promise<void> {
    await this.waitFor(Math.min(start + 1, end + 1), signal);
    const handle = await open(join(await this.directory, "media"), "r");
    try {
      let position = start;
      while (position <= end) {
        await this.waitFor(Math.min(position + READ_CHUNK, end + 1), signal);
        const available = Math.min(this.downloaded, end + 1) - position;
        const buffer = Buffer.alloc(Math.min(available, READ_CHUNK));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
        if (bytesRead === 0)
          throw interruptedDownload("the downloaded file is shorter than expected");
        await write(buffer.subarray(0, bytesRead));
        position += bytesRead;
      }
    } finally {
      await handle.close();
    }
  }

  /** Resolves once `offset` bytes are on disk (or the download ended, whatever it reached). */
  private async waitFor(offset: number, signal: AbortSignal): Promise<void> {
    while (this.downloaded < offset && !this.finished) {
      signal.throwIfAborted();
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener("abort", wake);
          this.waiters.delete(wake);
          resolve();
        };
        signal.addEventListener("abort", wake);
        this.waiters.add(wake);
      });
    }
    if (this.failure) throw this.failure;
    if (this.downloaded < offset) throw interruptedDownload("the source ended early");
    signal.throwIfAborted();
  }

  private wake(): void {
    for (const resolve of this.waiters) resolve();
    this.waiters.clear();
  }

  async close(): Promise<void> {
    this.body.destroy();
    await this.done.catch(() => {});
    await rm(await this.directory, { recursive: true, force: true });
  }
}
