// How much of the cores a run's media processes (ffmpeg, ffprobe) get (decision 0190).
// - Every media process runs at EXTRACTOR_MEDIA_NICE (default 5): the extractor's own Node
//   (the relay that feeds ffmpeg, the uploads) and, locally, the edge beside it stay responsive
//   while decodes fill the cores. Work-conserving: a nice process still takes any idle core.
// - A run started beyond the slots for a tenant that ran nothing (a newcomer: scheduler.ts)
//   would otherwise get a third of two cores against two long runs. While newcomers run, every
//   other run yields: its processes, running and to come, drop YIELD_STEPS further, so the
//   newcomer's get most of the cores and it ends about as fast as alone. Runs are never paused.
// - Where the kernel groups processes by session (CONFIG_SCHED_AUTOGROUP, on by default in
//   Debian's and most distributions' kernels, this machine's included), a process's niceness
//   only weighs against the other processes of its own session, and each media process is a
//   session of its own (started detached, so a deadline kills its whole group). There every
//   media process was one more group as heavy as the edge's, whatever its niceness: four
//   decodes took four shares of the cores to the edge's one (decision 0280). So its session's
//   group takes the same niceness (/proc/<pid>/autogroup), and the niceness means again what
//   it says.
import { AsyncLocalStorage } from "node:async_hooks";
import { readFileSync, writeFileSync } from "node:fs";
import { setPriority } from "node:os";

/** Niceness added to a run's processes while a newcomer runs (weight about a tenth). */
export const YIELD_STEPS = 10;
const MAX_NICE = 19;

let baseNice = 5;

/** Set once at start from EXTRACTOR_MEDIA_NICE (extractor/main.ts); tests may set it. */
export function setMediaNice(nice: number): void {
  baseNice = Math.max(0, Math.min(MAX_NICE, Math.trunc(nice)));
}

export function mediaNice(): number {
  return baseNice;
}

/** One run's share: the niceness its processes get, and those processes while they live. */
export class RunPriority {
  #yielding = false;
  readonly #pids = new Set<number>();

  get nice(): number {
    return Math.min(MAX_NICE, baseNice + (this.#yielding ? YIELD_STEPS : 0));
  }

  get yielding(): boolean {
    return this.#yielding;
  }

  /** Yields to newcomers, or stops: for its live processes and the ones it starts next. */
  setYielding(yielding: boolean): void {
    if (yielding === this.#yielding) return;
    this.#yielding = yielding;
    // Giving a share back (a lower niceness) needs privilege (CAP_SYS_NICE: the container's
    // root has it); without it only the run's next processes get it back.
    for (const pid of this.#pids) renice(pid, this.nice);
  }

  adopt(pid: number): () => void {
    renice(pid, this.nice);
    this.#pids.add(pid);
    return () => this.#pids.delete(pid);
  }
}

const current = new AsyncLocalStorage<RunPriority>();

/** Runs `fn` with every media process it starts under `priority`. */
export function withRunPriority<T>(priority: RunPriority, fn: () => T): T {
  return current.run(priority, fn);
}

/**
 * Gives a just-started media process its niceness: its run's, or the base one outside a run.
 * Returns what to call when the process has ended.
 */
export function adoptMediaProcess(pid: number): () => void {
  const run = current.getStore();
  if (run) return run.adopt(pid);
  renice(pid, baseNice);
  return () => {};
}

function renice(pid: number, nice: number): void {
  try {
    setPriority(pid, nice);
  } catch {
    // Gone already, or a share back without the privilege for it: nothing to do.
  }
  reniceSessionGroup(pid, nice);
}

/**
 * The niceness of the scheduling group of `pid`'s session, when `pid` leads a session of its
 * own (never the extractor's: that would slow the extractor with it). Nothing where the kernel
 * has no such groups (no /proc/<pid>/autogroup) or refuses (without CAP_SYS_ADMIN it takes one
 * change per 100 ms, machine-wide); the process's own niceness still applies then.
 */
export function reniceSessionGroup(pid: number, nice: number): boolean {
  try {
    if (sessionOf(pid) !== pid) return false;
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
    return true;
  } catch {
    return false;
  }
}

/** The session id of `pid`, from /proc/<pid>/stat (after the command's closing parenthesis). */
function sessionOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // state, ppid, pgrp, session, …
  return Number(fields[3]);
}

/** The niceness of `pid`'s session group, or null where there are none (tests, logs). */
export function sessionGroupNice(pid: number): number | null {
  try {
    const match = /nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, "utf8"));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}
