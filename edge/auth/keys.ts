// An account's API keys: the list, a new key (at most MAX_ACTIVE_KEYS live at once) and
// revocation, each recorded in the account's event log. The dashboard and the OAuth connectors
// (edge/oauth/connector-key.ts) both make keys here.
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { newKeyStatement } from "../../schema/accounts.ts";
import { apiKeyHint } from "../../schema/api-keys.ts";
import { apiKeys } from "../../schema/db.ts";
import type { Db } from "../context.ts";
import { revokeApiKey } from "../middleware/auth.ts";
import { type EventOrigin, recordAccountEvent } from "./account-events.ts";

/** Enough for every environment and connector of one account; more is a leak waiting. */
export const MAX_ACTIVE_KEYS = 25;

export function activeKeys(db: Db, accountId: string) {
  return db
    .select({
      id: apiKeys.id,
      hint: apiKeys.hint,
      name: apiKeys.name,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt), sql`rowid DESC`);
}

export type KeyListRow = Awaited<ReturnType<typeof activeKeys>>[number];

/**
 * A new key, or undefined when the account already has MAX_ACTIVE_KEYS. The account's event
 * log records it, with where the request came from.
 */
export async function createKey(env: Env, accountId: string, name: string, origin: EventOrigin) {
  const issued = await newKeyStatement(accountId, name, MAX_ACTIVE_KEYS);
  const result = await env.DB.prepare(issued.statement.sql)
    .bind(...issued.statement.params)
    .run();
  if (result.meta.changes !== 1) return undefined;
  const detail = `${name} (${apiKeyHint(issued.key)})`;
  await recordAccountEvent(env, accountId, "key_created", origin, detail);
  return { key: issued.key, keyId: issued.keyId };
}

/**
 * Revokes the account's key: its rate limiter refuses it first (every isolate within a lease,
 * edge/middleware/auth.ts), then D1 records it. A failure between the two leaves the key
 * refused and still listed, so trying again finishes the job.
 */
export async function revokeKey(
  env: Env,
  db: Db,
  accountId: string,
  keyId: string,
  origin: EventOrigin,
): Promise<boolean> {
  const [key] = await db
    .select({ keyHash: apiKeys.keyHash, name: apiKeys.name, hint: apiKeys.hint })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)));
  if (!key) return false;
  await revokeApiKey(env, keyId, key.keyHash);
  await db
    .update(apiKeys)
    .set({ revokedAt: new Date().toISOString() })
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
  await recordAccountEvent(env, accountId, "key_revoked", origin, `${key.name} (${key.hint})`);
  return true;
}
