// Raw SQL only in the storage modules (docs/decisions/0170-import-rules-checked.md, 0270).
// Run by `npm run deps`, after dependency-cruiser. Raw SQL is a D1 `.prepare(`/`.exec(` call,
// a drizzle `sql` template or `sql.raw(`, or a string that starts with a statement (SELECT,
// INSERT, UPDATE, DELETE, REPLACE, WITH). drizzle's query builder is not raw SQL.
//
// A file not on the list that holds raw SQL fails the check; so does a file on it that no
// longer does (take it off, so it cannot gain SQL again unnoticed). A new table group's SQL
// goes into a new storage module, added here.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SCANNED = ["edge", "schema", "extractor"];

/** Storage modules: the files that own SQL. */
const STORAGE_MODULES = [
  "edge/batches/store.ts",
  "edge/jobs/store/attempts.ts",
  "edge/jobs/store/demo.ts",
  "edge/jobs/store/expiry.ts",
  "edge/jobs/store/frames.ts",
  "edge/jobs/store/jobs.ts",
  "edge/jobs/store/listing.ts",
  "edge/jobs/store/reuse.ts",
  "edge/jobs/store/settlement.ts",
  "edge/jobs/store/status.ts",
  "edge/storage/accounts.ts",
  "edge/storage/billing.ts",
  "edge/storage/ledger.ts",
  "edge/storage/prepared-select.ts",
  "edge/storage/usage.ts",
  "edge/storage/webhooks.ts",
  "schema/accounts.ts",
  "schema/db.ts",
  "schema/ledger.ts",
];

const RAW_SQL =
  /\.prepare\(|\.exec\(\s*["'`]|\bsql(?:\.raw)?\s*[`(]|["'`]\s*(?:SELECT|INSERT|UPDATE|DELETE|REPLACE|WITH)\s/;

function* sourceFiles(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === "node_modules" || name === "migrations") continue;
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (/\.(?:ts|tsx|mts|mjs|js)$/.test(name) && !name.endsWith(".d.ts")) yield path;
  }
}

/** The file's text without its comments, so a comment that names a statement is not SQL. */
function withoutComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

const allowed = new Set(STORAGE_MODULES);
const holding = new Set();
for (const top of SCANNED) {
  for (const path of sourceFiles(join(ROOT, top))) {
    const file = relative(ROOT, path).split("\\").join("/");
    if (RAW_SQL.test(withoutComments(readFileSync(path, "utf8")))) holding.add(file);
  }
}

const problems = [];
for (const file of [...holding].sort()) {
  if (!allowed.has(file)) {
    problems.push(
      `${file}: raw SQL outside the storage modules. Put it in the storage module of its table group (scripts/check-raw-sql.mjs lists them), or use drizzle's query builder.`,
    );
  }
}
for (const file of [...allowed].sort()) {
  if (!holding.has(file)) {
    problems.push(
      `${file}: listed in scripts/check-raw-sql.mjs but holds no raw SQL now; take it off the list.`,
    );
  }
}
if (problems.length > 0) {
  console.error(`raw SQL check: ${problems.length} problem(s)\n${problems.join("\n")}`);
  process.exit(1);
}
console.log(
  `raw SQL check: ${holding.size} files hold raw SQL, all of them storage modules (${STORAGE_MODULES.length} listed)`,
);
