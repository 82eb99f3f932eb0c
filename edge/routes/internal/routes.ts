// The paths the extractor calls. Not in the OpenAPI document: only our extractor calls them,
// with a token the edge issued for one attempt (edge/jobs/attempt-token.ts). Upload keys end in
// .zip, so `<key>/complete` can never be read as a key of its own.
export const INTERNAL_PATHS = {
  FRAME_FILE: "/internal/files/:key{.+}",
  FRAME_FILES: "/internal/file-batches/:kind/:id/:attempt",
  ZIP_COMPLETE: "/internal/uploads/:key{.+\\.zip}/complete",
  ZIP: "/internal/uploads/:key{.+\\.zip}",
  LEASE: "/internal/jobs/:kind/:id/lease",
  PROGRESS: "/internal/jobs/:kind/:id/progress",
  SOURCE: "/internal/jobs/:kind/:id/source",
  RESULTS: "/internal/results",
} as const;
