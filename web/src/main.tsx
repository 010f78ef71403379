// Entry point: the theme before the first paint, then the app.

import { render } from "preact";
import { App } from "./app";
import { applyTheme, loadSettings } from "./settings";
import "./styles.css";

applyTheme(loadSettings().theme);
const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
  // The browser test reads this as the app's first render.
  performance.mark("gsv-app-rendered");
}
