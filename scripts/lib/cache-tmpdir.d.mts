// Types of cache-tmpdir.mjs for the TypeScript suites.
export const CACHE_TMPDIR_VARIABLE: "STILLS_CACHE_TMPDIR";
export function cacheTmpdir(env?: NodeJS.ProcessEnv): string;
