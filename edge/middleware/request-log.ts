// The account's request log (decision 0250): each request made with one of its API keys to
// /v1/* or /mcp is written to `api_requests` behind the response (waitUntil), so the customer
// can find what happened to a request id they were answered. Nothing is written for a request
// that no key authenticated (no key, an unknown or revoked one, or one refused by its rate
// limit before it was known): those have no account, and must not cost a write.
import { createMiddleware } from "hono/factory";
import { routePath } from "hono/route";
import { routePattern } from "../../schema/api-requests.ts";
import type { AppEnv } from "../context.ts";
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

export const recordApiRequests = createMiddleware<AppEnv>(async (c, next) => {
  const arrived = new Date();
  const started = performance.now();
  await next();
  const keyId = c.get("apiKeyId");
  const account = c.get("account");
  if (!keyId || !account) return;
  const write = recordApiRequest(
    c.get("db"),
    {
      account_id: account.id,
      request_id: c.get("requestId"),
      method: c.req.method,
      // The pattern of the route that answered; the path as sent (ids, query) is not kept.
      route: routePattern(routePath(c)),
      status: c.res.status,
      latency_ms: Math.ceil(performance.now() - started),
      created_at: arrived.toISOString(),
    },
    dueForTrim(account.id),
  ).catch((err) => logEvent("error", "request_log.write_failed", errorFields(err)));
  try {
    c.executionCtx.waitUntil(write);
  } catch {
    // No execution context (the app called directly, as some tests do): the write still runs.
  }
});
