// Media processes a given extractor started, found by the mark it gives each of them
// (STILLS_MEDIA_OWNER in their environment, extractor/owner.ts): what a test checks is gone.
import { readdirSync, readFileSync } from "node:fs";
import { OWNER_MARKER } from "../../extractor/owner.ts";

/** /proc/<pid>/stat's fields after the command (the state first), or undefined once it is gone. */
export function procStat(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** Alive: it exists and is not a zombie waiting for a parent that is gone. */
export function alive(pid: number | string): boolean {
  const state = procStat(pid)?.[0];
  return state !== undefined && state !== "Z";
}

/** "pid command" of every live (not zombie) process carrying `owner`'s mark. */
export function markedProcesses(owner: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, "latin1").split("\0");
      if (!environ.includes(`${OWNER_MARKER}=${owner}`) || !alive(entry)) continue;
      found.push(`${entry} ${readFileSync(`/proc/${entry}/cmdline`, "latin1").split("\0")[0]}`);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** The kernel's transparent huge page mode ("always [madvise] never" names it in brackets). */
export function hugePageMode(): string | undefined {
  try {
    const modes = readFileSync("/sys/kernel/mm/transparent_hugepage/enabled", "utf8");
    return /\[(\w+)\]/.exec(modes)?.[1];
  } catch {
    return undefined;
  }
}

/**
 * The mappings of a process marked for huge pages (`hg` among VmFlags in /proc/<pid>/smaps, set
 * by madvise(MADV_HUGEPAGE)), each with its size in kB. Whether the kernel then found free huge
 * pages for them is another matter (AnonHugePages); the mark is what the process asked for.
 */
export function hugePageMarked(smaps: string): number[] {
  const marked: number[] = [];
  let size = 0;
  for (const line of smaps.split("\n")) {
    const field = /^(\w+):\s+(.*)$/.exec(line);
    if (!field) continue;
    if (field[1] === "Size") size = Number.parseInt(field[2], 10);
    if (field[1] === "VmFlags" && field[2].split(/\s+/).includes("hg")) marked.push(size);
  }
  return marked;
}
