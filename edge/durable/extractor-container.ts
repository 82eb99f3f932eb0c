// Production only: the extractor image (extractor/Dockerfile) as a Cloudflare Container.
// edge/jobs/dispatch.ts sends jobs to a small pool of these by name; locally the same requests go
// to the Node process at EXTRACTOR_URL instead.
//
// A job answers POST /extract with 202 and runs on without an open request, and the library
// counts only open requests as activity: without help the container would sleep `sleepAfter`
// after the 202, in the middle of a long job. Each lease renewal of a job running here
// (POST /internal/jobs/:kind/:id/lease, every lease/3 seconds) calls keepAwake(), which
// renews the library's activity timeout (Container.renewActivityTimeout).

import type { DurableObject } from "cloudflare:workers";
import { Container } from "@cloudflare/containers";
import { edgeConfig } from "../config.ts";

export const EXTRACTOR_PORT = 8788;

export class ExtractorContainer extends Container<Env> {
  override defaultPort = EXTRACTOR_PORT;
  // Long enough to keep a warm instance between jobs of a busy minute.
  override sleepAfter = "10m";

  constructor(ctx: DurableObject["ctx"], env: Env) {
    super(ctx, env);
    this.envVars = {
      EXTRACTOR_HOST: "0.0.0.0",
      EXTRACTOR_PORT: String(EXTRACTOR_PORT),
      INTERNAL_TOKEN: edgeConfig(env).secrets.internalToken,
      STILLS_ALLOW_PRIVATE_NETWORK: "0",
    };
  }

  /** A job is still running here: push the sleep back by another `sleepAfter`. */
  async keepAwake(): Promise<void> {
    this.renewActivityTimeout();
  }
}
