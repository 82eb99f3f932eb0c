// Dashboard sessions. The cookie holds an opaque random token; D1 keeps only its SHA-256, so a
// copy of the database signs nobody in. Sessions slide: each use moves the expiry 30 days on
// (written at most once an hour), and signing out deletes the row, so the token is dead at once.
//
// `sessionAccount(c)` is the contract other parts rely on (the MCP OAuth page): the signed-in
// account of this request, or undefined.

import { and, eq, gt, lte } from "drizzle-orm";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { type AccountRow, accounts, sessions } from "../../schema/db.ts";
import type { AppEnv } from "../context.ts";
import { sha256Hex, toBase64 } from "../crypto.ts";

export const SESSION_DAYS = 30;
const SESSION_MS = SESSION_DAYS * 86_400_000;
/** A session's expiry is rewritten only once it has slid this far: one write an hour at most. */
const SLIDE_AFTER_MS = 3600_000;
/** Tokens are 43 characters; anything much longer is not one of ours and is not hashed. */
const MAX_TOKEN_LENGTH = 100;

/**
 * Over HTTPS the cookie is `__Host-` prefixed (Secure, no Domain, Path=/: no sibling subdomain
 * can plant or widen it). Plain http is accepted only on loopback (`npm start`, tests), where a
 * Secure cookie would not be sent back by every client, so there it has a plain name and no
 * Secure flag. Any other plain-http request gets the Secure cookie, which it cannot send back.
 */
export function sessionCookie(c: Context<AppEnv>): { name: string; secure: boolean } {
  return isLoopbackHttp(c.req.url)
    ? { name: "stills_session", secure: false }
    : { name: "__Host-stills_session", secure: true };
}

/** Plain http to this machine (`npm start`, tests): where cookies go without Secure. */
export function isLoopbackHttp(requestUrl: string): boolean {
  const url = new URL(requestUrl);
  return url.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
}

function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return toBase64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function writeCookie(c: Context<AppEnv>, token: string) {
  const cookie = sessionCookie(c);
  setCookie(c, cookie.name, token, {
    httpOnly: true,
    secure: cookie.secure,
    sameSite: "Lax",
    path: "/",
    maxAge: SESSION_MS / 1000,
  });
}

/** Starts a session for `accountId`: the row in D1 and the cookie on the response. */
export async function startSession(c: Context<AppEnv>, accountId: string, now = Date.now()) {
  const token = newToken();
  const db = c.get("db");
  await db.batch([
    // Sessions that ran out are dropped as their owner signs in again.
    db
      .delete(sessions)
      .where(
        and(
          eq(sessions.accountId, accountId),
          lte(sessions.expiresAt, new Date(now).toISOString()),
        ),
      ),
    db.insert(sessions).values({
      tokenHash: await sha256Hex(token),
      accountId,
      expiresAt: new Date(now + SESSION_MS).toISOString(),
    }),
  ]);
  writeCookie(c, token);
}

/** The account of the request's live session, sliding the session's expiry when it is due. */
export async function sessionAccount(
  c: Context<AppEnv>,
  now = Date.now(),
): Promise<AccountRow | undefined> {
  const token = getCookie(c, sessionCookie(c).name);
  if (!token || token.length > MAX_TOKEN_LENGTH) return undefined;
  const tokenHash = await sha256Hex(token);
  const db = c.get("db");
  const [row] = await db
    .select({ expiresAt: sessions.expiresAt, account: accounts })
    .from(sessions)
    .innerJoin(accounts, eq(accounts.id, sessions.accountId))
    .where(
      and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, new Date(now).toISOString())),
    )
    .limit(1);
  if (!row) return undefined;
  if (Date.parse(row.expiresAt) - now < SESSION_MS - SLIDE_AFTER_MS) {
    await db
      .update(sessions)
      .set({ expiresAt: new Date(now + SESSION_MS).toISOString() })
      .where(eq(sessions.tokenHash, tokenHash));
    writeCookie(c, token);
  }
  return row.account;
}

/** Ends the request's session in D1 (so its token is dead everywhere) and clears the cookie. */
export async function endSession(c: Context<AppEnv>) {
  const cookie = sessionCookie(c);
  const token = getCookie(c, cookie.name);
  if (token && token.length <= MAX_TOKEN_LENGTH) {
    await c
      .get("db")
      .delete(sessions)
      .where(eq(sessions.tokenHash, await sha256Hex(token)));
  }
  deleteCookie(c, cookie.name, { path: "/", secure: cookie.secure, httpOnly: true });
}
