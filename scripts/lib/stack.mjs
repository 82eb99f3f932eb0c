// Starting the local stack: the edge under `wrangler dev` (local D1, R2, Queues, Durable
// Objects, persisted under the state directory) and the extractor as a Node process. Used by
// `npm start`, the end-to-end tests and the benchmarks, so all three run the same stack.
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  cpSync,
  existsSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { buildExtractor, EXTRACTOR_MAIN } from "../build-extractor.mjs";
import { cacheTmpdir } from "./cache-tmpdir.mjs";
import { spawnClientAddressProxy } from "./client-address-proxy.mjs";
import { ensureMediaTools } from "./media-tools.mjs";

/**
 * glibc malloc settings of the extractor's Node, as the image sets them (extractor/Dockerfile),
 * unless the environment already says otherwise. Two arenas instead of one per thread; and
 * every allocation of 1 MiB or more mapped on its own and unmapped when freed. Without the
 * fixed threshold glibc raises it after the first large free, so frame buffers (6 MB at 1080p,
 * 25 MB at 2160p) come from the heap and stay resident after the GC frees them (measured at
 * 4K: the extractor's own peak 210–232 MB with it raised, 196–205 MB fixed). And those mapped
 * blocks in transparent huge pages where the kernel offers them on request, for the extractor
 * and (passed on) its media tools: a fault per 2 MiB instead of per 4 KiB, after every fork
 * too (decision 0374).
 */
export function extractorMallocEnv(env = process.env) {
  return {
    MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX ?? "2",
    MALLOC_MMAP_THRESHOLD_: env.MALLOC_MMAP_THRESHOLD_ ?? "1048576",
    GLIBC_TUNABLES: env.GLIBC_TUNABLES ?? "glibc.malloc.hugetlb=1",
  };
}

export const ROOT = resolve(import.meta.dirname, "../..");
/** The developer's own edge secrets for `npm start` (git-ignored), as wrangler names them. */
export const DEV_VARS = join(ROOT, ".dev.vars");
// wrangler runs on this process's Node (22), whatever `node` the PATH finds first.
const WRANGLER = join(ROOT, "node_modules/wrangler/bin/wrangler.js");
/** Runs a prebuilt bundle under Miniflare, without wrangler (test stacks; decision 0370). */
const EDGE_HOST = join(ROOT, "scripts/lib/edge-host.mjs");

/** With these wrangler makes no outbound connection at all (TOOLCHAIN.md). */
export const OFFLINE_ENV = {
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
};

/**
 * Every process below `pid` (its children, theirs, …) from /proc: what a stack's children
 * started (the edge host's workerd, the extractor's media processes). None once it has ended.
 */
export async function descendants(pid) {
  const found = [];
  try {
    for (const tid of await readdir(`/proc/${pid}/task`)) {
      const children = await readFile(`/proc/${pid}/task/${tid}/children`, "utf8");
      for (const child of children.split(" ").filter(Boolean)) {
        found.push(Number(child), ...(await descendants(Number(child))));
      }
    }
  } catch {
    // The process ended while we looked.
  }
  return found;
}

/**
 * The lowest port freePort picks from: below it lie more of the well-known services' ports, and
 * the last of the ports fetch and browsers refuse to connect to (10080, the Fetch standard's
 * "bad ports").
 */
export const PORT_FLOOR = 10_100;

/**
 * How many ports freePort picks from, PORT_FLOOR up to the first of the kernel's ephemeral
 * range; undefined where that range cannot be read or leaves fewer than 1,000 below it.
 */
export function pickedPortSpan() {
  try {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/);
    const span = Number(low) - PORT_FLOOR;
    return Number.isInteger(span) && span >= 1000 ? span : undefined;
  } catch {
    return undefined;
  }
}

/** Why a bind of one port is refused while other ports may still be free. */
const PORT_REFUSED = new Set(["EADDRINUSE", "EACCES", "EPERM"]);

/** Binds `port` on 127.0.0.1 (0: any) and lets it go: the port bound, or undefined if refused. */
function tryListen(port) {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", (err) =>
      PORT_REFUSED.has(err.code) ? resolvePort(undefined) : reject(err),
    );
    server.listen(port, "127.0.0.1", () => {
      const bound = server.address().port;
      server.close(() => resolvePort(bound));
    });
  });
}

/**
 * A port free on 127.0.0.1, for a child to bind a moment later (decision 0376). Picked at
 * random between PORT_FLOOR and the kernel's ephemeral range, and bound once to see that it is
 * free: the kernel hands ports of that range to every outgoing connection, and a port it gave
 * us from there could be another connection's before the child binds it ("Address already in
 * use"). Where that range starts too low to leave room below it, the kernel picks, as before.
 * `random` is for the tests.
 */
