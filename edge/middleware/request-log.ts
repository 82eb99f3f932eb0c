// The account's request log (decision 0250): each request made with one of its API keys to
// /v1/* or /mcp is written to `api_requests` behind the response (waitUntil), so the customer
// can find what happened to a request id they were answered. Nothing is written for a request
// that no key authenticated (no key, an unknown or revoked one, or one refused by its rate
// limit before it was known): those have no account, and must not cost a write.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { routePath } from "hono/route";
import { routePattern } from "../../schema/api-requests.ts";
import type { AppEnv } from "../context.ts";
import { ApiError } from "../errors.ts";
import { errorFields, logEvent } from "../log.ts";
import { recordApiRequest } from "../storage/api-requests.ts";

/**
 * A write trims its account to the bound once in TRIM_EVERY of this isolate's writes for it
 * (the first one included); the cron trims every account that wrote since its last run.
 */
const TRIM_EVERY = 25;
const WRITES_TRACKED = 10_000;
const writesByAccount = new Map<string, number>();

function dueForTrim(accountId: string): boolean {
  const written = writesByAccount.get(accountId) ?? 0;
  if (writesByAccount.size >= WRITES_TRACKED) writesByAccount.clear();
  writesByAccount.set(accountId, written + 1);
  return written % TRIM_EVERY === 0;
}

/**
 * The error's `data.name` the answer carried: the thrown ApiError's, or for anything else that
 * ended in the error shape (edge/app.ts turns it into one) the body's own, read from a copy.
 */
async function errorName(c: Context<AppEnv>): Promise<string | null> {
  if (c.res.status < 400) return null;
  if (c.error instanceof ApiError) return c.error.apiName;
  if (!c.res.headers.get("content-type")?.includes("json")) return null;
  try {
    const body = (await c.res.clone().json()) as { data?: { name?: unknown } };
    return typeof body.data?.name === "string" ? body.data.name.slice(0, 64) : null;
  } catch {
    return null;
  }
}

export const recordApiRequests = createMiddleware<AppEnv>(async (c, next) => {
  const arrived = new Date();
  const started = performance.now();
  await next();
  const keyId = c.get("apiKeyId");
  const account = c.get("account");
  if (!keyId || !account) return;
  const latency = Math.ceil(performance.now() - started);
  const entry = {
    account_id: account.id,
    request_id: c.get("requestId"),
    method: c.req.method,
    // The pattern of the route that answered; the path as sent (ids, query) is not kept.
    route: routePattern(routePath(c)),
    status: c.res.status,
    latency_ms: latency,
    created_at: arrived.toISOString(),
  };
  const trim = dueForTrim(account.id);
  const write = errorName(c)
    .then((error) => recordApiRequest(c.get("db"), { ...entry, error }, trim))
    .catch((err) => logEvent("error", "request_log.write_failed", errorFields(err)));
  try {
    c.executionCtx.waitUntil(write);
  } catch {
    // No execution context (the app called directly, as some tests do): the write still runs.
  }
});
