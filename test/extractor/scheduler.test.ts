// The extractor's scheduler (extractor/scheduler.ts), by counting, never by timing: a slot is
// never free while an attempt waits, one tenant alone takes every slot, the next slot goes to
// the tenant running the fewest, the room is bounded, and a tenant's attempts keep their order.
import { describe, expect, it } from "vitest";
import { ImageTurns, RunPriority } from "../../extractor/priority.ts";
import {
  type ComeBack,
  FairScheduler,
  type SchedulerLimits,
  type Slot,
} from "../../extractor/scheduler.ts";

/** A scheduler whose runs end, and step out of their slots for a wait, when the test says so. */
function harness(limits: SchedulerLimits) {
  const scheduler = new FairScheduler(limits);
  const running = new Map<string, () => void>();
  const slots = new Map<string, Slot>();
  const tenantOf = new Map<string, string>();
  const started: string[] = [];
  /** Runs out of their slots, each with what ends its wait. */
  const idle = new Map<string, () => void>();
  /** What a run does when it starts: it is recorded, then ends when the test says so. */
  const admitRun = (tenant: string, id: string, slot: Slot) => {
    started.push(id);
    tenantOf.set(id, tenant);
    slots.set(id, slot);
    return new Promise<void>((resolve) => running.set(id, resolve));
  };
  const admit = (tenant: string, id: string) =>
    scheduler.admit(tenant, (slot) => admitRun(tenant, id, slot));
  const settle = async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  /** Ends a run and lets the scheduler hand its slot on (a few microtask turns, no timer). */
  const end = async (id: string) => {
    const resolve = running.get(id);
    if (!resolve) throw new Error(`${id} is not running`);
    running.delete(id);
    resolve();
    await settle();
  };
  /** Runs out of their slots: waiting, or back from the wait and waiting for their turn. */
  const out = new Set<string>();
  /**
   * A run waits out of its slot until `resume(id)`, then comes back as asked (at once, as a
   * live job between reloads; in its turn, as a job that waited for its twin).
   */
  const stepOut = async (id: string, comeBack?: ComeBack) => {
    const slot = slots.get(id);
    if (!slot || !running.has(id) || out.has(id)) throw new Error(`${id} cannot step out`);
    out.add(id);
    void slot
      .idle(() => new Promise<void>((resolve) => idle.set(id, resolve)), comeBack)
      .then(() => out.delete(id));
    await settle();
  };
  const resume = async (id: string) => {
    const wake = idle.get(id);
    if (!wake) throw new Error(`${id} is not waiting`);
    idle.delete(id);
    wake();
    await settle();
  };
  /** Runs holding a place now. */
  const held = () => [...running.keys()].filter((id) => !out.has(id));
  /** Tenants with a run in a slot now. */
  const runningTenants = () => new Set(held().map((id) => tenantOf.get(id)));
  return {
    scheduler,
    running,
    idle,
    out,
    held,
    started,
    admit,
    admitRun,
    end,
    stepOut,
    resume,
    runningTenants,
  };
}

/**
 * A thousand seeded random events (the same every run, yet many interleavings): admissions,
 * ends and, with `idle`, runs stepping out of their slots and back. Checks after each that no
 * slot is free while an attempt waits, that nothing starts beyond the ceiling, that the count
 * is the runs in slots, and in the end that each tenant's attempts started in order.
 */
