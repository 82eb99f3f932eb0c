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

// A signed-in visitor may paste one of their keys (docs.tsx's TryWithYourKey): it stays in this
// tab's sessionStorage and is "Test Request"'s bearer token. Saving or forgetting it reloads
// the reference with it.
const KEY_STORAGE = "stills-docs-key";

function storedKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE) ?? "";
  } catch {
    return "";
  }
}

function wireKeyForm() {
  const form = document.getElementById("docs-key-form");
  if (!form) return;
  const input = form.querySelector("#docs-key");
  if (storedKey()) input.placeholder = "A key is in use; paste another to replace it";
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!input.value || !input.checkValidity()) {
      input.reportValidity();
      return;
    }
    sessionStorage.setItem(KEY_STORAGE, input.value.trim());
    location.reload();
  });
  form.querySelector("#docs-key-forget")?.addEventListener("click", () => {
    sessionStorage.removeItem(KEY_STORAGE);
    location.reload();
  });
}

document.addEventListener("DOMContentLoaded", () => {
  wireKeyForm();
  const mount = document.getElementById("reference");
  if (!mount || !window.Scalar) return;
  const key = document.getElementById("docs-key-form") ? storedKey() : "";
  window.Scalar.createApiReference(mount, {
    ...(key
      ? {
          authentication: {
            preferredSecurityScheme: "bearerAuth",
            securitySchemes: { bearerAuth: { token: key } },
          },
        }
      : {}),
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
