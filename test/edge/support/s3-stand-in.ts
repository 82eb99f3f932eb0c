// A local stand-in for R2's S3 endpoint, answering presigned GET URLs the way R2 does: it
// verifies the SigV4 query signature itself, written from AWS's published algorithm
// (docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html) with Web Crypto and
// sharing no code with the signer under test (aws4fetch), then serves the object from the
// test's real R2 bucket with the response-* overrides the URL carries. It refuses what R2
// refuses: another host or bucket, a bad or tampered signature, an expired URL, an expiry
// beyond 7 days, a credential it does not know.

const encoder = new TextEncoder();
const MAX_EXPIRES = 604_800;

export interface S3StandInOptions {
  /** e.g. https://<account>.r2.cloudflarestorage.com */
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  objects: R2Bucket;
  /** The stand-in's clock, in ms (defaults to Date.now). */
  now?: () => number;
}

export interface S3Refusal {
  status: number;
  code: string;
  message: string;
}

/** The parts of a presigned URL a test asserts on, read independently of the signer. */
export interface PresignedParts {
  host: string;
  bucket: string;
  key: string;
  algorithm: string | null;
  credential: string | null;
  signedHeaders: string | null;
  /** Seconds since the epoch of X-Amz-Date. */
  signedAt: number;
  expiresSeconds: number;
  /** X-Amz-Date + X-Amz-Expires, in seconds since the epoch. */
  expiresAt: number;
  responseHeaders: Record<string, string>;
}

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function sha256Hex(text: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

async function hmac(key: ArrayBuffer | Uint8Array, text: string): Promise<ArrayBuffer> {
  const imported = await crypto.subtle.importKey(
    "raw",
    key,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return crypto.subtle.sign("HMAC", imported, encoder.encode(text));
}

/** URI-encode as SigV4 specifies: every byte but A-Z a-z 0-9 - . _ ~ as %XY, upper-case. */
function uriEncode(text: string): string {
  return [...encoder.encode(text)]
    .map((byte) => {
      const ch = String.fromCharCode(byte);
      return /[A-Za-z0-9\-._~]/.test(ch)
        ? ch
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");
}

/** Query parameters exactly as sent: %XY decoded, "+" kept as a literal plus (S3 does so). */
function rawQuery(url: URL): [string, string][] {
  if (!url.search) return [];
  return url.search
    .slice(1)
    .split("&")
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf("=");
      const name = at < 0 ? pair : pair.slice(0, at);
      const value = at < 0 ? "" : pair.slice(at + 1);
      return [decodeURIComponent(name), decodeURIComponent(value)];
    });
}

function parseAmzDate(value: string | null): number {
  const match = value ? /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value) : null;
  if (!match) return Number.NaN;
  const [, y, mo, d, h, mi, s] = match.map(Number);
  return Date.UTC(y, mo - 1, d, h, mi, s) / 1000;
}

export function presignedParts(urlText: string): PresignedParts {
  const url = new URL(urlText);
  const query = new Map(rawQuery(url));
  const [, bucket, ...keyParts] = url.pathname.split("/");
  const signedAt = parseAmzDate(query.get("X-Amz-Date") ?? null);
  const expiresSeconds = Number(query.get("X-Amz-Expires"));
  const responseHeaders: Record<string, string> = {};
  for (const [name, value] of query) {
    if (name.startsWith("response-")) responseHeaders[name.slice("response-".length)] = value;
  }
  return {
    host: url.host,
    bucket: decodeURIComponent(bucket),
    key: keyParts.map(decodeURIComponent).join("/"),
    algorithm: query.get("X-Amz-Algorithm") ?? null,
    credential: query.get("X-Amz-Credential") ?? null,
    signedHeaders: query.get("X-Amz-SignedHeaders") ?? null,
    signedAt,
    expiresSeconds,
    expiresAt: signedAt + expiresSeconds,
    responseHeaders,
  };
}

/** The signature AWS's algorithm gives for this URL (every parameter but the signature). */
export async function expectedSignature(urlText: string, secretAccessKey: string): Promise<string> {
  const url = new URL(urlText);
  const params = rawQuery(url).filter(([name]) => name !== "X-Amz-Signature");
  const canonicalQuery = params
    .map(([name, value]) => [uriEncode(name), uriEncode(value)])
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
  // S3 does not normalise the path: each segment is encoded once, slashes kept.
  const canonicalUri = url.pathname.split("/").map(decodeURIComponent).map(uriEncode).join("/");
  const query = new Map(params);
  const signedHeaders = (query.get("X-Amz-SignedHeaders") ?? "").split(";");
  const headerValues: Record<string, string> = { host: url.host };
  const canonicalHeaders = signedHeaders
    .map((name) => `${name}:${(headerValues[name] ?? "").trim()}\n`)
    .join("");
  const canonicalRequest = [
    "GET",
    canonicalUri,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders.join(";"),
    "UNSIGNED-PAYLOAD",
  ].join("\n");
  const amzDate = query.get("X-Amz-Date") ?? "";
  const [, date, region, service, terminator] = (query.get("X-Amz-Credential") ?? "").split("/");
  const scope = [date, region, service, terminator].join("/");
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, await sha256Hex(canonicalRequest)].join(
    "\n",
  );
  const kDate = await hmac(encoder.encode(`AWS4${secretAccessKey}`), date);
  const kRegion = await hmac(kDate, region);
  const kService = await hmac(kRegion, service);
  const kSigning = await hmac(kService, terminator);
  return hex(await hmac(kSigning, stringToSign));
}

