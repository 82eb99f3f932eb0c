// Frames and the ZIP go to the edge's /internal endpoints, which store them in R2:
//   PUT  {base}/internal/files/{key}                          body = image      → {key, bytes}
//   POST {base}/internal/file-batches/{kind}/{job_id}/{attempt_id}
//             body = schema/file-batch.ts: a manifest line {files:[{name,bytes}]}, then the bytes
//                                                                          → {files: [{key, bytes}]}
//   POST {base}/internal/uploads/{key}                                          → {upload_id}
//   PUT  {base}/internal/uploads/{key}?upload_id=U&part=N      body = part       → {part, etag}
//   POST {base}/internal/uploads/{key}/complete?upload_id=U    {parts:[...]}     → {key, bytes}
//   POST {base}/internal/jobs/{kind}/{job_id}/lease            {attempt_id}      → 200 | 409
//   POST {base}/internal/results                               ExtractResult     → 202
// Every call carries the attempt's bearer token (valid for this job and attempt only) and is
// retried on network errors and 5xx.
import { encodeFileBatch, FILE_BATCH_TYPE } from "../../schema/file-batch.ts";
import {
  type ExtractResult,
  type LeaseRenewal,
  type SourceAnswer,
  SourceAnswerSchema,
  type SourceReport,
} from "../../schema/messages.ts";
import { log } from "../log.ts";
import type { ArchiveUpload, FrameSink, StoredObject } from "./frame-sink.ts";

/** R2 wants every part but the last to be at least 5 MiB. */
export const ARCHIVE_PART_BYTES = 8 * 1024 * 1024;

export interface EdgeClientOptions {
  baseUrl: string;
  token: string;
  fetch?: typeof fetch;
  /** Attempts per call (first try included). */
  attempts?: number;
  /** First retry delay; doubles each time. */
  retryDelayMs?: number;
  requestTimeoutMs?: number;
  /** Ends every call and retry at once (the job's deadline). */
  signal?: AbortSignal;
}

export class EdgeCallError extends Error {
  readonly status: number | null;

  constructor(message: string, status: number | null) {
    super(message);
    this.name = "EdgeCallError";
    this.status = status;
  }
}

export class EdgeClient {
  private readonly options: Required<Omit<EdgeClientOptions, "fetch" | "signal">> & {
    fetch: typeof fetch;
    signal: AbortSignal | undefined;
  };

  constructor(options: EdgeClientOptions) {
    this.options = {
      attempts: 4,
      retryDelayMs: 250,
      requestTimeoutMs: 60_000,
      ...options,
      fetch: options.fetch ?? globalThis.fetch,
      signal: options.signal,
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
    };
  }

