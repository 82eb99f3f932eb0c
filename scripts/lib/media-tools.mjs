// ffmpeg and ffprobe for `npm start` and `.ci/run`: found through FFMPEG_PATH/FFPROBE_PATH or
// the PATH; when missing, installed from the system's packages if we are root (as a fresh CI
// machine is), otherwise a one-line answer naming the command to run. Nothing here ever
// removes a package. Only Node built-ins: `.ci/run` calls this before `npm install`, on
// whatever Node the machine has.
//
//   node scripts/lib/media-tools.mjs      → exits 0 when both tools run (installing them if it
//                                           may), else 1 with the one line on stderr
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const INSTALL_COMMAND = "apt-get install -y --no-install-recommends ffmpeg";

/** The command each tool is started with: its *_PATH variable, else its name on the PATH. */
export function mediaToolCommands(env = process.env) {
  return { ffmpeg: env.FFMPEG_PATH || "ffmpeg", ffprobe: env.FFPROBE_PATH || "ffprobe" };
}

function runs(command, args, env) {
  const run = spawnSync(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  return run.status === 0 ? run.stdout.toString() : undefined;
}

/** The tools (ffmpeg, ffprobe) that do not start and answer `-version`. */
export function missingMediaTools(env = process.env) {
  const commands = mediaToolCommands(env);
  return Object.entries(commands)
    .filter(([, command]) => runs(command, ["-version"], env) === undefined)
    .map(([tool]) => tool);
}

/** Asked of `id` rather than process.getuid(), so a test can stand in for root with a fake. */
function isRoot(env) {
  return runs("id", ["-u"], env)?.trim() === "0";
}

/**
 * Makes sure ffmpeg and ffprobe run. `install: false` only checks (test stacks). Returns
 * { installed } or throws an Error whose message is the one line to show.
 */
export function ensureMediaTools({
  env = process.env,
  install = true,
  say = (line) => console.error(line),
} = {}) {
  const missing = missingMediaTools(env);
  if (missing.length === 0) return { installed: false };
  const what = missing.join(" and ");
  const canInstall = install && isRoot(env) && runs("apt-get", ["--version"], env) !== undefined;
  if (!canInstall) {
    const sudo = isRoot(env) ? "" : "sudo ";
    throw new Error(
      `${what} not found: install them with \`${sudo}apt-get update && ${sudo}${INSTALL_COMMAND}\` ` +
        "(or set FFMPEG_PATH and FFPROBE_PATH)",
    );
  }
  say(`${what} not found: installing Debian's ffmpeg (apt-get update && ${INSTALL_COMMAND})`);
  const aptEnv = { ...env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["update", "-qq"], INSTALL_COMMAND.split(" ").slice(1).concat("-qq")]) {
    const run = spawnSync("apt-get", args, {
      env: aptEnv,
      stdio: ["ignore", "inherit", "inherit"],
    });
    if (run.status !== 0) {
      throw new Error(`apt-get ${args[0]} failed (exit ${run.status}): ${what} is still missing`);
    }
  }
  const still = missingMediaTools(env);
  if (still.length > 0) {
    throw new Error(`${still.join(" and ")} still not found after installing ffmpeg`);
  }
  return { installed: true };
}

// Tesseract, for `text: true` (issue 38, decision 0262): installed the same way, but only
// text jobs need it, so a machine without it still starts (those jobs then fail, uncharged).
export const TEXT_INSTALL_COMMAND =
  "apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng";

/** Whether Tesseract (TESSERACT_PATH, else the PATH's) runs and reads English. */
export function tesseractReadsEnglish(env = process.env) {
  const langs = runs(env.TESSERACT_PATH || "tesseract", ["--list-langs"], env);
  return langs !== undefined && /^eng$/m.test(langs);
}

/**
 * Makes sure Tesseract reads English, installing Debian's packages as root with apt-get, as
 * for ffmpeg. Never throws: when it cannot, it says so in one line and the stack starts
 * anyway. Returns { installed, missing }.
 */
export function ensureTextTools({
  env = process.env,
  install = true,
  say = (line) => console.error(line),
} = {}) {
  if (tesseractReadsEnglish(env)) return { installed: false, missing: false };
  const canInstall = install && isRoot(env) && runs("apt-get", ["--version"], env) !== undefined;
  if (!canInstall) {
    const sudo = isRoot(env) ? "" : "sudo ";
    say(
      `tesseract (with English) not found: jobs with text: true will fail; install it with ` +
        `\`${sudo}apt-get update && ${sudo}${TEXT_INSTALL_COMMAND}\` (or set TESSERACT_PATH)`,
    );
    return { installed: false, missing: true };
  }
  say(`tesseract not found: installing Debian's (apt-get update && ${TEXT_INSTALL_COMMAND})`);
  const aptEnv = { ...env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["update", "-qq"], TEXT_INSTALL_COMMAND.split(" ").slice(1).concat("-qq")]) {
    const run = spawnSync("apt-get", args, {
      env: aptEnv,
      stdio: ["ignore", "inherit", "inherit"],
    });
    if (run.status !== 0) {
      say(`apt-get ${args[0]} failed (exit ${run.status}): jobs with text: true will fail`);
      return { installed: false, missing: true };
    }
  }
  const missing = !tesseractReadsEnglish(env);
  if (missing) say("tesseract still does not read English after installing: text jobs will fail");
  return { installed: !missing, missing };
}

const invokedDirectly =
  process.argv[1] !== undefined &&
  realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
if (invokedDirectly) {
  try {
    ensureMediaTools();
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
