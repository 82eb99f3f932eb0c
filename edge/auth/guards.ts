// Middleware of the pages: who may post a form, and who may see the dashboard.

import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../context.ts";
import { ApiError } from "../errors.ts";
import { sessionAccount } from "./session.ts";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Whether a browser sent this from one of our own pages. Sec-Fetch-Site, where a browser sends
 * it, is the answer (`same-site` is a sibling subdomain, not us); else the Origin must be ours.
 * A request with neither came from no browser page of ours.
 */
export function isSameOrigin(headers: Headers, requestUrl: string): boolean {
  const site = headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin";
  return headers.get("origin") === new URL(requestUrl).origin;
}

/**
 * Cross-site request forgery: every page request that is not GET, HEAD or OPTIONS is taken only
 * from our own pages, whatever its body. (Hono's csrf() checks form bodies only: a JSON post
 * with no Origin went through, saved in browsers only by CORS and SameSite=Lax.) The refusal
 * is answered in the spec's error shape, like every other error. Every page route that
 * changes something goes through this one middleware (test/edge/csrf.security.test.ts walks
 * the app's routes to hold that).
 */
export const sameOriginForms = createMiddleware<AppEnv>(async (c, next) => {
  if (!SAFE_METHODS.has(c.req.method) && !isSameOrigin(c.req.raw.headers, c.req.url)) {
    throw new ApiError("InvalidRequest", "Cross-site form submission refused", {
      userMessage:
        "This form was sent from another site, so it was refused. Open the page on Stills and send it again.",
    });
  }
  await next();
});

/** Pages of the dashboard: the signed-in account, or the sign-in page that comes back here. */
export const requireSession = createMiddleware<AppEnv>(async (c, next) => {
  const account = await sessionAccount(c);
  if (!account) {
    // A form posted after the session ended returns to the page it came from.
    const back = c.req.method === "GET" ? c.req.path + new URL(c.req.url).search : "/dashboard";
    return c.redirect(`/sign-in?next=${encodeURIComponent(back)}`, 303);
  }
  c.set("account", account);
  await next();
});
