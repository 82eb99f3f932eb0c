// Why a job failed, said once and whole: what happened in plain words, the error's name and
// the developer message (what the API answered), the request that created the job (its
// X-Request-Id, for a support request or the caller's own logs), and what to try next.

/** A job's error as the API answers it (schema/api.ts JobErrorSchema). */
export interface JobError {
  name: string;
  message: string;
  userMessage: string;
}
/** The errors guide, one anchor per error name (the doc_url of API error bodies). */
const ERRORS_GUIDE = "/docs/errors";

/** What a person can do about each way a job can end failed. */
const NEXT_STEPS: Record<string, string[]> = {
  PrivateContent: [
    "Open the link in a private browser window: if it asks you to sign in, or says the video is gone or private, Stills cannot fetch it either.",
    "Use a public link, or put the file where anyone can download it and send a direct link to the .mp4, .mov or .webm file.",
  ],
  NoVideoFound: [
    "Check that the link opens one video, not a channel, a playlist or a page without a player.",
    "A direct link to an .mp4, .mov or .webm file always works when the file is public.",
  ],
  DownloadFailed: [
    "The source was too slow, cut the connection or refused us. Send the same request again in a few minutes.",
    "If it keeps failing, put the file on faster hosting and send a direct link to it.",
  ],
  VideoTooLong: [
    "Ask for part of the video with start and end, within your plan's length limit.",
    "Or move to a plan that allows longer videos (Plan & billing).",
  ],
  TooManyFrames: [
    "Ask for fewer frames: a larger every, a smaller count, or a shorter range.",
    "Or move to a plan that allows more frames per job (Plan & billing).",
  ],
  ResolutionNotAllowed: [
    "Ask for a resolution your plan includes, or move to a plan that includes this one.",
  ],
  ExtractionFailed: [
    "Send the same request again: a passing fault goes away.",
    "If it fails the same way, the file may be damaged or in a format we cannot decode. Write to us with the request id and the job id.",
  ],
};

const GENERIC_STEPS = [
  "Read the developer message above: it names what went wrong.",
  "Fix the request and send it again; failed jobs cost nothing.",
];

export function JobFailure(props: { error: JobError; requestId: string | null }) {
  const { error } = props;
  const steps = NEXT_STEPS[error.name] ?? GENERIC_STEPS;
  return (
    <section class="job-failure" aria-labelledby="failure-title">
      <h2 id="failure-title">Why it failed</h2>
      <p class="job-failure-summary">{error.userMessage}</p>
      <dl class="facts job-failure-facts">
        <div>
          <dt>Error</dt>
          <dd>
            <code>{error.name}</code>{" "}
            <a href={`${ERRORS_GUIDE}#${error.name}`}>
              About {error.name}
              <span class="sr-only"> in the errors guide</span>
            </a>
          </dd>
        </div>
        <div>
          <dt>Credits</dt>
          <dd>None: failed jobs are never charged.</dd>
        </div>
        {error.message !== error.userMessage && (
          <div class="fact-wide">
            <dt>Developer message</dt>
            <dd class="break">{error.message}</dd>
          </div>
        )}
        <div class="fact-wide">
          <dt>Request id</dt>
          <dd>
            {props.requestId ? (
              // The Requests page shows what that request was answered, for its 7 days.
              <a href={`/dashboard/requests?request_id=${encodeURIComponent(props.requestId)}`}>
                <code class="break">{props.requestId}</code>
              </a>
            ) : (
              "not recorded"
            )}
            <span class="hint">
              The X-Request-Id of the request that created the job: quote it, with the job id, when
              you write to us.
            </span>
          </dd>
        </div>
      </dl>
      <h3>What to try next</h3>
      <ul class="job-failure-steps">
        {steps.map((step) => (
          <li>{step}</li>
        ))}
      </ul>
    </section>
  );
}
