// The progress line on stderr: drawn only when stderr is a terminal, so pipes and logs get none.
const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const BAR_WIDTH = 24;

interface ProgressFields {
  stage?: unknown;
  frames_done?: unknown;
  frames_total?: unknown;
}

export class ProgressLine {
  readonly enabled: boolean;
  readonly #stream: NodeJS.WritableStream & { columns?: number };
  #tick = 0;
  #started = Date.now();
  #drawn = false;

  constructor(
    stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number } = process.stderr,
  ) {
    this.#stream = stream;
    this.enabled = stream.isTTY === true;
  }

  /**
   * The job's state while it runs: its progress when it carries one (the stage while it is
   * processing, its status once it has ended), else its status.
   */
  job(job: { status: string; progress?: unknown }) {
    const progress = (job.progress ?? null) as ProgressFields | null;
    const seconds = Math.round((Date.now() - this.#started) / 1000);
    const done = typeof progress?.frames_done === "number" ? progress.frames_done : null;
    const total = typeof progress?.frames_total === "number" ? progress.frames_total : null;
    const stage =
      job.status === "processing" && typeof progress?.stage === "string"
        ? progress.stage
        : job.status;
    if (done !== null && total) {
      this.#draw(`${bar(done / total)} ${stage} ${done}/${total} frames · ${seconds}s`);
    } else {
      const spin = SPINNER[this.#tick++ % SPINNER.length];
      this.#draw(`${spin} ${stage}${done !== null ? ` · ${done} frames` : ""} · ${seconds}s`);
    }
  }

  downloads(done: number, total: number) {
    this.#draw(`${bar(total ? done / total : 1)} downloading ${done}/${total}`);
  }

  /** Ends the line (a finished bar stays on screen). */
  done() {
    if (this.enabled && this.#drawn) this.#stream.write("\n");
    this.#drawn = false;
  }

  #draw(text: string) {
    if (!this.enabled) return;
    // A terminal that reports no size (0 columns, as a bare pty does) gets 80.
    const width = this.#stream.columns || 80;
    this.#stream.write(`\r\x1b[2K${text.slice(0, Math.max(10, width - 1))}`);
    this.#drawn = true;
  }
}

function bar(fraction: number): string {
  const clamped = Math.max(0, Math.min(1, fraction));
  const full = Math.round(clamped * BAR_WIDTH);
  return `[${"█".repeat(full)}${"░".repeat(BAR_WIDTH - full)}] ${String(Math.round(clamped * 100)).padStart(3)}%`;
}
