// The fuzzer's CI sample: 100 mutated MP4, MOV, WebM and MKV files through the extractor's real
// job path (test/support/fuzz.ts). `npm run fuzz` runs 1,000 the same way.
import { expect, it } from "vitest";
import { formatReport, runFuzz } from "../support/fuzz.ts";
import { MUTATIONS } from "../support/fuzz-media.ts";

const SEED = 20261123;

it("100 mutated files each end as frames, NoVideoFound or ExtractionFailed, leaving nothing behind", async () => {
  const report = await runFuzz({ seed: SEED, files: 100 });
  const summary = formatReport(report);
  console.log(summary);
  expect(summary).toContain("100 of 100 files handled cleanly");
  expect(report.crashed).toBeNull();
  expect(report.leaks).toEqual([]);
  // The sample covers every container and every kind of damage, with and without ranges.
  for (const container of ["mp4", "mov", "webm", "mkv"]) {
    for (const mutation of MUTATIONS) {
      const cases = report.outcomes.filter(
        (o) => o.container === container && o.mutation === mutation,
      );
      expect(cases.some((o) => o.ranges) && cases.some((o) => !o.ranges)).toBe(true);
    }
  }
  // Damage that matters is seen: some files still give frames, some are refused.
  const verdicts = new Set(report.outcomes.map((o) => o.verdict));
  expect(verdicts).toContain("frames");
  expect(verdicts).toContain("NoVideoFound");
}, 600_000);
