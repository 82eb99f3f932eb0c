// Wakes whoever waits on one job (wait=true, MCP's wait) the moment its settlement is written,
// instead of each waiter polling D1. One object per job; D1 stays the record: a woken waiter
// reads the job from D1 again, and this object only says "look now".
//
// A settlement that lands between a waiter's first D1 read and its call here must not be
// missed, so `settled` is kept in storage and a later wait returns at once. An alarm clears it
// an hour later (no waiter holds a job that long).
import { DurableObject } from "cloudflare:workers";
import type { JobKind } from "../../schema/messages.ts";

const FORGET_AFTER_MS = 3600_000;

export type WaitOutcome = "settled" | "timeout";

export class JobWaiter extends DurableObject<Env> {
  private readonly waiters = new Set<() => void>();

  /** Resolves when the job settles, or after `ms` (then the caller reads D1 anyway). */
  async wait(ms: number): Promise<WaitOutcome> {
    if (await this.ctx.storage.get<boolean>("settled")) return "settled";
    return new Promise<WaitOutcome>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve("settled");
      };
      const timer = setTimeout(
        () => {
          this.waiters.delete(wake);
          resolve("timeout");
        },
        Math.max(0, ms),
      );
      this.waiters.add(wake);
    });
  }

  /** Called by settlement, after the D1 batch is written. Returns how many waiters it woke. */
  async settled(): Promise<number> {
    await this.ctx.storage.put("settled", true);
    await this.ctx.storage.setAlarm(Date.now() + FORGET_AFTER_MS);
    const woken = this.waiters.size;
    for (const wake of [...this.waiters]) wake();
    return woken;
  }

  async waiting(): Promise<number> {
    return this.waiters.size;
  }

  override async alarm() {
    await this.ctx.storage.deleteAll();
  }
}

export function jobWaiter(env: Env, kind: JobKind, id: string) {
  return env.JOB_WAITER.get(env.JOB_WAITER.idFromName(`${kind}:${id}`));
}
