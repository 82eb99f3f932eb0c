// Types of stack.mjs for the TypeScript test suites that drive the real stack.
import type { ChildProcess } from "node:child_process";
import type { IssuedKey } from "../../schema/accounts.ts";

export interface Stack {
  baseUrl: string;
  apiUrl: string;
  extractorUrl: string;
  stateDir: string;
  secrets: { INTERNAL_TOKEN: string; FILE_URL_SECRET: string };
  /** The mode-0600 file wrangler reads the edge's secrets from (--env-file). */
  secretsFile: string;
  /** Each leads a session (a scheduling group) of its own (decision 0375). */
  children: { edge: ChildProcess; readonly extractor: ChildProcess; proxy: ChildProcess };
  /** Times the stack restarted an extractor that died on its own. */
  readonly extractorRestarts: number;
  /** Resolves with the running extractor once it answers /healthz (after a restart, too). */
  extractorReady(timeoutMs?: number): Promise<ChildProcess>;
  /** The latest lines a child wrote to stderr (quiet mode keeps them instead of printing). */
  logTail(name: "edge" | "extractor"): string;
  /** With `logDir`: the files each child's stderr is appended to. */
  logFiles?: { edge: string; extractor: string };
  stop(): Promise<void>;
  /** Stops the extractor on purpose: it stays down until restartExtractor. */
  stopExtractor(signal?: NodeJS.Signals): Promise<void>;
  restartExtractor(): Promise<ChildProcess>;
}

export interface StackSettings {
  [variable: string]:
    | string
    | boolean
    | ((line: string) => void)
    | ((side: "edge" | "extractor", line: string) => void)
    | undefined;
  quiet?: boolean;
  /** Every line both children write (stdout and stderr), the edge's info lines included. */
  onOutput?: (side: "edge" | "extractor", line: string) => void;
  /** Where the stack's own lines go (restarts); console.error unless quiet. */
  log?: (line: string) => void;
  /** Run the edge from a copy of its sources, so edits in the tree do not restart it. */
  snapshot?: boolean;
  /**
   * Run the worker bundled once per set of sources, without `wrangler dev`'s own bundling
   * (the test suite's stacks; decision 0292). Edits in the tree do not restart it either.
   */
  prebuilt?: boolean;
  /**
   * A `.dev.vars`-style file to hand the edge as well, when it exists (npm start: DEV_VARS,
   * the developer's own); the stack's secrets win on a clash.
   */
  devVars?: string;
  /** Each child's stderr appended to `edge.log` / `extractor.log` in this folder (not kept). */
  logDir?: string;
}

/** What stackSql needs of a running stack. */
export interface StackAddress {
  baseUrl: string;
  secrets: { INTERNAL_TOKEN: string };
}
export interface SqlStatement {
  sql: string;
  params?: (string | number | null)[];
}

export const ROOT: string;
export const DEV_VARS: string;
export const RESTART_BACKOFF: { firstMs: number; maxMs: number; resetAfterMs: number };
export function restartDelayMs(failuresInARow: number): number;
/** The lowest port freePort picks from. */
export const PORT_FLOOR: number;
/** How many ports freePort picks from, up to ip_local_port_range; undefined under 1,000. */
export function pickedPortSpan(): number | undefined;
/**
 * A port free on 127.0.0.1, picked below the kernel's ephemeral range (decision 0376).
 * `random` (0 ≤ x < 1) picks the candidates; for tests.
 */
export function freePort(options?: { random?: () => number }): Promise<number>;
export function descendants(pid: number): Promise<number[]>;
export function startStack(settings?: StackSettings): Promise<Stack>;
export function startBenchStack(stateDir: string, settings?: StackSettings): Promise<Stack>;
export function writeEdgeSecrets(stateDir: string, secrets: Record<string, string>): string;
export function createKey(options: {
  email: string;
  plan?: string;
  packCredits?: number;
  stateDir?: string;
  stack?: StackAddress;
  /** Straight on the D1 file (executeLocalD1), while no stack runs on `stateDir`. */
  onFile?: boolean;
}): Promise<IssuedKey>;
export function stackSql(
  stack: StackAddress,
  statements: SqlStatement[],
): Promise<Record<string, unknown>[][]>;
export function stackQuery(
  stack: StackAddress,
  sql: string,
  params?: (string | number | null)[],
): Promise<Record<string, unknown>[]>;
export function stackExecute(stack: StackAddress, script: string): Promise<void>;
export function splitSqlScript(script: string): string[];
export function readTail(file: string, lines?: number): string;
export function executeLocalSql(script: string, stateDir?: string): void;
export function queryLocal(sql: string, stateDir?: string): Record<string, unknown>[];
export function readLocalD1(sql: string, stateDir?: string): Record<string, unknown>[];
export function executeLocalD1(script: string, stateDir?: string): void;

/** glibc malloc settings of the extractor's Node, as the image sets them. */
export function extractorMallocEnv(env?: NodeJS.ProcessEnv): {
  MALLOC_ARENA_MAX: string;
  MALLOC_MMAP_THRESHOLD_: string;
  GLIBC_TUNABLES: string;
};
