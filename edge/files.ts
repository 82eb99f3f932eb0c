// File URLs (DESIGN.md), minted when a job is read and never stored, so a key rotation or an
// expired job invalidates every URL at once. Two kinds, chosen here and nowhere else:
// - with R2's S3 credentials configured (production), URLs presigned for R2's S3 endpoint,
//   so clients fetch files straight from R2 (edge/storage/r2-presign.ts);
// - otherwise (locally: miniflare has no S3 endpoint), the edge signs its own URLs with an
//   HMAC whose expiry is the job's expires_at and streams the object at /files/*.
// Callers (REST, webhooks, dashboard thumbnails, MCP previews) only call fileLinker().
import { env } from "cloudflare:workers";
import { contentTypeOf, parseFileKey } from "../schema/job-files.ts";
import { hmacSha256, timingSafeEqualHex, toHex } from "./crypto.ts";
import { R2Presigner, r2S3Settings } from "./storage/r2-presign.ts";

export interface FileLinker {
  url(key: string): Promise<string>;
}

/**
 * The R2 S3 settings of this deployment, or null. Read from the worker's environment each
 * time (`cloudflare:workers`), so every caller gets the same choice without passing it on.
 */
export function presignSettings() {
  return r2S3Settings(env);
}

function signingInput(key: string, expires: number) {
  return `${key}\n${expires}`;
}

export function fileLinker(secret: string, baseUrl: string, expiresAt: string): FileLinker {
  const settings = presignSettings();
  const edge = edgeLinker(secret, baseUrl, expiresAt);
  if (!settings) return edge;
  const presigned = presignedLinker(new R2Presigner(settings), expiresAt);
  return { url: (key) => (servedByEdge(key) ? edge.url(key) : presigned.url(key)) };
}

/** A storyboard's thumbnail track and the sprite it points into (extractor/storyboard/). */
export const THUMBNAIL_TRACK_NAME = "thumbnails.vtt";
export const THUMBNAIL_SPRITE_NAME = "sprite.jpg";

/**
 * Files the edge serves even when R2 presigning is configured. A thumbnail track names its
 * sprite relative to itself, and a relative name cannot carry the sprite's own signature: the
 * edge rewrites it to the sprite's signed URL as it serves the track (edge/routes/files/).
 */
export function servedByEdge(key: string): boolean {
  return parseFileKey(key)?.name === THUMBNAIL_TRACK_NAME;
}

/**
 * The track with each cue's sprite reference (`sprite.jpg#xywh=…`) pointing at the sprite's
 * signed URL instead; the #xywh fragment stays, which is what players cut the sprite by.
 */
export function withSignedSprite(track: string, spriteUrl: string): string {
  return track
    .split("\n")
    .map((line) =>
      line.startsWith(`${THUMBNAIL_SPRITE_NAME}#`)
        ? `${spriteUrl}${line.slice(THUMBNAIL_SPRITE_NAME.length)}`
        : line,
    )
    .join("\n");
}

function presignedLinker(presigner: R2Presigner, expiresAt: string): FileLinker {
  return {
    async url(key) {
      const parsed = parseFileKey(key);
      // Keys come from our own rows (checked at /internal/results); anything else is a bug.
      if (!parsed) throw new Error(`not a file key: ${key.slice(0, 200)}`);
      return presigner.url({ key, expiresAt, responseHeaders: fileHeaders(parsed) });
    },
  };
}

function edgeLinker(secret: string, baseUrl: string, expiresAt: string): FileLinker {
  const expires = Math.floor(Date.parse(expiresAt) / 1000);
  return {
    async url(key) {
      const sig = toHex(await hmacSha256(secret, signingInput(key, expires)));
      const path = key.split("/").map(encodeURIComponent).join("/");
      return `${baseUrl}/files/${path}?expires=${expires}&signature=${sig}`;
    },
  };
}

export type SignatureCheck = "ok" | "expired" | "bad-signature";

export async function checkFileSignature(
  secret: string,
  key: string,
  expiresParam: string | undefined,
  signature: string | undefined,
  now = Date.now(),
): Promise<SignatureCheck> {
  if (!expiresParam || !signature || !/^\d{1,12}$/.test(expiresParam)) return "bad-signature";
  const expected = toHex(await hmacSha256(secret, signingInput(key, Number(expiresParam))));
  if (!timingSafeEqualHex(expected, signature.toLowerCase())) return "bad-signature";
  return Number(expiresParam) * 1000 > now ? "ok" : "expired";
}

/**
 * The headers a file is answered with, wherever it is served from: /files/* sets them, and
 * presigned URLs ask R2 for the same ones (response-content-type and friends).
 */
export function fileHeaders(parsed: { jobId: string; name: string }): Record<string, string> {
  const extension = parsed.name.split(".").pop() ?? "";
  return {
    "content-type": contentTypeOf(parsed.name),
    "cache-control": "private, max-age=3600",
    ...(extension === "zip"
      ? { "content-disposition": `attachment; filename="${parsed.jobId}.zip"` }
      : {}),
  };
}
