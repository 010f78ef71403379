// What the UI keeps in the browser: the gateway URL ("" = this host's
// /ws), the token (pasted once), the session the chat shows, the theme.

export type Theme = "system" | "light" | "dark";

export interface Settings {
  gatewayUrl: string;
  token: string;
  sessionKey: string;
  theme: Theme;
}

const KEY = "gsv-ui-settings";
export const DEFAULT_SESSION = "agent:main:main";

export function loadSettings(): Settings {
  const defaults: Settings = { gatewayUrl: "", token: "", sessionKey: DEFAULT_SESSION, theme: "system" };
  try {
    const raw = localStorage.getItem(KEY);
    if (!raw) return defaults;
    const v = JSON.parse(raw) as Partial<Settings>;
    return {
      gatewayUrl: typeof v.gatewayUrl === "string" ? v.gatewayUrl : "",
      token: typeof v.token === "string" ? v.token : "",
      sessionKey: typeof v.sessionKey === "string" && v.sessionKey ? v.sessionKey : DEFAULT_SESSION,
      theme: v.theme === "light" || v.theme === "dark" ? v.theme : "system",
    };
  } catch {
    return defaults;
  }
}

export function saveSettings(s: Settings): void {
  try {
    localStorage.setItem(KEY, JSON.stringify(s));
  } catch {
    // Storage refused (private mode quota): the session still works.
  }
}

export function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
}
