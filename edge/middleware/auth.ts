// Authentication (spec §5) and the per-key rate limit, as one middleware: a request that
// fails authentication is still counted, against its IP, so guessing keys is rate limited.
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { hashApiKey, isWellFormedApiKey, KEY_PREFIX } from "../../schema/api-keys.ts";
import type { AccountRow } from "../../schema/db.ts";
import { accounts, apiKeys } from "../../schema/db.ts";
import type { AppEnv, Db } from "../context.ts";
import { timingSafeEqualHex } from "../crypto.ts";
import { ApiError } from "../errors.ts";
import { errorFields, logEvent } from "../log.ts";
import { planOf } from "../plan-of.ts";
import { type D1Reader, preparedStatement } from "../storage/prepared-select.ts";
import { enforceIpRate, enforceRate } from "./rate-limit.ts";

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
 * Verified keys are remembered in the isolate for a few seconds, with their account. A
 * remembered key is still checked against D1 on the primary on every request (a primary-key
 * read of the key alone, run alongside the rate-limit check; on GET /v1/jobs/{id} a column of
 * the job read itself, requireApiKeyInRead), so a key revoked anywhere is refused from the
 * next request on, on every isolate. What the cache saves is the lookup by hash and the join
 * with the account before the rate limit can start. Handlers that need live balances read the
 * account again; the cached row serves only its id and plan (so a plan change reaches the rate
 * limit within KEY_CACHE_MS).
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
 * whether the key is live, which is checked in D1 on every request as before.
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

/** Forgets a key in this isolate (the dashboard calls it as it revokes one). */
export function forgetApiKey(hash: string) {
  keyCache.delete(hash);
}

async function lookUpKey(db: Db, hash: string): Promise<KeyRow | undefined> {
  const [row] = await db
    .select({ keyId: apiKeys.id, keyHash: apiKeys.keyHash, account: accounts })
    .from(apiKeys)
    .innerJoin(accounts, eq(apiKeys.accountId, accounts.id))
    .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
    .limit(1);
  if (!row) {
    keyCache.delete(hash);
    return undefined;
  }
  if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
  keyCache.set(hash, { row, until: Date.now() + KEY_CACHE_MS });
  return row;
}

/** The key by primary key, unless revoked: the re-check every request of a remembered key makes. */
const LIVE_KEY = preparedStatement((db) =>
  db
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, sql.placeholder("keyId")), isNull(apiKeys.revokedAt)))
    .limit(1),
);

