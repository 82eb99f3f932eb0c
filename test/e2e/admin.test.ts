// The admin command against a real local D1 (wrangler d1 in a temporary state directory; the
// stack itself is not needed): create-key, set-plan, grant-pack, outbox and webhook-secret,
// their exit codes and usage text, and the ledger rule after every balance change.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, executeLocalD1, ROOT, readLocalD1 } from "../../scripts/lib/stack.mjs";

const KEY = /^stills_live_[0-9A-Za-z]{38}$/;
let stateDir: string;

beforeAll(() => {
  stateDir = mkdtempSync(join(tmpdir(), "stills-admin-"));
});

afterAll(() => {
  rmSync(stateDir, { recursive: true, force: true });
});

function admin(...args: string[]) {
  const run = spawnSync(process.execPath, [join(ROOT, "scripts/admin.mjs"), ...args], {
    cwd: ROOT,
    env: { ...process.env, STILLS_STATE_DIR: stateDir },
    encoding: "utf8",
  });
  const lines = run.stdout.trimEnd().split("\n");
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, last: lines.at(-1) };
}

const quote = (value: string) => `'${value.replaceAll("'", "''")}'`;

function account(email: string) {
  const [row] = readLocalD1(
    `SELECT a.id, a.plan, a.plan_credits, a.pack_credits, a.reserved_credits,
            (SELECT coalesce(sum(plan_delta), 0) FROM credit_ledger WHERE account_id = a.id) AS ledger_plan,
            (SELECT coalesce(sum(pack_delta), 0) FROM credit_ledger WHERE account_id = a.id) AS ledger_pack,
            (SELECT coalesce(sum(reserved_delta), 0) FROM credit_ledger WHERE account_id = a.id) AS ledger_reserved,
            (SELECT count(*) FROM api_keys WHERE account_id = a.id) AS keys
     FROM accounts a WHERE a.email = ${quote(email)}`,
    stateDir,
  );
  return row as Record<string, number | string> | undefined;
}

/** The account's balances, after checking that they equal the sums of its ledger. */
function balances(email: string) {
  const row = account(email);
  if (!row) throw new Error(`no account for ${email}`);
  expect({
    plan: row.plan_credits,
    pack: row.pack_credits,
    reserved: row.reserved_credits,
  }).toEqual({ plan: row.ledger_plan, pack: row.ledger_pack, reserved: row.ledger_reserved });
  return { plan: row.plan, planCredits: row.plan_credits, packCredits: row.pack_credits };
}

function ledger(email: string, kind: string) {
  return readLocalD1(
    `SELECT l.plan_delta, l.pack_delta, l.note FROM credit_ledger l JOIN accounts a ON a.id = l.account_id
     WHERE a.email = ${quote(email)} AND l.kind = ${quote(kind)} ORDER BY l.rowid`,
    stateDir,
  );
}

describe("usage errors exit 2 and print the usage", () => {
  it.each([
    [[]],
    [["launch", "--email", "a@example.com"]],
    [["set-plan", "--email", "a@example.com"]],
    [["set-plan", "--email", "a@example.com", "--plan", "gold"]],
    [["set-plan", "--email", "not-an-address", "--plan", "pro"]],
    [["grant-pack", "--email", "a@example.com", "--packs", "0"]],
    [["grant-pack", "--email", "a@example.com", "--packs", "2.5"]],
    [["create-key", "--email", "a@example.com", "--pack-credits", "-1"]],
    [["create-key", "--email", "a@example.com", "--colour", "blue"]],
    [["outbox"]],
  ])("%j", (args) => {
    const run = admin(...args);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("usage: npm run --silent admin -- <command>");
    for (const command of ["create-key", "set-plan", "grant-pack", "webhook-secret", "outbox"]) {
      expect(run.stderr).toContain(`  ${command} --email E`);
    }
  });
});

// Every admin run is a few wrangler processes; on a busy 2-core machine a test of several
// runs needs more than the suite's default two minutes.
const SLOW = { timeout: 300_000 };

