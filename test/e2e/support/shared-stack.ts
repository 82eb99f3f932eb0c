// vitest's globalSetup for the e2e and browser files: one stack (the edge under Miniflare +
// extractor) for all of them, started once, instead of one boot per file (each took 10–20 s).
// Files get the stack's addresses and secrets through `inject("sharedStack")` (startHarness does
// it); the children's stderr goes to log files in the state directory, which files read for
// their tails.
// A project may give its shared stack settings (`provide: { sharedStackSettings }` in
// vitest.config.mts): files that ask startHarness for exactly those settings then share it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { freePort, type Stack, startStack } from "../../../scripts/lib/stack.mjs";

export interface SharedStack {
  baseUrl: string;
  apiUrl: string;
  extractorUrl: string;
  stateDir: string;
  secrets: { INTERNAL_TOKEN: string; FILE_URL_SECRET: string };
  secretsFile: string;
  logFiles: { edge: string; extractor: string };
  /** The settings the stack was started with beyond the test defaults (none for most). */
  settings: Record<string, string>;
}

declare module "vitest" {
  export interface ProvidedContext {
    sharedStack: SharedStack;
    /** A project's settings for its shared stack (vitest.config.mts). */
    sharedStackSettings?: Record<string, string>;
  }
}

export default async function setup(project: TestProject) {
  const settings = project.getProvidedContext().sharedStackSettings ?? {};
  const stateDir = mkdtempSync(join(tmpdir(), "stills-shared-"));
  const stack: Stack = await startStack({
    STILLS_STATE_DIR: stateDir,
    PORT: String(await freePort()),
    STILLS_ALLOW_PRIVATE_NETWORK: "1",
    quiet: true,
    // Other work in the tree must not rebuild the edge under the suite, and the worker is
    // bundled once per run, not once per stack (scripts/lib/stack.mjs, decision 0292).
    prebuilt: true,
    logDir: stateDir,
    log: (line: string) => console.error(`[shared stack] ${line}`),
    ...settings,
  });
  const { baseUrl, apiUrl, extractorUrl, secrets, secretsFile } = stack;
  const logFiles = stack.logFiles as SharedStack["logFiles"];
  project.provide("sharedStack", {
    baseUrl,
    apiUrl,
    extractorUrl,
    stateDir,
    secrets,
    secretsFile,
    logFiles,
    settings,
  });
  return async () => {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  };
}
