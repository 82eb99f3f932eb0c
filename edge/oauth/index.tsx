// The OAuth routes: discovery metadata, dynamic client registration and the token endpoint
// (served by the provider), and the authorization page (ours): no session → the e-mail code
// sign-in, which returns here; a session → consent; approval → a code bound to the account.
import { AuthorizationError, type AuthRequest } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import { cors } from "hono/cors";
import { createRouter } from "../app.ts";
import { eventOrigin } from "../auth/account-events.ts";
import { sameOriginForms } from "../auth/guards.ts";
import { sessionAccount } from "../auth/session.ts";
import type { AppEnv } from "../context.ts";
import { publicRate } from "../middleware/auth.ts";
import { formOf } from "../pages/forms.ts";
import { contentSecurityPolicy, pageHeaders } from "../pages/layout.tsx";
import { issueConnectorKey } from "./connector-key.ts";
import type { ConnectorProps } from "./connector-props.ts";
import { AuthorizationProblem, ConsentPage } from "./consent.tsx";
import { consentCookieFor, withProviderCookieNames } from "./consent-cookie.ts";
import {
  AUTHORIZATION_SERVER_METADATA_PATH,
  AUTHORIZE_PATH,
  authorizationServer,
  PROTECTED_RESOURCE_PATH,
  protectedResourceMetadata,
  REGISTER_PATH,
  TOKEN_PATH,
} from "./server.ts";

export const oauthRouter = createRouter();

// Discovery documents are public and read by browser-based clients too.
const PUBLIC_DOCUMENTS = [PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}/mcp`];
for (const path of PUBLIC_DOCUMENTS) {
  oauthRouter.use(path, cors({ origin: "*", allowMethods: ["GET", "OPTIONS"] }), publicRate);
  oauthRouter.get(path, (c) => c.json(protectedResourceMetadata(c.env, c.req.url)));
}

// Metadata, registration and tokens are the provider's, which does its own CORS.
for (const path of [AUTHORIZATION_SERVER_METADATA_PATH, TOKEN_PATH, REGISTER_PATH]) {
  oauthRouter.use(path, publicRate);
  oauthRouter.all(path, (c) =>
    // Hono types the context loosely; in the worker it is the runtime's ExecutionContext.
    authorizationServer(c.env, c.req.url).fetch(
      c.req.raw,
      c.env,
      c.executionCtx as ExecutionContext,
    ),
  );
}

oauthRouter.use(AUTHORIZE_PATH, publicRate, pageHeaders);
// Besides the consent handle bound to this browser's cookie, a decision is taken only from our
// own page, as every form of the site.
oauthRouter.post(AUTHORIZE_PATH, sameOriginForms);

oauthRouter.get(AUTHORIZE_PATH, async (c) => {
  const oauth = authorizationServer(c.env, c.req.url).getOAuthApi(c.env);
  let request: AuthRequest;
  try {
    request = await oauth.parseAuthRequest(c.req.raw);
  } catch (err) {
    return refuse(c, err);
  }
  const account = await sessionAccount(c);
  if (!account) {
    const here = new URL(c.req.url);
    return c.redirect(`/sign-in?next=${encodeURIComponent(here.pathname + here.search)}`, 303);
  }
  const [consent, transaction] = await Promise.all([
    oauth.describeConsent(request),
    oauth.beginConsent(request),
  ]);
  // The transaction's cookie binds the form's handle to this browser: the CSRF check.
  copyHeaders(c, transaction.headers);
  allowFormRedirect(c, request.redirectUri);
  return c.html(
    <ConsentPage consent={consent} handle={transaction.handle} email={account.email} />,
  );
});

oauthRouter.post(AUTHORIZE_PATH, async (c) => {
  const oauth = authorizationServer(c.env, c.req.url).getOAuthApi(c.env);
  const form = await formOf(c);
  const handle = typeof form.handle === "string" ? form.handle : "";
  const account = await sessionAccount(c);
  if (!account) {
    return refuse(c, new Error("You are no longer signed in."), 403);
  }
  try {
    if (form.decision !== "approve") {
      const denied = await oauth.denyConsent(withProviderCookieNames(c.req.raw), handle);
      copyHeaders(c, denied.headers);
      return c.redirect(denied.redirectTo, 302);
    }
    const approved = await oauth.approveConsent(withProviderCookieNames(c.req.raw), handle);
    const client = await oauth.lookupClient(approved.request.clientId);
    const name = client?.clientName?.trim() || approved.request.clientId;
    const { key, keyId } = await issueConnectorKey(c.env, account.id, name, eventOrigin(c));
    const props: ConnectorProps = { accountId: account.id, keyId, key };
    const { redirectTo } = await oauth.completeAuthorization({
      request: approved.request,
      userId: account.id,
      metadata: { client: name, keyId },
      scope: approved.request.scope,
      props,
    });
    copyHeaders(c, approved.headers);
    return c.redirect(redirectTo, 302);
  } catch (err) {
    return refuse(c, err);
  }
});

/** A request we cannot honour: back to the client when that is safe, else a page saying why. */
function refuse(c: Context<AppEnv>, err: unknown, status: 400 | 403 = 400) {
  if (err instanceof AuthorizationError && err.redirectTo) return c.redirect(err.redirectTo, 302);
  const message =
    err instanceof AuthorizationError
      ? err.description
      : err instanceof Error
        ? err.message
        : "The request is not valid.";
  c.header("Cache-Control", "no-store");
  return c.html(<AuthorizationProblem message={message} />, status);
}

/** The provider's binding cookies (local names on loopback http) and cache rule, onto our response. */
function copyHeaders(c: Context<AppEnv>, from: Headers) {
  for (const cookie of from.getSetCookie()) {
    c.header("Set-Cookie", consentCookieFor(c.req.url, cookie), { append: true });
  }
  c.header("Cache-Control", from.get("cache-control") ?? "no-store");
}

/**
 * Browsers hold the redirect that follows a form post to the page's form-action: the consent
 * page must allow the client's own redirect URI, and only that one.
 */
function allowFormRedirect(c: Context<AppEnv>, redirectUri: string) {
  const target = new URL(redirectUri);
  const source = target.origin !== "null" ? target.origin : `${target.protocol}`;
  c.header(
    "Content-Security-Policy",
    contentSecurityPolicy().replace("form-action 'self'", `form-action 'self' ${source}`),
  );
}
