// OAuth access tokens at /mcp. A token is bound to its account through a key of that account
// made at consent (the connector's key, edge/oauth/connector-key.ts): a valid token is swapped
// for that key before the app sees the request, so MCP over OAuth goes through exactly the
// API-key path — the same account, rate limit and answers — and revoking the key in the
// dashboard disconnects the client. Anything else passes through untouched, so a bad token
// gets the API-key path's answer for a malformed credential.
import { KEY_PREFIX } from "../../schema/api-keys.ts";
import { errorFields, logEvent } from "../log.ts";
import type { ConnectorProps } from "./connector-props.ts";
import { authorizationServer, mcpResourceOf } from "./server.ts";

const RESOURCE_PATH = "/mcp";

/** The provider's access tokens are `userId:grantId:secret`. */
const OAUTH_TOKEN = /^Bearer\s+([^\s:]+:[^\s:]+:[^\s:]+)\s*$/i;

export async function withConnectorKey(request: Request, env: Env): Promise<Request> {
  if (new URL(request.url).pathname !== RESOURCE_PATH) return request;
  const token = OAUTH_TOKEN.exec(request.headers.get("authorization") ?? "")?.[1];
  if (!token || token.startsWith(KEY_PREFIX)) return request;
  let key: string | undefined;
  try {
    const validated = await authorizationServer(env, request.url).validateToken<ConnectorProps>(
      mcpResourceOf(env, request.url),
      token,
      env,
    );
    key = validated?.props?.key;
  } catch (err) {
    // The token store failing is no reason to fail the request: it is answered as unproven.
    logEvent("error", "oauth.token_check_failed", errorFields(err));
  }
  if (!key) return request;
  const headers = new Headers(request.headers);
  headers.set("authorization", `Bearer ${key}`);
  // The key alone speaks for the caller: an X-API-Key sent beside the token must not win.
  headers.delete("x-api-key");
  return new Request(request, { headers });
}
