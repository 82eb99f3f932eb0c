// Text on screen (issue 38, decision 0262): Tesseract reads a delivered frame and gives back
// its words, with a confidence, in the languages asked.
//
// - Tesseract is Debian's `tesseract-ocr` with its language packages. It runs as the media
//   tools do: in its own process group, as the media user, at the run's priority
//   (extractor/media-sandbox.ts, extractor/priority.ts), and is killed at the deadline.
// - One thread per process (OMP_THREAD_LIMIT=1). OcrPool runs at most `concurrency` of them at
//   once, so the work is bounded in parallel and in memory: one encoded frame per running read
//   is held here, and each Tesseract process peaks at about 55 MB on a 1080p frame in English
//   (measured with /usr/bin/time -v).
// - The picture goes in on stdin (PNG, JPEG or WebP) and TSV comes out on stdout. Only word
//   rows (level 5) count. `content` keeps the page's lines and blocks (a blank line between
//   blocks), and `confidence` is the mean of the words' confidences (0–1), weighted by their
//   length.
import { spawn } from "node:child_process";
import { DEFAULT_TEXT_LANGUAGES, MAX_TEXT_CHARS, TESSERACT_LANGUAGES } from "../../schema/text.ts";
import { mediaSpawnOptions } from "../media-sandbox.ts";
import { adoptMediaProcess } from "../priority.ts";

/** What Tesseract read on one frame. */
export interface TextReading {
  content: string;
  /** 0–1: the words' mean confidence, weighted by their length; 0 when nothing was read. */
  confidence: number;
  /** The languages read with, as asked (BCP 47, joined by "+"). */
  language: string;
}

export {
  DEFAULT_TEXT_LANGUAGES,
  MAX_TEXT_CHARS,
  MAX_TEXT_LANGUAGES,
  TESSERACT_LANGUAGES,
} from "../../schema/text.ts";

const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/** The Tesseract names of the asked languages, or the first one that has none. */
export function tesseractLanguages(
  languages: readonly string[],
): { ok: true; names: string[] } | { ok: false; unknown: string } {
  const names: string[] = [];
  for (const language of languages) {
    const name = TESSERACT_LANGUAGES[language];
    if (!name) return { ok: false, unknown: language };
    names.push(name);
  }
  return { ok: true, names };
}

/** Tesseract's TSV (level, page, block, paragraph, line, word, box, conf, text) → a reading. */
export function readingOfTsv(tsv: string, language: string): TextReading {
  const blocks: string[][] = [];
  let lineKey = "";
  let blockKey = "";
  let weighted = 0;
  let characters = 0;
  for (const row of tsv.split("\n").slice(1)) {
    const cells = row.split("\t");
    if (cells.length < 12 || cells[0] !== "5") continue;
    const text = cells.slice(11).join("\t").trim();
    const confidence = Number(cells[10]);
    if (text === "" || !Number.isFinite(confidence) || confidence < 0) continue;
    const block = `${cells[1]}.${cells[2]}`;
    const line = `${block}.${cells[3]}.${cells[4]}`;
    if (block !== blockKey) {
      blocks.push([]);
      blockKey = block;
      lineKey = "";
    }
    const lines = blocks[blocks.length - 1];
    if (line !== lineKey) {
      lines.push(text);
      lineKey = line;
    } else {
      lines[lines.length - 1] += ` ${text}`;
    }
    weighted += Math.min(100, confidence) * text.length;
    characters += text.length;
  }
  const content = blocks
    .map((lines) => lines.join("\n"))
    .join("\n\n")
    .slice(0, MAX_TEXT_CHARS);
  const confidence = characters === 0 ? 0 : Math.round(weighted / characters) / 100;
  return { content, confidence, language };
}

export class OcrError extends Error {
  override readonly name = "OcrError";
}

export interface OcrOptions {
  /** BCP 47 tags (TESSERACT_LANGUAGES); default English. */
  languages?: readonly string[];
  signal?: AbortSignal;
  /** The tesseract command: TESSERACT_PATH, else the name on the PATH. */
  command?: string;
}

/** Reads the text on one encoded picture. */
export async function readText(
  picture: Uint8Array,
  options: OcrOptions = {},
): Promise<TextReading> {
  const languages = options.languages ?? DEFAULT_TEXT_LANGUAGES;
  const names = tesseractLanguages(languages);
  if (!names.ok) throw new OcrError(`no text recognition for the language ${names.unknown}`);
  const args = ["stdin", "stdout", "-l", names.names.join("+"), "--psm", "3", "tsv"];
  const tsv = await runTesseract(options.command ?? "tesseract", args, picture, options.signal);
  return readingOfTsv(tsv, languages.join("+"));
}

function runTesseract(
  command: string,
  args: string[],
  input: Uint8Array,
  signal: AbortSignal | undefined,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      ...mediaSpawnOptions({
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        LANG: "C.UTF-8",
        OMP_THREAD_LIMIT: "1",
      }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const released = child.pid === undefined ? () => {} : adoptMediaProcess(child.pid);
    const kill = () => {
      if (child.pid === undefined || child.exitCode !== null) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    signal?.addEventListener("abort", kill, { once: true });
    if (signal?.aborted) kill();
    const out: Buffer[] = [];
    let size = 0;
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) kill();
      else out.push(chunk);
    });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-2000);
    });
    // A process that dies before reading its input closes stdin under us: its exit says why.
    child.stdin?.on("error", () => {});
    child.stdin?.end(input);
    child.on("error", (error) => {
      released();
      reject(new OcrError(`tesseract could not start: ${error.message}`));
    });
    child.on("close", (code, killedBy) => {
      released();
      signal?.removeEventListener("abort", kill);
      if (code === 0 && size <= MAX_OUTPUT_BYTES) resolve(Buffer.concat(out).toString("utf8"));
      else {
        const why = signal?.aborted
          ? "was stopped (deadline)"
          : size > MAX_OUTPUT_BYTES
            ? "wrote more than its output bound"
            : `failed (${code ?? killedBy})`;
        // "Could not initialize tesseract." ends its complaint; the line before says why.
        const missing = /Failed loading language '([\w-]+)'/.exec(stderr)?.[1];
        const said = missing
          ? `no installed data for the language ${missing} (Debian: tesseract-ocr-${missing})`
          : (stderr.trim().split("\n").pop() ?? "");
        reject(new OcrError(`tesseract ${why}: ${said}`));
      }
    });
  });
}

/**
 * Reads frames' text with at most `concurrency` Tesseract processes at once. Each call waits
 * for a place, then holds one picture while it is read.
 */
export class OcrPool {
  readonly concurrency: number;
  private readonly options: OcrOptions;
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(concurrency: number, options: OcrOptions = {}) {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`OCR concurrency must be a whole number ≥ 1; got ${concurrency}`);
    }
    this.concurrency = concurrency;
    this.options = options;
  }

  /** How many reads run now (never more than `concurrency`). */
  get active(): number {
    return this.running;
  }

  /** `options` add to (and override) the pool's own, for this read: a job's languages, its signal. */
  async read(picture: Uint8Array, options: OcrOptions = {}): Promise<TextReading> {
    if (this.running >= this.concurrency) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      options.signal?.throwIfAborted();
      return await readText(picture, { ...this.options, ...options });
    } finally {
      const next = this.waiting.shift();
      // The place passes straight to the next caller: `running` stays as it is.
      if (next) next();
      else this.running--;
    }
  }
}
