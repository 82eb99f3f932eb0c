// Authentication (spec §5) and the per-key rate limit, as one middleware: a request that
// fails authentication is still counted, against its IP, so guessing keys is rate limited.
import { and, eq, isNull } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { hashApiKey, isWellFormedApiKey, KEY_PREFIX } from "../../schema/api-keys.ts";
import type { AccountRow } from "../../schema/db.ts";
import { accounts, apiKeys } from "../../schema/db.ts";
import { isPlanName, PLANS } from "../../schema/plans.ts";
import type { AppEnv, Db } from "../context.ts";
import { timingSafeEqualHex } from "../crypto.ts";
import { ApiError } from "../errors.ts";
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
 * Verified keys are remembered in the isolate for a few seconds: the hot path of a busy
 * client then skips a D1 read. The price is that a revoked key keeps working for up to
 * KEY_CACHE_MS on an isolate that has just seen it. Handlers that need live balances read
 * the account again; the cached row serves only its id and plan.
 */
const KEY_CACHE_MS = 10_000;
const KEY_CACHE_MAX = 10_000;
const keyCache = new Map<string, { row: KeyRow; until: number }>();

async function lookUpKey(db: Db, hash: string): Promise<KeyRow | undefined> {
  const cached = keyCache.get(hash);
  if (cached && cached.until > Date.now()) return cached.row;
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

export const requireApiKey = createMiddleware<AppEnv>(async (c, next) => {
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
  if (!isWellFormedApiKey(credential.key)) {
    await enforceIpRate(c);
    throw invalid();
  }
  const hash = await hashApiKey(credential.key);
  const row = await lookUpKey(c.get("db"), hash);
  if (!row || !timingSafeEqualHex(row.keyHash, hash)) {
    await enforceIpRate(c);
    throw invalid();
  }
  c.set("account", row.account);
  c.set("apiKeyId", row.keyId);
  const plan = isPlanName(row.account.plan) ? PLANS[row.account.plan] : PLANS.free;
  await enforceRate(c, `key:${row.keyId}`, plan.limits.requests_per_minute);
  await next();
});

/** Public endpoints: counted per client IP. */
export const publicRate = createMiddleware<AppEnv>(async (c, next) => {
  await enforceIpRate(c);
  await next();
});
