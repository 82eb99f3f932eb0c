// Nobody can lock a person out of sign-in: a repeated request re-sends the live code instead of
// killing it, the caps of an address are kept per network, and the ceiling an address has
// across all networks refuses with a wait, never a day, and never on a network its owner signed
// in from. Also the daily cap on new accounts per network.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import {
  ADDRESS_BURST,
  ADDRESS_PACE_MINUTES,
  CODES_PER_DAY_PER_ADDRESS,
  NEW_ACCOUNTS_PER_DAY_PER_NETWORK,
} from "../../edge/auth/code-limits.ts";
import { RESEND_MIN_MINUTES } from "../../edge/auth/codes.ts";
import { setLimiterClock } from "../../edge/middleware/rate-limit.ts";
import { Visitor } from "./support/visitor.ts";

const newEmail = () => `${crypto.randomUUID()}@example.com`;

async function codesMailedTo(email: string): Promise<string[]> {
  const { results } = await env.DB.prepare(
    "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at, rowid",
  )
    .bind(email)
    .all<{ code: string }>();
  return results.map((r) => r.code);
}

async function latestCode(email: string): Promise<string> {
  const codes = await codesMailedTo(email);
  if (codes.length === 0) throw new Error(`no mail for ${email}`);
  return codes[codes.length - 1];
}

async function ask(visitor: Visitor, email: string) {
  return visitor.post("/sign-in", { email });
}

async function signInWith(visitor: Visitor, email: string, code: string) {
  return visitor.post("/sign-in/code", { email, code });
}

/** Moves the limiters' clock on; D1's rows (code expiry) keep real time. */
function clockAt(start: number) {
  let now = start;
  setLimiterClock(() => now);
  return {
    advance(ms: number) {
      now += ms;
    },
  };
}

afterEach(() => setLimiterClock(undefined));

describe("a repeated code request", () => {
  it("re-sends the live code: a stranger's requests in between do not kill the owner's code", async () => {
    const email = newEmail();
    const owner = new Visitor();
    expect((await ask(owner, email)).status).toBe(303);
    const mailed = await latestCode(email);
    for (let i = 0; i < 3; i++) expect((await ask(new Visitor(), email)).status).toBe(303);
    const codes = await codesMailedTo(email);
    expect(codes).toHaveLength(4);
    expect(new Set(codes)).toEqual(new Set([mailed]));
    const signedIn = await signInWith(owner, email, mailed);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toBe("/dashboard");
  });

  it("keeps the code's tries and expiry: a re-send does not give a guesser five more tries", async () => {
    const email = newEmail();
    await ask(new Visitor(), email);
    const code = await latestCode(email);
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, "0");
    const guesser = new Visitor();
    for (let i = 0; i < 4; i++) expect((await signInWith(guesser, email, wrong)).status).toBe(400);
    const before = await env.DB.prepare(
      "SELECT expires_at, attempts FROM sign_in_codes WHERE email = ?",
    )
      .bind(email)
      .first<{ expires_at: string; attempts: number }>();
    await ask(new Visitor(), email);
    const after = await env.DB.prepare(
      "SELECT expires_at, attempts FROM sign_in_codes WHERE email = ?",
    )
      .bind(email)
      .first<{ expires_at: string; attempts: number }>();
    expect(after).toEqual(before);
    expect(after?.attempts).toBe(4);
    expect(await latestCode(email)).toBe(code);
  });

  it("sends a new code once the live one has used its tries, or has little time left", async () => {
    const email = newEmail();
    const visitor = new Visitor();
    await ask(visitor, email);
    const first = await latestCode(email);
    const wrong = String((Number(first) + 1) % 1_000_000).padStart(6, "0");
    for (let i = 0; i < 5; i++) await signInWith(visitor, email, wrong);
    await ask(visitor, email);
    const second = await latestCode(email);
    expect(second).not.toBe(first);
    const fresh = await env.DB.prepare("SELECT attempts FROM sign_in_codes WHERE email = ?")
      .bind(email)
      .first<{ attempts: number }>();
    expect(fresh?.attempts).toBe(0);

    // Less than RESEND_MIN_MINUTES left: a new code, with its whole life.
    const soon = new Date(Date.now() + (RESEND_MIN_MINUTES * 60_000) / 2).toISOString();
    await env.DB.prepare("UPDATE sign_in_codes SET expires_at = ? WHERE email = ?")
      .bind(soon, email)
      .run();
    await ask(visitor, email);
    const third = await latestCode(email);
    expect(third).not.toBe(second);
    const mail = await env.DB.prepare(
      "SELECT text FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC, rowid DESC",
    )
      .bind(email)
      .first<{ text: string }>();
    expect(mail?.text).toMatch(/within (9|10) minutes/);
    expect((await signInWith(visitor, email, third)).status).toBe(303);
  });

  it("stores neither the code nor anything that gives it away without the server's secret", async () => {
    const email = newEmail();
    await ask(new Visitor(), email);
    const code = await latestCode(email);
    const row = await env.DB.prepare("SELECT * FROM sign_in_codes WHERE email = ?")
      .bind(email)
      .first<Record<string, string>>();
    expect(row?.code_nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(row)).not.toContain(code);
  });
});

