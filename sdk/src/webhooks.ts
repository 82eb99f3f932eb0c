// Standard Webhooks verification (https://www.standardwebhooks.com/): the signature is
// `v1,` + base64 HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${body}`, keyed with the
// base64 bytes after `whsec_`. Web Crypto only, so it runs wherever the SDK does.
import { StillsWebhookError } from "./errors.ts";
import { Pager } from "./pager.ts";
import { webCrypto } from "./runtime.ts";
import type { Transport } from "./transport.ts";
import type { WebhookDelivery, WebhookEvent } from "./types.ts";

export type WebhookHeaders =
  | Headers
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null };

export interface VerifyOptions {
  /** Largest gap, in seconds, between the delivery's timestamp and now. Default 300. */
  toleranceSeconds?: number;
  /** Now, in Unix seconds (for tests). */
  now?: number;
}

const encoder = new TextEncoder();

export class Webhooks {
  readonly #transport: Transport | null;

  constructor(transport: Transport | null = null) {
    this.#transport = transport;
  }

  /**
   * The account's deliveries of the last 30 days, newest first, each with its attempts
   * (GET /v1/webhook-deliveries): `for await (const delivery of stills.webhooks.deliveries())`.
   */
  deliveries(query: { limit?: number; skip?: number } = {}): Pager<WebhookDelivery> {
    if (!this.#transport) throw new Error("deliveries() needs a client: new Stills(…).webhooks");
    return new Pager<WebhookDelivery>(this.#transport, "/webhook-deliveries", {
      limit: query.limit,
      skip: query.skip,
    });
  }

  /**
   * Checks a delivery and returns its event. `payload` is the raw body, exactly as received
   * (verify before parsing). Throws StillsWebhookError when a header is missing, the timestamp
   * is further than the tolerance from now, or no signature matches.
   */
  async verify(
    payload: string | Uint8Array | ArrayBuffer,
    headers: WebhookHeaders,
    secret: string,
    options: VerifyOptions = {},
  ): Promise<WebhookEvent> {
    const id = header(headers, "webhook-id");
    const timestamp = header(headers, "webhook-timestamp");
    const signatures = header(headers, "webhook-signature");
    if (!id || !timestamp || !signatures) {
      throw new StillsWebhookError("missing webhook-id, webhook-timestamp or webhook-signature");
    }
    const seconds = Number(timestamp);
    const now = options.now ?? Math.floor(Date.now() / 1000);
    const tolerance = options.toleranceSeconds ?? 300;
    if (!/^\d+$/.test(timestamp) || Math.abs(now - seconds) > tolerance) {
      throw new StillsWebhookError(
        `webhook-timestamp ${timestamp} is more than ${tolerance} s from now; refusing a replay`,
      );
    }
    const body =
      typeof payload === "string"
        ? payload
        : new TextDecoder().decode(
            payload instanceof ArrayBuffer ? new Uint8Array(payload) : payload,
          );
    const expected = await sign(secret, `${id}.${timestamp}.${body}`);
    const matches = signatures.split(" ").some((candidate) => {
      const [version, value] = candidate.split(",", 2);
      return version === "v1" && value !== undefined && constantTimeEqual(value, expected);
    });
    if (!matches) throw new StillsWebhookError("no webhook-signature matches the payload");
    let event: WebhookEvent;
    try {
      event = JSON.parse(body) as WebhookEvent;
    } catch {
      throw new StillsWebhookError("the signed payload is not JSON");
    }
    return event;
  }

  /** The header value a sender would compute; useful to test a receiver. */
  async sign(payload: string, id: string, timestamp: number, secret: string): Promise<string> {
    return `v1,${await sign(secret, `${id}.${timestamp}.${payload}`)}`;
  }
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") {
    return (headers as Headers).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(" ") : value;
}

async function sign(secret: string, content: string): Promise<string> {
  const crypto = await webCrypto();
  let keyBytes: Uint8Array<ArrayBuffer>;
  try {
    keyBytes = fromBase64(secret.replace(/^whsec_/, ""));
  } catch {
    throw new StillsWebhookError("the secret is not a whsec_ secret (base64 after the prefix)");
  }
  const key = await crypto.subtle.importKey(
    "raw",
    keyBytes,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(content));
  return toBase64(new Uint8Array(mac));
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Compares in time that does not depend on where the strings differ. */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
