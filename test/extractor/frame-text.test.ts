// A job's text reads (extractor/text/frame-text.ts, decision 0262): the start check's one
// line when tesseract is missing, a job's failure when a read fails, and the bound on the
// pictures one job holds in reads (pool.concurrency), with a stand-in tesseract that takes
// its time, so nothing depends on how fast this machine reads.
import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ExtractError } from "../../extractor/errors.ts";
import { checkTesseract, FrameTextReader } from "../../extractor/text/frame-text.ts";
import { OcrPool } from "../../extractor/text/ocr.ts";
import type { FrameResult } from "../../schema/messages.ts";
import { frameTextChars, MAX_JOB_TEXT_CHARS } from "../../schema/text.ts";

const TSV_HEADER =
  "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext";

/** A tesseract that reads its stdin, waits `seconds`, and reads the word "hello". */
async function slowTesseract(seconds: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "stills-fake-tesseract-"));
  const file = join(dir, "tesseract");
  const word = "5\t1\t1\t1\t1\t1\t0\t0\t10\t10\t96\thello";
  await writeFile(
    file,
    `#!/bin/sh\ncat > /dev/null\nsleep ${seconds}\nprintf '%s\\n%s\\n' '${TSV_HEADER}' '${word}'\n`,
  );
  await chmod(file, 0o755);
  return file;
}

function frameResult(index: number): FrameResult {
  return { index, timestamp: index, status: "ok", key: null, pts: index, error: null, text: null };
}

describe("checkTesseract", () => {
  it("is null when tesseract reads English, and one line when it is missing", async () => {
    expect(await checkTesseract()).toBeNull();
    const said = await checkTesseract("/nonexistent/tesseract");
    expect(said).toMatch(/^tesseract was not found \(looked for "\/nonexistent\/tesseract"\)/);
    expect(said).toContain("apt-get install -y tesseract-ocr tesseract-ocr-eng");
    expect(said?.split("\n")).toHaveLength(1);
  });
});

describe("FrameTextReader", () => {
  it("fails the job when tesseract cannot start, naming why", async () => {
    const pool = new OcrPool(2, { command: "/nonexistent/tesseract" });
    const reader = new FrameTextReader(pool, undefined, new AbortController().signal);
    await reader.read(Buffer.from("not read"), [frameResult(1)]);
    const failed = await reader.finish().catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ExtractError);
    expect((failed as ExtractError).message).toMatch(
      /^text recognition failed: tesseract could not start/,
    );
    expect((failed as ExtractError).userMessage).toContain("Nothing was charged");
  });

  it("holds at most pool.concurrency pictures per job: the next waits for a place", async () => {
    const pool = new OcrPool(2, { command: await slowTesseract(0.4) });
    const reader = new FrameTextReader(pool, ["en"], new AbortController().signal);
    const results = [1, 2, 3, 4, 5].map(frameResult);
    const started = Date.now();
    const admittedAt: number[] = [];
    let most = 0;
    for (const result of results) {
      await reader.read(Buffer.from("picture"), [result]);
      admittedAt.push(Date.now() - started);
      most = Math.max(most, pool.active);
    }
    await reader.finish();
    expect(most).toBeLessThanOrEqual(2);
    // Two at once without waiting; the third only once one of them is read (0.4 s).
    expect(admittedAt[1]).toBeLessThan(300);
    expect(admittedAt[2]).toBeGreaterThanOrEqual(350);
    expect(admittedAt[4]).toBeGreaterThanOrEqual(750);
    for (const result of results) {
      expect(result.text).toEqual({ content: "hello", confidence: 0.96, language: "en" });
    }
  });
});

describe("frameTextChars", () => {
  it("keeps a job's text within MAX_JOB_TEXT_CHARS, 200 to 4,000 characters a frame", () => {
    expect([1, 300, 500, 1000, 3000, 10000].map(frameTextChars)).toEqual([
      4000, 4000, 4000, 2000, 666, 200,
    ]);
    for (const frames of [1, 500, 1000, 3000, 10000]) {
      expect(frames * frameTextChars(frames)).toBeLessThanOrEqual(
        Math.max(MAX_JOB_TEXT_CHARS, frames * 200),
      );
    }
  });
});
