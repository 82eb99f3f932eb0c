// A current yt-dlp for `npm start` and `.ci/run`. Platforms change their pages every few weeks
// and Debian's yt-dlp is from 2023, so a copy older than MAX_AGE_DAYS is replaced by the
// project's latest official release, fetched into a cache folder and checked against the
// SHA-256 the same release publishes. Without a network (or on any failure) the stack starts
// anyway with the copy it has and one line saying how to update. Only Node built-ins.
//
//   node scripts/lib/ytdlp.mjs   → prints the yt-dlp path to use (empty: none), warnings on stderr
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const RELEASE_BASE = "https://github.com/yt-dlp/yt-dlp/releases/latest/download";
export const MAX_AGE_DAYS = 90;
const DOWNLOAD_TIMEOUT_MS = 20_000;
const DAY_MS = 86_400_000;
const UPDATE_HINT =
  "update it with `pip install -U yt-dlp` (or `yt-dlp -U`), or set STILLS_YTDLP to a current one";

/** Where a fetched yt-dlp is kept: STILLS_CACHE_DIR, else node_modules/.cache/stills. */
export function defaultCacheDir(env = process.env) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  return env.STILLS_CACHE_DIR || join(root, "node_modules/.cache/stills");
}

/** yt-dlp's version is its release date (2023.03.04, or 2025.01.15.232805 for nightlies). */
export function releaseDate(version) {
  const match = /^(\d{4})\.(\d{2})\.(\d{2})/.exec(version ?? "");
  if (!match) return undefined;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** The version a yt-dlp command reports, or undefined when it does not run. */
export function ytdlpVersion(command, env = process.env) {
  const run = spawnSync(command, ["--version"], {
    env,
    stdio: ["ignore", "pipe", "ignore"],
    timeout: 30_000,
  });
  return run.status === 0 ? run.stdout.toString().trim() : undefined;
}

function isCurrent(version, now) {
  const date = releaseDate(version);
  return date !== undefined && now.getTime() - date.getTime() <= MAX_AGE_DAYS * DAY_MS;
}

/** The hash SHA2-256SUMS lists for `name` ("<hex>  <name>" lines, as sha256sum writes). */
export function publishedSha256(sums, name) {
  for (const line of sums.split("\n")) {
    const match = /^([0-9a-f]{64})\s+\*?(\S+)\s*$/i.exec(line.trim());
    if (match && match[2] === name) return match[1].toLowerCase();
  }
  return undefined;
}

async function download(url, timeoutMs) {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "follow" });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}

/**
 * Fetches the release's `yt-dlp` (a zipapp; runs on python3) and SHA2-256SUMS from
 * `releaseBase`, and installs the binary into `cacheDir` only if its SHA-256 is the published
 * one. Returns the installed path; throws with the reason otherwise.
 */
export async function fetchRelease({ releaseBase = RELEASE_BASE, cacheDir, timeoutMs }) {
  const [binary, sums] = await Promise.all([
    download(`${releaseBase}/yt-dlp`, timeoutMs),
    download(`${releaseBase}/SHA2-256SUMS`, timeoutMs),
  ]);
  const expected = publishedSha256(sums.toString("utf8"), "yt-dlp");
  if (!expected) throw new Error("SHA2-256SUMS lists no hash for yt-dlp");
  const actual = createHash("sha256").update(binary).digest("hex");
  if (actual !== expected) {
    throw new Error(`checksum mismatch (published ${expected}, downloaded ${actual})`);
  }
  mkdirSync(cacheDir, { recursive: true });
  const target = join(cacheDir, "yt-dlp");
  const partial = `${target}.${process.pid}.partial`;
  writeFileSync(partial, binary, { mode: 0o755 });
  chmodSync(partial, 0o755);
  // A rename, so a concurrent start never runs a half-written file.
  renameSync(partial, target);
  return target;
}

/**
 * Chooses the yt-dlp the extractor runs: STILLS_YTDLP, else yt-dlp on the PATH; when that is
 * older than MAX_AGE_DAYS, a current copy already in the cache, else a freshly fetched one.
 * Returns { path, version, source, warning }: path undefined when there is no yt-dlp at all
 * (direct video links still work). Never throws.
 */
export async function chooseYtDlp({
  env = process.env,
  cacheDir = defaultCacheDir(env),
  releaseBase = RELEASE_BASE,
  now = new Date(),
  timeoutMs = DOWNLOAD_TIMEOUT_MS,
  say = (line) => console.error(line),
} = {}) {
  const configured = env.STILLS_YTDLP || "yt-dlp";
  const version = ytdlpVersion(configured, env);
  if (isCurrent(version, now)) return { path: configured, version, source: "configured" };

  const cached = join(cacheDir, "yt-dlp");
  const cachedVersion = existsSync(cached) ? ytdlpVersion(cached, env) : undefined;
  if (isCurrent(cachedVersion, now)) {
    return { path: cached, version: cachedVersion, source: "cache" };
  }

  const have = version ? `yt-dlp ${version} is older than ${MAX_AGE_DAYS} days` : "no yt-dlp";
  say(`${have}: fetching the current release into ${cacheDir}`);
  let why;
  try {
    const fetched = await fetchRelease({ releaseBase, cacheDir, timeoutMs });
    const fetchedVersion = ytdlpVersion(fetched, env);
    if (fetchedVersion) return { path: fetched, version: fetchedVersion, source: "fetched" };
    why = "the fetched release does not run (it needs python3)";
  } catch (error) {
    why = error.cause?.code ?? error.message;
  }
  const fallback = version ? configured : cachedVersion ? cached : undefined;
  const warning =
    `yt-dlp: could not fetch the current release (${why}); ` +
    `${fallback ? `using ${fallback}, which platform links may outgrow` : "platform links will fail"}: ${UPDATE_HINT}`;
  say(warning);
  return {
    path: fallback,
    version: fallback === cached ? cachedVersion : version,
    source: fallback ? "outdated" : "none",
    warning,
  };
}

const invokedDirectly =
  process.argv[1] !== undefined &&
  realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
if (invokedDirectly) {
  const chosen = await chooseYtDlp();
  process.stdout.write(`${chosen.path ?? ""}\n`);
}
