// A refresh token outlives nothing it acts through: the token endpoint refreshes a grant only
// while the connector key it carries (edge/oauth/connector-key.ts) is live. Revoking the key in
// the dashboard revokes its grants at once (./grants.ts); this also covers a key revoked any
// other way, or a revocation whose OAuth side failed.
import {
  OAuthError,
  type TokenExchangeCallbackOptions,
  type TokenExchangeCallbackResult,
} from "@cloudflare/workers-oauth-provider";
import { liveKeyOf } from "../storage/accounts.ts";
import type { ConnectorProps } from "./connector-props.ts";

/**
 * The token endpoint's check of a refresh: the grant's key must still be live. `invalid_grant`
 * also makes the provider revoke the grant and its tokens.
 */
export async function refuseRefreshOfRevokedKey(
  options: TokenExchangeCallbackOptions<Env>,
): Promise<TokenExchangeCallbackResult | undefined> {
  if (options.grantType !== "refresh_token") return undefined;
  const keyId = (options.props as Partial<ConnectorProps> | undefined)?.keyId;
  if (keyId && (await liveKeyOf(options.env.DB, options.userId, keyId))) return undefined;
  throw new OAuthError("invalid_grant", {
    description: "The API key this connection acted through has been revoked. Connect again.",
  });
}
