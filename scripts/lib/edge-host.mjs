// The edge of a test stack, run by Miniflare straight from the worker wrangler bundled once
// (stack.mjs, prebuiltEdge), instead of by `wrangler dev` (decision 0370). `wrangler dev` runs a
// Node process that loads all of wrangler, an esbuild service and a second workerd holding a
// proxy worker in front of the worker: about 3.5 CPU-seconds a start more than this host, and
// one more hop on every request. The worker's options are wrangler's own, read from the
// bundle's wrangler.toml when the bundle is made (`--write-options`), and the Miniflare is the
// one wrangler runs, so both run the same worker on the same runtime. `npm start` and the stacks
// that test wrangler's own behaviour keep `wrangler dev`.
//
//   edge-host.mjs --write-options <bundle>       wrangler's options for the bundle, as JSON
//   edge-host.mjs --bundle <dir> --port <n> --persist-to <dir> --secrets-file <file>
//                 [--log-level error|log] [--compatibility-flag <flag>]… [--var NAME:value]…
//                 [--exit-with-parent]   (stdin is a pipe the starting process holds: its end,
//                                         even when that process is killed, stops this host)
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, matchesGlob, resolve } from "node:path";
import { parseArgs, parseEnv } from "node:util";

const ROOT = resolve(import.meta.dirname, "../..");
/** The bundle's options from wrangler, written beside it. */
export const OPTIONS_FILE = "miniflare-options.json";

/** wrangler's own dependencies (its Miniflare), as wrangler resolves them. */
const fromWrangler = createRequire(join(ROOT, "node_modules/wrangler/package.json"));

const { values } = parseArgs({
  options: {
    "write-options": { type: "string" },
    bundle: { type: "string" },
    port: { type: "string" },
    "persist-to": { type: "string" },
    "secrets-file": { type: "string" },
    "log-level": { type: "string", default: "log" },
    "compatibility-flag": { type: "string", multiple: true, default: [] },
    var: { type: "string", multiple: true, default: [] },
    "exit-with-parent": { type: "boolean", default: false },
  },
});

if (values["write-options"]) {
  const bundle = values["write-options"];
  const { unstable_getMiniflareWorkerOptions } = await import(
    join(ROOT, "node_modules/wrangler/wrangler-dist/cli.js")
  );
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(bundle, "wrangler.toml"));
  writeFileSync(join(bundle, OPTIONS_FILE), JSON.stringify(workerOptions));
} else {
  await serve(values);
}

async function serve(args) {
  for (const name of ["bundle", "port", "persist-to", "secrets-file"]) {
    if (!args[name]) throw new Error(`edge-host: --${name} is required`);
  }
  const { Miniflare, Log, LogLevel, convertV4MiniflareOptions } = fromWrangler("miniflare");
  const bundle = args.bundle;
  const options = JSON.parse(readFileSync(join(bundle, OPTIONS_FILE), "utf8"));
  const everything = args["log-level"] !== "error";
  const miniflare = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: Number(args.port),
      // wrangler's layout under --persist-to (v3/d1, v3/r2, …), so stack.mjs's migrated D1
      // template and its readers find the same files.
      resourcePersistencePath: join(args["persist-to"], "v3"),
      // Request.cf as wrangler's CLOUDFLARE_CF_FETCH_ENABLED=false gives it: the placeholder,
      // never fetched from the network.
      cf: false,
      logRequests: false,
      log: new Log(everything ? LogLevel.INFO : LogLevel.ERROR),
      // The worker's console, as `wrangler dev --log-level` prints it: errors (the edge's
      // warnings and errors, edge/log.ts) on stderr always, the rest on stdout unless "error".
      handleStructuredLogs: ({ level, message }) => {
        if (level === "error") process.stderr.write(`${message}\n`);
        else if (everything) process.stdout.write(`${message}\n`);
      },
      workers: [
        {
          ...options,
          name: "stills",
          // `wrangler dev` runs no cron; `npm start` triggers maintenance itself.
          cronTriggers: [],
          compatibilityFlags: [...options.compatibilityFlags, ...args["compatibility-flag"]],
          bindings: {
            ...options.bindings,
            ...parseEnv(readFileSync(args["secrets-file"], "utf8")),
            ...vars(args.var),
          },
          ...modulesOf(bundle, options.modulesRules),
        },
      ],
    }),
  );
  const stop = async () => {
    await miniflare.dispose().catch(() => {});
    process.exit(0);
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  if (args["exit-with-parent"]) {
    process.stdin.once("end", stop);
    process.stdin.once("error", stop);
    process.stdin.resume();
  }
  try {
    await miniflare.ready;
  } catch (err) {
    // The stack's start reads this ("Address already in use" makes it try other ports).
    process.stderr.write(`edge-host: ${err?.stack ?? err}\n`);
    await miniflare.dispose().catch(() => {});
    process.exit(1);
  }
}

/**
 * The bundle's modules, named as its entry imports them: index.js, and every file beside it
 * that one of wrangler's rules types (the guides and stylesheets as text, the samples as data),
 * the first matching rule winning, as wrangler's `find_additional_modules` finds them.
 */
function modulesOf(bundle, rules) {
  const modules = [{ type: "ESModule", path: join(bundle, "index.js") }];
  for (const name of readdirSync(bundle).sort()) {
    const rule = rules.find((r) => r.include.some((glob) => matchesGlob(name, glob)));
    if (rule) modules.push({ type: rule.type, path: join(bundle, name) });
  }
  return { modules, modulesRoot: bundle, modulesRules: undefined };
}

/** `--var NAME:value` pairs, as wrangler takes them. */
function vars(pairs) {
  const values = {};
  for (const pair of pairs) {
    const at = pair.indexOf(":");
    if (at <= 0) throw new Error(`edge-host: --var ${pair} is not NAME:value`);
    values[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return values;
}
