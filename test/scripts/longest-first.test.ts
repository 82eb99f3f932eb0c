// The order the suite's files start in (test/support/longest-first.ts, decisions 0150, 0295).
import { describe, expect, it } from "vitest";
import { type FileFacts, runOrder, spreadWaiters } from "../support/longest-first.ts";

type File = { name: string } & FileFacts;

const file = (name: string, group: number, duration: number, more: Partial<File> = {}): File => ({
  name,
  group,
  backToBack: name.startsWith("edge/"),
  last: { failed: false, duration },
  rank: 0,
  ...more,
});

const order = (files: File[]) => runOrder(files, (f) => f).map((f) => f.name);

describe("runOrder", () => {
  it("runs the edge's files back to back at the start of their group, longest first", () => {
    const files = [
      file("media/a", 0, 20_000),
      file("edge/a", 0, 10_000),
      file("unit/a", 0, 5_000),
      file("edge/b", 0, 300),
      file("media/b", 0, 4_000),
      file("edge/c", 0, 6_000),
      file("stack/a", 1, 40_000),
    ];
    expect(order(files)).toEqual([
      "edge/a",
      "edge/c",
      "edge/b",
      "media/a",
      "unit/a",
      "media/b",
      "stack/a",
    ]);
  });

  it("keeps the groups in their order, and failed files first within one", () => {
    const files = [
      file("stack/a", 1, 40_000),
      file("media/a", 0, 1_000),
      file("media/b", 0, 9_000),
      file("stack/b", 1, 3_000, { last: { failed: true, duration: 3_000 } }),
      file("media/c", 0, 2_000, { last: { failed: true, duration: 2_000 } }),
    ];
    expect(order(files)).toEqual(["media/c", "media/b", "media/a", "stack/b", "stack/a"]);
  });

  it("puts files never timed in vitest's order against the others", () => {
    const files = [
      file("media/new", 0, 0, { last: undefined, rank: 0 }),
      file("media/old", 0, 9_000, { rank: 1 }),
    ];
    expect(order(files)).toEqual(["media/new", "media/old"]);
  });
});

describe("spreadWaiters", () => {
  const timed = (name: string, seconds: number) => ({
    ...file(name, 1, seconds * 1000),
    waits: name.startsWith("wait/"),
  });
  const spread = (files: ReturnType<typeof timed>[], workers: number) =>
    spreadWaiters(files, (f) => f, workers).map((f) => f.name);

  it("starts a waiting file only once the last one has ended, as the durations play out", () => {
    const files = [
      timed("wait/a", 45),
      timed("wait/b", 39),
      timed("wait/c", 33),
      timed("cpu/a", 30),
      timed("cpu/b", 30),
      timed("cpu/c", 20),
      timed("cpu/d", 20),
      timed("cpu/e", 10),
    ];
    // wait/a runs 0–45 s; wait/b waits for the first worker free after that (45 s), and
    // wait/c, due at 50 s while wait/b runs, goes after cpu/e: nothing else is left.
    expect(spread(files, 3)).toEqual([
      "wait/a",
      "cpu/a",
      "cpu/b",
      "cpu/c",
      "cpu/d",
      "wait/b",
      "cpu/e",
      "wait/c",
    ]);
  });

  it("leaves the order alone with one worker, or with no durations (a fresh clone)", () => {
    const files = [timed("wait/a", 10), timed("wait/b", 10), timed("cpu/a", 5)];
    expect(spread(files, 1)).toEqual(["wait/a", "wait/b", "cpu/a"]);
    const untimed = files.map((f) => ({ ...f, last: undefined }));
    expect(spread(untimed, 3)).toEqual(["wait/a", "wait/b", "cpu/a"]);
  });
});
