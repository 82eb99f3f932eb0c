// Jobs: create, read, list every page, wait for the end.
import { StillsTimeoutError } from "./errors.ts";
import { Pager } from "./pager.ts";
import { sleep } from "./runtime.ts";
import { newIdempotencyKey, type Transport } from "./transport.ts";
import { type CreateJobRequest, isFinal, type Job, type ListJobsQuery } from "./types.ts";

export interface WaitOptions {
  /** Give up (StillsTimeoutError) after this many ms. Default 10 minutes. */
  timeout?: number;
  /**
   * Called with the job each time it is read while waiting, and once more when it ends. The job
   * is passed as the API returned it, with whatever progress fields it carries.
   */
  onProgress?: (job: Job) => void;
  /** Pause between reads when onProgress is given. Default 1000 ms. */
  pollInterval?: number;
  signal?: AbortSignal;
}

export interface CreateOptions {
  /** true, or wait options: return the job once it has ended (completed, failed or expired). */
  wait?: boolean | WaitOptions;
  /** Sent as Idempotency-Key; the SDK makes one when not given, so a retried create is safe. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface GetOptions {
  wait?: boolean | WaitOptions;
  signal?: AbortSignal;
}

const DEFAULT_WAIT_MS = 10 * 60_000;

export class Jobs {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** Creates a job; with `wait`, returns it once it has ended. */
  async create(body: CreateJobRequest, options: CreateOptions = {}): Promise<Job> {
    const idempotencyKey = options.idempotencyKey ?? (await newIdempotencyKey());
    const wait = waitOptions(options.wait, options.signal);
    const job = await this.#transport.request<Job>("POST", "/jobs", {
      body,
      // The server's own wait (up to 50 s) saves polling; with onProgress the SDK polls instead.
      query: { wait: wait && !wait.onProgress ? true : undefined },
      headers: { "idempotency-key": idempotencyKey },
      idempotent: true,
      signal: options.signal,
    });
    return wait ? this.#settle(job, wait) : job;
  }

  /** Reads a job; with `wait`, returns it once it has ended. */
  async get(id: string, options: GetOptions = {}): Promise<Job> {
    const wait = waitOptions(options.wait, options.signal);
    if (wait) return this.waitFor(id, wait);
    return this.#read(id, false, options.signal);
  }

  /**
   * Returns the job once it has ended (completed, failed or expired): a failed job is returned,
   * not thrown. Throws StillsTimeoutError when `timeout` passes first.
   */
  async waitFor(id: string, options: WaitOptions = {}): Promise<Job> {
    const job = await this.#read(id, !options.onProgress, options.signal);
    return this.#settle(job, options);
  }

  /**
   * Every job, newest first, across every page: `for await (const job of stills.jobs.list())`.
   * `.pages()` gives the pages themselves.
   */
  list(query: Partial<ListJobsQuery> = {}): JobPager {
    const { limit, skip, status } = query;
    return new Pager<Job>(this.#transport, "/jobs", { limit, skip, status });
  }

  #read(id: string, wait: boolean, signal?: AbortSignal): Promise<Job> {
    return this.#transport.request<Job>("GET", `/jobs/${encodeURIComponent(id)}`, {
      query: { wait: wait ? true : undefined },
      signal,
    });
  }

  async #settle(first: Job, options: WaitOptions): Promise<Job> {
    const deadline = Date.now() + (options.timeout ?? DEFAULT_WAIT_MS);
    let job = first;
    options.onProgress?.(job);
    while (!isFinal(job)) {
      if (Date.now() >= deadline) {
        throw new StillsTimeoutError(`job ${job.id} was still ${job.status} after waiting`, job);
      }
      if (options.onProgress) {
        const pause = Math.min(options.pollInterval ?? 1000, Math.max(0, deadline - Date.now()));
        await sleep(pause, options.signal);
        job = await this.#read(job.id, false, options.signal);
        options.onProgress(job);
      } else {
        // The server holds the read up to 50 s, answering as soon as the job ends.
        job = await this.#read(job.id, true, options.signal);
      }
    }
    return job;
  }
}

function waitOptions(wait: boolean | WaitOptions | undefined, signal?: AbortSignal) {
  if (!wait) return undefined;
  return wait === true ? { signal } : { signal, ...wait };
}

/** Every job of a list, across its pages (sdk/src/pager.ts). */
export type JobPager = Pager<Job>;
