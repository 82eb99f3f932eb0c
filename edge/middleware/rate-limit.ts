// Rate limits live in Durable Objects (edge/durable/rate-limiter.ts), one per subject.
import type { Context } from "hono";
import { PUBLIC_REQUESTS_PER_MINUTE } from "../../schema/plans.ts";
import { parseIpv6 } from "../../schema/url-safety.ts";
import type { AppEnv } from "../context.ts";
import type { RateDecision } from "../durable/rate-limiter.ts";
import { ApiError } from "../errors.ts";

function limiterFor(env: Env, subject: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(subject));
}

let testClock: (() => number) | undefined;

/**
 * Lets a test run minutes of traffic in simulated time (the limiter then takes its time from
 * here instead of its own clock); undefined restores the real clock.
 */
export function setLimiterClock(clock: (() => number) | undefined) {
  testClock = clock;
}

/**
 * The address a limit counts. An IPv6 client is counted by its /64: one subscriber usually
 * holds a whole /64 and can use a new address in it for every request. An IPv4-mapped IPv6
 * address is the IPv4 client it maps.
 */
export function ipSubject(ip: string): string {
  if (!ip.includes(":")) return ip;
  const groups = parseIpv6(ip.replace(/%.*$/, ""));
  if (!groups) return ip;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join(".");
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}

/**
 * Leases: a subject sending many requests to one isolate takes up to two seconds of its
 * demand (and of its allowance) from its Durable Object at once and spends it locally, so the
 * limiter's round trip is paid once per lease instead of once per request. The object has
 * already counted what it leased, so admissions never exceed the limit; tokens a lease leaves
 * unspent when it runs out are lost, which can only admit fewer. Below 120 requests a minute
 * a lease is one request: the common case behaves exactly as a per-request check. (Leases of
 * one second cost an authenticated read at scale rates a limiter call every eight requests,
 * the largest share of its time after D1.)
 */
const LEASE_SECONDS = 2;
export const LEASE_MS = LEASE_SECONDS * 1000;
const leases = new Map<string, { tokens: number; until: number; decision: RateDecision }>();
const demand = new Map<string, { second: number; count: number; previous: number }>();
const MAX_TRACKED = 10_000;

function recordDemand(subject: string, now: number): number {
  const second = Math.floor(now / 1000);
  let seen = demand.get(subject);
  if (!seen || seen.second < second - 1) seen = { second, count: 0, previous: 0 };
  else if (seen.second === second - 1) seen = { second, count: 0, previous: seen.count };
  seen.count++;
  if (demand.size >= MAX_TRACKED) demand.clear();
  demand.set(subject, seen);
  return Math.max(seen.count, seen.previous);
}

/** A lease being fetched per subject: concurrent requests wait for it instead of each
 * fetching (and overwriting) a lease of their own, which once refused most of a burst. */
const fetching = new Map<string, Promise<unknown>>();

function fromLease(subject: string, now: number): RateDecision | undefined {
  const lease = leases.get(subject);
  if (!lease || lease.tokens <= 0 || lease.until <= now) return undefined;
  lease.tokens--;
  return { ...lease.decision, remaining: lease.decision.remaining + lease.tokens };
}

async function decide(env: Env, subject: string, perMinute: number): Promise<RateDecision> {
  const wanted = recordDemand(subject, testClock?.() ?? Date.now());
  for (;;) {
    const leased = fromLease(subject, testClock?.() ?? Date.now());
    if (leased) return leased;
    const pending = fetching.get(subject);
    if (!pending) break;
    await pending;
  }
  const now = testClock?.() ?? Date.now();
  const perSecond = Math.floor(perMinute / 60);
  const leaseSize = perSecond > 1 ? Math.min(wanted, perSecond) * LEASE_SECONDS : 1;
  const call = limiterFor(env, subject).take(perMinute, leaseSize, testClock ? now : undefined);
  if (fetching.size >= MAX_TRACKED) fetching.clear();
  fetching.set(
    subject,
    call.catch(() => {}),
  );
  let decision: RateDecision;
  try {
    decision = await call;
  } finally {
    fetching.delete(subject);
  }
  if (leases.size >= MAX_TRACKED) leases.clear();
  if (decision.granted > 1) {
    leases.set(subject, { tokens: decision.granted - 1, until: now + LEASE_MS, decision });
  } else {
    leases.delete(subject);
  }
  return { ...decision, remaining: decision.remaining + Math.max(0, decision.granted - 1) };
}

function admit(c: Context<AppEnv>, decision: RateDecision, perMinute: number) {
  c.set("rate", decision);
  if (!decision.allowed) {
    throw new ApiError("RateLimited", `Rate limit of ${perMinute} requests per minute exceeded`, {
      userMessage: "Too many requests. Please slow down and retry shortly.",
      retryAfter: decision.retryAfter,
    });
  }
}

/** Counts one request for `subject`; throws RateLimited when over `perMinute`. */
export async function enforceRate(c: Context<AppEnv>, subject: string, perMinute: number) {
  admit(c, await decide(c.env, subject, perMinute), perMinute);
}

const keySubject = (keyId: string) => `key:${keyId}`;

/** An API key's limiter, which also knows whether the key is revoked. */
export function keyLimiter(env: Env, keyId: string) {
  return limiterFor(env, keySubject(keyId));
}

/**
 * Counts one request of an API key: false when the key's limiter knows it is revoked (the
 * request is then neither counted nor given rate headers), and throws RateLimited when over
 * `perMinute`. A lease (above) answers only for LEASE_SECONDS, so a key revoked elsewhere is
 * refused within that time on every isolate.
 */
export async function enforceKeyRate(
  c: Context<AppEnv>,
  keyId: string,
  perMinute: number,
): Promise<boolean> {
  const decision = await decide(c.env, keySubject(keyId), perMinute);
  if (decision.revoked) return false;
  admit(c, decision, perMinute);
  return true;
}

/** Marks a key revoked in its limiter (kept in storage) and drops this isolate's lease. */
export async function revokeKeyLimiter(env: Env, keyId: string) {
  await keyLimiter(env, keyId).revoke();
  // After the call: a lease fetched while it ran was given before the revocation.
  leases.delete(keySubject(keyId));
}

export function enforceIpRate(c: Context<AppEnv>) {
  return enforceRate(c, `ip:${ipSubject(c.get("clientIp"))}`, PUBLIC_REQUESTS_PER_MINUTE);
}

/** One of `subject`'s `perDay` (a fixed window per UTC day). */
export function takeDailyAllowance(env: Env, subject: string, perDay: number) {
  return limiterFor(env, subject).takeDaily(perDay, testClock?.());
}

/** What taking one of `subject`'s `perDay` would decide now, taking none. */
export function peekDailyAllowance(env: Env, subject: string, perDay: number) {
  return limiterFor(env, subject).peekDaily(perDay, testClock?.());
}

/** One of `subject`'s paced allowance: `burst` at once, then one each `intervalMs`. */
export function takePacedAllowance(env: Env, subject: string, burst: number, intervalMs: number) {
  return limiterFor(env, subject).takePaced(burst, intervalMs, testClock?.());
}

/** Writes the X-RateLimit-* headers of the request's decision onto the response. */
export function applyRateHeaders(c: Context<AppEnv>, response: Response = c.res) {
  const rate = c.get("rate");
  if (!rate) return;
  response.headers.set("X-RateLimit-Limit", String(rate.limit));
  response.headers.set("X-RateLimit-Remaining", String(rate.remaining));
  response.headers.set("X-RateLimit-Reset", String(rate.reset));
}
