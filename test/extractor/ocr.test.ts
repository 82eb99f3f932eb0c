// Text on screen with Debian's Tesseract (extractor/text/ocr.ts, decision 0262): pictures made
// by ffmpeg's drawtext with a known sentence, read back word for word.
import { execFile } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { OcrError, OcrPool, readingOfTsv, readText } from "../../extractor/text/ocr.ts";

const run = promisify(execFile);
const FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans";
let dir: string;

/** One picture of `lines` (black on white, or `background` without text), by ffmpeg. */
async function picture(name: string, lines: string[], size = "1280x720", background = "white") {
  const draw = lines.map(
    (text, i) =>
      `drawtext=fontfile=${FONT}${i === 0 ? "-Bold" : ""}.ttf:text='${text}':fontsize=${i === 0 ? 64 : 40}:x=120:y=${200 + i * 160}:fontcolor=black`,
  );
  const path = join(dir, name);
  await run("ffmpeg", [
    ...["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi"],
    ...["-i", `color=c=${background}:s=${size}`],
    ...(draw.length > 0 ? ["-vf", draw.join(",")] : []),
    ...["-frames:v", "1", path],
  ]);
  return readFile(path);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stills-ocr-"));
});

describe("readText", () => {
  it("reads a slide's two lines in order, with a high confidence", async () => {
    const png = await picture("slide.png", [
      "Quarterly results 2026",
      "Revenue grew by 42 percent",
    ]);
    const reading = await readText(png);
    expect(reading.language).toBe("en");
    const lines = reading.content.split("\n").filter((line) => line !== "");
    expect(lines).toEqual(["Quarterly results 2026", "Revenue grew by 42 percent"]);
    expect(reading.confidence).toBeGreaterThan(0.8);
    expect(reading.confidence).toBeLessThanOrEqual(1);
  });

  it("reads a JPEG and a WebP as well as a PNG", async () => {
    for (const name of ["slide.jpg", "slide.webp"]) {
      const reading = await readText(await picture(name, ["Frame exact stills"]));
      expect(reading.content.trim(), name).toBe("Frame exact stills");
    }
  });

  it("gives an empty reading with confidence 0 for a picture without text", async () => {
    const reading = await readText(await picture("grey.png", [], "640x360", "gray"));
    expect(reading).toEqual({ content: "", confidence: 0, language: "en" });
  });

  it("refuses a language it has no name for, and says which", async () => {
    const png = await picture("short.png", ["Hello"]);
    await expect(readText(png, { languages: ["xx"] })).rejects.toThrow(
      new OcrError("no text recognition for the language xx"),
    );
  });

  it("fails when a language's data is not installed, with tesseract's complaint", async () => {
    const png = await picture("short.png", ["Hello"]);
    // Only English is installed here (.ci/run, the Dockerfile): Korean is known but missing.
    expect((await run("tesseract", ["--list-langs"])).stdout).not.toMatch(/^kor$/m);
    await expect(readText(png, { languages: ["ko"] })).rejects.toThrow(/tesseract failed/);
  });

  it("stops at the caller's abort, and fails cleanly without the binary", async () => {
    const png = await picture("slide.png", ["Quarterly results 2026"]);
    const aborted = AbortSignal.abort();
    await expect(readText(png, { signal: aborted })).rejects.toThrow(/stopped \(deadline\)/);
    await expect(readText(png, { command: "/nonexistent/tesseract" })).rejects.toThrow(
      /could not start/,
    );
  });
});

describe("OcrPool", () => {
  it("never runs more reads than its concurrency, and gives each caller its own reading", async () => {
    const pool = new OcrPool(2);
    const pictures = await Promise.all(
      ["One", "Two", "Three", "Four", "Five"].map((word) => picture(`${word}.png`, [word])),
    );
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, pool.active);
    }, 2);
    try {
      const readings = await Promise.all(pictures.map((png) => pool.read(png)));
      expect(readings.map((r) => r.content.trim())).toEqual([
        "One",
        "Two",
        "Three",
        "Four",
        "Five",
      ]);
    } finally {
      clearInterval(sampler);
    }
    expect(most).toBe(2);
    expect(pool.active).toBe(0);
    expect(() => new OcrPool(0)).toThrow(RangeError);
  });
});

describe("readingOfTsv", () => {
  const header =
    "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext";
  const word = (block: number, line: number, n: number, conf: number, text: string) =>
    `5\t1\t${block}\t1\t${line}\t${n}\t0\t0\t10\t10\t${conf}\t${text}`;

  it("keeps lines and blocks, skips non-words, and weights confidence by length", () => {
    const tsv = [
      header,
      "1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t",
      word(1, 1, 1, 90, "Hello"),
      word(1, 1, 2, 50, "you"),
      word(1, 2, 1, 80, "there"),
      word(2, 1, 1, -1, "ghost"),
      word(2, 1, 2, 70, "Bye"),
      word(2, 1, 3, 99, " "),
    ].join("\n");
    const reading = readingOfTsv(tsv, "en");
    expect(reading.content).toBe("Hello you\nthere\n\nBye");
    // (90×5 + 50×3 + 80×5 + 70×3) / 16 = 75.625 → 0.76
    expect(reading.confidence).toBe(0.76);
  });
});
