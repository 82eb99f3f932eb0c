// Authentication (spec §5) and the per-key rate limit, as one middleware: a request that
// fails authentication is still counted, against its IP, so guessing keys is rate limited.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { hashApiKey, isWellFormedApiKey, KEY_PREFIX } from "../../schema/api-keys.ts";
import type { AccountRow } from "../../schema/db.ts";
import type { AppEnv } from "../context.ts";
import { timingSafeEqualHex } from "../crypto.ts";
import { ApiError } from "../errors.ts";
import { errorFields, logEvent } from "../log.ts";
import { revokeGrantsOfKey } from "../oauth/grants.ts";
import { planOf } from "../plan-of.ts";
import { keyOwner, liveKeyByHash, noteKeyUsed } from "../storage/accounts.ts";
import { enforceIpRate, enforceKeyRate, revokeKeyLimiter } from "./rate-limit.ts";

type Credential = { kind: "none" } | { kind: "malformed" } | { kind: "key"; key: string };

/**
 * Spec §5: a key comes as `Authorization: Bearer <key>` or `X-API-Key: <key>`. Only an
 * Authorization header that is not a bearer value with our prefix is `malformed`; any value of
 * X-API-Key is taken as a key (and is `invalid` when it is not one). When both headers are
 * sent, a prefixed bearer value wins.
 */
export function readCredential(headers: { get(name: string): string | null }): Credential {
  const authorization = headers.get("authorization");
  const apiKey = headers.get("x-api-key")?.trim() ?? "";
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
  if (bearer?.startsWith(KEY_PREFIX)) return { kind: "key", key: bearer };
  if (apiKey !== "") return { kind: "key", key: apiKey };
  return authorization === null ? { kind: "none" } : { kind: "malformed" };
}

const malformed = () =>
  new ApiError(
    "InvalidApiKey",
    `API key is malformed: expected Authorization: Bearer ${KEY_PREFIX}… or X-API-Key`,
    {
      reason: "malformed",
      userMessage: "The API key is not in the expected format.",
    },
  );

const invalid = () =>
  new ApiError("InvalidApiKey", "API key is unknown or revoked", {
    reason: "invalid",
    userMessage: "This API key is not valid. Check it, or create a new one.",
  });

type KeyRow = { keyId: string; keyHash: string; account: AccountRow };

/**
 * Verified keys are remembered in the isolate for a few seconds, with their account. Whether a
 * remembered key is still live is answered by its rate limiter, which every request consults
 * (a call, or a lease the limiter gave at most LEASE_SECONDS ago, edge/middleware/rate-limit.ts):
 * revoking a key marks its limiter first (revokeApiKey), so a key revoked anywhere is refused
 * by every isolate within the lease, at once by any request that reaches the limiter, and,
 * but for a lease fetched at that very moment, at once by the isolate that revoked it. D1 is read only when the key is not remembered: the lookup
 * by hash, which also refuses a key revoked in D1 alone, within KEY_CACHE_MS. Handlers that
 * need live balances read the account again; the cached row serves only its id and plan (so a
 * plan change reaches the rate limit within KEY_CACHE_MS).
 */
const KEY_CACHE_MS = 10_000;
const KEY_CACHE_MAX = 10_000;
const keyCache = new Map<string, { row: KeyRow; until: number }>();

function cachedKey(hash: string): KeyRow | undefined {
  const cached = keyCache.get(hash);
  return cached && cached.until > Date.now() ? cached.row : undefined;
}

/**
 * The hashes of keys seen lately, so a key sending many requests is hashed once per isolate
 * (bounded like the key cache). Only well-formed keys get here; a hash says nothing about
 * whether the key is live, which verifiedKey answers on every request.
 */
const keyHashes = new Map<string, string>();

async function hashOf(key: string): Promise<string> {
  const known = keyHashes.get(key);
  if (known) return known;
  const hash = await hashApiKey(key);
  if (keyHashes.size >= KEY_CACHE_MAX) keyHashes.clear();
  keyHashes.set(key, hash);
  return hash;
}

