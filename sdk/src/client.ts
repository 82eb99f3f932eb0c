// The client: `new Stills({ apiKey, baseUrl })`, with the environment's defaults.
import { Batches } from "./batches.ts";
import { Demo } from "./demo.ts";
import { Frames } from "./frames.ts";
import { Jobs } from "./jobs.ts";
import { envVar } from "./runtime.ts";
import { DEFAULT_RETRY, type RetryPolicy, Transport } from "./transport.ts";
import type { Pricing, Usage } from "./types.ts";
import { Webhooks } from "./webhooks.ts";

export const PRODUCTION_BASE_URL = "https://api.stills.dev/v1";

export interface StillsOptions {
  /** Default: the STILLS_API_KEY environment variable. */
  apiKey?: string;
  /** The API's base URL, ending in /v1. Default: STILLS_BASE_URL, then production. */
  baseUrl?: string;
  /** Retries of 429, 5xx and network failures; `false` or `{ maxRetries: 0 }` turns them off. */
  retry?: Partial<RetryPolicy> | false;
  /** Time limit per attempt, in ms. Default 75 s (a waiting read is held up to 50 s). */
  timeout?: number;
  /** Another fetch (a proxy's, a test's). Default: the global fetch. */
  fetch?: typeof fetch;
  /** Headers added to every API request. */
  headers?: Record<string, string>;
}

export class Stills {
  readonly jobs: Jobs;
  readonly batches: Batches;
  readonly demo: Demo;
  readonly frames: Frames;
  readonly webhooks: Webhooks;
  readonly baseUrl: string;
  readonly #transport: Transport;

  constructor(options: StillsOptions = {}) {
    this.baseUrl = (options.baseUrl ?? envVar("STILLS_BASE_URL") ?? PRODUCTION_BASE_URL).replace(
      /\/+$/,
      "",
    );
    const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#transport = new Transport({
      apiKey: options.apiKey ?? envVar("STILLS_API_KEY"),
      baseUrl: this.baseUrl,
      fetch: fetchImpl,
      retry:
        options.retry === false
          ? { ...DEFAULT_RETRY, maxRetries: 0 }
          : { ...DEFAULT_RETRY, ...options.retry },
      timeoutMs: options.timeout ?? 75_000,
      headers: options.headers ?? {},
    });
    this.jobs = new Jobs(this.#transport);
    this.batches = new Batches(this.#transport);
    this.demo = new Demo(this.#transport);
    this.frames = new Frames(fetchImpl);
    this.webhooks = new Webhooks(this.#transport);
  }

  /** Plan, credits, limits and this period's usage. */
  usage(options: { signal?: AbortSignal } = {}): Promise<Usage> {
    return this.#transport.request<Usage>("GET", "/usage", options);
  }

  /** Plans and credit pricing (no key needed). */
  pricing(options: { signal?: AbortSignal } = {}): Promise<Pricing> {
    return this.#transport.request<Pricing>("GET", "/pricing", options);
  }
}
