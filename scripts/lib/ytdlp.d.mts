// Types of ytdlp.mjs for the TypeScript tests.
type Env = Record<string, string | undefined>;

export interface ChosenYtDlp {
  /** The yt-dlp to run; undefined when there is none at all. */
  path: string | undefined;
  version: string | undefined;
  source: "configured" | "cache" | "fetched" | "outdated" | "none";
  warning?: string;
}

export const RELEASE_BASE: string;
export const MAX_AGE_DAYS: number;
export function defaultCacheDir(env?: Env): string;
export function releaseDate(version: string | undefined): Date | undefined;
export function ytdlpVersion(command: string, env?: Env): string | undefined;
export function publishedSha256(sums: string, name: string): string | undefined;
export function fetchRelease(options: {
  releaseBase?: string;
  cacheDir: string;
  timeoutMs: number;
}): Promise<string>;
export function chooseYtDlp(options?: {
  env?: Env;
  cacheDir?: string;
  releaseBase?: string;
  now?: Date;
  timeoutMs?: number;
  say?: (line: string) => void;
}): Promise<ChosenYtDlp>;