export async function freePort({ random = Math.random } = {}) {
  const span = pickedPortSpan();
  if (span !== undefined) {
    try {
      for (let tries = 0; tries < 100; tries++) {
        const port = PORT_FLOOR + Math.floor(random() * span);
        if ((await tryListen(port)) !== undefined) return port;
      }
    } catch {
      // A bind that failed for another reason than the port: the kernel picks, below.
    }
  }
  const port = await tryListen(0);
  if (port === undefined) throw new Error("no free port on 127.0.0.1");
  return port;
}

/** Secrets are made once per state directory, so signed URLs stay valid across restarts. */
function loadSecrets(stateDir) {
  const file = join(stateDir, "secrets.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
  const secrets = {
    INTERNAL_TOKEN: randomBytes(32).toString("hex"),
    FILE_URL_SECRET: randomBytes(32).toString("hex"),
  };
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

/**
 * The edge's secrets as a .dev.vars-style file, readable by this user only, for
 * `wrangler dev --env-file`: on wrangler's command line `ps` would show them to everyone.
 */
export function writeEdgeSecrets(stateDir, secrets) {
  const file = join(stateDir, "edge-secrets.env");
  const lines = Object.entries(secrets).map(([name, value]) => {
    if (!/^[A-Za-z0-9_.:/+=-]*$/.test(value)) throw new Error(`${name} holds unsafe characters`);
    return `${name}=${value}\n`;
  });
  writeFileSync(file, lines.join(""), { mode: 0o600 });
  // writeFileSync's mode applies only when it creates the file.
  chmodSync(file, 0o600);
  return file;
}

/**
 * A copy of what the edge is built from, for stacks that must not change under a test:
 * `wrangler dev` rebuilds and restarts the worker whenever a source file changes, and a
 * restart drops what only lives in memory (delayed queue messages, calls held in waitUntil),
 * so an edit elsewhere in the tree would silently lose a test's jobs.
 */
function snapshotSources(stateDir) {
  const dir = join(stateDir, "edge-source");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // Everything the worker's bundle imports: its code, the shapes, and the guides it serves.
  for (const entry of EDGE_SOURCES) {
    if (existsSync(join(ROOT, entry)))
      cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

/**
 * The worker bundled once by wrangler's own bundler (`wrangler deploy --dry-run --outdir`) into
 * the temporary directory, named by a hash of what it is built from (a copy of the sources
 * taken first, so an edit during the build cannot be stored under the wrong name), beside a
 * wrangler.toml that runs it as it is (`no_bundle`): for test stacks (`prebuilt`), which each
 * spent about 1.3 CPU-seconds bundling the same worker in `wrangler dev` (decision 0292), and
 * with wrangler's options for it (edge-host.mjs runs it under Miniflare; decision 0370).
 * Returns the bundle's directory. Processes that build it at once each build their own and
 * keep whichever was renamed into place first (as migratedTemplate does).
 */
function prebuiltEdge() {
  const staging = mkdtempSync(join(cacheTmpdir(), "stills-edge-source-"));
  try {
    const source = snapshotSources(staging);
    const hash = createHash("sha256");
    for (const entry of EDGE_SOURCES) hashTree(hash, source, entry);
    hash.update(readFileSync(join(ROOT, "package-lock.json")));
    hash.update(readFileSync(join(ROOT, "node_modules/wrangler/package.json")));
    hash.update(readFileSync(EDGE_HOST));
    const target = join(cacheTmpdir(), `stills-edge-bundle-${hash.digest("hex").slice(0, 16)}`);
    if (existsSync(join(target, "done"))) {
      // Marks it used, so pruneEdgeBundles leaves it alone.
      const now = new Date();
      utimesSync(join(target, "done"), now, now);
      return target;
    }
    pruneEdgeBundles();
    const out = join(staging, "bundle");
    // NODE_ENV as `wrangler dev` defines it for the worker (deploy would say "production").
    const run = wrangler(["deploy", "--dry-run", "--outdir", out], {
      cwd: source,
      env: { ...process.env, ...OFFLINE_ENV, NODE_ENV: "development" },
    });
    if (run.status !== 0)
      throw new Error(`bundling the edge failed:\n${run.stdout}\n${run.stderr}`);
    rmSync(join(out, "README.md"), { force: true });
    rmSync(join(out, "index.js.map"), { force: true });
    writeFileSync(
      join(out, "wrangler.toml"),
      unbundledConfig(readFileSync(join(source, "wrangler.toml"), "utf8")),
    );
    // The worker's options as wrangler reads them from that wrangler.toml, for edge-host.mjs.
    const options = spawnSync(process.execPath, [EDGE_HOST, "--write-options", out], {
      cwd: ROOT,
      env: { ...process.env, ...OFFLINE_ENV },
      encoding: "utf8",
    });
    if (options.status !== 0)
      throw new Error(`reading the edge's options failed:\n${options.stdout}\n${options.stderr}`);
    // The marker last: a directory without it is never used.
    writeFileSync(join(out, "done"), "");
    try {
      renameSync(out, target);
    } catch (err) {
      // Another process put its own there first: the same bundle.
      if (!existsSync(join(target, "done"))) throw err;
    }
    return target;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Removes the bundles of sources no stack has started in a day (about 9 MB each; every edit of
 * the edge makes a new one). A bundle in use is marked at each start, so none is removed under
 * a running suite.
 */
function pruneEdgeBundles() {
  const dayAgo = Date.now() - 24 * 3600 * 1000;
  const directory = cacheTmpdir();
  for (const name of readdirSync(directory)) {
    if (!name.startsWith("stills-edge-bundle-") || name.includes(".")) continue;
    const done = join(directory, name, "done");
    try {
      if (statSync(done).mtimeMs < dayAgo)
        rmSync(join(directory, name), { recursive: true, force: true });
    } catch {}
  }
}

/** What the worker's bundle is built from (snapshotSources copies them). */
const EDGE_SOURCES = ["edge", "schema", "docs", "wrangler.toml", "tsconfig.json", "package.json"];

function hashTree(hash, root, entry) {
  const path = join(root, entry);
  if (!existsSync(path)) return;
  if (!statSync(path).isDirectory()) {
    hash.update(`${entry}\0`).update(readFileSync(path)).update("\0");
    return;
  }
  for (const name of readdirSync(path).sort()) hashTree(hash, root, join(entry, name));
}

/**
 * wrangler.toml for the bundle wrangler wrote: its entry is index.js, run without bundling,
 * and the modules beside it (named `<hash>-<name>`) are found by rules: a first Text rule for
 * the guides and the API reference's script by those names, falling through to the file's own
 * (wrangler ignores a later rule of the same type without `fallthrough`).
 */
export function unbundledConfig(toml) {
  const main = /^main = ".*"$/m;
  const firstRule = /^\[\[rules\]\]$/m;
  if (!main.test(toml) || !firstRule.test(toml))
    throw new Error("wrangler.toml has no main or no [[rules]]: the test bundle cannot run it");
  return toml
    .replace(main, 'main = "index.js"\nno_bundle = true\nfind_additional_modules = true')
    .replace(
      firstRule,
      '[[rules]]\ntype = "Text"\nglobs = ["**/*.md", "**/*-standalone.js"]\nfallthrough = true\n\n[[rules]]',
    );
}

export function wrangler(args, options = {}) {
  return spawnSync(process.execPath, [WRANGLER, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...OFFLINE_ENV },
    encoding: "utf8",
    ...options,
  });
}

export function applyMigrations(stateDir) {
  // Read straight from the local file: wrangler takes about two seconds to say there is
  // nothing to apply, and the admin command asks before every statement.
  if (migrationsApplied(stateDir)) return;
  // A state directory without any D1 yet gets a copy of a freshly migrated one: wrangler takes
  // 3–8 s to apply the migrations to an empty database, and the test suite makes a dozen and
  // more new state directories (decision 0290).
  if (!existsSync(join(stateDir, D1_DIR))) {
    cpSync(migratedTemplate(), join(stateDir, D1_DIR), { recursive: true });
    if (migrationsApplied(stateDir)) return;
  }
  migrateWithWrangler(stateDir);
}

/** Where a state directory keeps its local D1 (wrangler's and Miniflare's layout). */
const D1_DIR = "v3/d1";

function migrateWithWrangler(stateDir) {
  const run = wrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", stateDir]);
  if (run.status !== 0) throw new Error(`D1 migrations failed:\n${run.stdout}\n${run.stderr}`);
}

/**
 * A local D1 with every migration applied and nothing else, made once by wrangler into the
 * temporary directory and named by what it is made of (the migrations, wrangler.toml, the
 * wrangler that applied them), so a changed migration makes a new one. Processes that make it
 * at once each build their own and keep whichever was renamed into place first.
 */
function migratedTemplate() {
  const hash = createHash("sha256");
  const migrations = join(ROOT, "schema/migrations");
  for (const name of readdirSync(migrations).sort()) {
    if (!name.endsWith(".sql")) continue;
    hash
      .update(`${name}\0`)
      .update(readFileSync(join(migrations, name)))
      .update("\0");
  }
  hash.update(readFileSync(join(ROOT, "wrangler.toml")));
  hash.update(readFileSync(join(ROOT, "node_modules/wrangler/package.json")));
  const template = join(cacheTmpdir(), `stills-d1-migrated-${hash.digest("hex").slice(0, 16)}`);
  if (existsSync(join(template, "done"))) return join(template, "d1");
  const building = mkdtempSync(`${template}.building-`);
  try {
    migrateWithWrangler(building);
    // The marker last: a template without it is never used.
    cpSync(join(building, D1_DIR), join(building, "template", "d1"), { recursive: true });
    writeFileSync(join(building, "template", "done"), "");
    try {
      renameSync(join(building, "template"), template);
    } catch (err) {
      // Another process put its own there first: the same database.
      if (!existsSync(join(template, "done"))) throw err;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return join(template, "d1");
}

/** Whether the local D1 in `stateDir` has every migration in schema/migrations applied. */
function migrationsApplied(stateDir) {
  const wanted = readdirSync(join(ROOT, "schema/migrations")).filter((n) => n.endsWith(".sql"));
  let applied;
  try {
    applied = new Set(readLocalD1("SELECT name FROM d1_migrations", stateDir).map((r) => r.name));
  } catch {
    return false; // no database yet, or no migrations table: let wrangler make them
  }
  return wanted.every((name) => applied.has(name));
}

/**
 * Test stacks only check the media tools (scripts/start.mjs installs them when it may). Which
 * yt-dlp the extractor runs is the caller's choice (STILLS_YTDLP; scripts/lib/ytdlp.mjs).
 */
function requireTools(env) {
  ensureMediaTools({ env, install: false });
}

async function waitForHttp(url, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${url} exited before it was ready (${child.signalCode ?? child.exitCode})`);
    try {
      const res = await fetch(url);
      await res.body?.cancel();
      // 2xx only: /healthz and /v1/pricing answer 200. Another process that took the port
      // between freePort's pick and the child's bind (another stack's extractor, once) answers
      // 404, and the child then exits with "Address already in use": startStack tries again.
      if (res.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} was not ready after ${timeoutMs} ms`);
}

/** The last lines of a log file (logDir mode), at most the last 256 KiB of it. */
export function readTail(file, lines = 200) {
  if (!existsSync(file)) return "";
  // Only the end is read: a shared stack's log grows through the whole suite.
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer
      .toString("utf8")
      .split("\n")
      .slice(-lines - 1)
      .join("\n");
  } finally {
    closeSync(fd);
  }
}

const TAIL_BYTES = 256 * 1024;

/** The last lines a child wrote to a piped stderr (quiet mode), so the pipe never fills. */
function keepTail(child, lines = 200) {
  const tail = [];
  let partial = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    tail.push(...parts);
    if (tail.length > lines) tail.splice(0, tail.length - lines);
  });
  return () => [...tail, ...(partial ? [partial] : [])].join("\n");
}

/** Hands every line a child writes on `stream` to `onLine` (the `onOutput` setting). */
function forwardLines(stream, onLine) {
  if (!stream) return;
  let partial = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    for (const line of parts) onLine(line);
  });
  stream.on("end", () => {
    if (partial) onLine(partial);
    partial = "";
  });
}

/**
 * Restart delays after the extractor dies on its own, as container platforms do: 0.5 s,
 * doubling to 30 s, back to 0.5 s once an instance has run for 10 s.
 */
export const RESTART_BACKOFF = { firstMs: 500, maxMs: 30_000, resetAfterMs: 10_000 };

export function restartDelayMs(failuresInARow) {
  return Math.min(RESTART_BACKOFF.maxMs, RESTART_BACKOFF.firstMs * 2 ** failuresInARow);
}

/**
 * Keeps one extractor process running: when it exits without being asked to (a crash,
 * kill -9), a new one starts after a growing delay, with a log line. Asked stops
 * (stopExtractor, stop) are never restarted.
 */
function superviseExtractor({ spawnChild, healthUrl, log }) {
  let child = null;
  let wanted = true;
  let timer = null;
  let restarts = 0;
  let failuresInARow = 0;
  let startedAt = 0;
  let tail = () => "";
  const exited = (c) => c.exitCode !== null || c.signalCode !== null;
  const waitExit = (c) => exited(c) || new Promise((r) => c.once("exit", r));

  function start() {
    const spawned = spawnChild();
    child = spawned;
    startedAt = Date.now();
    tail = keepTail(spawned);
    spawned.once("exit", (code, signal) => {
      if (spawned !== child || !wanted) return;
      if (Date.now() - startedAt >= RESTART_BACKOFF.resetAfterMs) failuresInARow = 0;
      const delay = restartDelayMs(failuresInARow);
      failuresInARow += 1;
      log(
        `extractor exited (${signal ?? `code ${code}`}); restarting it in ${delay / 1000} s ` +
          `(restart ${restarts + 1})`,
      );
      timer = setTimeout(() => {
        timer = null;
        if (!wanted) return;
        restarts += 1;
        start();
      }, delay);
    });
    return spawned;
  }

  return {
    start,
    get child() {
      return child;
    },
    get restarts() {
      return restarts;
    },
    logTail: () => tail(),
    /** Resolves with the current process once it answers /healthz (after a restart, too). */
    async ready(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = child;
        try {
          if (!exited(current)) {
            await waitForHttp(healthUrl, current, Math.max(1, deadline - Date.now()));
            if (current === child && !exited(current)) return current;
          }
        } catch {}
        if (Date.now() > deadline)
          throw new Error(`the extractor was not back after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop(signal = "SIGTERM") {
      wanted = false;
      if (timer) clearTimeout(timer);
      timer = null;
      if (child && !exited(child)) child.kill(signal);
      if (child) await waitExit(child);
    },
    resume() {
      wanted = true;
      failuresInARow = 0;
      return start();
    },
  };
}

/**
 * Starts the edge and the extractor. Settings come from `settings` or the environment:
 * PORT, EXTRACTOR_PORT, STILLS_ALLOW_PRIVATE_NETWORK, STILLS_DEMO_DAILY_LIMIT, any EXTRACTOR_*
 * variable (extractor/config.ts), STILLS_YTDLP (which yt-dlp the extractor runs), `quiet`
 * (children's output kept, not printed), `onOutput` (every line both children write, as
 * (side, line), with the edge's info lines included: the one-grep trace test), `log` (where
 * the stack's own lines go; console.error unless quiet) and `snapshot` (run the edge from a
 * copy of its sources, so edits in the tree do not restart it) or `prebuilt` (run the worker
 * bundled once per set of sources, prebuiltEdge, under Miniflare without wrangler: the test
 * suite's stacks and the benchmarks; edge-host.mjs).
 */
/**
 * Starts the stack; once more (with fresh ports) when a port picked by freePort was taken by
 * another process between its pick and the child's bind ("Address already in use"). Outgoing
 * connections no longer draw from where freePort picks (decision 0376); what is left is two
 * processes picking the same port at the same moment, or a machine whose ephemeral range
 * leaves freePort no room below it.
 */
export async function startStack(settings = {}) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startStackOnce(settings);
    } catch (err) {
      if (attempt >= 3 || !/Address already in use|EADDRINUSE/.test(String(err?.message)))
        throw err;
    }
  }
}

/**
 * A benchmark's stack: its state in `stateDir`, on a free port, loopback sources allowed, the
 * children's output kept, and the edge under Miniflare as the tests run it, with no
 * `wrangler dev` proxy in front (decision 0371). `settings` add to these.
 */
export async function startBenchStack(stateDir, settings = {}) {
  return startStack({
    STILLS_STATE_DIR: stateDir,
    PORT: String(await freePort()),
    STILLS_ALLOW_PRIVATE_NETWORK: "1",
    quiet: true,
    prebuilt: true,
    ...settings,
  });
}

async function startStackOnce(settings = {}) {
  const {
    quiet = false,
    log: logOption,
    snapshot = false,
    prebuilt = false,
    onOutput,
    devVars,
    logDir,
    ...variables
  } = settings;
  // Before anything starts, so a wrong call leaves nothing running.
  if (prebuilt && devVars) throw new Error("a prebuilt stack takes no .dev.vars");
  const log = logOption ?? (quiet ? () => {} : (line) => console.error(line));
  const env = { ...process.env, ...variables };
  requireTools(env);
  const stateDir = resolve(ROOT, env.STILLS_STATE_DIR ?? ".wrangler/state");
  const port = Number(env.PORT ?? 8787);
  const extractorPort = Number(env.EXTRACTOR_PORT ?? (await freePort()));
  const secrets = loadSecrets(stateDir);
  applyMigrations(stateDir);
  // The extractor runs as the image runs it: bundled from the sources as they are now.
  await buildExtractor();
  const secretsFile = writeEdgeSecrets(stateDir, {
    INTERNAL_TOKEN: secrets.INTERNAL_TOKEN,
    FILE_URL_SECRET: secrets.FILE_URL_SECRET,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  // Clients reach the edge through the proxy on PORT, which tells it their socket's address
  // (decision 0104); wrangler dev listens on a private port behind it.
  const workerPort = await freePort();
  const workerUrl = `http://127.0.0.1:${workerPort}`;
  const extractorUrl = `http://127.0.0.1:${extractorPort}`;
  const shared = {
    STILLS_ALLOW_PRIVATE_NETWORK: env.STILLS_ALLOW_PRIVATE_NETWORK ?? "0",
    STILLS_DEMO_DAILY_LIMIT: env.STILLS_DEMO_DAILY_LIMIT ?? "5",
  };
  const edgeVars = {
    ...shared,
    EXTRACTOR_URL: extractorUrl,
    PUBLIC_BASE_URL: baseUrl,
    // The development routes (edge/routes/dev/): keys and rows without spawning wrangler.
    STILLS_DEV_ROUTES: "1",
    ...(env.JOB_LEASE_SECONDS ? { JOB_LEASE_SECONDS: env.JOB_LEASE_SECONDS } : {}),
  };
  // With logDir, each child's stderr goes to its own file there (appended across restarts), so
  // other processes can read the tail: the shared test stack's (test/e2e/support/).
  const logFiles = logDir
    ? { edge: join(logDir, "edge.log"), extractor: join(logDir, "extractor.log") }
    : undefined;
  // stdin is the child's lifeline where it reads one: a pipe this process holds and never
  // writes. When this process ends, even killed, the pipe closes and the child stops, instead of
  // holding its port and state as an orphan (the extractor and edge-host.mjs; wrangler does not).
  // Neither captured nor logged nor quiet: the children's output goes to ours (npm start).
  const showsOutput = !onOutput && !logFiles && !quiet;
  const stdioFor = (side, lifeline) => {
    const stdin = lifeline ? "pipe" : "ignore";
    return onOutput
      ? [stdin, "pipe", "pipe"]
      : logFiles
        ? [stdin, "ignore", openSync(logFiles[side], "a")]
        : quiet
          ? [stdin, "ignore", "pipe"]
          : // The edge's stderr is read as well as shown (below), so that a port another
            // process took first ("Address already in use") is seen and the start tried again.
            [stdin, "inherit", side === "edge" ? "pipe" : "inherit"];
  };
  const closeStdio = (stdio) => {
    if (typeof stdio[2] === "number") closeSync(stdio[2]);
  };
  const captured = (side, child) => {
    if (onOutput) {
      forwardLines(child.stdout, (line) => onOutput(side, line));
      forwardLines(child.stderr, (line) => onOutput(side, line));
    }
    return child;
  };

  // The extractor gets its secret in its environment (never its command line), which only
  // this user can read (/proc/<pid>/environ); its media tools run without it.
  const extractorEnv = {
    ...env,
    ...shared,
    INTERNAL_TOKEN: secrets.INTERNAL_TOKEN,
    EXTRACTOR_PORT: String(extractorPort),
    EXTRACTOR_HOST: "127.0.0.1",
    ...extractorMallocEnv(env),
    EXTRACTOR_STOP_WITH_PARENT: "1",
  };
  const extractor = superviseExtractor({
    spawnChild: () => {
      const stdio = stdioFor("extractor", true);
      const child = spawn(process.execPath, [EXTRACTOR_MAIN], {
        cwd: ROOT,
        env: extractorEnv,
        stdio,
        // A session, so a scheduling group, of its own (decision 0375): not the one of whatever
        // started the stack (a terminal, a test, a bench's clients). Its lifeline stops it.
        detached: true,
      });
      closeStdio(stdio);
      return captured("extractor", child);
    },
    healthUrl: `${extractorUrl}/healthz`,
    log,
  });
  // First, so a port already taken stops the start before any child runs.
  const proxy = await spawnClientAddressProxy({ port, upstream: workerUrl });
  const firstExtractor = extractor.start();
  const edgeStdio = stdioFor("edge", prebuilt);
  const logLevel = (quiet || logFiles) && !onOutput ? "error" : "log";
  // Lets the consumer return while waitUntil holds the extractor call (local only).
  const localFlags = ["--compatibility-flag", "queue_consumer_no_wait_for_wait_until"];
  const varArgs = Object.entries(edgeVars).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const edgeArgs = prebuilt
    ? [
        EDGE_HOST,
        "--bundle",
        prebuiltEdge(),
        "--port",
        String(workerPort),
        "--persist-to",
        stateDir,
        "--secrets-file",
        secretsFile,
        "--log-level",
        logLevel,
        "--exit-with-parent",
        ...localFlags,
        ...varArgs,
      ]
    : [
        WRANGLER,
        "dev",
        "--local",
        "--ip",
        "127.0.0.1",
        "--port",
        String(workerPort),
        "--inspector-port",
        String(await freePort()),
        "--persist-to",
        stateDir,
        "--show-interactive-dev-session=false",
        // "log", not "info": wrangler ranks the worker's console.log below info, and would hide
        // the edge's step lines (edge/log.ts) and the local sign-in mail.
        "--log-level",
        logLevel,
        // `npm start` also reads the developer's own .dev.vars (Stripe test keys, say), which
        // wrangler skips once any --env-file is given; a later file wins, so ours is last. Only
        // when it exists: wrangler hands --env-file to Node too, which refuses a missing file.
        ...(devVars && existsSync(devVars) ? ["--env-file", devVars] : []),
        "--env-file",
        secretsFile,
        ...localFlags,
        ...varArgs,
      ];
  const edge = spawn(process.execPath, edgeArgs, {
    cwd: snapshot && !prebuilt ? snapshotSources(stateDir) : ROOT,
    env: { ...env, ...OFFLINE_ENV },
    stdio: edgeStdio,
    // The edge's processes (wrangler or edge-host.mjs, and their workerd) are one group, ended
    // together.
    detached: true,
  });
  closeStdio(edgeStdio);
  captured("edge", edge);
  const edgeTail = keepTail(edge);
  if (showsOutput) edge.stderr?.pipe(process.stderr);
  const exited = (child) => child.exitCode !== null || child.signalCode !== null;
  const waitExit = (child) => exited(child) || new Promise((r) => child.once("exit", r));
  const stopExtractor = (signal = "SIGTERM") => extractor.stop(signal);
  const restartExtractor = async () => {
    await extractor.stop();
    const child = extractor.resume();
    await waitForHttp(`${extractorUrl}/healthz`, child, 30_000);
    return child;
  };
  const stop = async () => {
    // wrangler or edge-host.mjs runs workerd as its child: end the whole group.
    if (!exited(edge)) {
      try {
        process.kill(-edge.pid, "SIGTERM");
      } catch {}
    }
    await Promise.all([extractor.stop(), waitExit(edge), proxy.close()]);
  };
  try {
    await Promise.all([
      waitForHttp(`${extractorUrl}/healthz`, firstExtractor, 30_000),
      waitForHttp(`${baseUrl}/v1/pricing`, edge, 60_000),
    ]);
  } catch (err) {
    await stop();
    const logs = (
      logFiles
        ? [readTail(logFiles.edge, 60), readTail(logFiles.extractor, 20)]
        : [edgeTail(), extractor.logTail()]
    )
      .filter(Boolean)
      .join("\n");
    throw new Error(`${err.message}${logs ? `\n${logs}` : ""}`);
  }
  return {
    baseUrl,
    apiUrl: `${baseUrl}/v1`,
    extractorUrl,
    stateDir,
    secrets,
    secretsFile,
    children: {
      edge,
      get extractor() {
        return extractor.child;
      },
      proxy: proxy.child,
    },
    get extractorRestarts() {
      return extractor.restarts;
    },
    extractorReady: (timeoutMs) => extractor.ready(timeoutMs),
    logFiles,
    logTail: (name) =>
      logFiles ? readTail(logFiles[name]) : name === "edge" ? edgeTail() : extractor.logTail(),
    stop,
    stopExtractor,
    restartExtractor,
  };
}

/**
 * Runs SQL statements on a running local stack's D1 through its development route
 * (edge/routes/dev/), in one batch: what tests and benchmarks use instead of spawning
 * `wrangler d1 execute` (about two seconds a call). `stack` needs `baseUrl` and `secrets`.
 * Returns each statement's rows.
 */
export async function stackSql(stack, statements) {
  const response = await fetch(`${stack.baseUrl}/__dev/sql`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${stack.secrets.INTERNAL_TOKEN}`,
      "content-type": "application/json",
    },
    body: JSON.stringify({ statements }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`SQL on ${stack.baseUrl} failed: ${response.status} ${text}`);
  return JSON.parse(text).results;
}

/** One statement's rows on a running stack (stackSql). */
export async function stackQuery(stack, sql, params = []) {
  const [rows] = await stackSql(stack, [{ sql, params }]);
  return rows;
}

/**
 * A script of statements separated by `;` (none inside a quoted string may hold one unquoted)
 * on a running stack, in one batch (stackSql).
 */
export async function stackExecute(stack, script) {
  const statements = splitSqlScript(script).map((sql) => ({ sql, params: [] }));
  await stackSql(stack, statements);
}

/** Splits a SQL script at each `;` outside single-quoted strings. */
export function splitSqlScript(script) {
  const statements = [];
  let current = "";
  let quoted = false;
  for (const char of script) {
    if (char === "'") quoted = !quoted;
    if (char === ";" && !quoted) {
      if (current.trim()) statements.push(current.trim());
      current = "";
    } else {
      current += char;
    }
  }
  if (current.trim()) statements.push(current.trim());
  return statements;
}

function d1Execute(dir, args) {
  return wrangler(["d1", "execute", "DB", "--local", "--persist-to", dir, ...args]);
}

/** Reads one row from the local D1 of a stack (for the admin command and tests). */
export function queryLocal(sql, stateDir) {
  const dir = resolve(ROOT, stateDir ?? ".wrangler/state");
  const run = d1Execute(dir, ["--json", "--command", sql]);
  if (run.status !== 0) throw new Error(`query failed:\n${run.stdout}\n${run.stderr}`);
  return JSON.parse(run.stdout)[0].results;
}

/**
 * node:sqlite, loaded without its one-time "experimental feature" warning, which would land in
 * the admin command's stderr (its callers read that stream).
 */
function sqlite() {
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning, ...rest) => {
    if (String(warning).includes("SQLite is an experimental feature")) return;
    emitWarning.call(process, warning, ...rest);
  };
  try {
    return process.getBuiltinModule("node:sqlite");
  } finally {
    process.emitWarning = emitWarning;
  }
}

/**
 * Reads rows straight from the SQLite file behind a local D1 (no wrangler spawned), opened
 * read-only: for tests that check what the admin command wrote while no stack runs.
 */
export function readLocalD1(sql, stateDir) {
  const { DatabaseSync } = sqlite();
  const db = new DatabaseSync(localD1File(stateDir), { readOnly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

/** The SQLite file behind a state directory's local D1. */
function localD1File(stateDir) {
  const dir = join(
    resolve(ROOT, stateDir ?? ".wrangler/state"),
    "v3/d1/miniflare-D1DatabaseObject",
  );
  const files = existsSync(dir)
    ? readdirSync(dir).filter((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite")
    : [];
  if (files.length !== 1)
    throw new Error(`expected one D1 database in ${dir}, found ${files.length}`);
  return join(dir, files[0]);
}

/**
 * Runs a SQL script straight on the SQLite file behind a local D1 (migrated first), in one
 * transaction: for tests that set rows up while no stack runs on the directory, without the
 * wrangler run executeLocalSql spawns (a second or two of CPU each; decision 0290). Never while
 * a stack runs on it. The admin command's own writes still go through wrangler.
 */
export function executeLocalD1(script, stateDir) {
  const dir = resolve(ROOT, stateDir ?? ".wrangler/state");
  applyMigrations(dir);
  const { DatabaseSync } = sqlite();
  const db = new DatabaseSync(localD1File(dir));
  try {
    db.exec("BEGIN IMMEDIATE");
    try {
      db.exec(script);
      db.exec("COMMIT");
    } catch (err) {
      db.exec("ROLLBACK");
      throw err;
    }
  } finally {
    db.close();
  }
}

/** Runs a SQL script against the local D1 of a stack (migrated first). */
export function executeLocalSql(script, stateDir) {
  const dir = resolve(ROOT, stateDir ?? ".wrangler/state");
  applyMigrations(dir);
  const file = join(dir, `script-${process.pid}-${Date.now()}.sql`);
  writeFileSync(file, script, { mode: 0o600 });
  try {
    const run = d1Execute(dir, ["--file", file, "--yes"]);
    if (run.status !== 0) throw new Error(`SQL script failed:\n${run.stdout}\n${run.stderr}`);
  } finally {
    rmSync(file, { force: true });
  }
}

/**
 * `npm run admin -- create-key` as a function: returns the new key. With `stack` (a running
 * one), through its development route; otherwise on `stateDir`, through wrangler, or straight
 * on the D1 file with `onFile` (executeLocalD1: only while no stack runs there).
 */
export async function createKey({
  email,
  plan = "free",
  packCredits = 0,
  stateDir,
  stack,
  onFile = false,
}) {
  const { issueKeyStatements, toSqlScript } = await import("../../schema/accounts.ts");
  const issued = await issueKeyStatements({ email, plan, packCredits });
  if (stack) await stackSql(stack, issued.statements);
  else if (onFile) executeLocalD1(toSqlScript(issued.statements), stateDir);
  else executeLocalSql(toSqlScript(issued.statements), stateDir);
  return issued;
}
