// The sample videos (schema/samples.ts): GET and HEAD /samples/{name}, public, with byte
// ranges (the extractor reads sources in ranges). Not rate limited, as a CDN's files are not:
// the extractor's own ranged reads would otherwise spend the address's allowance. Not in the
// API document: they are files, not operations.
export const SAMPLE_PATH = "/samples/:name" as const;
