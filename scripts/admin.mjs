// `npm run --silent admin -- create-key --email E [--plan P] [--pack-credits N]`
//   Creates the account if needed and prints a new API key as the last line of stdout.
// `npm run --silent admin -- webhook-secret --email E`
//   Prints the account's webhook signing secret (whsec_…) as the last line of stdout.
// Both work against the local D1 of `npm start` (STILLS_STATE_DIR, default .wrangler/state),
// whether or not it is running.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { applyMigrations, createKey, queryLocal, ROOT } from "./lib/stack.mjs";

const USAGE = `usage: npm run --silent admin -- create-key --email E [--plan free|starter|pro|scale] [--pack-credits N]
       npm run --silent admin -- webhook-secret --email E`;

const stateDir = resolve(ROOT, process.env.STILLS_STATE_DIR ?? ".wrangler/state");

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    email: { type: "string" },
    plan: { type: "string", default: "free" },
    "pack-credits": { type: "string", default: "0" },
  },
});

if (positionals[0] === "webhook-secret" && values.email) {
  applyMigrations(stateDir);
  const email = values.email.trim().toLowerCase().replaceAll("'", "''");
  const [row] = queryLocal(
    `SELECT webhook_secret FROM accounts WHERE email = '${email}'`,
    stateDir,
  );
  if (!row) {
    console.error(`no account for ${values.email}`);
    process.exit(1);
  }
  console.log(row.webhook_secret);
  process.exit(0);
}
if (positionals[0] !== "create-key" || !values.email || !/^[^@\s]+@[^@\s]+$/.test(values.email)) {
  console.error(USAGE);
  process.exit(2);
}
if (!["free", "starter", "pro", "scale"].includes(values.plan)) {
  console.error(`unknown plan ${values.plan}\n${USAGE}`);
  process.exit(2);
}
const packCredits = Number(values["pack-credits"]);
if (!Number.isInteger(packCredits) || packCredits < 0) {
  console.error(`--pack-credits must be a whole number\n${USAGE}`);
  process.exit(2);
}

try {
  const issued = await createKey({ email: values.email, plan: values.plan, packCredits, stateDir });
  console.error(`account ${issued.accountId} (${values.email}, ${values.plan}); key shown once:`);
  console.log(issued.key);
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
