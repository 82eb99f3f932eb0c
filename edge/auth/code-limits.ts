// How often codes may be asked for. The shared limiter (GCRA per minute, a minute's allowance
// as a burst) paces requests; its daily window caps what one address can be sent, so nobody
// can fill a stranger's inbox, and what one client can make us send.
import type { Context } from "hono";
import type { AppEnv } from "../context.ts";
import { sha256Hex } from "../crypto.ts";
import { ApiError } from "../errors.ts";
import { enforceRate } from "../middleware/rate-limit.ts";

/** Per address: three at once (a mistyped one, a slow mail), then one each 20 s, 10 a day. */
export const CODES_PER_MINUTE_PER_EMAIL = 3;
export const CODES_PER_DAY_PER_EMAIL = 10;
/** Per client IP: a household or an office signs in from one address. */
export const CODES_PER_MINUTE_PER_IP = 10;
export const CODES_PER_DAY_PER_IP = 100;

async function takeDaily(c: Context<AppEnv>, subject: string, perDay: number, whose: string) {
  const limiter = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(subject));
  const decision = await limiter.takeDaily(perDay);
  if (!decision.allowed) {
    throw new ApiError("RateLimited", `At most ${perDay} sign-in codes a day ${whose}`, {
      userMessage: `That is as many sign-in codes as we send ${whose} in a day. Please try again tomorrow.`,
      retryAfter: decision.retryAfter,
    });
  }
}

/** Counts one code request; throws RateLimited (with Retry-After) when over a limit. */
export async function limitCodeRequests(c: Context<AppEnv>, email: string) {
  const ip = c.get("clientIp");
  // The address is hashed: limiter object names show up in logs and dashboards.
  const emailSubject = await sha256Hex(email);
  try {
    await enforceRate(c, `signin-ip:${ip}`, CODES_PER_MINUTE_PER_IP);
    await enforceRate(c, `signin-email:${emailSubject}`, CODES_PER_MINUTE_PER_EMAIL);
  } catch (err) {
    if (err instanceof ApiError && err.apiName === "RateLimited") {
      throw new ApiError("RateLimited", err.message, {
        userMessage: `Too many sign-in codes were asked for just now. Wait ${err.retryAfter ?? 60} seconds, then try again.`,
        retryAfter: err.retryAfter,
      });
    }
    throw err;
  }
  await takeDaily(c, `signin-ip-day:${ip}`, CODES_PER_DAY_PER_IP, "for one network");
  await takeDaily(c, `signin-email-day:${emailSubject}`, CODES_PER_DAY_PER_EMAIL, "to one address");
}
