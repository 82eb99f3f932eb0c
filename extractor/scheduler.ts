// Which accepted attempt runs next on this extractor, and when (decision 0190).
//
// Work-conserving: an attempt starts the moment a slot is free. A slot freed by an ending run
// goes to a waiting attempt in the same turn of the event loop, so no slot stays idle while an
// attempt waits, and nothing polls.
//
// Fair: while attempts wait, the next slot goes to the tenant (an account, a demo client) that
// runs the fewest attempts now; among equals, to the one whose last start is oldest (a tenant
// that has not started one yet comes first). Within a tenant, first come, first served.
// One tenant alone uses every slot. A tenant that runs nothing here does not wait behind
// others' runs at all: it may start beyond the slots, on one of `newcomerSlots` more, and the
// cores are shared out by the operating system until the runs end (no run is ever paused, so
// this is how a small job gets in while long ones hold every slot).
//
// A run that only waits steps out of its slot for the wait (`Slot.idle`): the slot goes to a
// waiting attempt at once, as if the run had ended. When the wait is over the run comes back
// one of two ways. `at-once`: it takes a place at once, beyond the slots if need be (a live job
// between two reloads: the stream does not wait for us, and its next capture is short; the
// operating system shares the cores until the count falls back under the slots). `in-turn`: it
// waits for a slot as its tenant's next attempt would (a job that waited for its twin and may
// now run a whole extraction).
//
// Bounded: at most `waitingLimit` attempts wait, and at most `tenantWaitingLimit` of one
// tenant's, so one tenant cannot fill the room. Beyond that the caller answers 503 and the
// edge's queue keeps the job (back-pressure: the queue, never this process, holds the excess).

export interface SchedulerLimits {
  /** Attempts that run at once. */
  capacity: number;
  /** Runs beyond `capacity` allowed to tenants that run nothing here (0: none). */
  newcomerSlots: number;
  /** Attempts that may wait for a slot, all tenants together. */
  waitingLimit: number;
  /** Attempts of one tenant that may wait. */
  tenantWaitingLimit: number;
}

/**
 * The room's defaults: the largest plan's active jobs (25) fit in one tenant's half, so an
 * account never meets the 503 on an instance of its own.
 */
export function defaultWaitingLimits(concurrency: number): {
  waitingLimit: number;
  tenantWaitingLimit: number;
  newcomerSlots: number;
} {
  const waitingLimit = Math.max(64, 4 * concurrency);
  return {
    waitingLimit,
    tenantWaitingLimit: Math.floor(waitingLimit / 2),
    newcomerSlots: concurrency,
  };
}

export type Admission =
  | { kind: "started" }
  /** `cancel` takes it out of the room; false once it has started (or was cancelled). */
  | { kind: "waiting"; cancel: () => boolean }
  | { kind: "full"; why: "pool" | "tenant" };

/** How a run that stepped out comes back: at once whatever the count, or in its turn. */
export type ComeBack = "at-once" | "in-turn";

/** What a started run holds: its place among the slots. */
export interface Slot {
  /**
   * Runs `wait` (a wait on the clock or the network, nothing for the cores) out of the slot,
   * and takes a place again when it settles: at once, whatever the count (the default), or
   * `in-turn`, when a slot is its tenant's.
   */
  idle<T>(wait: () => Promise<T>, comeBack?: ComeBack): Promise<T>;
}

/** A run: it holds its slot until the promise it returns settles. */
export type Run = (slot: Slot) => Promise<void>;

/** An attempt waiting to start, or a run waiting for its turn to come back. */
interface Waiting {
  start: () => void;
}

export class FairScheduler {
  readonly limits: SchedulerLimits;
  #running = 0;
  readonly #runningByTenant = new Map<string, number>();
  readonly #waiting = new Map<string, Waiting[]>();
  #waitingCount = 0;
  /** When each tenant with attempts here last started one (a counter, not a clock). */
  readonly #lastStart = new Map<string, number>();
  #starts = 0;
  /** Runs of each tenant out of their slots (Slot.idle). */
  readonly #out = new Map<string, number>();

