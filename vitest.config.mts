import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import LongestFirst from "./test/support/longest-first.ts";

// Pure Node files: no ffmpeg run to speak of, no stack. They run in parallel.
const UNIT = [
  "test/extractor/frame-plan.test.ts",
  "test/extractor/fuzz.test.ts",
  "test/extractor/plans-as-data.test.ts",
  "test/extractor/scheduler.test.ts",
  "test/extractor/mp4-spans.test.ts",
  "test/extractor/output.test.ts",
  "test/extractor/best-score.test.ts",
  "test/extractor/lease-loop.test.ts",
  "test/extractor/twins.test.ts",
  "test/sources/platform.test.ts",
  "test/sources/safe-fetch.test.ts",
  "test/sources/url-safety.test.ts",
  "test/sources/ytdlp-info.test.ts",
  "test/sources/ytdlp.test.ts",
  "test/scripts/npm-test.test.ts",
  "test/scripts/longest-first.test.ts",
  "test/scripts/free-port.test.ts",
];

// Files that start stacks of their own (they kill, stop or restart its processes, need other
// settings, or test `npm start` and the admin command themselves; each says why in its own
// startHarness/startStack call). A file listed wrongly still runs: startHarness starts a
// stack of its own wherever no shared one is offered, and takes one when settings need it.
const OWN_STACK = [
  "test/e2e/admin.test.ts",
  "test/e2e/chaos.test.ts",
  "test/e2e/dev-vars.test.ts",
  "test/e2e/faults.test.ts",
  "test/e2e/lease.test.ts",
  "test/e2e/restart-in-flight.test.ts",
  "test/e2e/restart.test.ts",
  "test/e2e/setup.*.test.ts",
  "test/e2e/slow-origin.test.ts",
  "test/e2e/stack-lifeline.test.ts",
  "test/e2e/trace.test.ts",
  "test/browser/demo.test.ts",
  "test/browser/landing.test.ts",
];
// Files run as `npm start` runs by default, with private addresses refused: they share one
// stack started with that setting (the `stack-private` project; decision 0293).
const PRIVATE_STACK = ["test/e2e/quickstart.test.ts", "test/e2e/samples.test.ts"];
const PRIVATE_STACK_SETTINGS = { STILLS_ALLOW_PRIVATE_NETWORK: "0" };
const STACK_FILES = ["test/e2e/**/*.test.ts", "test/browser/**/*.test.ts", "test/sdk/**/*.test.ts"];

// Six projects in two groups that run one after the other (sequence.groupOrder); vitest runs
// a group's files two or three at a time (every project of a group names the same maxWorkers):
// 0. the edge inside workerd with real D1/R2/Queues/Durable Objects, the pure Node files, and
//    the extractor and the sources on real ffmpeg;
// 1. the end-to-end and browser files on the real stack: those that share one stack, started
//    once by test/e2e/support/shared-stack.ts, two that share one with private addresses
//    refused, and those with stacks of their own (test/e2e/support/harness.ts).
export default defineConfig(async () => {
  const migrations = await readD1Migrations("schema/migrations");
  return {
    test: {
      // vitest's default is one worker less than the cores: one, here, which ran every file of
      // every project one after another. Group 0 (mostly CPU) runs two files at a time, group 1
      // (mostly waiting on stacks, origins and leases) three.
      maxWorkers: 3,
      // Longest file first across each group's projects, not one project after another.
      sequence: { sequencer: LongestFirst },
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
            maxWorkers: 2,
            // One workerd per worker, not per file (decision 0291): a file's start was 5–7 s of
            // CPU (a workerd, the worker's modules, the migrations). Files stay independent by
            // their own accounts and ids; test/edge/support/fake-extractor.ts keeps an earlier
            // file's jobs away from this file's stand-ins. The sequencer runs these files back
            // to back (decision 0295): a worker that turns to another project's file is stopped.
            isolate: false,
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
            // Pure functions: one fork per worker, not per file (decision 0291).
            isolate: false,
            maxWorkers: 2,
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
            maxWorkers: 2,
            sequence: { groupOrder: 0 },
          },
        },
        {
          test: {
            name: "stack",
            environment: "node",
            include: STACK_FILES,
            exclude: [...OWN_STACK, ...PRIVATE_STACK],
            globalSetup: ["test/e2e/support/shared-stack.ts"],
            // One fork per worker, not per file (decision 0292): a fresh fork and its imports
            // (vitest, the harness, playwright-core, the SDK) cost about half a CPU-second a
            // file. The files share no module state: each makes its own accounts, keys, video
            // server and browser, and none stubs globals, timers or the environment.
            isolate: false,
            testTimeout: 120_000,
            hookTimeout: 180_000,
            maxWorkers: 3,
            sequence: { groupOrder: 1 },
          },
        },
        {
          test: {
            name: "stack-private",
            environment: "node",
            include: PRIVATE_STACK,
            // startHarness gives a file asking for exactly these settings this shared stack.
            globalSetup: ["test/e2e/support/shared-stack.ts"],
            provide: { sharedStackSettings: PRIVATE_STACK_SETTINGS },
            testTimeout: 120_000,
            hookTimeout: 180_000,
            maxWorkers: 3,
            sequence: { groupOrder: 1 },
          },
        },
        {
          test: {
            name: "own-stack",
            environment: "node",
            include: OWN_STACK,
            // One fork per worker, not per file (decision 0293), as the stack project: the
            // stacks, servers and browsers a file starts are its own and stopped in its
            // afterAll; no file stubs globals, timers or the environment.
            isolate: false,
            testTimeout: 120_000,
            hookTimeout: 180_000,
            maxWorkers: 3,
            sequence: { groupOrder: 1 },
          },
        },
      ],
    },
  };
});
