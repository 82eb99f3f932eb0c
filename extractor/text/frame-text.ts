// `text: true` on a job (issue 38, decision 0262): the text on each delivered frame, read by
// Tesseract (ocr.ts) from the frame's encoded bytes as delivered, at full size.
//
// - One OcrPool for the whole extractor, as wide as its job slots (config.concurrency, set at
//   start by setOcrConcurrency): at most that many Tesseract processes run at once, whatever
//   the number of jobs, each with one thread. Memory: about 55 MB per process at 1080p
//   (decision 0262), so 55 MB × slots, plus the encoded frames held below.
// - A job reads its frames while later ones decode: FrameWriter hands each picture here once
//   it is encoded and goes on. A job holds at most `pool.concurrency` pictures waiting for or
//   in a read; the next one waits for a place, and with it the job's encoding and decoding
//   (backpressure), so the frames held are at most slots × slots encoded pictures in all.
// - A read that fails (Tesseract missing, a language whose data is not installed, a crash)
//   fails the job, uncharged: a text job without its text is not what was asked.
import { spawn } from "node:child_process";
import type { FrameResult } from "../../schema/messages.ts";
import { frameTextChars } from "../../schema/text.ts";
import { ExtractError } from "../errors.ts";
import { mediaSpawnOptions } from "../media-sandbox.ts";
import { OcrError, OcrPool } from "./ocr.ts";

/** The tesseract command: TESSERACT_PATH, else the name on the PATH (as npm start checks it). */
function tesseractCommand(): string {
  return process.env.TESSERACT_PATH || "tesseract";
}

let shared = new OcrPool(1, { command: tesseractCommand() });

/** Sets the extractor-wide pool's width to its job slots (extractor/main.ts). */
export function setOcrConcurrency(slots: number): void {
  shared = new OcrPool(Math.max(1, slots), { command: tesseractCommand() });
}

/** The extractor-wide pool that every text job reads through. */
export function sharedOcrPool(): OcrPool {
  return shared;
}

/**
 * Whether Tesseract runs: null when it does, else one line saying what is missing. The
 * extractor starts without it (only text jobs need it; they then fail, uncharged).
 */
export function checkTesseract(command = tesseractCommand()) {
  return new Promise<string | null>((resolve) => {
    const child = spawn(command, ["--list-langs"], {
      ...mediaSpawnOptions({ PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      out += chunk;
    });
    child.stderr?.resume();
    child.on("error", () =>
      resolve(
        `tesseract was not found (looked for "${command}"): jobs with text: true will fail. ` +
          "Install it (Debian/Ubuntu: apt-get install -y tesseract-ocr tesseract-ocr-eng) or set TESSERACT_PATH.",
      ),
    );
    child.on("close", (code) => {
      if (code !== 0)
        resolve(`tesseract does not run (exit ${code}): jobs with text: true will fail.`);
      else if (!/^eng$/m.test(out)) {
        resolve("tesseract has no English data: install tesseract-ocr-eng for text: true.");
      } else resolve(null);
    });
  });
}

/** The text reads of one job's frames. */
export class FrameTextReader {
  private readonly pool: OcrPool;
  private readonly languages: readonly string[] | undefined;
  private readonly controller = new AbortController();
  private readonly pending = new Set<Promise<void>>();
  private failure: unknown = null;
  /** Each frame's text is cut here (schema/text.ts frameTextChars of the job's frames). */
  private readonly maxChars: number;

  constructor(
    pool: OcrPool,
    languages: readonly string[] | undefined,
    signal: AbortSignal,
    frames = 1,
  ) {
    this.pool = pool;
    this.languages = languages;
    this.maxChars = frameTextChars(frames);
    signal.addEventListener("abort", () => this.controller.abort(signal.reason), { once: true });
    if (signal.aborted) this.controller.abort(signal.reason);
  }

  /**
   * Starts reading one delivered picture for these frames' results (their `text` is set when
   * it is read). Returns once the job has a place for it: at most pool.concurrency pictures
   * per job are held.
   */
  async read(picture: Uint8Array, results: FrameResult[]): Promise<void> {
    while (this.pending.size >= this.pool.concurrency) await Promise.race(this.pending);
    this.throwIfFailed();
    const reading = this.pool
      .read(picture, { languages: this.languages, signal: this.controller.signal })
      .then(
        (text) => {
          const kept = { ...text, content: text.content.slice(0, this.maxChars) };
          for (const result of results) result.text = kept;
        },
        (error: unknown) => {
          this.failure ??= error;
          // One failed read fails the job: stop the others.
          this.controller.abort(error);
        },
      )
      .finally(() => this.pending.delete(reading));
    this.pending.add(reading);
  }

  /** Waits for every read; throws the job's error when one failed. */
  async finish(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    this.throwIfFailed();
  }

  /** Stops the reads under way (the writer gives up). */
  async abort(): Promise<void> {
    this.controller.abort(new Error("the frames' writer gave up"));
    await Promise.allSettled([...this.pending]);
  }

  private throwIfFailed(): void {
    if (this.failure === null) return;
    const error = this.failure;
    if (error instanceof OcrError) {
      throw new ExtractError(
        "ExtractionFailed",
        `text recognition failed: ${error.message}`,
        "The text on the frames could not be read (text recognition is not available for this request right now). Nothing was charged.",
      );
    }
    throw error;
  }
}
