// The connection screen: the token (pasted once, then kept in this
// browser) and, optionally, another gateway's URL.

import { useState } from "preact/hooks";
import { sameHostUrl, type Status } from "../client";
import type { Settings } from "../settings";

export function Login({
  settings,
  onSubmit,
  refused,
}: {
  settings: Settings;
  onSubmit: (patch: Partial<Settings>) => void;
  refused?: Extract<Status, { kind: "unauthorized" | "auth-not-configured" }>;
}) {
  const [token, setToken] = useState("");
  const [url, setUrl] = useState(settings.gatewayUrl);
  const [showUrl, setShowUrl] = useState(settings.gatewayUrl !== "");
  return (
    <div class="center-screen">
      <form
        class="panel"
        id="login"
        onSubmit={(e) => {
          e.preventDefault();
          if (!token.trim()) return;
          onSubmit({ token: token.trim(), gatewayUrl: url.trim() });
        }}
      >
        <h1>gsv</h1>
        {refused?.kind === "unauthorized" && (
          <p class="error" role="alert" id="login-error">
            The gateway refused this token ({refused.message}). Paste the token from <code>.dev.vars</code> (local) or{" "}
            <code>.gsv/deploy.env</code> (deployed).
          </p>
        )}
        {refused?.kind === "auth-not-configured" && (
          <p class="error" role="alert" id="login-error">
            {refused.message}
          </p>
        )}
        <label>
          Auth token
          <input
            type="password"
            name="token"
            autocomplete="current-password"
            value={token}
            onInput={(e) => setToken((e.target as HTMLInputElement).value)}
            placeholder="GSV_AUTH_TOKEN"
            required
          />
        </label>
        {showUrl ? (
          <label>
            Gateway URL
            <input
              type="url"
              name="gatewayUrl"
              value={url}
              onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
              placeholder={sameHostUrl()}
            />
          </label>
        ) : (
          <p class="muted">
            Gateway: <code>{sameHostUrl()}</code>{" "}
            <button type="button" class="link" onClick={() => setShowUrl(true)}>
              change
            </button>
          </p>
        )}
        <button type="submit">Connect</button>
        <p class="muted small">The token stays in this browser's local storage until you log out.</p>
      </form>
    </div>
  );
}
