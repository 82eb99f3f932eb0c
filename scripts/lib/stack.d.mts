// Types of stack.mjs for the TypeScript test suites that drive the real stack.
import type { ChildProcess } from "node:child_process";
import type { IssuedKey } from "../../schema/accounts.ts";

export interface Stack {
  baseUrl: string;
  apiUrl: string;
  extractorUrl: string;
  stateDir: string;
  secrets: { INTERNAL_TOKEN: string; FILE_URL_SECRET: string };
  children: { edge: ChildProcess; readonly extractor: ChildProcess };
  stop(): Promise<void>;
  stopExtractor(signal?: NodeJS.Signals): Promise<void>;
  restartExtractor(): Promise<ChildProcess>;
}

export const ROOT: string;
export function freePort(): Promise<number>;
export function startStack(settings?: Record<string, string | boolean | undefined>): Promise<Stack>;
export function createKey(options: {
  email: string;
  plan?: string;
  packCredits?: number;
  stateDir?: string;
}): Promise<IssuedKey>;
export function executeLocalSql(script: string, stateDir?: string): void;
export function queryLocal(sql: string, stateDir?: string): Record<string, unknown>[];
