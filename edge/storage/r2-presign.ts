// Frame and ZIP URLs presigned for R2's S3 API, so a client fetches files straight from R2
// instead of through the Worker. Used only when the R2 S3 credentials are configured; the
// choice is made in edge/files.ts (fileLinker), so no caller knows which kind it mints.
//
// SigV4 comes from aws4fetch (a small, maintained signer), never from our own crypto. The
// signature covers the host, the path, the expiry and every query parameter, so the
// response-content-* overrides cannot be changed by whoever holds the URL.
import { AwsV4Signer } from "aws4fetch";
import { edgeConfig } from "../config.ts";
import { logEvent } from "../log.ts";

/** SigV4's longest presigned lifetime (and R2's): 7 days. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export interface R2S3Settings {
  accessKeyId: string;
  secretAccessKey: string;
  /** Origin of the S3 endpoint, without a trailing slash. */
  endpoint: string;
  bucket: string;
}

// A half-configured deployment keeps the /files/* URLs, and says so once per isolate. (A value
// that is malformed, not missing, never gets here: the settings refuse it, edge/config.ts.)
let warned = false;

/**
 * The R2 S3 settings, or null when presigned URLs are off: locally (miniflare has no S3
 * endpoint) or when any of the credentials, the bucket or the endpoint is missing.
 */
export function r2S3Settings(env: Env): R2S3Settings | null {
  const r2 = edgeConfig(env).r2;
  const endpoint =
    r2.s3Endpoint ?? (r2.accountId && `https://${r2.accountId}.r2.cloudflarestorage.com`);
  const given = [r2.accessKeyId, r2.secretAccessKey, endpoint, r2.bucketName];
  if (given.every((value) => !value)) return null;
  if (!r2.accessKeyId || !r2.secretAccessKey || !endpoint || !r2.bucketName) {
    if (!warned) {
      warned = true;
      logEvent("warn", "config.presign_off", {
        reason:
          "set R2_ACCESS_KEY_ID, R2_SECRET_ACCESS_KEY, R2_BUCKET_NAME and R2_ACCOUNT_ID (or R2_S3_ENDPOINT); file URLs stay on /files/*",
      });
    }
    return null;
  }
  return {
    accessKeyId: r2.accessKeyId,
    secretAccessKey: r2.secretAccessKey,
    endpoint,
    bucket: r2.bucketName,
  };
}

/** The origin clients fetch presigned files from (pages name it in their img-src). */
export function presignedOrigin(settings: R2S3Settings): string {
  return new URL(settings.endpoint).origin;
}

/** RFC 3986 encoding of one path segment or query component, as SigV4 canonicalises it. */
function encodeRfc3986(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** SigV4's basic ISO 8601 form: 20261123T101500Z. */
function amzDate(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/[:-]|\.\d{3}/g, "");
}

export interface PresignRequest {
  key: string;
  /** Response headers R2 answers with, as `response-<name>` query overrides (all signed). */
  responseHeaders: Record<string, string>;
  /** The URL stops working here, or 7 days after signing, whichever is first. */
  expiresAt: string;
  now?: number;
}

export class R2Presigner {
  // The derived signing key depends only on the day, so one job's URLs derive it once.
  readonly #cache = new Map<string, ArrayBuffer>();
  readonly #settings: R2S3Settings;

  constructor(settings: R2S3Settings) {
    this.#settings = settings;
  }

  /** A presigned GET URL for one object. */
  async url(request: PresignRequest): Promise<string> {
    const until = Math.floor(Date.parse(request.expiresAt) / 1000);
    if (!Number.isFinite(until)) throw new Error(`not a date: ${request.expiresAt}`);
    // X-Amz-Date + X-Amz-Expires never passes the job's expires_at (floored to the second).
    // Within its last second the URL is dated one second back, so it still ends there.
    const signedAt = Math.min(Math.floor((request.now ?? Date.now()) / 1000), until - 1);
    const lifetime = Math.min(until - signedAt, MAX_PRESIGN_SECONDS);
    const path = request.key.split("/").map(encodeRfc3986).join("/");
    const url = new URL(
      `${this.#settings.endpoint}/${encodeRfc3986(this.#settings.bucket)}/${path}`,
    );
    url.searchParams.set("X-Amz-Expires", String(lifetime));
    for (const [name, value] of Object.entries(request.responseHeaders)) {
      url.searchParams.set(`response-${name.toLowerCase()}`, value);
    }
    const signed = await new AwsV4Signer({
      method: "GET",
      url: url.toString(),
      accessKeyId: this.#settings.accessKeyId,
      secretAccessKey: this.#settings.secretAccessKey,
      service: "s3",
      region: "auto",
      datetime: amzDate(signedAt),
      signQuery: true,
      cache: this.#cache,
    }).sign();
    // URLSearchParams writes a space as "+", which S3 servers need not read as a space in a
    // signed parameter; RFC 3986 encoding (%20) is what the signature was computed over.
    const query = [...signed.url.searchParams]
      .map(([name, value]) => `${encodeRfc3986(name)}=${encodeRfc3986(value)}`)
      .join("&");
    return `${signed.url.origin}${signed.url.pathname}?${query}`;
  }
}
