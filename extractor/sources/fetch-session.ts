// What every way of reading a source shares (sources/index.ts for files and platforms,
// sources/hls-live-source.ts for mode live): the address policy, one byte budget, the source's
// deadline as an abort, the caller's signal joined to it, and agents that connect only where the
// policy allows. `release` ends all of it; `lifetime.signal.reason` says why it ended early.
import { downloadFailed } from "./errors.ts";
import type { MinimumRate } from "./minimum-rate.ts";
import type { AddressPolicy } from "./policy.ts";
import { defaultPolicy } from "./policy.ts";
import type { FetchOptions } from "./safe-fetch.ts";
import { ByteBudget, createAgents } from "./safe-fetch.ts";

export interface FetchSessionOptions {
  allowPrivate: boolean;
  maxBytes: number;
  deadlineMs: number;
  signal?: AbortSignal;
  policy?: AddressPolicy;
  serviceOrigin?: string;
  answerTimeoutMs?: number;
  minRate?: MinimumRate;
}

export interface FetchSession {
  policy: AddressPolicy;
  /** The caller's signal and the deadline together. */
  signal: AbortSignal;
  /** Aborted at the deadline (with the DownloadFailed saying so) or by release. */
  lifetime: AbortController;
  budget: ByteBudget;
  fetchOptions: FetchOptions;
  release(): void;
}

export function openFetchSession(options: FetchSessionOptions): FetchSession {
  const policy = options.policy ?? defaultPolicy(options.allowPrivate, options.serviceOrigin);
  const lifetime = new AbortController();
  const deadline = setTimeout(
    () => lifetime.abort(downloadFailed(`the source took longer than ${options.deadlineMs} ms`)),
    options.deadlineMs,
  );
  const signal = options.signal
    ? AbortSignal.any([options.signal, lifetime.signal])
    : lifetime.signal;
  const agents = createAgents(policy);
  const budget = new ByteBudget(options.maxBytes);
  const fetchOptions: FetchOptions = {
    policy,
    agents,
    budget,
    signal,
    answerTimeoutMs: options.answerTimeoutMs,
    ...(options.minRate ? { minRate: options.minRate } : {}),
  };
  return {
    policy,
    signal,
    lifetime,
    budget,
    fetchOptions,
    release() {
      clearTimeout(deadline);
      lifetime.abort(new Error("source closed"));
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
