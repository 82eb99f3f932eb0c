import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Pure Node files: no ffmpeg run to speak of, no stack. They run in parallel.
const UNIT = [
  "test/extractor/frame-plan.test.ts",
  "test/extractor/fuzz.test.ts",
  "test/extractor/plans-as-data.test.ts",
  "test/extractor/mp4-spans.test.ts",
  "test/extractor/output.test.ts",
  "test/sources/platform.test.ts",
  "test/sources/safe-fetch.test.ts",
  "test/sources/url-safety.test.ts",
  "test/sources/ytdlp-info.test.ts",
  "test/sources/ytdlp.test.ts",
];

// Four projects, in three groups that run one after another (sequence.groupOrder):
// 0. the edge inside workerd with real D1/R2/Queues/Durable Objects, beside the pure Node files;
// 1. the extractor and the sources on real ffmpeg, one file at a time (two cores);
// 2. the end-to-end and browser files on the real stack, one file at a time, sharing one stack
//    started once by test/e2e/support/shared-stack.ts (files that kill or restart a stack, or
//    need other settings, start their own: test/e2e/support/harness.ts).
export default defineConfig(async () => {
  const migrations = await readD1Migrations("schema/migrations");
  return {
    test: {
      projects: [
        {
          plugins: [
            cloudflareTest({
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  TEST_MIGRATIONS: migrations,
                  INTERNAL_TOKEN: "test-internal-token",
                  FILE_URL_SECRET: "test-file-url-secret",
                  // Answered by test/edge/support/fake-extractor.ts, never by the network.
                  EXTRACTOR_URL: "http://extractor.test",
                  PUBLIC_BASE_URL: "https://stills.test",
                },
              },
            }),
          ],
          test: {
            name: "edge",
            include: ["test/edge/**/*.test.ts"],
            setupFiles: [
              "test/edge/support/apply-migrations.ts",
              "test/edge/support/fake-extractor.ts",
            ],
            sequence: { groupOrder: 0 },
          },
        },
        {
          test: {
            name: "unit",
            environment: "node",
            include: UNIT,
            sequence: { groupOrder: 0 },
          },
        },
        {
          test: {
            name: "media",
            environment: "node",
            include: ["test/extractor/**/*.test.ts", "test/sources/**/*.test.ts"],
            exclude: UNIT,
            testTimeout: 120_000,
            hookTimeout: 180_000,
            // Two cores: ffmpeg-heavy files one at a time keeps timings sane.
            fileParallelism: false,
            sequence: { groupOrder: 1 },
          },
        },
        {
          test: {
            name: "stack",
            environment: "node",
            include: ["test/e2e/**/*.test.ts", "test/browser/**/*.test.ts"],
            globalSetup: ["test/e2e/support/shared-stack.ts"],
            testTimeout: 120_000,
            hookTimeout: 180_000,
            fileParallelism: false,
            sequence: { groupOrder: 2 },
          },
        },
      ],
    },
  };
});
