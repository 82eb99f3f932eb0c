// Creating an account and issuing an API key, as SQL statements. Sign-in runs them on the D1
// binding, the admin command through `wrangler d1 execute` against the local D1, tests on the
// D1 binding too. One definition, so every account is made the same way.
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

/** A Standard Webhooks signing secret: `whsec_` + 24 random bytes in base64. */
export function newWebhookSecret(): string {
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

export interface NewAccount {
  accountId: string;
  email: string;
  statements: Statement[];
}

/** The one spelling of an address: sign-in, the admin command and tests all key on it. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Statements that create the account for `email` if it does not exist yet: the plan's monthly
 * credits at once, a period starting now, and the ledger entry of that grant. An existing
 * account is left exactly as it is. Sign-in, the admin command and the tests all create
 * accounts through this, so the ledger of every account starts the same way.
 *
 * The account id is derived from the address, so two concurrent first sign-ins make one
 * account. The grant is written only while the account has no ledger entry at all, with the
 * plan credits the account row holds: balance and ledger agree from the first row on.
 */
export async function accountStatements(options: {
  email: string;
  plan?: PlanName;
  now?: Date;
}): Promise<NewAccount> {
  const email = normalizeEmail(options.email);
  const plan = PLANS[options.plan ?? "free"];
  const now = options.now ?? new Date();
  const accountId = await accountIdFor(email);
  const statements: Statement[] = [
    {
      sql: `INSERT INTO accounts (id, email, plan, plan_credits, period_start, period_end, webhook_secret)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (email) DO NOTHING`,
      params: [
        accountId,
        email,
        plan.name,
        plan.monthly_credits,
        now.toISOString(),
        addMonth(now).toISOString(),
        newWebhookSecret(),
      ],
    },
    {
      sql: `INSERT INTO credit_ledger (id, account_id, kind, plan_delta, note)
            SELECT 'grant:' || id || ':' || plan, id, 'grant', plan_credits,
                   plan || ' plan credits for the first period'
            FROM accounts
            WHERE id = ? AND NOT EXISTS (SELECT 1 FROM credit_ledger WHERE account_id = ?)`,
      params: [accountId, accountId],
    },
  ];
  return { accountId, email, statements };
}

/**
 * Statements that create the account for `email` if needed (accountStatements: the first two
 * statements, always), add `packCredits`, and issue a new key. An existing account keeps its
 * plan: changing a plan moves credits, which is the admin command's `set-plan`.
 */
export async function issueKeyStatements(options: {
  email: string;
  plan?: PlanName;
  packCredits?: number;
  name?: string;
  now?: Date;
}): Promise<IssuedKey> {
  const account = await accountStatements(options);
  const { accountId } = account;
  const issued = await newKeyStatement(accountId, options.name ?? "");
  const statements: Statement[] = [...account.statements, issued.statement];
  const { key, keyId } = issued;
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

/**
 * A new API key of the account: the key (to show once) and the statement storing its hash.
 * With `maxActiveKeys`, the statement inserts nothing when the account already has that many
 * keys that are not revoked (the count and the insert are one statement, so parallel requests
 * cannot pass the cap together).
 */
export async function newKeyStatement(
  accountId: string,
  name: string,
  maxActiveKeys?: number,
): Promise<{ key: string; keyId: string; statement: Statement }> {
  const key = generateApiKey();
  const keyId = crypto.randomUUID();
  const values = [keyId, accountId, await hashApiKey(key), apiKeyHint(key), name];
  const insert = "INSERT INTO api_keys (id, account_id, key_hash, hint, name)";
  const statement: Statement =
    maxActiveKeys === undefined
      ? { sql: `${insert} VALUES (?, ?, ?, ?, ?)`, params: values }
      : {
          sql: `${insert} SELECT ?, ?, ?, ?, ?
                WHERE (SELECT count(*) FROM api_keys WHERE account_id = ? AND revoked_at IS NULL) < ?`,
          params: [...values, accountId, maxActiveKeys],
        };
  return { key, keyId, statement };
}

/** Account ids are derived from the normalised address (a UUID-shaped SHA-256 prefix). */
export function accountIdFor(email: string): Promise<string> {
  return deterministicId(`account:${normalizeEmail(email)}`);
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
