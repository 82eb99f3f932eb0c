// Starting the local stack: the edge under `wrangler dev` (local D1, R2, Queues, Durable
// Objects, persisted under the state directory) and the extractor as a Node process. Used by
// `npm start`, the end-to-end tests and the benchmarks, so all three run the same stack.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
// wrangler runs on this process's Node (22), whatever `node` the PATH finds first.
const WRANGLER = join(ROOT, "node_modules/wrangler/bin/wrangler.js");

/** With these wrangler makes no outbound connection at all (TOOLCHAIN.md). */
export const OFFLINE_ENV = {
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
};

export function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
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

export function wrangler(args, options = {}) {
  return spawnSync(process.execPath, [WRANGLER, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...OFFLINE_ENV },
    encoding: "utf8",
    ...options,
  });
}

export function applyMigrations(stateDir) {
  const run = wrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", stateDir]);
  if (run.status !== 0) throw new Error(`D1 migrations failed:\n${run.stdout}\n${run.stderr}`);
}

function requireTools() {
  const missing = ["ffmpeg", "ffprobe"].filter(
    (tool) => spawnSync(tool, ["-version"]).status !== 0,
  );
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(" and ")} not found. Install them first: apt-get install -y ffmpeg`,
    );
  }
  if (spawnSync("yt-dlp", ["--version"]).status !== 0) {
    console.warn(
      "yt-dlp not found: platform links (YouTube, TikTok, …) will fail. apt-get install -y yt-dlp",
    );
  }
}

async function waitForHttp(url, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`${url} exited before it was ready (code ${child.exitCode})`);
    try {
      const res = await fetch(url);
      await res.body?.cancel();
      if (res.status < 500) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} was not ready after ${timeoutMs} ms`);
}

/**
 * Starts the edge and the extractor. Settings come from `settings` or the environment:
 * PORT, EXTRACTOR_PORT, STILLS_ALLOW_PRIVATE_NETWORK, STILLS_DEMO_DAILY_LIMIT.
 */
export async function startStack(settings = {}) {
  requireTools();
  const env = { ...process.env, ...settings };
  const stateDir = resolve(ROOT, env.STILLS_STATE_DIR ?? ".wrangler/state");
  const port = Number(env.PORT ?? 8787);
  const extractorPort = Number(env.EXTRACTOR_PORT ?? (await freePort()));
  const secrets = loadSecrets(stateDir);
  applyMigrations(stateDir);
  const baseUrl = `http://127.0.0.1:${port}`;
  const extractorUrl = `http://127.0.0.1:${extractorPort}`;
  const shared = {
    INTERNAL_TOKEN: secrets.INTERNAL_TOKEN,
    STILLS_ALLOW_PRIVATE_NETWORK: env.STILLS_ALLOW_PRIVATE_NETWORK ?? "0",
    STILLS_DEMO_DAILY_LIMIT: env.STILLS_DEMO_DAILY_LIMIT ?? "5",
  };
  const edgeVars = {
    ...shared,
    FILE_URL_SECRET: secrets.FILE_URL_SECRET,
    EXTRACTOR_URL: extractorUrl,
    PUBLIC_BASE_URL: baseUrl,
  };
  const quiet = settings.quiet ?? false;
  const stdio = quiet ? ["ignore", "ignore", "pipe"] : ["ignore", "inherit", "inherit"];

  const extractorEnv = {
    ...env,
    ...shared,
    EXTRACTOR_PORT: String(extractorPort),
    EXTRACTOR_HOST: "127.0.0.1",
  };
  const spawnExtractor = () =>
    spawn(process.execPath, [join(ROOT, "extractor/main.ts")], {
      cwd: ROOT,
      env: extractorEnv,
      stdio,
    });
  let extractor = spawnExtractor();
  const edge = spawn(
    process.execPath,
    [
      WRANGLER,
      "dev",
      "--local",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(await freePort()),
      "--persist-to",
      stateDir,
      "--show-interactive-dev-session=false",
      "--log-level",
      quiet ? "error" : "info",
      ...Object.entries(edgeVars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
    ],
    { cwd: ROOT, env: { ...env, ...OFFLINE_ENV }, stdio, detached: true },
  );
  const exited = (child) => child.exitCode !== null || child.signalCode !== null;
  const waitExit = (child) => exited(child) || new Promise((r) => child.once("exit", r));
  const stopExtractor = async (signal = "SIGTERM") => {
    if (!exited(extractor)) extractor.kill(signal);
    await waitExit(extractor);
  };
  const restartExtractor = async () => {
    await stopExtractor();
    extractor = spawnExtractor();
    await waitForHttp(`${extractorUrl}/healthz`, extractor, 30_000);
    return extractor;
  };
  const stop = async () => {
    // wrangler runs workerd as its child: end the whole group.
    if (!exited(edge)) {
      try {
        process.kill(-edge.pid, "SIGTERM");
      } catch {}
    }
    await Promise.all([stopExtractor(), waitExit(edge)]);
  };
  try {
    await Promise.all([
      waitForHttp(`${extractorUrl}/healthz`, extractor, 30_000),
      waitForHttp(`${baseUrl}/v1/pricing`, edge, 60_000),
    ]);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    baseUrl,
    apiUrl: `${baseUrl}/v1`,
    extractorUrl,
    stateDir,
    secrets,
    children: {
      edge,
      get extractor() {
        return extractor;
      },
    },
    stop,
    stopExtractor,
    restartExtractor,
  };
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

/** `npm run admin -- create-key` as a function: returns the new key. */
export async function createKey({ email, plan = "free", packCredits = 0, stateDir }) {
  const { issueKeyStatements, toSqlScript } = await import("../../schema/accounts.ts");
  const issued = await issueKeyStatements({ email, plan, packCredits });
  executeLocalSql(toSqlScript(issued.statements), stateDir);
  return issued;
}
