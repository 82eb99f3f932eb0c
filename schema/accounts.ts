// Creating an account and issuing an API key, as SQL statements. The admin command runs them
// through `wrangler d1 execute` against the local D1; tests run them on the D1 binding. One
// definition, so a test account is made exactly as a real one.
import { apiKeyHint, generateApiKey, hashApiKey } from "./api-keys.ts";
import { CREDIT_PACK, PLANS, type PlanName } from "./plans.ts";

export interface Statement {
  sql: string;
  params: (string | number | null)[];
}

export interface IssuedKey {
  key: string;
  keyId: string;
  accountId: string;
  statements: Statement[];
}

function webhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/**
 * The same day and time one month on (plan periods), kept inside the month: Jan 31 → Feb 28,
 * not Mar 3, so periods do not drift.
 */
export function addMonth(date: Date): Date {
  const next = new Date(date);
  next.setUTCDate(1);
  next.setUTCMonth(next.getUTCMonth() + 1);
  const lastDay = new Date(Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 0)).getUTCDate();
  next.setUTCDate(Math.min(date.getUTCDate(), lastDay));
  return next;
}

/**
 * Statements that create the account for `email` if it does not exist (with its plan's
 * monthly credits and a ledger entry for them), add `packCredits`, and issue a new key.
 * The account id is derived from the email, so running it twice keeps one account.
 */
export async function issueKeyStatements(options: {
  email: string;
  plan?: PlanName;
  packCredits?: number;
  now?: Date;
}): Promise<IssuedKey> {
  const email = options.email.trim().toLowerCase();
  const plan = PLANS[options.plan ?? "free"];
  const now = options.now ?? new Date();
  const accountId = await deterministicId(`account:${email}`);
  const key = generateApiKey();
  const keyId = crypto.randomUUID();
  const grantId = `grant:${accountId}:${plan.name}`;
  const statements: Statement[] = [
    {
      sql: `INSERT INTO accounts (id, email, plan, plan_credits, period_start, period_end, webhook_secret)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (email) DO UPDATE SET plan = excluded.plan`,
      params: [
        accountId,
        email,
        plan.name,
        plan.monthly_credits,
        now.toISOString(),
        addMonth(now).toISOString(),
        webhookSecret(),
      ],
    },
    {
      sql: `INSERT OR IGNORE INTO credit_ledger (id, account_id, kind, plan_delta, note) VALUES (?, ?, 'grant', ?, ?)`,
      params: [
        grantId,
        accountId,
        plan.monthly_credits,
        `${plan.name} plan credits for the first period`,
      ],
    },
    {
      sql: "INSERT INTO api_keys (id, account_id, key_hash, hint) VALUES (?, ?, ?, ?)",
      params: [keyId, accountId, await hashApiKey(key), apiKeyHint(key)],
    },
  ];
  const pack = options.packCredits ?? 0;
  if (pack > 0) {
    const entryId = `pack:${crypto.randomUUID()}`;
    statements.push(
      {
        sql: `INSERT INTO credit_ledger (id, account_id, kind, pack_delta, note) VALUES (?, ?, 'pack', ?, ?)`,
        params: [
          entryId,
          accountId,
          pack,
          `${pack} pack credits (a pack is ${CREDIT_PACK.credits})`,
        ],
      },
      {
        sql: "UPDATE accounts SET pack_credits = pack_credits + ? WHERE id = ?",
        params: [pack, accountId],
      },
    );
  }
  return { key, keyId, accountId, statements };
}

async function deterministicId(seed: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(seed)),
  );
  const hex = [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Inlines parameters as SQL literals, for `wrangler d1 execute --file`. */
export function toSqlScript(statements: Statement[]): string {
  const literal = (value: string | number | null) =>
    value === null
      ? "NULL"
      : typeof value === "number"
        ? String(value)
        : `'${value.replaceAll("'", "''")}'`;
  return statements
    .map(({ sql, params }) => {
      let i = 0;
      return `${sql.replace(/\?/g, () => literal(params[i++]))};`;
    })
    .join("\n");
}
