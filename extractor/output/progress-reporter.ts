// Tells the edge what a running attempt is doing: its stage and the frames made so far
// (POST {base}/internal/jobs/{kind}/{job_id}/progress, ProgressReportSchema, with the attempt's
// token). The edge keeps it in the job's Durable Object, not in D1 (decision 0230), so a report
// costs one light call. At most one report per REPORT_EVERY_MS tick while the attempt runs, so
// the job's progress is never more than about a second old; a new stage goes at once only when
// no report went within the last interval (leaving the room, say), otherwise the next tick
// carries it (decision 0288). An attempt waiting for a slot says so once: its lease, not its
// progress, tells the edge it is alive (decisions 0282, 0288). Nothing goes in an attempt's
// first REPORT_EVERY_MS, nor in a run's first one once it leaves the room: a run that ends
// sooner (most sparse jobs) reports nothing more, and its result says it all; under load those
// reports were a good part of the edge's work (decisions 0280, 0284). One call at a time; a slow edge only makes reports sparser. Nothing
// here ever goes back: stages move forward, frames_done keeps its highest count (a decode that
// starts over counts again from 0).
// A refusal (the job ended, another attempt took over, or a bad report) stops the reports; the
// lease loop decides whether the attempt itself stops.
import { PROGRESS_STAGES, type ProgressStage } from "../../schema/api.ts";
import type { ProgressReport } from "../../schema/messages.ts";
import { EdgeCallError, type EdgeClient } from "./edge-sink.ts";

export const REPORT_EVERY_MS = 750;
/** The last report waits at most this long before the result is posted anyway. */
const LAST_REPORT_MS = 2_000;

/** What the extraction tells about its progress (extractor/job.ts); the reporter adds the rest. */
export interface ProgressSink {
  /** A new stage (an earlier or the same one is ignored). */
  stage(stage: ProgressStage): void;
  /**
   * Decoding starts: `total` frames in the job (its frames_count once done), `done()` counts
   * those done so far (made, or known to be past the video's end).
   */
  extracting(total: number, done: () => number): void;
}

export class ProgressReporter implements ProgressSink {
  private readonly client: EdgeClient;
  private readonly path: string;
  private readonly attemptId: string;
  private current: ProgressStage | null = null;
  private framesDone = 0;
  private framesTotal: number | null = null;
  private count: (() => number) | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;
  private sending: Promise<void> | null = null;
  /** A report was asked for while one was out: it goes as soon as that one is answered. */
  private again = false;
  private stopped = false;
  /** The edge refused a report: nothing more is sent, not even the last one. */
  private refused = false;
  /** The first REPORT_EVERY_MS have passed: reports go from now on. */
  private open = false;
  /** A report was sent: the last one (finish) goes too. */
  private sent = false;
  /** When the last report went (ms since the epoch; 0 before the first). */
  private sentAt = 0;
  private readonly everyMs: number;

  constructor(
    client: EdgeClient,
    attempt: { kind: string; jobId: string; attemptId: string },
    everyMs = REPORT_EVERY_MS,
  ) {
    this.client = client;
    this.attemptId = attempt.attemptId;
    this.path = `/internal/jobs/${attempt.kind}/${encodeURIComponent(attempt.jobId)}/progress`;
    this.everyMs = everyMs;
    this.startTicks();
  }

  /** Ticks from now: the first report goes an interval from now, at the earliest. */
  private startTicks(): void {
    clearInterval(this.timer);
    this.open = false;
    this.timer = setInterval(() => {
      this.open = true;
      // Waiting changes nothing but the time: said once, then only the lease speaks for it.
      if (this.current === "waiting" && this.sent) return;
      this.send();
    }, this.everyMs);
    this.timer.unref?.();
  }

  stage(stage: ProgressStage): void {
    if (this.current !== null && rank(stage) <= rank(this.current)) return;
    const leaving = this.current === "waiting";
    this.current = stage;
    if (leaving) {
      // Out of the room, the run starts as an attempt on a free slot does: nothing in its
      // first interval, and a run that ends sooner sends no last report either (the job
      // shows waiting until its result). Under load these were half the edge's calls
      // (decision 0284).
      this.sent = false;
      this.startTicks();
      return;
    }
    // At once only when the last report is an interval old (leaving the room); otherwise the
    // next tick, at most an interval away, carries it with whatever else changed by then.
    if (this.open && Date.now() - this.sentAt >= this.everyMs) this.send();
  }

  extracting(total: number, done: () => number): void {
    this.framesTotal = total;
    this.count = done;
    this.stage("extracting");
  }

  /**
   * The attempt has its outcome: `finishing` with its frames (when it completed, all of them,
   * of as many: what the job's frames_count will be), sent and answered before the result is
   * posted, so the edge shows the final count first. Reports stop after it. An attempt that
   * reported nothing (it ended within REPORT_EVERY_MS) sends none: the result follows at once.
   */
  async finish(framesMade: number, completed: boolean): Promise<void> {
    if (this.stopped) return;
    // No more reports on the timer or on a stage change: the last one goes below.
    this.stopped = true;
    clearInterval(this.timer);
    this.count = null;
    this.framesDone = Math.max(this.framesDone, framesMade);
    if (completed) this.framesTotal = this.framesDone;
    this.current = "finishing";
    const bounded = (work: Promise<unknown> | null) =>
      Promise.race([work, new Promise((resolve) => setTimeout(resolve, LAST_REPORT_MS))]);
    await bounded(this.sending);
    if (!this.refused && this.sent) await bounded(this.post());
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** What the next report says. */
  snapshot(): ProgressReport | null {
    if (this.current === null) return null;
    if (this.count) this.framesDone = Math.max(this.framesDone, this.count());
    return {
      attempt_id: this.attemptId,
      stage: this.current,
      frames_done: this.framesDone,
      frames_total: this.framesTotal,
    };
  }

  private send(): void {
    if (this.stopped || this.current === null) return;
    if (this.sending) {
      this.again = true;
      return;
    }
    this.sending = this.post().finally(() => {
      this.sending = null;
      if (this.again && !this.stopped) {
        this.again = false;
        this.send();
      }
    });
  }

  private async post(): Promise<void> {
    const report = this.snapshot();
    if (!report) return;
    this.sent = true;
    this.sentAt = Date.now();
    try {
      await this.client.call("POST", this.path, JSON.stringify(report), "application/json", {
        attempts: 1,
      });
    } catch (error) {
      const status = error instanceof EdgeCallError ? error.status : null;
      // 4xx: the edge will not take this attempt's progress (ended, replaced, or refused).
      if (status !== null && status >= 400 && status < 500 && status !== 429) {
        this.refused = true;
        this.stop();
      }
    }
  }
}

function rank(stage: ProgressStage): number {
  return PROGRESS_STAGES.indexOf(stage);
}
