// Starts the interactive API reference (Scalar, served from our own origin) on #reference.
// Everything that would reach a third-party host is switched off: web fonts, telemetry, the
// hosted "generate MCP" and developer tools; requests made from "Test request" go to the
// servers the OpenAPI document names, i.e. this origin. Loaded before Scalar's bundle; deferred
// scripts all run before DOMContentLoaded, so Scalar is there when this fires.

// The page's policy allows style elements only with this response's nonce. Scalar gives it to
// its main stylesheet; its theme and its toasts create <style> elements without it, so every
// style element created from here on gets it, instead of relaxing the policy to
// 'unsafe-inline'. Zod (inside Scalar) probes for eval, which the policy refuses: jitless
// mode skips the probe.
{
  const nonce = document.querySelector('meta[property="csp-nonce"]')?.content;
  const createElement = Document.prototype.createElement;
  Document.prototype.createElement = function (name, options) {
    const element = createElement.call(this, name, options);
    if (nonce && String(name).toLowerCase() === "style") element.nonce = nonce;
    return element;
  };
  globalThis.__zod_globalConfig = { ...globalThis.__zod_globalConfig, jitless: true };
}

document.addEventListener("DOMContentLoaded", () => {
  const mount = document.getElementById("reference");
  if (!mount || !window.Scalar) return;
  window.Scalar.createApiReference(mount, {
    url: mount.dataset.url,
    withDefaultFonts: false,
    telemetry: false,
    darkMode: false,
    forceDarkModeState: "light",
    hideDarkModeToggle: true,
    showDeveloperTools: "never",
    mcp: { disabled: true },
    persistAuth: false,
    documentDownloadType: "json",
    defaultOpenAllTags: true,
    agent: { disabled: true },
  });
});
