// The admin command, against the local D1 of `npm start` (STILLS_STATE_DIR, default
// .wrangler/state), whether or not the stack is running. Balance changes go through the same
// statements as Stripe's webhook (schema/ledger.ts), so every one is a ledger entry.
// Exit status: 0 done, 1 failed (no such account, nothing in the outbox, D1 error), 2 usage.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { issueKeyStatements, toSqlScript } from "../schema/accounts.ts";
import { grantPackStatements, setPlanStatements } from "../schema/ledger.ts";
import { CREDIT_PACK, isPlanName, PLAN_NAMES } from "../schema/plans.ts";
import { applyMigrations, executeLocalSql, ROOT, readLocalD1 } from "./lib/stack.mjs";

const PLANS_LIST = PLAN_NAMES.join("|");
const USAGE = `usage: npm run --silent admin -- <command> --email E [options]
  create-key --email E [--plan ${PLANS_LIST}] [--pack-credits N]
      Prints a new API key as the last line, creating the account if needed (free unless
      --plan). On an existing account, --plan sets the plan and resets plan credits to its
      allowance, as set-plan does; --pack-credits adds N pack credits.
  set-plan --email E --plan ${PLANS_LIST}
      Sets the plan and resets plan credits to its monthly allowance (one ledger entry).
  grant-pack --email E [--packs N]
      Adds N packs of ${CREDIT_PACK.credits} pack credits (default 1; one ledger entry).
  webhook-secret --email E
      Prints the account's webhook signing secret (whsec_…) as the last line.
  outbox --email E
      Prints the latest mail the local sender wrote to E, then that address's latest
      sign-in code alone on the last line.`;

const stateDir = resolve(ROOT, process.env.STILLS_STATE_DIR ?? ".wrangler/state");

class UsageError extends Error {}
class Failure extends Error {}

function parse() {
  try {
    return parseArgs({
      allowPositionals: true,
      strict: true,
      options: {
        email: { type: "string" },
        plan: { type: "string" },
        "pack-credits": { type: "string" },
        packs: { type: "string" },
      },
    });
  } catch (err) {
    throw new UsageError(err.message);
  }
}

function requireEmail(values) {
  const email = values.email?.trim().toLowerCase();
  if (!email || !/^[^@\s]+@[^@\s]+$/.test(email)) {
    throw new UsageError("--email needs an address such as you@example.com");
  }
  return email;
}

function requirePlan(value) {
  if (!isPlanName(value ?? "")) throw new UsageError(`--plan must be one of ${PLANS_LIST}`);
  return value;
}

function wholeNumber(value, name, { min, max }) {
  const number = Number(value);
  if (!/^\d+$/.test(value ?? "") || number < min || number > max) {
    throw new UsageError(`${name} must be a whole number from ${min} to ${max}`);
  }
  return number;
}

/**
 * Reads go straight to the local D1 file (read-only, node:sqlite): a wrangler run costs about
 * two seconds, and a command asked it up to three times. Writes still go through wrangler.
 */
function query(sql, ...params) {
  const statement = toSqlScript([{ sql, params }]);
  try {
    return readLocalD1(statement, stateDir);
  } catch (err) {
    // A new state directory, or one from before a migration: migrate, then ask again.
    if (!/no such table|expected one D1 database/.test(err.message)) throw err;
    applyMigrations(stateDir);
    return readLocalD1(statement, stateDir);
  }
}

function findAccount(email) {
  const [row] = query(
    `SELECT id, email, plan, plan_credits, pack_credits, stripe_subscription_id
     FROM accounts WHERE email = ?`,
    email,
  );
  return row;
}

function requireAccount(email) {
  const account = findAccount(email);
  if (!account) throw new Failure(`no account for ${email}`);
  return account;
}

function describe(account) {
  return `account ${account.id} (${account.email}): plan ${account.plan}, plan credits ${account.plan_credits}, pack credits ${account.pack_credits}`;
}

