// Middleware of the pages: who may post a form, and who may see the dashboard.

import { csrf } from "hono/csrf";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "../context.ts";
import { ApiError } from "../errors.ts";
import { sessionAccount } from "./session.ts";

const originCheck = csrf();

/**
 * Cross-site request forgery: a form post is taken only from our own pages (Hono's csrf check:
 * Sec-Fetch-Site same-origin, or an Origin equal to ours). Its refusal is answered in the
 * spec's error shape, like every other error.
 */
export const sameOriginForms = createMiddleware<AppEnv>(async (c, next) => {
  try {
    await originCheck(c, async () => {});
  } catch (err) {
    if (err instanceof HTTPException && err.status === 403) {
      throw new ApiError("InvalidRequest", "Cross-site form submission refused", {
        userMessage:
          "This form was sent from another site, so it was refused. Open the page on Stills and send it again.",
      });
    }
    throw err;
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
