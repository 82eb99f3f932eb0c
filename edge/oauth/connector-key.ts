// Each OAuth consent makes a key of the account for that client ("MCP: <client name>"): the
// access tokens carry it, so the client acts exactly as an API-key caller, shows up in the
// account's key list, and is cut off by revoking that key. It counts against the account's
// key cap like any other key, so consents cannot mint keys (and per-key rate limits) at will.
import type { EventOrigin } from "../auth/account-events.ts";
import { createKey, MAX_ACTIVE_KEYS } from "../auth/keys.ts";

const MAX_NAME_LENGTH = 80;

/** Where a key issued outside a request came from, for the account's event log. */
const NO_REQUEST: EventOrigin = { network: "unknown", userAgent: null };

export async function issueConnectorKey(
  env: Env,
  accountId: string,
  clientName: string,
  origin: EventOrigin = NO_REQUEST,
) {
  const name = `MCP: ${clientName}`.slice(0, MAX_NAME_LENGTH);
  const issued = await createKey(env, accountId, name, origin);
  if (!issued) {
    throw new Error(
      `Your account already holds ${MAX_ACTIVE_KEYS} API keys. Revoke one in the dashboard, then connect this app again.`,
    );
  }
  return issued;
}
