// Types for scripts/build-extractor.mjs (used from the TypeScript tests).
export const EXTRACTOR_BUNDLE_DIR: string;
export const EXTRACTOR_MAIN: string;
export const EXTRACTOR_CLI: string;
export function buildExtractor(): Promise<void>;
