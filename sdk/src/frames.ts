// Saving a job's files to disk (Node, Deno and Bun: anything with node:fs). Each frame streams
// to a temporary name and is renamed when whole, so a file under its final name is complete.
import { StillsConnectionError, StillsError } from "./errors.ts";
import { sleep } from "./runtime.ts";
import type { Frame, Job } from "./types.ts";

export interface DownloadOptions {
  /** Files fetched at once. Default 4. */
  concurrency?: number;
  /** Called as each file is written. */
  onFile?: (file: DownloadedFile, done: number, total: number) => void;
  /** Attempts per file on a network failure or 5xx. Default 3. */
  attempts?: number;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

export interface DownloadedFile {
  /** The frame's index, or null for the ZIP and the moving preview. */
  index: number | null;
  timestamp: number | null;
  path: string;
  bytes: number;
}

type JobFiles = Pick<Job, "id" | "frames" | "zip_url" | "options">;

/** `frame-0001.jpg`: the index, zero-padded so names sort in order, and the format's extension. */
export function frameFileName(frame: Pick<Frame, "index">, job: Pick<Job, "frames" | "options">) {
  const width = Math.max(4, String(job.frames.length).length);
  const format = typeof job.options?.format === "string" ? job.options.format : "jpg";
  return `frame-${String(frame.index).padStart(width, "0")}.${format}`;
}

export class Frames {
  readonly #fetch: typeof fetch;

  constructor(fetchImpl: typeof fetch) {
    this.#fetch = fetchImpl;
  }

  /**
   * Writes every frame that has a URL into `dir` (created if needed) as `frame-0001.jpg`, …,
   * in index order of completion, at most `concurrency` at once. Returns the files in index order.
   */
  async download(
    job: JobFiles,
    dir: string,
    options: DownloadOptions = {},
  ): Promise<DownloadedFile[]> {
    const frames = job.frames.filter((frame) => frame.status === "ok" && frame.url);
    const { mkdir } = await nodeFs();
    await mkdir(dir, { recursive: true });
    const files: DownloadedFile[] = new Array(frames.length);
    let next = 0;
    let done = 0;
    const worker = async () => {
      while (next < frames.length) {
        const position = next++;
        const frame = frames[position];
        const path = await joinPath(dir, frameFileName(frame, job));
        const bytes = await this.#save(frame.url as string, path, options);
        files[position] = { index: frame.index, timestamp: frame.timestamp, path, bytes };
        options.onFile?.(files[position], ++done, frames.length);
      }
    };
    const lanes = Math.max(1, Math.min(options.concurrency ?? 4, frames.length));
    await Promise.all(Array.from({ length: lanes }, worker));
    return files;
  }

  /** Writes the job's ZIP into `dir` as `<job id>.zip`; null when the job has none. */
  async downloadZip(job: JobFiles, dir: string, options: DownloadOptions = {}) {
    if (!job.zip_url) return null;
    const { mkdir } = await nodeFs();
    await mkdir(dir, { recursive: true });
    const path = await joinPath(dir, `${job.id}.zip`);
    const bytes = await this.#save(job.zip_url, path, options);
    const file: DownloadedFile = { index: null, timestamp: null, path, bytes };
    options.onFile?.(file, 1, 1);
    return file;
  }

  /**
   * Writes the job's moving preview (`animated`) into `dir` as `preview.webp` or `preview.gif`;
   * null when the job has none.
   */
  async downloadPreview(
    job: Pick<Job, "animated">,
    dir: string,
    options: DownloadOptions = {},
  ): Promise<DownloadedFile | null> {
    const preview = job.animated;
    if (!preview?.url) return null;
    const { mkdir } = await nodeFs();
    await mkdir(dir, { recursive: true });
    const path = await joinPath(dir, `preview.${preview.format}`);
    const bytes = await this.#save(preview.url, path, options);
    const file: DownloadedFile = { index: null, timestamp: null, path, bytes };
    options.onFile?.(file, 1, 1);
    return file;
  }

  async #save(url: string, path: string, options: DownloadOptions): Promise<number> {
    const attempts = options.attempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#saveOnce(url, path, options);
      } catch (error) {
        const retryable =
          !(error instanceof StillsError) || error.status >= 500 || error.status === 429;
        if (options.signal?.aborted || !retryable || attempt >= attempts) throw error;
        await sleep(500 * 2 ** (attempt - 1), options.signal);
      }
    }
  }

  async #saveOnce(url: string, path: string, options: DownloadOptions): Promise<number> {
    // Signed URLs carry their own authority: the API key is never sent with them.
    let response: Response;
    try {
      response = await (options.fetch ?? this.#fetch)(url, { signal: options.signal });
    } catch (error) {
      throw new StillsConnectionError(`GET ${url} got no answer`, { cause: error });
    }
    if (!response.ok || !response.body) throw await StillsError.fromResponse(response);
    const fs = await nodeFs();
    const { Readable } = (await import(
      /* @vite-ignore */ nodeModule("stream")
    )) as typeof import("node:stream");
    const { pipeline } = (await import(
      /* @vite-ignore */ nodeModule("stream/promises")
    )) as typeof import("node:stream/promises");
    const partial = `${path}.part`;
    let bytes = 0;
    const counted = Readable.fromWeb(response.body as never);
    counted.on("data", (chunk: Uint8Array) => {
      bytes += chunk.length;
    });
    try {
      await pipeline(counted, fs.createWriteStream(partial));
      await fs.rename(partial, path);
    } catch (error) {
      await fs.rm(partial, { force: true });
      throw error;
    }
    return bytes;
  }
}

function nodeModule(name: string): string {
  return `node:${name}`;
}

async function nodeFs() {
  try {
    const promises = (await import(
      /* @vite-ignore */ nodeModule("fs/promises")
    )) as typeof import("node:fs/promises");
    const fs = (await import(/* @vite-ignore */ nodeModule("fs"))) as typeof import("node:fs");
    return { ...promises, createWriteStream: fs.createWriteStream };
  } catch (error) {
    throw new Error("frames.download needs a file system (Node, Deno or Bun)", { cause: error });
  }
}

async function joinPath(dir: string, name: string): Promise<string> {
  const { join } = (await import(
    /* @vite-ignore */ nodeModule("path")
  )) as typeof import("node:path");
  return join(dir, name);
}
