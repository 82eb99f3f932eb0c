// Media processes a given extractor started, found by the mark it gives each of them
// (STILLS_MEDIA_OWNER in their environment, extractor/owner.ts): what a test checks is gone.
import { readdirSync, readFileSync } from "node:fs";
import { OWNER_MARKER } from "../../extractor/owner.ts";

/** "pid command" of every live (not zombie) process carrying `owner`'s mark. */
export function markedProcesses(owner: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, "latin1").split("\0");
      if (!environ.includes(`${OWNER_MARKER}=${owner}`)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      found.push(`${entry} ${readFileSync(`/proc/${entry}/cmdline`, "latin1").split("\0")[0]}`);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}
