// Who started a temp directory or a media process: this extractor process, named so that a
// later run can tell its own leftovers from those of a live one. A pid alone is not enough
// (pids are reused), so the name carries the kernel's start time of that pid too.
import { readFileSync } from "node:fs";

/** Start time of a process in clock ticks since boot (/proc/<pid>/stat, field 22), or null. */
export function processStartTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count from its last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/** "<pid>.<start time>" of this process: stable for its life, never reused after it. */
export const OWNER_ID = `${process.pid}.${processStartTime(process.pid) ?? 0}`;

/** The environment variable that marks every media process with its extractor's OWNER_ID. */
export const OWNER_MARKER = "STILLS_MEDIA_OWNER";

/** True while the process an owner id names is still running (the same one, not a reuse). */
export function ownerAlive(owner: string): boolean {
  const match = /^(\d+)\.(\d+)$/.exec(owner);
  if (!match) return false;
  return processStartTime(Number(match[1])) === Number(match[2]);
}