describe("the caps of an address", () => {
  it("after ten sign-in requests for an address from other networks, its owner can still get a code and sign in", async () => {
    const email = newEmail();
    for (let i = 0; i < 10; i++) expect((await ask(new Visitor(), email)).status).toBe(303);
    const owner = new Visitor();
    const asked = await ask(owner, email);
    expect(asked.status).toBe(303);
    const signedIn = await signInWith(owner, email, await latestCode(email));
    expect(signedIn.status).toBe(303);
    expect((await owner.get("/dashboard")).status).toBe(200);
  });

  it("a network that asked its day's codes for an address is refused; the owner's network is not", async () => {
    const clock = clockAt(Date.now());
    const email = newEmail();
    const stranger = new Visitor();
    for (let i = 0; i < CODES_PER_DAY_PER_ADDRESS; i++) {
      expect((await ask(stranger, email)).status).toBe(303);
      clock.advance(60_000);
    }
    const refused = await ask(stranger, email);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain("to one address from one network");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(60);

    const owner = new Visitor();
    expect((await ask(owner, email)).status).toBe(303);
    expect((await signInWith(owner, email, await latestCode(email))).status).toBe(303);
  });

  it("the per-minute cap of an address is per network too", async () => {
    const email = newEmail();
    const stranger = new Visitor();
    for (let i = 0; i < 3; i++) expect((await ask(stranger, email)).status).toBe(303);
    const waiting = await ask(stranger, email);
    expect(waiting.status).toBe(429);
    expect(Number(waiting.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect((await ask(new Visitor(), email)).status).toBe(303);
  });

  it("across networks an address has a ceiling that asks for a wait of minutes, and none on a network its owner signed in from", async () => {
    const clock = clockAt(Date.now());
    const email = newEmail();
    const owner = new Visitor();
    expect((await ask(owner, email)).status).toBe(303);
    expect((await signInWith(owner, email, await latestCode(email))).status).toBe(303);

    // Strangers from many networks use up the address's burst (the owner's request was one).
    for (let i = 1; i < ADDRESS_BURST; i++)
      expect((await ask(new Visitor(), email)).status).toBe(303);
    const traveller = new Visitor();
    const refused = await ask(traveller, email);
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(ADDRESS_PACE_MINUTES * 60);
    expect(refused.text).toContain("newest one we sent may still be in that mailbox");

    // The owner's own network is not held to it.
    expect((await ask(owner, email)).status).toBe(303);
    // And anyone may ask again once the wait is over.
    clock.advance(wait * 1000);
    expect((await ask(traveller, email)).status).toBe(303);
  });
});

describe("new accounts per network", () => {
  it(`one network opens at most ${NEW_ACCOUNTS_PER_DAY_PER_NETWORK} accounts a day; existing ones still sign in, and a refused person keeps their code`, async () => {
    const clock = clockAt(Date.now());
    const network = new Visitor();
    const existing = newEmail();
    const opened: string[] = [];
    for (let i = 0; i < NEW_ACCOUNTS_PER_DAY_PER_NETWORK; i++) {
      const email = i === 0 ? existing : newEmail();
      expect((await ask(network, email)).status).toBe(303);
      expect((await signInWith(network, email, await latestCode(email))).status).toBe(303);
      opened.push(email);
      clock.advance(60_000);
    }
    const late = newEmail();
    expect((await ask(network, late)).status).toBe(303);
    const code = await latestCode(late);
    const refused = await signInWith(network, late, code);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain("new accounts");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(
      await env.DB.prepare("SELECT 1 FROM accounts WHERE email = ?").bind(late).first(),
    ).toBeNull();
    const row = await env.DB.prepare("SELECT attempts FROM sign_in_codes WHERE email = ?")
      .bind(late)
      .first<{ attempts: number }>();
    expect(row?.attempts).toBe(0);

    // An address that has an account signs in from the same network.
    clock.advance(60_000);
    expect((await ask(network, existing)).status).toBe(303);
    expect((await signInWith(network, existing, await latestCode(existing))).status).toBe(303);

    // The same person from another network opens their account with the code they have.
    expect((await signInWith(new Visitor(), late, code)).status).toBe(303);
  });
});

describe("new accounts from this machine", () => {
  it("a loopback client (a local stack's own users and tests) is not held to the cap", async () => {
    const clock = clockAt(Date.now());
    const local = new Visitor();
    const loopback = { "cf-connecting-ip": "127.0.0.1" };
    for (let i = 0; i <= NEW_ACCOUNTS_PER_DAY_PER_NETWORK; i++) {
      const email = newEmail();
      expect((await local.post("/sign-in", { email }, loopback)).status).toBe(303);
      const code = await latestCode(email);
      expect((await local.post("/sign-in/code", { email, code }, loopback)).status).toBe(303);
      clock.advance(60_000);
    }
  });
});
