// The order vitest starts files in: vitest's own sequencer keeps each project's files together
// within a group, so the last project's longest file (a browser file of a minute) started when
// the group was almost done and ran alone at its end. Longest first across the whole group
// (by the last run's durations; failed files first; files never timed first, largest first)
// packs the workers much tighter (decision 0150). The edge project's files come first in their
// group, back to back, and files that mostly wait are kept apart (decision 0295).
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Projects whose worker is dear to start (the edge's is a workerd with the worker's modules
 * and the migrations, several CPU-seconds) and kept across files (`isolate: false`). A worker
 * runs one project's files: when the next file in the order is another project's, the worker
 * is stopped and another started. Interleaved with the media and unit files by duration, the
 * edge's 61 files started 28 workerds in one run of group 0; back to back, they start two.
 */
const BACK_TO_BACK = ["edge"];

/** What the order of a file depends on. */
export interface FileFacts {
  group: number;
  /** Its project runs back to back, before the other projects of its group. */
  backToBack: boolean;
  /** The last run's result; none for a file not timed yet. */
  last?: { failed: boolean; duration: number };
  /** Its place in vitest's own order (which knows the sizes of files never timed). */
  rank: number;
}

/**
 * By group; within a group, the back-to-back projects' files first; then failed files first,
 * then the longest first. A file never timed goes by vitest's order against any other.
 */
export function runOrder<T>(files: T[], facts: (file: T) => FileFacts): T[] {
  return [...files].sort((x, y) => {
    const a = facts(x);
    const b = facts(y);
    if (a.group !== b.group) return a.group - b.group;
    if (a.backToBack !== b.backToBack) return a.backToBack ? -1 : 1;
    if (!a.last || !b.last) return a.rank - b.rank;
    if (a.last.failed !== b.last.failed) return a.last.failed ? -1 : 1;
    return b.last.duration - a.last.duration;
  });
}

/**
 * Files that spend most of their time waiting, not on the CPU: for a killed or stopped
 * process's lease to run out, a restart, a slow origin. Among the longest of the stack group,
 * three of them started it together and left the cores 35–55 % busy for 20–30 s.
 */
const WAITERS = [
  "test/e2e/chaos.test.ts",
  "test/e2e/faults.test.ts",
  "test/e2e/lease.test.ts",
  "test/e2e/restart-in-flight.test.ts",
  "test/e2e/restart.test.ts",
  "test/e2e/slow-origin.test.ts",
];

/**
 * `ordered` (one group's files, in runOrder's order) with the waiting files moved so that no two
 * of them run at once, as far as the last run's durations tell: the start of each file is
 * played out on `workers` workers, and a waiting file due while another still runs gives its
 * turn to the next file that does not wait.
 */
export function spreadWaiters<T>(
  ordered: T[],
  facts: (file: T) => FileFacts & { waits: boolean },
  workers: number,
): T[] {
  const rest = [...ordered];
  const order: T[] = [];
  const freeAt = Array.from({ length: Math.max(workers, 1) }, () => 0);
  let waiterEndsAt = 0;
  while (rest.length > 0) {
    const now = Math.min(...freeAt);
    const worker = freeAt.indexOf(now);
    let next = 0;
    if (facts(rest[0]).waits && waiterEndsAt > now) {
      next = Math.max(
        rest.findIndex((file) => !facts(file).waits),
        0,
      );
    }
    const [file] = rest.splice(next, 1);
    const ends = now + (facts(file).last?.duration ?? 0);
    freeAt[worker] = ends;
    if (facts(file).waits) waiterEndsAt = Math.max(waiterEndsAt, ends);
    order.push(file);
  }
  return order;
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const rank = new Map(base.map((spec, i) => [spec, i]));
    const facts = new Map(
      base.map((spec) => {
        const last = this.ctx.cache.getTestSpecificationResult(spec);
        return [
          spec,
          {
            group: spec.project.config.sequence.groupOrder,
            backToBack: BACK_TO_BACK.includes(spec.project.name),
            last: last ? { failed: Boolean(last.failed), duration: last.duration } : undefined,
            rank: rank.get(spec) ?? 0,
            waits: WAITERS.some((file) => spec.moduleId.endsWith(`/${file}`)),
          },
        ];
      }),
    );
    const of = (spec: TestSpecification) => facts.get(spec) as FileFacts & { waits: boolean };
    const groups = new Map<number, TestSpecification[]>();
    for (const spec of runOrder(base, of)) {
      const group = groups.get(of(spec).group) ?? [];
      group.push(spec);
      groups.set(of(spec).group, group);
    }
    return [...groups.values()].flatMap((group) =>
      spreadWaiters(group, of, group[0].project.config.maxWorkers),
    );
  }
}
