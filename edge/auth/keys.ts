// An account's API keys: a new key (at most MAX_ACTIVE_KEYS live at once) and revocation, each
// recorded in the account's event log. The dashboard and the OAuth connectors
// (edge/oauth/connector-key.ts) both make keys here; the rows live in edge/storage/accounts.ts.
import { newKeyStatement } from "../../schema/accounts.ts";
import { apiKeyHint } from "../../schema/api-keys.ts";
import { revokeApiKey } from "../middleware/auth.ts";
import { insertKey, liveKeyOf, markKeyRevoked } from "../storage/accounts.ts";
import { type EventOrigin, recordAccountEvent } from "./account-events.ts";

/** Enough for every environment and connector of one account; more is a leak waiting. */
export const MAX_ACTIVE_KEYS = 25;

/**
 * A new key, or undefined when the account already has MAX_ACTIVE_KEYS. The account's event
 * log records it, with where the request came from.
 */
export async function createKey(env: Env, accountId: string, name: string, origin: EventOrigin) {
  const issued = await newKeyStatement(accountId, name, MAX_ACTIVE_KEYS);
  if (!(await insertKey(env.DB, issued.statement))) return undefined;
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
  accountId: string,
  keyId: string,
  origin: EventOrigin,
): Promise<boolean> {
  const key = await liveKeyOf(env.DB, accountId, keyId);
  if (!key) return false;
  await revokeApiKey(env, keyId, key.keyHash);
  await markKeyRevoked(env.DB, keyId);
  await recordAccountEvent(env, accountId, "key_revoked", origin, `${key.name} (${key.hint})`);
  return true;
}
