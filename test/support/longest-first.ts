// The order vitest starts files in: vitest's own sequencer keeps each project's files together
// within a group, so the last project's longest file (a browser file of a minute) started when
// the group was almost done and ran alone at its end. Longest first across the whole group
// (by the last run's durations; failed files first; files never timed first, largest first)
// packs the workers much tighter (decision 0150).
import { BaseSequencer, type TestSpecification } from "vitest/node";

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // vitest's order first: it knows file sizes for files the cache has not seen yet.
    const base = await super.sort(files);
    const rank = new Map(base.map((spec, i) => [spec, i]));
    const cache = this.ctx.cache;
    const result = (spec: TestSpecification) => cache.getTestSpecificationResult(spec);
    return [...base].sort((a, b) => {
      const group = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      if (group !== 0) return group;
      const ra = result(a);
      const rb = result(b);
      if (!ra || !rb) return (rank.get(a) ?? 0) - (rank.get(b) ?? 0);
      if (ra.failed !== rb.failed) return ra.failed ? -1 : 1;
      return rb.duration - ra.duration;
    });
  }
}
