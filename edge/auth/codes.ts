// One-time sign-in codes: six digits, valid ten minutes, five tries, one live code per address.
// D1 keeps only an HMAC of the code (keyed by a server secret, so a copy of the database does
// not give the codes away to a million guesses), and a guess is compared in constant time.
//
// A repeated request re-sends the live code instead of replacing it: anyone may ask for a
// code to any address, and a replacement killed the code on its way to its owner (one request
// every 20 s from a stranger kept an owner out). So a code is drawn from a random nonce with
// the server secret, and the row keeps the nonce: the same code can be mailed again, and the
// row alone still gives nothing away.
import { CODE_LENGTH } from "../../schema/sign-in.ts";
import { edgeConfig } from "../config.ts";
import { hmacSha256, timingSafeEqualHex, toHex } from "../crypto.ts";
import { codeExpiry, countCodeTry, upsertSignInCode, useSignInCode } from "../storage/accounts.ts";

export const CODE_VALID_MINUTES = 10;
export const CODE_MAX_TRIES = 5;
/**
 * A live code is re-sent while at least this much of its life is left; past that, a request
 * replaces it with a new one, so a re-sent code never arrives with a minute to go.
 */
export const RESEND_MIN_MINUTES = 5;

const CODE_SPACE = BigInt(10 ** CODE_LENGTH);

function secretOf(env: Env): string {
  return edgeConfig(env).secrets.fileUrlSecret;
}

/**
 * The code a nonce stands for: 64 bits of an HMAC, modulo 10^6 (a bias of 10^6 / 2^64, none
 * to speak of). Its label keeps it apart from the code's own hash and from signed file keys.
 */
async function codeOf(env: Env, email: string, nonce: string): Promise<string> {
  const mac = await hmacSha256(secretOf(env), `sign-in-code-draw\n${email}\n${nonce}`);
  const draw = new DataView(mac.buffer, mac.byteOffset, 8).getBigUint64(0);
  return String(draw % CODE_SPACE).padStart(CODE_LENGTH, "0");
}

/**
 * HMAC-SHA256 over the address and the code. The key is FILE_URL_SECRET; the input starts with
 * its own label, which no signed file key can (those start with `job/` or `demo/`), so the two
 * uses cannot stand in for each other.
 */
async function hashCode(env: Env, email: string, code: string): Promise<string> {
  return toHex(await hmacSha256(secretOf(env), `sign-in-code\n${email}\n${code}`));
}

export interface IssuedCode {
  code: string;
  /** Whole minutes the code still works (what the mail says). */
  validMinutes: number;
  /** True when this is the live code again, not a new one. */
  resent: boolean;
}

/**
 * The code to mail to `email`: the live one, while it has tries and at least
 * RESEND_MIN_MINUTES left, else a new one that replaces it (its tries start again). One
 * conditional statement decides, so two requests at once mail the same code.
 */
export async function issueSignInCode(
  env: Env,
  email: string,
  now = Date.now(),
): Promise<IssuedCode> {
  const nonce = toHex(crypto.getRandomValues(new Uint8Array(16)));
  const fresh = await codeOf(env, email, nonce);
  const expiresAt = new Date(now + CODE_VALID_MINUTES * 60_000).toISOString();
  const resendUntil = new Date(now + RESEND_MIN_MINUTES * 60_000).toISOString();
  const row = await upsertSignInCode(env.DB, {
    email,
    hash: await hashCode(env, email, fresh),
    nonce,
    expiresAt,
    maxTries: CODE_MAX_TRIES,
    resendUntil,
  });
  const resent = row.code_nonce !== nonce;
  return {
    code: resent ? await codeOf(env, email, row.code_nonce) : fresh,
    validMinutes: Math.floor((Date.parse(row.expires_at) - now) / 60_000),
    resent,
  };
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
  const counted = await countCodeTry(env.DB, email, CODE_MAX_TRIES, nowIso);
  if (!counted) {
    const expiresAt = await codeExpiry(env.DB, email);
    return { ok: false, reason: expiresAt && expiresAt > nowIso ? "no-tries-left" : "expired" };
  }
  const expected = await hashCode(env, email, guess);
  if (!timingSafeEqualHex(counted.code_hash, expected)) {
    const triesLeft = CODE_MAX_TRIES - counted.attempts;
    return triesLeft > 0
      ? { ok: false, reason: "wrong", triesLeft }
      : { ok: false, reason: "no-tries-left" };
  }
  // Only one of two parallel right guesses deletes the row, and only that one signs in.
  return (await useSignInCode(env.DB, email, counted.code_hash))
    ? { ok: true }
    : { ok: false, reason: "expired" };
}
