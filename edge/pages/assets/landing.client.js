// The live demo of the landing page. It uses only the public API, as any client would:
// POST /v1/demo with the link, then GET /v1/demo/{id} once a second until the job is
// completed or failed. Frames go into the slots the page already reserved (no layout shift),
// and every error of the spec is shown with the API's own data.userMessage. Text from the API
// is only ever set as text, never parsed as HTML. "Try a sample video" sends the service's own
// sample; the day's allowance is kept on screen (a failed preview is given back by the API);
// a frame opens large in a dialog; after a success the API call that does the same is shown.
{
  const POLL_MS = 1000;
  const GIVE_UP_MS = 10 * 60 * 1000;
  const UNREACHABLE = "We couldn't reach Stills. Check your connection and try again.";
  const STATUS_TEXT = {
    queued: "Queued: waiting for a free extractor…",
    processing: "Processing: fetching the video and extracting frames…",
  };

  const form = document.getElementById("demo-form");
  const input = document.getElementById("demo-url");
  const submit = document.getElementById("demo-submit");
  const progress = document.getElementById("demo-progress");
  const statusLine = document.getElementById("demo-status");
  const elapsedLine = document.getElementById("demo-elapsed");
  const errorBox = document.getElementById("demo-error");
  const frameList = document.getElementById("demo-frames");
  const slots = [...frameList.querySelectorAll(".frame-slot")];
  const placeholders = slots.map((slot) => slot.cloneNode(true));
  const sampleButton = document.getElementById("demo-sample");
  const allowanceLine = document.getElementById("demo-allowance");
  const viewer = document.getElementById("demo-viewer");
  const viewerTitle = document.getElementById("demo-viewer-title");
  const viewerImage = document.getElementById("demo-viewer-image");
  const viewerLink = document.getElementById("demo-viewer-link");
  const next = document.getElementById("demo-next");
  const apiCall = next.querySelector("[data-demo-api-call]");
  const apiCodes = [...apiCall.querySelectorAll("pre code")].map((code) => ({
    code,
    template: code.textContent,
    // The curl block carries the body inside single quotes (code-samples.tsx).
    shell: code.parentElement.id.endsWith("-curl-code"),
  }));

  // Each submission gets a number; a poll loop that is no longer the latest stops.
  let currentRun = 0;
  // The link of the latest submission, for the API call shown after its success.
  let submittedUrl = "";
  let elapsedTimer;

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  /**
   * Seconds the way a player writes them: m:ss (h:mm:ss past an hour). A moment inside a
   * second keeps up to two decimals ("0:02.5"); a length is whole seconds ("1:00").
   */
  function formatTime(seconds, whole = false) {
    const centis = whole ? Math.round(seconds) * 100 : Math.round(seconds * 100);
    const h = Math.floor(centis / 360000);
    const m = Math.floor((centis % 360000) / 6000);
    const rest = centis % 6000;
    let s = String(Math.floor(rest / 100)).padStart(2, "0");
    if (rest % 100 !== 0) s += `.${String(rest % 100).padStart(2, "0")}`.replace(/0$/, "");
    return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
  }

  /** The day's allowance as the API last told it (data-* keep the numbers). */
  function showAllowance(remaining, limit) {
    allowanceLine.dataset.remaining = String(remaining);
    allowanceLine.dataset.limit = String(limit);
    allowanceLine.textContent = `${remaining} of ${limit} free previews left today. A preview that fails doesn't count.`;
  }

  /**
   * A failed preview was given back by the API: one more than the creation's answer said.
   * Returns the sentence that says so, for the error box.
   */
  function allowanceGivenBack() {
    const limit = Number(allowanceLine.dataset.limit);
    const remaining = Math.min(limit, Number(allowanceLine.dataset.remaining) + 1);
    showAllowance(remaining, limit);
    return ` This preview didn't count: you have ${remaining} of ${limit} left today.`;
  }

  /** The API call that does what the preview did, with the visitor's own link in it. */
  function showApiCall(url) {
    const sampleUrl = JSON.stringify(apiCall.dataset.sampleUrl);
    const json = JSON.stringify(url);
    for (const { code, template, shell } of apiCodes) {
      const quoted = shell ? json.replaceAll("'", `'"'"'`) : json;
      code.textContent = template.replaceAll(sampleUrl, () => quoted);
    }
  }

  function openFrame(frame, label) {
    viewerTitle.textContent = label;
    viewerImage.alt = label;
    viewerImage.src = frame.url;
    viewerLink.href = frame.url;
    viewer.showModal();
  }

  // A click on the dialog's backdrop (outside the picture) closes it, as people expect.
  viewer.addEventListener("click", (event) => {
    if (event.target === viewer) viewer.close();
  });

  function setRunning(running) {
    submit.disabled = running;
    progress.hidden = !running;
    frameList.setAttribute("aria-busy", String(running));
    clearInterval(elapsedTimer);
    elapsedLine.textContent = "";
    if (running) {
      const started = Date.now();
      elapsedTimer = setInterval(() => {
        elapsedLine.textContent = `${Math.round((Date.now() - started) / 1000)} s`;
      }, 1000);
    }
  }

  function showStatus(text) {
    errorBox.replaceChildren();
    statusLine.textContent = text;
  }

  /** Shows an error: a message, and optionally nodes after it (a reset time). */
  function showError(message, extra = [], aboutTheLink = false) {
    setRunning(false);
    statusLine.textContent = "";
    errorBox.replaceChildren(message, ...extra);
    input.setAttribute("aria-invalid", String(aboutTheLink));
    if (aboutTheLink) input.focus();
  }

  function resetSlots() {
    slots.forEach((slot, i) => {
      slot.replaceChildren(...placeholders[i].cloneNode(true).childNodes);
    });
  }

  async function readJson(response) {
    try {
      return await response.json();
    } catch {
      return undefined;
    }
  }

  /** "at 7:00 PM" today, else "tomorrow at 1:00 AM", else with the date. */
  function describeMoment(date) {
    const time = date.toLocaleTimeString([], { hour: "numeric", minute: "2-digit" });
    const today = new Date();
    const tomorrow = new Date(today.getFullYear(), today.getMonth(), today.getDate() + 1);
    if (date.toDateString() === today.toDateString()) return `today at ${time}`;
    if (date.toDateString() === tomorrow.toDateString()) return `tomorrow at ${time}`;
    return `${date.toLocaleDateString([], { weekday: "long", month: "short", day: "numeric" })} at ${time}`;
  }

  function describeWait(seconds) {
    const minutes = Math.round(seconds / 60);
    if (minutes < 1) return `${seconds} s`;
    if (minutes < 60) return `${minutes} min`;
    return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  }

  /** The sentence after DemoLimitReached: when previews come back, in the visitor's time. */
  function resetNotice(retryAfterSeconds) {
    // Retry-After counts whole seconds to the reset; the reset itself falls on a minute.
    const at = new Date(Math.round((Date.now() + retryAfterSeconds * 1000) / 60000) * 60000);
    const time = document.createElement("time");
    time.dateTime = at.toISOString();
    time.textContent = describeMoment(at);
    return [
      " Free previews come back ",
      time,
      ` (in ${describeWait(retryAfterSeconds)}). `,
      link("/sign-in", "Sign in for 60 free credits a month"),
      ".",
    ];
  }

  function link(href, text) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  function retryAfterOf(response) {
    const seconds = Number(response.headers.get("Retry-After"));
    return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : undefined;
  }

  /** An error answer of the API, in the spec's shape, shown with its userMessage. */
  function showApiError(response, body) {
    const name = body?.data?.name;
    const message =
      typeof body?.data?.userMessage === "string" && body.data.userMessage
        ? body.data.userMessage
        : `Something went wrong on our side (HTTP ${response.status}). Please try again.`;
    const retryAfter = retryAfterOf(response);
    if (name === "DemoLimitReached") {
      showAllowance(0, Number(allowanceLine.dataset.limit));
      if (retryAfter) return showError(message, resetNotice(retryAfter));
    }
    if (name === "RateLimited" && retryAfter) {
      return showError(message, [` Try again in ${describeWait(retryAfter)}.`]);
    }
    showError(message, [], name === "InvalidUrl");
  }

  function isWebUrl(value) {
    try {
      const url = new URL(value, location.href);
      return url.protocol === "https:" || url.protocol === "http:";
    } catch {
      return false;
    }
  }

  function fillSlot(slot, frame, job) {
    const box = document.createElement("div");
    box.className = "frame-box";
    const time = document.createElement("time");
    time.className = "frame-time";
    time.dateTime = `PT${Number(frame.timestamp.toFixed(3))}S`;
    time.textContent = formatTime(frame.timestamp);
    if (frame.status === "ok" && isWebUrl(frame.url)) {
      const label = `Frame ${frame.index} at ${formatTime(frame.timestamp)}`;
      const img = document.createElement("img");
      img.alt = label;
      img.loading = "lazy";
      img.decoding = "async";
      // The video's own shape, so the browser knows the picture's proportions before it loads.
      img.width = job.width || 640;
      img.height = job.height || 360;
      img.addEventListener("error", () => {
        box.replaceChildren(failedNote("This frame could not be loaded."));
      });
      img.src = frame.url;
      // The picture is the button that opens it large; the image's alt text is its name.
      const open = document.createElement("button");
      open.type = "button";
      open.className = "frame-open";
      open.title = "Open large";
      open.append(img);
      open.addEventListener("click", () => openFrame(frame, label));
      box.append(open);
    } else {
      box.append(failedNote(frame.error || "No picture at this moment."));
    }
    const label = document.createElement("span");
    label.className = "frame-label";
    label.textContent = `Frame ${frame.index}`;
    const caption = document.createElement("figcaption");
    caption.append(label, time);
    const figure = document.createElement("figure");
    figure.append(box, caption);
    slot.replaceChildren(figure);
  }

  function failedNote(text) {
    const note = document.createElement("span");
    note.className = "frame-failed";
    note.textContent = text;
    return note;
  }

  function showFrames(job) {
    setRunning(false);
    const frames = [...job.frames].sort((a, b) => a.index - b.index);
    frames.forEach((frame, i) => {
      let slot = slots[i];
      if (!slot) {
        slot = document.createElement("li");
        slot.className = "frame-slot";
        frameList.append(slot);
        slots.push(slot);
      }
      fillSlot(slot, frame, job);
    });
    const ok = frames.filter((frame) => frame.status === "ok").length;
    const length = job.duration_seconds
      ? ` from a ${formatTime(job.duration_seconds, true)} video`
      : "";
    showStatus(`Done: ${ok} frames${length}.`);
    showApiCall(submittedUrl);
  }

  async function follow(run, job) {
    const started = Date.now();
    let shown;
    let delay = POLL_MS;
    let networkFailures = 0;
    while (run === currentRun) {
      if (job.status !== shown && STATUS_TEXT[job.status]) showStatus(STATUS_TEXT[job.status]);
      shown = job.status;
      if (job.status === "completed") return showFrames(job);
      if (job.status === "failed") {
        // A link that turned out to be no video is the field's error, as a 400 InvalidUrl is.
        return showError(
          job.error?.userMessage || "We couldn't get frames from that video.",
          [allowanceGivenBack()],
          job.error?.name === "InvalidUrl",
        );
      }
      if (job.status === "expired") return showError("This preview has expired. Run it again.");
      if (Date.now() - started > GIVE_UP_MS) {
        return showError("This is taking much longer than it should. Please try again later.");
      }
      await sleep(delay);
      if (run !== currentRun) return;
      delay = POLL_MS;
      let response;
      try {
        response = await fetch(`/v1/demo/${encodeURIComponent(job.id)}`, {
          headers: { accept: "application/json" },
        });
      } catch {
        // A dropped connection on one poll is not the end of the job.
        if (++networkFailures >= 5) return showError(UNREACHABLE);
        continue;
      }
      networkFailures = 0;
      const body = await readJson(response);
      if (response.status === 429) {
        delay = (retryAfterOf(response) ?? 5) * 1000;
        continue;
      }
      if (!response.ok || !body) return showApiError(response, body);
      job = body;
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const url = input.value.trim();
    if (!url) {
      showError("Paste a link to a video first.", [], true);
      return;
    }
    const run = ++currentRun;
    submittedUrl = url;
    resetSlots();
    input.setAttribute("aria-invalid", "false");
    setRunning(true);
    showStatus("Sending your link…");
    let response;
    try {
      response = await fetch("/v1/demo", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ url }),
      });
    } catch {
      if (run === currentRun) showError(UNREACHABLE);
      return;
    }
    const body = await readJson(response);
    if (run !== currentRun) return;
    if (!response.ok || !body) return showApiError(response, body);
    if (body.allowance) showAllowance(body.allowance.remaining, body.allowance.limit);
    await follow(run, body);
  });

  sampleButton.addEventListener("click", () => {
    input.value = sampleButton.dataset.url;
    form.requestSubmit();
  });
}