export class S3StandIn {
  readonly #options: S3StandInOptions;
  /** Every refusal, newest last, so a test can say why a URL was refused. */
  readonly refusals: S3Refusal[] = [];

  constructor(options: S3StandInOptions) {
    this.#options = options;
  }

  async fetch(urlText: string, init: { method?: string } = {}): Promise<Response> {
    const refusal = await this.#check(urlText, init.method ?? "GET");
    if (refusal) {
      this.refusals.push(refusal);
      return new Response(
        `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${refusal.code}</Code><Message>${refusal.message}</Message></Error>`,
        { status: refusal.status, headers: { "content-type": "application/xml" } },
      );
    }
    const parts = presignedParts(urlText);
    const object = await this.#options.objects.get(parts.key);
    if (!object) {
      return new Response("<Error><Code>NoSuchKey</Code></Error>", {
        status: 404,
        headers: { "content-type": "application/xml" },
      });
    }
    const headers = new Headers({
      "content-type": "application/octet-stream",
      "content-length": String(object.size),
      etag: object.httpEtag,
    });
    for (const [name, value] of Object.entries(parts.responseHeaders)) headers.set(name, value);
    return new Response(object.body, { headers });
  }

  async #check(urlText: string, method: string): Promise<S3Refusal | null> {
    const { endpoint, bucket, accessKeyId, secretAccessKey } = this.#options;
    const url = new URL(urlText);
    const refuse = (status: number, code: string, message: string) => ({ status, code, message });
    if (method !== "GET") return refuse(403, "AccessDenied", "only GET is presigned here");
    if (url.origin !== new URL(endpoint).origin) {
      return refuse(403, "AccessDenied", `wrong host ${url.host}`);
    }
    const parts = presignedParts(urlText);
    if (parts.bucket !== bucket) return refuse(404, "NoSuchBucket", `no bucket ${parts.bucket}`);
    const query = new Map(rawQuery(url));
    if (parts.algorithm !== "AWS4-HMAC-SHA256") {
      return refuse(400, "AuthorizationQueryParametersError", "X-Amz-Algorithm");
    }
    const [keyId, date, region, service, terminator] = (parts.credential ?? "").split("/");
    if (keyId !== accessKeyId) return refuse(403, "InvalidAccessKeyId", `unknown key ${keyId}`);
    if (region !== "auto" || service !== "s3" || terminator !== "aws4_request") {
      return refuse(400, "AuthorizationQueryParametersError", "credential scope");
    }
    const amzDate = query.get("X-Amz-Date") ?? "";
    if (!Number.isFinite(parts.signedAt) || amzDate.slice(0, 8) !== date) {
      return refuse(400, "AuthorizationQueryParametersError", "X-Amz-Date");
    }
    if (!/^\d+$/.test(query.get("X-Amz-Expires") ?? "")) {
      return refuse(400, "AuthorizationQueryParametersError", "X-Amz-Expires");
    }
    if (parts.expiresSeconds < 1 || parts.expiresSeconds > MAX_EXPIRES) {
      return refuse(400, "AuthorizationQueryParametersError", "X-Amz-Expires must be 1..604800");
    }
    if (!(parts.signedHeaders ?? "").split(";").includes("host")) {
      return refuse(400, "AuthorizationQueryParametersError", "host must be signed");
    }
    const given = query.get("X-Amz-Signature") ?? "";
    if (
      !/^[0-9a-f]{64}$/.test(given) ||
      given !== (await expectedSignature(urlText, secretAccessKey))
    ) {
      return refuse(403, "SignatureDoesNotMatch", "the signature does not match");
    }
    const now = (this.#options.now ?? Date.now)() / 1000;
    if (now > parts.expiresAt) return refuse(403, "AccessDenied", "Request has expired");
    if (parts.signedAt > now + 900) return refuse(403, "AccessDenied", "Request is not yet valid");
    return null;
  }
}
