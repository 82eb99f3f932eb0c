// Builds dist/ (ES modules and .d.ts) from src/ with the repository's TypeScript: relative
// imports written `./x.ts` are emitted as `./x.js` (rewriteRelativeImportExtensions).
import { spawnSync } from "node:child_process";
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
rmSync(`${root}/dist`, { recursive: true, force: true });
const run = spawnSync(process.execPath, [tsc, "-p", `${root}/tsconfig.json`], { stdio: "inherit" });
if (run.status !== 0) process.exit(run.status ?? 1);
chmodSync(`${root}/dist/cli.js`, 0o755);

// tsc rewrites `.ts` specifiers in the JavaScript it emits but not in declarations; a consumer's
// compiler would look for .ts files that are not shipped.
for (const entry of readdirSync(`${root}/dist`, { recursive: true })) {
  const file = `${root}/dist/${entry}`;
  if (!file.endsWith(".d.ts")) continue;
  const text = readFileSync(file, "utf8");
  writeFileSync(file, text.replace(/(["'])(\.\.?\/[^"']+)\.ts\1/g, "$1$2.js$1"));
}
