// The UI's tabs and what each tab's view is given: apart from app.tsx,
// which shows the views, so a view depends on nothing above it.
import type { Settings } from "./settings";

export const TABS = [
  { path: "/chat", label: "Chat" },
  { path: "/sessions", label: "Sessions" },
  { path: "/nodes", label: "Nodes" },
  { path: "/channels", label: "Channels" },
  { path: "/workspace", label: "Workspace" },
  { path: "/memory", label: "Memory" },
  { path: "/cron", label: "Cron" },
  { path: "/config", label: "Config" },
] as const;

export type TabPath = (typeof TABS)[number]["path"];

export interface ViewProps {
  settings: Settings;
  update: (patch: Partial<Settings>) => void;
  connected: boolean;
  go: (tab: TabPath) => void;
}
