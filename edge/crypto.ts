// Small Web Crypto helpers shared by auth, signed file URLs and webhooks.

const encoder = new TextEncoder();

/** Compares two equal-length hex strings without an early exit. */
export function timingSafeEqualHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

function importHmacKey(keyBytes: Uint8Array) {
  return crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
}

// Configured secrets (string form) are imported once per isolate: a job read signs every
// frame URL with the same key.
const importedKeys = new Map<string, Promise<CryptoKey>>();

/**
 * HMACs of short messages under a configured secret, remembered per isolate: a job polled
 * for its URLs signs the same (file, expiry) inputs on every read. The result is a pure
 * function of secret and message, so a remembered one is the one computed again.
 */
const MEMO_MAX_MESSAGE = 256;
const MEMO_MAX_ENTRIES = 4096;
const memo = new Map<string, Map<string, Uint8Array>>();

export async function hmacSha256(
  secret: string | Uint8Array,
  message: string,
): Promise<Uint8Array> {
  if (typeof secret !== "string") {
    return sign(await importHmacKey(secret), message);
  }
  const remembered = memo.get(secret)?.get(message);
  // A copy: callers own what they are given.
  if (remembered) return remembered.slice();
  const key = importedKeys.get(secret) ?? importHmacKey(encoder.encode(secret));
  importedKeys.set(secret, key);
  const mac = await sign(await key, message);
  if (message.length <= MEMO_MAX_MESSAGE) {
    const forSecret = memo.get(secret) ?? new Map<string, Uint8Array>();
    memo.set(secret, forSecret);
    if (forSecret.size >= MEMO_MAX_ENTRIES) forSecret.clear();
    forSecret.set(message, mac.slice());
  }
  return mac;
}

async function sign(key: CryptoKey, message: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message)));
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

export function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const b of bytes) hex += HEX[b];
  return hex;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}

export async function sha256Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))));
}
