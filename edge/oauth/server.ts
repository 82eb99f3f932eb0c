// OAuth 2.1 for MCP clients that only speak OAuth (custom connectors in chat apps): the
// authorization server of @cloudflare/workers-oauth-provider (metadata, dynamic client
// registration, token endpoint with PKCE; grants and tokens in OAUTH_KV) with our own
// authorization page, and /mcp as the one protected resource.
import { OAuthAuthorizationServer } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import { publicBaseUrl } from "../config.ts";
import type { AppEnv } from "../context.ts";
import { refuseRefreshOfRevokedKey } from "./refresh.ts";
import { checkClientRegistration } from "./registration.ts";

export const AUTHORIZE_PATH = "/oauth/authorize";
export const TOKEN_PATH = "/oauth/token";
export const REGISTER_PATH = "/oauth/register";
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";
export const AUTHORIZATION_SERVER_METADATA_PATH = "/.well-known/oauth-authorization-server";
const RESOURCE_PATH = "/mcp";

/** Access tokens live an hour; clients refresh them for up to 30 days of disuse. */
const ACCESS_TOKEN_TTL_SECONDS = 60 * 60;
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;

/** The issuer: the public origin (edge/config.ts's one rule). */
export function issuerOf(env: Env, requestUrl: string): string {
  return publicBaseUrl(env, requestUrl);
}

export function mcpResourceOf(env: Env, requestUrl: string): string {
  return `${issuerOf(env, requestUrl)}${RESOURCE_PATH}`;
}

export function protectedResourceMetadataUrl(c: Context<AppEnv>): string {
  return `${issuerOf(c.env, c.req.url)}${PROTECTED_RESOURCE_PATH}${RESOURCE_PATH}`;
}

// The server is configured with its issuer, which comes from the environment: one per issuer.
const servers = new Map<string, OAuthAuthorizationServer<Env>>();

export function authorizationServer(env: Env, requestUrl: string) {
  const issuer = issuerOf(env, requestUrl);
  let server = servers.get(issuer);
  if (!server) {
    server = new OAuthAuthorizationServer<Env>({
      issuer,
      resources: [`${issuer}${RESOURCE_PATH}`],
      authorizeEndpoint: AUTHORIZE_PATH,
      tokenEndpoint: TOKEN_PATH,
      clientRegistrationEndpoint: REGISTER_PATH,
      accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTTL: REFRESH_TOKEN_TTL_SECONDS,
      clientRegistrationCallback: checkClientRegistration,
      tokenExchangeCallback: refuseRefreshOfRevokedKey,
    });
    servers.set(issuer, server);
  }
  return server;
}

/** The resource's RFC 9728 metadata: where its tokens come from. */
export function protectedResourceMetadata(env: Env, requestUrl: string) {
  return {
    resource: mcpResourceOf(env, requestUrl),
    authorization_servers: [issuerOf(env, requestUrl)],
    bearer_methods_supported: ["header"],
    resource_name: "Stills MCP server",
    resource_documentation: `${issuerOf(env, requestUrl)}/docs`,
  };
}
