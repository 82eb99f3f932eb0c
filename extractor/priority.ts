// How much of the cores a run's media processes (ffmpeg, ffprobe) get (decision 0190).
// - Every media process runs at EXTRACTOR_MEDIA_NICE (default 19, the lowest weight): the
//   extractor's own Node (the relay that feeds ffmpeg, the uploads) and, locally, the edge
//   beside it stay responsive while decodes fill the cores. Work-conserving: a nice process
//   still takes any idle core. At 5 a decode's group weighed a third of the edge's, and two or
//   four of them took the edge's reads down to half of idle; at 10 each weighed a tenth, and
//   the reads still fell below half of idle in one round of four; at 19 each weighs 1/70
//   (decisions 0284, 0377). At 19 a yielding run (below) keeps 19: only the newcomer moves.
// - A run started beyond the slots for a tenant that ran nothing (a newcomer: scheduler.ts)
//   would otherwise get a third of two cores against two long runs. While newcomers run, every
//   other run yields: its processes, running and to come, drop YIELD_STEPS further (to 19 at
//   most), so the newcomer's get most of the cores and it ends about as fast as alone. Runs are
//   never paused. The newcomer's own processes run at NEWCOMER_NICE (0), whatever the base: at
//   the base they weighed a third of the extractor's and the edge's busy threads, and its short
//   job took twice its time alone while another account's batch was being taken in (decisions
//   0288, 0284).
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
import { availableParallelism, setPriority } from "node:os";

/** Niceness added to a run's processes while a newcomer runs, 19 at most (none at base 19). */
export const YIELD_STEPS = 10;
/** A newcomer run's processes: 0, level with the extractor's Node (no privilege needed). */
export const NEWCOMER_NICE = 0;
const MAX_NICE = 19;

/** EXTRACTOR_MEDIA_NICE's default (extractor/config.ts). */
export const DEFAULT_MEDIA_NICE = 19;

let baseNice = DEFAULT_MEDIA_NICE;

/** Set once at start from EXTRACTOR_MEDIA_NICE (extractor/main.ts); tests may set it. */
export function setMediaNice(nice: number): void {
  baseNice = Math.max(0, Math.min(MAX_NICE, Math.trunc(nice)));
}

export function mediaNice(): number {
  return baseNice;
}

/** One run's share: the niceness its processes get, and those processes while they live. */
export class RunPriority {
  /** A run started beyond the slots for a tenant that ran nothing here (scheduler.ts). */
  readonly newcomer: boolean;
  #yielding = false;
  readonly #pids = new Set<number>();

  constructor(options: { newcomer?: boolean } = {}) {
    this.newcomer = options.newcomer ?? false;
  }

  get nice(): number {
    if (this.newcomer) return NEWCOMER_NICE;
    return Math.min(MAX_NICE, baseNice + (this.#yielding ? YIELD_STEPS : 0));
  }

  get yielding(): boolean {
    return this.#yielding;
  }

  /** Yields to newcomers, or stops: for its live processes and the ones it starts next. */
  setYielding(yielding: boolean): void {
    // A newcomer is what the others yield to; it never yields itself.
    if (yielding === this.#yielding || this.newcomer) return;
    const before = this.nice;
    this.#yielding = yielding;
    // At a base of 19 (the default) the niceness does not move: nothing to write, and the
    // kernel's one unprivileged group change per 100 ms is left to processes that need it.
    if (this.nice === before) return;
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

/**
 * Image work (sharp: each frame's encode, its thumbnail, a storyboard tile) runs in the
 * extractor's own process, at its niceness, not a media process's: a yielding run's encodes
 * took the cores at full weight from a newcomer's decode, and queued in libuv's shared pool
 * ahead of the newcomer's own encodes (decision 0281). Image work therefore takes turns: at
 * most `limit` tasks at once (the cores), and when one ends, a waiting task of a run that does
 * not yield goes before any of a yielding run; first come, first served otherwise. Whether a
 * run yields is read when a turn frees, not when its task was queued. Work-conserving: a task
 * starts at once whenever fewer than `limit` run.
 */
export class ImageTurns {
  readonly limit: number;
  #active = 0;
  readonly #waiting: { run: RunPriority | undefined; start: () => void }[] = [];

  constructor(limit: number) {
    this.limit = Math.max(1, Math.trunc(limit));
  }

  /** Tasks running now. */
  get active(): number {
    return this.#active;
  }

  /** Tasks waiting for a turn. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `task` in a turn of the current run's (or of `run`'s); answers what it answers. */
  async take<T>(task: () => Promise<T>, run = current.getStore()): Promise<T> {
    if (this.#active >= this.limit) {
      await new Promise<void>((start) => this.#waiting.push({ run, start }));
    } else {
      this.#active++;
    }
    try {
      return await task();
    } finally {
      this.#next();
    }
  }

  /** Hands the ended task's turn to the next waiting task, or frees it. */
  #next(): void {
    if (this.#waiting.length === 0) {
      this.#active--;
      return;
    }
    let chosen = this.#waiting.findIndex((w) => !w.run?.yielding);
    if (chosen < 0) chosen = 0;
    const [next] = this.#waiting.splice(chosen, 1);
    next.start();
  }
}

/** The extractor's image turns: as many as the cores. */
export const imageTurns = new ImageTurns(availableParallelism());
