// How the dashboard says what a job asked for (edge/routes/account/job-options.ts and
// job-asked.tsx): best mode and the moving preview are named in the list's label and on the
// job's page, with the request's own values or the documented defaults.
import { describe, expect, it } from "vitest";
import { askedFacts } from "../../edge/routes/account/job-asked.tsx";
import { optionsParts } from "../../edge/routes/account/job-options.ts";

const base = { format: "jpg", resolution: 1080, output: "urls" };

describe("a job's options, as people read them", () => {
  it("labels best mode with its count and a moving preview with its format", () => {
    expect(
      optionsParts({ ...base, mode: "best", count: 3, animated: { format: "gif", duration: 4 } }),
    ).toEqual(["best 3", "jpg", "1080p", "moving preview (gif)"]);
    expect(optionsParts({ ...base, mode: "best" })[0]).toBe("best 1");
    expect(optionsParts({ ...base, mode: "count", count: 6, animated: {} })).toContain(
      "moving preview (webp)",
    );
  });

  it("lists the preview's settings on the job's page, the defaults where none were given", () => {
    const given = new Map(
      askedFacts({
        ...base,
        mode: "best",
        count: 2,
        animated: { format: "gif", duration: 4, fps: 12, width: 320, start: 65 },
      }),
    );
    expect(given.get("Mode")).toBe("best (The best-looking frames, best first)");
    expect(given.get("Moving preview")).toBe("gif, 4 s from 1:05, 12 fps, 320 px wide");
    const defaults = new Map(askedFacts({ ...base, mode: "count", count: 6, animated: {} }));
    expect(defaults.get("Moving preview")).toBe(
      "webp, 3 s at the best moment, 10 fps, 480 px wide",
    );
    expect(new Map(askedFacts({ ...base, mode: "count", count: 6 })).has("Moving preview")).toBe(
      false,
    );
  });

  it("lists a token budget and reading the text on screen among the asked options", () => {
    const given = new Map(
      askedFacts({
        ...base,
        mode: "count",
        budget: { tokens: 12000, model: "gpt" },
        text: true,
        text_languages: ["en", "de"],
      }),
    );
    expect(given.get("Token budget")).toBe(
      "12,000 tokens for gpt (Stills picks the count and width)",
    );
    expect(given.get("Text on screen")).toBe("read (en, de)");
    // The jobs list's label says the budget picks the count, not "count ?".
    expect(
      optionsParts({ ...base, mode: "count", budget: { tokens: 12000, model: "gpt" } })[0],
    ).toBe("count to fit 12,000 tokens");
    expect(
      optionsParts({ ...base, mode: "slides", budget: { tokens: 900, model: "claude" } })[0],
    ).toBe("slides, to fit 900 tokens");
    expect(new Map(askedFacts({ ...base, mode: "count", text: true })).get("Text on screen")).toBe(
      "read (en)",
    );
    const plain = new Map(askedFacts({ ...base, mode: "count", count: 6 }));
    expect(plain.has("Token budget")).toBe(false);
    expect(plain.has("Text on screen")).toBe(false);
  });
});
