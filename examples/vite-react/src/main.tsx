import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";
import { readSettings } from "./settings.js";

const settings = readSettings(location.search);
// Only the `msw` build mode has the mock in it (vite.config.ts); elsewhere this is dropped.
const ready = import.meta.env.MODE === "msw" && settings.msw ? import("./msw.js").then(({ startMockServiceWorker }) => startMockServiceWorker(settings.api)) : Promise.resolve();

void ready.then(() =>
  createRoot(document.getElementById("root")!).render(
    <StrictMode>
      <App settings={settings} />
    </StrictMode>,
  ),
);
