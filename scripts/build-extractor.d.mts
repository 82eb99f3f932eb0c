// Types for scripts/build-extractor.mjs (used from the TypeScript tests).
export const EXTRACTOR_BUNDLE_DIR: string;
export const EXTRACTOR_MAIN: string;
export const EXTRACTOR_CLI: string;
/** Builds both bundles unless those on disk were built from the sources as they are now. */
export function buildExtractor(options?: { force?: boolean }): Promise<void>;
