// The unauthenticated preview: six frames of any link, no key, no credits.
import { StillsTimeoutError } from "./errors.ts";
import { sleep } from "./runtime.ts";
import type { Transport } from "./transport.ts";
import { type DemoJob, type DemoRequest, isFinal } from "./types.ts";

export interface DemoWaitOptions {
  /** Default 5 minutes. */
  timeout?: number;
  onProgress?: (demo: DemoJob) => void;
  /** Default 1000 ms. */
  pollInterval?: number;
  signal?: AbortSignal;
}

export class Demo {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Starts a preview (with `animated`, a moving preview beside the six frames). Sent once: a
   * create without an idempotency key is never repeated on 5xx.
   */
  async create(
    body: DemoRequest | string,
    options: { wait?: boolean | DemoWaitOptions } = {},
  ): Promise<DemoJob> {
    const demo = await this.#transport.request<DemoJob>("POST", "/demo", {
      body: typeof body === "string" ? { url: body } : body,
    });
    if (!options.wait) return demo;
    return this.#settle(demo, options.wait === true ? {} : options.wait);
  }

  async get(id: string, options: { wait?: boolean | DemoWaitOptions } = {}): Promise<DemoJob> {
    const demo = await this.#read(id);
    if (!options.wait) return demo;
    return this.#settle(demo, options.wait === true ? {} : options.wait);
  }

  #read(id: string, signal?: AbortSignal): Promise<DemoJob> {
    return this.#transport.request<DemoJob>("GET", `/demo/${encodeURIComponent(id)}`, { signal });
  }

  async #settle(first: DemoJob, options: DemoWaitOptions): Promise<DemoJob> {
    const deadline = Date.now() + (options.timeout ?? 5 * 60_000);
    let demo = first;
    options.onProgress?.(demo);
    while (!isFinal(demo)) {
      if (Date.now() >= deadline) {
        throw new StillsTimeoutError(`demo ${demo.id} was still ${demo.status}`, demo);
      }
      await sleep(options.pollInterval ?? 1000, options.signal);
      demo = await this.#read(demo.id, options.signal);
      options.onProgress?.(demo);
    }
    return demo;
  }
}
