// A new API key is shown once, on the page the creating POST redirects to (POST, redirect, GET:
// a reload of that page never creates another key). Between the two requests the key waits in
// D1 (key_reveals), sealed with AES-GCM under a key derived from a random token that only the
// redirect's address carries; D1 keeps the token's hash. Reading the row deletes it, in the
// same statement, so a reload, a second tab or a replayed address finds nothing: the key is
// never shown twice.
import { sha256Hex, toBase64 } from "../../crypto.ts";
import { keepKeyReveal, liveKeyOf, takeKeyReveal } from "../../storage/accounts.ts";

/** How long a created key waits to be shown: the redirect follows at once, this is slack. */
export const REVEAL_MINUTES = 10;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const encoder = new TextEncoder();

function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return toBase64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

async function sealingKey(token: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", encoder.encode(token), "HKDF", false, [
    "deriveKey",
  ]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode("key-reveal") },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}

/**
 * Keeps the new key for one showing and returns the token the redirect carries. Rows of any
 * account that were never read and have run out are dropped on the way.
 */
export async function keepForOneShowing(
  env: Env,
  accountId: string,
  keyId: string,
  key: string,
  now = Date.now(),
): Promise<string> {
  const token = newToken();
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv },
      await sealingKey(token),
      encoder.encode(key),
    ),
  );
  const stored = new Uint8Array(iv.length + sealed.length);
  stored.set(iv);
  stored.set(sealed, iv.length);
  const expiresAt = new Date(now + REVEAL_MINUTES * 60_000).toISOString();
  const tokenHash = await sha256Hex(token);
  await keepKeyReveal(
    env.DB,
    { tokenHash, accountId, keyId, sealed: toBase64(stored), expiresAt },
    now,
  );
  return token;
}

export type Showing =
  | { shown: true; key: string; name: string; keyId: string }
  /** Already shown, run out, revoked since, another account's, or never issued. */
  | { shown: false };

/** The key the token stands for, once: the row is deleted as it is read. */
export async function takeForShowing(
  env: Env,
  accountId: string,
  token: string,
  now = Date.now(),
): Promise<Showing> {
  if (!TOKEN_PATTERN.test(token)) return { shown: false };
  const row = await takeKeyReveal(env.DB, await sha256Hex(token), accountId);
  if (!row || row.expires_at <= new Date(now).toISOString()) return { shown: false };
  const live = await liveKeyOf(env.DB, accountId, row.key_id);
  if (!live) return { shown: false };
  const stored = fromBase64(row.sealed_key);
  try {
    const key = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: stored.slice(0, 12) },
      await sealingKey(token),
      stored.slice(12),
    );
    return { shown: true, key: new TextDecoder().decode(key), name: live.name, keyId: row.key_id };
  } catch {
    return { shown: false };
  }
}