  /** Calls the edge, retrying network errors, 5xx and 429; returns the parsed JSON body. */
  async call(
    method: string,
    path: string,
    body?: Uint8Array | string | FormData,
    contentType?: string,
    override: { attempts?: number } = {},
  ) {
    const { retryDelayMs, requestTimeoutMs, token, baseUrl, signal } = this.options;
    const attempts = override.attempts ?? this.options.attempts;
    let lastError: EdgeCallError = new EdgeCallError("no attempt made", null);
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) await sleep(retryDelayMs * 2 ** (attempt - 2));
      if (signal?.aborted) throw new EdgeCallError(`${method} ${path}: ${signal.reason}`, null);
      let response: Response;
      const sentAt = performance.now();
      try {
        response = await this.options.fetch(`${baseUrl}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(contentType ? { "content-type": contentType } : {}),
          },
          body,
          signal: signal
            ? AbortSignal.any([signal, AbortSignal.timeout(requestTimeoutMs)])
            : AbortSignal.timeout(requestTimeoutMs),
        });
      } catch (error) {
        lastError = new EdgeCallError(`${method} ${path}: ${(error as Error).message}`, null);
        continue;
      }
      const text = await response.text().catch(() => "");
      // At EXTRACTOR_LOG=debug: what the extractor asks of the edge, and how long it waits.
      log("debug", "edge.call", {
        route: `${method} ${routeOf(path)}`,
        status: response.status,
        ms: Math.round(performance.now() - sentAt),
      });
      if (response.ok) return text ? (JSON.parse(text) as unknown) : null;
      lastError = new EdgeCallError(
        `${method} ${path} answered ${response.status}: ${text.slice(0, 200)}`,
        response.status,
      );
      if (response.status < 500 && response.status !== 429) break;
    }
    throw lastError;
  }

  async postResult(result: ExtractResult): Promise<void> {
    await this.call("POST", "/internal/results", JSON.stringify(result), "application/json");
  }

  /**
   * Tells the edge what the opened source is, before decoding (decision 0350); the answer names
   * the account's earlier job whose frames settled this one, or null to extract as usual.
   */
  async reportSource(jobId: string, report: SourceReport): Promise<SourceAnswer> {
    const path = `/internal/jobs/job/${encodeURIComponent(jobId)}/source`;
    const answer = await this.call("POST", path, JSON.stringify(report), "application/json", {
      attempts: 2,
    });
    return SourceAnswerSchema.parse(answer);
  }
}

/** A call's path without its ids and keys, to count calls by route. */
function routeOf(path: string): string {
  return path
    .replace(/^\/internal\/(files|uploads)\/.*/, "/internal/$1/{key}")
    .replace(/\/[0-9a-f]{8}-[0-9a-f-]{27}(?=\/|$)/g, "/{id}");
}

export interface LeaseLoop {
  /** Renews once now, telling the edge `fields` too (LeaseRenewalSchema); same answers. */
  renewNow(fields: Omit<LeaseRenewal, "attempt_id">): void;
  /**
   * Starts no more renewals; settles once those already sent are answered or fail, or after
   * `stopWaitMs` at most (a hung edge must not hold the job's slot), so a job that awaits it
   * before it reports its end and frees its slot normally has no renewal still on its way.
   */
  stop(): Promise<void>;
}

/**
 * Renews the attempt's lease every `everyMs` until stopped. The edge answering 409 (another
 * attempt took the job, or it settled) or 401 (the token no longer fits) means this attempt
 * must stop: `onLost` is called once and the loop ends. Other failures are left to the next
 * renewal; if they last, the lease runs out and the edge starts another attempt.
 */
export function renewLeaseLoop(
  client: EdgeClient,
  attempt: {
    kind: string;
    jobId: string;
    attemptId: string;
    everyMs: number;
    onLost: (why: string) => void;
    /** How long stop() waits for renewals on their way (default 5 s). */
    stopWaitMs?: number;
  },
): LeaseLoop {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const inFlight = new Set<Promise<void>>();
  const path = `/internal/jobs/${attempt.kind}/${encodeURIComponent(attempt.jobId)}/lease`;
  /** One renewal, tracked while it is on its way (stop waits for it). */
  const call = (fields: Omit<LeaseRenewal, "attempt_id"> = {}) => {
    const sent = renewal(fields).finally(() => inFlight.delete(sent));
    inFlight.add(sent);
    return sent;
  };
  /** A 409 or 401 ends the loop and reports the attempt lost. */
  const renewal = async (fields: Omit<LeaseRenewal, "attempt_id">) => {
    const body = JSON.stringify({ attempt_id: attempt.attemptId, ...fields });
    try {
      await client.call("POST", path, body, "application/json", { attempts: 1 });
    } catch (error) {
      const status = error instanceof EdgeCallError ? error.status : null;
      if (!stopped && (status === 409 || status === 401)) {
        stopped = true;
        clearTimeout(timer);
        attempt.onLost(`lease renewal answered ${status}`);
      }
    }
  };
  const renew = async () => {
    await call();
    if (!stopped) timer = setTimeout(renew, attempt.everyMs);
  };
  timer = setTimeout(renew, attempt.everyMs);
  return {
    renewNow(fields) {
      if (!stopped) void call(fields);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      if (inFlight.size === 0) return;
      let bound: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled(inFlight),
        new Promise((resolve) => {
          bound = setTimeout(resolve, attempt.stopWaitMs ?? 5_000);
        }),
      ]);
      clearTimeout(bound);
    },
  };
}

/**
 * A call's files at most: 32 (16 frames and their thumbnails, decision 0240), or 8 MiB of them
 * (the edge reads a batch whole, and takes up to 64 files).
 */
export const BATCH_FILES = 32;
export const BATCH_BYTES = 8 * 1024 * 1024;
/** Queued files' bytes at most: a writer running further ahead waits in queueFile. */
const QUEUED_BYTES = 3 * BATCH_BYTES;

interface QueuedFile {
  fileName: string;
  bytes: Uint8Array;
  contentType: string;
  done: (stored: StoredObject) => void;
  failed: (error: unknown) => void;
}

/**
 * Keys are {kind}/{job_id}/{attempt_id}/{file}: an attempt never overwrites another's files.
 *
 * Frames are queued (queueFile) and go to the edge a batch at a time, in order, one call at a
 * time: a call once 32 files or 8 MiB wait, and the rest at flush(), when the job has its
 * frames. Each call costs more than its bytes: one check of the attempt (its token and a D1
 * read), a request through the Worker and, from a container, a round trip. A 12-frame job made
 * 12 calls and makes one (measured on the local stack: its 12 uploads cost ~0.2 CPU-s of the
 * two cores a ~1 s job has, most of it per call, not per byte).
 */
export class EdgeSink implements FrameSink {
  readonly keepsThumbnails = true;
  private readonly client: EdgeClient;
  private readonly prefix: string;

  private readonly partBytes: number;
  private readonly queue: QueuedFile[] = [];
  private queuedBytes = 0;
  /** The call out now, if any (calls go one at a time, so files land in queue order). */
  private sending: Promise<void> | null = null;
  private flushing = false;
  /** The first failed call: every file queued after it fails with it (the job ends). */
  private failure: unknown = null;
  private readonly waitingForRoom: (() => void)[] = [];

  constructor(
    client: EdgeClient,
    job: { kind: string; jobId: string; attemptId: string },
    partBytes = ARCHIVE_PART_BYTES,
  ) {
    this.client = client;
    this.prefix = `${job.kind}/${job.jobId}/${job.attemptId}`;
    this.partBytes = partBytes;
  }

  async putFrame(fileName: string, bytes: Uint8Array, contentType: string) {
    const key = `${this.prefix}/${fileName}`;
    const answer = (await this.client.call(
      "PUT",
      `/internal/files/${key}`,
      bytes,
      contentType,
    )) as Partial<StoredObject> | null;
    return { key: answer?.key ?? key, bytes: answer?.bytes ?? bytes.length };
  }

  async queueFile(
    fileName: string,
    bytes: Uint8Array,
    contentType: string,
  ): Promise<{ stored: Promise<StoredObject> }> {
    while (
      this.failure === null &&
      this.queuedBytes > 0 &&
      this.queuedBytes + bytes.length > QUEUED_BYTES
    ) {
      await new Promise<void>((resolve) => this.waitingForRoom.push(resolve));
    }
    if (this.failure !== null) throw this.failure;
    const stored = new Promise<StoredObject>((done, failed) => {
      this.queue.push({ fileName, bytes, contentType, done, failed });
    });
    // Its holder hears of a failure; until it asks, the failure is not unhandled.
    stored.catch(() => {});
    this.queuedBytes += bytes.length;
    this.sendNext();
    return { stored };
  }

  async flush(): Promise<void> {
    this.flushing = true;
    try {
      this.sendNext();
      while (this.sending) await this.sending;
      if (this.failure !== null) throw this.failure;
    } finally {
      this.flushing = false;
    }
  }

  /** Sends the next batch, unless a call is out or no batch is due (full, or flushing). */
  private sendNext(): void {
    if (this.sending || this.queue.length === 0) return;
    const waiting = this.queue.reduce((sum, file) => sum + file.bytes.length, 0);
    if (!this.flushing && this.queue.length < BATCH_FILES && waiting < BATCH_BYTES) return;
    const batch: QueuedFile[] = [];
    let bytes = 0;
    while (
      this.queue.length > 0 &&
      batch.length < BATCH_FILES &&
      (batch.length === 0 || bytes + this.queue[0].bytes.length <= BATCH_BYTES)
    ) {
      const next = this.queue.shift() as QueuedFile;
      batch.push(next);
      bytes += next.bytes.length;
    }
    this.sending = this.upload(batch)
      .then(
        (stored) => {
          for (const [i, file] of batch.entries()) file.done(stored[i]);
        },
        (error) => {
          this.failure ??= error;
          for (const file of [...batch, ...this.queue.splice(0)]) file.failed(error);
        },
      )
      .finally(() => {
        this.queuedBytes = this.queue.reduce((sum, file) => sum + file.bytes.length, 0);
        this.sending = null;
        for (const wake of this.waitingForRoom.splice(0)) wake();
        this.sendNext();
      });
  }

  /** One file as it always went (PUT, streamed); several as one framed call. */
  private async upload(batch: QueuedFile[]): Promise<StoredObject[]> {
    if (batch.length === 1) {
      const [file] = batch;
      return [await this.putFrame(file.fileName, file.bytes, file.contentType)];
    }
    // Framed, not multipart (decision 0278): one buffer, read by the edge without parsing.
    const body = encodeFileBatch(batch.map((file) => ({ name: file.fileName, bytes: file.bytes })));
    const answer = (await this.client.call(
      "POST",
      `/internal/file-batches/${this.prefix}`,
      body,
      FILE_BATCH_TYPE,
    )) as { files?: Partial<StoredObject>[] } | null;
    const files = answer?.files;
    if (!Array.isArray(files) || files.length !== batch.length) {
      throw new EdgeCallError(
        `the edge did not answer for the batch's ${batch.length} files`,
        null,
      );
    }
    return batch.map((file, i) => ({
      key: files[i]?.key ?? `${this.prefix}/${file.fileName}`,
      bytes: files[i]?.bytes ?? file.bytes.length,
    }));
  }

  async openArchive(fileName: string): Promise<ArchiveUpload> {
    const key = `${this.prefix}/${fileName}`;
    const started = (await this.client.call("POST", `/internal/uploads/${key}`)) as {
      upload_id?: string;
    } | null;
    const uploadId = started?.upload_id;
    if (!uploadId) throw new EdgeCallError(`no upload_id for ${key}`, null);
    return new MultipartArchive(this.client, key, uploadId, this.partBytes);
  }
}