/**
 * Revocation's edge side, called by the dashboard before it marks the key in D1: the key's
 * limiter refuses it from now on (everywhere, within a lease), this isolate forgets it, and an
 * MCP connector acting through it loses its OAuth grants (no refresh token outlives the key).
 */
export async function revokeApiKey(env: Env, keyId: string, hash: string) {
  await revokeKeyLimiter(env, keyId);
  keyCache.delete(hash);
  const owner = await keyOwner(env.DB, keyId);
  if (owner) await revokeGrantsOfKey(env, owner, keyId);
}

async function lookUpKey(d1: D1Database, hash: string): Promise<KeyRow | undefined> {
  const row = await liveKeyByHash(d1, hash);
  if (!row) {
    keyCache.delete(hash);
    return undefined;
  }
  if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
  keyCache.set(hash, { row, until: Date.now() + KEY_CACHE_MS });
  return row;
}

/**
 * `last_used_at` for the dashboard, written behind the response and at most about once a
 * minute per key: once per isolate by the map, and across isolates by the condition.
 */
const LAST_USED_EVERY_MS = 60_000;
const lastUseWritten = new Map<string, number>();

function noteKeyUse(c: Context<AppEnv>, keyId: string) {
  const now = Date.now();
  if ((lastUseWritten.get(keyId) ?? 0) > now - LAST_USED_EVERY_MS) return;
  if (lastUseWritten.size >= KEY_CACHE_MAX) lastUseWritten.clear();
  lastUseWritten.set(keyId, now);
  const write = noteKeyUsed(c.env.DB, keyId, now, LAST_USED_EVERY_MS).catch((err) =>
    logEvent("error", "auth.last_used_failed", errorFields(err)),
  );
  try {
    c.executionCtx.waitUntil(write);
  } catch {
    // No execution context (the app called directly, as some tests do): the write still runs.
  }
}

function rateOf(account: AccountRow): number {
  return planOf(account).limits.requests_per_minute;
}

/**
 * The key, remembered or looked up by hash, once its limiter has admitted the request:
 * undefined when it is unknown or revoked. A revoked key reads 401, never 429.
 */
async function verifiedKey(c: Context<AppEnv>, hash: string): Promise<KeyRow | undefined> {
  const row = cachedKey(hash) ?? (await lookUpKey(c.env.DB, hash));
  if (!row) return undefined;
  if (!(await enforceKeyRate(c, row.keyId, rateOf(row.account)))) {
    keyCache.delete(hash);
    return undefined;
  }
  return row;
}

async function refuseUnknownKey(c: Context<AppEnv>): Promise<never> {
  await enforceIpRate(c);
  throw invalid();
}

async function authenticate(c: Context<AppEnv>, next: () => Promise<void>) {
  const credential = readCredential(c.req.raw.headers);
  if (credential.kind !== "key") {
    await enforceIpRate(c);
    throw credential.kind === "none"
      ? new ApiError("AuthenticationRequired", "This endpoint needs an API key", {
          userMessage: "Sign in or pass an API key to use this endpoint.",
        })
      : malformed();
  }
  // The checksum is checked before any lookup: a made-up key never reaches D1. A value with
  // our prefix is a key by the spec's definition, so a bad one is `invalid`, not `malformed`.
  if (!isWellFormedApiKey(credential.key)) await refuseUnknownKey(c);
  const hash = await hashOf(credential.key);
  const row = await verifiedKey(c, hash);
  if (!row || !timingSafeEqualHex(row.keyHash, hash)) await refuseUnknownKey(c);
  const key = row as KeyRow;
  c.set("account", key.account);
  c.set("apiKeyId", key.keyId);
  noteKeyUse(c, key.keyId);
  await next();
}

export const requireApiKey = createMiddleware<AppEnv>(authenticate);

/** Public endpoints: counted per client IP. */
export const publicRate = createMiddleware<AppEnv>(async (c, next) => {
  await enforceIpRate(c);
  await next();
});
