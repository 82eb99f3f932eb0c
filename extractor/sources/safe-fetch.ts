// HTTP(S) requests to addresses strangers chose: every hop re-checked, at most five redirects,
// sockets pinned to checked addresses, deadlines on answering and on silence, a minimum rate
// once a body streams (minimum-rate.ts), and a byte budget shared by every request of one job.
// Used for video downloads and for webhook calls.

import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import http from "node:http";
import https from "node:https";
import type { Readable } from "node:stream";
import { Transform } from "node:stream";
import { asSourceError, downloadFailed, interruptedDownload } from "./errors.ts";
import type { MinimumRate, RateWatch } from "./minimum-rate.ts";
import { watchRate } from "./minimum-rate.ts";
import type { AddressPolicy } from "./policy.ts";
import { checkedLookup, checkHop, hopPolicy } from "./policy.ts";

export const MAX_REDIRECTS = 5;

/** Bytes one job may take from origins, over all its requests. */
export class ByteBudget {
  readonly limit: number;
  private used = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  take(bytes: number): void {
    this.used += bytes;
    if (this.used > this.limit) {
      throw downloadFailed(
        `the source sent more than the ${this.limit}-byte limit`,
        "The video is larger than Stills can download.",
      );
    }
  }

  get read(): number {
    return this.used;
  }
}

export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

export interface FetchOptions {
  policy: AddressPolicy;
  method?: "GET" | "HEAD" | "POST";
  headers?: Record<string, string>;
  body?: string | Buffer;
  maxRedirects?: number;
  /** From sending the request to the answer's headers, per hop. */
  answerTimeoutMs?: number;
  /** Longest silence on the socket, also while the body streams. */
  idleTimeoutMs?: number;
  /** The least a body must deliver while we read it, after a grace period. */
  minRate?: MinimumRate;
  signal?: AbortSignal;
  budget?: ByteBudget;
  /** Keep-alive agents built by createAgents(); by default every request gets a fresh socket. */
  agents?: Agents;
}

export interface FetchedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  url: URL;
  redirects: URL[];
  /** The body, counted against the budget. Destroy it when done early. */
  body: Readable;
}

/** Keep-alive agents whose new sockets connect only to checked addresses. */
export function createAgents(policy: AddressPolicy): Agents {
  const lookup = checkedLookup(policy);
  return {
    http: new http.Agent({ keepAlive: true, maxSockets: 8, lookup }),
    https: new https.Agent({ keepAlive: true, maxSockets: 8, lookup }),
  };
}

export async function safeFetch(
  input: string | URL,
  options: FetchOptions,
): Promise<FetchedResponse> {
  const maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
  const redirects: URL[] = [];
  let url = checkHop(input, hopPolicy(input, options.policy));
  let method = options.method ?? "GET";
  let body = options.body;
  let headers = { ...options.headers };
  for (;;) {
    const response = await requestOnce(url, method, headers, body, options);
    const location = response.headers.location;
    if (response.statusCode === undefined || !isRedirect(response.statusCode) || !location) {
      const watch = options.minRate ? watchRate(response, options.minRate, url.host) : undefined;
      return {
        status: response.statusCode ?? 0,
        headers: response.headers,
        url,
        redirects,
        body: counted(response, options.budget, watch),
      };
    }
    // Dropped, not drained: a hostile redirect could stream a body forever, outside the budget.
    response.destroy();
    if (redirects.length >= maxRedirects) {
      throw downloadFailed(`more than ${maxRedirects} redirects, the last to ${location}`);
    }
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw downloadFailed(`redirect to an invalid location: ${location}`);
    }
    next = checkHop(next, hopPolicy(next, options.policy));
    if (next.origin !== url.origin) headers = withoutCredentials(headers);
    // As browsers do: 303 always, and 301/302 after POST, continue as a body-less GET.
    if (
      response.statusCode === 303 ||
      (method === "POST" && response.statusCode !== 307 && response.statusCode !== 308)
    ) {
      method = "GET";
      body = undefined;
    }
    redirects.push(next);
    url = next;
  }
}

/** Whether readBody refused an answer over its limit (not a stall or a cut connection). */
export function isOverLimit(error: unknown): boolean {
  return error instanceof Error && /^answer larger than/.test(error.message);
}

/** Reads a whole (small) body, refusing more than maxBytes. */
export async function readBody(body: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) {
      body.destroy();
      throw downloadFailed(`answer larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!/^(authorization|cookie|proxy-authorization)$/i.test(name)) kept[name] = value;
  }
  return kept;
}

function requestOnce(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  options: FetchOptions,
): Promise<IncomingMessage> {
  const secure = url.protocol === "https:";
  const transport = secure ? https : http;
  const policy = hopPolicy(url, options.policy);
  // A hop the policy lets through as one of the service's samples gets a socket of its own:
  // an agent's sockets (and its lookup, which wins over the request's) keep the strict rules.
  const agents = policy === options.policy ? options.agents : undefined;
  const agent = agents ? (secure ? agents.https : agents.http) : false;
  return new Promise((resolve, reject) => {
    const request = transport.request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      method,
      headers: { "user-agent": "Stills/1.0 (+frame extraction)", ...headers },
      agent,
      lookup: checkedLookup(policy),
      signal: options.signal,
    });
    const fail = (error: unknown) => {
      clearTimeout(answerTimer);
      request.destroy();
      reject(asSourceError(error, `fetching ${url.origin}${url.pathname}`));
    };
    const answerTimer = setTimeout(
      () =>
        fail(
          interruptedDownload(
            `no answer from ${url.host} within ${options.answerTimeoutMs ?? 15_000} ms`,
          ),
        ),
      options.answerTimeoutMs ?? 15_000,
    );
    const idleMs = options.idleTimeoutMs ?? 30_000;
    request.setTimeout(idleMs);
    request.on("timeout", () => {
      request.destroy(interruptedDownload(`${url.host} went silent for ${idleMs} ms`));
    });
    request.on("error", fail);
    request.on("response", (response) => {
      clearTimeout(answerTimer);
      // Silence counts only while we read: a consumer holding the body paused (ffmpeg busy
      // decoding, an upload to the edge in flight) is not the origin going silent.
      response.on("pause", () => request.setTimeout(0));
      response.on("resume", () => request.setTimeout(idleMs));
      resolve(response);
    });
    request.end(body);
  });
}

/** The body with its errors turned into SourceErrors and its bytes counted against the budget. */
function counted(
  response: IncomingMessage,
  budget: ByteBudget | undefined,
  watch: RateWatch | undefined,
): Readable {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      try {
        watch?.received(chunk.length);
        budget?.take(chunk.length);
        callback(null, chunk);
      } catch (error) {
        callback(error as Error);
      }
    },
  });
  response.on("error", (error) => counter.destroy(asSourceError(error, "reading the source")));
  counter.on("close", () => response.destroy());
  return response.pipe(counter);
}
