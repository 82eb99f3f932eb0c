// An OAuth grant lives as long as the connector key it acts through (edge/oauth/connector-key.ts):
// revoking the key revokes the client's grants, so its refresh token cannot mint new access
// tokens for a key that is gone. A refresh through a key revoked some other way is refused by
// ./refresh.ts.
import { publicBaseUrl } from "../config.ts";
import { errorFields, logEvent } from "../log.ts";
import { authorizationServer } from "./server.ts";

/** The grants of `accountId` that act through key `keyId` are revoked; returns how many. */
export async function revokeConnectorGrants(
  env: Env,
  accountId: string,
  keyId: string,
): Promise<number> {
  // Grants are kept per user, whichever issuer granted them.
  const oauth = authorizationServer(env, publicBaseUrl(env)).getOAuthApi(env);
  let revoked = 0;
  let cursor: string | undefined;
  do {
    const page = await oauth.listUserGrants(accountId, { cursor });
    for (const grant of page.items) {
      if ((grant.metadata as { keyId?: string } | undefined)?.keyId !== keyId) continue;
      await oauth.revokeGrant(grant.id, accountId);
      revoked++;
    }
    cursor = page.cursor;
  } while (cursor);
  return revoked;
}

/**
 * Revocation's OAuth side, called once the key is revoked in D1. A failure here is logged, not
 * thrown: the key itself is revoked, its access tokens are refused with it, and a refresh
 * through it is refused by ./refresh.ts.
 */
export async function revokeGrantsOfKey(env: Env, accountId: string, keyId: string) {
  try {
    const revoked = await revokeConnectorGrants(env, accountId, keyId);
    if (revoked > 0) logEvent("info", "oauth.grants_revoked", { account: accountId, revoked });
  } catch (err) {
    logEvent("error", "oauth.grant_revoke_failed", { account: accountId, ...errorFields(err) });
  }
}
