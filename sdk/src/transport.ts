// Every request the SDK makes goes through here: the key, the base URL, and retries.
// - 429: any request is sent again after Retry-After (the API refused it before doing anything).
// - 5xx and network failures: sent again, with growing delays, only when sending twice cannot
//   do twice: reads, and a create that carries an Idempotency-Key (the SDK adds one).
import { StillsConnectionError, StillsError } from "./errors.ts";
import { randomId, sleep } from "./runtime.ts";
import { VERSION } from "./version.ts";

export interface RetryPolicy {
  /** Further attempts after the first; 0 turns retries off. Default 3. */
  maxRetries: number;
  /** First back-off delay for 5xx and network failures, doubled each time. Default 500 ms. */
  initialDelayMs: number;
  /** Longest back-off delay. Default 8 s. */
  maxDelayMs: number;
  /** A 429 asking to wait longer than this is not waited for (it is thrown). Default 60 s. */
  maxRetryAfterSeconds: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 3,
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterSeconds: 60,
};

export interface TransportOptions {
  apiKey: string | undefined;
  baseUrl: string;
  fetch: typeof fetch;
  retry: RetryPolicy;
  /** Per-attempt time limit in ms. */
  timeoutMs: number;
  headers: Record<string, string>;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Safe to send twice after a 5xx or a lost answer. Default: true for GET. */
  idempotent?: boolean;
  signal?: AbortSignal;
}

export class Transport {
  readonly options: TransportOptions;

  constructor(options: TransportOptions) {
    this.options = options;
  }

  url(path: string, query: RequestOptions["query"] = {}): string {
    const url = new URL(`${this.options.baseUrl.replace(/\/+$/, "")}${path}`);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const { retry } = this.options;
    const idempotent = options.idempotent ?? method === "GET";
    const headers: Record<string, string> = {
      accept: "application/json",
      "user-agent": `stills-sdk-js/${VERSION}`,
      ...this.options.headers,
      ...options.headers,
    };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const url = this.url(path, options.query);
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);

    for (let attempt = 0; ; attempt++) {
      const retriesLeft = attempt < retry.maxRetries;
      const backoff = Math.min(retry.maxDelayMs, retry.initialDelayMs * 2 ** attempt);
      let response: Response;
      try {
        response = await this.send(url, { method, headers, body }, options.signal);
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (idempotent && retriesLeft) {
          await sleep(jitter(backoff), options.signal);
          continue;
        }
        throw new StillsConnectionError(`${method} ${url} got no answer: ${describe(error)}`, {
          cause: error,
        });
      }
      if (response.ok) {
        const text = await response.text();
        return (text ? JSON.parse(text) : undefined) as T;
      }
      const error = await StillsError.fromResponse(response);
      if (retriesLeft && response.status === 429) {
        const wait = error.retryAfter ?? backoff / 1000;
        if (wait <= retry.maxRetryAfterSeconds) {
          await sleep(wait * 1000, options.signal);
          continue;
        }
      }
      if (retriesLeft && idempotent && response.status >= 500) {
        await sleep(jitter(backoff), options.signal);
        continue;
      }
      throw error;
    }
  }

  private async send(url: string, init: RequestInit, signal?: AbortSignal): Promise<Response> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signals = signal ? [signal, timeout] : [timeout];
    return this.options.fetch(url, { ...init, signal: anySignal(signals) });
  }
}

/** A fresh Idempotency-Key for a create the SDK may send again. */
export function newIdempotencyKey(): Promise<string> {
  return randomId();
}

/** 75–100 % of the delay, so many clients that failed together do not retry together. */
function jitter(ms: number): number {
  return ms * (0.75 + Math.random() * 0.25);
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}

/** AbortSignal.any where the runtime has it (Node 20+); a hand-made one on Node 18. */
function anySignal(signals: AbortSignal[]): AbortSignal {
  if (signals.length === 1) return signals[0];
  const any = (AbortSignal as { any?: (s: AbortSignal[]) => AbortSignal }).any;
  if (any) return any.call(AbortSignal, signals);
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal.aborted) controller.abort(signal.reason);
    else signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
  }
  return controller.signal;
}
