// Rate limiting with GCRA (the generic cell rate algorithm): one Durable Object per subject
// (an API key or a client IP), so every request for that subject is counted in one place.
// The theoretical arrival time is kept in storage, so an evicted object loses nothing.
// An API key's object also knows whether the key was revoked (revoke()): every request of a
// key reaches its object, or spends a lease it gave at most two seconds before, so this is
// how a revocation reaches every isolate (edge/middleware/auth.ts).
import { DurableObject } from "cloudflare:workers";

export interface RateDecision {
  allowed: boolean;
  /** Requests admitted by this call (a caller may take several at once; see take()). */
  granted: number;
  limit: number;
  remaining: number;
  /** Seconds until the allowance is whole again. */
  reset: number;
  /** Seconds to wait before the next request can pass (0 when allowed). */
  retryAfter: number;
  /** Set when the subject is a revoked API key: nothing is admitted or counted. */
  revoked?: true;
}

/** How long a new count may live only in memory before it is written to storage. */
export const FLUSH_AFTER_MS = 1000;

export class RateLimiter extends DurableObject<Env> {
  /** In-memory copy of the stored state; storage stays the source of truth on restart. */
  private tat: number | undefined;
  private revoked = false;
  private flushTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * Counts are written behind, at most once per FLUSH_AFTER_MS: a storage write per request
   * was the largest single cost of an authenticated read. An object evicted in that window
   * forgets under a second of counts, which lets at most that many extra requests through.
   */
  private scheduleFlush() {
    this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  }

  async flush(): Promise<void> {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.tat !== undefined) await this.ctx.storage.put("tat", this.tat);
  }

  /** Reads the stored state once per object lifetime. */
  private async load() {
    if (this.tat !== undefined) return;
    const stored = await this.ctx.storage.get<number | boolean>(["tat", "revoked"]);
    this.tat ??= (stored.get("tat") as number | undefined) ?? 0;
    this.revoked ||= stored.get("revoked") === true;
  }

  /** Refuses the key from now on, for good; written before it returns. */
  async revoke(): Promise<void> {
    await this.load();
    this.revoked = true;
    await this.ctx.storage.put("revoked", true);
  }

  /**
   * Admits up to `want` requests at `perMinute`, with a burst of a whole minute's allowance:
   * as many as the allowance holds now, at least one or none. `now` is injectable for tests.
   */
  async take(perMinute: number, want = 1, now = Date.now()): Promise<RateDecision> {
    const interval = 60_000 / perMinute;
    const burstWindow = interval * perMinute;
    await this.load();
    if (this.revoked) {
      return {
        allowed: false,
        granted: 0,
        limit: perMinute,
        remaining: 0,
        reset: 0,
        retryAfter: 0,
        revoked: true,
      };
    }
    const tat = Math.max(this.tat ?? 0, now);
    const granted = Math.min(want, Math.floor((now + burstWindow - tat) / interval + 1e-9));
    if (granted < 1) {
      return {
        allowed: false,
        granted: 0,
        limit: perMinute,
        remaining: 0,
        reset: Math.ceil((tat - now) / 1000),
        retryAfter: Math.max(1, Math.ceil((tat + interval - burstWindow - now) / 1000)),
      };
    }
    const newTat = tat + granted * interval;
    this.tat = newTat;
    this.scheduleFlush();
    return {
      allowed: true,
      granted,
      limit: perMinute,
      remaining: Math.floor((now + burstWindow - newTat) / interval),
      reset: Math.ceil((newTat - now) / 1000),
      retryAfter: 0,
    };
  }

  /**
   * GCRA with its own burst and spacing, for allowances counted in minutes rather than per
   * minute (sign-in codes to one address from every network: a burst, then one each
   * `intervalMs`). A refusal says how long to wait, never a whole day. Written at once: these
   * subjects see few requests.
   */
  async takePaced(burst: number, intervalMs: number, now = Date.now()): Promise<RateDecision> {
    await this.load();
    const tat = Math.max(this.tat ?? 0, now);
    const allowedFrom = tat - (burst - 1) * intervalMs;
    if (now < allowedFrom) {
      const wait = Math.ceil((allowedFrom - now) / 1000);
      return {
        allowed: false,
        granted: 0,
        limit: burst,
        remaining: 0,
        reset: wait,
        retryAfter: wait,
      };
    }
    this.tat = tat + intervalMs;
    await this.ctx.storage.put("tat", this.tat);
    return {
      allowed: true,
      granted: 1,
      limit: burst,
      remaining: burst - Math.ceil((this.tat - now) / intervalMs),
      reset: Math.ceil((this.tat - now) / 1000),
      retryAfter: 0,
    };
  }

  /** A fixed window per UTC day (the demo's per-IP daily allowance). */
  async takeDaily(perDay: number, now = Date.now()): Promise<RateDecision> {
    const day = Math.floor(now / 86_400_000);
    const key = `day:${day}`;
    const used = (await this.ctx.storage.get<number>(key)) ?? 0;
    const reset = Math.ceil(((day + 1) * 86_400_000 - now) / 1000);
    if (used >= perDay) {
      return { allowed: false, granted: 0, limit: perDay, remaining: 0, reset, retryAfter: reset };
    }
    await this.ctx.storage.put(key, used + 1);
    // Yesterday's counter is no longer needed.
    await this.ctx.storage.delete(`day:${day - 1}`);
    return {
      allowed: true,
      granted: 1,
      limit: perDay,
      remaining: perDay - used - 1,
      reset,
      retryAfter: 0,
    };
  }

  /** What takeDaily would allow now, without taking anything. */
  async peekDaily(perDay: number, now = Date.now()): Promise<RateDecision> {
    const day = Math.floor(now / 86_400_000);
    const used = (await this.ctx.storage.get<number>(`day:${day}`)) ?? 0;
    const reset = Math.ceil(((day + 1) * 86_400_000 - now) / 1000);
    const remaining = Math.max(0, perDay - used);
    return {
      allowed: remaining > 0,
      granted: 0,
      limit: perDay,
      remaining,
      reset,
      retryAfter: remaining > 0 ? 0 : reset,
    };
  }

  /**
   * Gives back one use of `day`'s allowance (a demo preview that failed), once per `token`:
   * a settlement retried after a crash gives nothing twice. A past day is left alone (its
   * window is over), and so is a day with nothing taken. True when something was given back.
   */
  async giveBackDaily(day: number, token: string, now = Date.now()): Promise<boolean> {
    if (day !== Math.floor(now / 86_400_000)) return false;
    const used = (await this.ctx.storage.get<number>(`day:${day}`)) ?? 0;
    const given = (await this.ctx.storage.get<string[]>(`given:${day}`)) ?? [];
    if (used <= 0 || given.includes(token)) return false;
    await this.ctx.storage.put({ [`day:${day}`]: used - 1, [`given:${day}`]: [...given, token] });
    await this.ctx.storage.delete(`given:${day - 1}`);
    return true;
  }
}