  constructor(limits: SchedulerLimits) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isInteger(value) || value < (name === "capacity" ? 1 : 0)) {
        throw new Error(`scheduler: ${name} must be a whole number, got ${value}`);
      }
    }
    this.limits = limits;
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waitingCount;
  }

  /**
   * Runs `run` now if a slot is free and nobody waits, else puts it in the room, else refuses.
   * A started run holds its slot until the promise `run` returns settles.
   */
  admit(tenant: string, run: Run): Admission {
    if (this.#slotFree()) {
      this.#start(tenant, run);
      return { kind: "started" };
    }
    if (this.#isNewcomer(tenant) && this.#running < this.#ceiling()) {
      this.#start(tenant, run);
      return { kind: "started" };
    }
    const queue = this.#waiting.get(tenant) ?? [];
    if (queue.length >= this.limits.tenantWaitingLimit) return { kind: "full", why: "tenant" };
    if (this.#waitingCount >= this.limits.waitingLimit) return { kind: "full", why: "pool" };
    const entry: Waiting = { start: () => this.#start(tenant, run) };
    queue.push(entry);
    this.#waiting.set(tenant, queue);
    this.#waitingCount++;
    // A slot may be free while others wait only for an instant (never across a turn), but the
    // rule is simple to keep: fill free slots now.
    this.#fill();
    return { kind: "waiting", cancel: () => this.#remove(tenant, entry) };
  }

  #start(tenant: string, run: Run) {
    this.#take(tenant);
    this.#lastStart.set(tenant, ++this.#starts);
    let held = true;
    let ended = false;
    const slot: Slot = {
      idle: async (wait, comeBack = "at-once") => {
        if (!held || ended) return wait();
        held = false;
        this.#out.set(tenant, (this.#out.get(tenant) ?? 0) + 1);
        this.#release(tenant);
        try {
          return await wait();
        } finally {
          let back = false;
          if (!ended) {
            await this.#comeBack(tenant, comeBack);
            back = true;
          }
          this.#backIn(tenant);
          if (back && !ended) held = true;
          // A run that ended while it came back gives the place back.
          else if (back) this.#release(tenant);
        }
      },
    };
    let settled: Promise<void>;
    try {
      settled = run(slot);
    } catch (error) {
      settled = Promise.reject(error);
    }
    settled
      .catch(() => {
        // The caller logs its own failures; the slot is given back either way.
      })
      .finally(() => {
        ended = true;
        if (held) this.#release(tenant);
      });
  }

  /** Takes a place for a run coming back: now, or once its tenant's turn comes. */
  #comeBack(tenant: string, how: ComeBack): Promise<void> | undefined {
    if (how === "at-once" || this.#slotFree()) {
      this.#take(tenant);
      return;
    }
    return new Promise<void>((resolve) => {
      const queue = this.#waiting.get(tenant) ?? [];
      // Beyond the room's bounds: the run was admitted within them.
      queue.push({
        start: () => {
          this.#take(tenant);
          this.#lastStart.set(tenant, ++this.#starts);
          resolve();
        },
      });
      this.#waiting.set(tenant, queue);
      this.#waitingCount++;
      this.#fill();
    });
  }

  /** A run is back in (or ended while out): its tenant's turn order is no longer kept for it. */
  #backIn(tenant: string) {
    const out = (this.#out.get(tenant) ?? 1) - 1;
    if (out > 0) this.#out.set(tenant, out);
    else this.#out.delete(tenant);
    this.#forgetIfIdle(tenant);
  }

  #take(tenant: string) {
    this.#running++;
    this.#runningByTenant.set(tenant, (this.#runningByTenant.get(tenant) ?? 0) + 1);
  }

  /** A run ended or stepped out: its slot goes to a waiting attempt in the same turn. */
  #release(tenant: string) {
    this.#running--;
    const left = (this.#runningByTenant.get(tenant) ?? 1) - 1;
    if (left > 0) this.#runningByTenant.set(tenant, left);
    else this.#runningByTenant.delete(tenant);
    this.#forgetIfIdle(tenant);
    this.#fill();
  }

  /**
   * What is kept per tenant lasts only while it has attempts here (running, waiting or out of
   * their slots): memory stays bounded, and a run that steps out keeps its tenant's place in
   * the turn order.
   */
  #forgetIfIdle(tenant: string) {
    if (
      !this.#runningByTenant.has(tenant) &&
      !this.#waiting.has(tenant) &&
      !this.#out.has(tenant)
    ) {
      this.#lastStart.delete(tenant);
    }
  }

  /** A slot is free and nobody waits for one: whoever asks now takes it. */
  #slotFree(): boolean {
    return this.#running < this.limits.capacity && this.#waitingCount === 0;
  }

  #ceiling(): number {
    return this.limits.capacity + this.limits.newcomerSlots;
  }

  #isNewcomer(tenant: string): boolean {
    return !this.#runningByTenant.has(tenant) && !this.#waiting.has(tenant);
  }

  /**
   * Starts waiting attempts while slots are free, the fewest-running tenant first; beyond the
   * slots, only a tenant that runs nothing, up to the newcomers' ceiling.
   */
  #fill() {
    while (this.#waitingCount > 0 && this.#running < this.#ceiling()) {
      let chosen: string | null = null;
      let best: [number, number] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
      for (const tenant of this.#waiting.keys()) {
        const rank: [number, number] = [
          this.#runningByTenant.get(tenant) ?? 0,
          this.#lastStart.get(tenant) ?? 0,
        ];
        if (rank[0] < best[0] || (rank[0] === best[0] && rank[1] < best[1])) {
          chosen = tenant;
          best = rank;
        }
      }
      if (chosen === null) return;
      if (this.#running >= this.limits.capacity && best[0] > 0) return;
      const queue = this.#waiting.get(chosen) ?? [];
      const next = queue.shift();
      if (queue.length === 0) this.#waiting.delete(chosen);
      if (!next) continue;
      this.#waitingCount--;
      next.start();
    }
  }

  #remove(tenant: string, entry: Waiting): boolean {
    const queue = this.#waiting.get(tenant);
    const at = queue?.indexOf(entry) ?? -1;
    if (!queue || at < 0) return false;
    queue.splice(at, 1);
    if (queue.length === 0) this.#waiting.delete(tenant);
    this.#waitingCount--;
    this.#forgetIfIdle(tenant);
    return true;
  }
}
