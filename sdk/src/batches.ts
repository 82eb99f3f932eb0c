// Batches: many links, one job each, with the same options (guide: /docs/batches).

import type { components } from "./openapi.ts";
import { Pager } from "./pager.ts";
import { newIdempotencyKey, type Transport } from "./transport.ts";

type Schemas = components["schemas"];
export type Batch = Schemas["Batch"];
export type BatchSummary = Schemas["BatchSummary"];
export type BatchItem = Schemas["BatchItem"];
export type CreateBatchRequest = Schemas["CreateBatchRequest"];

export interface CreateBatchOptions {
  /** Sent as Idempotency-Key; the SDK makes one when not given, so a retried create is safe. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export class Batches {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** Creates a batch: one job per link of `urls`, each with the request's other options. */
  async create(body: CreateBatchRequest, options: CreateBatchOptions = {}): Promise<Batch> {
    const idempotencyKey = options.idempotencyKey ?? (await newIdempotencyKey());
    return this.#transport.request<Batch>("POST", "/batches", {
      body,
      headers: { "idempotency-key": idempotencyKey },
      idempotent: true,
      signal: options.signal,
    });
  }

  /** Reads a batch with a page of its items (`limit` 1–100, default 100; `skip`). */
  get(
    id: string,
    options: { limit?: number; skip?: number; signal?: AbortSignal } = {},
  ): Promise<Batch> {
    return this.#transport.request<Batch>("GET", `/batches/${encodeURIComponent(id)}`, {
      query: { limit: options.limit, skip: options.skip },
      signal: options.signal,
    });
  }

  /** Every batch, newest first, across every page (rows carry counts, not items). */
  list(query: { limit?: number; skip?: number } = {}): Pager<BatchSummary> {
    return new Pager<BatchSummary>(this.#transport, "/batches", {
      limit: query.limit,
      skip: query.skip,
    });
  }
}
