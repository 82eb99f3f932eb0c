// `npm test`: the type-check and the import rules run beside vitest instead of before it
// (decision 0299). Each is one Node thread on a 2-core machine, and vitest's first group leaves
// a core partly idle while it starts, so running them at once takes about their time off the
// wall clock. A failure's output is printed when it ends; a pass's after vitest's, so it does
// not cut through vitest's. What follows `--` goes to vitest. The exit code is non-zero if
// any of the three failed.
import { spawn } from "node:child_process";

const CHECKS = ["typecheck", "deps"];

function run(command, args, options) {
  return new Promise((resolve) => {
    const child = spawn(command, args, options);
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      output += chunk;
    });
    child.on("error", (err) => resolve({ code: 1, output: `${output}${err.message}\n` }));
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const checks = CHECKS.map(async (name) => {
  const result = await run("npm", ["run", "--silent", name], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (result.code !== 0) process.stderr.write(`\nnpm run ${name} failed:\n${result.output}\n`);
  return { name, ...result };
});
const vitest = run("vitest", ["run", ...process.argv.slice(2)], { stdio: "inherit" });

const results = [...(await Promise.all(checks)), { name: "vitest", ...(await vitest) }];
for (const { name, code, output } of results) {
  if (code === 0 && output.trim() !== "") process.stdout.write(`npm run ${name}: ${output}`);
}
const failed = results.filter((result) => result.code !== 0).map((result) => result.name);
if (failed.length > 0) {
  process.stderr.write(`\nnpm test failed: ${failed.join(", ")}\n`);
  process.exit(1);
}
