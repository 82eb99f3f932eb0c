// One object per job, for what D1 should not carry: who waits on the job, and what the job is
// doing right now.
//
// Waiting: wakes whoever waits on one job (wait=true, MCP's wait) the moment its settlement is
// written, instead of each waiter polling D1. D1 stays the record: a woken waiter reads the
// job from D1 again, and this object only says "look now". A settlement that lands between a
// waiter's first D1 read and its call here must not be missed, so `settled` is kept in storage
// and a later wait returns at once. An alarm clears it an hour later (no waiter holds a job
// that long).
//
// Progress (decision 0230): the running attempt reports its stage and frames about every
// second (POST /internal/jobs/job/{id}/progress, edge/jobs/progress.ts); it is kept here, not in
// D1, so a job costs no D1 write per report. Only the job's current attempt may report (the
// dispatch names it with begin(); settlement ends all reports), and never backwards: a report
// with an earlier stage or fewer frames than that attempt already reported is refused. What
// readers are shown never goes back either, across attempts: a new attempt after a restart
// starts again from nothing, and the shown stage and frames hold at the highest reached until
// it passes them (updated_at keeps moving, so the job is seen alive).
import { DurableObject } from "cloudflare:workers";
import { PROGRESS_STAGES, type Progress, type ProgressStage } from "../../schema/api.ts";
import type { ProgressReport as AttemptReport, JobKind } from "../../schema/messages.ts";

const FORGET_AFTER_MS = 3600_000;
/** A job never runs this long (attempts × deadline); its progress is dropped after it. */
const FORGET_PROGRESS_AFTER_MS = 6 * 3600_000;
/** A report that moves only the time is written at most this often (see onlyTimeMoved). */
export const TIME_ONLY_WRITE_MS = 5_000;

export type WaitOutcome = "settled" | "timeout";

/** What an attempt says it has done (its own counts; the edge adds the time). */
export type ProgressReport = Omit<AttemptReport, "attempt_id">;

/**
 * Why a report was not taken: `settled` (the job has ended), `unknown-attempt` (this object
 * does not know the attempt as the job's current one: the caller checks D1 and may begin it),
 * `goes-back` (an earlier stage or fewer frames than the same attempt reported).
 */
export type ReportRefusal = "settled" | "unknown-attempt" | "goes-back";

interface ProgressState {
  /** The job's current attempt, and what it has reported (null before its first report). */
  attempt: string;
  reported: ProgressReport | null;
  /** What readers see: never lower than anything shown before, whichever attempt it came from. */
  shown: Progress | null;
}

const stageRank = (stage: ProgressStage) => PROGRESS_STAGES.indexOf(stage);

/** The rules as one pure function (tested as data): the next state, or why the report is refused. */
export function applyReport(
  state: ProgressState | null,
  attemptId: string,
  report: ProgressReport,
  now: string,
): ProgressState | ReportRefusal {
  if (!state || state.attempt !== attemptId) return "unknown-attempt";
  const before = state.reported;
  if (
    before &&
    (stageRank(report.stage) < stageRank(before.stage) || report.frames_done < before.frames_done)
  ) {
    return "goes-back";
  }
  const shown = state.shown;
  return {
    attempt: attemptId,
    reported: report,
    shown: {
      stage: shown && stageRank(shown.stage) > stageRank(report.stage) ? shown.stage : report.stage,
      frames_done: Math.max(shown?.frames_done ?? 0, report.frames_done),
      frames_total: report.frames_total ?? shown?.frames_total ?? null,
      updated_at: now,
    },
  };
}

export class JobWaiter extends DurableObject<Env> {
  private readonly waiters = new Set<() => void>();
  private progressState: ProgressState | null | undefined;
  /** When progressState was last written to storage (0: not by this instance). */
  private storedAt = 0;

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

  /**
   * The dispatch started this attempt (D1 recorded it as the job's current one): from now on
   * only it may report. False when the job has settled.
   */
  async begin(attemptId: string): Promise<boolean> {
    if (await this.ctx.storage.get<boolean>("settled")) return false;
    const state = await this.loadProgress();
    if (state?.attempt === attemptId) return true;
    await this.saveProgress({ attempt: attemptId, reported: null, shown: state?.shown ?? null });
    if ((await this.ctx.storage.getAlarm()) === null) {
      await this.ctx.storage.setAlarm(Date.now() + FORGET_PROGRESS_AFTER_MS);
    }
    return true;
  }

  /** A report of the job's current attempt: the progress readers now see, or why not. */
  async report(
    attemptId: string,
    report: ProgressReport,
  ): Promise<{ progress: Progress } | { refused: ReportRefusal }> {
    if (await this.ctx.storage.get<boolean>("settled")) return { refused: "settled" };
    const next = applyReport(
      await this.loadProgress(),
      attemptId,
      report,
      new Date().toISOString(),
    );
    if (typeof next === "string") return { refused: next };
    if (this.onlyTimeMoved(next)) this.progressState = next;
    else await this.saveProgress(next);
    return { progress: next.shown as Progress };
  }

  /**
   * A report that changes nothing but the time (an attempt waiting in the extractor's room, or
   * a stage with no frame made since the last report) is kept in memory, and written only once
   * the stored copy is TIME_ONLY_WRITE_MS old: most reports then cost no storage write
   * (decision 0280). Evicted in between, the object shows the stored copy, a few seconds
   * older, until the next report; the stage and frames never go back.
   */
  private onlyTimeMoved(next: ProgressState): boolean {
    const before = this.progressState;
    if (!before || before.attempt !== next.attempt || !before.reported || !next.reported) {
      return false;
    }
    const same = (a: ProgressReport | Progress | null, b: ProgressReport | Progress | null) =>
      a?.stage === b?.stage &&
      a?.frames_done === b?.frames_done &&
      a?.frames_total === b?.frames_total;
    return (
      same(before.reported, next.reported) &&
      same(before.shown, next.shown) &&
      Date.now() - this.storedAt < TIME_ONLY_WRITE_MS
    );
  }

  /** What readers see while the job runs; null before its attempt's first report. */
  async progress(): Promise<Progress | null> {
    return (await this.loadProgress())?.shown ?? null;
  }

  override async alarm() {
    this.progressState = undefined;
    await this.ctx.storage.deleteAll();
  }

  private async loadProgress(): Promise<ProgressState | null> {
    if (this.progressState === undefined) {
      this.progressState = (await this.ctx.storage.get<ProgressState>("progress")) ?? null;
    }
    return this.progressState;
  }

  private async saveProgress(state: ProgressState) {
    this.progressState = state;
    this.storedAt = Date.now();
    await this.ctx.storage.put("progress", state);
  }
}

export function jobWaiter(env: Env, kind: JobKind, id: string) {
  return env.JOB_WAITER.get(env.JOB_WAITER.idFromName(`${kind}:${id}`));
}