describe("accounts and credits", SLOW, () => {
  it("create-key makes the account with its plan and pack credits, then keys on it", () => {
    const email = `new-${crypto.randomUUID()}@example.com`;
    const first = admin("create-key", "--email", email.toUpperCase(), "--plan", "starter");
    expect(first.status).toBe(0);
    expect(first.last).toMatch(KEY);
    expect(balances(email)).toEqual({ plan: "starter", planCredits: 1500, packCredits: 0 });

    // Again without --plan: a second key; plan and credits stay; pack credits are added.
    const second = admin("create-key", "--email", email, "--pack-credits", "250");
    expect(second.status).toBe(0);
    expect(second.last).toMatch(KEY);
    expect(second.last).not.toBe(first.last);
    expect(balances(email)).toEqual({ plan: "starter", planCredits: 1500, packCredits: 250 });
    expect(account(email)?.keys).toBe(2);
  });

  it("create-key --plan on an existing account sets the plan and its credits", async () => {
    const email = `existing-${crypto.randomUUID()}@example.com`;
    await createKey({ email, plan: "scale", stateDir, onFile: true });
    // Spend some plan credits the way a job does: a ledger entry and the balance together.
    executeLocalD1(
      `INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
         SELECT 'settle:test-' || id, id, 'charge', -24990, 'a long job' FROM accounts WHERE email = ${quote(email)};
       UPDATE accounts SET plan_credits = plan_credits - 24990 WHERE email = ${quote(email)};`,
      stateDir,
    );
    expect(balances(email)).toEqual({ plan: "scale", planCredits: 10, packCredits: 0 });

    const run = admin("create-key", "--email", email, "--plan", "pro");
    expect(run.status).toBe(0);
    expect(run.last).toMatch(KEY);
    expect(balances(email)).toEqual({ plan: "pro", planCredits: 5000, packCredits: 0 });
    expect(ledger(email, "plan")).toEqual([
      { plan_delta: 4990, pack_delta: 0, note: "plan set to pro, credits reset to its allowance" },
    ]);
  });

  it("set-plan resets plan credits to the allowance; grant-pack adds packs; both as ledger entries", async () => {
    const email = `plans-${crypto.randomUUID()}@example.com`;
    await createKey({ email, stateDir, onFile: true });
    expect(balances(email)).toEqual({ plan: "free", planCredits: 60, packCredits: 0 });

    const up = admin("set-plan", "--email", email, "--plan", "scale");
    expect(up.status).toBe(0);
    expect(up.last).toMatch(/plan scale, plan credits 25000, pack credits 0$/);
    const down = admin("set-plan", "--email", email, "--plan", "starter");
    expect(down.status).toBe(0);
    expect(balances(email)).toEqual({ plan: "starter", planCredits: 1500, packCredits: 0 });
    expect(ledger(email, "plan").map((entry) => entry.plan_delta)).toEqual([24940, -23500]);

    expect(admin("grant-pack", "--email", email).status).toBe(0);
    const three = admin("grant-pack", "--email", email, "--packs", "3");
    expect(three.status).toBe(0);
    expect(three.last).toMatch(/pack credits 2000$/);
    expect(balances(email)).toEqual({ plan: "starter", planCredits: 1500, packCredits: 2000 });
    expect(ledger(email, "pack")).toEqual([
      { plan_delta: 0, pack_delta: 500, note: "1 pack of 500 credits granted by admin" },
      { plan_delta: 0, pack_delta: 1500, note: "3 packs of 500 credits granted by admin" },
    ]);
  });

  it("refuses an unknown address with exit 1 and changes nothing", () => {
    const email = `nobody-${crypto.randomUUID()}@example.com`;
    for (const args of [
      ["set-plan", "--email", email, "--plan", "pro"],
      ["grant-pack", "--email", email],
      ["webhook-secret", "--email", email],
    ]) {
      const run = admin(...args);
      expect(run.status).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr.trim()).toBe(`no account for ${email}`);
    }
    expect(account(email)).toBeUndefined();
  });
});

describe("outbox and webhook-secret", SLOW, () => {
  it("prints the latest message and, alone on the last line, the latest code", () => {
    const email = `mail-${crypto.randomUUID()}@example.com`;
    expect(admin("outbox", "--email", email)).toMatchObject({
      status: 1,
      stdout: "",
      stderr: `no mail to ${email} in the local outbox\n`,
    });
    const mail = (id: string, at: string, code: string | null, text: string) =>
      `INSERT INTO mail_outbox (id, to_email, subject, text, code, created_at)
       VALUES (${quote(id)}, ${quote(email)}, 'Your Stills sign-in code', ${quote(text)}, ${code === null ? "NULL" : quote(code)}, ${quote(at)});`;
    executeLocalD1(
      [
        mail(crypto.randomUUID(), "2026-11-23T10:00:00.000Z", "111111", "Your code is 111111."),
        mail(crypto.randomUUID(), "2026-11-23T10:05:00.000Z", "654321", "Your code is 654321."),
      ].join("\n"),
      stateDir,
    );
    const run = admin("outbox", "--email", email.toUpperCase());
    expect(run.status).toBe(0);
    expect(run.last).toBe("654321");
    expect(run.stdout).toContain("Subject: Your Stills sign-in code");
    expect(run.stdout).toContain("Your code is 654321.");
    expect(run.stdout).not.toContain("111111");

    // A later message without a code is shown; the last line is still the latest code.
    executeLocalD1(
      mail(crypto.randomUUID(), "2026-11-23T10:06:00.000Z", null, "You signed in."),
      stateDir,
    );
    const later = admin("outbox", "--email", email);
    expect(later.status).toBe(0);
    expect(later.stdout).toContain("You signed in.");
    expect(later.last).toBe("654321");
  });

  it("webhook-secret prints the account's signing secret", async () => {
    const email = `hooks-${crypto.randomUUID()}@example.com`;
    await createKey({ email, stateDir, onFile: true });
    const run = admin("webhook-secret", "--email", email);
    expect(run.status).toBe(0);
    const [row] = readLocalD1(
      `SELECT webhook_secret FROM accounts WHERE email = ${quote(email)}`,
      stateDir,
    );
    expect(run.last).toBe(row.webhook_secret);
    expect(run.last).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  });
});