/** `d1` must read the primary (the plain binding does). */
async function keyIsLive(d1: D1Reader, keyId: string): Promise<boolean> {
  const { results } = await LIVE_KEY.bind(d1, { keyId }).all();
  return results.length > 0;
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
  const write = c.env.DB.prepare(
    "UPDATE api_keys SET last_used_at = ?1 WHERE id = ?2 AND (last_used_at IS NULL OR last_used_at < ?3)",
  )
    .bind(new Date(now).toISOString(), keyId, new Date(now - LAST_USED_EVERY_MS).toISOString())
    .run()
    .catch((err) => logEvent("error", "auth.last_used_failed", errorFields(err)));
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
 * A remembered key's D1 re-check, left for the route's own read on the primary
 * (requireApiKeyInRead): `settled` once its answer has been judged.
 */
interface DeferredKeyCheck {
  keyId: string;
  hash: string;
  settled: boolean;
}

/** Per request (one Context per request); a WeakMap, as AppEnv's variables are not ours. */
const deferredChecks = new WeakMap<Context<AppEnv>, DeferredKeyCheck>();

/** A key checked against D1 now: looked up by hash, or a remembered one re-checked. */
async function verifiedKey(c: Context<AppEnv>, hash: string): Promise<KeyRow | undefined> {
  const db = c.get("db");
  const cached = cachedKey(hash);
  if (!cached) {
    const row = await lookUpKey(db, hash);
    if (row) await enforceRate(c, `key:${row.keyId}`, rateOf(row.account));
    return row;
  }
  const [live, rate] = await Promise.allSettled([
    keyIsLive(c.env.DB, cached.keyId),
    enforceRate(c, `key:${cached.keyId}`, rateOf(cached.account)),
  ]);
  if (live.status === "rejected") throw live.reason;
  if (!live.value) {
    keyCache.delete(hash);
    return undefined;
  }
  if (rate.status === "rejected") throw rate.reason;
  return cached;
}

/**
 * A remembered key whose D1 re-check the route runs in its own read: only the rate limit is
 * taken here. A refused rate still re-checks the key first, so a revoked key reads 401, never
 * 429, as on every other route.
 */
async function keyWithDeferredCheck(c: Context<AppEnv>, hash: string, cached: KeyRow) {
  try {
    await enforceRate(c, `key:${cached.keyId}`, rateOf(cached.account));
  } catch (err) {
    if (!(await keyIsLive(c.env.DB, cached.keyId))) {
      keyCache.delete(hash);
      return undefined;
    }
    throw err;
  }
  deferredChecks.set(c, { keyId: cached.keyId, hash, settled: false });
  return cached;
}

async function refuseUnknownKey(c: Context<AppEnv>): Promise<never> {
  await enforceIpRate(c);
  throw invalid();
}

async function authenticate(c: Context<AppEnv>, next: () => Promise<void>, deferCheck: boolean) {
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
  const cached = deferCheck ? cachedKey(hash) : undefined;
  const row = cached ? await keyWithDeferredCheck(c, hash, cached) : await verifiedKey(c, hash);
  if (!row || !timingSafeEqualHex(row.keyHash, hash)) await refuseUnknownKey(c);
  const key = row as KeyRow;
  c.set("account", key.account);
  c.set("apiKeyId", key.keyId);
  noteKeyUse(c, key.keyId);
  await next();
  const deferred = deferredChecks.get(c);
  if (deferred && !deferred.settled) {
    // The route ended before its read ran (a 404 for a malformed id, a thrown error): the
    // re-check runs here, and a revoked key's answer becomes the 401 it would have been.
    deferred.settled = true;
    // The plain binding: the route may have switched the request to a session.
    if (!(await keyIsLive(c.env.DB, deferred.keyId))) {
      keyCache.delete(hash);
      await refuseUnknownKey(c);
    }
  }
}

export const requireApiKey = createMiddleware<AppEnv>((c, next) => authenticate(c, next, false));

/**
 * requireApiKey for a read route that reads D1 once, on the primary: a remembered key's
 * re-check rides in that read (keyCheckFor) instead of costing a D1 round trip of its own.
 * The guarantee is unchanged: the read is on the primary, and whatever the route does, the
 * request is answered 401 when the key has been revoked (checked after the route if its read
 * never ran).
 */
export const requireApiKeyInRead = createMiddleware<AppEnv>((c, next) =>
  authenticate(c, next, true),
);

/**
 * The request's deferred key re-check, for the route's read on the primary: `query` selects
 * the key while it is live (SQL and its values, to embed as `EXISTS (…)` in the route's own
 * statement) and `settle` judges the answer (throwing 401 for a revoked key). None when the
 * key was already checked in this request.
 */
export function keyCheckFor(c: Context<AppEnv>) {
  const deferred = deferredChecks.get(c);
  if (!deferred || deferred.settled) return undefined;
  return {
    query: LIVE_KEY.query({ keyId: deferred.keyId }),
    settle: async (live: boolean) => {
      deferred.settled = true;
      if (live) return;
      keyCache.delete(deferred.hash);
      await refuseUnknownKey(c);
    },
  };
}

/** Public endpoints: counted per client IP. */
export const publicRate = createMiddleware<AppEnv>(async (c, next) => {
  await enforceIpRate(c);
  await next();
});
