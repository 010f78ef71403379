// The shell: settings, the connection, the login and error screens, and
// the tabs (one path each, so a tab can be bookmarked or reloaded).

import { useEffect, useState } from "preact/hooks";
import { GatewayClient, sameHostUrl, type Status } from "./client";
import { applyTheme, loadSettings, saveSettings, type Settings, type Theme } from "./settings";
import { ClientContext } from "./ui";
import { Login } from "./views/login";
import { ChatView } from "./views/chat";
import { SessionsView } from "./views/sessions";
import { NodesView } from "./views/nodes";
import { ChannelsView } from "./views/channels";
import { WorkspaceView } from "./views/workspace";
import { CronView } from "./views/cron";
import { MemoryView } from "./views/memory";
import { ConfigView } from "./views/config";
import { TABS, type TabPath, type ViewProps } from "./tabs";


function tabOf(pathname: string): TabPath {
  const first = "/" + (pathname.split("/")[1] ?? "");
  return TABS.find((t) => t.path === first)?.path ?? "/chat";
}

function useRoute(): [TabPath, (p: TabPath) => void] {
  const [tab, setTab] = useState<TabPath>(tabOf(location.pathname));
  useEffect(() => {
    const onPop = () => setTab(tabOf(location.pathname));
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);
  const go = (p: TabPath) => {
    if (location.pathname !== p) history.pushState(null, "", p);
    setTab(p);
  };
  return [tab, go];
}

export function App() {
  const [settings, setSettings] = useState<Settings>(loadSettings);
  const [client, setClient] = useState<GatewayClient | null>(null);
  const [status, setStatus] = useState<Status | null>(null);
  const [tab, go] = useRoute();
  const [menuOpen, setMenuOpen] = useState(false);

  const update = (patch: Partial<Settings>) => {
    setSettings((s) => {
      const next = { ...s, ...patch };
      saveSettings(next);
      return next;
    });
  };

  useEffect(() => applyTheme(settings.theme), [settings.theme]);

  useEffect(() => {
    if (!settings.token) {
      setClient(null);
      setStatus(null);
      return;
    }
    const c = new GatewayClient(settings.gatewayUrl || sameHostUrl(), settings.token);
    const off = c.onStatus(setStatus);
    setStatus(c.status);
    setClient(c);
    c.start();
    return () => {
      off();
      c.stop();
    };
  }, [settings.gatewayUrl, settings.token]);

  const logout = () => update({ token: "" });

  if (!settings.token || !client || !status) {
    return <Login settings={settings} onSubmit={update} />;
  }
  if (status.kind === "unauthorized" || status.kind === "auth-not-configured") {
    return <Login settings={settings} onSubmit={update} refused={status} />;
  }
  if (status.kind === "unreachable" || (status.kind === "connecting" && !everConnected(client))) {
    return <Unreachable status={status} url={client.url} onRetry={() => client.retryNow()} onSettings={logout} />;
  }

  const Tab = VIEWS[tab];
  return (
    <ClientContext.Provider value={client}>
      <div class="shell">
        <header class="topbar">
          <a
            class="brand"
            href="/chat"
            onClick={(e) => {
              e.preventDefault();
              go("/chat");
            }}
          >
            gsv
          </a>
          <button class="menu-toggle" aria-expanded={menuOpen} aria-label="Menu" onClick={() => setMenuOpen(!menuOpen)}>
            ☰
          </button>
          <nav class={menuOpen ? "tabs open" : "tabs"}>
            {TABS.map((t) => (
              <a
                key={t.path}
                href={t.path}
                class={t.path === tab ? "tab active" : "tab"}
                aria-current={t.path === tab ? "page" : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  setMenuOpen(false);
                  go(t.path);
                }}
              >
                {t.label}
              </a>
            ))}
          </nav>
          <div class="topbar-end">
            <ConnectionBadge status={status} />
            <ThemePicker theme={settings.theme} onChange={(theme) => update({ theme })} />
            <button class="link" onClick={logout} title="Forget the token">
              Log out
            </button>
          </div>
        </header>
        {status.kind === "reconnecting" && <ReconnectBanner status={status} onRetry={() => client.retryNow()} />}
        <div class="main">
          <main class={`view view-${tab.slice(1)}`}>
            <Tab settings={settings} update={update} connected={status.kind === "connected"} go={go} />
          </main>
        </div>
      </div>
    </ClientContext.Provider>
  );
}

const VIEWS: Record<TabPath, (p: ViewProps) => preact.JSX.Element> = {
  "/chat": ChatView,
  "/sessions": SessionsView,
  "/nodes": NodesView,
  "/channels": ChannelsView,
  "/workspace": WorkspaceView,
  "/memory": MemoryView,
  "/cron": CronView,
  "/config": ConfigView,
};

function everConnected(c: GatewayClient): boolean {
  return c.hasConnected;
}

function ConnectionBadge({ status }: { status: Status }) {
  const [label, cls] =
    status.kind === "connected" ? ["connected", "ok"] : status.kind === "reconnecting" ? ["reconnecting", "warn"] : ["connecting", "warn"];
  return (
    <span class={`badge ${cls}`} data-status={status.kind}>
      {label}
    </span>
  );
}

function ThemePicker({ theme, onChange }: { theme: Theme; onChange: (t: Theme) => void }) {
  return (
    <select class="theme" aria-label="Theme" value={theme} onChange={(e) => onChange((e.target as HTMLSelectElement).value as Theme)}>
      <option value="system">System</option>
      <option value="light">Light</option>
      <option value="dark">Dark</option>
    </select>
  );
}

function useCountdown(at: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(t);
  }, [at]);
  return Math.max(0, Math.ceil((at - now) / 1000));
}

function ReconnectBanner({ status, onRetry }: { status: Extract<Status, { kind: "reconnecting" }>; onRetry: () => void }) {
  const secs = useCountdown(status.at);
  return (
    <div class="banner warn" role="status">
      Connection lost ({status.reason}). Reconnecting in {secs} s…{" "}
      <button class="link" onClick={onRetry}>
        Retry now
      </button>
    </div>
  );
}

function Unreachable({
  status,
  url,
  onRetry,
  onSettings,
}: {
  status: Status;
  url: string;
  onRetry: () => void;
  onSettings: () => void;
}) {
  const waiting = status.kind === "unreachable" ? status : null;
  const secs = useCountdown(waiting?.at ?? 0);
  return (
    <div class="center-screen">
      <div class="panel" id="unreachable">
        <h1>{waiting ? "Cannot reach the gateway" : "Connecting…"}</h1>
        <p>
          <code>{url}</code>
        </p>
        {waiting && (
          <>
            <p class="error" role="alert">
              {waiting.reason}
            </p>
            <p>Trying again in {secs} s (attempt {waiting.attempt + 1}).</p>
            <div class="row">
              <button onClick={onRetry}>Retry now</button>
              <button class="secondary" onClick={onSettings}>
                Change gateway or token
              </button>
            </div>
          </>
        )}
      </div>
    </div>
  );
}
