// What an extractor killed hard (SIGKILL, OOM, a crashed container) leaves behind, swept at the
// next start: download temp directories and media processes (ffmpeg, ffprobe, yt-dlp) whose
// process groups outlived it. Both are marked with their owner (owner.ts): temp directories by
// name (stills-source-<owner>-XXXXXX), processes by the STILLS_MEDIA_OWNER variable in their
// environment. Only what belongs to an extractor that is no longer running is removed, so
// several extractors on one machine (tests, a second stack) never sweep each other's work.
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OWNER_ID, OWNER_MARKER, ownerAlive, processStartTime } from "./owner.ts";

export const SOURCE_DIR_PREFIX = "stills-source-";

/** mkdtemp prefix of this process's download directories. */
export function sourceDirPrefix(directory = tmpdir()): string {
  return join(directory, `${SOURCE_DIR_PREFIX}${OWNER_ID}-`);
}

export interface SweepResult {
  tempDirs: string[];
  /** Process groups killed: the pid of each group's leader (or the process, outside one). */
  processGroups: number[];
  skipped?: string;
}

export interface SweepOptions {
  tempDir?: string;
  /**
   * Directories named before owners were recorded (stills-source-XXXXXX) are removed only
   * once older than this: long past any job's deadline, so no live job can still use them.
   */
  unownedAfterMs?: number;
}

export async function sweepLeftovers(options: SweepOptions = {}): Promise<SweepResult> {
  if (processStartTime(process.pid) === null) {
    // Without /proc (not Linux) no owner can be checked: remove nothing rather than guess.
    return { tempDirs: [], processGroups: [], skipped: "no /proc to tell live owners from dead" };
  }
  return {
    tempDirs: await sweepTempDirs(options.tempDir ?? tmpdir(), options.unownedAfterMs ?? 3600e3),
    processGroups: await sweepProcesses(),
  };
}

async function sweepTempDirs(directory: string, unownedAfterMs: number): Promise<string[]> {
  const removed: string[] = [];
  const entries = await readdir(directory).catch(() => [] as string[]);
  for (const name of entries) {
    if (!name.startsWith(SOURCE_DIR_PREFIX)) continue;
    const path = join(directory, name);
    const owner = /^(\d+\.\d+)-/.exec(name.slice(SOURCE_DIR_PREFIX.length))?.[1];
    if (owner !== undefined) {
      if (ownerAlive(owner)) continue;
    } else {
      const info = await stat(path).catch(() => null);
      if (!info || Date.now() - info.mtimeMs < unownedAfterMs) continue;
    }
    await rm(path, { recursive: true, force: true }).catch(() => {});
    removed.push(path);
  }
  return removed;
}

async function sweepProcesses(): Promise<number[]> {
  const killed = new Set<number>();
  const ownGroup = await processGroupOf(process.pid);
  for (const entry of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const owner = await ownerOf(pid);
    if (owner === null || owner === OWNER_ID || ownerAlive(owner)) continue;
    const group = await processGroupOf(pid);
    if (group === null || group <= 1 || group === ownGroup) continue;
    // A group we marked is one media tool with its helpers; otherwise only this process.
    const target = group === pid || (await ownerOf(group)) === owner ? group : pid;
    try {
      process.kill(target === group ? -group : pid, "SIGKILL");
      killed.add(target);
    } catch {
      // Gone meanwhile, or not ours to signal.
    }
  }
  return [...killed];
}

/** The extractor that started a process, from its environment; null for unmarked ones. */
async function ownerOf(pid: number): Promise<string | null> {
  const environ = await readFile(`/proc/${pid}/environ`, "latin1").catch(() => "");
  const prefix = `${OWNER_MARKER}=`;
  const variable = environ.split("\0").find((v) => v.startsWith(prefix));
  return variable ? variable.slice(prefix.length) : null;
}

/** The process group of a live process; null for zombies (nothing left to kill) and the gone. */
async function processGroupOf(pid: number): Promise<number | null> {
  const text = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  if (fields.length < 3 || fields[0] === "Z") return null;
  const group = Number(fields[2]);
  return Number.isInteger(group) && group > 0 ? group : null;
}
