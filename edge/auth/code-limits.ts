// How often codes may be asked for, and how many accounts one network may open.
//
// Anyone may ask for a code to any address, so no limit that a stranger can use up may stand
// between an address and its owner for long. The per-minute and daily caps of an address are
// kept per address AND network: a stranger spends the allowance of their own network, never
// the owner's. Across all networks an address has a higher ceiling that refuses with a wait
// (a burst, then one code every ADDRESS_PACE_MINUTES), never a day; and a network the owner
// signed in from lately is not held to it at all. Codes to one address are also re-sent, not
// replaced, while they live (edge/auth/codes.ts), so a stranger's request cannot kill them.
import type { Context } from "hono";
import type { AppEnv } from "../context.ts";
import { sha256Hex } from "../crypto.ts";
import { ApiError } from "../errors.ts";
import {
  enforceRate,
  ipSubject,
  peekDailyAllowance,
  takeDailyAllowance,
  takePacedAllowance,
} from "../middleware/rate-limit.ts";
import { hasSignedInFrom } from "../storage/accounts.ts";
import { CODE_VALID_MINUTES } from "./codes.ts";

/** Per client network (an IPv4 address, an IPv6 /64): a household or an office. */
export const CODES_PER_MINUTE_PER_NETWORK = 10;
export const CODES_PER_DAY_PER_NETWORK = 100;
/** Per address, from one network: three at once (a mistyped one, a slow mail), then one each 20 s, 10 a day. */
export const CODES_PER_MINUTE_PER_ADDRESS = 3;
export const CODES_PER_DAY_PER_ADDRESS = 10;
/** Per address, from every network together: 20 at once, then one each 15 minutes. */
export const ADDRESS_BURST = 20;
export const ADDRESS_PACE_MINUTES = 15;
/** A network the owner signed in from within this many days is not held to the ceiling. */
export const KNOWN_NETWORK_DAYS = 90;
/** New accounts (each with the free plan's credits) one network may open in a UTC day. */
export const NEW_ACCOUNTS_PER_DAY_PER_NETWORK = 10;

function tooMany(message: string, userMessage: string, retryAfter: number) {
  return new ApiError("RateLimited", message, { userMessage, retryAfter });
}

async function takeDaily(c: Context<AppEnv>, subject: string, perDay: number, whose: string) {
  const decision = await takeDailyAllowance(c.env, subject, perDay);
  if (!decision.allowed) {
    throw tooMany(
      `At most ${perDay} sign-in codes a day ${whose}`,
      `That is as many sign-in codes as we send ${whose} in a day. Please try again tomorrow.`,
      decision.retryAfter,
    );
  }
}

/** Counts one code request; throws RateLimited (with Retry-After) when over a limit. */
export async function limitCodeRequests(c: Context<AppEnv>, email: string) {
  const network = ipSubject(c.get("clientIp"));
  // Addresses are hashed: limiter object names show up in logs and dashboards.
  const [address, addressFromNetwork] = await Promise.all([
    sha256Hex(email),
    sha256Hex(`${email}\n${network}`),
  ]);
  try {
    await enforceRate(c, `signin-ip:${network}`, CODES_PER_MINUTE_PER_NETWORK);
    await enforceRate(c, `signin-email-net:${addressFromNetwork}`, CODES_PER_MINUTE_PER_ADDRESS);
  } catch (err) {
    if (err instanceof ApiError && err.apiName === "RateLimited") {
      throw new ApiError("RateLimited", err.message, {
        userMessage: `Too many sign-in codes were asked for just now. Wait ${err.retryAfter ?? 60} seconds, then try again.`,
        retryAfter: err.retryAfter,
      });
    }
    throw err;
  }
  await takeDaily(c, `signin-ip-day:${network}`, CODES_PER_DAY_PER_NETWORK, "for one network");
  await takeDaily(
    c,
    `signin-email-net-day:${addressFromNetwork}`,
    CODES_PER_DAY_PER_ADDRESS,
    "to one address from one network",
  );
  const since = new Date(Date.now() - KNOWN_NETWORK_DAYS * 86_400_000);
  if (await hasSignedInFrom(c.env.DB, email, network, since)) return;
  const paced = await takePacedAllowance(
    c.env,
    `signin-email-all:${address}`,
    ADDRESS_BURST,
    ADDRESS_PACE_MINUTES * 60_000,
  );
  if (!paced.allowed) {
    const minutes = Math.ceil(paced.retryAfter / 60);
    throw tooMany(
      `Sign-in codes to this address were asked for from many networks: the next can be sent in ${paced.retryAfter} s`,
      `Many sign-in codes for this address were asked for lately, so the newest one we sent may still be in that mailbox (codes work for ${CODE_VALID_MINUTES} minutes). Use it, or ask again in ${minutes} ${minutes === 1 ? "minute" : "minutes"}.`,
      paced.retryAfter,
    );
  }
}

const newAccountsSubject = (c: Context<AppEnv>) =>
  `new-accounts-day:${ipSubject(c.get("clientIp"))}`;

/**
 * A client on this very machine: only a local stack sees one (Cloudflare never hands a
 * loopback CF-Connecting-IP to a deployed worker). Every local client is one network there
 * (decision 0104), so the cap would only stop the stack's own users and test suites.
 */
function onLoopback(c: Context<AppEnv>): boolean {
  const ip = c.get("clientIp");
  return ip === "::1" || ipSubject(ip).startsWith("127.");
}

function tooManyAccounts(retryAfter: number) {
  return tooMany(
    `At most ${NEW_ACCOUNTS_PER_DAY_PER_NETWORK} new accounts a day from one network`,
    `That is as many new accounts as we open from one network in a day. Addresses that already have an account can still sign in; please try again tomorrow.`,
    retryAfter,
  );
}

/**
 * Throws RateLimited when this request's network has opened its accounts for today; takes
 * nothing (asked before a code is used, so a refused person keeps their code).
 */
export async function checkNewAccountAllowance(c: Context<AppEnv>) {
  if (onLoopback(c)) return;
  const decision = await peekDailyAllowance(
    c.env,
    newAccountsSubject(c),
    NEW_ACCOUNTS_PER_DAY_PER_NETWORK,
  );
  if (!decision.allowed) throw tooManyAccounts(decision.retryAfter);
}

/** Counts one new account for this request's network; throws RateLimited when over the cap. */
export async function countNewAccount(c: Context<AppEnv>) {
  if (onLoopback(c)) return;
  const decision = await takeDailyAllowance(
    c.env,
    newAccountsSubject(c),
    NEW_ACCOUNTS_PER_DAY_PER_NETWORK,
  );
  if (!decision.allowed) throw tooManyAccounts(decision.retryAfter);
}
