// Rate limits live in Durable Objects (edge/durable/rate-limiter.ts), one per subject.
import type { Context } from "hono";
import { PUBLIC_REQUESTS_PER_MINUTE } from "../../schema/plans.ts";
import type { AppEnv } from "../context.ts";
import type { RateDecision } from "../durable/rate-limiter.ts";
import { ApiError } from "../errors.ts";

function limiterFor(env: Env, subject: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(subject));
}

/** Counts one request for `subject`; throws RateLimited when over `perMinute`. */
export async function enforceRate(c: Context<AppEnv>, subject: string, perMinute: number) {
  const decision = await limiterFor(c.env, subject).take(perMinute);
  c.set("rate", decision);
  if (!decision.allowed) {
    throw new ApiError("RateLimited", `Rate limit of ${perMinute} requests per minute exceeded`, {
      userMessage: "Too many requests. Please slow down and retry shortly.",
      retryAfter: decision.retryAfter,
    });
  }
}

export function enforceIpRate(c: Context<AppEnv>) {
  return enforceRate(c, `ip:${c.get("clientIp")}`, PUBLIC_REQUESTS_PER_MINUTE);
}

/** The demo's per-IP daily allowance, counted apart from the per-minute rate. */
export async function takeDemoAllowance(c: Context<AppEnv>): Promise<RateDecision> {
  const perDay = Number.parseInt(c.env.STILLS_DEMO_DAILY_LIMIT || "5", 10);
  return limiterFor(c.env, `demo:${c.get("clientIp")}`).takeDaily(perDay);
}

/** Writes the X-RateLimit-* headers of the request's decision onto the response. */
export function applyRateHeaders(c: Context<AppEnv>, response: Response = c.res) {
  const rate = c.get("rate");
  if (!rate) return;
  response.headers.set("X-RateLimit-Limit", String(rate.limit));
  response.headers.set("X-RateLimit-Remaining", String(rate.remaining));
  response.headers.set("X-RateLimit-Reset", String(rate.reset));
}
