// The demo's per-address daily allowance (DESIGN.md "Demo"), counted in a RateLimiter object
// named by the address's hash, the one demo_jobs.ip_hash keeps: a preview that fails is given
// back by its settlement, which knows only the row (docs/decisions/0131).
import type { DemoAllowance } from "../../schema/api.ts";
import { edgeConfig } from "../config.ts";
import { sha256Hex } from "../crypto.ts";
import type { RateDecision } from "../durable/rate-limiter.ts";
import { errorFields, logEvent } from "../log.ts";
import { ipSubject } from "../middleware/rate-limit.ts";
import { demoJobOrigin } from "./store/demo.ts";

const DAY_MS = 86_400_000;

function demoLimiter(env: Env, ipHash: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`demo-day:${ipHash}`));
}

/** The hash a demo row and the allowance name the client by (an IPv6 client by its /64). */
export function demoIpHash(clientIp: string): Promise<string> {
  return sha256Hex(ipSubject(clientIp));
}

export function allowanceOf(decision: RateDecision, now = Date.now()): DemoAllowance {
  return {
    limit: decision.limit,
    remaining: decision.remaining,
    resets_at: new Date(Math.ceil(now / DAY_MS) * DAY_MS).toISOString(),
  };
}

/** Takes one preview of today's allowance for this client address. */
export async function takeDemoPreview(env: Env, ipHash: string) {
  return demoLimiter(env, ipHash).takeDaily(edgeConfig(env).demoDailyLimit);
}

/** What is left of today's allowance for the visitor, without taking any (the landing page). */
export async function demoAllowanceLeft(env: Env, clientIp: string): Promise<DemoAllowance> {
  const limiter = demoLimiter(env, await demoIpHash(clientIp));
  return allowanceOf(await limiter.peekDaily(edgeConfig(env).demoDailyLimit));
}

/**
 * A failed preview does not use the day's allowance: its settlement gives it back, once per
 * job, and only on the UTC day it was taken. Never throws: the job's failure is already
 * written, and a retried settlement would not come back here.
 */
export async function giveBackDemoPreview(env: Env, jobId: string): Promise<void> {
  try {
    const row = await demoJobOrigin(env.DB, jobId);
    if (!row) return;
    const day = Math.floor(Date.parse(row.created_at) / DAY_MS);
    const given = await demoLimiter(env, row.ip_hash).giveBackDaily(day, jobId);
    logEvent("info", "demo.preview_given_back", { job: jobId, given });
  } catch (err) {
    logEvent("error", "demo.give_back_failed", { job: jobId, ...errorFields(err) });
  }
}