async function randomEvents(idle: boolean) {
  let seed = 12345;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const limits = { capacity: 3, waitingLimit: 12, tenantWaitingLimit: 6, newcomerSlots: 2 };
  const ceiling = limits.capacity + limits.newcomerSlots;
  const h = harness(limits);
  const tenants = ["a", "b", "c", "d"];
  const admitted = new Map<string, string[]>(); // per tenant, in admission order
  let refused = 0;
  let steppedOut = 0;
  const overCeiling: string[] = [];
  const admit = (tenant: string, id: string) =>
    h.scheduler.admit(tenant, (slot) => {
      if (h.scheduler.running > ceiling) overCeiling.push(id);
      return h.admitRun(tenant, id, slot);
    });
  for (let event = 0; event < 1000; event++) {
    const roll = random();
    const held = h.held();
    if (idle && roll < 0.12 && held.length > 0) {
      const how: ComeBack = random() < 0.5 ? "at-once" : "in-turn";
      await h.stepOut(held[Math.floor(random() * held.length)], how);
      steppedOut++;
    } else if (idle && roll < 0.22 && h.idle.size > 0) {
      const waiting = [...h.idle.keys()];
      await h.resume(waiting[Math.floor(random() * waiting.length)]);
    } else if (idle && roll < 0.25 && h.idle.size > 0) {
      // A run ends while out of its slot (cancelled mid-wait, say).
      const waiting = [...h.idle.keys()].filter((id) => h.running.has(id));
      if (waiting.length > 0) await h.end(waiting[Math.floor(random() * waiting.length)]);
    } else if (random() < 0.55 || held.length === 0) {
      const tenant = tenants[Math.floor(random() * (random() < 0.6 ? 1 : tenants.length))];
      const id = `${tenant}${event}`;
      const admission = admit(tenant, id);
      if (admission.kind === "full") refused++;
      else admitted.set(tenant, [...(admitted.get(tenant) ?? []), id]);
    } else {
      await h.end(held[Math.floor(random() * held.length)]);
    }
    const { running, waiting } = h.scheduler;
    // Runs back from a wait and waiting for their turn are in the room beyond its bounds.
    const turns = [...h.out].filter((id) => !h.idle.has(id) && h.running.has(id));
    expect(running).toBe(h.held().length);
    if (!idle) expect(running).toBeLessThanOrEqual(ceiling);
    expect(waiting).toBeLessThanOrEqual(limits.waitingLimit + turns.length);
    if (waiting > 0) {
      // No slot is free while an attempt waits...
      expect(running).toBeGreaterThanOrEqual(limits.capacity);
      // ...and below the ceiling, everyone waiting already runs something.
      if (running < ceiling) {
        const runs = h.runningTenants();
        for (const tenant of tenants) {
          const queued =
            admitted.get(tenant)?.some((id) => !h.started.includes(id)) ||
            turns.some((id) => id.startsWith(tenant));
          if (queued) expect(runs.has(tenant), `${tenant} waits with nothing running`).toBe(true);
        }
      }
    }
  }
  // Nothing started beyond the ceiling (only runs coming back from a wait go over it).
  expect(overCeiling).toEqual([]);
  // Every tenant's attempts started in the order they were admitted.
  for (const [tenant, ids] of admitted) {
    const order = h.started.filter((id) => id.startsWith(tenant));
    expect(order).toEqual(ids.slice(0, order.length));
  }
  expect(refused).toBeGreaterThan(0); // the room did fill, so its bound was exercised
  expect(h.started.length).toBeGreaterThan(300);
  return { h, steppedOut };
}

