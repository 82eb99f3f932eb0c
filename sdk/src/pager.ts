// Every page of a list the API pages with limit/skip/total (jobs, webhook deliveries), newest
// first: `for await (const item of pager)`, `pager.pages()`, `pager.toArray()`.
import type { Transport } from "./transport.ts";

/** One page as the API sends it (JobList, WebhookDeliveryList). */
export interface Page<T> {
  data: T[];
  total: number;
  limit: number;
  skip: number;
}

export class Pager<T> implements AsyncIterable<T> {
  readonly #transport: Transport;
  readonly #path: string;
  readonly #query: { limit?: number; skip?: number } & Record<string, string | number | undefined>;

  constructor(
    transport: Transport,
    path: string,
    query: { limit?: number; skip?: number } & Record<string, string | number | undefined>,
  ) {
    this.#transport = transport;
    this.#path = path;
    this.#query = query;
  }

  /** Each page as the API returns it, from `skip` (default 0) to the last. */
  async *pages(): AsyncGenerator<Page<T>> {
    let skip = this.#query.skip ?? 0;
    for (;;) {
      const page = await this.#transport.request<Page<T>>("GET", this.#path, {
        query: { ...this.#query, skip },
      });
      yield page;
      skip += page.data.length;
      if (page.data.length === 0 || skip >= page.total) return;
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item in one array (reads every page). */
  async toArray(): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}