/** Collects the ZIP's bytes into 8 MiB parts: memory stays at one part whatever the size. */
class MultipartArchive implements ArchiveUpload {
  private readonly client: EdgeClient;
  private readonly key: string;
  private readonly uploadId: string;
  private readonly parts: { part: number; etag: string }[] = [];
  private readonly partBytes: number;
  private buffer: Buffer;
  private buffered = 0;
  private total = 0;

  constructor(client: EdgeClient, key: string, uploadId: string, partBytes: number) {
    this.client = client;
    this.key = key;
    this.uploadId = uploadId;
    this.partBytes = partBytes;
    this.buffer = Buffer.allocUnsafe(partBytes);
  }

  async write(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(this.partBytes - this.buffered, chunk.length - offset);
      this.buffer.set(chunk.subarray(offset, offset + take), this.buffered);
      this.buffered += take;
      offset += take;
      if (this.buffered === this.partBytes) await this.flushPart();
    }
    this.total += chunk.length;
  }

  async finish(): Promise<StoredObject> {
    if (this.buffered > 0 || this.parts.length === 0) await this.flushPart();
    const query = `upload_id=${encodeURIComponent(this.uploadId)}`;
    const answer = (await this.client.call(
      "POST",
      `/internal/uploads/${this.key}/complete?${query}`,
      JSON.stringify({ parts: this.parts }),
      "application/json",
    )) as Partial<StoredObject> | null;
    return { key: answer?.key ?? this.key, bytes: answer?.bytes ?? this.total };
  }

  async abort(): Promise<void> {
    // The contract has no abort call; R2 drops unfinished multipart uploads on its own.
    this.buffered = 0;
  }

  private async flushPart(): Promise<void> {
    const part = this.parts.length + 1;
    const body = this.buffer.subarray(0, this.buffered);
    const query = `upload_id=${encodeURIComponent(this.uploadId)}&part=${part}`;
    const answer = (await this.client.call(
      "PUT",
      `/internal/uploads/${this.key}?${query}`,
      body,
      "application/octet-stream",
    )) as { etag?: string } | null;
    if (!answer?.etag) throw new EdgeCallError(`no etag for part ${part} of ${this.key}`, null);
    this.parts.push({ part, etag: answer.etag });
    // The old part buffer may still be referenced by the request; start a fresh one.
    this.buffer = Buffer.allocUnsafe(this.partBytes);
    this.buffered = 0;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