describe("FairScheduler", () => {
  it("runs at once while a slot is free, then keeps the rest in the room", () => {
    const h = harness({ capacity: 2, waitingLimit: 4, tenantWaitingLimit: 4, newcomerSlots: 0 });
    expect(h.admit("a", "a1").kind).toBe("started");
    expect(h.admit("a", "a2").kind).toBe("started");
    expect(h.admit("a", "a3").kind).toBe("waiting");
    expect(h.started).toEqual(["a1", "a2"]);
    expect([h.scheduler.running, h.scheduler.waiting]).toEqual([2, 1]);
  });

  it("hands a freed slot on at once, to the tenant running the fewest", async () => {
    const h = harness({ capacity: 2, waitingLimit: 8, tenantWaitingLimit: 8, newcomerSlots: 0 });
    for (const id of ["a1", "a2", "a3", "a4"]) h.admit("a", id);
    h.admit("b", "b1");
    h.admit("c", "c1");
    await h.end("a1");
    // b and c both run none; b started none more recently than c, and came first: b.
    expect(h.started).toEqual(["a1", "a2", "b1"]);
    await h.end("a2");
    // a runs none now, c none: c has never started, a has.
    expect(h.started).toEqual(["a1", "a2", "b1", "c1"]);
    await h.end("b1");
    await h.end("c1");
    expect(h.started).toEqual(["a1", "a2", "b1", "c1", "a3", "a4"]);
    expect([h.scheduler.running, h.scheduler.waiting]).toEqual([2, 0]);
  });

  it("refuses beyond a tenant's share of the room, then beyond the room", () => {
    const h = harness({ capacity: 1, waitingLimit: 3, tenantWaitingLimit: 2, newcomerSlots: 0 });
    h.admit("a", "a1");
    h.admit("a", "a2");
    h.admit("a", "a3");
    expect(h.admit("a", "a4")).toEqual({ kind: "full", why: "tenant" });
    expect(h.admit("b", "b1").kind).toBe("waiting");
    expect(h.admit("c", "c1")).toEqual({ kind: "full", why: "pool" });
    expect(h.scheduler.waiting).toBe(3);
  });

  it("starts a tenant that runs nothing at once, beyond the slots, up to the newcomers' ceiling", async () => {
    const h = harness({ capacity: 2, waitingLimit: 8, tenantWaitingLimit: 8, newcomerSlots: 1 });
    h.admit("a", "a1");
    h.admit("a", "a2");
    expect(h.admit("a", "a3").kind).toBe("waiting"); // a runs: it waits for one of the slots
    expect(h.admit("b", "b1").kind).toBe("started"); // b runs nothing: it does not wait
    expect(h.admit("c", "c1").kind).toBe("waiting"); // the ceiling (2 + 1) is reached
    expect(h.scheduler.running).toBe(3);
    await h.end("b1");
    expect(h.started).toEqual(["a1", "a2", "b1", "c1"]); // c before a's third
    await h.end("a1");
    // Three run, two of them a's: a's next waits for a slot, not a newcomer's place.
    expect(h.started).toEqual(["a1", "a2", "b1", "c1"]);
    await h.end("a2");
    expect(h.started).toEqual(["a1", "a2", "b1", "c1", "a3"]);
    expect([h.scheduler.running, h.scheduler.waiting]).toEqual([2, 0]);
  });

  it("takes a cancelled attempt out of the room; it never starts", async () => {
    const h = harness({ capacity: 1, waitingLimit: 4, tenantWaitingLimit: 4, newcomerSlots: 0 });
    h.admit("a", "a1");
    const a2 = h.admit("a", "a2");
    h.admit("a", "a3");
    if (a2.kind !== "waiting") throw new Error("a2 should wait");
    expect(a2.cancel()).toBe(true);
    expect(a2.cancel()).toBe(false);
    await h.end("a1");
    expect(h.started).toEqual(["a1", "a3"]);
  });

  it("gives the slot back when a run throws or rejects", async () => {
    const scheduler = new FairScheduler({
      capacity: 1,
      waitingLimit: 2,
      tenantWaitingLimit: 2,
      newcomerSlots: 0,
    });
    const started: string[] = [];
    scheduler.admit("a", () => {
      started.push("a1");
      throw new Error("boom");
    });
    scheduler.admit("a", () => {
      started.push("a2");
      return Promise.reject(new Error("boom"));
    });
    scheduler.admit("a", async () => {
      started.push("a3");
    });
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(started).toEqual(["a1", "a2", "a3"]);
    expect([scheduler.running, scheduler.waiting]).toEqual([0, 0]);
  });

  it("in a thousand random events, never leaves a slot free while an attempt waits", async () => {
    await randomEvents(false);
  });

  it("the same with runs stepping out of their slots for waits, and back in", async () => {
    const { h, steppedOut } = await randomEvents(true);
    expect(steppedOut).toBeGreaterThan(50);
    expect(h.idle.size + h.running.size).toBeGreaterThan(0);
  });

  it("a run that steps out for a wait hands its slot on at once, and comes back without waiting", async () => {
    const h = harness({ capacity: 1, waitingLimit: 4, tenantWaitingLimit: 4, newcomerSlots: 0 });
    h.admit("a", "a1");
    expect(h.admit("a", "a2").kind).toBe("waiting");
    await h.stepOut("a1");
    expect(h.started).toEqual(["a1", "a2"]);
    expect([h.scheduler.running, h.scheduler.waiting]).toEqual([1, 0]);
    // Out of its slot, a1 holds none, but the one slot is a2's now: b1 waits for it.
    expect(h.admit("b", "b1").kind).toBe("waiting");
    // The wait is over: a1 is back at once, beyond the one slot; nothing else starts.
    await h.resume("a1");
    expect([h.scheduler.running, h.scheduler.waiting]).toEqual([2, 1]);
    await h.end("a2");
    expect(h.started).toEqual(["a1", "a2"]); // still one over: b1 waits for a1
    await h.end("a1");
    expect(h.started).toEqual(["a1", "a2", "b1"]);
    expect([h.scheduler.running, h.scheduler.waiting]).toEqual([1, 0]);
  });

  it("a run that ends while out of its slot gives back nothing twice, and takes none after", async () => {
    const h = harness({ capacity: 1, waitingLimit: 4, tenantWaitingLimit: 4, newcomerSlots: 0 });
    h.admit("a", "a1");
    h.admit("a", "a2");
    h.admit("a", "a3");
    await h.stepOut("a1");
    expect(h.started).toEqual(["a1", "a2"]);
    await h.end("a1"); // cancelled mid-wait, say
    expect(h.started).toEqual(["a1", "a2"]);
    expect(h.scheduler.running).toBe(1);
    await h.resume("a1"); // its wait settles late
    expect(h.scheduler.running).toBe(1);
    await h.end("a2");
    expect(h.started).toEqual(["a1", "a2", "a3"]);
    await h.end("a3");
    expect([h.scheduler.running, h.scheduler.waiting]).toEqual([0, 0]);
  });

  it("in its turn: a run back from its wait queues as its tenant's next attempt would", async () => {
    const h = harness({ capacity: 1, waitingLimit: 4, tenantWaitingLimit: 4, newcomerSlots: 0 });
    h.admit("a", "a1");
    h.admit("a", "a2");
    await h.stepOut("a1", "in-turn");
    expect(h.started).toEqual(["a1", "a2"]);
    h.admit("b", "b1");
    await h.resume("a1");
    // The one slot is a2's: a1 waits, beside b1, and is counted as waiting.
    expect(h.out.has("a1")).toBe(true);
    expect([h.scheduler.running, h.scheduler.waiting]).toEqual([1, 2]);
    await h.end("a2");
    // b has started nothing yet, a has: b1 first.
    expect(h.started).toEqual(["a1", "a2", "b1"]);
    expect(h.out.has("a1")).toBe(true);
    await h.end("b1");
    expect(h.out.has("a1")).toBe(false);
    expect([h.scheduler.running, h.scheduler.waiting]).toEqual([1, 0]);
    await h.end("a1");
    expect([h.scheduler.running, h.scheduler.waiting]).toEqual([0, 0]);
  });

  it("keeps a tenant's place in the turn order while its run is out", async () => {
    const h = harness({ capacity: 3, waitingLimit: 8, tenantWaitingLimit: 8, newcomerSlots: 0 });
    h.admit("b", "b1"); // b started first
    h.admit("a", "a1");
    h.admit("c", "c1");
    await h.stepOut("a1");
    await h.resume("a1");
    h.admit("a", "a2");
    h.admit("b", "b2");
    await h.end("c1");
    // a and b run one each; b's last start is the older: b2, not a2.
    expect(h.started).toEqual(["b1", "a1", "c1", "b2"]);
  });

  it("refuses limits that make no sense", () => {
    expect(
      () =>
        new FairScheduler({
          capacity: 0,
          waitingLimit: 1,
          tenantWaitingLimit: 1,
          newcomerSlots: 0,
        }),
    ).toThrow(/capacity/);
    expect(
      () =>
        new FairScheduler({
          capacity: 1,
          waitingLimit: 1.5,
          tenantWaitingLimit: 1,
          newcomerSlots: 0,
        }),
    ).toThrow(/waitingLimit/);
  });
});

