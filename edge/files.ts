// Signed file URLs (DESIGN.md): the edge signs its own URLs with an HMAC whose expiry is the
// job's expires_at, and streams the R2 object. URLs are minted when a job is read, never
// stored, so a key rotation or an expired job invalidates every URL at once.
import { hmacSha256, timingSafeEqualHex, toHex } from "./crypto.ts";

export interface FileLinker {
  url(key: string): Promise<string>;
}

function signingInput(key: string, expires: number) {
  return `${key}\n${expires}`;
}

export function fileLinker(secret: string, baseUrl: string, expiresAt: string): FileLinker {
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

export const CONTENT_TYPES: Record<string, string> = {
  jpg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  zip: "application/zip",
};

/** Objects live under `{kind}/{job_id}/{attempt_id}/{name}`. */
export function parseFileKey(
  key: string,
): { kind: "job" | "demo"; jobId: string; name: string } | null {
  const match = /^(job|demo)\/([0-9a-f-]{36})\/[0-9a-zA-Z-]{1,64}\/([\w.-]{1,64})$/.exec(key);
  if (!match) return null;
  return { kind: match[1] as "job" | "demo", jobId: match[2], name: match[3] };
}