function warnIfSubscribed(account) {
  if (account.stripe_subscription_id) {
    console.error(
      `note: ${account.email} has a Stripe subscription (${account.stripe_subscription_id}); ` +
        "its next event from Stripe sets the plan it pays for",
    );
  }
}

const commands = {
  async "create-key"(values) {
    const email = requireEmail(values);
    const plan = values.plan === undefined ? undefined : requirePlan(values.plan);
    const packCredits = wholeNumber(values["pack-credits"] ?? "0", "--pack-credits", {
      min: 0,
      max: 10_000_000,
    });
    const existing = findAccount(email);
    const issued = await issueKeyStatements({ email, plan, packCredits });
    const statements = [...issued.statements];
    if (existing && plan) {
      warnIfSubscribed(existing);
      statements.push(
        ...setPlanStatements({
          entryId: `admin-plan:${crypto.randomUUID()}`,
          accountId: existing.id,
          plan,
        }),
      );
    }
    executeLocalSql(toSqlScript(statements), stateDir);
    console.error(`${describe(requireAccount(email))}; key shown once:`);
    console.log(issued.key);
  },

  async "set-plan"(values) {
    const email = requireEmail(values);
    const plan = requirePlan(values.plan);
    const account = requireAccount(email);
    warnIfSubscribed(account);
    executeLocalSql(
      toSqlScript(
        setPlanStatements({
          entryId: `admin-plan:${crypto.randomUUID()}`,
          accountId: account.id,
          plan,
        }),
      ),
      stateDir,
    );
    console.log(describe(requireAccount(email)));
  },

  async "grant-pack"(values) {
    const email = requireEmail(values);
    const packs = wholeNumber(values.packs ?? "1", "--packs", { min: 1, max: 1000 });
    const account = requireAccount(email);
    const credits = packs * CREDIT_PACK.credits;
    executeLocalSql(
      toSqlScript(
        grantPackStatements({
          entryId: `admin-pack:${crypto.randomUUID()}`,
          accountId: account.id,
          credits,
          note: `${packs} pack${packs === 1 ? "" : "s"} of ${CREDIT_PACK.credits} credits granted by admin`,
        }),
      ),
      stateDir,
    );
    console.log(describe(requireAccount(email)));
  },

  async "webhook-secret"(values) {
    const email = requireEmail(values);
    const [row] = query("SELECT webhook_secret FROM accounts WHERE email = ?", email);
    if (!row) throw new Failure(`no account for ${email}`);
    console.log(row.webhook_secret);
  },

  async outbox(values) {
    const email = requireEmail(values);
    const [latest] = query(
      `SELECT subject, text, created_at FROM mail_outbox WHERE lower(trim(to_email)) = ?
       ORDER BY created_at DESC, rowid DESC LIMIT 1`,
      email,
    );
    const [coded] = query(
      `SELECT code FROM mail_outbox WHERE lower(trim(to_email)) = ? AND code IS NOT NULL
       ORDER BY created_at DESC, rowid DESC LIMIT 1`,
      email,
    );
    if (!latest) throw new Failure(`no mail to ${email} in the local outbox`);
    console.log(`To: ${email}\nDate: ${latest.created_at}\nSubject: ${latest.subject}\n`);
    console.log(latest.text);
    if (!coded) throw new Failure(`no sign-in code in the mail to ${email}`);
    console.log(`\n${coded.code}`);
  },
};

try {
  const { positionals, values } = parse();
  const command = commands[positionals[0]];
  if (!command || positionals.length !== 1) {
    throw new UsageError(
      positionals[0] ? `unknown command ${positionals.join(" ")}` : "no command given",
    );
  }
  await command(values);
} catch (err) {
  if (err instanceof UsageError) {
    console.error(`${err.message}\n${USAGE}`);
    process.exit(2);
  }
  console.error(err instanceof Failure ? err.message : String(err.stack ?? err));
  process.exit(1);
}