/** Image work in turns (extractor/priority.ts): tasks that end when the test says so. */
function turnsHarness(limit: number) {
  const turns = new ImageTurns(limit);
  const started: string[] = [];
  const finish = new Map<string, (fail?: boolean) => void>();
  const settled: Promise<unknown>[] = [];
  const take = (id: string, run?: RunPriority) => {
    const done = turns.take(
      () =>
        new Promise<string>((resolve, reject) => {
          started.push(id);
          finish.set(id, (fail) => (fail ? reject(new Error(id)) : resolve(id)));
        }),
      run,
    );
    settled.push(done.catch(() => {}));
    return done;
  };
  /** Ends a task and lets its turn pass on (a few microtask turns, no timer). */
  const end = async (id: string, fail = false) => {
    const f = finish.get(id);
    if (!f) throw new Error(`${id} is not running`);
    finish.delete(id);
    f(fail);
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  const settle = async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { turns, started, take, end, settle, settled };
}

describe("image turns", () => {
  it("starts a task at once while a turn is free, and the next waiting one when a turn ends", async () => {
    const h = turnsHarness(2);
    void h.take("a");
    void h.take("b");
    void h.take("c");
    await h.settle();
    expect(h.started).toEqual(["a", "b"]);
    expect(h.turns.active).toBe(2);
    expect(h.turns.waiting).toBe(1);
    await h.end("a");
    expect(h.started).toEqual(["a", "b", "c"]);
    expect(h.turns.active).toBe(2);
    expect(h.turns.waiting).toBe(0);
    await h.end("b");
    await h.end("c");
    expect(h.turns.active).toBe(0);
    // Free again: the next task starts without waiting for anything.
    void h.take("d");
    await h.settle();
    expect(h.started.at(-1)).toBe("d");
  });

  it("gives a freed turn to a run that does not yield before an earlier task of one that does", async () => {
    const h = turnsHarness(1);
    const long = new RunPriority();
    const newcomer = new RunPriority();
    long.setYielding(true);
    void h.take("long-1", long);
    void h.take("long-2", long);
    void h.take("long-3", long);
    void h.take("new-1", newcomer);
    await h.settle();
    await h.end("long-1");
    expect(h.started).toEqual(["long-1", "new-1"]);
    await h.end("new-1");
    expect(h.started).toEqual(["long-1", "new-1", "long-2"]);
    // Whether a run yields is read when the turn frees: the long run no longer yields, so its
    // earlier task goes first again.
    void h.take("new-2", newcomer);
    long.setYielding(false);
    await h.end("long-2");
    expect(h.started).toEqual(["long-1", "new-1", "long-2", "long-3"]);
    await h.end("long-3");
    await h.end("new-2");
    expect(h.turns.active).toBe(0);
  });

  it("never runs more than its turns at once, frees a failed task's turn, and answers each task's value", async () => {
    const h = turnsHarness(3);
    const answers = Array.from({ length: 20 }, (_, i) => h.take(`t${i}`));
    let peak = 0;
    for (let i = 0; i < 20; i++) {
      await h.settle();
      peak = Math.max(peak, h.turns.active);
      expect(h.turns.active + h.turns.waiting).toBe(20 - i);
      await h.end(`t${i}`, i % 5 === 0);
    }
    expect(peak).toBe(3);
    expect(h.turns.active).toBe(0);
    const results = await Promise.allSettled(answers);
    results.forEach((r, i) => {
      if (i % 5 === 0) expect(r.status).toBe("rejected");
      else expect(r).toEqual({ status: "fulfilled", value: `t${i}` });
    });
  });
});
