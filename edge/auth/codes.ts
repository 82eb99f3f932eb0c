// One-time sign-in codes: six digits, valid ten minutes, five tries, one live code per address.
// D1 keeps only an HMAC of the code (keyed by a server secret, so a copy of the database does
// not give the codes away to a million guesses), and a guess is compared in constant time.
import { CODE_LENGTH } from "../../schema/sign-in.ts";
import { edgeConfig } from "../config.ts";
import { hmacSha256, timingSafeEqualHex, toHex } from "../crypto.ts";

export const CODE_VALID_MINUTES = 10;
export const CODE_MAX_TRIES = 5;

const CODE_SPACE = 10 ** CODE_LENGTH;
// The largest multiple of 10^6 below 2^32: values at or above it are drawn again, so every
// code is equally likely (a plain `% 10^6` would favour the low ones).
const UNBIASED_LIMIT = Math.floor(2 ** 32 / CODE_SPACE) * CODE_SPACE;

export function generateSignInCode(): string {
  const draw = new Uint32Array(1);
  do crypto.getRandomValues(draw);
  while (draw[0] >= UNBIASED_LIMIT);
  return String(draw[0] % CODE_SPACE).padStart(CODE_LENGTH, "0");
}

/**
 * HMAC-SHA256 over the address and the code. The key is FILE_URL_SECRET; the input starts with
 * its own label, which no signed file key can (those start with `job/` or `demo/`), so the two
 * uses cannot stand in for each other.
 */
async function hashCode(env: Env, email: string, code: string): Promise<string> {
  const key = edgeConfig(env).secrets.fileUrlSecret;
  return toHex(await hmacSha256(key, `sign-in-code\n${email}\n${code}`));
}

/** Stores a new code for `email`, replacing any earlier one (its tries start again). */
export async function storeSignInCode(env: Env, email: string, code: string, now = Date.now()) {
  const expiresAt = new Date(now + CODE_VALID_MINUTES * 60_000).toISOString();
  await env.DB.prepare(
    `INSERT INTO sign_in_codes (email, code_hash, expires_at, attempts) VALUES (?, ?, ?, 0)
     ON CONFLICT (email) DO UPDATE SET code_hash = excluded.code_hash,
       expires_at = excluded.expires_at, attempts = 0,
       created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
  )
    .bind(email, await hashCode(env, email, code), expiresAt)
    .run();
}

export type CodeCheck =
  | { ok: true }
  | { ok: false; reason: "wrong"; triesLeft: number }
  | { ok: false; reason: "expired" | "no-tries-left" };

/**
 * Checks a guess. The try is counted before the comparison, in one conditional statement, so
 * parallel guesses cannot get past five between a read and a write. A right code is deleted
 * as it is used: it signs in once.
 */
export async function checkSignInCode(
  env: Env,
  email: string,
  guess: string,
  now = Date.now(),
): Promise<CodeCheck> {
  const nowIso = new Date(now).toISOString();
  const counted = await env.DB.prepare(
    `UPDATE sign_in_codes SET attempts = attempts + 1
     WHERE email = ? AND attempts < ? AND expires_at > ?
     RETURNING code_hash, attempts`,
  )
    .bind(email, CODE_MAX_TRIES, nowIso)
    .first<{ code_hash: string; attempts: number }>();
  if (!counted) {
    const row = await env.DB.prepare("SELECT expires_at FROM sign_in_codes WHERE email = ?")
      .bind(email)
      .first<{ expires_at: string }>();
    return { ok: false, reason: row && row.expires_at > nowIso ? "no-tries-left" : "expired" };
  }
  const expected = await hashCode(env, email, guess);
  if (!timingSafeEqualHex(counted.code_hash, expected)) {
    const triesLeft = CODE_MAX_TRIES - counted.attempts;
    return triesLeft > 0
      ? { ok: false, reason: "wrong", triesLeft }
      : { ok: false, reason: "no-tries-left" };
  }
  // Only one of two parallel right guesses deletes the row, and only that one signs in.
  const used = await env.DB.prepare("DELETE FROM sign_in_codes WHERE email = ? AND code_hash = ?")
    .bind(email, counted.code_hash)
    .run();
  return used.meta.changes === 1 ? { ok: true } : { ok: false, reason: "expired" };
}
