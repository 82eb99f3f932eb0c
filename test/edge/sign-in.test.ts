// Sign-in by e-mail code, through the worker's own fetch handler as a browser would use it:
// codes read from the local outbox, wrong, expired and exhausted codes, the send limits, the
// account a first sign-in creates (60 credits as a ledger entry), sessions and sign-out, the
// cross-site form check and the security headers of every page.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CONTENT_SECURITY_POLICY } from "../../edge/pages/layout.tsx";
import { accountIdFor } from "../../schema/accounts.ts";
import { Visitor } from "./support/visitor.ts";

const SESSION_COOKIE = "__Host-stills_session";

const newEmail = () => `${crypto.randomUUID()}@Example.com`;

async function latestCode(email: string): Promise<string> {
  const row = await env.DB.prepare(
    "SELECT code FROM mail_outbox WHERE to_email = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
  )
    .bind(email.toLowerCase())
    .first<{ code: string }>();
  if (!row) throw new Error(`no mail for ${email}`);
  return row.code;
}

async function outboxCount(email: string) {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM mail_outbox WHERE to_email = ?")
    .bind(email.toLowerCase())
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** A code different from `code` (for wrong guesses that are surely wrong). */
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

async function requestCode(visitor: Visitor, email: string, next?: string) {
  const res = await visitor.post("/sign-in", { email, ...(next ? { next } : {}) });
  expect(res.status, res.text).toBe(303);
  return res;
}

async function signIn(visitor: Visitor, email: string) {
  await requestCode(visitor, email);
  const res = await visitor.post("/sign-in/code", { email, code: await latestCode(email) });
  expect(res.status, res.text).toBe(303);
  return res;
}

describe("a first sign-in", () => {
  it("mails a code, creates the account with 60 plan credits as a ledger entry, and starts a session", async () => {
    const visitor = new Visitor();
    const email = newEmail();
    const lower = email.toLowerCase();

    const asked = await requestCode(visitor, `  ${email} `, "/dashboard/keys?tab=1");
    expect(asked.headers.get("location")).toBe(
      `/sign-in/code?email=${encodeURIComponent(lower)}&next=${encodeURIComponent("/dashboard/keys?tab=1")}`,
    );
    const mail = await env.DB.prepare(
      "SELECT to_email, subject, text, code FROM mail_outbox WHERE to_email = ?",
    )
      .bind(lower)
      .first<{ to_email: string; subject: string; text: string; code: string }>();
    expect(mail?.code).toMatch(/^\d{6}$/);
    const code = mail?.code ?? "";
    expect(mail?.subject).toContain(code);
    expect(mail?.text).toContain(code);
    expect(mail?.text).toContain("10 minutes");

    // Only a keyed hash of the code is stored.
    const stored = await env.DB.prepare("SELECT * FROM sign_in_codes WHERE email = ?")
      .bind(lower)
      .first<Record<string, string>>();
    expect(stored?.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(code);
    const minutes = (Date.parse(stored?.expires_at ?? "") - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(9.5);
    expect(minutes).toBeLessThanOrEqual(10);

    const page = await visitor.get(asked.headers.get("location") ?? "");
    expect(page.status).toBe(200);
    expect(page.text).toContain(lower);
    expect(page.text).toContain('autocomplete="one-time-code"');

    expect(
      await env.DB.prepare("SELECT id FROM accounts WHERE email = ?").bind(lower).first(),
    ).toBeNull();
    const signedIn = await visitor.post("/sign-in/code", {
      email: lower,
      code,
      next: "/dashboard/keys?tab=1",
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toBe("/dashboard/keys?tab=1");
    const cookie = signedIn.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
    expect(cookie).toBeDefined();
    const attributes = (cookie ?? "").split(";").map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(
      expect.arrayContaining(["httponly", "secure", "samesite=lax", "path=/"]),
    );
    expect(attributes.some((a) => a.startsWith("domain="))).toBe(false);

    const accountId = await accountIdFor(lower);
    const account = await env.DB.prepare("SELECT * FROM accounts WHERE id = ?")
      .bind(accountId)
      .first<Record<string, string | number>>();
    expect(account).toMatchObject({
      email: lower,
      plan: "free",
      plan_credits: 60,
      pack_credits: 0,
      reserved_credits: 0,
    });
    const periodDays =
      (Date.parse(String(account?.period_end)) - Date.parse(String(account?.period_start))) /
      86_400_000;
    expect(periodDays).toBeGreaterThanOrEqual(28);
    expect(periodDays).toBeLessThanOrEqual(31);
    const { results: ledger } = await env.DB.prepare(
      "SELECT kind, plan_delta, pack_delta, reserved_delta FROM credit_ledger WHERE account_id = ?",
    )
      .bind(accountId)
      .all();
    expect(ledger).toEqual([{ kind: "grant", plan_delta: 60, pack_delta: 0, reserved_delta: 0 }]);

    // The session is stored as a hash of the cookie's token, and the code is used up.
    const token = visitor.cookies.get(SESSION_COOKIE) ?? "";
    expect(token.length).toBeGreaterThanOrEqual(40);
    const session = await env.DB.prepare("SELECT * FROM sessions WHERE account_id = ?")
      .bind(accountId)
      .first<Record<string, string>>();
    expect(session?.token_hash).toBe(await sha256(token));
    expect(JSON.stringify(session)).not.toContain(token);
    const daysLeft = (Date.parse(session?.expires_at ?? "") - Date.now()) / 86_400_000;
    expect(daysLeft).toBeGreaterThan(29.9);
    expect(
      await env.DB.prepare("SELECT 1 FROM sign_in_codes WHERE email = ?").bind(lower).first(),
    ).toBeNull();

    const dashboard = await visitor.get("/dashboard");
    expect(dashboard.status).toBe(200);
    expect(dashboard.text).toContain(lower);

    // A used code does not sign in twice.
    const again = await new Visitor().post("/sign-in/code", { email: lower, code });
    expect(again.status).toBe(400);
    expect(again.text).toContain("expired");
    expect(again.headers.getSetCookie()).toEqual([]);
  });

  it("a second sign-in reaches the same account and grants nothing again", async () => {
    const email = newEmail();
    await signIn(new Visitor(), email);
    const accountId = await accountIdFor(email);
    await env.DB.prepare("UPDATE accounts SET plan_credits = 41 WHERE id = ?")
      .bind(accountId)
      .run();
    await env.DB.prepare(
      "INSERT INTO credit_ledger (id, account_id, kind, plan_delta) VALUES (?, ?, 'charge', -19)",
    )
      .bind(`settle:${crypto.randomUUID()}`, accountId)
      .run();

    const second = new Visitor();
    await signIn(second, email.toUpperCase());
    const dashboard = await second.get("/dashboard");
    expect(dashboard.status).toBe(200);
    expect(dashboard.text).toContain(email.toLowerCase());
    const rows = await env.DB.prepare("SELECT id, plan_credits FROM accounts WHERE email = ?")
      .bind(email.toLowerCase())
      .all();
    expect(rows.results).toEqual([{ id: accountId, plan_credits: 41 }]);
    const grants = await env.DB.prepare(
      "SELECT count(*) AS n FROM credit_ledger WHERE account_id = ? AND kind = 'grant'",
    )
      .bind(accountId)
      .first<{ n: number }>();
    expect(grants?.n).toBe(1);
    const sessions = await env.DB.prepare("SELECT count(*) AS n FROM sessions WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(sessions?.n).toBe(2);
  });
});

describe("a code that does not sign in", () => {
  it("a wrong code says how many tries are left, and the right one still works", async () => {
    const visitor = new Visitor();
    const email = newEmail();
    await requestCode(visitor, email);
    const code = await latestCode(email);
    const res = await visitor.post("/sign-in/code", { email, code: wrong(code) });
    expect(res.status).toBe(400);
    expect(res.text).toContain("4 tries left");
    expect(res.text).toContain('aria-invalid="true"');
    expect(visitor.cookies.size).toBe(0);
    const ok = await visitor.post("/sign-in/code", {
      email,
      code: code.replace(/^(\d{3})/, "$1 "),
    });
    expect(ok.status).toBe(303);
    expect(visitor.cookies.has(SESSION_COOKIE)).toBe(true);
  });

  it("five wrong tries kill the code: the right one is refused after them", async () => {
    const visitor = new Visitor();
    const email = newEmail();
    await requestCode(visitor, email);
    const code = await latestCode(email);
    const answers: string[] = [];
    for (let i = 0; i < 5; i++) {
      answers.push((await visitor.post("/sign-in/code", { email, code: wrong(code) })).text);
    }
    expect(answers[3]).toContain("1 try left");
    expect(answers[4]).toContain("no longer works");
    const late = await visitor.post("/sign-in/code", { email, code });
    expect(late.status).toBe(400);
    expect(late.text).toContain("no longer works");
    expect(visitor.cookies.size).toBe(0);
    expect(
      await env.DB.prepare("SELECT 1 FROM accounts WHERE email = ?")
        .bind(email.toLowerCase())
        .first(),
    ).toBeNull();

    // A new code starts the count again.
    await requestCode(visitor, email);
    const fresh = await visitor.post("/sign-in/code", { email, code: await latestCode(email) });
    expect(fresh.status).toBe(303);
  });

  it("parallel guesses cannot get past five tries", async () => {
    const email = newEmail();
    await requestCode(new Visitor(), email);
    const code = await latestCode(email);
    const guesses = await Promise.all(
      Array.from({ length: 12 }, () =>
        new Visitor().post("/sign-in/code", { email, code: wrong(code) }),
      ),
    );
    expect(guesses.every((g) => g.status === 400)).toBe(true);
    const row = await env.DB.prepare("SELECT attempts FROM sign_in_codes WHERE email = ?")
      .bind(email.toLowerCase())
      .first<{ attempts: number }>();
    expect(row?.attempts).toBe(5);
    expect((await new Visitor().post("/sign-in/code", { email, code })).status).toBe(400);
  });

  it("an expired code is refused and creates nothing", async () => {
    const visitor = new Visitor();
    const email = newEmail();
    await requestCode(visitor, email);
    await env.DB.prepare("UPDATE sign_in_codes SET expires_at = ? WHERE email = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), email.toLowerCase())
      .run();
    const res = await visitor.post("/sign-in/code", { email, code: await latestCode(email) });
    expect(res.status).toBe(400);
    expect(res.text).toContain("expired");
    expect(visitor.cookies.size).toBe(0);
    expect(
      await env.DB.prepare("SELECT 1 FROM accounts WHERE email = ?")
        .bind(email.toLowerCase())
        .first(),
    ).toBeNull();
  });

  it("asking again mails the live code again, which signs in (test/edge/sign-in.lockout.test.ts has the rest)", async () => {
    const visitor = new Visitor();
    const email = newEmail();
    await requestCode(visitor, email);
    const first = await latestCode(email);
    await requestCode(visitor, email);
    expect(await outboxCount(email)).toBe(2);
    expect(await latestCode(email)).toBe(first);
    expect((await visitor.post("/sign-in/code", { email, code: first })).status).toBe(303);
  });

  it.each([
    ["not an address", { email: "not-an-address" }, "e-mail address"],
    ["no address", {}, "e-mail address"],
  ])("asking with %s re-shows the form with the problem", async (_label, form, message) => {
    const res = await new Visitor().post("/sign-in", form as Record<string, string>);
    expect(res.status).toBe(400);
    expect(res.text).toContain(message);
    expect(res.text).toContain('aria-invalid="true"');
  });

  it("a code of the wrong shape is refused without using a try", async () => {
    const visitor = new Visitor();
    const email = newEmail();
    await requestCode(visitor, email);
    const res = await visitor.post("/sign-in/code", { email, code: "12ab" });
    expect(res.status).toBe(400);
    expect(res.text).toContain("6 digits");
    const row = await env.DB.prepare("SELECT attempts FROM sign_in_codes WHERE email = ?")
      .bind(email.toLowerCase())
      .first<{ attempts: number }>();
    expect(row?.attempts).toBe(0);
  });
});

describe("sending limits", () => {
  it("an address gets three codes at once from one network, then must wait (429 with Retry-After)", async () => {
    const email = newEmail();
    const visitor = new Visitor();
    for (let i = 0; i < 3; i++) await requestCode(visitor, email);
    const refused = await visitor.post("/sign-in", { email });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.text).toContain("Too many sign-in codes");
    expect(await outboxCount(email)).toBe(3);
  });

  it("one client gets ten codes a minute, whatever the addresses", async () => {
    const visitor = new Visitor();
    for (let i = 0; i < 10; i++) await requestCode(visitor, newEmail());
    const email = newEmail();
    const refused = await visitor.post("/sign-in", { email });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await outboxCount(email)).toBe(0);
  });
});

describe("sessions", () => {
  it("sign-out ends the session on the server: the old cookie no longer works", async () => {
    const visitor = new Visitor();
    const email = newEmail();
    await signIn(visitor, email);
    const token = visitor.cookies.get(SESSION_COOKIE) ?? "";
    expect((await visitor.get("/dashboard")).status).toBe(200);

    const out = await visitor.post("/sign-out", {});
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/sign-in?notice=signed-out");
    expect(out.headers.getSetCookie().join()).toMatch(
      new RegExp(`${SESSION_COOKIE}=;.*Max-Age=0`, "i"),
    );
    expect(
      await env.DB.prepare("SELECT 1 FROM sessions WHERE token_hash = ?")
        .bind(await sha256(token))
        .first(),
    ).toBeNull();

    // Replaying the old token (a copied cookie) is refused.
    const replay = new Visitor();
    replay.cookies.set(SESSION_COOKIE, token);
    const refused = await replay.get("/dashboard");
    expect(refused.status).toBe(303);
    expect(refused.headers.get("location")).toBe("/sign-in?next=%2Fdashboard");
  });

  it("slides: a session used after an hour is extended to 30 days from now", async () => {
    const visitor = new Visitor();
    const email = newEmail();
    await signIn(visitor, email);
    const hash = await sha256(visitor.cookies.get(SESSION_COOKIE) ?? "");
    const aged = new Date(Date.now() + 20 * 86_400_000).toISOString();
    await env.DB.prepare("UPDATE sessions SET expires_at = ? WHERE token_hash = ?")
      .bind(aged, hash)
      .run();
    const res = await visitor.get("/dashboard");
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(true);
    const row = await env.DB.prepare("SELECT expires_at FROM sessions WHERE token_hash = ?")
      .bind(hash)
      .first<{ expires_at: string }>();
    expect((Date.parse(row?.expires_at ?? "") - Date.now()) / 86_400_000).toBeGreaterThan(29.9);
  });

  it("a session past its expiry is not a session", async () => {
    const visitor = new Visitor();
    await signIn(visitor, newEmail());
    const hash = await sha256(visitor.cookies.get(SESSION_COOKIE) ?? "");
    await env.DB.prepare("UPDATE sessions SET expires_at = ? WHERE token_hash = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), hash)
      .run();
    const res = await visitor.get("/dashboard/keys");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/sign-in?next=%2Fdashboard%2Fkeys");
  });

  it("signed in, the sign-in page goes straight on to `next`", async () => {
    const visitor = new Visitor();
    await signIn(visitor, newEmail());
    const res = await visitor.get(
      `/sign-in?next=${encodeURIComponent("/oauth/authorize?client_id=x")}`,
    );
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/oauth/authorize?client_id=x");
  });

  it.each([
    "https://evil.example/",
    "//evil.example/path",
    "/\\evil.example",
    "/.//evil.example",
    "/..//evil.example",
    "/%2e//evil.example",
    "javascript:alert(1)",
    "/dash\nboard",
  ])("`next` = %j never leaves the site", async (next) => {
    const visitor = new Visitor();
    const email = newEmail();
    await requestCode(visitor, email, next);
    const res = await visitor.post("/sign-in/code", { email, code: await latestCode(email), next });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard");
  });
});

describe("cross-site forms and page headers", () => {
  it.each([
    ["another site's Origin", { origin: "https://evil.example", "sec-fetch-site": "cross-site" }],
    ["no Origin and no Sec-Fetch-Site", { origin: "", "sec-fetch-site": "" }],
  ])(
    "a sign-in form sent with %s is refused in the error shape, and no mail goes out",
    async (_l, headers) => {
      const email = newEmail();
      const res = await new Visitor().post("/sign-in", { email }, headers);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text)).toMatchObject({
        name: "BadRequest",
        code: 400,
        className: "bad-request",
        data: { name: "InvalidRequest" },
      });
      expect(await outboxCount(email)).toBe(0);
    },
  );

  it("a cross-site sign-out leaves the session alone", async () => {
    const visitor = new Visitor();
    await signIn(visitor, newEmail());
    const res = await visitor.post(
      "/sign-out",
      {},
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
    );
    expect(res.status).toBe(400);
    expect((await visitor.get("/dashboard")).status).toBe(200);
  });

  it("every page sends the strict Content-Security-Policy and carries no inline script or style", async () => {
    const visitor = new Visitor();
    const email = newEmail();
    const before = ["/sign-in", `/sign-in/code?email=${encodeURIComponent(email)}`];
    await signIn(visitor, email);
    const after = [
      "/dashboard",
      "/dashboard/jobs",
      "/dashboard/keys",
      "/dashboard/billing",
      "/dashboard/webhooks",
    ];
    for (const path of [...before, ...after]) {
      const res = await (path.startsWith("/sign-in") ? new Visitor() : visitor).get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-security-policy"), path).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
      expect(res.headers.get("cache-control"), path).toBe("no-store");
      expect(res.text.startsWith("<!doctype html>"), path).toBe(true);
      expect(res.text, path).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
      expect(res.text, path).not.toMatch(/\sstyle=/);
      expect(res.text, path).not.toMatch(/\son[a-z]+=/);
    }
  });

  it("serves the dashboard's own stylesheet and script from this origin", async () => {
    const page = await new Visitor().get("/sign-in");
    const css = /href="(\/assets\/dashboard\.css\?v=[^"]+)"/.exec(page.text)?.[1];
    const js = /src="(\/assets\/dashboard\.js\?v=[^"]+)"/.exec(page.text)?.[1];
    expect(css && js).toBeTruthy();
    const style = await new Visitor().get(css ?? "");
    expect(style.status).toBe(200);
    expect(style.headers.get("content-type")).toContain("text/css");
    expect(style.text).toContain(".dashboard-nav");
    const script = await new Visitor().get(js ?? "");
    expect(script.headers.get("content-type")).toContain("text/javascript");
    expect(script.text).toContain("data-copy-from");
  });
});

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
