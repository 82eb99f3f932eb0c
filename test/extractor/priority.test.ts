// Each media process's share of the cores (extractor/priority.ts), read back from the kernel:
// the base niceness outside a run, its run's inside one, and a run that yields to a newcomer
// drops its live processes and its next ones, then (with the privilege this machine's root has)
// takes its share back.
import { getPriority, setPriority } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningTool, startTool } from "../../extractor/ffmpeg/process.ts";
import {
  DEFAULT_MEDIA_NICE,
  mediaNice,
  NEWCOMER_NICE,
  RunPriority,
  reniceSessionGroup,
  sessionGroupNice,
  setMediaNice,
  withRunPriority,
  YIELD_STEPS,
} from "../../extractor/priority.ts";

const running: RunningTool[] = [];
afterEach(async () => {
  for (const tool of running.splice(0)) {
    tool.kill();
    await tool.exited.catch(() => {});
  }
  setMediaNice(5);
});

/** An ffmpeg that runs until killed (a test pattern decoded to nothing, in real time). */
function longFfmpeg(): RunningTool {
  const tool = startTool("ffmpeg", [
    "-hide_banner",
    "-re",
    "-f",
    "lavfi",
    "-i",
    "testsrc=size=64x64:rate=5",
    "-f",
    "null",
    "-",
  ]);
  running.push(tool);
  if (tool.pid === undefined) throw new Error("ffmpeg did not start");
  return tool;
}

const niceOf = (tool: RunningTool) => getPriority(tool.pid as number);

describe("media processes' niceness", () => {
  it("outside a run: the base (EXTRACTOR_MEDIA_NICE, 19 unless set)", () => {
    // The first test of the file: the module's default, before any test sets one.
    expect(mediaNice()).toBe(19);
    expect(niceOf(longFfmpeg())).toBe(19);
    setMediaNice(5);
    expect(niceOf(longFfmpeg())).toBe(5);
    setMediaNice(7);
    expect(niceOf(longFfmpeg())).toBe(7);
  });

  it("a run's processes take its share; yielding lowers the live ones and the next ones", () => {
    setMediaNice(5);
    const run = new RunPriority();
    const first = withRunPriority(run, () => longFfmpeg());
    expect(niceOf(first)).toBe(5);
    run.setYielding(true);
    expect(niceOf(first)).toBe(5 + YIELD_STEPS);
    const second = withRunPriority(run, () => longFfmpeg());
    expect(niceOf(second)).toBe(5 + YIELD_STEPS);
    // Another run is not touched.
    const other = withRunPriority(new RunPriority(), () => longFfmpeg());
    expect(niceOf(other)).toBe(5);
    run.setYielding(false);
    expect(run.nice).toBe(5);
    expect(niceOf(withRunPriority(run, () => longFfmpeg()))).toBe(5);
    // Taking a share back needs CAP_SYS_NICE: as root (this machine, the container) it works.
    if (process.getuid?.() === 0) {
      expect([niceOf(first), niceOf(second)]).toEqual([5, 5]);
    }
  });

  it("a newcomer's processes run at 0 whatever the base, and never yield", () => {
    setMediaNice(5);
    const newcomer = new RunPriority({ newcomer: true });
    expect(NEWCOMER_NICE).toBe(0);
    const tool = withRunPriority(newcomer, () => longFfmpeg());
    expect(niceOf(tool)).toBe(0);
    // The others yield to it; it never does (the server asks every run to, newcomers too).
    newcomer.setYielding(true);
    expect(newcomer.yielding).toBe(false);
    expect(niceOf(tool)).toBe(0);
    // Not relative to the base: from 19 (the default), 10 or 3 alike, 0.
    setMediaNice(19);
    expect(newcomer.nice).toBe(0);
    setMediaNice(10);
    expect(niceOf(withRunPriority(newcomer, () => longFfmpeg()))).toBe(0);
    setMediaNice(3);
    expect(newcomer.nice).toBe(0);
    // A run that is not a newcomer keeps the base.
    setMediaNice(5);
    expect(niceOf(withRunPriority(new RunPriority(), () => longFfmpeg()))).toBe(5);
  });

  it("never beyond 19, whatever the base", () => {
    setMediaNice(15);
    const run = new RunPriority();
    run.setYielding(true);
    expect(run.nice).toBe(19);
    expect(niceOf(withRunPriority(run, () => longFfmpeg()))).toBe(19);
  });

  it("at the default base a yielding run keeps 19, and still says it yields", () => {
    setMediaNice(DEFAULT_MEDIA_NICE);
    const run = new RunPriority();
    const tool = withRunPriority(run, () => longFfmpeg());
    expect(niceOf(tool)).toBe(19);
    run.setYielding(true);
    // The image turns (ImageTurns) read the flag; the niceness has nowhere higher to go.
    expect(run.yielding).toBe(true);
    expect([run.nice, niceOf(tool)]).toEqual([19, 19]);
    run.setYielding(false);
    expect([run.yielding, niceOf(tool)]).toEqual([false, 19]);
  });

  // Lowering a niceness needs CAP_SYS_NICE (root here and in CI).
  it.skipIf(process.getuid?.() !== 0)(
    "at the default base a run that yields and stops writes nothing to the kernel",
    () => {
      setMediaNice(DEFAULT_MEDIA_NICE);
      const run = new RunPriority();
      const tool = withRunPriority(run, () => longFfmpeg());
      // A niceness the run did not give (root may lower it): any write of the run's 19 shows.
      setPriority(tool.pid as number, 15);
      run.setYielding(true);
      expect(niceOf(tool)).toBe(15);
      run.setYielding(false);
      expect(niceOf(tool)).toBe(15);
    },
  );
});

// Where the kernel schedules sessions as groups (this machine), a process's niceness counts only
// inside its session, and each media process leads its own: its group must take the niceness too,
// or four decodes weigh four times the edge whatever their niceness (decision 0280).
const groups = sessionGroupNice(process.pid) !== null;
describe.skipIf(!groups)("media processes' session groups", () => {
  const groupNiceOf = (tool: RunningTool) => sessionGroupNice(tool.pid as number);

  it("take the process's niceness, and follow a run that yields and takes its share back", () => {
    setMediaNice(5);
    expect(groupNiceOf(longFfmpeg())).toBe(5);
    const run = new RunPriority();
    const tool = withRunPriority(run, () => longFfmpeg());
    run.setYielding(true);
    expect(groupNiceOf(tool)).toBe(5 + YIELD_STEPS);
    run.setYielding(false);
    expect(groupNiceOf(tool)).toBe(5);
  });

  it("a newcomer's take its niceness too, under the others'", () => {
    setMediaNice(10);
    const newcomer = withRunPriority(new RunPriority({ newcomer: true }), () => longFfmpeg());
    const other = longFfmpeg();
    expect(groupNiceOf(newcomer)).toBe(NEWCOMER_NICE);
    expect(groupNiceOf(other)).toBe(10);
  });

  it("never the group of a process that does not lead its own session (the extractor's)", () => {
    const before = sessionGroupNice(process.pid);
    expect(reniceSessionGroup(process.pid, 11)).toBe(false);
    expect(sessionGroupNice(process.pid)).toBe(before);
  });
});
