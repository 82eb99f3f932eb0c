// Serves byte ranges of a remote file by making ranged requests to it, in 64 KiB blocks kept
// in a small cache. A reader that keeps reading gets ever longer runs per request; one that seeks
// away costs at most the run in flight. That is what lets ffmpeg take a few
// frames out of a long video while fetching only its index and the spans around those frames.
import { downloadFailed, interruptedDownload } from "./errors.ts";
import type { FetchOptions } from "./safe-fetch.ts";
import { safeFetch } from "./safe-fetch.ts";

// A seek lands anywhere in a block and the whole block is fetched: a sparse job's 12 seeks
// into a 5-minute 1080p file read 9.9 MiB at 64 KiB, 10.6 at 128 KiB, 11.8 at 256 (measured).
export const BLOCK_BYTES = 64 * 1024;
// Runs stay short (1 MiB) while a reader might seek away at any moment, and grow to 8 MiB once
// one response has streamed long enough to be a sequential decode.
const SEEKING_RUN_BLOCKS = 16;
const STREAMING_RUN_BLOCKS = 128;
const STREAMING_AFTER_BYTES = 8 * 1024 * 1024;
// 16 MiB: the index and the spans a job's keyframe probe read, kept for its decode runs.
const CACHED_BLOCKS = 256;

export type ChunkWriter = (chunk: Buffer) => Promise<void>;

/** What the loopback relay serves: a file of known size, read by byte range. */
export interface ServedMedia {
  contentType: string;
  size(): Promise<number>;
  pump(
    start: number,
    end: number,
    write: ChunkWriter,
    signal: AbortSignal,
    options?: PumpOptions,
  ): Promise<void>;
  close(): Promise<void>;
}

export interface PumpOptions {
  /** Blocks in the first request to the origin (default 1): more for a reader that said so. */
  firstRunBlocks?: number;
  /** Told the bytes of each request to the origin as it is made. */
  fetched?: (bytes: number) => void;
}

export class RangedOrigin implements ServedMedia {
  readonly contentType: string;
  private readonly url: URL;
  private readonly totalBytes: number;
  private readonly fetchOptions: FetchOptions;
  private readonly cache = new Map<number, Buffer>();

  constructor(url: URL, totalBytes: number, contentType: string, fetchOptions: FetchOptions) {
    this.url = url;
    this.totalBytes = totalBytes;
    this.contentType = contentType;
    this.fetchOptions = fetchOptions;
  }

  async size(): Promise<number> {
    return this.totalBytes;
  }

  /** Blocks already fetched (the probe's first block) go straight into the cache. */
  seed(index: number, data: Buffer): void {
    this.remember(index, data);
  }

  async pump(
    start: number,
    end: number,
    write: ChunkWriter,
    signal: AbortSignal,
    options: PumpOptions = {},
  ): Promise<void> {
    const lastBlock = Math.floor(end / BLOCK_BYTES);
    const part = (index: number, data: Buffer) =>
      data.subarray(
        Math.max(start - index * BLOCK_BYTES, 0),
        Math.min(end + 1 - index * BLOCK_BYTES, data.length),
      );
    let block = Math.floor(start / BLOCK_BYTES);
    let runBlocks = Math.min(Math.max(options.firstRunBlocks ?? 1, 1), SEEKING_RUN_BLOCKS);
    let streamed = 0;
    while (block <= lastBlock) {
      signal.throwIfAborted();
      const cached = this.cache.get(block);
      if (cached) {
        this.remember(block, cached);
        await write(part(block, cached));
        block += 1;
        continue;
      }
      let count = 1;
      while (count < runBlocks && block + count <= lastBlock && !this.cache.has(block + count)) {
        count += 1;
      }
      options.fetched?.(
        Math.min((block + count) * BLOCK_BYTES, this.totalBytes) - block * BLOCK_BYTES,
      );
      for await (const [index, data] of this.fetchBlocks(block, count, signal)) {
        this.remember(index, data);
        await write(part(index, data));
      }
      block += count;
      streamed += count * BLOCK_BYTES;
      const cap = streamed >= STREAMING_AFTER_BYTES ? STREAMING_RUN_BLOCKS : SEEKING_RUN_BLOCKS;
      runBlocks = Math.min(runBlocks * 2, cap);
    }
  }

  async close(): Promise<void> {
    this.cache.clear();
  }

  private remember(index: number, data: Buffer): void {
    this.cache.delete(index);
    this.cache.set(index, data);
    if (this.cache.size > CACHED_BLOCKS) {
      this.cache.delete(this.cache.keys().next().value as number);
    }
  }

  private async *fetchBlocks(
    first: number,
    count: number,
    signal: AbortSignal,
  ): AsyncGenerator<[number, Buffer]> {
    const from = first * BLOCK_BYTES;
    const to = Math.min((first + count) * BLOCK_BYTES, this.totalBytes) - 1;
    const response = await safeFetch(this.url, {
      ...this.fetchOptions,
      headers: { ...this.fetchOptions.headers, range: `bytes=${from}-${to}` },
      signal: AbortSignal.any([
        signal,
        ...(this.fetchOptions.signal ? [this.fetchOptions.signal] : []),
      ]),
    });
    const startsAt = /^bytes (\d+)-/.exec(response.headers["content-range"] ?? "")?.[1];
    if (response.status !== 206 || Number(startsAt) !== from) {
      response.body.destroy();
      throw downloadFailed(`the source stopped honouring byte ranges (HTTP ${response.status})`);
    }
    let index = first;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    try {
      for await (const chunk of response.body) {
        let rest = chunk as Buffer;
        while (rest.length > 0) {
          const take = Math.min(rest.length, BLOCK_BYTES - pendingBytes);
          pending.push(rest.subarray(0, take));
          pendingBytes += take;
          rest = rest.subarray(take);
          if (pendingBytes === BLOCK_BYTES) {
            yield [index, Buffer.concat(pending)];
            index += 1;
            pending = [];
            pendingBytes = 0;
          }
        }
      }
    } finally {
      response.body.destroy();
    }
    const expectedEnd = Math.min((first + count) * BLOCK_BYTES, this.totalBytes);
    if (pendingBytes > 0) {
      if (index * BLOCK_BYTES + pendingBytes !== expectedEnd) {
        throw interruptedDownload("the source ended a byte range early");
      }
      yield [index, Buffer.concat(pending)];
    } else if (index * BLOCK_BYTES < expectedEnd) {
      throw interruptedDownload("the source ended a byte range early");
    }
  }
}
