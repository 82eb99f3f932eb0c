// Signed file URLs (the kind minted when R2's S3 credentials are not configured, and any
// such URL still held after they are): no API key, only a valid signature, and only while the job is completed
// and not expired. Not rate limited: a job's URLs are meant to be fetched all at once.
// Not in the OpenAPI document: a file URL is handed out signed, never composed by a client.
// A plain Hono path, since createRoute cannot describe a key of any depth.

/** Any key under /files/; the handler decodes and checks it. */
export const FILE_PATH = "/files/*" as const;
