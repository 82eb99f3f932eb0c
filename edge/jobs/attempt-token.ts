// The token an extractor's calls to /internal/* carry: valid for one job and one attempt of it,
// until an expiry. A token that leaks from one attempt (a log line, a crashed container's disk)
// cannot upload to, renew or settle any other job, nor another attempt of the same job.
//   token = base64url(HMAC-SHA256(INTERNAL_TOKEN, `${kind}:${job_id}:${attempt_id}:${expiry}`))
//           + "." + expiry (Unix seconds)
// The edge → extractor POST /extract call keeps the shared secret itself.
import type { JobKind } from "../../schema/messages.ts";
import { hmacSha256, timingSafeEqualHex, toBase64, toHex } from "../crypto.ts";

export interface AttemptClaim {
  kind: JobKind;
  jobId: string;
  attemptId: string;
}

function base64url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function signed(secret: string, claim: AttemptClaim, expiry: number) {
  return hmacSha256(secret, `${claim.kind}:${claim.jobId}:${claim.attemptId}:${expiry}`);
}

export async function attemptToken(
  secret: string,
  claim: AttemptClaim,
  expiresAtSeconds: number,
): Promise<string> {
  return `${base64url(await signed(secret, claim, expiresAtSeconds))}.${expiresAtSeconds}`;
}

/** True when `token` was issued for exactly this job and attempt and has not expired. */
export async function verifyAttemptToken(
  secret: string | undefined,
  token: string,
  claim: AttemptClaim,
  nowMs: number,
): Promise<boolean> {
  const match = /^([A-Za-z0-9_-]{43})\.(\d{1,12})$/.exec(token);
  if (!secret || !match) return false;
  const expiry = Number(match[2]);
  if (expiry * 1000 <= nowMs) return false;
  const expected = base64url(await signed(secret, claim, expiry));
  // Hex of both sides keeps the comparison constant-time and equal in length.
  const encoder = new TextEncoder();
  return timingSafeEqualHex(toHex(encoder.encode(expected)), toHex(encoder.encode(match[1])));
}
